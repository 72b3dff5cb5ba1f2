//! A task held by two stores: the same task id under two tasks folders. Zoo Code's import of Roo
//! Code's history copies each task folder (without its checkpoints) under Zoo's own folder, so
//! every imported task lives in both. The handle shows one copy of such a task, the newer, among
//! its headers (lists, trees, usage and search count it once) and keeps a small record of the
//! others (`Copy`: no header), which [`TaskStore::also_in`] names with whether they differ.
//!
//! Newer means the later last activity, then the later task file (an untouched import is the
//! same conversation copied later), then the store named first. Two copies differ when the facts
//! a list or a report shows of them do ([`content_print`]).

use super::stamps::Compared;
use super::{header_options, Fresh, OnDisk, Parsed, Stamp, TaskStore};
use crate::cache::{FolderMark, TaskSig};
use rayon::prelude::*;
use roo_state::skeleton::analyze_task;
use roo_state::ConversationSkeleton;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::path::Path;
use xxhash_rust::xxh3::Xxh3;

/// What decides which copy of a task is shown: the later last activity, then the later task
/// file (ns). Compared in that order; a copy without a header is older than any with one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Recency {
    last_activity_ms: i64,
    newest_file_ns: i64,
}

impl Recency {
    pub(crate) fn of(s: Option<&ConversationSkeleton>, sig: &TaskSig) -> Recency {
        Recency {
            last_activity_ms: s.and_then(|s| s.last_activity_ms).unwrap_or(i64::MIN),
            newest_file_ns: sig.iter().flatten().map(|f| f.1).max().unwrap_or(i64::MIN),
        }
    }
}

/// A copy of a task that the handle does not show (another copy of the same id is newer).
#[derive(Debug, Clone)]
pub(super) struct Copy {
    pub(super) id: String,
    pub(super) store: usize,
    pub(super) sig: TaskSig,
    pub(super) folder: Option<FolderMark>,
    /// [`content_print`] of its header; `None`: its folder gave none.
    pub(super) print: Option<u64>,
}

impl Copy {
    pub(super) fn of(
        store: usize,
        id: &str,
        stamp: &Stamp,
        s: Option<&ConversationSkeleton>,
    ) -> Copy {
        Copy {
            id: id.to_owned(),
            store,
            sig: stamp.sig,
            folder: stamp.folder,
            print: s.map(content_print),
        }
    }
}

/// Another place a task is: a copy of it in another tasks folder, not the one shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct AlsoIn {
    /// The tasks folder holding the copy.
    pub tasks_dir: String,
    /// Its host (a `HostSource` of `roo_formats::host::SOURCES`), from the path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The copy's own folder.
    pub path: String,
    /// What the copy holds differs from the copy shown, which is the newer (a conversation
    /// continued after the import, or a copy that gave no header).
    pub differs: bool,
}

/// A task several stores hold: where the copy shown is, and the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct SharedTask {
    pub task_id: String,
    /// The tasks folder of the copy shown (the newer).
    pub tasks_dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub also_in: Vec<AlsoIn>,
}

/// A fingerprint of what a list, a tree or a report shows of a task (dates, counts, totals,
/// completion, title, the stored links and status): two copies differ when theirs do.
pub(crate) fn content_print(s: &ConversationSkeleton) -> u64 {
    let mut h = Xxh3::new();
    let mut num = |n: i64| h.update(&n.to_le_bytes());
    num(s.created_at_ms.unwrap_or(i64::MIN));
    num(s.last_activity_ms.unwrap_or(i64::MIN));
    num(i64::from(s.metadata.message_count));
    num(i64::from(s.metadata.action_count));
    num(i64::from(s.api_totals.requests));
    for x in [
        s.api_totals.tokens_in,
        s.api_totals.tokens_out,
        s.api_totals.cache_writes,
        s.api_totals.cache_reads,
        s.api_totals.total_cost,
    ] {
        num(x.to_bits() as i64);
    }
    num(i64::from(s.is_completed));
    num(s.child_tasks.len() as i64);
    let links = &s.stored_links;
    let texts = [
        s.metadata.title.as_deref(),
        links.history_item_parent.as_deref(),
        links.status.as_deref(),
    ];
    for t in texts
        .into_iter()
        .chain(links.child_ids.iter().map(|c| Some(c.as_str())))
    {
        // Length first, so that no two lists of texts read the same.
        let t = t.unwrap_or("\u{0}");
        h.update(&(t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
    }
    h.digest()
}

/// Which of two copies is shown: `Greater` when `a` is (see the module documentation; the
/// store named first wins a tie).
pub(crate) fn shown_first(a: (Recency, usize), b: (Recency, usize)) -> Ordering {
    a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1))
}

