//! JSON exports of a conversation.
//!
//! - `light` (`format: "roo-conversation-light"`): a summary and the task tree, each task with its
//!   dates, counts, size, cost, completion and first request (≤ 200 characters, cut at a word).
//! - `skeletons` (`format: "roo-conversation-skeletons"`): every task's full `ConversationSkeleton`
//!   (with its sequence, content cut as for XML), depth first, streamed one task at a time.

use crate::error::{ExportError, Result};
use crate::source::SkeletonSource;
use crate::tree::{created_ms, last_ms, Conversation, Visit};
use crate::xml::{ContentOptions, Written};
use roo_js::{iso_from_ms, now_ms, truncate_utf16, utf16_len};
use roo_state::hierarchy::TaskTreeNode;
use roo_state::skeleton::SequenceItem;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::sync::atomic::AtomicBool;

const FORMAT_VERSION: &str = "1.0";

fn gen_err(e: impl std::fmt::Display) -> ExportError {
    ExportError::Generation(format!("the JSON could not be written: {e}"))
}

/// At most `max` UTF-16 units, cut at the last space when there is one in the second half.
pub fn first_words(text: &str, max: usize) -> String {
    let t = text.trim();
    if utf16_len(t) <= max {
        return t.to_owned();
    }
    let head = truncate_utf16(t, max);
    let cut = match head.rfind(char::is_whitespace) {
        Some(i) if i >= head.len() / 2 => &head[..i],
        _ => head,
    };
    format!("{}...", cut.trim_end())
}

fn light_node(conv: &Conversation<'_>, node: &TaskTreeNode, written: &mut Written) -> Value {
    // Built iteratively: deep trees must not exhaust the stack.
    fn entry(
        conv: &Conversation<'_>,
        node: &TaskTreeNode,
        written: &mut Written,
    ) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("taskId".into(), json!(node.task_id));
        if let Some(h) = conv.header(&node.task_id) {
            written.tasks += 1;
            written.messages += h.metadata.message_count;
            written.actions += h.metadata.action_count;
            let md = &h.metadata;
            if let Some(p) = &h.parent_task_id {
                m.insert("parentTaskId".into(), json!(p));
            }
            if let Some(t) = &md.title {
                m.insert("title".into(), json!(first_words(t, 200)));
            }
            if let Some(i) = &h.instruction {
                m.insert("firstUserMessage".into(), json!(first_words(i, 200)));
            }
            m.insert("isCompleted".into(), json!(h.is_completed));
            m.insert("workspace".into(), json!(md.workspace));
            m.insert("mode".into(), json!(md.mode));
            m.insert("createdAt".into(), json!(md.created_at));
            m.insert("lastActivity".into(), json!(md.last_activity));
            m.insert("messageCount".into(), json!(md.message_count));
            m.insert("actionCount".into(), json!(md.action_count));
            m.insert("totalSize".into(), json!(md.total_size));
            m.insert("totalCost".into(), json!(h.api_totals.total_cost));
        }
        m
    }
    // Post-order assembly with an explicit stack.
    /// A node being assembled: the node, its fields, its finished children, the next child.
    type Frame<'n> = (&'n TaskTreeNode, Map<String, Value>, Vec<Value>, usize);
    let mut stack: Vec<Frame<'_>> = vec![(node, entry(conv, node, written), Vec::new(), 0)];
    loop {
        let Some(top) = stack.last_mut() else {
            return Value::Null;
        };
        if let Some(child) = top.0.children.get(top.3) {
            top.3 += 1;
            let e = entry(conv, child, written);
            stack.push((child, e, Vec::new(), 0));
            continue;
        }
        let Some((_, mut m, kids, _)) = stack.pop() else {
            return Value::Null;
        };
        m.insert("children".into(), Value::Array(kids));
        let v = Value::Object(m);
        match stack.last_mut() {
            Some(parent) => parent.2.push(v),
            None => return v,
        }
    }
}

