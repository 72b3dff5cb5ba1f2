//! Markdown export of a conversation, in the layout of the extension's own "export task": the
//! API conversation, one `**User:**` / `**Assistant:**` block per message separated by `---`, tool
//! uses as `[Tool Use: name]` with their parameters summarised, tool results as `[Tool Result]`
//! cut to a preview. Environment details and reasoning are left out. Each task of the tree gets a
//! heading (one level deeper per level of subtask) and a line of metadata. A task without an API
//! history is written from its UI record (the skeleton's sequence).

use crate::error::{ExportError, Result};
use crate::source::SkeletonSource;
use crate::tree::{Conversation, Visit};
use crate::xml::{ContentOptions, Written};
use roo_formats::api::{ApiMessage, Block, Role};
use roo_formats::for_each_api_message;
use roo_formats::read::names;
use roo_formats::text::is_environment_details;
use roo_js::{truncate_utf16, utf16_len};
use roo_state::skeleton::{ConversationSkeleton, SequenceItem};
use serde_json::Value;
use std::io::Write;
use std::sync::atomic::AtomicBool;

/// Tool results and parameter values are cut to this many UTF-16 units.
const TOOL_PREVIEW: usize = 500;
const PARAM_PREVIEW: usize = 200;

fn gen_err(e: std::io::Error) -> ExportError {
    ExportError::Generation(format!("the Markdown could not be written: {e}"))
}

fn cut(text: &str, max: usize) -> String {
    if max > 0 && utf16_len(text) > max {
        format!("{}...", truncate_utf16(text, max))
    } else {
        text.to_owned()
    }
}

/// Remove `<environment_details>…</environment_details>` sections (older tasks keep them in the
/// same text as the request).
fn strip_environment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<environment_details>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</environment_details>") {
            Some(end) => rest = &rest[start + end + "</environment_details>".len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

fn one_line(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let lines = s.lines().count();
            if lines > 1 {
                format!("({lines} lines)")
            } else {
                cut(s, PARAM_PREVIEW)
            }
        }
        other => cut(&other.to_string(), PARAM_PREVIEW),
    }
}

fn tool_use(name: &str, input: &Value) -> String {
    let mut s = format!("[Tool Use: {name}]");
    if let Value::Object(m) = input {
        for (k, v) in m {
            s.push_str(&format!("\n{k}: {}", one_line(v)));
        }
    } else if !input.is_null() {
        s.push_str(&format!("\n{}", one_line(input)));
    }
    s
}

/// Tools the XML-era assistant wrote as `<name>…</name>` in its text.
const XML_TOOLS: &[&str] = &[
    "access_mcp_resource",
    "apply_diff",
    "ask_followup_question",
    "attempt_completion",
    "browser_action",
    "codebase_search",
    "edit_file",
    "execute_command",
    "fetch_instructions",
    "generate_image",
    "insert_content",
    "list_code_definition_names",
    "list_files",
    "new_task",
    "read_file",
    "run_slash_command",
    "search_and_replace",
    "search_files",
    "switch_mode",
    "update_todo_list",
    "use_mcp_tool",
    "write_to_file",
];

/// The `<param>value</param>` pairs directly inside a tool block.
fn xml_params(body: &str) -> Value {
    let mut map = serde_json::Map::new();
    let mut rest = body;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('>') else { break };
        let name = &after[..close];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            rest = &after[close..];
            continue;
        }
        let value_start = &after[close + 1..];
        let end_tag = format!("</{name}>");
        match value_start.find(&end_tag) {
            Some(end) => {
                let value = value_start[..end].trim_matches('\n');
                map.insert(name.to_owned(), Value::String(value.to_owned()));
                rest = &value_start[end + end_tag.len()..];
            }
            None => {
                map.insert(
                    name.to_owned(),
                    Value::String(value_start.trim().to_owned()),
                );
                break;
            }
        }
    }
    Value::Object(map)
}

/// Assistant text with its XML-era tool calls replaced by `[Tool Use: name]` summaries.
fn summarise_xml_tools(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let found = XML_TOOLS
            .iter()
            .filter_map(|t| {
                let open = format!("<{t}>");
                rest.find(&open).map(|i| (i, *t, open))
            })
            .min_by_key(|(i, _, _)| *i);
        let Some((at, name, open)) = found else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..at]);
        let body_start = at + open.len();
        let close = format!("</{name}>");
        let (body, next) = match rest[body_start..].find(&close) {
            Some(end) => (
                &rest[body_start..body_start + end],
                body_start + end + close.len(),
            ),
            None => (&rest[body_start..], rest.len()),
        };
        out.push_str(&tool_use(name, &xml_params(body)));
        rest = &rest[next..];
    }
    out.trim().to_owned()
}