/// The place of a copy in store `tasks_dir`.
fn place(tasks_dir: &str, id: &str, differs: bool) -> AlsoIn {
    let dir = Path::new(tasks_dir);
    AlsoIn {
        tasks_dir: tasks_dir.to_owned(),
        host: roo_state::skeleton::source_in_path(dir).map(str::to_owned),
        path: dir.join(id).display().to_string(),
        differs,
    }
}

impl TaskStore {
    /// The other copies of task `task_id` (none unless two stores of the handle hold it).
    pub fn also_in(&self, task_id: &str) -> Vec<AlsoIn> {
        let shown = self.position_of(task_id).map(|i| &self.skeletons[i]);
        let print = shown.map(content_print);
        self.copies_of(task_id)
            .iter()
            .map(|c| {
                let differs = c.print.is_none() || c.print != print;
                place(&self.stores[c.store].tasks_dir, &c.id, differs)
            })
            .collect()
    }

    /// Every task two or more stores of the handle hold, in id order.
    pub fn shared_tasks(&self) -> Vec<SharedTask> {
        let mut out: Vec<SharedTask> = Vec::new();
        for c in &self.copies {
            if out.last().is_some_and(|s| s.task_id == c.id) {
                continue;
            }
            let Some(i) = self.position_of(&c.id) else {
                continue;
            };
            let tasks_dir = &self.stores[self.tasks[i].store].tasks_dir;
            out.push(SharedTask {
                task_id: c.id.clone(),
                tasks_dir: tasks_dir.clone(),
                host: roo_state::skeleton::source_in_path(Path::new(tasks_dir)).map(str::to_owned),
                also_in: self.also_in(&c.id),
            });
        }
        out
    }

    /// The tasks that several handles hold (each handle over its own stores, as the CLI opens
    /// them): for each such id, the handle whose copy is shown (the newer) and the other copies,
    /// in id order. The handles' headers are in id order, so this is one merge of their ids.
    pub fn shared_across(handles: &[&TaskStore]) -> Vec<SharedTask> {
        let mut next = vec![0usize; handles.len()];
        let mut out = Vec::new();
        loop {
            // The smallest id not yet passed, and every handle at it.
            let smallest = (handles.iter().zip(&next))
                .filter_map(|(h, &k)| h.skeletons.get(k).map(|s| s.task_id.as_str()))
                .min();
            let Some(id) = smallest else { break };
            let at: Vec<usize> = (0..handles.len())
                .filter(|&n| {
                    handles[n]
                        .skeletons
                        .get(next[n])
                        .is_some_and(|s| s.task_id == id)
                })
                .collect();
            if at.len() > 1 {
                out.push(shared_among(handles, &next, &at));
            }
            for n in at {
                next[n] += 1;
            }
        }
        out
    }

    /// The recorded copies of `id`, in store order.
    fn copies_of(&self, id: &str) -> &[Copy] {
        let from = self.copies.partition_point(|c| c.id.as_str() < id);
        let to = from + self.copies[from..].partition_point(|c| c.id == id);
        &self.copies[from..to]
    }

    /// The position among the copies of the copy of `id` in store `store`.
    pub(super) fn copy_index(&self, id: &str, store: usize) -> Option<usize> {
        self.copies
            .binary_search_by(|c| c.id.as_str().cmp(id).then(c.store.cmp(&store)))
            .ok()
    }

    /// Keep the copies in (id, store) order.
    pub(super) fn sort_copies(&mut self) {
        self.copies
            .sort_unstable_by(|a, b| a.id.cmp(&b.id).then(a.store.cmp(&b.store)));
    }

    /// Parse the tasks a refresh found changed or new, and the changed copies of tasks several
    /// stores hold, and settle which copy each of those shows ([`TaskStore::settle_copies`]).
    /// Returns the tasks to take in, the copies parsed (for their own stores' caches) and the
    /// copies gone.
    pub(super) fn parse_changed(
        &mut self,
        c: Compared<'_>,
    ) -> (Vec<Parsed>, Vec<Fresh>, Vec<(usize, String)>) {
        let opts = header_options();
        let parse = |list: &[&OnDisk]| -> Vec<Parsed> {
            if list.is_empty() {
                // A refresh that found nothing changed, the usual case: not a pass on the pool.
                return Vec::new();
            }
            list.par_iter()
                .map(|(n, id, d, sig)| (*n, id.clone(), *sig, analyze_task(id, d, &opts)))
                .collect()
        };
        let mut parsed = parse(&c.to_parse);
        let gone = c.copies_gone;
        self.copies
            .retain(|k| !gone.iter().any(|g| g.0 == k.store && g.1 == k.id));
        let copies = self.settle_copies(&mut parsed, parse(&c.copies), &c.replaced);
        let copies = (copies.into_iter())
            .map(|(n, id, sig, r)| match r {
                Ok(s) => (n, id, sig, Some(s), Vec::new()),
                Err(d) => (n, id, sig, None, d),
            })
            .collect();
        (parsed, copies, gone)
    }

