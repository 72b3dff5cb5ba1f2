//! XML exports of legacy-shaped skeletons (the `compat` layer's `XmlExporterService`).
//!
//! The legacy service writes XML from skeleton objects it already holds rather than from task
//! folders. These entries take those skeletons as JSON strings, convert them leniently to core
//! skeletons (missing counts are 0, missing dates empty, unknown sequence items skipped) and run
//! the core XML writers, so the output is valid against `schemas/*.xsd`.

use crate::error::{CodedError, ErrorCode};
use napi_derive::napi;
use roo_export::tree::{project_conversations, Conversation, ProjectFilter};
use roo_export::xml::{write_conversation, write_project, write_task, ContentOptions};
use roo_export::SkeletonSource;
use roo_formats::text::parse_iso_ms;
use roo_state::{AnalyzeOptions, ConversationSkeleton};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// Preview length of message content when `includeContent` is false (UTF-16 units).
const PREVIEW_LEN: usize = 100;

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn count_of(v: &Value, key: &str) -> u64 {
    v.get(key)
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite() && *f >= 0.0)
        .map_or(0, |f| f.trunc() as u64)
}

/// A timestamp field as ISO text (numbers are epoch milliseconds).
fn time_of(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|f| f.is_finite() && f.abs() < 9.0e15)
            .map(|f| roo_js::iso_from_ms(f.trunc() as i64))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

fn sequence_item(item: &Value) -> Option<Value> {
    if !item.is_object() {
        return None;
    }
    if let Some(role) = str_of(item, "role") {
        return Some(json!({
            "role": role,
            "content": item.get("content").and_then(Value::as_str).unwrap_or_default(),
            "timestamp": time_of(item, "timestamp"),
            "isTruncated": item.get("isTruncated").and_then(Value::as_bool).unwrap_or(false),
        }));
    }
    let name = str_of(item, "name")?;
    let mut a = json!({
        "type": str_of(item, "type").unwrap_or_else(|| "tool".to_owned()),
        "name": name,
        "parameters": item.get("parameters").cloned().unwrap_or_else(|| json!({})),
        "status": str_of(item, "status").unwrap_or_else(|| "in_progress".to_owned()),
        "timestamp": time_of(item, "timestamp"),
    });
    if let Some(p) = str_of(item, "file_path").or_else(|| str_of(item, "filePath")) {
        a["file_path"] = json!(p);
    }
    Some(a)
}

/// A legacy `ConversationSkeleton` (as the legacy server's objects are) → a core skeleton.
/// `None` when it has no `taskId`.
pub fn legacy_skeleton(v: &Value) -> Option<ConversationSkeleton> {
    let task_id = str_of(v, "taskId").filter(|s| !s.is_empty())?;
    let empty = Value::Object(Map::new());
    let m = v
        .get("metadata")
        .filter(|m| m.is_object())
        .unwrap_or(&empty);
    let created = time_of(m, "createdAt");
    let last = time_of(m, "lastActivity");
    let mut meta = json!({
        "createdAt": created,
        "lastActivity": last,
        "messageCount": count_of(m, "messageCount").min(u64::from(u32::MAX)),
        "actionCount": count_of(m, "actionCount").min(u64::from(u32::MAX)),
        "totalSize": count_of(m, "totalSize"),
        "dataSource": str_of(m, "dataSource").unwrap_or_default(),
        "source": str_of(m, "source").unwrap_or_else(|| "roo".to_owned()),
        "datesFrom": "none",
    });
    for key in ["title", "mode", "workspace"] {
        if let Some(s) = str_of(m, key) {
            meta[key] = json!(s);
        }
    }
    let prefixes: Vec<Value> = v
        .get("childTaskInstructionPrefixes")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter(|x| x.is_string()).cloned().collect())
        .unwrap_or_default();
    let mut s = json!({
        "taskId": task_id,
        "metadata": meta,
        "childTaskInstructionPrefixes": prefixes,
        "isCompleted": v.get("isCompleted").and_then(Value::as_bool).unwrap_or(false),
        "childTasks": [],
        "storedLinks": {},
        "apiTotals": { "requests": 0, "tokensIn": 0.0, "tokensOut": 0.0, "cacheWrites": 0.0, "cacheReads": 0.0, "totalCost": 0.0 },
        "files": { "uiMessages": 0, "apiHistory": false, "apiMessages": 0, "historyItem": false, "taskMetadata": false },
        "diagnostics": [],
    });
    if let Some(p) = str_of(v, "parentTaskId").filter(|p| !p.is_empty()) {
        s["parentTaskId"] = json!(p);
    }
    if let Some(t) = str_of(v, "truncatedInstruction") {
        s["truncatedInstruction"] = json!(t);
    }
    if let Some(items) = v.get("sequence").and_then(Value::as_array) {
        s["sequence"] = Value::Array(items.iter().filter_map(sequence_item).collect());
    }
    if let Some(ms) = parse_iso_ms(&created) {
        s["createdAtMs"] = json!(ms);
    }
    if let Some(ms) = parse_iso_ms(&last) {
        s["lastActivityMs"] = json!(ms);
    }
    serde_json::from_value(s).ok()
}

