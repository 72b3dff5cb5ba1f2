//! Where exports read skeletons from.
//!
//! Everything an export reads goes through [`SkeletonSource`]; [`open_source`] is the one function
//! that picks the implementation: [`StoreSource`], the task store handle of `roo-store` (linked
//! headers from the skeleton cache, built or refreshed first, only changed tasks read again; the
//! task folders read directly when the cache cannot be used), and each task read again, one at a
//! time, for the full skeleton an export streams out. [`TasksDirSource`] scans a folder without
//! any cache (tests compare the two).

use crate::error::{ExportError, Result};
use roo_state::skeleton::{analyze_task, AnalyzeOptions, ConversationSkeleton};
use roo_store::task_store::{OpenOptions, TaskStore, Watch};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Skeletons for exports.
pub trait SkeletonSource: Send + Sync {
    /// Every task's header (no `sequence`), with parents reconstructed.
    fn headers(&self, cancel: &AtomicBool) -> Result<Vec<ConversationSkeleton>>;
    /// One task's full skeleton (with `sequence`, content cut as `opts` says).
    fn full(&self, task_id: &str, opts: &AnalyzeOptions) -> Result<ConversationSkeleton>;
    /// The directory holding one task's files.
    fn task_dir(&self, task_id: &str) -> Result<PathBuf>;
    /// Directories exports must never write into.
    fn stores(&self) -> Vec<PathBuf>;
}

/// A `tasks/` directory read directly.
pub struct TasksDirSource {
    tasks_dir: PathBuf,
}

impl TasksDirSource {
    pub fn new(tasks_dir: impl Into<PathBuf>) -> Result<Self> {
        let tasks_dir = tasks_dir.into();
        match std::fs::metadata(&tasks_dir) {
            Ok(md) if md.is_dir() => Ok(Self { tasks_dir }),
            Ok(_) => Err(ExportError::InvalidPath(format!(
                "tasksDir {} is not a directory",
                tasks_dir.display()
            ))),
            Err(e) => Err(ExportError::InvalidPath(format!(
                "tasksDir {} cannot be read: {e}",
                tasks_dir.display()
            ))),
        }
    }

    pub fn tasks_dir(&self) -> &Path {
        &self.tasks_dir
    }
}

/// A task id must be one plain directory name.
pub fn check_task_id(task_id: &str) -> Result<()> {
    // The store's rule for ids (no separator, no "..", no control character), and no name a
    // listing of tasks leaves out.
    let bad = roo_store::confine::task_id_problem(task_id).is_some()
        || task_id.trim().is_empty()
        || task_id.starts_with(['.', '_'])
        || (task_id.len() >= 2 && task_id.as_bytes()[1] == b':');
    if bad {
        Err(ExportError::InvalidArgument(format!(
            "{task_id:?} is not a task id (a task id is the name of one task directory)"
        )))
    } else {
        Ok(())
    }
}

impl SkeletonSource for TasksDirSource {
    fn headers(&self, cancel: &AtomicBool) -> Result<Vec<ConversationSkeleton>> {
        // Through the task store without a cache: every task read, linked once.
        let store = TaskStore::open_with(
            &roo_store::HostEnv::current(),
            &OpenOptions {
                tasks_dirs: vec![self.tasks_dir.clone()],
                cache_root: None,
                ignore_stored_links: false,
                every_file: false,
            },
            Watch {
                on_progress: None,
                cancel: Some(cancel),
            },
        )
        .map_err(|e| match e {
            roo_store::StoreError::Aborted => ExportError::Aborted,
            e => ExportError::InvalidPath(e.to_string()),
        })?;
        if cancel.load(Ordering::Relaxed) {
            return Err(ExportError::Aborted);
        }
        Ok(store.into_skeletons())
    }

    fn full(&self, task_id: &str, opts: &AnalyzeOptions) -> Result<ConversationSkeleton> {
        let dir = self.task_dir(task_id)?;
        analyze_task(task_id, &dir, opts).map_err(|diags| {
            let detail = diags
                .first()
                .map(|d| d.message.clone())
                .unwrap_or_else(|| "it holds no task files".into());
            ExportError::TaskNotFound {
                task_id: format!("{task_id} ({detail})"),
                tasks_dir: self.tasks_dir.clone(),
            }
        })
    }

    fn task_dir(&self, task_id: &str) -> Result<PathBuf> {
        check_task_id(task_id)?;
        roo_store::find::task_folder(&self.tasks_dir, task_id).ok_or_else(|| {
            ExportError::TaskNotFound {
                task_id: task_id.to_owned(),
                tasks_dir: self.tasks_dir.clone(),
            }
        })
    }

    fn stores(&self) -> Vec<PathBuf> {
        let mut v = vec![self.tasks_dir.clone()];
        // The storage directory around tasks/ belongs to the extension too.
        if self.tasks_dir.file_name().is_some_and(|n| n == "tasks") {
            if let Some(p) = self.tasks_dir.parent() {
                v.push(p.to_path_buf());
            }
        }
        v
    }
}

/// Exports read through the task store handle: headers linked once, from the cache when it can be
/// used.
pub struct StoreSource {
    store: roo_store::task_store::TaskStore,
    inner: TasksDirSource,
}

impl StoreSource {
    /// Open `tasks_dir` through the handle, with our skeleton cache (the default cache root) or,
    /// when the cache cannot be used, by reading the folders.
    pub fn open(tasks_dir: &Path) -> Result<Self> {
        let inner = TasksDirSource::new(tasks_dir)?;
        let (store, _) = TaskStore::open_with_default_cache(
            &roo_store::HostEnv::current(),
            vec![tasks_dir.to_path_buf()],
            Watch::default(),
        )
        .map_err(|e| ExportError::InvalidPath(e.to_string()))?;
        Ok(Self { store, inner })
    }
}

impl SkeletonSource for StoreSource {
    fn headers(&self, cancel: &AtomicBool) -> Result<Vec<ConversationSkeleton>> {
        if cancel.load(Ordering::Relaxed) {
            return Err(ExportError::Aborted);
        }
        Ok(self.store.skeletons().to_vec())
    }

    fn full(&self, task_id: &str, opts: &AnalyzeOptions) -> Result<ConversationSkeleton> {
        self.inner.full(task_id, opts)
    }

    fn task_dir(&self, task_id: &str) -> Result<PathBuf> {
        self.inner.task_dir(task_id)
    }

    fn stores(&self) -> Vec<PathBuf> {
        self.inner.stores()
    }
}

/// The source an export reads: `tasks_dir` when given; else the one store found on this machine
/// (storage discovery, which honours `ROO_STATE_STORAGE`).
pub fn open_source(tasks_dir: Option<&str>) -> Result<Box<dyn SkeletonSource>> {
    if let Some(d) = tasks_dir.filter(|d| !d.trim().is_empty()) {
        return Ok(Box::new(StoreSource::open(Path::new(d))?));
    }
    let found = roo_store::discover::discover_storage(
        &roo_store::HostEnv::current(),
        &roo_store::discover::DiscoverOptions::default(),
    );
    match found.locations.as_slice() {
        [one] => Ok(Box::new(StoreSource::open(Path::new(&one.tasks_dir))?)),
        [] => Err(ExportError::InvalidPath(
            "no task store to read: pass tasksDir (the extension's tasks/ directory) or set \
             ROO_STATE_STORAGE to its storage directory"
                .into(),
        )),
        several => Err(ExportError::InvalidArgument(format!(
            "several task stores were found; pass tasksDir: {}",
            several
                .iter()
                .map(|l| l.tasks_dir.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
