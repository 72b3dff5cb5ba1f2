//! One handle over the task stores a caller works with: the linked skeleton headers of every
//! task, kept in memory, refreshed incrementally, and queried in place (tree, ancestors,
//! descendants, filtered and paged lists, lookup by id or unique prefix).
//!
//! - [`TaskStore::open`] takes the tasks folders given (or every store found) and loads each from
//!   its skeleton cache, building or refreshing the cache first; without a cache root it scans.
//! - [`TaskStore::refresh`] stats every task folder, parses again only the tasks whose files
//!   changed (and new ones), drops those that are gone, runs the hierarchy over the whole handle and
//!   records the change in the cache by appending (new skeleton lines and a journal of changed
//!   entries), not by rewriting it. When the journal has grown to a quarter of the data, the
//!   cache is rewritten whole, once.
//! - Queries run in Rust over the headers; only what a caller shows crosses to JavaScript. The
//!   bulk form, [`TaskStore::headers_json`], is one JSON document (`views.rs`).

use crate::cache::{self, BuildOptions, FolderMark, Stamp, TaskSig, TaskUpdate};
use crate::discover::{discover_storage, DiscoverOptions};
use crate::{HostEnv, Result, StoreError};
use rayon::prelude::*;
use roo_formats::diag::Diagnostic;
use roo_state::hierarchy::{self, HierarchyMetrics, HierarchyOptions, KeyMemo};
use roo_state::skeleton::{analyze_task, AnalyzeOptions};
use roo_state::ConversationSkeleton;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

mod changes;
mod children;
mod copies;
mod lazy;
mod lean_json;
mod list;
mod stamps;
mod take_in;
mod views;
mod watch;

pub(crate) use children::{lean_out, TextHashes};
pub use copies::{AlsoIn, SharedTask};
pub(crate) use lean_json::lean_header;
pub use list::{ListKey, ListPage, ListQuery, SortKey};
pub use views::{Fields, Picked, HEADER_FIELDS};
pub use watch::WatchStatus;

/// Options of [`TaskStore::open`].
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// The tasks folders (`…/tasks`). Empty: every store discovered on this machine.
    pub tasks_dirs: Vec<PathBuf>,
    /// Our cache directory; `None`: no cache, every open and refresh stats and parses.
    pub cache_root: Option<PathBuf>,
    /// `false`: every parent link is inferred from instructions.
    pub ignore_stored_links: bool,
    /// Stat every file of every task on each refresh, even where a folder's time could stand
    /// for its files ([`cache::Folders`]).
    pub every_file: bool,
}

/// What a long open reports and who may stop it (see [`TaskStore::open_with`]).
#[derive(Default, Clone, Copy)]
pub struct Watch<'a> {
    /// `(tasks parsed, tasks to parse)` of the store being read.
    pub on_progress: Option<cache::ProgressFn<'a>>,
    /// Set: the open stops between tasks with [`StoreError::Aborted`].
    pub cancel: Option<&'a AtomicBool>,
}

impl Watch<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// One task of the handle.
#[derive(Debug, Clone)]
struct Task {
    store: usize,
    sig: TaskSig,
    /// Its folder's mark from the pass that took `sig`.
    folder: Option<FolderMark>,
    /// What its header's child calls keep outside it (module `children`).
    apart: Option<Box<children::Apart>>,
}

impl Task {
    fn new(store: usize, stamp: Stamp, todos: Option<Box<str>>) -> Task {
        let apart = todos.map(children::Apart::todos);
        Task {
            store,
            sig: stamp.sig,
            folder: stamp.folder,
            apart,
        }
    }
}

/// One tasks folder of the handle.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "TaskStoreInfo"),
    ts(optional_fields)
)]
pub struct StoreInfo {
    pub tasks_dir: String,
    /// The host family the folder's path names, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub tasks: u32,
    #[serde(skip)]
    generation: u64,
    #[serde(skip)]
    journal_bytes: u64,
    #[serde(skip)]
    data_bytes: u64,
    /// The hierarchy metrics the cache holds for this store, when current (the open takes them).
    #[serde(skip)]
    cached_hierarchy: Option<HierarchyMetrics>,
    /// Taken from a cache some tasks changed since: the open refreshes them.
    #[serde(skip)]
    stale: bool,
}

