//! The legacy skeleton builder for one task directory (spec: legacy-server.md §2.2–2.6, §3.4, §3.5).

use crate::extract::{
    extract_from_messages, main_instruction_in, parse_ui_for_instructions, ui_instruction_messages,
    LegacyInstruction,
};
use crate::js::{js_date_value, js_trim, json_parse, or, prop, prop_str, strip_bom, v8_sort_order};
use crate::prefix::{compute_instruction_prefix, DEFAULT_PREFIX_LEN};
use regex::Regex;
use roo_js::{
    number_value, stringify, time_clip, to_string, truthy, utf16_len, utf16_len_upto, utf16_prefix,
    utf16_suffix_last,
};
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::sync::LazyLock;

/// Files larger than this (bytes) are not read at all by the legacy builder.
pub const MAX_CONVERSATION_FILE_SIZE: u64 = 10 * 1024 * 1024;

const METADATA: &str = "task_metadata.json";
const API_HISTORY: &str = "api_conversation_history.json";
const UI_MESSAGES: &str = "ui_messages.json";
const HISTORY_ITEM: &str = "history_item.json";

/// What the legacy skeleton builder (`analyzeWithOldSystem`, production hierarchy on) yields for one
/// task directory.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyAnalysis {
    /// The directory name.
    pub task_id: String,
    /// `task_metadata.parentTaskId || task_metadata.parent_task_id || history_item.parentTaskId`
    /// (falsy values, e.g. `""`, count as absent).
    pub parent_task_id: Option<String>,
    /// Raw output of the extractor chain over `ui_messages.json`.
    pub instructions: Vec<LegacyInstruction>,
    /// `computeInstructionPrefix(message, 192)` of every instruction, de-duplicated in order, only
    /// those longer than 10 units.
    pub child_task_instruction_prefixes: Vec<String>,
    /// `computeInstructionPrefix(mainInstruction, 192)`.
    pub truncated_instruction: Option<String>,
    /// The main instruction before normalisation.
    pub main_instruction: Option<String>,
    /// Sequence items that are messages (every api and ui item, for Roo data).
    pub message_count: u32,
    /// Sequence items that are actions (0 for Roo data).
    pub action_count: u32,
    /// `messageCount + actionCount`.
    pub sequence_length: u32,
    /// Sum of the sizes of `task_metadata.json`, `api_conversation_history.json`, `ui_messages.json`.
    pub total_size: u64,
    /// First `Current Workspace Directory (…)` of the raw api history, else `task_metadata.workspace`.
    pub workspace: Option<String>,
    /// `task_metadata.title` (a non-string value is given as its JSON text).
    pub title: Option<String>,
    /// `task_metadata.mode` (a non-string value is given as its JSON text).
    pub mode: Option<String>,
    /// Last assistant message of the legacy sequence mentions `attempt_completion`.
    pub is_completed: bool,
    /// Earliest api `ts` / `files_in_context` date, in ms. `None` where the legacy builder would fall
    /// back to the directory's birth time (not reproducible data).
    pub created_at_ms: Option<f64>,
    /// Latest of the same dates, in ms; `None` where the legacy builder uses the directory's mtime.
    pub last_activity_ms: Option<f64>,
    /// `"<file> (<MB, one decimal>MB)"` for each file skipped by the 10 MiB guard.
    pub oversized_files: Vec<String>,
    /// The legacy `sequence` (messages and actions in the builder's order), when it was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence: Option<Vec<Value>>,
}

/// `/Current Workspace Directory \(([^)]+)\)/`
static WORKSPACE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"Current Workspace Directory \(([^)]+)\)").ok());

#[cfg(test)]
pub(crate) fn patterns_compile() -> bool {
    WORKSPACE.is_some()
}

/// `new Date(…)`-free string form of an optional JSON value: strings as they are, `null`/absent as
/// `None`, anything else as its JSON text.
fn opt_value_string(v: Option<&Value>) -> Option<String> {
    match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(stringify(other)),
    }
}

