//! Rebuilding state from the task folders alone: our cache always, and on request the
//! extension's own history (missing `history_item.json` files, and `tasks/_index.json` for the
//! releases that keep one), so that after a `state.vscdb` loss the extension lists the tasks again.
//!
//! Writes into the extension's folder happen only with `regenerate_extension_index` and without
//! `dry_run`. Every file replaced is first copied beside itself as `<name>.bak-<stamp>` (for
//! `_index.json` that name starts with `_`, which the extension never takes for a task); every
//! write goes through a temporary file and a rename. Each `history_item.json` is written under its
//! `proper-lockfile` lock, as the extension writes it ([`crate::history_file`]), and only when the
//! file still holds no usable record once the lock is held: existing, readable ones (a window of
//! the editor may have written one meanwhile) are never rewritten, their content goes into the
//! index as it is. Zoo Code (3.80+) neither reads nor writes `_index.json`: for its stores none is
//! written.

use crate::cache::{self, BuildOptions, StoreBuild};
use crate::discover::host_of_path;
use crate::fsutil;
use crate::history_file;
use crate::history_gen;
use crate::task_store::{OpenOptions, TaskStore, Watch};
use crate::{HostEnv, Result, StoreError};
use roo_formats::diag::{Diagnostic, Severity};
use roo_formats::host::TaskList;
use roo_formats::read::names;
use roo_state::hierarchy::{normalize_workspace, HierarchyMetrics};
use roo_state::ConversationSkeleton;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Options of [`rebuild_from_tasks`].
pub struct RebuildOptions<'a> {
    /// The tasks folder to scan (the store's own, or a backup of it).
    pub tasks_dir: PathBuf,
    pub cache_root: PathBuf,
    pub regenerate_extension_index: bool,
    pub dry_run: bool,
    pub on_progress: Option<cache::ProgressFn<'a>>,
    pub cancel: Option<&'a AtomicBool>,
    /// "Now" in ms (for `updatedAt` and backup names).
    pub now_ms: i64,
}

/// Tasks of one workspace.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WorkspaceCount {
    pub workspace: String,
    pub tasks: u32,
}

/// What was (or would be) written for the extension.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExtensionIndexReport {
    pub index_file: String,
    pub entries: u32,
    /// Tasks whose `history_item.json` was missing and is (or would be) written.
    pub history_items_created: Vec<String>,
    /// Tasks whose `history_item.json` could not be used and is (or would be) replaced.
    pub history_items_replaced: Vec<String>,
    /// Tasks whose `history_item.json` was kept as it is.
    pub history_items_kept: u32,
    /// Why no `_index.json` was (or would be) written, when none was: the store's extension does
    /// not keep one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub index_not_written: Option<String>,
    /// Backups made (paths).
    pub backups: Vec<String>,
    /// Files written (paths); empty in a dry run.
    pub written: Vec<String>,
    /// `history_item.json` files left alone because they are links out of the store (each said
    /// in a sentence): never backed up or replaced through the link.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub refused: Vec<String>,
}

/// What [`rebuild_from_tasks`] found and did.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RebuildReport {
    pub tasks_dir: String,
    pub dry_run: bool,
    /// Task folders.
    pub tasks: u32,
    /// Tasks with a skeleton.
    pub skeletons: u32,
    pub workspaces: Vec<WorkspaceCount>,
    /// Tasks with no parent.
    pub roots: u32,
    /// Tasks whose parent is not on disk.
    pub orphans: u32,
    pub orphan_ids: Vec<String>,
    pub hierarchy: Option<HierarchyMetrics>,
    /// Our cache was wiped and rebuilt (never in a dry run).
    pub cache_rebuilt: bool,
    pub cache: Option<StoreBuild>,
    pub extension_index: Option<ExtensionIndexReport>,
    pub diagnostics: Vec<Diagnostic>,
}

/// How long the extension's write lock (`<file>.lock/`) stays fresh (proper-lockfile's 31 s).
const EXTENSION_LOCK_FRESH_MS: i64 = 31_000;

