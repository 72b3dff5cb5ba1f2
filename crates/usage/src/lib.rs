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
//! - [`kept`]: the records kept between runs beside the skeleton cache (one file per store), so
//!   that a new process reads again only the tasks whose files changed.
//! - [`activity`]: the person's messages, tool calls and commands beside the requests, and the
//!   guard of a task's totals against a `history_item.json` that disagrees with its records.

pub mod activity;
pub mod kept;
pub mod prices;
pub mod records;
pub mod report;
pub mod zone;

use rayon::prelude::*;
use records::TaskUsage;
use roo_store::cache::{sig_hash, TaskSig};
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
    /// Tasks read from their folders (new, or whose files changed).
    pub read: u32,
    /// Tasks whose records were taken from the records kept beside the skeleton cache (a new
    /// process, or a new handle).
    pub cached: u32,
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
    /// Whether each aligned task had a parent at the last sync: a report counts a task's opening
    /// message and its conversation by it, so a block is summed again when it changes.
    rooted: Vec<bool>,
    /// The kept records of each store of the handle (when it has a cache root).
    kept: Vec<KeptStore>,
    /// Kept records that did not check out, said in the next report.
    problems: Vec<String>,
    /// The first report was answered from the blocks an earlier process kept
    /// ([`UsageIndex::report`]): the next ones sync in full.
    blocks_taken: bool,
    /// When this index last kept a report's blocks.
    blocks_written: Option<Instant>,
}

/// The kept records of one store: the file, read at the first sync and then let go, and how
/// many of the store's tasks it no longer holds as the index does.
#[derive(Debug)]
struct KeptStore {
    path: std::path::PathBuf,
    file: Option<kept::KeptFile>,
    outdated: usize,
    /// When this index last wrote the file.
    written: Option<Instant>,
}

/// A long-lived index writes its file again for a few changed tasks at most this often (a new
/// process reads those few again from their folders meanwhile).
const REWRITE_EVERY_SECS: u64 = 30;

/// Where [`read_tasks`] took a task's records from.
enum Source {
    Folder,
    Kept,
    /// The kept records did not check out (why): read from the folder.
    Damaged(String),
}

/// Read the usage of the handle's tasks at `positions`: from the kept records of its store when
/// they hold the task at its signature, else from its folder.
fn read_tasks(
    store: &TaskStore,
    positions: &[usize],
    kept: &[KeptStore],
) -> Vec<(usize, Entry, Source)> {
    let skeletons = store.skeletons();
    positions
        .par_iter()
        .map(|&i| {
            let s = &skeletons[i];
            let sig = store.signature(i).unwrap_or_default();
            let file = store
                .store_of(i)
                .and_then(|n| kept.get(n))
                .and_then(|k| k.file.as_ref());
            let held = file.and_then(|f| f.get(&s.task_id, sig_hash(&sig)));
            let (usage, source) = match held {
                Some(Ok(usage)) => (usage, Source::Kept),
                other => {
                    let usage = match store.task_dir(&s.task_id) {
                        Some(dir) => records::read_task_usage(&dir, s),
                        None => TaskUsage::default(),
                    };
                    match other {
                        Some(Err(why)) => (usage, Source::Damaged(why)),
                        _ => (usage, Source::Folder),
                    }
                }
            };
            let entry = Entry {
                sig,
                usage: Arc::new(usage),
            };
            (i, entry, source)
        })
        .collect()
}