/// ECMAScript `ToNumber` of a string (`StringNumericLiteral`).
fn js_string_to_number(s: &str) -> f64 {
    let t = js_trim(s);
    if t.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(rest) = t.strip_prefix(prefix) {
            if rest.is_empty() || !rest.chars().all(|c| c.is_digit(radix)) {
                return f64::NAN;
            }
            return rest.chars().fold(0.0, |acc, c| {
                acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
            });
        }
    }
    let unsigned = t.trim_start_matches(['+', '-']);
    if unsigned == "Infinity" && t.len() - unsigned.len() <= 1 {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let valid = t.len() - unsigned.len() <= 1
        && !unsigned.is_empty()
        && unsigned
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && unsigned
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '.');
    if !valid {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// JS `v > 0` for a property that may be absent.
fn js_greater_than_zero(v: Option<&Value>) -> bool {
    let n = match v {
        None | Some(Value::Null) | Some(Value::Object(_)) => return false,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::Number(n)) => number_value(n),
        Some(Value::String(s)) => js_string_to_number(s),
        Some(a @ Value::Array(_)) => js_string_to_number(&to_string(a)),
    };
    n > 0.0
}

/// The items the sequence builder reads from one file (`readJsonFile`), given the content's
/// `JSON.parse` result (read once for all the builder's readers; its arrays are borrowed); `None`
/// when spreading the result would throw (a `messages` object that has a positive `length` but is
/// not iterable).
fn read_sequence_items<'v>(content: &str, parsed: Option<&'v Value>) -> Option<Cow<'v, [Value]>> {
    if let Some(data) = parsed {
        match data {
            Value::Array(a) if !a.is_empty() => return Some(Cow::Borrowed(a.as_slice())),
            Value::Object(o) => match o.get("messages") {
                Some(Value::Array(a)) if !a.is_empty() => return Some(Cow::Borrowed(a.as_slice())),
                // A non-empty string is spread into its code points.
                Some(Value::String(s)) if !s.is_empty() => {
                    return Some(Cow::Owned(
                        s.chars().map(|c| Value::String(c.to_string())).collect(),
                    ))
                }
                Some(Value::Object(m)) if js_greater_than_zero(m.get("length")) => return None,
                _ => {}
            },
            _ => {}
        }
    }
    let mut sanitized = js_trim(content);
    if let Some(s) = sanitized.strip_suffix(',') {
        sanitized = s;
    }
    let wrapped;
    let candidate = if !sanitized.starts_with('[') && !sanitized.ends_with(']') {
        wrapped = format!("[{sanitized}]");
        wrapped.as_str()
    } else {
        sanitized
    };
    if let Some(v) = json_parse(candidate) {
        return Some(Cow::Owned(match v {
            Value::Array(a) => a,
            _ => Vec::new(),
        }));
    }
    Some(Cow::Owned(
        content
            .split('\n')
            .filter(|l| !js_trim(l).is_empty())
            .filter_map(json_parse)
            .collect(),
    ))
}

/// `item.content ?? item.text ?? ''` turned into the sequence's message text (before truncation).
fn message_text(item: &Value) -> String {
    let raw = match prop(item, "content") {
        Some(v) if !v.is_null() => Some(v),
        _ => prop(item, "text").filter(|v| !v.is_null()),
    };
    let text = match raw {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let texts: Vec<String> = parts
                .iter()
                .filter(|p| prop_str(p, "type") == Some("text") && truthy(prop(p, "text")))
                .filter_map(|p| prop(p, "text").map(to_string))
                .collect();
            if texts.is_empty() {
                "[contenu non textuel]".to_owned()
            } else {
                texts.join("\n\n")
            }
        }
        Some(other) => return stringify(other),
    };
    if text.contains("\"sequence\"") || text.contains("\"taskId\"") {
        return "[Contenu suspect ignoré pour éviter une boucle]".to_owned();
    }
    text
}

/// The sequence's message text, cut in the middle past 400 units.
fn message_content(item: &Value) -> String {
    truncate_content(message_text(item))
}

/// `first 200 + '...' + last 200` when longer than 400 UTF-16 units.
fn truncate_content(s: String) -> String {
    if utf16_len_upto(&s, 401) <= 400 {
        return s;
    }
    let mut out = utf16_prefix(&s, 200).into_owned();
    out.push_str("...");
    out.push_str(&utf16_suffix_last(&s, 200));
    out
}