/// A user text that is an XML-era tool result (`[read_file for 'a.rs'] Result:` …), summarised.
fn summarise_xml_result(text: &str) -> Option<String> {
    let t = text.trim_start();
    if !t.starts_with('[') {
        return None;
    }
    let head_end = t.find("] Result:")?;
    if t[..head_end].contains('\n') {
        return None;
    }
    let body = &t[head_end + "] Result:".len()..];
    let error = body.trim_start().starts_with("The tool execution failed")
        || body.trim_start().starts_with("Error");
    Some(tool_result(error, body).replacen(
        if error {
            "[Tool Result (Error)]"
        } else {
            "[Tool Result]"
        },
        &format!(
            "[Tool Result{}: {}]",
            if error { " (Error)" } else { "" },
            &t[1..head_end]
        ),
        1,
    ))
}

fn result_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("image") => "[Image]".to_owned(),
                _ => b
                    .get("text")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| b.as_str().map(str::to_owned).unwrap_or_default()),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Object(o) => o
            .get("value")
            .or_else(|| o.get("text"))
            .map(result_text)
            .unwrap_or_else(|| v.to_string()),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn tool_result(is_error: bool, body: &str) -> String {
    let head = if is_error {
        "[Tool Result (Error)]"
    } else {
        "[Tool Result]"
    };
    let body = strip_environment(body);
    if body.is_empty() {
        head.to_owned()
    } else {
        format!("{head}\n{}", cut(&body, TOOL_PREVIEW))
    }
}

/// The parts of one API message, as Markdown paragraphs.
fn api_parts(msg: &ApiMessage, content: &ContentOptions) -> Vec<String> {
    let mut parts = Vec::new();
    let assistant = matches!(msg.role, Some(Role::Assistant));
    let text_part = |t: &str| {
        if is_environment_details(t) {
            return None;
        }
        let t = strip_environment(t);
        if t.is_empty() {
            return None;
        }
        if assistant {
            return Some(content.cut(&summarise_xml_tools(&t), false).0.into_owned());
        }
        if let Some(r) = summarise_xml_result(&t) {
            return Some(r);
        }
        Some(content.cut(&t, false).0.into_owned())
    };
    if msg.blocks().is_empty() {
        parts.extend(msg.texts().filter_map(text_part));
        return parts;
    }
    for b in msg.blocks() {
        match &b.block {
            Block::Text { text } => parts.extend(text_part(text)),
            Block::Image { .. } => parts.push("[Image]".into()),
            Block::ToolUse { name, input, .. }
            | Block::ToolCall {
                tool_name: name,
                input,
                ..
            } => parts.push(tool_use(name, input)),
            Block::ToolResult {
                content: body,
                is_error,
                ..
            } => parts.push(tool_result(
                is_error.unwrap_or(false),
                &body.as_ref().map(result_text).unwrap_or_default(),
            )),
            Block::ToolResultPart { output, .. } => parts.push(tool_result(
                false,
                &output.as_ref().map(result_text).unwrap_or_default(),
            )),
            Block::Thinking { .. }
            | Block::RedactedThinking
            | Block::Reasoning { .. }
            | Block::ThoughtSignature => {}
            Block::File => parts.push("[File]".into()),
            Block::Other { kind } => {
                if let Some(k) = kind.as_deref().filter(|k| !k.is_empty()) {
                    parts.push(format!("[{k}]"));
                }
            }
        }
    }
    parts
}

fn heading(depth: u32, skel: &ConversationSkeleton) -> String {
    let level = (depth as usize + 1).min(6);
    let title = skel
        .metadata
        .title
        .as_deref()
        .map(|t| cut(t.trim().trim_start_matches('#').trim(), 200))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| format!("Task {}", skel.task_id));
    let prefix = if depth == 0 { "" } else { "Subtask: " };
    format!("{} {prefix}{}", "#".repeat(level), title.replace('\n', " "))
}

fn meta_line(skel: &ConversationSkeleton, parent: Option<&str>) -> String {
    let m = &skel.metadata;
    let mut bits = vec![format!("Task `{}`", skel.task_id)];
    if let Some(p) = parent {
        bits.push(format!("parent `{p}`"));
    }
    bits.push(format!("created {}", m.created_at));
    bits.push(format!("last activity {}", m.last_activity));
    if let Some(mode) = m.mode.as_deref() {
        bits.push(format!("mode {mode}"));
    }
    if let Some(ws) = m.workspace.as_deref() {
        bits.push(format!("workspace `{ws}`"));
    }
    bits.push(format!(
        "{} messages, {} tool uses",
        m.message_count, m.action_count
    ));
    format!("_{}_", bits.join(" · "))
}

