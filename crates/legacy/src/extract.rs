//! The legacy child-instruction extraction over `ui_messages.json` (spec: legacy-server.md §3.1) and
//! the main-instruction lookup (§3.4).
//!
//! Seven extractors are tried in a fixed order on every message; the first one that accepts the message
//! *and* yields at least one instruction wins, the others are skipped for that message. Extractors that
//! accept a message but yield nothing (or fail) let the chain continue.

use crate::js::{
    ci_pattern, compile, is_js_space, is_js_word, js_date_value, js_trim, json_parse, or, prop,
    prop_str, typeof_object, JS_SPACE_CLASS,
};
use regex::Regex;
use roo_js::{to_string, truthy, utf16_len, utf16_len_upto, utf16_prefix};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::LazyLock;

/// One instruction as the legacy extractor chain reports it (`NewTaskInstruction` without `taskId`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LegacyInstruction {
    /// `new Date(msg.timestamp || msg.ts || 0).getTime()` in ms; NaN where JS gets an invalid date.
    pub timestamp: f64,
    /// The mode after `cleanMode` (ASCII word characters and white space only, lowercased).
    pub mode: String,
    /// The trimmed message, cut to 197 UTF-16 units + `"..."` when longer than 200 units.
    pub message: String,
}

/// `/\[new_task in ([^:]+):\s*['"](.+?)['"]\]/s`
pub(crate) static NEW_TASK_RESULT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(&format!(
        r#"\[new_task in ([^:]+):{JS_SPACE_CLASS}*['"]((?s:.)+?)['"]\]"#
    ))
});

/// `/<task>([\s\S]*?)<\/task>/gi`
static TASK_BLOCK: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let t = ci_pattern("task");
    compile(&format!("<{t}>((?s:.)*?)</{t}>"))
});

/// `/<new_task>\s*<mode>([^<]+)<\/mode>\s*<message>([\s\S]*?)<\/message>\s*<\/new_task>/gi` and the
/// unclosed variant ending in `<\/message>\s*$`.
static NEW_TASK_XML: LazyLock<[Option<Regex>; 2]> = LazyLock::new(|| {
    let ws = JS_SPACE_CLASS;
    let nt = ci_pattern("new_task");
    let mode = ci_pattern("mode");
    let msg = ci_pattern("message");
    let head = format!("<{nt}>{ws}*<{mode}>([^<]+)</{mode}>{ws}*<{msg}>((?s:.)*?)</{msg}>{ws}*");
    [
        compile(&format!("{head}</{nt}>")),
        compile(&format!("{head}$")),
    ]
});

/// `/<task>\s*([\s\S]*?)\s*<\/task>/` (case-sensitive, first match).
static MAIN_TASK: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let ws = JS_SPACE_CLASS;
    compile(&format!("<task>{ws}*((?s:.)*?){ws}*</task>"))
});

/// Whether every pattern of this module compiles (checked by a unit test).
#[cfg(test)]
pub(crate) fn patterns_compile() -> bool {
    NEW_TASK_RESULT.is_some()
        && TASK_BLOCK.is_some()
        && NEW_TASK_XML.iter().all(Option::is_some)
        && MAIN_TASK.is_some()
}

/// `cleanMode(mode)`: `String(mode || 'task').replace(/[^\w\s]/g, '').trim().toLowerCase()`.
fn clean_mode(mode: &str) -> String {
    let raw = if mode.is_empty() { "task" } else { mode };
    let kept: String = raw
        .chars()
        .filter(|&c| is_js_word(c) || is_js_space(c))
        .collect();
    js_trim(&kept).to_ascii_lowercase()
}

/// `String(v || fallback)` for a mode argument.
fn mode_arg(v: Option<&Value>, fallback: &str) -> String {
    match v {
        Some(v) if truthy(Some(v)) => to_string(v),
        _ => fallback.to_owned(),
    }
}