/// The legacy `sequence` built from the api then ui items (§2.6.4): every item with a role, or of
/// type `say`, is a message `{role, content, timestamp, isTruncated}`; `tool`/`command`/`tool_use`/
/// `tool_result` items are actions; stable-sorted by date. `None` where building it throws.
fn legacy_sequence(items: &[&Value]) -> Option<Vec<Value>> {
    const EPOCH: &str = "1970-01-01T00:00:00.000Z";
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    let mut keys: Vec<f64> = Vec::with_capacity(items.len());
    for &item in items {
        if item.is_null() {
            return None;
        }
        let ts_value = prop(item, "timestamp").filter(|v| truthy(Some(v)));
        let key = ts_value.map_or(0.0, js_date_value);
        let timestamp = ts_value
            .cloned()
            .unwrap_or_else(|| Value::String(EPOCH.to_owned()));
        let ty = prop_str(item, "type");
        let role = match prop(item, "role").filter(|r| truthy(Some(r))) {
            Some(r) => r.clone(),
            None => Value::String(
                if ty == Some("ask") {
                    "user"
                } else {
                    "assistant"
                }
                .to_owned(),
            ),
        };
        let user_or_assistant = matches!(role.as_str(), Some("user" | "assistant"));
        if user_or_assistant || ty == Some("say") {
            let content = match prop(item, "content") {
                Some(v) if !v.is_null() => Some(v),
                _ => prop(item, "text").filter(|v| !v.is_null()),
            };
            if let Some(Value::Array(parts)) = content {
                if parts.iter().any(Value::is_null) {
                    return None;
                }
            }
            let text = message_text(item);
            let is_truncated = utf16_len_upto(&text, 401) > 400;
            let text = truncate_content(text);
            let mut m = Map::new();
            m.insert("role".into(), role);
            m.insert("content".into(), Value::String(text));
            m.insert("timestamp".into(), timestamp);
            m.insert("isTruncated".into(), Value::Bool(is_truncated));
            out.push(Value::Object(m));
            keys.push(key);
        } else if matches!(ty, Some("tool" | "command" | "tool_use" | "tool_result")) {
            let mut a = Map::new();
            let kind = if ty == Some("command") {
                "command"
            } else {
                "tool"
            };
            a.insert("type".into(), Value::String(kind.to_owned()));
            let name = [prop(item, "tool"), prop(item, "name")]
                .into_iter()
                .flatten()
                .find(|v| truthy(Some(v)))
                .cloned()
                .unwrap_or_else(|| Value::String("unknown_action".to_owned()));
            a.insert("name".into(), name);
            let params = [prop(item, "toolInput"), prop(item, "parameters")]
                .into_iter()
                .flatten()
                .find(|v| truthy(Some(v)))
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            a.insert("parameters".into(), params);
            let status = if truthy(prop(item, "isError")) {
                "failure"
            } else if prop(item, "toolResult").is_some_and(|v| !v.is_null()) {
                "success"
            } else {
                "in_progress"
            };
            a.insert("status".into(), Value::String(status.to_owned()));
            a.insert("timestamp".into(), timestamp);
            out.push(Value::Object(a));
            keys.push(key);
        }
    }
    let order = v8_sort_order(&keys);
    let mut slots: Vec<Option<Value>> = out.into_iter().map(Some).collect();
    Some(
        order
            .into_iter()
            .filter_map(|i| slots.get_mut(i).and_then(Option::take))
            .collect(),
    )
}

struct SequenceEntry<'a> {
    item: &'a Value,
    is_message: bool,
    is_assistant: bool,
}

