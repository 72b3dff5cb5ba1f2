//! Scanning a `tasks/` directory: every task in parallel, one bad task never failing the scan.

use crate::skeleton::{analyze_task, AnalyzeOptions, ConversationSkeleton};
use rayon::prelude::*;
use roo_formats::diag::{DiagCode, Diagnostic, Severity};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Progress callback: `(tasks done, tasks in all)`. Called from worker threads.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Options of [`scan_tasks`].
#[derive(Default)]
pub struct ScanOptions<'a> {
    /// Worker threads; 0 = one per core.
    pub concurrency: usize,
    pub analyze: AnalyzeOptions,
    pub on_progress: Option<Progress<'a>>,
    /// Set to stop the scan early; tasks already analysed are returned.
    pub cancel: Option<&'a AtomicBool>,
    /// Link the skeletons to their parents once they are built (see [`crate::hierarchy`]).
    pub hierarchy: Option<crate::hierarchy::HierarchyOptions>,
}

/// What a scan found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ScanResult {
    pub skeletons: Vec<ConversationSkeleton>,
    /// Problems that kept a task from having a skeleton, and problems with the directory itself.
    /// Problems inside a task that still got a skeleton are in that skeleton's `diagnostics`.
    pub diagnostics: Vec<Diagnostic>,
    /// Task directories seen.
    pub total: usize,
    pub cancelled: bool,
    /// What the hierarchy pass did, when the scan ran it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hierarchy: Option<crate::hierarchy::HierarchyMetrics>,
}

/// Errors that stop a scan before it starts.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("no tasks folder was given (an empty path)")]
    Empty,
    #[error("the tasks directory {0} does not exist")]
    NotFound(PathBuf),
    #[error("{0} is a file, not a tasks folder")]
    NotADirectory(PathBuf),
    #[error("the tasks directory {path} could not be read: {source}")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A task directory: its name (the task id) and path.
pub type TaskDir = (String, PathBuf);

/// Whether an entry of a `tasks/` folder can be a task: names starting with `_` or `.` are the
/// extension's index, its leftovers and ours (the extension's own rule). Every listing of task
/// folders goes through this.
pub fn is_task_name(name: &str) -> bool {
    !name.starts_with('_') && !name.starts_with('.')
}

/// The task directories of a `tasks/` folder: every entry that [`is_task_name`], sorted by name.
/// Entries that are not directories are reported.
pub fn list_task_dirs(tasks_dir: &Path) -> Result<(Vec<TaskDir>, Vec<Diagnostic>), ScanError> {
    if tasks_dir.as_os_str().is_empty() {
        return Err(ScanError::Empty);
    }
    let md = std::fs::metadata(tasks_dir).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ScanError::NotFound(tasks_dir.to_path_buf())
        } else {
            ScanError::Unreadable {
                path: tasks_dir.to_path_buf(),
                source: e,
            }
        }
    })?;
    if !md.is_dir() {
        return Err(ScanError::NotADirectory(tasks_dir.to_path_buf()));
    }
    let entries = std::fs::read_dir(tasks_dir).map_err(|e| ScanError::Unreadable {
        path: tasks_dir.to_path_buf(),
        source: e,
    })?;
    let mut dirs = Vec::new();
    let mut diagnostics = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                diagnostics.push(Diagnostic::new(
                    tasks_dir.display().to_string(),
                    "",
                    DiagCode::Unreadable,
                    Severity::Warning,
                    format!("an entry could not be listed: {err}"),
                ));
                continue;
            }
        };
        let raw = entry.file_name();
        let name = raw.to_string_lossy().into_owned();
        if !is_task_name(&name) {
            continue;
        }
        if raw.to_str().is_none() {
            diagnostics.push(Diagnostic::new(
                entry.path().display().to_string(),
                "",
                DiagCode::InvalidUtf8,
                Severity::Warning,
                format!(
                    "the folder name is not UTF-8; the task's id is shown as {name:?}, with U+FFFD \
                     for the bytes that are not"
                ),
            ));
        }
        let path = entry.path();
        // The entry's own type saves a stat per task; a symbolic link is followed to see what it is.
        let is_dir = match entry.file_type() {
            Ok(t) if t.is_symlink() => path.is_dir(),
            Ok(t) => t.is_dir(),
            Err(_) => path.is_dir(),
        };
        if is_dir {
            dirs.push((name, path));
        } else {
            diagnostics.push(Diagnostic::new(
                path.display().to_string(),
                "",
                DiagCode::UnexpectedShape,
                Severity::Info,
                "a file stands among the task directories; it was ignored",
            ));
        }
    }
    // Unstable: faster, and two entries are never equal (their paths differ).
    dirs.sort_unstable();
    Ok((dirs, diagnostics))
}

/// Build the skeleton of every task under `tasks_dir`, in parallel.
pub fn scan_tasks(tasks_dir: &Path, opts: &ScanOptions) -> Result<ScanResult, ScanError> {
    let (dirs, mut diagnostics) = list_task_dirs(tasks_dir)?;
    let total = dirs.len();
    let done = AtomicUsize::new(0);
    let cancelled = AtomicBool::new(false);
    let work = || {
        dirs.par_iter()
            .map(|(id, path)| {
                if opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    cancelled.store(true, Ordering::Relaxed);
                    return None;
                }
                let outcome = analyze_task(id, path, &opts.analyze);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if let Some(progress) = opts.on_progress {
                    progress(n, total);
                }
                Some(outcome)
            })
            .collect::<Vec<_>>()
    };
    let outcomes = if opts.concurrency > 0 {
        match rayon::ThreadPoolBuilder::new()
            .num_threads(opts.concurrency)
            .build()
        {
            Ok(pool) => pool.install(work),
            Err(_) => work(),
        }
    } else {
        work()
    };
    let mut skeletons = Vec::with_capacity(total);
    for outcome in outcomes.into_iter().flatten() {
        match outcome {
            Ok(s) => skeletons.push(s),
            Err(d) => diagnostics.extend(d),
        }
    }
    let cancelled = cancelled.load(Ordering::Relaxed);
    let (skeletons, hierarchy) = match &opts.hierarchy {
        Some(h) if !cancelled => {
            let (linked, metrics) = crate::hierarchy::reconstruct_hierarchy(skeletons, h);
            (linked, Some(metrics))
        }
        _ => (skeletons, None),
    };
    Ok(ScanResult {
        skeletons,
        diagnostics,
        total,
        cancelled,
        hierarchy,
    })
}