/// The light JSON of a conversation.
pub fn write_light<W: Write>(
    mut sink: W,
    conv: &Conversation<'_>,
    pretty: bool,
) -> Result<(W, Written)> {
    let mut written = Written {
        conversations: 1,
        ..Written::default()
    };
    let tree = light_node(conv, &conv.root, &mut written);
    let mut ids = Vec::new();
    let mut stack = vec![&conv.root];
    while let Some(n) = stack.pop() {
        ids.push(n.task_id.as_str());
        stack.extend(n.children.iter());
    }
    let headers: Vec<_> = ids.iter().filter_map(|id| conv.header(id)).collect();
    let earliest = headers.iter().map(|h| created_ms(h)).min();
    let latest = headers.iter().map(|h| last_ms(h)).max();
    let total_size: u64 = headers.iter().map(|h| h.metadata.total_size).sum();
    let total_cost: f64 = headers.iter().map(|h| h.api_totals.total_cost).sum();
    let doc = json!({
        "format": "roo-conversation-light",
        "version": FORMAT_VERSION,
        "exportTime": iso_from_ms(now_ms()),
        "conversationId": conv.root.task_id,
        "summary": {
            "totalTasks": written.tasks,
            "totalMessages": written.messages,
            "totalActions": written.actions,
            "totalSize": total_size,
            "totalCost": total_cost,
            "dateRange": {
                "earliest": earliest.map(iso_from_ms),
                "latest": latest.map(iso_from_ms),
            },
        },
        "root": tree,
    });
    if pretty {
        serde_json::to_writer_pretty(&mut sink, &doc).map_err(gen_err)?;
    } else {
        serde_json::to_writer(&mut sink, &doc).map_err(gen_err)?;
    }
    sink.write_all(b"\n").map_err(gen_err)?;
    Ok((sink, written))
}

fn cut_value(v: &mut Value, content: &ContentOptions) -> bool {
    let mut cut_any = false;
    if let Value::Object(m) = v {
        for val in m.values_mut() {
            if let Value::String(s) = val {
                let (t, cut) = content.cut(s, false);
                if cut {
                    *s = t.into_owned();
                    cut_any = true;
                }
            }
        }
    }
    cut_any
}

/// Every task's full skeleton, streamed.
pub fn write_skeletons<W: Write>(
    mut sink: W,
    source: &dyn SkeletonSource,
    conv: &Conversation<'_>,
    pretty: bool,
    content: &ContentOptions,
    cancel: &AtomicBool,
) -> Result<(W, Written)> {
    let mut written = Written {
        conversations: 1,
        ..Written::default()
    };
    let head = json!({
        "format": "roo-conversation-skeletons",
        "version": FORMAT_VERSION,
        "exportTime": iso_from_ms(now_ms()),
        "conversationId": conv.root.task_id,
    });
    // The header object without its closing brace, then the array.
    let head = head.to_string();
    let open = head.strip_suffix('}').unwrap_or(&head);
    write!(sink, "{open},\"skeletons\":[").map_err(gen_err)?;
    let analyze = content.analyze();
    let mut first = true;
    conv.walk(cancel, |visit| {
        let Visit::Enter { node, header, .. } = visit else {
            return Ok(());
        };
        let mut skel = source.full(&node.task_id, &analyze)?;
        if let Some(h) = header {
            skel.parent_task_id = h.parent_task_id.clone();
            skel.parent_evidence = h.parent_evidence.clone();
            skel.root_task_id = h.root_task_id.clone();
        }
        for item in skel.sequence.iter_mut().flatten() {
            match item {
                SequenceItem::Message(m) => {
                    let (t, cut) = content.cut(&m.content, m.is_truncated);
                    if cut {
                        written.truncated += 1;
                    }
                    let t = t.into_owned();
                    m.content = t;
                    m.is_truncated = cut;
                    written.messages += 1;
                }
                SequenceItem::Action(a) => {
                    if cut_value(&mut a.parameters, content) {
                        written.truncated += 1;
                    }
                    written.actions += 1;
                }
            }
        }
        if !first {
            sink.write_all(b",").map_err(gen_err)?;
        }
        first = false;
        if pretty {
            sink.write_all(b"\n").map_err(gen_err)?;
            serde_json::to_writer_pretty(&mut sink, &skel).map_err(gen_err)?;
        } else {
            serde_json::to_writer(&mut sink, &skel).map_err(gen_err)?;
        }
        written.tasks += 1;
        Ok(())
    })?;
    sink.write_all(b"]}\n").map_err(gen_err)?;
    Ok((sink, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(first_words("short", 200), "short");
        assert_eq!(
            first_words("hello wonderful world", 17),
            "hello wonderful..."
        );
        assert_eq!(first_words("abcdefghijklmnop", 5), "abcde...");
    }
}
