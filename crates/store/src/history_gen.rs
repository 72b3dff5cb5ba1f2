//! Building the extension's own `HistoryItem` for a task that has none, from its files, the way
//! the extension builds it (extension-formats §1.8), and writing it in the extension's exact byte
//! format (§1.4: `JSON.stringify`, compact, keys in the order of a freshly built item).

use roo_formats::read::names;
use roo_formats::ui::{ApiReqInfo, Ask, MessageKind, Say};
use roo_formats::HistoryItem;
use roo_state::ConversationSkeleton;
use std::path::Path;

/// What one pass over `ui_messages.json` gives for a history item.
#[derive(Debug, Default)]
struct UiFacts {
    messages: usize,
    /// `messages[0].text`, trimmed.
    first_text: Option<String>,
    /// `ts` of the last message that is not `ask: resume_task | resume_completed_task`.
    last_ts: Option<i64>,
    cache_writes: Option<f64>,
    cache_reads: Option<f64>,
}

fn ui_facts(task_dir: &Path) -> UiFacts {
    let mut f = UiFacts::default();
    let path = [names::UI_MESSAGES, names::CLAUDE_MESSAGES]
        .iter()
        .map(|n| task_dir.join(n))
        .find(|p| p.is_file());
    let Some(path) = path else {
        return f;
    };
    roo_formats::for_each_ui_message(&path, |i, msg| {
        f.messages += 1;
        if i == 0 {
            f.first_text = msg.text.as_deref().map(|t| t.trim().to_owned());
        }
        let resume = matches!(
            msg.kind,
            MessageKind::Ask(Ask::ResumeTask | Ask::ResumeCompletedTask)
        );
        if !resume {
            if let Some(ts) = msg.ts {
                f.last_ts = Some(ts);
            }
        }
        if i > 0 && msg.is_say(&Say::ApiReqStarted) {
            if let Some(info) = msg.text.as_deref().and_then(ApiReqInfo::parse) {
                if let Some(w) = info.cache_writes {
                    *f.cache_writes.get_or_insert(0.0) += w;
                }
                if let Some(r) = info.cache_reads {
                    *f.cache_reads.get_or_insert(0.0) += r;
                }
            }
        }
    });
    f
}

/// The history item the extension would have written for this task.
///
/// - `task`: the first UI message's text, trimmed; without UI messages, the instruction found in
///   the API history; else `Task #<n> (No messages)`.
/// - `ts`: the last UI message that is not a resume ask; else the skeleton's last activity.
/// - tokens and cost: the skeleton's API totals; `cacheWrites`/`cacheReads` only when a request
///   carried them.
/// - `size`: bytes under the task folder (0 when there are no messages).
/// - `parentTaskId`/`rootTaskId`: the hierarchy's result; `number`: depth + 1.
/// - `status`: `completed` when the task finished, else left out; `childIds` when it has children.
pub fn history_item_for(
    skeleton: &ConversationSkeleton,
    task_dir: &Path,
    depth: u32,
    child_ids: &[String],
) -> HistoryItem {
    let facts = ui_facts(task_dir);
    let number = f64::from(depth + 1);
    let task = facts
        .first_text
        .clone()
        .filter(|t| !t.is_empty())
        .or_else(|| {
            (facts.messages == 0)
                .then(|| skeleton.instruction.clone())
                .flatten()
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
        })
        .unwrap_or_else(|| {
            if facts.messages == 0 {
                format!("Task #{} (No messages)", depth + 1)
            } else {
                format!("Task #{} (Incomplete)", depth + 1)
            }
        });
    let ts = facts
        .last_ts
        .or(skeleton.last_activity_ms)
        .unwrap_or_else(roo_js::now_ms);
    let size = if facts.messages == 0 && skeleton.files.api_messages == 0 {
        0.0
    } else {
        crate::fsutil::tree_size(task_dir).1 as f64
    };
    let totals = &skeleton.api_totals;
    HistoryItem {
        id: skeleton.task_id.clone(),
        root_task_id: skeleton
            .parent_task_id
            .as_ref()
            .and(skeleton.root_task_id.clone()),
        parent_task_id: skeleton.parent_task_id.clone(),
        number: Some(number),
        ts: Some(ts),
        task: Some(task),
        tokens_in: Some(totals.tokens_in),
        tokens_out: Some(totals.tokens_out),
        cache_writes: facts.cache_writes,
        cache_reads: facts.cache_reads,
        total_cost: Some(totals.total_cost),
        size: Some(size),
        workspace: skeleton.metadata.workspace.clone(),
        mode: skeleton.metadata.mode.clone(),
        api_config_name: None,
        status: skeleton.is_completed.then(|| "completed".to_owned()),
        child_ids: (!child_ids.is_empty()).then(|| child_ids.to_vec()),
        ..HistoryItem::default()
    }
}

/// The bytes the extension would write for `value` (`JSON.stringify`).
pub fn extension_bytes<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    roo_js::to_json_vec(value)
}

/// `tasks/_index.json` content: `{"version":1,"updatedAt":<ms>,"entries":[…]}`, entries sorted by
/// `ts` descending (ties by id, for stable output).
pub fn index_bytes(
    mut entries: Vec<(i64, String, serde_json::Value)>,
    updated_at: i64,
) -> serde_json::Result<Vec<u8>> {
    entries.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut map = serde_json::Map::new();
    map.insert("version".into(), serde_json::Value::from(1));
    map.insert("updatedAt".into(), serde_json::Value::from(updated_at));
    map.insert(
        "entries".into(),
        serde_json::Value::Array(entries.into_iter().map(|e| e.2).collect()),
    );
    roo_js::to_json_vec(&serde_json::Value::Object(map))
}