/// Counts and `isCompleted` of the legacy `sequence`; `None` where building it throws (a `null` item,
/// or a `null` part in a message's content array).
fn sequence_summary(items: &[&Value]) -> Option<(u32, u32, bool)> {
    let mut entries: Vec<SequenceEntry<'_>> = Vec::with_capacity(items.len());
    let mut keys: Vec<f64> = Vec::with_capacity(items.len());
    for &item in items {
        if item.is_null() {
            return None;
        }
        let key = match prop(item, "timestamp") {
            Some(v) if truthy(Some(v)) => js_date_value(v),
            _ => 0.0,
        };
        let role = prop(item, "role");
        let (user_or_assistant, is_assistant) = if truthy(role) {
            let r = role.and_then(Value::as_str);
            (
                matches!(r, Some("user" | "assistant")),
                r == Some("assistant"),
            )
        } else {
            let is_ask = prop_str(item, "type") == Some("ask");
            (true, !is_ask)
        };
        let ty = prop_str(item, "type");
        if user_or_assistant || ty == Some("say") {
            let content = match prop(item, "content") {
                Some(v) if !v.is_null() => Some(v),
                _ => prop(item, "text").filter(|v| !v.is_null()),
            };
            if let Some(Value::Array(parts)) = content {
                if parts.iter().any(Value::is_null) {
                    return None;
                }
            }
            entries.push(SequenceEntry {
                item,
                is_message: true,
                is_assistant,
            });
            keys.push(key);
        } else if matches!(ty, Some("tool" | "command" | "tool_use" | "tool_result")) {
            entries.push(SequenceEntry {
                item,
                is_message: false,
                is_assistant: false,
            });
            keys.push(key);
        }
    }
    let messages = entries.iter().filter(|e| e.is_message).count();
    let actions = entries.len() - messages;
    let order = v8_sort_order(&keys);
    let last_assistant = order
        .iter()
        .rev()
        .filter_map(|&i| entries.get(i))
        .find(|e| e.is_message && e.is_assistant);
    let completed = last_assistant.is_some_and(|e| {
        message_content(e.item)
            .to_lowercase()
            .contains("attempt_completion")
    });
    Some((
        u32::try_from(messages).unwrap_or(u32::MAX),
        u32::try_from(actions).unwrap_or(u32::MAX),
        completed,
    ))
}

/// The legacy chain over a task's `ui_messages.json` (§3.1): 10 MiB guard, BOM strip, tolerant parse.
pub fn extract_new_task_instructions_legacy(task_dir: &Path) -> Vec<LegacyInstruction> {
    let mut ignored = Vec::new();
    let ui = read_legacy_task_files(task_dir).ui_messages;
    match preload_file(UI_MESSAGES, ui, &mut ignored) {
        Some(content) => extract_from_messages(&parse_ui_for_instructions(&content)),
        None => Vec::new(),
    }
}

/// One of a task's files as the legacy builder sees it: its size, and its bytes when they were
/// read (`None`: unreadable, or not read because it is over [`MAX_CONVERSATION_FILE_SIZE`]).
#[derive(Debug, Clone, Default)]
pub struct LegacyFile {
    pub size: u64,
    pub bytes: Option<Vec<u8>>,
}

/// The four files of a task folder the legacy builder looks at; `None` where the file does not exist.
#[derive(Debug, Clone, Default)]
pub struct LegacyTaskFiles {
    pub metadata: Option<LegacyFile>,
    pub api_history: Option<LegacyFile>,
    pub ui_messages: Option<LegacyFile>,
    pub history_item: Option<LegacyFile>,
}

