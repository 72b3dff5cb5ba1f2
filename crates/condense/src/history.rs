//! Operations on the API history (`api_conversation_history.json` messages as JSON objects):
//! effective history, truncation, tag cleanup, summaries, merging, and the condensing helpers.
//! Tags are appended at the end of a message object, as the extension's spreads do.

use crate::era::{EffectiveHistory, Era};
use crate::js::{
    content_blocks, is_type, now_ms, num_value, number, str_field, text_block, with_key,
};
use roo_js::{string_of, stringify_pretty, truthy};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Text of the tool result added for tool calls left unanswered before condensing.
pub const DEFERRED_TOOL_RESULT: &str = "Context condensation triggered. Tool execution deferred.";
/// Text that replaces images for models that do not take them.
pub const IMAGE_PLACEHOLDER: &str = "[Referenced image in conversation]";

fn is_summary(m: &Value) -> bool {
    truthy(m.get("isSummary"))
}

fn is_marker(m: &Value) -> bool {
    truthy(m.get("isTruncationMarker"))
}

fn role(m: &Value) -> Option<&str> {
    str_field(m, "role")
}

/// `getMessagesSinceLastSummary(messages)`: from the last summary (inclusive), or everything.
/// From v3.19.1 to v3.42 the first message was put in front of a summary that is not user-role.
pub fn get_messages_since_last_summary(messages: &[Value], era: Era) -> Vec<Value> {
    let Some(idx) = messages.iter().rposition(is_summary) else {
        return messages.to_vec();
    };
    let since = &messages[idx..];
    if era.first_message_before_summary() && idx > 0 && role(&messages[idx]) != Some("user") {
        let mut out = Vec::with_capacity(since.len() + 1);
        out.push(messages[0].clone());
        out.extend_from_slice(since);
        return out;
    }
    since.to_vec()
}

fn ids_of<'a>(messages: impl Iterator<Item = &'a Value>, flag: &str, key: &str) -> HashSet<String> {
    messages
        .filter(|m| truthy(m.get(flag)))
        .filter_map(|m| str_field(m, key).filter(|s| !s.is_empty()))
        .map(str::to_owned)
        .collect()
}

fn parent_in(m: &Value, key: &str, ids: &HashSet<String>) -> bool {
    str_field(m, key).is_some_and(|p| ids.contains(p))
}

/// `getEffectiveApiHistory(messages)`: what the model is sent.
pub fn get_effective_api_history(messages: &[Value], era: Era) -> Vec<Value> {
    match era.effective_history() {
        EffectiveHistory::None => messages.to_vec(),
        EffectiveHistory::TagsOnly => by_tags(messages),
        EffectiveHistory::FromLastSummary => match messages.iter().rposition(is_summary) {
            None => by_tags(messages),
            Some(idx) => {
                let rest = &messages[idx..];
                let tool_ids: HashSet<&str> = rest
                    .iter()
                    .filter(|m| role(m) == Some("assistant"))
                    .filter_map(|m| m.get("content").and_then(Value::as_array))
                    .flatten()
                    .filter(|b| is_type(b, "tool_use"))
                    .filter_map(|b| str_field(b, "id"))
                    .collect();
                let mut kept = Vec::with_capacity(rest.len());
                for m in rest {
                    match m.get("content") {
                        Some(Value::Array(blocks)) if role(m) == Some("user") => {
                            let filtered: Vec<Value> = blocks
                                .iter()
                                .filter(|b| {
                                    !is_type(b, "tool_result")
                                        || str_field(b, "tool_use_id")
                                            .is_some_and(|id| tool_ids.contains(id))
                                })
                                .cloned()
                                .collect();
                            if filtered.len() == blocks.len() {
                                kept.push(m.clone());
                            } else if !filtered.is_empty() {
                                kept.push(with_key(m, "content", Value::Array(filtered)));
                            }
                        }
                        _ => kept.push(m.clone()),
                    }
                }
                let markers = ids_of(kept.iter(), "isTruncationMarker", "truncationId");
                kept.into_iter()
                    .filter(|m| !parent_in(m, "truncationParent", &markers))
                    .collect()
            }
        },
    }
}

