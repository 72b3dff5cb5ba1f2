//! The legacy skeleton builder for one task directory (spec: legacy-server.md §2.2–2.6, §3.4, §3.5).

use crate::extract::{
    extract_from_messages, main_instruction_in, parse_ui_for_instructions, ui_instruction_messages,
    LegacyInstruction,
};
use crate::js::{js_date_value, js_trim, json_parse, or, prop, strip_bom, v8_sort_order};
use crate::prefix::{compute_instruction_prefix, DEFAULT_PREFIX_LEN};
use crate::sequence::SequenceFacts;
use regex::Regex;
use roo_js::{number_value, stringify, time_clip, truthy, utf16_len};
use serde::Serialize;
use serde_json::{Map, Value};
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    /// Earliest api `ts` / `files_in_context` date, in ms. `null` where the legacy builder would fall
    /// back to the directory's birth time (not reproducible data).
    pub created_at_ms: Option<f64>,
    /// Latest of the same dates, in ms; `null` where the legacy builder uses the directory's mtime.
    pub last_activity_ms: Option<f64>,
    /// `"<file> (<MB, one decimal>MB)"` for each file skipped by the 10 MiB guard.
    pub oversized_files: Vec<String>,
    /// The legacy `sequence` (messages and actions in the builder's order), when it was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
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

/// Side files (`task_metadata.json`, `history_item.json`) larger than this are not read: no real one
/// comes near it, and a read without a bound is a way to exhaust memory (a sparse or endless file).
pub const MAX_SIDE_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// The size of the regular file at `path` and its bytes when it holds at most `cap` bytes and can
/// be read. `None` where there is nothing to stat. Only regular files are opened: a FIFO, a device
/// or a socket (even behind a link) gives its size and no bytes, so a read never blocks or runs on
/// without end.
pub fn read_regular_file(path: &Path, cap: u64) -> Option<LegacyFile> {
    let meta = fs::metadata(path).ok()?;
    let size = meta.len();
    let bytes = if meta.is_file() && size <= cap {
        fs::read(path).ok()
    } else {
        None
    };
    Some(LegacyFile { size, bytes })
}

/// Reads a task folder's four files the way the legacy builder does (conversation files over the
/// size cap are only stat'ed), regular files only.
pub fn read_legacy_task_files(task_dir: &Path) -> LegacyTaskFiles {
    let read = |name: &str, capped: bool| {
        let cap = if capped {
            MAX_CONVERSATION_FILE_SIZE
        } else {
            MAX_SIDE_FILE_SIZE
        };
        read_regular_file(&task_dir.join(name), cap)
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

/// A conversation file's text with its `JSON.parse` result (`None` where JavaScript would throw).
pub(crate) struct Parsed<'a> {
    pub(crate) text: &'a str,
    pub(crate) value: Option<Value>,
}

impl<'a> Parsed<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Parsed {
            text,
            value: json_parse(text),
        }
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

    #[test]
    fn patterns() {
        assert!(patterns_compile());
    }
}
