//! The TaskHistoryStore rules (v3.49+) as pure functions: ordering, upsert merging, the
//! `_index.json` shape and which legacy entries a migration writes. Nothing here touches disk.

use crate::js::{number, str_field};
use serde_json::{json, Map, Value};

/// `getAll()`: items by `ts`, newest first (stable for equal `ts`).
pub fn sort_history_items(items: &[Value]) -> Vec<Value> {
    let mut out = items.to_vec();
    out.sort_by(|a, b| {
        let ta = number(a.get("ts")).unwrap_or(0.0);
        let tb = number(b.get("ts")).unwrap_or(0.0);
        tb.partial_cmp(&ta).unwrap_or(std::cmp::Ordering::Equal)
    });
    out
}

/// `upsert(item)`: `{...existing, ...item}`. Existing keys keep their place, new keys go at the
/// end. A `null` in `item` stands for the extension's `undefined` and removes the key.
pub fn upsert_history_item(existing: Option<&Value>, item: &Value) -> Value {
    let mut merged: Map<String, Value> = existing
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(fields) = item.as_object() {
        for (k, v) in fields {
            if v.is_null() {
                merged.shift_remove(k);
            } else {
                merged.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(merged)
}

/// The `_index.json` document for `entries` at `updated_at` (ms).
pub fn history_index(entries: &[Value], updated_at: f64) -> Value {
    json!({
        "version": 1,
        "updatedAt": crate::js::num_value(updated_at),
        "entries": sort_history_items(entries),
    })
}

/// Entries of an `_index.json` document: `None` unless `version === 1` and `entries` is an array;
/// entries without an `id` are skipped.
pub fn read_history_index(doc: &Value) -> Option<Vec<Value>> {
    if number(doc.get("version")) != Some(1.0) {
        return None;
    }
    let entries = doc.get("entries")?.as_array()?;
    Some(
        entries
            .iter()
            .filter(|e| str_field(e, "id").is_some_and(|id| !id.is_empty()))
            .cloned()
            .collect(),
    )
}

/// The legacy globalState entries a migration writes as `history_item.json`: those whose task
/// directory exists and has no `history_item.json` yet.
pub fn migration_plan(
    legacy: &[Value],
    task_dir_exists: impl Fn(&str) -> bool,
    has_history_item: impl Fn(&str) -> bool,
) -> Vec<Value> {
    legacy
        .iter()
        .filter(|e| {
            str_field(e, "id")
                .is_some_and(|id| !id.is_empty() && task_dir_exists(id) && !has_history_item(id))
        })
        .cloned()
        .collect()
}