/// `createInstruction(timestamp, mode, message, minLength, 200)`.
fn create_instruction(
    timestamp: f64,
    mode: &str,
    message: Option<&str>,
    min_len: usize,
) -> Option<LegacyInstruction> {
    let message = js_trim(message?);
    let len = utf16_len_upto(message, min_len.max(201));
    if len < min_len {
        return None;
    }
    let message = if len > 200 {
        let mut m = utf16_prefix(message, 197).into_owned();
        m.push_str("...");
        m
    } else {
        message.to_owned()
    };
    let mode = clean_mode(mode);
    Some(LegacyInstruction {
        timestamp,
        mode: if mode.is_empty() {
            "task".to_owned()
        } else {
            mode
        },
        message,
    })
}

/// `new Date(msg.timestamp || msg.ts || 0).getTime()`.
fn extract_timestamp(msg: &Value) -> f64 {
    match or(prop(msg, "timestamp"), prop(msg, "ts")) {
        Some(v) if truthy(Some(v)) => js_date_value(v),
        _ => 0.0,
    }
}

fn type_is(msg: &Value, t: &str) -> bool {
    prop_str(msg, "type") == Some(t)
}

fn role_is_user_or_assistant(msg: &Value) -> bool {
    matches!(prop_str(msg, "role"), Some("user" | "assistant"))
}

/// Every `<task>…</task>` block of `text` as the UI extractors read them: trimmed content of at least
/// 20 units, first 200 units kept, mode `task`.
fn task_blocks(ts: f64, text: &str, out: &mut Vec<LegacyInstruction>) {
    let Some(re) = TASK_BLOCK.as_ref() else {
        return;
    };
    // The block's content is the match without its tags, `<task>` and `</task>` in any case: one
    // length each, so the match is sliced rather than asked for its group.
    for m in re.find_iter(text) {
        let inner = &text[m.start() + "<task>".len()..m.end() - "</task>".len()];
        let content = js_trim(inner);
        if utf16_len_upto(content, 20) < 20 {
            continue;
        }
        let cut = utf16_prefix(content, 200);
        if let Some(i) = create_instruction(ts, "task", Some(&cut), 20) {
            out.push(i);
        }
    }
}

/// #1 — `api_req_started` message whose `content` object is a `newTask` tool call.
fn api_content(msg: &Value) -> Vec<LegacyInstruction> {
    let content = prop(msg, "content");
    if !(type_is(msg, "api_req_started")
        && truthy(content)
        && content.is_some_and(|c| prop_str(c, "tool") == Some("newTask")))
    {
        return Vec::new();
    }
    let Some(content) = content else {
        return Vec::new();
    };
    // `content.content || content.message` must be a non-empty string, else the extractor throws.
    let text = match or(prop(content, "content"), prop(content, "message")) {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        _ => return Vec::new(),
    };
    let mode = mode_arg(prop(content, "mode"), "task");
    create_instruction(extract_timestamp(msg), &mode, Some(text), 20)
        .into_iter()
        .collect()
}

/// #2 — `api_req_started` (or `say/api_req_started`) whose JSON `text` holds a `request` with a
/// `[new_task in MODE: 'MESSAGE']` tool result, or is itself a `newTask` tool call.
fn api_text(msg: &Value) -> Vec<LegacyInstruction> {
    let handles = type_is(msg, "api_req_started")
        || (type_is(msg, "say") && prop_str(msg, "say") == Some("api_req_started"));
    let Some(text) = prop_str(msg, "text").filter(|_| handles) else {
        return Vec::new();
    };
    let Some(data) = json_parse(text) else {
        return Vec::new();
    };
    if data.is_null() {
        return Vec::new(); // `null.request` throws, swallowed
    }
    let ts = extract_timestamp(msg);
    match prop(&data, "request") {
        Some(Value::String(request)) if !request.is_empty() => {
            let Some(re) = NEW_TASK_RESULT.as_ref() else {
                return Vec::new();
            };
            let Some(caps) = re.captures(request) else {
                return Vec::new();
            };
            let mode = js_trim(caps.get(1).map_or("", |m| m.as_str()));
            let message = js_trim(caps.get(2).map_or("", |m| m.as_str()));
            create_instruction(ts, mode, Some(message), 20)
                .into_iter()
                .collect()
        }
        _ => {
            if prop_str(&data, "tool") != Some("newTask") {
                return Vec::new();
            }
            let mode = mode_arg(prop(&data, "mode"), "task");
            let message =
                or(prop(&data, "content"), prop(&data, "message")).and_then(Value::as_str);
            create_instruction(ts, &mode, message, 20)
                .into_iter()
                .collect()
        }
    }
}

