//! A quick open: a handle of one store whose headers' summary ([`cache::summary`]) agrees with
//! the task folders is opened from it, without reading the cache file. Its headers are partial:
//! everything a list, a tree, links and a usage report read, but no instruction and no child
//! call's message or todos. [`TaskStore::fill`] reads the rest from the cache (or, for a task the
//! cache no longer holds as the handle saw it, from its folder) before anything needs it: a
//! refresh that changed something (the hierarchy pass reads instructions and messages), a whole
//! header, the bulk headers or a list page asking for those fields.
//!
//! The summary is written beside the cache by a full open of one store (when none was there or
//! it no longer agreed) and after a refresh that changed something (at most every 30 s in a
//! long-lived handle). It is never trusted beyond the folders: the handle's first refresh
//! compares every task's signature with the disk, as any refresh does, and anything changed goes
//! through the usual path.

use super::{header_options, lean_out, unread_files, StoreInfo, Task, TaskStore, TextHashes};
use super::{OpenOptions, Watch};
use crate::cache::{self, Stamped, SummaryOf};
use crate::{HostEnv, Result};
use rayon::prelude::*;
use roo_state::skeleton::analyze_task;
use roo_state::ConversationSkeleton;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A header read again from its folder: its position, its signature, the lean header and its
/// todos (`None`: the folder gave none).
type ReadAgain = (
    usize,
    cache::TaskSig,
    Option<(ConversationSkeleton, Option<Box<str>>)>,
);

/// A long-lived handle writes its summary again at most this often.
const SUMMARY_EVERY: Duration = Duration::from_secs(30);

impl TaskStore {
    /// [`TaskStore::open_with`], from the headers' summary when the handle is of one store with
    /// a cache and the summary agrees with the folders (see the module documentation): the
    /// headers are then partial until [`TaskStore::fill`]. Otherwise the usual open, which then
    /// writes the summary for the next one.
    pub fn open_quick(env: &HostEnv, opts: &OpenOptions, watch: Watch<'_>) -> Result<TaskStore> {
        if let Some(mut store) = Self::from_summary(opts) {
            store.refresh()?;
            return Ok(store);
        }
        let mut store = Self::open_with(env, opts, watch)?;
        store.keep_summary(true);
        Ok(store)
    }

    /// A handle of the one store of `opts` from its summary, not yet compared with the disk.
    fn from_summary(opts: &OpenOptions) -> Option<TaskStore> {
        let (Some(root), [dir]) = (&opts.cache_root, opts.tasks_dirs.as_slice()) else {
            return None;
        };
        let tasks_dir = cache::checked_tasks_dir(dir).ok()?;
        cache::check_cache_root(root, &tasks_dir).ok()?;
        // The folders are listed while the summary is read: the first refresh needs both.
        let (summary, listed) = rayon::join(
            || cache::read_summary(root, &tasks_dir),
            || cache::list_tasks(&tasks_dir),
        );
        let summary = summary?;
        let mut store = TaskStore::empty(opts);
        store.listed = listed.ok();
        store.stores.push(StoreInfo {
            tasks_dir: tasks_dir.display().to_string(),
            host: roo_state::skeleton::source_in_path(&tasks_dir).map(str::to_owned),
            tasks: (summary.skeletons.len() + summary.failed.len()) as u32,
            generation: 0,
            journal_bytes: 0,
            data_bytes: 0,
            cached_hierarchy: None,
            stale: false,
        });
        store.tasks = (summary.stamps.iter())
            .map(|st| Task {
                store: 0,
                sig: st.sig,
                folder: st.folder,
                apart: None,
            })
            .collect();
        store.skeletons = summary.skeletons;
        for (id, sig, diagnostics) in summary.failed {
            store.diagnostics.extend(diagnostics.iter().cloned());
            store.failed.insert(id, (0, sig, diagnostics));
        }
        store.diagnostics.extend(unread_files(&store.skeletons));
        store.metrics = summary.hierarchy;
        store.partial = true;
        Some(store)
    }

    /// Whether the headers are partial (opened from the summary and not yet filled): no
    /// instruction, no child call's message or todos.
    pub fn is_partial(&self) -> bool {
        self.partial
    }