    /// A refresh parsed `candidates`, folders of tasks the handle shows from another store (or
    /// new in two stores at once): each is set against the copy shown (the one `parsed` holds
    /// for that id, else the handle's). The newer joins `parsed`, to be taken in place of the
    /// other; the older becomes a copy. Returns the copies parsed (to record in their stores'
    /// caches).
    pub(super) fn settle_copies(
        &mut self,
        parsed: &mut Vec<Parsed>,
        candidates: Vec<Parsed>,
        replaced: &[String],
    ) -> Vec<Parsed> {
        let mut recorded: Vec<Parsed> = Vec::new();
        // The copies this makes, added once the loop is done (the list stays sorted meanwhile).
        let mut added: Vec<Copy> = Vec::new();
        for cand in candidates {
            if let Some(c) = self.copy_index(&cand.1, cand.0) {
                self.copies.remove(c);
            }
            // The shown copy's folder is gone: the first candidate takes its place, the next
            // ones are set against it.
            let shown_gone = replaced.contains(&cand.1);
            let mine = (Recency::of(cand.3.as_ref().ok(), &cand.2.sig), cand.0);
            if let Some(p) = parsed.iter_mut().find(|p| p.1 == cand.1) {
                let theirs = (Recency::of(p.3.as_ref().ok(), &p.2.sig), p.0);
                let older = if shown_first(mine, theirs) == Ordering::Greater {
                    std::mem::replace(p, cand)
                } else {
                    cand
                };
                added.push(Copy::of(older.0, &older.1, &older.2, older.3.as_ref().ok()));
                recorded.push(older);
            } else if let Some(i) = self.position_of(&cand.1).filter(|_| !shown_gone) {
                let t = &self.tasks[i];
                let shown = &self.skeletons[i];
                let theirs = (Recency::of(Some(shown), &t.sig), t.store);
                if shown_first(mine, theirs) == Ordering::Greater {
                    // The shown task becomes a copy; its cache entry is current.
                    let stamp = Stamp {
                        sig: t.sig,
                        folder: t.folder,
                        trusted: false,
                    };
                    added.push(Copy::of(t.store, &shown.task_id, &stamp, Some(shown)));
                    parsed.push(cand);
                } else {
                    added.push(Copy::of(cand.0, &cand.1, &cand.2, cand.3.as_ref().ok()));
                    recorded.push(cand);
                }
            } else {
                // Shown nowhere yet (new, or its other copy gives no header): it is the task.
                parsed.push(cand);
            }
        }
        self.copies.append(&mut added);
        self.sort_copies();
        recorded
    }
}

/// The [`SharedTask`] of the id the handles at `at` hold at their positions `next`.
fn shared_among(handles: &[&TaskStore], next: &[usize], at: &[usize]) -> SharedTask {
    let key = |n: usize| {
        let (h, k) = (handles[n], next[n]);
        let sig = h.tasks.get(k).map(|t| t.sig).unwrap_or_default();
        (Recency::of(h.skeletons.get(k), &sig), n)
    };
    let shown = at
        .iter()
        .copied()
        .max_by(|&a, &b| shown_first(key(a), key(b)))
        .unwrap_or(0);
    let dir_of = |n: usize| {
        let h = handles[n];
        (h.tasks.get(next[n]))
            .and_then(|t| h.stores.get(t.store))
            .map_or(String::new(), |s| s.tasks_dir.clone())
    };
    let s = &handles[shown].skeletons[next[shown]];
    let print = content_print(s);
    let tasks_dir = dir_of(shown);
    SharedTask {
        task_id: s.task_id.clone(),
        host: roo_state::skeleton::source_in_path(Path::new(&tasks_dir)).map(str::to_owned),
        tasks_dir,
        also_in: at
            .iter()
            .filter(|&&n| n != shown)
            .map(|&n| {
                let other = &handles[n].skeletons[next[n]];
                place(&dir_of(n), &other.task_id, content_print(other) != print)
            })
            .collect(),
    }
}

/// A copy the refresh found gone from its folder.
pub(super) fn gone_copies(copies: &[Copy], seen: &[bool]) -> Vec<(usize, String)> {
    copies
        .iter()
        .zip(seen)
        .filter(|(_, s)| !**s)
        .map(|(c, _)| (c.store, c.id.clone()))
        .collect()
}
