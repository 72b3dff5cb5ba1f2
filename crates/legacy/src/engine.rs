//! The sub-task instructions the legacy hierarchy engine extracts from one task in its phase 1
//! (the engine's own extractor, not the seven-extractor chain of [`crate::extract`]).
//!
//! Over the records of a `ui_messages.json`, in record order, each record gives, in this order:
//! its `newTask` tool ask; each `[new_task in MODE: 'MESSAGE']` of an `api_req_started` request;
//! each `<new_task>` block holding a `<mode>` and a `<message>`; each other tag block holding a
//! `<mode>` then a `<message>` (closed by the same tag name, in any case); each `<task>` block;
//! and, for a `say` record or an assistant message, a French delegation sentence. With no record
//! giving anything, the `<new_task>` and `<task>` blocks of every record's text joined by `\n`.
//!
//! The caller applies what belongs to the engine object (which a test may replace): the mode of a
//! tool ask goes through its `extractModeFromRooMode`, the messages of [`Kind::Api`] and
//! [`Kind::Xml`] candidates through its `normalizeEscaping`, and every message but an `Api` one is
//! cut to 200 UTF-16 units after that. A missing time is the caller's clock.

use crate::extract::NEW_TASK_RESULT;
use crate::js::{
    ci_pattern, compile, compile_fancy, fancy_captures, first_capture, js_trim, json_parse, or,
    prop, prop_str, JS_SPACE_CLASS,
};
use fancy_regex::Regex as FancyRegex;
use regex::Regex;
use roo_js::{to_string, truthy, utf16_len};
use serde::Serialize;
use serde_json::Value;
use std::sync::LazyLock;

/// Where a candidate came from: what the caller still applies to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "EngineCandidateKind"))]
pub enum Kind {
    /// A `newTask` tool ask: the mode goes through the engine's mode extraction; the message is cut.
    Tool,
    /// A `[new_task in …]` request text: the message is normalised, not cut.
    Api,
    /// A `<new_task>` block of one record: the message is normalised, then cut.
    Xml,
    /// Any other block or sentence: the message is cut.
    Plain,
}

/// One instruction as the engine's extractor finds it, before the engine's own steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct EngineCandidate {
    pub kind: Kind,
    /// The record's time as the extractor reads it (`ts || timestamp`, or `ts` alone for a tool
    /// ask and a delegation sentence): any truthy JSON value; `null` for the caller's clock.
    pub timestamp: Value,
    /// `String(tool.mode || 'task')` for a tool ask; else the mode, lowercased.
    pub mode: String,
    /// The whole message (trimmed where the extractor trims).
    pub message: String,
    /// A tool ask's `taskId`, as it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Value>,
    /// The record's own `ts` when it is a number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub real_ts: Option<f64>,
}

/// Why there is no answer where the legacy code has none either.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// The text is not JSON (`JSON.parse` throws).
    NotJson,
    /// A `null` record at this index (reading its `type` throws).
    NullRecord(usize),
}

const WORD: &str = "[A-Za-z0-9_]";

/// `<\s*NAME\s*>([\s\S]*?)<\/\s*NAME\s*>` without case (first match: `MODE_TAG`, `MESSAGE_TAG`;
/// all: the `<task>` blocks).
fn tag_pattern(name: &str) -> String {
    let (ws, n) = (JS_SPACE_CLASS, ci_pattern(name));
    format!("<{ws}*{n}{ws}*>((?s:.)*?)</{ws}*{n}{ws}*>")
}

static MODE_TAG: LazyLock<Option<Regex>> = LazyLock::new(|| compile(&tag_pattern("mode")));
static MESSAGE_TAG: LazyLock<Option<Regex>> = LazyLock::new(|| compile(&tag_pattern("message")));
static TASK_TAG: LazyLock<Option<Regex>> = LazyLock::new(|| compile(&tag_pattern("task")));

/// `/<\s*new_task\b[\s\S]*?<\/\s*new_task\s*>/gi` (`\b`: ECMAScript's ASCII word boundary).
static NEW_TASK_BLOCK: LazyLock<Option<FancyRegex>> = LazyLock::new(|| {
    let (ws, nt) = (JS_SPACE_CLASS, ci_pattern("new_task"));
    compile_fancy(&format!("<{ws}*{nt}(?!{WORD})(?s:.)*?</{ws}*{nt}{ws}*>"))
});

