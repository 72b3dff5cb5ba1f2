//! What people said in a task, cut into chunks.
//!
//! Only dialogue is kept: the user's words (the task, feedback, answers to follow-up questions) and
//! the assistant's words (its text, follow-up questions, completion results). Tool payloads,
//! command output, environment details, file listings and API request JSON are left out. The UI
//! record is the source when it holds any dialogue (it has a `ts` on every message); the API
//! history is read only for tasks without one.
//!
//! Chunks hold about [`ChunkOptions::target_chars`] characters, are cut on message boundaries
//! when the messages allow it, and start with a short tail of the previous chunk so a sentence cut
//! at a boundary can still be found. Their ids are UUIDv5 of the task id, the position and a hash
//! of the text, so indexing the same content twice yields the same ids.

use roo_formats::text;
use roo_formats::ui::ForeignMessage;
use roo_formats::{
    for_each_api_message, for_each_ui_message, Ask, ClineMessage, MessageKind, Payload, Role, Say,
};
use std::path::Path;
use uuid::Uuid;

/// Namespace of chunk ids (UUIDv5 of `roo-state-core/search/chunk`).
pub const CHUNK_NAMESPACE: Uuid = Uuid::from_u128(0x5d1c_5a52_7e0b_5b8f_9a1e_3c0d_2b44_71e6);

/// UI file names, newest first.
pub const UI_FILES: [&str; 2] = ["ui_messages.json", "claude_messages.json"];
pub const API_FILE: &str = "api_conversation_history.json";

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    User,
    Assistant,
}

impl Speaker {
    pub fn as_str(self) -> &'static str {
        match self {
            Speaker::User => "user",
            Speaker::Assistant => "assistant",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Speaker::User => "User",
            Speaker::Assistant => "Assistant",
        }
    }
}

/// One message of the dialogue.
#[derive(Debug, Clone, PartialEq)]
pub struct DialogueMessage {
    pub speaker: Speaker,
    pub text: String,
    /// Milliseconds since the epoch, from the message itself (never the time of indexing).
    pub ts: Option<i64>,
}

/// The dialogue of one task and the file it came from.
#[derive(Debug, Clone, Default)]
pub struct Dialogue {
    pub messages: Vec<DialogueMessage>,
    /// `ui_messages.json`, `claude_messages.json` or `api_conversation_history.json`.
    pub source_file: String,
    /// Problems met while reading (the task is still indexed with what could be read).
    pub problems: usize,
}

/// Read the dialogue of a task directory.
pub fn extract_dialogue(task_dir: &Path) -> Dialogue {
    let mut problems = 0usize;
    for name in UI_FILES {
        let path = task_dir.join(name);
        if !path.is_file() {
            continue;
        }
        let mut messages = Vec::new();
        let mut first_text_seen = false;
        let summary = for_each_ui_message(&path, |_, msg| {
            if let Some(m) = ui_dialogue(&msg, &mut first_text_seen) {
                messages.push(m);
            }
        });
        problems += summary.diagnostics.len();
        if !messages.is_empty() {
            return Dialogue {
                messages,
                source_file: name.to_owned(),
                problems,
            };
        }
        break;
    }
    let path = task_dir.join(API_FILE);
    let mut messages = Vec::new();
    let (summary, _) = for_each_api_message(&path, |_, msg| {
        if msg.is_summary == Some(true) {
            return;
        }
        let speaker = match &msg.role {
            Some(Role::User) => Speaker::User,
            Some(Role::Assistant) => Speaker::Assistant,
            _ => return,
        };
        let mut parts: Vec<String> = Vec::new();
        // In the XML era a tool result is a `[tool] Result:` block followed by blocks of content;
        // they run until what the user typed (a wrapper) or the environment details.
        let mut in_result = false;
        for t in msg.texts() {
            let cleaned = match speaker {
                Speaker::User => {
                    let head = t.trim_start();
                    if is_result_header(head) {
                        in_result = true;
                        continue;
                    }
                    if text::is_environment_details(t) {
                        in_result = false;
                        continue;
                    }
                    if USER_WRAPPERS.iter().any(|w| head.starts_with(w)) {
                        in_result = false;
                    }
                    if in_result {
                        continue;
                    }
                    clean_api_user_text(t)
                }
                Speaker::Assistant => clean_assistant_text(t),
            };
            if let Some(c) = cleaned.filter(|c| !c.trim().is_empty()) {
                parts.push(c);
            }
        }
        // Anthropic-era completion and follow-up tool calls carry what the assistant said.
        for block in msg.blocks() {
            if let Some((name, input)) = block.tool_use() {
                if let Some(said) = spoken_tool_input(name, input) {
                    parts.push(said);
                }
            }
        }
        if let Some(m) = nonblank(speaker, parts.join("\n\n"), msg.ts) {
            messages.push(m);
        }
    });
    if summary.exists() {
        problems += summary.diagnostics.len();
    }
    Dialogue {
        messages,
        source_file: API_FILE.to_owned(),
        problems,
    }
}