fn by_tags(messages: &[Value]) -> Vec<Value> {
    let summaries = ids_of(messages.iter(), "isSummary", "condenseId");
    let markers = ids_of(messages.iter(), "isTruncationMarker", "truncationId");
    messages
        .iter()
        .filter(|m| {
            !parent_in(m, "condenseParent", &summaries)
                && !parent_in(m, "truncationParent", &markers)
        })
        .cloned()
        .collect()
}

/// `cleanupAfterTruncation(messages)`: drop `condenseParent` / `truncationParent` tags whose
/// summary or marker is gone; the valid tags of a rewritten message go back at its end.
pub fn cleanup_after_truncation(messages: &[Value]) -> Vec<Value> {
    let summaries = ids_of(messages.iter(), "isSummary", "condenseId");
    let markers = ids_of(messages.iter(), "isTruncationMarker", "truncationId");
    messages
        .iter()
        .map(|m| {
            let Some(obj) = m.as_object() else {
                return m.clone();
            };
            let cp = obj.get("condenseParent");
            let tp = obj.get("truncationParent");
            let cp_orphan = truthy(cp) && !parent_in(m, "condenseParent", &summaries);
            let tp_orphan = truthy(tp) && !parent_in(m, "truncationParent", &markers);
            if !cp_orphan && !tp_orphan {
                return m.clone();
            }
            let mut out: Map<String, Value> = obj
                .iter()
                .filter(|(k, _)| *k != "condenseParent" && *k != "truncationParent")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if let Some(v) = cp.filter(|_| !cp_orphan) {
                out.insert("condenseParent".into(), v.clone());
            }
            if let Some(v) = tp.filter(|_| !tp_orphan) {
                out.insert("truncationParent".into(), v.clone());
            }
            Value::Object(out)
        })
        .collect()
}

/// What `truncateConversation` returns.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct TruncationResult {
    #[cfg_attr(feature = "ts", ts(type = "Array<ApiMessage>"))]
    pub messages: Vec<Value>,
    /// Absent for the destructive era (before v3.36), which had no ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation_id: Option<String>,
    pub messages_removed: usize,
}

/// The marker's text.
pub fn truncation_marker_text(removed: usize) -> String {
    format!("[Sliding window truncation: {removed} messages hidden to reduce context]")
}

/// `truncateConversation(messages, fracToRemove, taskId)`: hide an even number of visible
/// messages after the first one and insert a marker where the kept ones resume.
pub fn truncate_conversation(
    messages: &[Value],
    frac_to_remove: f64,
    era: Era,
) -> TruncationResult {
    if !era.tagged_truncation() {
        let n = even_count(messages.len(), frac_to_remove);
        let out = if n == 0 || messages.is_empty() {
            messages.to_vec()
        } else {
            std::iter::once(messages[0].clone())
                .chain(messages.iter().skip(n + 1).cloned())
                .collect()
        };
        return TruncationResult {
            messages: out,
            truncation_id: None,
            messages_removed: n,
        };
    }
    let id = uuid::Uuid::new_v4().to_string();
    let visible: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| !truthy(m.get("truncationParent")) && !is_marker(m))
        .map(|(i, _)| i)
        .collect();
    let n = even_count(visible.len(), frac_to_remove);
    if n == 0 {
        return TruncationResult {
            messages: messages.to_vec(),
            truncation_id: Some(id),
            messages_removed: 0,
        };
    }
    let hidden: HashSet<usize> = visible[1..=n].iter().copied().collect();
    let first_kept = visible.get(n + 1).copied().unwrap_or(messages.len());
    let marker_ts = messages
        .get(first_kept)
        .and_then(|m| number(m.get("ts")))
        .unwrap_or_else(now_ms)
        - 1.0;
    let mut marker = Map::new();
    marker.insert("role".into(), Value::String("user".into()));
    marker.insert("content".into(), Value::String(truncation_marker_text(n)));
    marker.insert("ts".into(), num_value(marker_ts));
    marker.insert("isTruncationMarker".into(), Value::Bool(true));
    marker.insert("truncationId".into(), Value::String(id.clone()));
    let mut out = Vec::with_capacity(messages.len() + 1);
    for (i, m) in messages.iter().enumerate() {
        if i == first_kept {
            out.push(Value::Object(marker.clone()));
        }
        if hidden.contains(&i) {
            out.push(with_key(m, "truncationParent", Value::String(id.clone())));
        } else {
            out.push(m.clone());
        }
    }
    if first_kept == messages.len() {
        out.push(Value::Object(marker));
    }
    TruncationResult {
        messages: out,
        truncation_id: Some(id),
        messages_removed: n,
    }
}