impl UsageIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bring the index in line with `store`: read the tasks that are new or whose signature
    /// changed (from the kept records when this index has not read them yet), drop the tasks that
    /// are gone, and keep the records again when they changed.
    pub fn sync(&mut self, store: &TaskStore) -> SyncReport {
        let start = Instant::now();
        self.open_kept(store);
        // The same layout: the same task at each position, no id compared.
        let same_layout =
            self.layout == Some(store.layout()) && self.aligned.len() == store.skeletons().len();
        let mut report = if same_layout {
            self.sync_in_place(store)
        } else {
            self.memo = None;
            self.sync_by_id(store)
        };
        self.forget_relinked(store, same_layout);
        self.revision = store.revision();
        self.keep(store);
        report.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
        report
    }

    /// The first sync of a handle with a cache root: the kept records of each of its stores.
    fn open_kept(&mut self, store: &TaskStore) {
        let Some(root) = store.cache_root() else {
            return;
        };
        if !self.kept.is_empty() || self.layout.is_some() {
            return;
        }
        for info in store.stores() {
            let path = kept::store_file(root, std::path::Path::new(&info.tasks_dir));
            let file = kept::KeptFile::open(&path);
            self.problems.extend(file.problem.clone());
            self.kept.push(KeptStore {
                path,
                outdated: file.len(),
                file: Some(file),
                written: None,
            });
        }
    }

    /// Take in what [`read_tasks`] read: counts by source, damaged records said, each store's
    /// kept file marked out of date for the tasks read from folders.
    fn take_read(
        &mut self,
        store: &TaskStore,
        read: Vec<(usize, Entry, Source)>,
        report: &mut SyncReport,
    ) -> Vec<(usize, Entry)> {
        let mut out = Vec::with_capacity(read.len());
        for (i, entry, source) in read {
            let n = store.store_of(i);
            let k = n.and_then(|n| self.kept.get_mut(n));
            match source {
                Source::Kept => {
                    report.cached += 1;
                    // Held by the file as it is: one task fewer the file lacks.
                    if let Some(k) = k {
                        k.outdated = k.outdated.saturating_sub(1);
                    }
                }
                Source::Folder | Source::Damaged(_) => {
                    report.read += 1;
                    if let Source::Damaged(why) = source {
                        self.problems.push(why);
                    }
                    if let Some(k) = k {
                        k.outdated += 1;
                    }
                }
            }
            out.push((i, entry));
        }
        out
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
        let mut report = SyncReport::default();
        let read = read_tasks(store, &stale, &self.kept);
        let read = self.take_read(store, read, &mut report);
        let n = read.len() as u32;
        for (i, entry) in read {
            self.entries
                .insert(self.aligned_ids[i].to_string(), entry.clone());
            self.aligned[i] = entry;
        }
        report.kept = self.aligned.len() as u32 - n;
        report
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
        let read = read_tasks(store, &stale, &self.kept);
        let read = self.take_read(store, read, &mut report);
        let taken = read.len() as u32;
        for (i, entry) in read {
            self.entries.insert(skeletons[i].task_id.clone(), entry);
        }
        if self.entries.len() > skeletons.len() {
            let before = self.entries.len();
            self.entries
                .retain(|id, _| store.header(id).is_some_and(|h| h.is_ok()));
            report.dropped = (before - self.entries.len()) as u32;
            for k in &mut self.kept {
                k.outdated += report.dropped as usize;
            }
        }
        report.kept = skeletons.len() as u32 - taken;
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

    /// A task that gained or lost its parent in place (a relink, with no file of its own
    /// changed) counts its opening message and conversation otherwise: the blocks of the last
    /// report holding such tasks are summed again.
    fn forget_relinked(&mut self, store: &TaskStore, same_layout: bool) {
        let rooted: Vec<bool> = store
            .skeletons()
            .iter()
            .map(|s| s.parent_task_id.is_none())
            .collect();
        if same_layout && rooted.len() == self.rooted.len() {
            let moved: Vec<usize> = (0..rooted.len())
                .filter(|&i| rooted[i] != self.rooted[i])
                .collect();
            if let (Some(memo), false) = (&mut self.memo, moved.is_empty()) {
                memo.forget(&moved);
            }
        }
        self.rooted = rooted;
    }

    /// Write the kept records of each store whose file is out of date: at once the first time
    /// (a one-shot run leaves them for the next), then, for a few changed tasks, at most every
    /// [`REWRITE_EVERY_SECS`] (a long-lived handle does not rewrite the file at each change).
    fn keep(&mut self, store: &TaskStore) {
        let mut per_store: Vec<usize> = vec![0; self.kept.len()];
        for i in 0..self.aligned.len() {
            if let Some(c) = store.store_of(i).and_then(|n| per_store.get_mut(n)) {
                *c += 1;
            }
        }
        for (n, k) in self.kept.iter_mut().enumerate() {
            // The file's bodies serve the first sync only.
            k.file = None;
            let due = k.written.is_none_or(|w| {
                w.elapsed().as_secs() >= REWRITE_EVERY_SECS || k.outdated * 50 >= per_store[n]
            });
            if k.outdated == 0 || !due {
                continue;
            }
            let tasks = (0..self.aligned.len())
                .filter(|&i| store.store_of(i) == Some(n))
                .map(|i| {
                    let e = &self.aligned[i];
                    (&*self.aligned_ids[i], sig_hash(&e.sig), e.usage.as_ref())
                });
            match kept::write(&k.path, tasks) {
                Ok(()) => {
                    k.outdated = 0;
                    k.written = Some(Instant::now());
                }
                Err(e) => {
                    self.problems.push(format!(
                        "the usage records could not be kept in {} ({e}): the next run reads the changed tasks again",
                        k.path.display()
                    ));
                    // Not tried again at every sync.
                    k.written = Some(Instant::now());
                }
            }
        }
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

    /// Sync with `store`, then build the report `opts` asks for. A new index's first report
    /// takes the blocks an earlier process kept for the same options (module
    /// `report::kept_blocks`) where the handle still gives them, and reads the records of the
    /// other blocks' tasks only (from the kept records, or their folders); the index then holds
    /// none of them, and its next report syncs in full.
    pub fn report(
        &mut self,
        store: &TaskStore,
        opts: &ReportOptions,
    ) -> Result<UsageReport, UsageError> {
        let start = Instant::now();
        let fresh = self.layout.is_none() && !self.blocks_taken;
        let taken = fresh
            .then(|| report::kept_blocks::take(store, opts))
            .flatten();
        let from_blocks = taken.is_some();
        let (sync, mut memo, fingerprints) = match taken {
            Some(t) => {
                self.blocks_taken = true;
                let mut sync = self.read_for_blocks(store, &t.to_read);
                // Taking the blocks and reading the other tasks' records.
                sync.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
                (sync, Some(t.memo), Some(t.fingerprints))
            }
            None => (self.sync(store), self.memo.take(), None),
        };
        let built = report::build(store, self, &mut memo, opts);
        self.memo = memo;
        if from_blocks {
            self.entries.clear();
            self.kept.clear();
        }
        let (mut r, blocks) = built?;
        let due = (self.blocks_written).is_none_or(|w| w.elapsed().as_secs() >= REWRITE_EVERY_SECS);
        if blocks.summed > 0 && due {
            self.keep_blocks(store, fingerprints);
        }
        r.warnings.append(&mut self.problems);
        r.sync = SyncReport {
            blocks_summed: blocks.summed,
            blocks_kept: blocks.kept,
            ..sync
        };
        Ok(r)
    }

    /// The records of the tasks at `positions` only, for a report from kept blocks: the tasks of
    /// the blocks it sums.
    fn read_for_blocks(&mut self, store: &TaskStore, positions: &[usize]) -> SyncReport {
        let mut sync = SyncReport::default();
        if !positions.is_empty() {
            self.open_kept(store);
            let read = read_tasks(store, positions, &self.kept);
            let skeletons = store.skeletons();
            for (i, entry) in self.take_read(store, read, &mut sync) {
                self.entries.insert(skeletons[i].task_id.clone(), entry);
            }
        }
        sync.kept = (store.skeletons().len() - positions.len()) as u32;
        sync
    }

    /// Keep the last report's blocks for the next process (`fingerprints`: the handle's, when
    /// already known); a failure is said in the report.
    fn keep_blocks(&mut self, store: &TaskStore, fingerprints: Option<Vec<u64>>) {
        let Some(memo) = &self.memo else {
            return;
        };
        match report::kept_blocks::keep(store, memo, fingerprints) {
            Ok(()) => self.blocks_written = Some(Instant::now()),
            Err(e) => self.problems.push(format!(
                "the report's sums could not be kept beside the cache ({e}): the next run sums them again"
            )),
        }
    }
}