fn ui_dialogue(msg: &ClineMessage, first_text_seen: &mut bool) -> Option<DialogueMessage> {
    if let Some(ForeignMessage { role, text, ts }) = msg.foreign_message() {
        let speaker = if role == "user" {
            Speaker::User
        } else {
            Speaker::Assistant
        };
        return nonblank(speaker, text, ts);
    }
    let text = msg.text.as_deref().unwrap_or("");
    let speaker = match &msg.kind {
        MessageKind::Say(Say::Text) => {
            if text.trim().is_empty() {
                return None;
            }
            if *first_text_seen {
                Speaker::Assistant
            } else {
                *first_text_seen = true;
                Speaker::User
            }
        }
        MessageKind::Say(Say::Task) => {
            *first_text_seen = true;
            Speaker::User
        }
        MessageKind::Say(Say::CompletionResult) => Speaker::Assistant,
        MessageKind::Say(Say::UserFeedback | Say::SubtaskResult) => Speaker::User,
        MessageKind::Ask(Ask::Followup) => {
            let said = match msg.payload() {
                Payload::FollowUp(f) => {
                    let mut s = f.question;
                    let answers: Vec<&str> = f
                        .suggest
                        .iter()
                        .map(|a| a.answer.trim())
                        .filter(|a| !a.is_empty())
                        .collect();
                    if !answers.is_empty() {
                        s.push_str("\nSuggested answers: ");
                        s.push_str(&answers.join(" / "));
                    }
                    s
                }
                // Text that should be JSON but is not: keep it only if it reads as prose.
                _ if !text.trim_start().starts_with('{') => text.to_owned(),
                _ => return None,
            };
            return nonblank(Speaker::Assistant, said, msg.ts);
        }
        _ => return None,
    };
    nonblank(speaker, text.to_owned(), msg.ts)
}

fn nonblank(speaker: Speaker, text: String, ts: Option<i64>) -> Option<DialogueMessage> {
    let text = tidy(&text);
    (!text.is_empty()).then_some(DialogueMessage { speaker, text, ts })
}

/// A user text of the API history, without wrappers, environment details, tool results and the
/// extension's own notices; `None` when nothing the user said is left.
fn clean_api_user_text(t: &str) -> Option<String> {
    if text::is_environment_details(t) {
        return None;
    }
    // Older tasks hold the environment details in the same string as the task.
    let t = match t.find("<environment_details>") {
        Some(at) => &t[..at],
        None => t,
    };
    if is_result_header(t.trim_start()) {
        return None;
    }
    let inner = text::unwrap_user_text(t);
    let inner = match text::tag_content(inner, "feedback").or(text::tag_content(inner, "answer")) {
        Some(x) => x,
        None => inner,
    };
    Some(inner.trim().to_owned())
}

/// Openings of what the user typed, in the API history.
const USER_WRAPPERS: [&str; 4] = ["<task>", "<feedback>", "<answer>", "<user_message>"];

/// A block the extension wrote for the model: a tool result header (`[read_file for 'a'] Result:`),
/// an error notice or a resumption notice.
fn is_result_header(head: &str) -> bool {
    let first_line = head.lines().next().unwrap_or("");
    head.starts_with('[')
        && (first_line.contains("] Result")
            || first_line.starts_with("[ERROR]")
            || first_line.starts_with("[TASK RESUMPTION]")
            || first_line.contains("] Error"))
}