fn lossy_text(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// A conversation file's text as the builder preloads it: over the size cap → noted in `oversized`
/// and not read; BOM stripped.
fn preload_file(
    name: &str,
    file: Option<LegacyFile>,
    oversized: &mut Vec<String>,
) -> Option<String> {
    let file = file?;
    if file.size > MAX_CONVERSATION_FILE_SIZE {
        oversized.push(format!(
            "{name} ({:.1}MB)",
            file.size as f64 / 1024.0 / 1024.0
        ));
        return None;
    }
    let mut text = lossy_text(file.bytes?);
    if text.starts_with('\u{FEFF}') {
        text.drain(..'\u{FEFF}'.len_utf8());
    }
    Some(text)
}

/// Reads a task folder's four files the way the legacy builder does (conversation files over the
/// size cap are only stat'ed).
pub fn read_legacy_task_files(task_dir: &Path) -> LegacyTaskFiles {
    let read = |name: &str, capped: bool| {
        let meta = fs::metadata(task_dir.join(name)).ok()?;
        let size = meta.len();
        let bytes = if capped && size > MAX_CONVERSATION_FILE_SIZE {
            None
        } else {
            fs::read(task_dir.join(name)).ok()
        };
        Some(LegacyFile { size, bytes })
    };
    LegacyTaskFiles {
        metadata: read(METADATA, false),
        api_history: read(API_HISTORY, true),
        ui_messages: read(UI_MESSAGES, true),
        history_item: read(HISTORY_ITEM, false),
    }
}

/// What the legacy skeleton builder yields for one task directory; `None` where it returns `null`
/// (none of the three files exists, an unreadable `task_metadata.json`, a `null` item in a conversation
/// file, an invalid date among the collected timestamps, …).
pub fn analyze_task_legacy(task_dir: &Path) -> Option<LegacyAnalysis> {
    let task_id = task_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    analyze_task_legacy_files(task_id, read_legacy_task_files(task_dir), false)
}

/// [`analyze_task_legacy`] over files already read (by the caller, e.g. through Node's file system);
/// with `with_sequence`, the legacy `sequence` array too.
pub fn analyze_task_legacy_files(
    task_id: String,
    files: LegacyTaskFiles,
    with_sequence: bool,
) -> Option<LegacyAnalysis> {
    let sizes = [
        files.metadata.as_ref().map(|f| f.size),
        files.api_history.as_ref().map(|f| f.size),
        files.ui_messages.as_ref().map(|f| f.size),
    ];
    let has_metadata = files.metadata.is_some();
    if files.metadata.is_none() && files.api_history.is_none() && files.ui_messages.is_none() {
        return None;
    }
    let raw_meta = raw_task_metadata(files.metadata)?;
    let parent_task_id = legacy_parent_task_id(&raw_meta, files.history_item);

    let mut oversized_files = Vec::new();
    let ui_content = preload_file(UI_MESSAGES, files.ui_messages, &mut oversized_files);
    let api_content = preload_file(API_HISTORY, files.api_history, &mut oversized_files);

    // Each conversation text is parsed once; every reader below takes that result.
    let ui = ui_content.as_deref().map(Parsed::new);
    let api = api_content.as_deref().map(Parsed::new);

    let instructions = match &ui {
        Some(c) => extract_from_messages(&ui_instruction_messages(c.text, c.value.as_ref())),
        None => Vec::new(),
    };
    let child_task_instruction_prefixes = distinct_child_prefixes(&instructions);
    let seq = SequenceFacts::read(api.as_ref(), ui.as_ref(), with_sequence)?;

    let main = ui
        .as_ref()
        .and_then(|c| main_instruction_in(c.value.as_ref()));
    let truncated_instruction = main
        .as_deref()
        .filter(|m| !m.is_empty())
        .map(|m| compute_instruction_prefix(m, DEFAULT_PREFIX_LEN));

    // Dates and workspace from the api history (strict JSON.parse first), then files_in_context.
    let (mut stamps, extracted_workspace) = api_history_stamps(api.as_ref());
    if has_metadata {
        push_context_file_stamps(&raw_meta, &mut stamps);
    }
    let (created_at_ms, last_activity_ms) = first_and_last_stamp(&stamps)?;

    let workspace = match extracted_workspace {
        Some(w) if !w.is_empty() => Some(w),
        _ => opt_value_string(prop(&raw_meta, "workspace")),
    };
    let total_size = sizes.iter().flatten().sum();

    Some(LegacyAnalysis {
        task_id,
        parent_task_id,
        instructions,
        child_task_instruction_prefixes,
        truncated_instruction,
        main_instruction: main,
        message_count: seq.message_count,
        action_count: seq.action_count,
        sequence_length: seq.message_count.saturating_add(seq.action_count),
        total_size,
        workspace,
        title: opt_value_string(prop(&raw_meta, "title")),
        mode: opt_value_string(prop(&raw_meta, "mode")),
        is_completed: seq.is_completed,
        created_at_ms,
        last_activity_ms,
        oversized_files,
        sequence: seq.sequence,
    })
}

/// `task_metadata.json` as the builder holds it: `{}` when absent or not JSON; `None` when it
/// cannot be read (the error propagates) or is `null` (`null.parentTaskId` throws).
fn raw_task_metadata(file: Option<LegacyFile>) -> Option<Value> {
    let raw_meta = match file {
        Some(f) => {
            let text = lossy_text(f.bytes?);
            json_parse(strip_bom(&text)).unwrap_or_else(|| Value::Object(Map::new()))
        }
        None => Value::Object(Map::new()),
    };
    (!raw_meta.is_null()).then_some(raw_meta)
}

/// The parent id: `task_metadata.json`'s `parentTaskId` or `parent_task_id`, else
/// `history_item.json`'s `parentTaskId`, when truthy.
fn legacy_parent_task_id(raw_meta: &Value, history_item: Option<LegacyFile>) -> Option<String> {
    let history = history_item
        .and_then(|f| f.bytes)
        .map(lossy_text)
        .and_then(|t| json_parse(strip_bom(&t)));
    let history_parent = history.as_ref().and_then(|h| prop(h, "parentTaskId"));
    let parent = or(
        or(
            prop(raw_meta, "parentTaskId"),
            prop(raw_meta, "parent_task_id"),
        ),
        history_parent,
    );
    if truthy(parent) {
        opt_value_string(parent)
    } else {
        None
    }
}

/// The prefixes of the child instructions longer than 10 UTF-16 units, first occurrence of each.
fn distinct_child_prefixes(instructions: &[LegacyInstruction]) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut prefixes = Vec::new();
    for inst in instructions {
        let p = compute_instruction_prefix(&inst.message, DEFAULT_PREFIX_LEN);
        if utf16_len(&p) > 10 && seen.insert(p.clone()) {
            prefixes.push(p);
        }
    }
    prefixes
}