/// What [`TaskStore::refresh`] did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "TaskStoreRefresh"))]
pub struct RefreshReport {
    pub tasks: u32,
    pub added: u32,
    pub changed: u32,
    pub removed: u32,
    /// Tasks parsed that gave no skeleton.
    pub failed: u32,
    /// Unchanged tasks whose link (parent, root or evidence) the hierarchy changed.
    pub relinked: u32,
    /// Task folders whose files were not stat'ed because the folder's modification time stood
    /// for them (a store whose host writes by rename; see `everyFile`).
    pub folders_trusted: u32,
    /// How the cache took the change: `none`, `appended`, `rewritten`, or `disabled`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "\"none\" | \"appended\" | \"rewritten\" | \"disabled\"")
    )]
    pub cache: String,
    /// The handle's watch saw nothing change since the last pass: no folder was stat'ed
    /// ([`TaskStore::watch`]).
    pub watched: bool,
    pub elapsed_ms: f64,
}

/// The outcome of looking a task up by id or prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Found(usize),
    NotFound,
    /// Several ids start with the prefix: the first few.
    Ambiguous(Vec<String>),
}

/// The handle. See the [module documentation](self).
pub struct TaskStore {
    cache_root: Option<PathBuf>,
    /// [`OpenOptions::every_file`].
    every_file: bool,
    /// Refreshes so far: which slice of folders the next one stats in full.
    passes: usize,
    hierarchy: HierarchyOptions,
    stores: Vec<StoreInfo>,
    /// Sorted by task id; `skeletons[i]` belongs to `tasks[i]`.
    tasks: Vec<Task>,
    skeletons: Vec<ConversationSkeleton>,
    metrics: HierarchyMetrics,
    /// Tasks without a skeleton and stores that could not be read.
    diagnostics: Vec<Diagnostic>,
    /// Task id → its folder's diagnostics when it has no skeleton (kept for refresh).
    failed: HashMap<String, (usize, TaskSig, Vec<Diagnostic>)>,
    /// The normalised instructions of the last hierarchy pass: the next one normalises only the
    /// texts of changed tasks.
    keys: KeyMemo,
    /// See [`TaskStore::layout`] and [`TaskStore::changed_since`] (module `changes`).
    layout: u64,
    revision: u64,
    changes: std::collections::VecDeque<(u64, Vec<usize>)>,
    /// Sort orders and the tree JSON kept between refreshes.
    views: views::Views,
    /// The copies not shown of tasks several stores hold, in (id, store) order (module
    /// `copies`).
    copies: Vec<copies::Copy>,
    /// Opened from the headers' summary and not yet filled (module `lazy`).
    partial: bool,
    /// When this handle last wrote its store's summary.
    summary_at: Option<Instant>,
    /// The first store's folders, listed while the summary was read (the first refresh's).
    listed: Option<Vec<(String, PathBuf)>>,
    /// The system's watch of the folders (module `watch`), or why there is none.
    watch: Option<watch::FolderWatch>,
    unwatched: Option<String>,
}

/// A task parsed by a refresh: its store, id, signature, unlinked header (or why it has none).
type Fresh = (
    usize,
    String,
    Stamp,
    Option<ConversationSkeleton>,
    Vec<Diagnostic>,
);

/// A task folder a refresh found: its store, id, path and stamp.
type OnDisk = (usize, String, PathBuf, Stamp);

/// A task read again by a refresh: its store, id, signature, and header or diagnostics.
type Parsed = (
    usize,
    String,
    Stamp,
    std::result::Result<ConversationSkeleton, Vec<Diagnostic>>,
);

fn header_options() -> AnalyzeOptions {
    AnalyzeOptions {
        include_sequence: false,
        ..AnalyzeOptions::default()
    }
}

impl TaskStore {
    /// Open the stores of `opts`. A store that cannot be read becomes a diagnostic when there are
    /// several; with one, its error is returned.
    pub fn open(env: &HostEnv, opts: &OpenOptions) -> Result<TaskStore> {
        Self::open_with(env, opts, Watch::default())
    }