/// Tools whose XML call, written in the assistant's text (XML era), is a payload to drop. The
/// said parts (`<result>` of a completion, `<question>` of a follow-up) are kept.
const XML_TOOLS: &[&str] = &[
    "read_file",
    "write_to_file",
    "apply_diff",
    "insert_content",
    "search_and_replace",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "execute_command",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "new_task",
    "switch_mode",
    "update_todo_list",
    "codebase_search",
    "fetch_instructions",
    "run_slash_command",
    "generate_image",
    "replace_in_file",
    "edit_file",
    "attempt_completion",
    "ask_followup_question",
    "plan_mode_respond",
];

/// Assistant text without `<thinking>` blocks and XML tool calls (keeping the completion result
/// and the follow-up question they hold).
fn clean_assistant_text(t: &str) -> Option<String> {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    loop {
        // The earliest opening tag of interest.
        let mut best: Option<(usize, &str)> = None;
        for tag in XML_TOOLS.iter().copied().chain(["thinking"]) {
            let open = format!("<{tag}>");
            if let Some(at) = rest.find(&open) {
                if best.is_none_or(|(b, _)| at < b) {
                    best = Some((at, tag));
                }
            }
        }
        let Some((at, tag)) = best else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..at]);
        let open_len = tag.len() + 2;
        let close = format!("</{tag}>");
        let body_start = at + open_len;
        let (body, after) = match rest[body_start..].find(&close) {
            Some(end) => (
                &rest[body_start..body_start + end],
                &rest[body_start + end + close.len()..],
            ),
            None => (&rest[body_start..], ""),
        };
        let said = match tag {
            "attempt_completion" => text::tag_content(body, "result"),
            "ask_followup_question" => text::tag_content(body, "question"),
            "plan_mode_respond" => text::tag_content(body, "response"),
            _ => None,
        };
        if let Some(s) = said {
            out.push('\n');
            out.push_str(s.trim());
            out.push('\n');
        }
        rest = after;
    }
    Some(out)
}

/// What the assistant said through a native tool call (completion result, follow-up question).
fn spoken_tool_input(name: &str, input: &serde_json::Value) -> Option<String> {
    let field = match name {
        "attempt_completion" => "result",
        "ask_followup_question" => "question",
        "plan_mode_respond" => "response",
        _ => return None,
    };
    input
        .get(field)
        .and_then(serde_json::Value::as_str)
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Trim, drop `\r`, and collapse runs of blank lines.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank_run = 0usize;
    for line in s.trim().split('\n') {
        let line = line.trim_end_matches('\r').trim_end();
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

/// How chunks are cut.
#[derive(Debug, Clone, Copy)]
pub struct ChunkOptions {
    /// Aimed-at size of a chunk, in characters.
    pub target_chars: usize,
    /// Characters of the previous chunk repeated at the start of the next one.
    pub overlap_chars: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        Self {
            target_chars: 800,
            overlap_chars: 120,
        }
    }
}

/// A chunk before it is tied to a task.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkText {
    pub text: String,
    /// `user`, `assistant`, or `mixed` when both speak in it.
    pub role: &'static str,
    pub first_ts: Option<i64>,
    pub last_ts: Option<i64>,
}

struct Piece {
    text: String,
    speaker: Speaker,
    ts: Option<i64>,
    /// Continues the previous piece (a long message cut in several pieces, which already overlap).
    continues: bool,
}

