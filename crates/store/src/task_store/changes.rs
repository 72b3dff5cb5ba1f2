//! For readers that keep something per task: which store a task is in, the handle's layout
//! (which task sits at which position) and the positions its last refreshes reparsed in place.

use super::TaskStore;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many refreshes [`TaskStore::changed_since`] remembers.
const CHANGES_KEPT: usize = 64;

/// A value no other layout of any handle of this process has had.
pub(super) fn next_layout() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl TaskStore {
    /// Our cache root, when the handle keeps its skeleton cache there (readers that keep
    /// something per task keep it beside it, in the store's cache directory).
    pub fn cache_root(&self) -> Option<&std::path::Path> {
        self.cache_root.as_deref()
    }

    /// The position in [`TaskStore::stores`] of the store holding the task at `i`.
    pub fn store_of(&self, i: usize) -> Option<usize> {
        self.tasks.get(i).map(|t| t.store)
    }

    /// Which tasks sit at which positions of [`TaskStore::skeletons`]. The value changes when a
    /// refresh adds, removes or reorders tasks (never when it only reparses or relinks tasks in
    /// their slots), and no two handles of the process share one: a reader that keeps something
    /// per position and sees the same value needs no id comparison.
    pub fn layout(&self) -> u64 {
        self.layout
    }

    /// A count of the refreshes that changed something; see [`TaskStore::changed_since`].
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The positions of the tasks that the refreshes after `revision` reparsed in their slots,
    /// when the layout is the one of that revision and the handle still remembers them (the
    /// last 64 refreshes that changed something); `None`: compare every task's signature.
    pub fn changed_since(&self, revision: u64) -> Option<Vec<usize>> {
        if revision == self.revision {
            return Some(Vec::new());
        }
        let first = self.changes.front()?;
        if first.0 > revision + 1 {
            return None;
        }
        let mut out: Vec<usize> = self
            .changes
            .iter()
            .filter(|(r, _)| *r > revision)
            .flat_map(|(_, p)| p.iter().copied())
            .collect();
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// Note the positions a refresh reparsed in place (a new revision).
    pub(super) fn remember_changes(&mut self, positions: Vec<usize>) {
        if self.changes.len() == CHANGES_KEPT {
            self.changes.pop_front();
        }
        self.changes.push_back((self.revision, positions));
    }

    /// The tasks moved: a new layout, and no change remembered across it.
    pub(super) fn new_layout(&mut self) {
        self.layout = next_layout();
        self.changes.clear();
    }
}