fn parse(json_text: &str, what: &str) -> napi::Result<Value> {
    serde_json::from_str(json_text).map_err(|e| {
        CodedError::new(
            ErrorCode::InvalidArgument,
            format!("{what} is not JSON: {e}"),
        )
        .into_sync()
    })
}

fn list(v: &Value) -> Vec<ConversationSkeleton> {
    v.as_array()
        .map(|a| a.iter().filter_map(legacy_skeleton).collect())
        .unwrap_or_default()
}

fn xml_error(e: impl std::fmt::Display) -> napi::Error {
    CodedError::new(ErrorCode::XmlGeneration, e.to_string()).into_sync()
}

fn utf8(bytes: Vec<u8>) -> napi::Result<String> {
    String::from_utf8(bytes).map_err(xml_error)
}

#[napi(object)]
#[derive(Default)]
pub struct CompatXmlOptions {
    /// Indented output (default true).
    pub pretty_print: Option<bool>,
    /// Whole message content (default false: the first 100 characters and `...`).
    pub include_content: Option<bool>,
    /// Levels of a conversation (the root is level 1); none: all.
    pub max_depth: Option<u32>,
    /// Project: keep conversations active on or after this ISO date.
    pub start_date: Option<String>,
    /// Project: keep conversations started on or before this ISO date.
    pub end_date: Option<String>,
}

impl From<&CompatXmlOptions> for ContentOptions {
    /// The legacy service's content: a preview unless `includeContent`, the seed schemas.
    fn from(o: &CompatXmlOptions) -> Self {
        ContentOptions {
            include_content: o.include_content.unwrap_or(false),
            preview_len: PREVIEW_LEN,
            max_content_len: 0,
            profile: roo_export::xml::SchemaProfile::Seed,
        }
    }
}

impl TryFrom<&CompatXmlOptions> for ProjectFilter {
    type Error = napi::Error;

    /// The project's date range, each date checked (an empty one is none).
    fn try_from(o: &CompatXmlOptions) -> napi::Result<Self> {
        let date = |d: Option<&String>| -> napi::Result<Option<i64>> {
            match d.filter(|d| !d.is_empty()) {
                None => Ok(None),
                Some(d) => parse_iso_ms(d).map(Some).ok_or_else(|| {
                    CodedError::new(
                        ErrorCode::InvalidArgument,
                        format!("{d} is not an ISO date"),
                    )
                    .into_sync()
                }),
            }
        };
        Ok(ProjectFilter {
            start_ms: date(o.start_date.as_ref())?,
            end_ms: date(o.end_date.as_ref())?,
            mode: None,
        })
    }
}

/// Indented output unless `prettyPrint` is false.
fn pretty(o: &CompatXmlOptions) -> bool {
    o.pretty_print.unwrap_or(true)
}

/// `<task>` XML (schemas/task.xsd) of one legacy-shaped skeleton given as JSON text.
#[napi]
pub fn compat_task_xml(
    skeleton_json: String,
    options: Option<CompatXmlOptions>,
) -> napi::Result<String> {
    let options = options.unwrap_or_default();
    let v = parse(&skeleton_json, "the skeleton")?;
    let s = legacy_skeleton(&v).ok_or_else(|| {
        CodedError::new(ErrorCode::InvalidArgument, "the skeleton has no taskId").into_sync()
    })?;
    let (bytes, _) = write_task(
        Vec::new(),
        &s,
        s.parent_task_id.as_deref(),
        pretty(&options),
        &ContentOptions::from(&options),
    )
    .map_err(xml_error)?;
    utf8(bytes)
}