/// `floor((count - 1) * frac)` rounded down to an even number, never below 0.
fn even_count(count: usize, frac: f64) -> usize {
    if count == 0 {
        return 0;
    }
    let raw = ((count - 1) as f64 * frac).floor();
    if raw.is_nan() || raw <= 0.0 {
        return 0;
    }
    let raw = raw as usize;
    raw - raw % 2
}

/// `mergeConsecutiveApiMessages(messages, {roles})`: a message merges into the previous one of the
/// same role (for the listed roles) unless it is a summary or either is a truncation marker.
/// Content becomes blocks and `ts` the larger of the two.
pub fn merge_consecutive_api_messages(messages: &[Value], roles: &[&str]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    for m in messages {
        let mergeable = out.last().is_some_and(|prev| {
            let r = role(m);
            r.is_some_and(|r| roles.contains(&r))
                && role(prev) == r
                && !is_summary(m)
                && !is_marker(m)
                && !is_marker(prev)
        });
        if mergeable {
            if let Some(prev) = out.last_mut() {
                let mut blocks = content_blocks(prev.get("content"));
                blocks.extend(content_blocks(m.get("content")));
                let mut merged = with_key(prev, "content", Value::Array(blocks));
                match (number(prev.get("ts")), number(m.get("ts"))) {
                    (None, None) => {}
                    (a, b) => {
                        let ts = a.unwrap_or(f64::MIN).max(b.unwrap_or(f64::MIN));
                        merged = with_key(&merged, "ts", num_value(ts));
                    }
                }
                *prev = merged;
            }
        } else {
            out.push(m.clone());
        }
    }
    out
}

/// `toolUseToText(block)`.
pub fn tool_use_to_text(block: &Value) -> String {
    let name = string_of(block.get("name"));
    match block.get("input") {
        Some(Value::Object(map)) => {
            let lines: Vec<String> = map
                .iter()
                .map(|(k, v)| match v {
                    Value::Object(_) | Value::Array(_) => format!("{k}: {}", stringify_pretty(v)),
                    other => format!("{k}: {}", roo_js::to_string(other)),
                })
                .collect();
            format!("[Tool Use: {name}]\n{}", lines.join("\n"))
        }
        other => format!("[Tool Use: {name}]\n{}", string_of(other)),
    }
}

/// `toolResultToText(block)`.
pub fn tool_result_to_text(block: &Value) -> String {
    let header = if truthy(block.get("is_error")) {
        "[Tool Result (Error)]"
    } else {
        "[Tool Result]"
    };
    match block.get("content") {
        Some(Value::String(s)) => format!("{header}\n{s}"),
        Some(Value::Array(items)) => {
            let parts: Vec<String> = items
                .iter()
                .map(|item| match str_field(item, "type") {
                    Some("text") => str_field(item, "text").unwrap_or("").to_owned(),
                    Some("image") => "[Image]".to_owned(),
                    _ => format!("[{}]", string_of(item.get("type"))),
                })
                .collect();
            format!("{header}\n{}", parts.join("\n"))
        }
        _ => header.to_owned(),
    }
}

