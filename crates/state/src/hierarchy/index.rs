//! The index every pass shares: tasks sorted by id, their `newTask` calls ("slots") and the
//! distinct normalised messages ("keys").

use super::*;

/// One `newTask` call of a task.
pub(super) struct Slot<'a> {
    pub(super) parent: u32,
    pub(super) key: u32,
    pub(super) ts: Option<i64>,
    /// `subtask_result` after the call, else the parent's next call.
    pub(super) upper: Option<i64>,
    pub(super) closed_by_result: bool,
    pub(super) seen_in_ui: bool,
    /// The child a delegation record names.
    pub(super) child_task_id: Option<&'a str>,
}

/// A distinct normalised message; its slots sorted by time (untimed last).
pub(super) struct DistinctMessage<'a> {
    pub(super) text: &'a str,
    /// Some record of it ended with an ellipsis.
    pub(super) cut: bool,
    pub(super) slots: Vec<u32>,
}

pub(super) struct TaskInfo<'a> {
    /// Interned normalised workspace.
    pub(super) workspace: Option<u32>,
    pub(super) created: Option<i64>,
    pub(super) last_activity: Option<i64>,
    /// The normalised instruction ("" when the task is not looked up).
    pub(super) query: &'a str,
    /// Its hash ([`KeyMemo`]), to find an equal message without hashing the text again.
    pub(super) query_hash: u128,
}

pub(super) struct SlotDraft<'a> {
    pub(super) key: &'a str,
    pub(super) key_hash: u128,
    pub(super) cut: bool,
    pub(super) ts: Option<i64>,
    pub(super) upper: Option<i64>,
    pub(super) closed_by_result: bool,
    pub(super) seen_in_ui: bool,
    pub(super) child_task_id: Option<&'a str>,
}

/// What the reconstruction decides for one task.
#[derive(Default)]
pub(super) struct TaskLink {
    pub(super) parent: Option<String>,
    pub(super) evidence: Option<ParentEvidence>,
    pub(super) root: Option<String>,
    /// The task's own record says it has no parent: inference leaves it alone.
    pub(super) settled: bool,
}

/// Everything the passes share, over the skeletons sorted by task id (`rank`).
pub(super) struct Index<'a> {
    pub(super) view: Vec<&'a ConversationSkeleton>,
    pub(super) index_of: FxMap<&'a str, u32>,
    pub(super) infos: Vec<TaskInfo<'a>>,
    pub(super) slots: Vec<Slot<'a>>,
    /// Slot ids of each task (contiguous).
    pub(super) slots_of: Vec<std::ops::Range<u32>>,
    pub(super) keys: Vec<DistinctMessage<'a>>,
    /// Key ids by the hash of their text.
    pub(super) key_ids: FxMap<u128, u32>,
}