/// The counts of the api history and UI messages read as one sequence, and that sequence.
/// A conversation file's text with its `JSON.parse` result (`None` where JavaScript would throw).
struct Parsed<'a> {
    text: &'a str,
    value: Option<Value>,
}

impl<'a> Parsed<'a> {
    fn new(text: &'a str) -> Self {
        Parsed {
            text,
            value: json_parse(text),
        }
    }
}

struct SequenceFacts {
    message_count: u32,
    action_count: u32,
    is_completed: bool,
    sequence: Option<Vec<Value>>,
}

impl SequenceFacts {
    /// `None` where the builder throws (a `null` item, …).
    fn read(
        api: Option<&Parsed>,
        ui: Option<&Parsed>,
        with_sequence: bool,
    ) -> Option<SequenceFacts> {
        let api_items = match api {
            Some(c) => read_sequence_items(c.text, c.value.as_ref())?,
            None => Cow::Borrowed(&[][..]),
        };
        let ui_items = match ui {
            Some(c) => read_sequence_items(c.text, c.value.as_ref())?,
            None => Cow::Borrowed(&[][..]),
        };
        let all: Vec<&Value> = api_items.iter().chain(ui_items.iter()).collect();
        let (message_count, action_count, is_completed) = sequence_summary(&all)?;
        let sequence = if with_sequence {
            Some(legacy_sequence(&all)?)
        } else {
            None
        };
        Some(SequenceFacts {
            message_count,
            action_count,
            is_completed,
            sequence,
        })
    }
}

/// The non-zero `ts` of the api history's messages (up to a `null` one) and the workspace its text
/// names; nothing when it is not strict JSON.
fn api_history_stamps(api: Option<&Parsed>) -> (Vec<f64>, Option<String>) {
    let mut stamps: Vec<f64> = Vec::new();
    let mut workspace: Option<String> = None;
    let Some(Parsed {
        text: api,
        value: Some(data),
    }) = api.filter(|c| !c.text.is_empty())
    else {
        return (stamps, workspace);
    };
    if let Some(caps) = WORKSPACE.as_ref().and_then(|re| re.captures(api)) {
        if let Some(m) = caps.get(1) {
            workspace = Some(js_trim(m.as_str()).to_owned());
        }
    }
    let messages = if data.is_array() {
        Some(data)
    } else {
        prop(data, "messages").filter(|m| truthy(Some(m)))
    };
    if let Some(Value::Array(list)) = messages {
        for m in list {
            if m.is_null() {
                break; // `null.ts` throws; earlier dates are kept
            }
            if let Some(Value::Number(n)) = prop(m, "ts") {
                let f = number_value(n);
                if f != 0.0 {
                    stamps.push(time_clip(f));
                }
            }
        }
    }
    (stamps, workspace)
}