fn block(w: &mut impl Write, role: &str, body: &str) -> Result<()> {
    write!(w, "---\n\n**{role}:**\n\n{body}\n\n").map_err(gen_err)
}

/// A conversation as Markdown.
pub fn write_conversation<W: Write>(
    mut sink: W,
    source: &dyn SkeletonSource,
    conversation: &Conversation<'_>,
    content: &ContentOptions,
    cancel: &AtomicBool,
) -> Result<(W, Written)> {
    let mut written = Written {
        conversations: 1,
        ..Written::default()
    };
    let header_opts = roo_state::skeleton::AnalyzeOptions {
        include_sequence: false,
        ..content.analyze()
    };
    conversation.walk(cancel, |visit| {
        let Visit::Enter {
            node,
            header,
            depth,
            omitted,
            ..
        } = visit
        else {
            return Ok(());
        };
        let parent = header.and_then(|h| h.parent_task_id.as_deref());
        let dir = source.task_dir(&node.task_id)?;
        let api_path = dir.join(names::API_HISTORY);
        let analysed;
        let skel = match header {
            Some(h) => h,
            None => {
                analysed = source.full(&node.task_id, &header_opts)?;
                &analysed
            }
        };
        write!(
            sink,
            "{}\n\n{}\n\n",
            heading(depth, skel),
            meta_line(skel, parent)
        )
        .map_err(gen_err)?;
        written.tasks += 1;
        let mut io_err: Option<ExportError> = None;
        let mut any = false;
        if api_path.is_file() {
            for_each_api_message(&api_path, |_, msg| {
                if io_err.is_some() {
                    return;
                }
                let role = match msg.role {
                    Some(Role::User) => "User",
                    Some(Role::Assistant) => "Assistant",
                    _ => return,
                };
                let parts = api_parts(&msg, content);
                if parts.is_empty() {
                    return;
                }
                any = true;
                written.messages += 1;
                written.actions += parts
                    .iter()
                    .map(|p| p.matches("[Tool Use: ").count())
                    .sum::<usize>() as u32;
                if let Err(e) = block(&mut sink, role, &parts.join("\n\n")) {
                    io_err = Some(e);
                }
            });
        }
        if let Some(e) = io_err {
            return Err(e);
        }
        if !any {
            // No API history: the UI record, through the skeleton's sequence.
            let full = source.full(&node.task_id, &content.analyze())?;
            for item in full.sequence.as_deref().unwrap_or_default() {
                match item {
                    SequenceItem::Message(m) => {
                        let role = if m.role == "user" {
                            "User"
                        } else {
                            "Assistant"
                        };
                        let (text, _) = content.cut(&m.content, m.is_truncated);
                        block(&mut sink, role, &text)?;
                        written.messages += 1;
                    }
                    SequenceItem::Action(a) => {
                        block(&mut sink, "Assistant", &tool_use(&a.name, &a.parameters))?;
                        written.actions += 1;
                    }
                }
            }
        }
        if omitted > 0 {
            write!(
                sink,
                "---\n\n_{omitted} subtask(s) not shown (depth limit)._\n\n"
            )
            .map_err(gen_err)?;
        }
        Ok(())
    })?;
    Ok((sink, written))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries() {
        assert_eq!(
            tool_use(
                "write_to_file",
                &json!({"path": "a.rs", "content": "l1\nl2\nl3"})
            ),
            "[Tool Use: write_to_file]\npath: a.rs\ncontent: (3 lines)"
        );
        assert_eq!(
            strip_environment("do it\n<environment_details>x</environment_details>"),
            "do it"
        );
        assert_eq!(tool_result(true, "boom"), "[Tool Result (Error)]\nboom");
        assert_eq!(
            summarise_xml_tools("Let me look.\n\n<read_file>\n<path>src/a.rs</path>\n</read_file>"),
            "Let me look.\n\n[Tool Use: read_file]\npath: src/a.rs"
        );
        assert_eq!(
            summarise_xml_tools("<execute_command>\n<command>ls"),
            "[Tool Use: execute_command]\ncommand: ls"
        );
        assert_eq!(
            summarise_xml_result("[read_file for 'a.rs'] Result:\nfn main() {}").as_deref(),
            Some("[Tool Result: read_file for 'a.rs']\nfn main() {}")
        );
        assert_eq!(summarise_xml_result("just text"), None);
    }
}