/// `extractTextFromMessage(msg)`: `text` if a string, else `content` if a string, else the text parts
/// of a `content` array joined with `\n`.
fn text_of_message(msg: &Value) -> Option<String> {
    if let Some(t) = prop_str(msg, "text") {
        return Some(t.to_owned());
    }
    match prop(msg, "content") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| prop_str(p, "type") == Some("text"))
                .filter_map(|p| prop_str(p, "text"))
                .collect();
            Some(texts.join("\n"))
        }
        _ => None,
    }
}

/// #3 — simple `<task>` blocks in a `say` (or user/assistant) message.
fn ui_simple_task(msg: &Value) -> Vec<LegacyInstruction> {
    let textual = matches!(prop(msg, "text"), Some(Value::String(_)))
        || matches!(
            prop(msg, "content"),
            Some(Value::String(_)) | Some(Value::Array(_))
        );
    if !((type_is(msg, "say") || role_is_user_or_assistant(msg)) && textual) {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(text) = text_of_message(msg) {
        task_blocks(extract_timestamp(msg), &text, &mut out);
    }
    out
}

/// #4 — `<new_task><mode>…</mode><message>…</message></new_task>` XML, closed then unclosed.
fn ui_xml(msg: &Value) -> Vec<LegacyInstruction> {
    let text_is_str = matches!(prop(msg, "text"), Some(Value::String(_)));
    let content_is_str = matches!(prop(msg, "content"), Some(Value::String(_)));
    let handles = (type_is(msg, "tool_result") && content_is_str)
        || ((type_is(msg, "say") || role_is_user_or_assistant(msg))
            && (text_is_str || content_is_str));
    if !handles {
        return Vec::new();
    }
    let text = match or(prop(msg, "text"), prop(msg, "content")) {
        Some(Value::String(s)) if !s.is_empty() => s.as_str(),
        _ => return Vec::new(),
    };
    let ts = extract_timestamp(msg);
    let mut out = Vec::new();
    for re in NEW_TASK_XML.iter().flatten() {
        for caps in re.captures_iter(text) {
            let mode = js_trim(caps.get(1).map_or("", |m| m.as_str()));
            let message = js_trim(caps.get(2).map_or("", |m| m.as_str()));
            if let Some(i) = create_instruction(ts, mode, Some(message), 10) {
                out.push(i);
            }
        }
    }
    out
}

/// #5 — `ask/tool` whose JSON `text` is a `newTask` tool call.
fn ui_ask_tool(msg: &Value) -> Vec<LegacyInstruction> {
    if !(type_is(msg, "ask") && prop_str(msg, "ask") == Some("tool")) {
        return Vec::new();
    }
    let Some(data) = prop_str(msg, "text").and_then(json_parse) else {
        return Vec::new();
    };
    if prop_str(&data, "tool") != Some("newTask") {
        return Vec::new();
    }
    let mode = mode_arg(prop(&data, "mode"), "task");
    let message = prop(&data, "content").and_then(Value::as_str);
    create_instruction(extract_timestamp(msg), &mode, message, 20)
        .into_iter()
        .collect()
}

/// #6 — `text`/`content` given as an object (`newTask` tool call) or a content-part array.
fn ui_object(msg: &Value) -> Vec<LegacyInstruction> {
    let text = prop(msg, "text");
    let content = prop(msg, "content");
    if !(typeof_object(text) || typeof_object(content)) {
        return Vec::new();
    }
    let ts = extract_timestamp(msg);
    let mut out = Vec::new();
    if let Some(Value::Array(parts)) = content {
        for part in parts {
            if part.is_null() {
                // `null.type` throws inside the extractor: what was found so far is kept.
                break;
            }
            if prop_str(part, "type") == Some("text") {
                if let Some(t) = prop_str(part, "text") {
                    task_blocks(ts, t, &mut out);
                }
            }
        }
        return out;
    }
    let obj = if typeof_object(text) && truthy(text) {
        text
    } else if typeof_object(content) && truthy(content) {
        content
    } else {
        None
    };
    if let Some(obj) = obj {
        if prop_str(obj, "tool") == Some("newTask") {
            let mode = mode_arg(prop(obj, "mode"), "task");
            let message = prop(obj, "content").and_then(Value::as_str);
            out.extend(create_instruction(ts, &mode, message, 20));
        }
    }
    out
}

/// #7 — legacy `tool_call` messages with a `new_task` content object.
fn ui_legacy(msg: &Value) -> Vec<LegacyInstruction> {
    let content = prop(msg, "content");
    let Some(content) = content.filter(|c| truthy(Some(c))) else {
        return Vec::new();
    };
    if !(type_is(msg, "tool_call") && prop_str(content, "tool") == Some("new_task")) {
        return Vec::new();
    }
    let mode = mode_arg(prop(content, "mode"), "legacy");
    let message = match prop(content, "message") {
        Some(v) if truthy(Some(v)) => v.as_str(),
        _ => Some(""),
    };
    create_instruction(extract_timestamp(msg), &mode, message, 1)
        .into_iter()
        .collect()
}

type Extractor = fn(&Value) -> Vec<LegacyInstruction>;

const CHAIN: [Extractor; 7] = [
    api_content,
    api_text,
    ui_simple_task,
    ui_xml,
    ui_ask_tool,
    ui_object,
    ui_legacy,
];

/// The pattern names of the chain, in its order (what the legacy coordinator reports as matched).
pub const PATTERN_NAMES: [&str; 7] = [
    "API Content Extractor",
    "API Text Extractor",
    "UI Simple Task Extractor",
    "UI XML Pattern Extractor",
    "UI Ask/Tool Extractor",
    "UI Object Extractor",
    "UI Legacy Extractor",
];

/// What one run of the chain found: the instructions, and for each message that gave some, the
/// index in [`PATTERN_NAMES`] of the extractor that did.
#[derive(Debug, Clone, Default)]
pub struct ChainResult {
    pub instructions: Vec<LegacyInstruction>,
    pub matched: Vec<usize>,
}

/// Runs the extractor chain over already-parsed messages, reporting which extractor matched.
pub fn run_chain(messages: &[Value]) -> ChainResult {
    let mut out = ChainResult::default();
    for msg in messages {
        if !msg.is_object() {
            // `null.type` throws in every `canHandle`; primitives and arrays have none of the fields.
            continue;
        }
        for (i, extractor) in CHAIN.iter().enumerate() {
            let found = extractor(msg);
            if !found.is_empty() {
                out.instructions.extend(found);
                out.matched.push(i);
                break;
            }
        }
    }
    out
}

/// Runs the extractor chain over already-parsed messages.
pub fn extract_from_messages(messages: &[Value]) -> Vec<LegacyInstruction> {
    run_chain(messages).instructions
}

/// The messages the instruction extractor reads from `ui_messages.json` content (BOM already
/// stripped): `JSON.parse` (non-arrays give nothing), else the text wrapped in `[…]` when it neither
/// starts with `[` nor ends with `]`, else one JSON value per non-blank line.
pub fn parse_ui_for_instructions(content: &str) -> Vec<Value> {
    ui_instruction_messages(content, json_parse(content).as_ref()).into_owned()
}

/// [`parse_ui_for_instructions`] given the content's `JSON.parse` result, which the builder reads
/// once for all its readers; the parsed array is borrowed, not copied.
pub fn ui_instruction_messages<'v>(content: &str, parsed: Option<&'v Value>) -> Cow<'v, [Value]> {
    if let Some(v) = parsed {
        return match v {
            Value::Array(a) => Cow::Borrowed(a.as_slice()),
            _ => Cow::Owned(Vec::new()),
        };
    }
    let trimmed = js_trim(content);
    let wrapped;
    let candidate = if !trimmed.starts_with('[') && !trimmed.ends_with(']') {
        wrapped = format!("[{trimmed}]");
        wrapped.as_str()
    } else {
        trimmed
    };
    if let Some(v) = json_parse(candidate) {
        return Cow::Owned(match v {
            Value::Array(a) => a,
            _ => Vec::new(),
        });
    }
    Cow::Owned(
        content
            .split('\n')
            .map(js_trim)
            .filter(|l| !l.is_empty())
            .filter_map(json_parse)
            .collect(),
    )
}