/// A tag block holding a `<mode>` then a `<message>`, closed by its own name in any case:
/// `/<\s*([a-z_][\w\-]*)\b[^>]*>[\s\S]*?<\s*mode\s*>([\s\S]*?)<\/\s*mode\s*>[\s\S]*?<\s*message\s*>([\s\S]*?)<\/\s*message\s*>[\s\S]*?<\/\s*\1\s*>/gi`.
static GENERIC_BLOCK: LazyLock<Option<FancyRegex>> = LazyLock::new(|| {
    let ws = JS_SPACE_CLASS;
    let (mode, msg) = (ci_pattern("mode"), ci_pattern("message"));
    let boundary = format!("(?:(?<={WORD})(?!{WORD})|(?<!{WORD})(?={WORD}))");
    compile_fancy(&format!(
        "<{ws}*([A-Za-z_][A-Za-z0-9_\\-]*){boundary}[^>]*>(?s:.)*?\
         <{ws}*{mode}{ws}*>((?s:.)*?)</{ws}*{mode}{ws}*>(?s:.)*?\
         <{ws}*{msg}{ws}*>((?s:.)*?)</{ws}*{msg}{ws}*>(?s:.)*?</{ws}*(?i:\\1){ws}*>"
    ))
});

/// `/je (?:te passe|délègue|confie|transfère).*?(?:en|au) mode?\s+(\w+)/i` (`.`: not a line
/// terminator; `\w`: ASCII).
static DELEGATION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let ci = |s: &str| {
        s.chars()
            .map(|c| match c {
                'é' => "[éÉ]".to_owned(),
                'è' => "[èÈ]".to_owned(),
                c => ci_pattern(c.encode_utf8(&mut [0u8; 4])),
            })
            .collect::<String>()
    };
    compile(&format!(
        "{} (?:{}|{}|{}|{})[^\\n\\r\\x{{2028}}\\x{{2029}}]*?(?:{}|{}) {}(?:{})?{JS_SPACE_CLASS}+({WORD}+)",
        ci("je"),
        ci("te passe"),
        ci("délègue"),
        ci("confie"),
        ci("transfère"),
        ci("en"),
        ci("au"),
        ci("mod"),
        ci("e"),
    ))
});

/// `/([A-Za-z]+)\s*mode/i`
static MODE_WORD: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(&format!(
        "([A-Za-z]+){JS_SPACE_CLASS}*{}",
        ci_pattern("mode")
    ))
});

fn lower(s: &str) -> String {
    js_trim(s).to_lowercase()
}

/// The candidates of one `ui_messages.json` text, or why the legacy extractor throws.
pub fn engine_candidates(content: &str) -> Result<Vec<EngineCandidate>, EngineError> {
    let data = json_parse(content).ok_or(EngineError::NotJson)?;
    let records: &[Value] = match &data {
        Value::Array(a) => a,
        other => prop(other, "messages")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice),
    };
    let mut out = Vec::new();
    for (i, record) in records.iter().enumerate() {
        if record.is_null() {
            return Err(EngineError::NullRecord(i));
        }
        of_record(record, &mut out);
    }
    if out.is_empty() && !records.is_empty() {
        joined(records, &mut out);
    }
    Ok(out)
}

fn of_record(m: &Value, out: &mut Vec<EngineCandidate>) {
    let ts = prop(m, "ts");
    let real_ts = ts.and_then(Value::as_f64);
    let ts_or_timestamp = or(ts, prop(m, "timestamp"));
    let time = |v: Option<&Value>| {
        v.filter(|v| truthy(Some(v)))
            .cloned()
            .unwrap_or(Value::Null)
    };
    if prop_str(m, "type") == Some("ask") && prop_str(m, "ask") == Some("tool") {
        if let Some((mode, message, task_id)) = tool_ask(m) {
            out.push(EngineCandidate {
                kind: Kind::Tool,
                timestamp: time(ts),
                mode,
                message,
                task_id,
                real_ts,
            });
        }
    }
    let mut push = |kind, timestamp, mode, message| {
        out.push(EngineCandidate {
            kind,
            timestamp,
            mode,
            message,
            task_id: None,
            real_ts,
        })
    };
    if prop_str(m, "type") == Some("say") && prop_str(m, "say") == Some("api_req_started") {
        if let Some(request) = prop_str(m, "text")
            .and_then(json_parse)
            .and_then(|api| prop_str(&api, "request").map(str::to_owned))
        {
            for c in NEW_TASK_RESULT
                .as_ref()
                .map(|re| re.captures_iter(&request).collect::<Vec<_>>())
                .unwrap_or_default()
            {
                let mode =
                    first_capture(&MODE_WORD, js_trim(&c[1]), 1).map_or("task".into(), lower);
                let body = js_trim(&c[2]);
                if utf16_len(body) > 10 {
                    push(Kind::Api, time(ts_or_timestamp), mode, body.to_owned());
                }
            }
        }
    }
    let content = or(prop(m, "text"), prop(m, "content"));
    let Some(text) = content.filter(|c| truthy(Some(c))).and_then(Value::as_str) else {
        return;
    };
    for block in fancy_captures(&NEW_TASK_BLOCK, text) {
        let block = block.get(0).map_or("", |b| b.as_str());
        if let (Some(mode), Some(body)) = (
            first_capture(&MODE_TAG, block, 1),
            first_capture(&MESSAGE_TAG, block, 1).map(js_trim),
        ) {
            if utf16_len(body) > 5 {
                let mode = non_empty(lower(mode));
                push(Kind::Xml, time(ts_or_timestamp), mode, body.to_owned());
            }
        }
    }
    for c in fancy_captures(&GENERIC_BLOCK, text) {
        let group = |i| c.get(i).map_or("", |g| g.as_str());
        let body = js_trim(group(3));
        if lower(group(1)) != "new_task" && utf16_len(body) > 5 {
            let mode = non_empty(lower(group(2)));
            push(Kind::Plain, time(ts_or_timestamp), mode, body.to_owned());
        }
    }
    for body in tag_bodies(&TASK_TAG, text) {
        push(Kind::Plain, time(ts_or_timestamp), "task".into(), body);
    }
    if prop_str(m, "type") == Some("say") || prop_str(m, "role") == Some("assistant") {
        if let Some(mode) = first_capture(&DELEGATION, text, 1) {
            push(Kind::Plain, time(ts), mode.to_lowercase(), text.to_owned());
        }
    }
}