/// Whether the extension owning `tasks_dir` keeps `tasks/_index.json` (the hosts table says; a
/// store of no known host is treated as Roo Code's).
fn keeps_history_index(tasks_dir: &Path) -> bool {
    host_of_path(tasks_dir).is_none_or(|h| h.task_list != TaskList::HistoryItems)
}

fn extension_busy(file: &Path, now_ms: i64) -> bool {
    let lock = file.with_file_name(format!(
        "{}.lock",
        file.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    std::fs::metadata(&lock)
        .map(|m| now_ms - fsutil::mtime_ms(&m) < EXTENSION_LOCK_FRESH_MS)
        .unwrap_or(false)
}

/// The store's writer lock (none in a dry run), saying when it removed a history item's lock an
/// interrupted rebuild had left.
fn writer_lock(
    opts: &RebuildOptions,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<crate::lock::WriterLock>> {
    if opts.dry_run {
        return Ok(None);
    }
    let writer = crate::lock::store_writer(&opts.tasks_dir, "rebuild")?;
    if let Some(left) = writer.cleared() {
        diagnostics.push(Diagnostic::new(
            left.display().to_string(),
            "",
            roo_formats::diag::DiagCode::Unreadable,
            Severity::Info,
            "an interrupted rebuild left this history item's lock behind; it was removed",
        ));
    }
    Ok(Some(writer))
}

/// Scan `tasks_dir`, rebuild our cache of it, report what it holds, and optionally regenerate
/// the extension's history index.
pub fn rebuild_from_tasks(opts: &RebuildOptions) -> Result<RebuildReport> {
    let tasks_dir = &opts.tasks_dir;
    if !tasks_dir.is_dir() {
        return Err(StoreError::NotFound {
            path: tasks_dir.clone(),
        });
    }
    let mut report = RebuildReport {
        tasks_dir: tasks_dir.display().to_string(),
        dry_run: opts.dry_run,
        ..RebuildReport::default()
    };
    let index_file = tasks_dir.join(names::HISTORY_INDEX);
    // One writer at a time; the lock is held to the end of the rebuild.
    let mut writer = writer_lock(opts, &mut report.diagnostics)?;
    if opts.regenerate_extension_index
        && !opts.dry_run
        && keeps_history_index(tasks_dir)
        && extension_busy(&index_file, opts.now_ms)
    {
        return Err(StoreError::InvalidArgument(format!(
            "the extension is writing {} right now (its lock is fresh); close the editor and run the rebuild again",
            index_file.display()
        )));
    }

    // Skeletons with their parents, through the task store: from a fresh cache, or every task
    // parsed in memory for a dry run (nothing written).
    let watch = Watch {
        on_progress: opts.on_progress,
        cancel: opts.cancel,
    };
    let open = |cache_root: Option<PathBuf>| {
        TaskStore::open_with(
            &HostEnv::current(),
            &OpenOptions {
                tasks_dirs: vec![tasks_dir.clone()],
                cache_root,
                ignore_stored_links: false,
                every_file: false,
            },
            watch,
        )
    };
    let store = if opts.dry_run {
        open(None)?
    } else {
        cache::wipe_store_cache(&opts.cache_root, tasks_dir, opts.cancel)?;
        let build = cache::build_skeleton_cache(
            std::slice::from_ref(tasks_dir),
            &BuildOptions {
                force_rebuild: true,
                on_progress: opts.on_progress,
                cancel: opts.cancel,
                ..BuildOptions::new(&opts.cache_root)
            },
        )?;
        report.diagnostics.extend(build.diagnostics);
        report.cache_rebuilt = true;
        report.cache = build.stores.into_iter().next();
        open(Some(opts.cache_root.clone()))?
    };
    report.tasks = store.stores().first().map_or(0, |s| s.tasks);
    if opts.dry_run {
        report
            .diagnostics
            .extend(store.diagnostics().iter().cloned());
    }
    report.hierarchy = Some(store.metrics().clone());
    let skeletons = store.skeletons();
    report.skeletons = skeletons.len() as u32;

    // Workspaces, roots, orphans.
    let mut ws: BTreeMap<String, (String, u32)> = BTreeMap::new();
    for s in skeletons {
        let raw = s.metadata.workspace.clone().unwrap_or_default();
        let key = normalize_workspace(&raw);
        ws.entry(key).or_insert((raw, 0)).1 += 1;
    }
    let mut workspaces: Vec<WorkspaceCount> = ws
        .into_values()
        .map(|(workspace, tasks)| WorkspaceCount { workspace, tasks })
        .collect();
    workspaces.sort_by(|a, b| {
        b.tasks
            .cmp(&a.tasks)
            .then_with(|| a.workspace.cmp(&b.workspace))
    });
    report.workspaces = workspaces;
    report.roots = skeletons
        .iter()
        .filter(|s| s.parent_task_id.is_none())
        .count() as u32;
    if let Some(m) = &report.hierarchy {
        report.orphans = m.orphans;
        report.orphan_ids = m
            .issues
            .iter()
            .filter(|i| i.kind == "orphan")
            .map(|i| i.task_id.clone())
            .collect();
    }

    if opts.regenerate_extension_index {
        report.extension_index = Some(regenerate_index(
            tasks_dir,
            skeletons,
            opts,
            writer.as_mut(),
        )?);
    }
    Ok(report)
}

/// The temporary files a killed rebuild left (they would count in the tasks' sizes); only with
/// the store's writer lock held.
fn remove_killed_runs_temps(tasks_dir: &Path) -> Result<()> {
    fsutil::remove_stale_temps(tasks_dir, &[names::HISTORY_INDEX]);
    for (_, dir) in cache::list_tasks(tasks_dir)? {
        if crate::confine::task_folder_out(&dir).is_some() {
            continue;
        }
        fsutil::remove_stale_temps(&dir, &[names::HISTORY_ITEM]);
    }
    Ok(())
}

/// [`history_file::create_if_missing`], the file lock noted in the store's writer lock while it is
/// held: a rebuild killed while holding it leaves a note, and the next one removes the lock rather
/// than leave the extension waiting 31 s for it to go stale.
fn create_noted(
    hi_path: &Path,
    record: &serde_json::Map<String, serde_json::Value>,
    writer: Option<&mut crate::lock::WriterLock>,
) -> Result<bool> {
    let Some(writer) = writer else {
        return history_file::create_if_missing(hi_path, record);
    };
    writer.note_acquiring(&history_file::FileLock::path_for(hi_path));
    let lock = match history_file::FileLock::acquire(hi_path) {
        Ok(lock) => lock,
        Err(e) => {
            writer.note_released();
            return Err(e);
        }
    };
    writer.note_holding(lock.dir(), lock.mtime_ns());
    let written = history_file::create_if_missing_locked(&lock, hi_path, record);
    drop(lock);
    writer.note_released();
    written
}

/// The object a task's `history_item.json` holds, keys and numbers as they are, when the typed
/// reader takes it without an error and it has an id; else `None` (no file, or one to replace).
fn usable_record(hi_path: &Path) -> Option<serde_json::Value> {
    if !hi_path.exists() {
        return None;
    }
    let read = roo_formats::read_history_item(hi_path);
    let usable = read.value.as_ref().is_some_and(|v| !v.id.is_empty())
        && !read
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error);
    if !usable {
        return None;
    }
    history_file::read_record(hi_path)
        .ok()
        .flatten()
        .filter(|v| v.is_object())
}

fn regenerate_index(
    tasks_dir: &Path,
    skeletons: &[ConversationSkeleton],
    opts: &RebuildOptions,
    mut writer: Option<&mut crate::lock::WriterLock>,
) -> Result<ExtensionIndexReport> {
    let stamp = fsutil::file_stamp(opts.now_ms);
    let index_file = tasks_dir.join(names::HISTORY_INDEX);
    if !opts.dry_run {
        remove_killed_runs_temps(tasks_dir)?;
    }
    let mut rep = ExtensionIndexReport {
        index_file: index_file.display().to_string(),
        ..ExtensionIndexReport::default()
    };
    let by_id: HashMap<&str, &ConversationSkeleton> =
        skeletons.iter().map(|s| (s.task_id.as_str(), s)).collect();
    let mut children: HashMap<&str, Vec<String>> = HashMap::new();
    for s in skeletons {
        if let Some(p) = s.parent_task_id.as_deref() {
            children.entry(p).or_default().push(s.task_id.clone());
        }
    }
    for v in children.values_mut() {
        v.sort();
    }
    let depth = |id: &str| -> u32 {
        let mut d = 0;
        let mut cur = by_id.get(id).and_then(|s| s.parent_task_id.as_deref());
        while let Some(p) = cur {
            d += 1;
            if d > 64 {
                break;
            }
            cur = by_id.get(p).and_then(|s| s.parent_task_id.as_deref());
        }
        d
    };
    let mut entries: Vec<(i64, String, serde_json::Value)> = Vec::with_capacity(skeletons.len());
    let mut sorted: Vec<&ConversationSkeleton> = skeletons.iter().collect();
    sorted.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    for s in sorted {
        let task_dir = tasks_dir.join(&s.task_id);
        let hi_path = task_dir.join(names::HISTORY_ITEM);
        // A history item that is a link out of the store is neither read nor replaced.
        if let Some(out) = crate::confine::task_file_out(&hi_path, None) {
            rep.refused.push(out.to_string());
            continue;
        }
        if let Some(v) = usable_record(&hi_path) {
            let ts = v.get("ts").and_then(|t| t.as_i64()).unwrap_or(0);
            rep.history_items_kept += 1;
            entries.push((ts, s.task_id.clone(), v));
            continue;
        }
        let kids = children
            .get(s.task_id.as_str())
            .cloned()
            .unwrap_or_default();
        let item = history_gen::history_item_for(s, &task_dir, depth(&s.task_id), &kids);
        let bytes = history_gen::extension_bytes(&item)
            .map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
        let replacing = hi_path.exists();
        if !opts.dry_run {
            if replacing {
                let b = fsutil::backup_file(&hi_path, &stamp)
                    .map_err(|e| StoreError::io("backing up", &hi_path, e))?;
                rep.backups.push(b.display().to_string());
            }
            let record = value.as_object().cloned().unwrap_or_default();
            if !create_noted(&hi_path, &record, writer.as_deref_mut())? {
                // The extension wrote a record while we were not holding the lock: it stays.
                let theirs = history_file::read_record(&hi_path)?.unwrap_or(value);
                let ts = theirs.get("ts").and_then(|t| t.as_i64()).unwrap_or(0);
                rep.history_items_kept += 1;
                entries.push((ts, s.task_id.clone(), theirs));
                continue;
            }
            rep.written.push(hi_path.display().to_string());
        }
        if replacing {
            rep.history_items_replaced.push(s.task_id.clone());
        } else {
            rep.history_items_created.push(s.task_id.clone());
        }
        entries.push((item.ts.unwrap_or(0), s.task_id.clone(), value));
    }
    rep.entries = entries.len() as u32;
    if !keeps_history_index(tasks_dir) {
        rep.index_not_written = Some(
            "Zoo Code keeps no tasks/_index.json: it lists the tasks from their history_item.json files"
                .into(),
        );
        return Ok(rep);
    }
    let bytes = history_gen::index_bytes(entries, opts.now_ms)
        .map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
    if !opts.dry_run {
        if index_file.exists() {
            let b = fsutil::backup_file(&index_file, &stamp)
                .map_err(|e| StoreError::io("backing up", &index_file, e))?;
            rep.backups.push(b.display().to_string());
        }
        fsutil::write_atomic(&index_file, &bytes)
            .map_err(|e| StoreError::io("writing", &index_file, e))?;
        rep.written.push(index_file.display().to_string());
    }
    Ok(rep)
}