/// Skeletons held in memory, for the conversation writer.
struct Held {
    by_id: HashMap<String, ConversationSkeleton>,
}

impl SkeletonSource for Held {
    fn headers(&self, _cancel: &AtomicBool) -> roo_export::Result<Vec<ConversationSkeleton>> {
        Ok(self.by_id.values().cloned().collect())
    }

    fn full(
        &self,
        task_id: &str,
        _opts: &AnalyzeOptions,
    ) -> roo_export::Result<ConversationSkeleton> {
        self.by_id.get(task_id).cloned().ok_or_else(|| {
            roo_export::ExportError::InvalidArgument(format!("no skeleton for {task_id}"))
        })
    }

    fn task_dir(&self, task_id: &str) -> roo_export::Result<PathBuf> {
        Err(roo_export::ExportError::InvalidArgument(format!(
            "{task_id} was given in memory and has no folder"
        )))
    }

    fn stores(&self) -> Vec<PathBuf> {
        Vec::new()
    }
}

/// `<conversation>` XML (schemas/conversation.xsd): the root and the given children, linked by
/// their `parentTaskId`.
#[napi]
pub fn compat_conversation_xml(
    root_json: String,
    children_json: String,
    options: Option<CompatXmlOptions>,
) -> napi::Result<String> {
    let root = legacy_skeleton(&parse(&root_json, "the root skeleton")?).ok_or_else(|| {
        CodedError::new(
            ErrorCode::InvalidArgument,
            "the root skeleton has no taskId",
        )
        .into_sync()
    })?;
    let root_id = root.task_id.clone();
    let mut headers = vec![root];
    headers.extend(
        list(&parse(&children_json, "the children")?)
            .into_iter()
            .filter(|c| c.task_id != root_id),
    );
    let options = options.unwrap_or_default();
    let levels = options.max_depth.map(|d| d.max(1));
    let conv =
        Conversation::new(&headers, &root_id, levels, "(given skeletons)").map_err(xml_error)?;
    let held = Held {
        by_id: headers
            .iter()
            .map(|s| (s.task_id.clone(), s.clone()))
            .collect(),
    };
    let (bytes, _) = write_conversation(
        Vec::new(),
        &held,
        &conv,
        pretty(&options),
        &ContentOptions::from(&options),
        &AtomicBool::new(false),
    )
    .map_err(xml_error)?;
    utf8(bytes)
}

/// `<projectExport>` XML (schemas/project.xsd) of the given skeletons of one workspace.
#[napi]
pub fn compat_project_xml(
    skeletons_json: String,
    project_path: String,
    options: Option<CompatXmlOptions>,
) -> napi::Result<String> {
    let headers = list(&parse(&skeletons_json, "the skeletons")?);
    let options = options.unwrap_or_default();
    let filter = ProjectFilter::try_from(&options)?;
    let conversations = project_conversations(&headers, &project_path, &filter);
    let (bytes, _) = write_project(
        Vec::new(),
        &project_path,
        &conversations,
        pretty(&options),
        roo_export::xml::SchemaProfile::Seed,
    )
    .map_err(xml_error)?;
    utf8(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_skeleton_fills_what_is_missing() {
        let v = json!({
            "taskId": "t1",
            "metadata": { "createdAt": "2025-01-01T00:00:00.000Z", "messageCount": "x" },
            "sequence": [
                { "role": "user", "content": "hi", "timestamp": "2025-01-01T00:00:00.000Z" },
                { "type": "tool", "name": "read_file", "status": "success", "timestamp": 1735689600000i64 },
                42
            ]
        });
        let s = legacy_skeleton(&v);
        assert_eq!(s.as_ref().map(|s| s.metadata.message_count), Some(0));
        assert_eq!(
            s.as_ref().and_then(|s| s.sequence.as_ref()).map(Vec::len),
            Some(2)
        );
        assert_eq!(s.and_then(|s| s.created_at_ms), Some(1_735_689_600_000));
        assert!(legacy_skeleton(&json!({ "metadata": {} })).is_none());
    }
}