/// Adds the truthy read and edit dates of `task_metadata.json`'s `files_in_context` (up to a `null`
/// entry).
fn push_context_file_stamps(raw_meta: &Value, stamps: &mut Vec<f64>) {
    let Some(Value::Array(files)) = prop(raw_meta, "files_in_context") else {
        return;
    };
    for f in files {
        if f.is_null() {
            break;
        }
        for key in ["roo_read_date", "roo_edit_date", "user_edit_date"] {
            if let Some(v) = prop(f, key).filter(|v| truthy(Some(v))) {
                stamps.push(js_date_value(v));
            }
        }
    }
}

/// The first and last of the times in V8's sort order (`(None, None)` without times); `None` when
/// either is an invalid date (`toISOString()` throws).
fn first_and_last_stamp(stamps: &[f64]) -> Option<(Option<f64>, Option<f64>)> {
    if stamps.is_empty() {
        return Some((None, None));
    }
    let order = v8_sort_order(stamps);
    let first = order.first().map_or(f64::NAN, |&i| stamps[i]);
    let last = order.last().map_or(f64::NAN, |&i| stamps[i]);
    if first.is_nan() || last.is_nan() {
        return None;
    }
    Some((Some(first), Some(last)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sequence_reader_stages() {
        let n = |s: &str| read_sequence_items(s, json_parse(s).as_ref()).map(|v| v.len());
        assert_eq!(n("[1,2]"), Some(2));
        assert_eq!(n("{\"messages\":[1]}"), Some(1));
        assert_eq!(n("{\"messages\":\"ab😀\"}"), Some(3));
        assert_eq!(n("{\"messages\":{\"length\":\"2\"}}"), None);
        assert_eq!(n("{\"messages\":{\"length\":0}}"), Some(1));
        assert_eq!(n("{\"a\":1}"), Some(1));
        assert_eq!(n("[]"), Some(0));
        assert_eq!(n(""), Some(0));
        assert_eq!(n("5"), Some(1));
        assert_eq!(n("{\"a\":1},{\"b\":2},"), Some(2));
        assert_eq!(n("{\"a\":1}\n{\"b\":2\n{\"c\":3}"), Some(2));
    }

    #[test]
    fn content_rules() {
        let item = json!({"content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]});
        assert_eq!(message_content(&item), "a\n\nb");
        assert_eq!(
            message_content(&json!({"content":[{"type":"image"}]})),
            "[contenu non textuel]"
        );
        assert_eq!(
            message_content(&json!({"text":"x \"taskId\" y"})),
            "[Contenu suspect ignoré pour éviter une boucle]"
        );
        assert_eq!(
            message_content(&json!({"content":{"taskId":1}})),
            "{\"taskId\":1}"
        );
        assert_eq!(message_content(&json!({"content":null,"text":5})), "5");
        let long = "a".repeat(199) + "😀" + &"b".repeat(300);
        let c = message_content(&json!({ "text": long }));
        assert_eq!(utf16_len(&c), 403);
        assert!(c.starts_with(&("a".repeat(199) + "\u{FFFD}...")));
    }

    #[test]
    fn string_to_number() {
        assert_eq!(js_string_to_number(" 12 "), 12.0);
        assert_eq!(js_string_to_number("0x10"), 16.0);
        assert_eq!(js_string_to_number(""), 0.0);
        assert!(js_string_to_number("inf").is_nan());
        assert!(js_string_to_number("1a").is_nan());
        assert_eq!(js_string_to_number("-Infinity"), f64::NEG_INFINITY);
        assert_eq!(js_string_to_number(".5"), 0.5);
    }

    #[test]
    fn patterns() {
        assert!(patterns_compile());
    }
}