    /// [`TaskStore::open`] with progress and cancellation (a first open of a large store parses
    /// every task).
    pub fn open_with(env: &HostEnv, opts: &OpenOptions, watch: Watch<'_>) -> Result<TaskStore> {
        let dirs: Vec<PathBuf> = if opts.tasks_dirs.is_empty() {
            discover_storage(env, &DiscoverOptions::default())
                .locations
                .into_iter()
                .map(|l| PathBuf::from(l.tasks_dir))
                .collect()
        } else {
            opts.tasks_dirs.clone()
        };
        let mut store = TaskStore::empty(opts);
        let mut loaded: Vec<cache::CachedTasks> = Vec::new();
        let single = dirs.len() == 1;
        for dir in dirs {
            match store.load_store(&dir, watch) {
                Ok((info, tasks)) => {
                    store.stores.push(info);
                    loaded.push(tasks);
                }
                Err(e) if single || matches!(e, StoreError::Aborted) => return Err(e),
                Err(e) => store.diagnostics.push(Diagnostic::new(
                    dir.display().to_string(),
                    "",
                    roo_formats::DiagCode::Unreadable,
                    roo_formats::Severity::Error,
                    e.to_string(),
                )),
            }
        }
        let (notes, texts) = store.take_in(loaded);
        store.diagnostics.extend(unread_files(&store.skeletons));
        // One store whose cache holds current metrics: its links and metrics as they are. Links
        // across stores, a scan without cache, or metrics a journal made stale: the hierarchy over
        // everything. (Taken, not copied: the metrics can hold thousands of issues.)
        let cached = match store.stores.as_mut_slice() {
            [one] => one.cached_hierarchy.take(),
            _ => None,
        };
        match cached {
            Some(metrics) => store.metrics = metrics,
            None => {
                store.relink();
            }
        }
        store.keep_apart_with(texts);
        if store.stores.iter().any(|s| s.stale) {
            // A refresh that changes something states the tasks' diagnostics anew.
            if store.refresh()?.cache != "none" {
                store.diagnostics.splice(0..0, notes);
            }
        }
        Ok(store)
    }

    /// A handle with no store yet.
    fn empty(opts: &OpenOptions) -> TaskStore {
        TaskStore {
            cache_root: opts.cache_root.clone(),
            every_file: opts.every_file,
            passes: cache::clock_slice(),
            hierarchy: HierarchyOptions {
                use_stored_links: !opts.ignore_stored_links,
                ..HierarchyOptions::default()
            },
            stores: Vec::new(),
            tasks: Vec::new(),
            skeletons: Vec::new(),
            metrics: HierarchyMetrics::default(),
            diagnostics: Vec::new(),
            failed: HashMap::new(),
            keys: KeyMemo::default(),
            layout: changes::next_layout(),
            revision: 0,
            changes: Default::default(),
            views: views::Views::default(),
            copies: Vec::new(),
            partial: false,
            summary_at: None,
            listed: None,
            watch: None,
            unwatched: None,
        }
    }