/// Cut a dialogue into chunks of about `opts.target_chars` characters.
pub fn chunk_dialogue(messages: &[DialogueMessage], opts: &ChunkOptions) -> Vec<ChunkText> {
    let target = opts.target_chars.max(100);
    let overlap = opts.overlap_chars.min(target / 3);
    let mut pieces: Vec<Piece> = Vec::new();
    for m in messages {
        let label = m.speaker.label();
        let room = target.saturating_sub(label.len() + 2).max(50);
        for (i, part) in split_long(&m.text, room, overlap).into_iter().enumerate() {
            pieces.push(Piece {
                text: format!("{label}: {part}"),
                speaker: m.speaker,
                ts: m.ts,
                continues: i > 0,
            });
        }
    }
    let mut chunks = Vec::new();
    let mut current: Vec<&Piece> = Vec::new();
    let mut current_len = 0usize;
    let mut lead = String::new();
    let flush = |current: &mut Vec<&Piece>, lead: &mut String, chunks: &mut Vec<ChunkText>| {
        if current.is_empty() {
            return;
        }
        let mut text = std::mem::take(lead);
        for p in current.iter() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&p.text);
        }
        let first = current.iter().find_map(|p| p.ts);
        let last = current.iter().rev().find_map(|p| p.ts);
        let role = if current.iter().all(|p| p.speaker == Speaker::User) {
            "user"
        } else if current.iter().all(|p| p.speaker == Speaker::Assistant) {
            "assistant"
        } else {
            "mixed"
        };
        chunks.push(ChunkText {
            text,
            role,
            first_ts: first,
            last_ts: last,
        });
        current.clear();
    };
    for piece in &pieces {
        let len = piece.text.chars().count();
        if !current.is_empty() && current_len + 1 + len > target {
            let prev_last = current.last().map(|p| p.text.clone());
            flush(&mut current, &mut lead, &mut chunks);
            current_len = 0;
            if !piece.continues {
                if let Some(prev) = prev_last {
                    // The tail must leave room for the piece itself.
                    let room = target.saturating_sub(len + 3).min(overlap);
                    let tail = if room >= 20 {
                        tail_chars(&prev, room)
                    } else {
                        String::new()
                    };
                    if !tail.is_empty() {
                        lead = format!("… {tail}");
                        current_len = lead.chars().count() + 1;
                    }
                }
            }
        }
        current_len += len + 1;
        current.push(piece);
    }
    flush(&mut current, &mut lead, &mut chunks);
    chunks
}

/// Cut `text` into parts of at most `max` characters, preferring sentence and line ends, then
/// spaces; consecutive parts share about `overlap` characters.
fn split_long(text: &str, max: usize, overlap: usize) -> Vec<String> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    if chars.len() <= max {
        return vec![text.to_owned()];
    }
    let byte_at = |ci: usize| chars.get(ci).map_or(text.len(), |(b, _)| *b);
    let mut parts = Vec::new();
    let mut start = 0usize;
    while start < chars.len() {
        let hard_end = (start + max).min(chars.len());
        let mut end = hard_end;
        if hard_end < chars.len() {
            // Look back over the last 40 % of the window for a good place to cut.
            let floor = start + max * 3 / 5;
            let mut cut = None;
            for ci in (floor..hard_end).rev() {
                let c = chars[ci].1;
                let prev = if ci > 0 { chars[ci - 1].1 } else { ' ' };
                if c == '\n' || (c == ' ' && matches!(prev, '.' | '!' | '?' | ';' | ':')) {
                    cut = Some(ci);
                    break;
                }
            }
            if cut.is_none() {
                cut = (floor..hard_end)
                    .rev()
                    .find(|&ci| chars[ci].1.is_whitespace());
            }
            end = cut.unwrap_or(hard_end);
        }
        let part = text[byte_at(start)..byte_at(end)].trim();
        if !part.is_empty() {
            parts.push(part.to_owned());
        }
        if end >= chars.len() {
            break;
        }
        // Start the next part a little before the cut, on a word boundary.
        let mut next = end.saturating_sub(overlap).max(start + 1);
        while next < end && !chars[next - 1].1.is_whitespace() {
            next += 1;
        }
        start = if next >= end { end } else { next };
    }
    parts
}

/// The last `n` characters of `s`, starting on a word boundary.
fn tail_chars(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_owned();
    }
    let skip = count - n;
    let tail: String = s.chars().skip(skip).collect();
    match tail.find(char::is_whitespace) {
        Some(at) if at + 1 < tail.len() => tail[at..].trim().to_owned(),
        _ => tail.trim().to_owned(),
    }
}