/// A `newTask` tool ask's `(String(mode || 'task'), String(content), taskId)`, read from the
/// record's `text` or `content` (an object, or JSON text).
fn tool_ask(m: &Value) -> Option<(String, String, Option<Value>)> {
    let text = prop(m, "text");
    let content = prop(m, "content");
    let tool = match (text, content) {
        (Some(t @ (Value::Object(_) | Value::Array(_))), _) => Some(t.clone()),
        (Some(Value::String(s)), _) => json_parse(s),
        (_, Some(c @ (Value::Object(_) | Value::Array(_)))) => Some(c.clone()),
        (_, Some(Value::String(s))) => json_parse(s),
        _ => None,
    }?;
    let body = prop(&tool, "content").filter(|c| truthy(Some(c)))?;
    if prop_str(&tool, "tool") != Some("newTask") {
        return None;
    }
    let mode = prop(&tool, "mode")
        .filter(|v| truthy(Some(v)))
        .map_or_else(|| "task".to_owned(), to_string);
    Some((mode, to_string(body), prop(&tool, "taskId").cloned()))
}

/// The trimmed bodies of `<task>`-like blocks longer than 5 UTF-16 units.
fn tag_bodies(re: &Option<Regex>, text: &str) -> Vec<String> {
    re.as_ref()
        .map(|re| {
            re.captures_iter(text)
                .filter_map(|c| c.get(1).map(|b| js_trim(b.as_str())))
                .filter(|b| utf16_len(b) > 5)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn non_empty(mode: String) -> String {
    if mode.is_empty() {
        "task".to_owned()
    } else {
        mode
    }
}

/// With nothing found record by record: the blocks of every record's text, joined.
fn joined(records: &[Value], out: &mut Vec<EngineCandidate>) {
    let all = records
        .iter()
        .map(|m| {
            prop_str(m, "text")
                .or_else(|| prop_str(m, "content"))
                .unwrap_or("")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut push = |mode: String, message: String| {
        out.push(EngineCandidate {
            kind: Kind::Plain,
            timestamp: Value::Null,
            mode,
            message,
            task_id: None,
            real_ts: None,
        })
    };
    for block in fancy_captures(&NEW_TASK_BLOCK, &all) {
        let block = block.get(0).map_or("", |b| b.as_str());
        let body = first_capture(&MESSAGE_TAG, block, 1).map_or("", js_trim);
        if utf16_len(body) > 5 {
            let mode = non_empty(first_capture(&MODE_TAG, block, 1).map_or(String::new(), lower));
            push(mode, body.to_owned());
        }
    }
    for body in tag_bodies(&TASK_TAG, &all) {
        push("task".into(), body);
    }
}

/// Whether every pattern of this module compiles (checked by a unit test).
#[cfg(test)]
pub(crate) fn patterns_compile() -> bool {
    MODE_TAG.is_some()
        && MESSAGE_TAG.is_some()
        && TASK_TAG.is_some()
        && NEW_TASK_BLOCK.is_some()
        && GENERIC_BLOCK.is_some()
        && DELEGATION.is_some()
        && MODE_WORD.is_some()
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