    /// One store's tasks: from the cache (built or refreshed first), else parsed.
    fn load_store(
        &mut self,
        dir: &Path,
        watch: Watch<'_>,
    ) -> Result<(StoreInfo, cache::CachedTasks)> {
        let tasks_dir = cache::checked_tasks_dir(dir)?;
        let host = roo_state::skeleton::source_in_path(&tasks_dir).map(str::to_owned);
        if let Some(root) = &self.cache_root {
            let (damage, snap) = cache::open_snapshot(
                &tasks_dir,
                &BuildOptions {
                    on_progress: watch.on_progress,
                    cancel: watch.cancel,
                    every_file: self.every_file,
                    ..BuildOptions::new(root)
                },
            )?;
            // A damaged cache was repaired: the handle says so in its diagnostics.
            self.diagnostics.extend(damage);
            if let Some(snap) = snap {
                let info = StoreInfo {
                    tasks_dir: tasks_dir.display().to_string(),
                    host,
                    tasks: snap.tasks.len() as u32,
                    generation: snap.generation,
                    journal_bytes: snap.journal_bytes,
                    data_bytes: snap.data_bytes,
                    cached_hierarchy: snap.hierarchy,
                    stale: snap.stale,
                };
                return Ok((info, snap.tasks));
            }
        }
        let dirs = cache::list_tasks(&tasks_dir)?;
        let opts = header_options();
        let done = AtomicUsize::new(0);
        let tasks: Vec<_> = dirs
            .par_iter()
            .map(|(id, d)| {
                if watch.cancelled() {
                    return None;
                }
                let sig = cache::task_sig(d);
                // The todos taken out where the header was parsed, so what is dropped is freed there.
                let parsed = analyze_task(id, d, &opts).map(|mut s| {
                    let todos = lean_out(&mut s);
                    (s, todos)
                });
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(p) = watch.on_progress {
                    p(n, dirs.len());
                }
                Some((id.clone(), sig, parsed))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or(StoreError::Aborted)?;
        let tasks = cache::CachedTasks::from_scan(tasks);
        Ok((
            StoreInfo {
                tasks_dir: tasks_dir.display().to_string(),
                host,
                tasks: tasks.len() as u32,
                generation: 0,
                journal_bytes: 0,
                data_bytes: 0,
                cached_hierarchy: None,
                stale: false,
            },
            tasks,
        ))
    }

    /// The position of the task `id` among the headers (kept in id order).
    fn position_of(&self, id: &str) -> Option<usize> {
        (self.skeletons)
            .binary_search_by(|s| s.task_id.as_str().cmp(id))
            .ok()
    }

    /// The hierarchy over every task of the handle; returns the positions whose link (parent,
    /// root or evidence) changed, each with whether its parent did.
    fn relink(&mut self) -> Vec<(usize, bool)> {
        // The pass sets every root and evidence anew: the old ones are taken, not copied.
        let before: Vec<_> = (self.skeletons.iter_mut())
            .map(|s| {
                let root = s.root_task_id.take();
                (s.parent_task_id.clone(), root, s.parent_evidence.take())
            })
            .collect();
        let taken = std::mem::take(&mut self.skeletons);
        let (linked, metrics) =
            hierarchy::reconstruct_hierarchy_with(taken, &self.hierarchy, &mut self.keys);
        self.skeletons = linked;
        self.metrics = metrics;
        (self.skeletons.iter().zip(before).enumerate())
            .filter_map(|(i, (s, (parent, root, evidence)))| {
                let moved = s.parent_task_id != parent;
                (moved || s.root_task_id != root || s.parent_evidence != evidence)
                    .then_some((i, moved))
            })
            .collect()
    }

    /// Stat every task folder; parse again what changed; relink; record the change in the cache.
    /// A watched handle ([`TaskStore::watch`]) that saw nothing change stats nothing.
    pub fn refresh(&mut self) -> Result<RefreshReport> {
        if let Some(report) = self.unchanged_since_last_pass() {
            return Ok(report);
        }
        let pass = self.refresh_pass();
        self.after_pass(pass.as_ref().ok().map(|r| r.tasks));
        pass
    }

    /// [`TaskStore::refresh`]'s pass over every folder.
    fn refresh_pass(&mut self) -> Result<RefreshReport> {
        let start = Instant::now();
        let mut report = RefreshReport::default();
        // What is on disk now, per store.
        let on_disk = self.stamp_stores(&mut report)?;
        let compared = self.compare(&on_disk, &mut report);
        let (unchanged, gone) = (compared.is_empty(), compared.gone.clone());
        let (parsed, copies_parsed, copies_gone) = self.parse_changed(compared);
        if parsed.is_empty() && gone.is_empty() {
            // Nothing, or only copies not shown, changed: their own stores' caches take them.
            report.cache = match unchanged {
                true => "none".into(),
                false => self.record(&copies_parsed, &[], &copies_gone)?,
            };
            report.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
            return Ok(report);
        }
        // Headers whole for the hierarchy pass (and for tasks whose instruction changes).
        self.fill()?;
        self.messages_in();
        // Changed tasks that still give a skeleton take their old slot; anything added, removed or
        // now failing rebuilds the lists in id order.
        let in_place = gone.is_empty()
            && parsed
                .iter()
                .all(|p| p.3.is_ok() && self.position_of(&p.1).is_some());
        let mut fresh: Vec<Fresh> = Vec::new();
        self.revision += 1;
        // The headers changed in place, each with where it sat in a tree before (its parent
        // after the pass below is compared with the one it had).
        let mut in_tree: Vec<(usize, TreePlace)> = Vec::new();
        if in_place {
            let mut positions = Vec::with_capacity(parsed.len());
            for (n, id, sig, r) in parsed {
                if let (Ok(s), Some(i)) = (r, self.position_of(&id)) {
                    in_tree.push((i, TreePlace::of(&self.skeletons[i])));
                    fresh.push((n, id, sig, Some(s.clone()), Vec::new()));
                    self.tasks[i] = Task::new(n, sig, None);
                    self.skeletons[i] = s;
                    positions.push(i);
                }
            }
            self.remember_changes(positions);
        } else {
            self.apply_rebuilt(parsed, &gone, &mut fresh, &mut report);
            self.new_layout();
        }
        let relinked = self.relink();
        let parsed_ids: std::collections::HashSet<&str> =
            fresh.iter().map(|f| f.1.as_str()).collect();
        let relinked: Vec<(usize, bool)> = relinked
            .into_iter()
            .filter(|&(i, _)| !parsed_ids.contains(self.skeletons[i].task_id.as_str()))
            .collect();
        let parent_moved = relinked.iter().any(|&(_, moved)| moved);
        let relinked: Vec<usize> = relinked.into_iter().map(|(i, _)| i).collect();
        // A tree kept from before is patched where nothing moved in it, else rebuilt.
        let moved = !in_place
            || parent_moved
            || (in_tree.iter()).any(|(i, place)| *place != TreePlace::of(&self.skeletons[*i]));
        let identity = |i: usize| hierarchy::task_identity(&self.skeletons[i].task_id);
        if moved {
            let parsed = fresh.iter().map(|f| hierarchy::task_identity(&f.1));
            let changed = parsed.chain(relinked.iter().map(|&i| identity(i)));
            self.views.moved(changed.collect::<Vec<_>>());
        } else {
            let changed = in_tree
                .iter()
                .map(|&(i, _)| i)
                .chain(relinked.iter().copied());
            let changed: Vec<_> = changed.map(|i| (i, identity(i))).collect();
            self.views.changed_in_place(changed);
        }
        report.relinked = relinked.len() as u32;
        self.diagnostics = self
            .failed
            .values()
            .flat_map(|f| f.2.iter().cloned())
            .chain(unread_files(&self.skeletons))
            .collect();

        // The copies parsed go to their own stores' caches, as any task parsed does.
        fresh.extend(copies_parsed);
        let mut removed = gone;
        removed.extend(copies_gone);
        report.cache = self.record(&fresh, &relinked, &removed)?;
        self.keep_apart();
        self.keep_summary(false);
        report.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
        Ok(report)
    }

    /// Drop what is gone or was parsed again, add the parsed versions, and keep the id order.
    fn apply_rebuilt(
        &mut self,
        parsed: Vec<Parsed>,
        gone: &[(usize, String)],
        fresh: &mut Vec<Fresh>,
        report: &mut RefreshReport,
    ) {
        let mut drop: std::collections::HashSet<&str> =
            gone.iter().map(|(_, id)| id.as_str()).collect();
        drop.extend(parsed.iter().map(|p| p.1.as_str()));
        let mut tasks = Vec::with_capacity(self.tasks.len() + parsed.len());
        let mut skeletons = Vec::with_capacity(self.skeletons.len() + parsed.len());
        for (t, s) in std::mem::take(&mut self.tasks)
            .into_iter()
            .zip(std::mem::take(&mut self.skeletons))
        {
            if !drop.contains(s.task_id.as_str()) {
                tasks.push(t);
                skeletons.push(s);
            }
        }
        self.failed.retain(|id, _| !drop.contains(id.as_str()));
        // Unlinked headers of the parsed tasks, as the cache stores them.
        for (n, id, sig, r) in parsed {
            match r {
                Ok(s) => {
                    fresh.push((n, id, sig, Some(s.clone()), Vec::new()));
                    tasks.push(Task::new(n, sig, None));
                    skeletons.push(s);
                }
                Err(d) => {
                    report.failed += 1;
                    self.failed.insert(id.clone(), (n, sig.sig, d.clone()));
                    fresh.push((n, id, sig, None, d));
                }
            }
        }
        // Keep the id order.
        let mut order: Vec<usize> = (0..skeletons.len()).collect();
        order.sort_by(|&a, &b| skeletons[a].task_id.cmp(&skeletons[b].task_id));
        let mut slots: Vec<Option<(Task, ConversationSkeleton)>> =
            tasks.into_iter().zip(skeletons).map(Some).collect();
        for i in order {
            if let Some((t, s)) = slots[i].take() {
                self.tasks.push(t);
                self.skeletons.push(s);
            }
        }
    }

    /// Record a refresh in each touched store's cache: appended, or rewritten when the journal
    /// has grown large or another process rebuilt the cache meanwhile.
    fn record(
        &mut self,
        fresh: &[Fresh],
        relinked: &[usize],
        gone: &[(usize, String)],
    ) -> Result<String> {
        let Some(root) = self.cache_root.clone() else {
            return Ok("disabled".into());
        };
        let mut outcome = "appended";
        for n in 0..self.stores.len() {
            let link_of = |id: &str| -> cache::Link {
                match self.position_of(id).and_then(|i| self.skeletons.get(i)) {
                    Some(s) => (
                        s.parent_task_id.clone(),
                        s.root_task_id.clone(),
                        s.parent_evidence.clone(),
                    ),
                    None => (None, None, None),
                }
            };
            let mut updates: Vec<TaskUpdate<'_>> = Vec::new();
            for (store, id, sig, s, d) in fresh {
                if *store == n {
                    updates.push(TaskUpdate::Parsed {
                        id,
                        sig: sig.sig,
                        folder: sig.folder,
                        skeleton: s.as_ref(),
                        diagnostics: d,
                        link: link_of(id),
                    });
                }
            }
            for &i in relinked {
                if self.tasks.get(i).is_some_and(|t| t.store == n) {
                    let id = self.skeletons[i].task_id.as_str();
                    updates.push(TaskUpdate::Relinked {
                        id,
                        link: link_of(id),
                    });
                }
            }
            let store_dir = PathBuf::from(&self.stores[n].tasks_dir);
            for (store, id) in gone {
                if *store == n {
                    updates.push(TaskUpdate::Removed { id });
                }
            }
            if updates.is_empty() {
                continue;
            }
            let info = &self.stores[n];
            let generation = info.generation;
            let large = info.journal_bytes * 4 > info.data_bytes.max(1 << 16);
            let appended = if large {
                None
            } else {
                cache::append_updates(&root, &store_dir, generation, &updates)?
            };
            if let Some(journal_bytes) = appended {
                self.stores[n].journal_bytes = journal_bytes;
                // The metrics are the store's own only when the handle holds that one store.
                if self.stores.len() == 1 {
                    cache::write_hierarchy_note(
                        &root,
                        &store_dir,
                        generation,
                        journal_bytes,
                        &self.metrics,
                    );
                }
            } else {
                cache::build_skeleton_cache(
                    std::slice::from_ref(&store_dir),
                    &BuildOptions::new(&root),
                )?;
                // A full build drops the journal.
                if let Some((generation, data_bytes)) = cache::cache_generation(&root, &store_dir) {
                    self.stores[n].generation = generation;
                    self.stores[n].journal_bytes = 0;
                    self.stores[n].data_bytes = data_bytes;
                }
                outcome = "rewritten";
            }
        }
        for (n, info) in self.stores.iter_mut().enumerate() {
            let copies = self.copies.iter().filter(|c| c.store == n).count();
            info.tasks = (self.tasks.iter().filter(|t| t.store == n).count() + copies) as u32;
        }
        Ok(outcome.into())
    }

    /// The stores of the handle.
    pub fn stores(&self) -> &[StoreInfo] {
        &self.stores
    }

    /// Every linked header, in task id order, as the handle keeps it: child calls without their
    /// todos, and with an empty message where it is another task's instruction
    /// ([`TaskStore::whole`] gives a header whole).
    pub fn skeletons(&self) -> &[ConversationSkeleton] {
        &self.skeletons
    }

    /// The signature (size and time of each source file) of the task at `i` of
    /// [`TaskStore::skeletons`]: it changes whenever one of the task's files does, so a reader
    /// that keeps something per task knows what to read again after a refresh.
    pub fn signature(&self, i: usize) -> Option<cache::TaskSig> {
        self.tasks.get(i).map(|t| t.sig)
    }

    /// What the last hierarchy pass did (after an open from a current cache: its last build's).
    pub fn metrics(&self) -> &HierarchyMetrics {
        &self.metrics
    }

    /// Tasks without a skeleton and stores that could not be read.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The linked headers, whole, sorted by task id (the handle given up).
    pub fn into_skeletons(mut self) -> Vec<ConversationSkeleton> {
        // A partial handle that cannot be filled gives its headers as they are.
        let _ = self.fill();
        self.all_in();
        self.skeletons
    }

    /// A task's linked header by its exact id, or the diagnostics of why its folder has none.
    /// `None`: no folder of that name in the handle's stores.
    pub fn header(
        &self,
        task_id: &str,
    ) -> Option<std::result::Result<&ConversationSkeleton, &[Diagnostic]>> {
        if let Some(s) = self
            .position_of(task_id)
            .and_then(|i| self.skeletons.get(i))
        {
            return Some(Ok(s));
        }
        self.failed
            .get(task_id)
            .map(|(_, _, diags)| Err(diags.as_slice()))
    }

    /// Open `tasks_dirs` with our skeleton cache in its usual place ([`HostEnv::cache_root`]) or,
    /// when that cache cannot be used (an unwritable cache folder, one inside the extension's
    /// folders), by reading the folders. The second value says why the cache was left out.
    pub fn open_with_default_cache(
        env: &HostEnv,
        tasks_dirs: Vec<PathBuf>,
        watch: Watch<'_>,
    ) -> Result<(TaskStore, Option<String>)> {
        let mut opts = OpenOptions {
            tasks_dirs,
            cache_root: Some(env.cache_root(None)),
            ignore_stored_links: false,
            every_file: false,
        };
        match Self::open_with(env, &opts, watch) {
            Ok(s) => Ok((s, None)),
            Err(e @ (StoreError::Aborted | StoreError::NotFound { .. })) => Err(e),
            Err(e) => {
                opts.cache_root = None;
                let why = format!("the skeleton cache was not used ({e}); every task was read");
                Self::open_with(env, &opts, watch).map(|s| (s, Some(why)))
            }
        }
    }

    /// The folder of a task.
    pub fn task_dir(&self, task_id: &str) -> Option<PathBuf> {
        let i = self.position_of(task_id)?;
        let t = self.tasks.get(i)?;
        crate::find::task_folder(Path::new(&self.stores.get(t.store)?.tasks_dir), task_id)
    }
}

/// What places a task in a tree: its parent, its creation date (the order of siblings), its
/// workspace (a tree's filter) and its data source (the order of tasks of one id).
#[derive(PartialEq)]
struct TreePlace {
    parent: Option<String>,
    created_at: String,
    workspace: Option<String>,
    data_source: String,
}

impl TreePlace {
    fn of(s: &ConversationSkeleton) -> Self {
        TreePlace {
            parent: s.parent_task_id.clone(),
            created_at: s.metadata.created_at.clone(),
            workspace: s.metadata.workspace.clone(),
            data_source: s.metadata.data_source.clone(),
        }
    }
}

/// The files the tasks' readers left unread (not a regular file, over the size cap, unreadable):
/// named in the handle's diagnostics as well as in the tasks' own, so that every listing says
/// which task is incomplete.
fn unread_files(skeletons: &[ConversationSkeleton]) -> Vec<Diagnostic> {
    skeletons
        .iter()
        .flat_map(|s| s.diagnostics.iter())
        .filter(|d| d.code == roo_formats::DiagCode::Unreadable)
        .cloned()
        .collect()
}