    /// Make partial headers whole: each task's header as the cache holds it when the cache
    /// holds it at the signature the handle has, else read from its folder; the links stay the
    /// handle's. Nothing to do for a handle opened otherwise.
    pub fn fill(&mut self) -> Result<()> {
        if !self.partial {
            return Ok(());
        }
        let (Some(root), Some(info)) = (self.cache_root.clone(), self.stores.first()) else {
            self.partial = false;
            return Ok(());
        };
        let dir = PathBuf::from(&info.tasks_dir);
        let mut snap = cache::read_snapshot(&root, &dir);
        if let (Some(s), Some(info)) = (&snap, self.stores.first_mut()) {
            info.generation = s.generation;
            info.journal_bytes = s.journal_bytes;
            info.data_bytes = s.data_bytes;
        }
        let cached = snap.as_mut().map(|s| &mut s.tasks);
        let (headers, mut kept) = match cached {
            Some(t) => (
                std::mem::take(&mut t.skeletons),
                std::mem::take(&mut t.kept),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let by_id: HashMap<&str, usize> = (headers.iter().enumerate())
            .map(|(k, h)| (h.task_id.as_str(), k))
            .collect();
        let from_cache: Vec<Option<usize>> = (self.skeletons.iter().zip(&self.tasks))
            .map(|(s, t)| {
                let k = *by_id.get(s.task_id.as_str())?;
                (kept.get(k)?.sig == t.sig).then_some(k)
            })
            .collect();
        drop(by_id);
        let mut headers: Vec<Option<ConversationSkeleton>> =
            headers.into_iter().map(Some).collect();
        let mut texts: Vec<Option<TextHashes>> = Vec::with_capacity(self.skeletons.len());
        let mut todos: Vec<Option<Box<str>>> = Vec::with_capacity(self.skeletons.len());
        for (i, k) in from_cache.iter().enumerate() {
            let taken = k.and_then(|k| Some((headers.get_mut(k)?.take()?, kept.get_mut(k)?)));
            match taken {
                Some((h, c)) => {
                    whole_into(&mut self.skeletons[i], h);
                    texts.push(c.texts.take());
                    todos.push(c.todos.take());
                }
                None => {
                    texts.push(None);
                    todos.push(None);
                }
            }
        }
        // The tasks the cache does not hold as the handle saw them: read from their folders.
        let missing: Vec<usize> = (0..from_cache.len())
            .filter(|&i| from_cache[i].is_none())
            .collect();
        let read = self.read_again(&missing);
        for (i, sig, parsed) in read {
            if let Some((h, t)) = parsed {
                whole_into(&mut self.skeletons[i], h);
                self.tasks[i].sig = sig;
                todos[i] = t;
            }
        }
        for (t, todo) in self.tasks.iter_mut().zip(todos) {
            t.apart = todo.map(super::children::Apart::todos);
        }
        self.partial = false;
        self.keep_apart_with(texts);
        Ok(())
    }

    /// The headers at `positions` read from their folders, each with its signature taken first.
    fn read_again(&self, positions: &[usize]) -> Vec<ReadAgain> {
        (positions.par_iter())
            .filter_map(|&i| {
                let id = &self.skeletons[i].task_id;
                let folder = self.task_dir(id)?;
                let sig = cache::task_sig(&folder);
                let parsed = analyze_task(id, &folder, &header_options()).map(|mut s| {
                    let t = lean_out(&mut s);
                    (s, t)
                });
                Some((i, sig, parsed.ok()))
            })
            .collect()
    }

    /// Write the store's summary (a handle of one store with a cache, whole): now when `now`,
    /// else unless it was written less than [`SUMMARY_EVERY`] ago.
    pub(super) fn keep_summary(&mut self, now: bool) {
        let (Some(root), [info]) = (&self.cache_root, self.stores.as_slice()) else {
            return;
        };
        if self.partial || (!now && self.summary_at.is_some_and(|t| t.elapsed() < SUMMARY_EVERY)) {
            return;
        }
        let mut failed: Vec<_> = (self.failed.iter())
            .map(|(id, (_, sig, d))| (id.as_str(), sig, d.as_slice()))
            .collect();
        failed.sort_by(|a, b| a.0.cmp(b.0));
        let headers = (self.skeletons.iter().zip(&self.tasks))
            .map(|(s, t)| {
                let st = Stamped {
                    sig: t.sig,
                    folder: t.folder,
                };
                (s, st)
            })
            .collect();
        let summary = SummaryOf {
            tasks_dir: Path::new(&info.tasks_dir),
            headers,
            failed,
            hierarchy: &self.metrics,
        };
        cache::write_summary(root, &summary);
        self.summary_at = Some(Instant::now());
    }
}

/// `into` made whole from `h`, the same task's header as the cache or its folder gives it: its
/// instruction and child calls (with messages and todos) taken; its links, the handle's, kept.
fn whole_into(into: &mut ConversationSkeleton, mut h: ConversationSkeleton) {
    h.parent_task_id = into.parent_task_id.take();
    h.root_task_id = into.root_task_id.take();
    h.parent_evidence = into.parent_evidence.take();
    *into = h;
}