impl<'a> Index<'a> {
    pub(super) fn build(
        view: Vec<&'a ConversationSkeleton>,
        hashes: &[TaskHashes],
        memo: &'a KeyMemo,
    ) -> Self {
        // Workspaces: few distinct spellings, normalised once each, compared as numbers.
        let mut raw_ws: FxMap<&'a str, Option<u32>> = FxMap::default();
        let mut norm_ws: FxMap<String, u32> = FxMap::default();
        let ws_ids: Vec<Option<u32>> = view
            .iter()
            .map(|s| {
                let raw = s
                    .metadata
                    .workspace
                    .as_deref()
                    .filter(|w| !w.trim().is_empty())?;
                *raw_ws.entry(raw).or_insert_with(|| {
                    let next = norm_ws.len() as u32;
                    Some(*norm_ws.entry(normalize_workspace(raw)).or_insert(next))
                })
            })
            .collect();
        let prepared: Vec<(TaskInfo<'a>, Vec<SlotDraft<'a>>)> = view
            .par_iter()
            .zip(ws_ids.par_iter())
            .zip(hashes.par_iter())
            .map(|((s, &ws), h)| task_facts(s, ws, h, memo))
            .collect();
        let n = view.len();
        let mut index_of: FxMap<&'a str, u32> = FxMap::default();
        index_of.reserve(n);
        for (i, s) in view.iter().enumerate() {
            index_of.entry(s.task_id.as_str()).or_insert(i as u32);
        }
        let total: usize = prepared.iter().map(|(_, d)| d.len()).sum();
        let mut infos = Vec::with_capacity(n);
        let mut slots: Vec<Slot<'a>> = Vec::with_capacity(total);
        let mut slots_of = Vec::with_capacity(n);
        let mut keys: Vec<DistinctMessage<'a>> = Vec::with_capacity(total);
        let mut key_ids: FxMap<u128, u32> = FxMap::default();
        key_ids.reserve(total);
        for (i, (info, drafts)) in prepared.into_iter().enumerate() {
            infos.push(info);
            let first = slots.len() as u32;
            for d in drafts {
                let known = key_ids
                    .get(&d.key_hash)
                    .copied()
                    .filter(|&k| keys.get(k as usize).is_some_and(|e| e.text == d.key));
                let key = match known {
                    Some(k) => k,
                    None => {
                        let k = keys.len() as u32;
                        keys.push(DistinctMessage {
                            text: d.key,
                            cut: false,
                            slots: Vec::new(),
                        });
                        // Two texts with one hash (never seen): the second is found by the trie only.
                        key_ids.entry(d.key_hash).or_insert(k);
                        k
                    }
                };
                let sid = slots.len() as u32;
                if let Some(e) = keys.get_mut(key as usize) {
                    e.slots.push(sid);
                    e.cut |= d.cut;
                }
                slots.push(Slot {
                    parent: i as u32,
                    key,
                    ts: d.ts,
                    upper: d.upper,
                    closed_by_result: d.closed_by_result,
                    seen_in_ui: d.seen_in_ui,
                    child_task_id: d.child_task_id,
                });
            }
            slots_of.push(first..slots.len() as u32);
        }
        for e in &mut keys {
            e.slots.sort_by_key(|&s| {
                let ts = slots.get(s as usize).and_then(|x| x.ts);
                (ts.is_none(), ts, s)
            });
        }
        Self {
            view,
            index_of,
            infos,
            slots,
            slots_of,
            keys,
            key_ids,
        }
    }

    /// The key whose text equals `text` (hash `hash`), if any task issued that message.
    pub(super) fn key_of(&self, hash: u128, text: &str) -> Option<u32> {
        self.key_ids
            .get(&hash)
            .copied()
            .filter(|&k| self.keys.get(k as usize).is_some_and(|e| e.text == text))
    }

    pub(super) fn id(&self, rank: u32) -> &'a str {
        self.view
            .get(rank as usize)
            .map_or("", |s| s.task_id.as_str())
    }

    pub(super) fn slots_of(&self, rank: u32) -> std::ops::Range<u32> {
        self.slots_of.get(rank as usize).cloned().unwrap_or(0..0)
    }

    /// The texts of the keys, by key id.
    pub(super) fn texts(&self) -> Vec<&'a str> {
        self.keys.iter().map(|e| e.text).collect()
    }
}

/// A task's facts and its calls, with their keys from the memo (run in parallel).
pub(super) fn task_facts<'a>(
    s: &'a ConversationSkeleton,
    workspace: Option<u32>,
    hashes: &TaskHashes,
    memo: &'a KeyMemo,
) -> (TaskInfo<'a>, Vec<SlotDraft<'a>>) {
    let query = hashes.query.and_then(|h| memo.get(h));
    let info = TaskInfo {
        workspace,
        created: s.created_at_ms,
        last_activity: s.last_activity_ms,
        query: query.map_or("", |e| &*e.key),
        query_hash: query.map_or(0, |e| e.key_hash),
    };
    let mut times: Vec<i64> = s.child_tasks.iter().filter_map(|c| c.ts).collect();
    times.sort_unstable();
    let drafts = s
        .child_tasks
        .iter()
        .zip(&hashes.calls)
        .filter_map(|(c, &h)| {
            let entry = memo.get(h)?;
            if entry.key.is_empty() {
                return None;
            }
            let next_call =
                c.ts.and_then(|t| times.get(times.partition_point(|&x| x <= t)).copied());
            let upper = match (c.completed_ts, next_call) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            Some(SlotDraft {
                key: &entry.key,
                key_hash: entry.key_hash,
                cut: entry.cut,
                ts: c.ts,
                upper,
                closed_by_result: c.completed_ts.is_some(),
                seen_in_ui: c
                    .sources
                    .iter()
                    .any(|k| matches!(k, ChildSource::UiAsk | ChildSource::UiPartialAsk)),
                child_task_id: c.child_task_id.as_deref().filter(|x| !x.is_empty()),
            })
        })
        .collect();
    (info, drafts)
}
