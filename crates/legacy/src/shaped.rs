//! The project's hierarchy over legacy-shaped skeletons (the compat layer's `fixed` mode).
//!
//! A legacy `ConversationSkeleton` has no stored links, child calls, totals or file facts: each
//! task comes as the few fields the legacy server keeps (`taskId`, `parentTaskId`,
//! `truncatedInstruction`, dates, workspace, `childTaskInstructionPrefixes`, and the instructions
//! its extractors found). [`to_skeleton`] builds a core skeleton from them, leniently (anything
//! missing or of the wrong type is left empty), and [`reconstruct_shaped`] runs the core
//! reconstruction and answers a link per task with the metrics.

use roo_formats::extract::{ChildSource, NewTaskInstruction};
use roo_formats::text::normalize_instruction;
use roo_state::hierarchy::{reconstruct_hierarchy, HierarchyMetrics, HierarchyOptions};
use roo_state::skeleton::{SkeletonMetadata, StoredLinks};
use roo_state::ConversationSkeleton;
use serde::Serialize;
use serde_json::Value;

/// Legacy skeletons carry instructions cut near 200 characters on both sides (the child's
/// `truncatedInstruction`, the parent's extracted messages), at different points. Both sides are
/// compared on the first this-many characters of their normalised text, so that two cuts of the
/// same instruction meet.
pub const COMPARED_CHARS: usize = 160;

/// The text both sides of a legacy link are compared on.
pub fn compared(text: &str) -> String {
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

/// A child call seen in the parent's messages, as the hierarchy reads one.
fn call(message: &str, ts: Option<i64>) -> NewTaskInstruction {
    NewTaskInstruction {
        ts,
        mode: None,
        message: compared(message),
        todos: None,
        sources: vec![ChildSource::UiAsk],
        child_task_id: None,
        completed_ts: None,
    }
}

/// One legacy-shaped task → a core skeleton; `None` without a `taskId`. The child calls are the
/// instructions read from its messages, else its stored prefixes.
pub fn to_skeleton(v: &Value) -> Option<ConversationSkeleton> {
    let task_id = text(v, "taskId")?;
    let created = text(v, "createdAt").unwrap_or_default();
    let prefixes: Vec<String> = v
        .get("childTaskInstructionPrefixes")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut calls: Vec<NewTaskInstruction> = v
        .get("instructions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|i| Some(call(i.get("message")?.as_str()?, millis(i, "timestamp"))))
                .collect()
        })
        .unwrap_or_default();
    if calls.is_empty() {
        calls = prefixes.iter().map(|p| call(p, None)).collect();
    }
    let truncated = text(v, "truncatedInstruction");
    Some(ConversationSkeleton {
        task_id,
        metadata: SkeletonMetadata {
            last_activity: text(v, "lastActivity").unwrap_or_else(|| created.clone()),
            created_at: created,
            workspace: text(v, "workspace"),
            data_source: text(v, "dataSource").unwrap_or_default(),
            source: "roo".into(),
            ..SkeletonMetadata::default()
        },
        child_task_instruction_prefixes: prefixes,
        instruction: truncated.as_deref().map(compared),
        truncated_instruction: truncated,
        child_tasks: calls,
        stored_links: StoredLinks {
            metadata_parent: text(v, "parentTaskId"),
            ..StoredLinks::default()
        },
        created_at_ms: millis(v, "createdAtMs"),
        last_activity_ms: millis(v, "lastActivityMs"),
        ..ConversationSkeleton::default()
    })
}

/// A task's link as the compat layer hands it back.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShapedLink {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_task_id: Option<String>,
}

/// The links of a set of legacy-shaped tasks.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShapedLinks {
    pub links: Vec<ShapedLink>,
    pub metrics: HierarchyMetrics,
    /// Input positions that had no `taskId` (left out).
    pub skipped: Vec<usize>,
}

/// The core reconstruction over legacy-shaped tasks (see the module).
pub fn reconstruct_shaped(tasks: &[Value], workspace_filter: Option<String>) -> ShapedLinks {
    let mut skipped = Vec::new();
    let mut skeletons = Vec::with_capacity(tasks.len());
    for (i, t) in tasks.iter().enumerate() {
        match to_skeleton(t) {
            Some(s) => skeletons.push(s),
            None => skipped.push(i),
        }
    }
    let opts = HierarchyOptions {
        workspace_filter,
        use_stored_links: true,
    };
    let (linked, metrics) = reconstruct_hierarchy(skeletons, &opts);
    let links = linked
        .into_iter()
        .map(|s| {
            let ev = s.parent_evidence;
            ShapedLink {
                task_id: s.task_id,
                parent_task_id: s.parent_task_id,
                source: ev.as_ref().map(|e| e.source.clone()),
                confidence: ev.as_ref().map(|e| e.confidence),
                match_kind: ev.and_then(|e| e.match_kind),
                root_task_id: s.root_task_id,
            }
        })
        .collect();
    ShapedLinks {
        links,
        metrics,
        skipped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn a_child_is_linked_by_its_instruction_or_its_stored_parent() {
        let tasks = json!([
            { "taskId": "p", "createdAt": "2026-01-01T10:00:00.000Z", "createdAtMs": 1_767_261_600_000_i64,
              "truncatedInstruction": "Plan the release of the notes app",
              "instructions": [{ "message": "Write the changelog for version 2 of the notes app", "timestamp": 1_767_261_660_000_i64 }] },
            { "taskId": "c", "createdAt": "2026-01-01T10:01:05.000Z", "createdAtMs": 1_767_261_665_000_i64,
              "truncatedInstruction": "Write the changelog for version 2 of the notes app" },
            { "taskId": "s", "parentTaskId": "p", "truncatedInstruction": "Anything else" },
            { "no": "id" }
        ]);
        let out = reconstruct_shaped(tasks.as_array().map(Vec::as_slice).unwrap_or(&[]), None);
        let parent = |id: &str| {
            out.links
                .iter()
                .find(|l| l.task_id == id)
                .and_then(|l| l.parent_task_id.clone())
        };
        assert_eq!(parent("c").as_deref(), Some("p"));
        assert_eq!(parent("s").as_deref(), Some("p"));
        assert_eq!(parent("p"), None);
        assert_eq!(out.skipped, vec![3]);
    }
}