/// The stable id of a chunk.
pub fn chunk_id(task_id: &str, position: usize, text: &str) -> Uuid {
    let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
    Uuid::new_v5(
        &CHUNK_NAMESPACE,
        format!("{task_id}|{position}|{hash:016x}").as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(speaker: Speaker, text: &str, ts: i64) -> DialogueMessage {
        DialogueMessage {
            speaker,
            text: text.to_owned(),
            ts: Some(ts),
        }
    }

    #[test]
    fn short_dialogue_is_one_chunk_with_first_and_last_time() {
        let m = [
            msg(Speaker::User, "Fix the login form", 10),
            msg(
                Speaker::Assistant,
                "Done: the form now validates the email.",
                20,
            ),
        ];
        let c = chunk_dialogue(&m, &ChunkOptions::default());
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].role, "mixed");
        assert_eq!((c[0].first_ts, c[0].last_ts), (Some(10), Some(20)));
        assert!(c[0]
            .text
            .starts_with("User: Fix the login form\nAssistant: Done"));
    }

    #[test]
    fn chunks_respect_the_target_and_overlap() {
        let sentence = "The cache keeps forecasts for ten minutes before asking the server again. ";
        let long = sentence.repeat(40);
        let m = [
            msg(Speaker::User, "Add a cache", 1),
            msg(Speaker::Assistant, &long, 2),
            msg(Speaker::User, "Thanks, and document it", 3),
        ];
        let opts = ChunkOptions::default();
        let c = chunk_dialogue(&m, &opts);
        assert!(c.len() >= 4, "{}", c.len());
        for ch in &c {
            assert!(
                ch.text.chars().count() <= opts.target_chars + 10,
                "{}",
                ch.text.len()
            );
        }
        // Every word of the long message is in some chunk, and no chunk is cut inside a word.
        let all: String = c
            .iter()
            .map(|x| x.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(all.contains("Thanks, and document it"));
        assert!(c.iter().all(|x| !x.text.ends_with("forec")));
    }

    #[test]
    fn a_chunk_cut_on_a_message_boundary_repeats_the_previous_tail() {
        let para = "Each forecast is cached with the time it was fetched, and read back only while it is fresh enough. ";
        let m: Vec<DialogueMessage> = (0..5)
            .map(|i| {
                let who = if i % 2 == 0 {
                    Speaker::User
                } else {
                    Speaker::Assistant
                };
                msg(who, &para.repeat(3), i)
            })
            .collect();
        let c = chunk_dialogue(&m, &ChunkOptions::default());
        assert!(c.len() >= 2);
        assert!(c[1].text.starts_with("… "), "{}", c[1].text);
        assert_eq!(c[1].first_ts, Some(2));
    }

    #[test]
    fn ids_are_stable_and_content_addressed() {
        let a = chunk_id("t1", 0, "hello");
        assert_eq!(a, chunk_id("t1", 0, "hello"));
        assert_ne!(a, chunk_id("t1", 1, "hello"));
        assert_ne!(a, chunk_id("t1", 0, "hello!"));
        assert_ne!(a, chunk_id("t2", 0, "hello"));
    }

    #[test]
    fn assistant_xml_tool_calls_are_dropped_but_results_kept() {
        let t = "<thinking>look first</thinking>I will read it.\n<read_file>\n<path>a.py</path>\n</read_file>";
        assert_eq!(
            clean_assistant_text(t).as_deref().map(str::trim),
            Some("I will read it.")
        );
        let t = "<attempt_completion>\n<result>\nAll tests pass.\n</result>\n</attempt_completion>";
        assert_eq!(
            clean_assistant_text(t).as_deref().map(str::trim),
            Some("All tests pass.")
        );
    }

    #[test]
    fn api_user_text_drops_results_and_environment() {
        assert_eq!(
            clean_api_user_text("[read_file for 'a.py'] Result:\nprint(1)"),
            None
        );
        assert_eq!(
            clean_api_user_text("<environment_details>\n# VSCode</environment_details>"),
            None
        );
        assert_eq!(
            clean_api_user_text(
                "<task>\nAdd a flag\n</task>\n<environment_details>x</environment_details>"
            )
            .as_deref(),
            Some("Add a flag")
        );
        assert_eq!(
            clean_api_user_text("<feedback>\nAlso print the size\n</feedback>").as_deref(),
            Some("Also print the size")
        );
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let long = "é".repeat(3000);
        let parts = split_long(&long, 700, 100);
        assert!(parts.len() >= 5);
        assert!(parts.iter().all(|p| p.chars().count() <= 700));
    }
}