/// `extractMainInstructionFromUI`: the first non-blank `say/text` (trimmed), unless it is missing,
/// shorter than 50 units or ends with `...`, in which case the first non-empty `<task>` block of an
/// `api_req_started` request wins (falling back to the `say/text` if none). Strict `JSON.parse` only.
pub fn main_instruction(ui_content: &str) -> Option<String> {
    main_instruction_in(json_parse(ui_content).as_ref())
}

/// [`main_instruction`] given the content's `JSON.parse` result.
pub fn main_instruction_in(parsed: Option<&Value>) -> Option<String> {
    let Some(Value::Array(messages)) = parsed else {
        return None;
    };
    let mut first_say: Option<String> = None;
    for m in messages {
        if m.is_null() {
            return None; // `null.type` throws; the helper answers undefined
        }
        if type_is(m, "say") && prop_str(m, "say") == Some("text") {
            if let Some(t) = prop_str(m, "text") {
                let t = js_trim(t);
                if !t.is_empty() {
                    first_say = Some(t.to_owned());
                    break;
                }
            }
        }
    }
    let weak = match &first_say {
        None => true,
        Some(t) => utf16_len(t) < 50 || t.ends_with("..."),
    };
    if weak {
        for m in messages {
            if m.is_null() {
                return None;
            }
            if !(type_is(m, "say") && prop_str(m, "say") == Some("api_req_started")) {
                continue;
            }
            let Some(data) = prop_str(m, "text").and_then(json_parse) else {
                continue;
            };
            let Some(request) = prop_str(&data, "request").filter(|r| !r.is_empty()) else {
                continue;
            };
            if let Some(caps) = MAIN_TASK.as_ref().and_then(|re| re.captures(request)) {
                let inner = caps.get(1).map_or("", |m| m.as_str());
                if !inner.is_empty() {
                    return Some(js_trim(inner).to_owned());
                }
            }
        }
    }
    first_say
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_block_contents_are_the_matches_without_their_tags() {
        let re = TASK_BLOCK.as_ref().expect("pattern compiles");
        let texts = [
            "<task>  a subtask long enough to count  </task>",
            "<TASK>Mixed</Task> then <tAsK>\n\u{a0}é😀 second block of text here\n</taSK>",
            "<task><task>nested opening tags inside one block</task></task>",
            "no tags at all",
            "<task>unclosed block that never ends",
            "<task></task><task>x</task>",
        ];
        for text in texts {
            let by_group: Vec<&str> = re
                .captures_iter(text)
                .map(|c| c.get(1).map_or("", |m| m.as_str()))
                .collect();
            let by_slice: Vec<&str> = re
                .find_iter(text)
                .map(|m| &text[m.start() + "<task>".len()..m.end() - "</task>".len()])
                .collect();
            assert_eq!(by_group, by_slice, "{text}");
        }
    }
    use serde_json::json;

    #[test]
    fn all_patterns_compile() {
        assert!(patterns_compile());
    }

    #[test]
    fn clean_mode_strips_non_ascii() {
        assert_eq!(clean_mode("💻 Code"), "code");
        assert_eq!(clean_mode("🪲 Debug mode"), "debug mode");
        assert_eq!(clean_mode("Débogage"), "dbogage");
        assert_eq!(clean_mode(""), "task");
        assert_eq!(clean_mode("💻"), "");
    }

    #[test]
    fn create_instruction_truncates_to_197_plus_dots() {
        let long = "x".repeat(250);
        let i = create_instruction(0.0, "Code", Some(&long), 20);
        let i = i.map(|i| (i.message.len(), i.message.ends_with("..."), i.mode));
        assert_eq!(i, Some((200, true, "code".to_owned())));
        assert_eq!(create_instruction(0.0, "💻", Some("short"), 20), None);
        let ok = create_instruction(0.0, "💻", Some(&"y".repeat(20)), 20);
        assert_eq!(ok.map(|i| i.mode), Some("task".to_owned()));
    }

    #[test]
    fn chain_first_hit_wins() {
        let msgs = vec![
            json!({"type":"ask","ask":"tool","ts":5,"text":"{\"tool\":\"newTask\",\"mode\":\"code\",\"content\":\"Implement the parser module now please\"}"}),
            json!({"type":"say","say":"api_req_started","ts":6,"text":"{\"request\":\"[new_task in 💻 Code mode: 'Implement the parser module now please'] Result: ok\"}"}),
            json!({"type":"say","say":"api_req_started","ts":7,"text":"{\"request\":\"<task>\\nMy own main instruction that is long enough\\n</task>\"}"}),
            json!(null),
            json!({"type":"say","say":"text","text":"<new_task><mode>ask</mode><message>Explain it</message></new_task>"}),
            json!({"type":"tool_call","content":{"tool":"new_task","message":"x"}}),
        ];
        let got = extract_from_messages(&msgs);
        let summary: Vec<(f64, &str, &str)> = got
            .iter()
            .map(|i| (i.timestamp, i.mode.as_str(), i.message.as_str()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (5.0, "code", "Implement the parser module now please"),
                (6.0, "code mode", "Implement the parser module now please"),
                (
                    7.0,
                    "task",
                    "\\nMy own main instruction that is long enough\\n"
                ),
                (0.0, "ask", "Explain it"),
                (0.0, "legacy", "x"),
            ]
        );
    }

    #[test]
    fn main_instruction_rules() {
        let long = "a".repeat(60);
        let ui = json!([{"type":"say","say":"text","text": format!("  {long}  ")}]).to_string();
        assert_eq!(main_instruction(&ui), Some(long.clone()));
        let ui = json!([
            {"type":"say","say":"text","text":"short"},
            {"type":"say","say":"api_req_started","text":"{\"request\":\"<task>   </task>\"}"},
            {"type":"say","say":"api_req_started","text":"{\"request\":\"x <task>\\n  Real one \\n</task>\"}"}
        ])
        .to_string();
        assert_eq!(main_instruction(&ui), Some("Real one".to_owned()));
        let ui = json!([{"type":"say","say":"text","text":"short"}]).to_string();
        assert_eq!(main_instruction(&ui), Some("short".to_owned()));
        assert_eq!(main_instruction("[]"), None);
        assert_eq!(main_instruction("{\"a\":1}"), None);
    }

    #[test]
    fn tolerant_ui_reader() {
        assert_eq!(parse_ui_for_instructions("{\"a\":1}").len(), 0);
        assert_eq!(parse_ui_for_instructions("{\"a\":1},{\"b\":2}").len(), 2);
        assert_eq!(parse_ui_for_instructions("{\"a\":1}\n{\"b\":2}\n").len(), 2);
        assert_eq!(parse_ui_for_instructions("[{\"a\":1}").len(), 0);
        assert_eq!(parse_ui_for_instructions("garbage").len(), 0);
    }
}
