//! Hierarchy reconstruction for legacy-shaped skeletons (the `compat` layer's `fixed` mode).
//!
//! The legacy `ConversationSkeleton` has no stored links, child calls, totals or file facts. This
//! entry takes a compact description of each task as one JSON string (no per-value conversion at
//! the boundary, so there is no limit on the number of tasks), fills what is missing leniently, runs
//! the core reconstruction and answers one JSON string with a link per task and the metrics.

use crate::error::{CodedError, ErrorCode};
use crate::job::Job;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use roo_formats::text::normalize_instruction;
use roo_state::hierarchy::{reconstruct_hierarchy, HierarchyMetrics, HierarchyOptions};
use roo_state::ConversationSkeleton;
use serde_json::{json, Value};

/// Legacy skeletons carry instructions cut near 200 characters on both sides (the child's
/// `truncatedInstruction`, the parent's extracted messages), at different points. Both sides are
/// compared on the first this-many characters of their normalised text, so that two cuts of the
/// same instruction meet.
const COMPARED_CHARS: usize = 160;

fn compared(text: &str) -> String {
    normalize_instruction(text)
        .chars()
        .take(COMPARED_CHARS)
        .collect::<String>()
        .trim_end()
        .to_owned()
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn millis(v: &Value, key: &str) -> Option<i64> {
    v.get(key)
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite() && f.abs() < 9.0e15)
        .map(|f| f.trunc() as i64)
}

/// One compact legacy task → a core skeleton. Anything missing or of the wrong type is left
/// empty; an entry without a `taskId` is skipped (its position is reported as skipped).
fn to_skeleton(v: &Value) -> Option<ConversationSkeleton> {
    let task_id = text(v, "taskId")?;
    let created = text(v, "createdAt").unwrap_or_default();
    let calls: Vec<Value> = v
        .get("instructions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|i| {
                    let message = compared(i.get("message").and_then(Value::as_str)?);
                    let mut call = json!({ "message": message, "sources": ["ui_ask"] });
                    if let Some(ts) = millis(i, "timestamp") {
                        call["ts"] = json!(ts);
                    }
                    Some(call)
                })
                .collect()
        })
        .unwrap_or_default();
    let prefixes: Vec<Value> = v
        .get("childTaskInstructionPrefixes")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter(|x| x.is_string()).cloned().collect())
        .unwrap_or_default();
    // Without calls read from the messages, the stored prefixes are the only child instructions.
    let calls = if calls.is_empty() {
        prefixes
            .iter()
            .filter_map(Value::as_str)
            .map(|p| json!({ "message": compared(p), "sources": ["ui_ask"] }))
            .collect()
    } else {
        calls
    };
    let mut stored = json!({});
    if let Some(p) = text(v, "parentTaskId") {
        stored["metadataParent"] = json!(p);
    }
    let mut meta = json!({
        "createdAt": created,
        "lastActivity": text(v, "lastActivity").unwrap_or_else(|| created.clone()),
        "messageCount": 0,
        "actionCount": 0,
        "totalSize": 0,
        "dataSource": text(v, "dataSource").unwrap_or_default(),
        "source": "roo",
        "datesFrom": "none",
    });
    if let Some(w) = text(v, "workspace") {
        meta["workspace"] = json!(w);
    }
    let mut s = json!({
        "taskId": task_id,
        "metadata": meta,
        "childTaskInstructionPrefixes": prefixes,
        "isCompleted": false,
        "childTasks": calls,
        "storedLinks": stored,
        "apiTotals": { "requests": 0, "tokensIn": 0.0, "tokensOut": 0.0, "cacheWrites": 0.0, "cacheReads": 0.0, "totalCost": 0.0 },
        "files": { "uiMessages": 0, "apiHistory": false, "apiMessages": 0, "historyItem": false, "taskMetadata": false },
        "diagnostics": [],
    });
    if let Some(i) = text(v, "truncatedInstruction") {
        s["instruction"] = json!(compared(&i));
        s["truncatedInstruction"] = json!(i);
    }
    if let Some(ms) = millis(v, "createdAtMs") {
        s["createdAtMs"] = json!(ms);
    }
    if let Some(ms) = millis(v, "lastActivityMs") {
        s["lastActivityMs"] = json!(ms);
    }
    serde_json::from_value(s).ok()
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct LinkOut {
    task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    match_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    root_task_id: Option<String>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Out {
    links: Vec<LinkOut>,
    metrics: HierarchyMetrics,
    /// Input positions that had no `taskId` (left out).
    skipped: Vec<usize>,
}

/// The core reconstruction over legacy-shaped tasks. `tasksJson` is a JSON array of
/// `{ taskId, parentTaskId?, truncatedInstruction?, createdAt?, createdAtMs?, lastActivity?,
/// lastActivityMs?, workspace?, dataSource?, childTaskInstructionPrefixes?,
/// instructions?: [{ message, timestamp? }] }`; the answer is a JSON string
/// `{ links: [{ taskId, parentTaskId?, source?, confidence?, matchKind?, rootTaskId? }], metrics, skipped }`.
#[napi(ts_return_type = "Promise<string>")]
pub fn compat_reconstruct_legacy(
    tasks_json: String,
    workspace_filter: Option<String>,
) -> AsyncTask<Job<String>> {
    Job::spawn(None, move |_| {
        let tasks: Vec<Value> = serde_json::from_str(&tasks_json).map_err(|e| {
            CodedError::new(
                ErrorCode::InvalidArgument,
                format!("the tasks are not a JSON array: {e}"),
            )
        })?;
        let mut skipped = Vec::new();
        let mut skeletons: Vec<ConversationSkeleton> = Vec::with_capacity(tasks.len());
        for (i, t) in tasks.iter().enumerate() {
            match to_skeleton(t) {
                Some(s) => skeletons.push(s),
                None => skipped.push(i),
            }
        }
        drop(tasks);
        let opts = HierarchyOptions {
            workspace_filter,
            use_stored_links: true,
        };
        let (linked, metrics) = reconstruct_hierarchy(skeletons, &opts);
        let links = linked
            .into_iter()
            .map(|s| {
                let ev = s.parent_evidence;
                LinkOut {
                    task_id: s.task_id,
                    parent_task_id: s.parent_task_id,
                    source: ev.as_ref().map(|e| e.source.clone()),
                    confidence: ev.as_ref().map(|e| e.confidence),
                    match_kind: ev.and_then(|e| e.match_kind),
                    root_task_id: s.root_task_id,
                }
            })
            .collect();
        serde_json::to_string(&Out {
            links,
            metrics,
            skipped,
        })
        .map_err(|e| CodedError::new(ErrorCode::InvalidArgument, e.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_shape_is_accepted_and_missing_fields_filled() {
        let v = json!({ "taskId": "a", "truncatedInstruction": "do x", "childTaskInstructionPrefixes": ["do y", 3] });
        let s = to_skeleton(&v).map(|s| (s.child_tasks.len(), s.instruction));
        assert_eq!(s, Some((1, Some("do x".to_owned()))));
        let long = "Word ".repeat(100);
        let a =
            to_skeleton(&json!({ "taskId": "c", "truncatedInstruction": long[..230].to_owned() }));
        let b = compared(&long[..190]);
        assert_eq!(a.and_then(|s| s.instruction), Some(b.clone()));
        assert_eq!(b.chars().count(), COMPARED_CHARS - 1);
        assert!(to_skeleton(&json!({ "parentTaskId": "p" })).is_none());
        assert!(to_skeleton(&json!(["not", "an", "object"])).is_none());
    }
}