/// `transformMessagesForCondensing`: tool blocks become text blocks.
pub fn transform_messages_for_condensing(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| match m.get("content") {
            Some(Value::Array(blocks)) if blocks.iter().any(is_tool_block) => {
                let blocks = blocks
                    .iter()
                    .map(|b| {
                        if is_type(b, "tool_use") {
                            text_block(&tool_use_to_text(b))
                        } else if is_type(b, "tool_result") {
                            text_block(&tool_result_to_text(b))
                        } else {
                            b.clone()
                        }
                    })
                    .collect();
                with_key(m, "content", Value::Array(blocks))
            }
            _ => m.clone(),
        })
        .collect()
}

fn is_tool_block(b: &Value) -> bool {
    is_type(b, "tool_use") || is_type(b, "tool_result")
}

/// `maybeRemoveImageBlocks`: for a model without image input, images become a text placeholder.
pub fn maybe_remove_image_blocks(messages: &[Value], supports_images: bool) -> Vec<Value> {
    if supports_images {
        return messages.to_vec();
    }
    messages
        .iter()
        .map(|m| match m.get("content") {
            Some(Value::Array(blocks)) if blocks.iter().any(|b| is_type(b, "image")) => {
                let blocks = blocks
                    .iter()
                    .map(|b| {
                        if is_type(b, "image") {
                            text_block(IMAGE_PLACEHOLDER)
                        } else {
                            b.clone()
                        }
                    })
                    .collect();
                with_key(m, "content", Value::Array(blocks))
            }
            _ => m.clone(),
        })
        .collect()
}

/// `injectSyntheticToolResults`: tool calls with no result anywhere in the slice get one user
/// message of deferred results, in the order the calls were first seen.
pub fn inject_synthetic_tool_results(messages: &[Value]) -> Vec<Value> {
    let blocks_of = |r: &'static str| {
        messages
            .iter()
            .filter(move |m| role(m) == Some(r))
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
    };
    let answered: HashSet<&str> = blocks_of("user")
        .filter(|b| is_type(b, "tool_result"))
        .filter_map(|b| str_field(b, "tool_use_id"))
        .collect();
    let mut seen = HashSet::new();
    let orphans: Vec<&str> = blocks_of("assistant")
        .filter(|b| is_type(b, "tool_use"))
        .filter_map(|b| str_field(b, "id"))
        .filter(|id| !answered.contains(id) && seen.insert(*id))
        .collect();
    let mut out = messages.to_vec();
    if orphans.is_empty() {
        return out;
    }
    let results = orphans
        .iter()
        .map(|id| {
            let mut b = Map::new();
            b.insert("type".into(), Value::String("tool_result".into()));
            b.insert("tool_use_id".into(), Value::String((*id).to_owned()));
            b.insert("content".into(), Value::String(DEFERRED_TOOL_RESULT.into()));
            Value::Object(b)
        })
        .collect();
    let mut msg = Map::new();
    msg.insert("role".into(), Value::String("user".into()));
    msg.insert("content".into(), Value::Array(results));
    msg.insert("ts".into(), num_value(now_ms()));
    out.push(Value::Object(msg));
    out
}

/// `extractCommandBlocks(message)`: every `<command …>…</command>` in the message's text, joined
/// with newlines (`""` when there is none).
pub fn extract_command_blocks(message: Option<&Value>) -> String {
    let Some(m) = message else {
        return String::new();
    };
    let text = match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| is_type(b, "text"))
            .map(|b| str_field(b, "text").unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(rel) = text[from..].find("<command") {
        let start = from + rel;
        let Some(gt) = text[start + "<command".len()..].find('>') else {
            break;
        };
        let body = start + "<command".len() + gt + 1;
        let Some(close) = text[body..].find("</command>") else {
            break;
        };
        let end = body + close + "</command>".len();
        found.push(&text[start..end]);
        from = end;
    }
    found.join("\n")
}

/// The blocks of every message, as counted for a whole history.
pub fn blocks_of(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .flat_map(|m| content_blocks(m.get("content")))
        .collect()
}
