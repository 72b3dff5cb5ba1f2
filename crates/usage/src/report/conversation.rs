//! Conversations: a root task and every task below it (the handle's parent links, stored or
//! inferred), with the share of each task and of each mode in the conversation's cost.

use super::{Sums, UsageRow};
use roo_state::ConversationSkeleton;
use serde::Serialize;
use std::collections::HashMap;

/// One task of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "UsageConversationTask"),
    ts(optional_fields)
)]
pub struct ConversationTask {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    /// 0 for the root.
    pub depth: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// How the task is linked to its parent (`history_item`, `child_ids`, `metadata`,
    /// `inferred`, …), from the link's evidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    #[serde(flatten)]
    pub sums: Sums,
    /// This task's part of the conversation's cost (0 to 1; by tokens when nothing cost).
    pub share: f64,
}

/// A mode's part of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageModeShare"))]
pub struct ShareRow {
    pub mode: String,
    pub cost: f64,
    pub total_tokens: f64,
    pub share: f64,
}

/// The tasks of a conversation row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageConversation"))]
pub struct ConversationDetail {
    pub root_task_id: String,
    /// Root first, then depth-first (each task's subtasks in id order, under it).
    pub tasks: Vec<ConversationTask>,
    /// Most expensive first.
    pub modes: Vec<ShareRow>,
}

/// The root of every task (`roots[i]` for `skeletons[i]`): the topmost ancestor among the
/// handle's tasks, following parent links (a cycle stops at the task met twice).
pub fn roots(skeletons: &[ConversationSkeleton]) -> Vec<String> {
    let index: HashMap<&str, usize> = skeletons
        .iter()
        .enumerate()
        .map(|(i, s)| (s.task_id.as_str(), i))
        .collect();
    let mut out: Vec<Option<usize>> = vec![None; skeletons.len()];
    for start in 0..skeletons.len() {
        if out[start].is_some() {
            continue;
        }
        let mut path = vec![start];
        let mut at = start;
        let root = loop {
            if let Some(r) = out[at] {
                break r;
            }
            let parent = skeletons[at]
                .parent_task_id
                .as_deref()
                .and_then(|p| index.get(p).copied());
            match parent {
                Some(p) if !path.contains(&p) && path.len() < 10_000 => {
                    path.push(p);
                    at = p;
                }
                _ => break at,
            }
        };
        for i in path {
            out[i] = Some(root);
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(i, r)| skeletons[r.unwrap_or(i)].task_id.clone())
        .collect()
}

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

/// Fill each conversation row's detail from the per-task sums of the report.
pub fn detail(
    rows: &mut [UsageRow],
    skeletons: &[ConversationSkeleton],
    roots: &[String],
    task_sums: &[(usize, Sums)],
) {
    let mut by_root: HashMap<&str, Vec<usize>> = HashMap::new();
    let sums_of: HashMap<usize, Sums> = task_sums.iter().copied().collect();
    for (t, root) in roots.iter().enumerate() {
        by_root.entry(root.as_str()).or_default().push(t);
    }
    let index: HashMap<&str, usize> = skeletons
        .iter()
        .enumerate()
        .map(|(i, s)| (s.task_id.as_str(), i))
        .collect();
    for row in rows.iter_mut() {
        let Some(members) = by_root.get(row.key.as_str()) else {
            continue;
        };
        let root = index.get(row.key.as_str()).copied();
        row.label = root.and_then(|r| skeletons[r].metadata.title.clone());
        let by_cost = row.sums.cost > 0.0;
        let whole = if by_cost {
            row.sums.cost
        } else {
            row.sums.total_tokens
        };
        let mut tasks: Vec<ConversationTask> = members
            .iter()
            .map(|&t| {
                let s = &skeletons[t];
                let sums = sums_of.get(&t).copied().unwrap_or_default();
                let part = if by_cost {
                    sums.cost
                } else {
                    sums.total_tokens
                };
                ConversationTask {
                    task_id: s.task_id.clone(),
                    parent_task_id: s.parent_task_id.clone(),
                    depth: depth(skeletons, &index, t),
                    mode: s.metadata.mode.clone(),
                    title: s.metadata.title.clone(),
                    link: s.parent_evidence.as_ref().map(|e| e.source.clone()),
                    sums,
                    share: share(part, whole),
                }
            })
            .collect();
        tree_order(&mut tasks);
        let mut modes: Vec<ShareRow> = Vec::new();
        for t in &tasks {
            let mode = t.mode.clone().unwrap_or_else(|| "unknown".into());
            match modes.iter_mut().find(|m| m.mode == mode) {
                Some(m) => {
                    m.cost += t.sums.cost;
                    m.total_tokens += t.sums.total_tokens;
                }
                None => modes.push(ShareRow {
                    mode,
                    cost: t.sums.cost,
                    total_tokens: t.sums.total_tokens,
                    share: 0.0,
                }),
            }
        }
        for m in &mut modes {
            m.share = share(if by_cost { m.cost } else { m.total_tokens }, whole);
        }
        modes.sort_by(|a, b| b.cost.total_cmp(&a.cost).then(a.mode.cmp(&b.mode)));
        row.conversation = Some(ConversationDetail {
            root_task_id: row.key.clone(),
            tasks,
            modes,
        });
    }
}

/// Depth-first order: each task followed by its subtasks (in id order) and theirs.
fn tree_order(tasks: &mut Vec<ConversationTask>) {
    tasks.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    let ids: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.task_id.as_str(), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
    let mut tops = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        match t.parent_task_id.as_deref().and_then(|p| ids.get(p)) {
            Some(&p) if p != i => children[p].push(i),
            _ => tops.push(i),
        }
    }
    let mut order = Vec::with_capacity(tasks.len());
    let mut seen = vec![false; tasks.len()];
    let mut stack: Vec<usize> = tops.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        order.push(i);
        stack.extend(children[i].iter().rev());
    }
    // A cycle left out of every walk: after the rest, in id order.
    order.extend((0..tasks.len()).filter(|&i| !seen[i]));
    let mut slots: Vec<Option<ConversationTask>> =
        std::mem::take(tasks).into_iter().map(Some).collect();
    tasks.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

fn depth(skeletons: &[ConversationSkeleton], index: &HashMap<&str, usize>, t: usize) -> u32 {
    let mut d = 0;
    let mut at = t;
    while let Some(p) = skeletons[at]
        .parent_task_id
        .as_deref()
        .and_then(|p| index.get(p).copied())
    {
        d += 1;
        at = p;
        if d > 10_000 || p == t {
            break;
        }
    }
    d
}
