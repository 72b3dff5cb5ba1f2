//! Usage and cost reports over the task store handle.
//!
//! - [`records`]: the usage records of one task folder (every request's tokens and cost as
//!   recorded, condense costs, the model, provider and mode of each request, file operations).
//! - [`UsageIndex`]: those records for every task of a [`TaskStore`], kept per task with the
//!   task's file signature; [`UsageIndex::sync`] reads again only the tasks whose files changed
//!   (a handle's refresh has already noticed them), so a report after a refresh costs the
//!   aggregation alone.
//! - [`report`]: aggregation by day, week, month, task, conversation (a root task and all its
//!   subtasks, with the share of each task and mode), model, workspace, host or mode, in a time
//!   zone, over a date range, with per-model breakdowns and the cost modes `recorded`,
//!   `calculate` (the extension's cost functions over [`prices`]) and `auto`.

pub mod prices;
pub mod records;
pub mod report;
pub mod zone;

use rayon::prelude::*;
use records::TaskUsage;
use roo_store::cache::TaskSig;
use roo_store::task_store::TaskStore;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

pub use report::{CostMode, Group, ReportOptions, UsageReport};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("{0}")]
    InvalidArgument(String),
}

impl UsageError {
    /// The project's error code.
    pub fn code(&self) -> &'static str {
        match self {
            UsageError::InvalidArgument(_) => "INVALID_ARGUMENT",
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    sig: TaskSig,
    usage: Arc<TaskUsage>,
}

/// What [`UsageIndex::sync`] did.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageSync"))]
pub struct SyncReport {
    /// Tasks read (new, or whose files changed).
    pub read: u32,
    /// Tasks kept as they were.
    pub kept: u32,
    /// Tasks no longer in the handle.
    pub dropped: u32,
    /// Time the sync took.
    pub elapsed_ms: f64,
    /// Blocks of tasks the report summed, and blocks it took as the last report left them
    /// (a report is the merge of blocks of 1 024 tasks: see `report::pass`).
    pub blocks_summed: u32,
    pub blocks_kept: u32,
}

/// The usage records of every task of a handle, by task id.
#[derive(Debug, Default)]
pub struct UsageIndex {
    entries: HashMap<String, Entry>,
    /// The entries of the handle's tasks in the handle's order, as of the last sync, with their
    /// ids: while the handle holds the same tasks in the same order, a sync compares each
    /// position's signature and a report finds a task's records by position, neither hashing.
    aligned: Vec<Entry>,
    aligned_ids: Vec<Arc<str>>,
    /// The handle's layout when `aligned` was laid out (`TaskStore::layout`), and its revision
    /// at the last sync (`TaskStore::revision`).
    layout: Option<u64>,
    revision: u64,
    /// The blocks of the last report (see `report::pass`).
    memo: Option<report::Memo>,
}

/// Read the usage of the handle's tasks at `positions`.
fn read_tasks(store: &TaskStore, positions: &[usize]) -> Vec<(usize, Entry)> {
    let skeletons = store.skeletons();
    positions
        .par_iter()
        .map(|&i| {
            let s = &skeletons[i];
            let usage = match store.task_dir(&s.task_id) {
                Some(dir) => records::read_task_usage(&dir, s),
                None => TaskUsage::default(),
            };
            let sig = store.signature(i).unwrap_or_default();
            (
                i,
                Entry {
                    sig,
                    usage: Arc::new(usage),
                },
            )
        })
        .collect()
}

impl UsageIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bring the index in line with `store`: read the tasks that are new or whose signature
    /// changed, drop the tasks that are gone.
    pub fn sync(&mut self, store: &TaskStore) -> SyncReport {
        let start = Instant::now();
        // The same layout: the same task at each position, no id compared.
        let same_layout =
            self.layout == Some(store.layout()) && self.aligned.len() == store.skeletons().len();
        let mut report = if same_layout {
            self.sync_in_place(store)
        } else {
            self.memo = None;
            self.sync_by_id(store)
        };
        self.revision = store.revision();
        report.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
        report
    }

    /// The same tasks in the same order: compare the signatures of the positions the handle
    /// reparsed since the last sync (each position's when it no longer knows).
    fn sync_in_place(&mut self, store: &TaskStore) -> SyncReport {
        let candidates = store
            .changed_since(self.revision)
            .unwrap_or_else(|| (0..self.aligned.len()).collect());
        let stale: Vec<usize> = candidates
            .into_iter()
            .filter(|&i| {
                self.aligned
                    .get(i)
                    .is_some_and(|e| store.signature(i) != Some(e.sig))
            })
            .collect();
        if let Some(memo) = &mut self.memo {
            memo.forget(&stale);
        }
        let read = read_tasks(store, &stale);
        let n = read.len() as u32;
        for (i, entry) in read {
            self.entries
                .insert(self.aligned_ids[i].to_string(), entry.clone());
            self.aligned[i] = entry;
        }
        SyncReport {
            read: n,
            kept: self.aligned.len() as u32 - n,
            ..SyncReport::default()
        }
    }

    /// Tasks added, removed or moved: compare by id, and lay the entries out again.
    fn sync_by_id(&mut self, store: &TaskStore) -> SyncReport {
        let skeletons = store.skeletons();
        let stale: Vec<usize> = (0..skeletons.len())
            .filter(|&i| match self.entries.get(&skeletons[i].task_id) {
                Some(e) => Some(e.sig) != store.signature(i),
                None => true,
            })
            .collect();
        let mut report = SyncReport::default();
        let read = read_tasks(store, &stale);
        report.read = read.len() as u32;
        for (i, entry) in read {
            self.entries.insert(skeletons[i].task_id.clone(), entry);
        }
        if self.entries.len() > skeletons.len() {
            let before = self.entries.len();
            self.entries
                .retain(|id, _| store.header(id).is_some_and(|h| h.is_ok()));
            report.dropped = (before - self.entries.len()) as u32;
        }
        report.kept = skeletons.len() as u32 - report.read;
        let empty = Entry {
            sig: TaskSig::default(),
            usage: Arc::new(TaskUsage::default()),
        };
        self.aligned = skeletons
            .iter()
            .map(|s| self.entries.get(&s.task_id).unwrap_or(&empty).clone())
            .collect();
        self.aligned_ids = skeletons
            .iter()
            .map(|s| Arc::from(s.task_id.as_str()))
            .collect();
        self.layout = Some(store.layout());
        report
    }

    /// The records of one task, if the index holds it.
    pub fn task(&self, task_id: &str) -> Option<&TaskUsage> {
        self.entries.get(task_id).map(|e| e.usage.as_ref())
    }

    /// The records of the task at position `i` of the handle synced last (`task_id` checks the
    /// position; another id is looked up).
    pub fn task_at(&self, i: usize, task_id: &str) -> Option<&TaskUsage> {
        match (self.aligned.get(i), self.aligned_ids.get(i)) {
            (Some(e), Some(id)) if **id == *task_id => Some(e.usage.as_ref()),
            _ => self.task(task_id),
        }
    }

    /// Sync with `store`, then build the report `opts` asks for.
    pub fn report(
        &mut self,
        store: &TaskStore,
        opts: &ReportOptions,
    ) -> Result<UsageReport, UsageError> {
        let sync = self.sync(store);
        let mut memo = self.memo.take();
        let built = report::build(store, self, &mut memo, opts);
        self.memo = memo;
        let (mut r, blocks) = built?;
        r.sync = SyncReport {
            blocks_summed: blocks.summed,
            blocks_kept: blocks.kept,
            ..sync
        };
        Ok(r)
    }
}
