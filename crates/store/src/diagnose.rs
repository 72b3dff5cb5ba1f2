//! A health report of each task store: files, sizes, the editor's `state.vscdb` and our cache.
//! Reads only.

use crate::cache::{self, task_sig, CacheStatus};
use crate::cleanup::{classify, FileClass};
use crate::discover::{self, Host};
use crate::fsutil;
use crate::vscdb::{self, StateDbReport};
use rayon::prelude::*;
use roo_formats::diag::Severity;
use roo_formats::read::names;
use roo_state::scan::TaskDir;
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// `OK`, `WARNING` or `ERROR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "HealthStatus"))]
pub enum Status {
    Ok,
    Warning,
    Error,
}

/// One reason behind a status.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "HealthReason"))]
pub struct Reason {
    pub status: Status,
    pub message: String,
}

/// One task file of a recent task.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct FileCheck {
    pub name: String,
    pub exists: bool,
    /// Read without an error-level problem.
    pub parses: bool,
    pub bytes: u64,
    /// Problems reported by the reader (any level).
    pub problems: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_problem: Option<String>,
}

/// Structure of one of the most recent tasks.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "RecentTaskCheck"))]
pub struct RecentTask {
    pub task_id: String,
    /// ms since the epoch (newest task file).
    pub last_modified: i64,
    pub files: Vec<FileCheck>,
    /// A conversation file exists and every existing file parses.
    pub ok: bool,
}

/// A task our cache knows to be damaged: its folder gave no header, or its files were read with
/// problems (error or warning).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DamagedTask {
    pub task_id: String,
    /// No header could be made of its folder (it is in no list, tree or report).
    pub unreadable: bool,
    /// Each problem as `file: message` (the file's name), at most five.
    pub problems: Vec<String>,
    /// Problems beyond those listed.
    pub more: u32,
}

/// Bytes and files under `tasks/`, by kind.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SizeSplit {
    pub total_bytes: u64,
    pub conversation_bytes: u64,
    pub conversation_files: u64,
    pub checkpoint_bytes: u64,
    pub checkpoint_files: u64,
    pub other_bytes: u64,
    pub other_files: u64,
    /// `<storage>/checkpoints/` (per-workspace repositories of extension versions before 3.8),
    /// not included in the figures above.
    pub legacy_checkpoint_bytes: u64,
}

/// The report of one location.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "LocationHealth"))]
pub struct LocationReport {
    pub tasks_dir: String,
    pub host: Option<String>,
    pub editor: Option<String>,
    pub exists: bool,
    pub readable: bool,
    pub task_count: u32,
    pub recent_tasks: Vec<RecentTask>,
    pub sizes: SizeSplit,
    /// `tasks/_index.json`: entries, or `None` when absent or unreadable.
    pub history_index_entries: Option<u32>,
    /// `tasks/_index.json` is there but its host no longer reads it: Zoo Code 3.80+ lists the
    /// tasks whose `history_item.json` parses, and leaves the index of earlier releases as it was.
    pub history_index_stale: bool,
    pub state_db: Option<StateDbReport>,
    pub cache: CacheStatus,
    /// Every task our cache knows to be damaged (from its last reading of each task); `None`:
    /// the store has no cache of this version to say.
    pub damaged_tasks: Option<Vec<DamagedTask>>,
    pub status: Status,
    pub reasons: Vec<Reason>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiagnoseReport {
    pub status: Status,
    pub reasons: Vec<Reason>,
    pub generated_at: String,
    pub cache_root: String,
    pub locations: Vec<LocationReport>,
}

/// A store to diagnose.
#[derive(Debug, Clone)]
pub struct Target {
    pub tasks_dir: PathBuf,
    pub host: Option<&'static Host>,
    pub editor: Option<String>,
    pub state_db: Option<PathBuf>,
}

impl Target {
    /// A target from a tasks folder alone: the host from the path, `state.vscdb` two levels up
    /// (`globalStorage/state.vscdb` beside the extension's folder).
    pub fn from_tasks_dir(tasks_dir: &Path) -> Target {
        let state_db = tasks_dir
            .parent()
            .and_then(Path::parent)
            .map(|g| g.join("state.vscdb"))
            .filter(|p| p.is_file());
        Target {
            tasks_dir: tasks_dir.to_path_buf(),
            host: discover::host_of_path(tasks_dir),
            editor: None,
            state_db,
        }
    }
}

/// Settings of the judgement.
#[derive(Debug, Clone)]
pub struct DiagnoseOptions {
    pub cache_root: PathBuf,
    /// Recent tasks whose structure is checked.
    pub recent: usize,
    /// Above this many bytes of the extension's keys in `state.vscdb`, warn.
    pub state_warn_bytes: u64,
}

impl DiagnoseOptions {
    pub fn new(cache_root: impl Into<PathBuf>) -> Self {
        DiagnoseOptions {
            cache_root: cache_root.into(),
            recent: 10,
            state_warn_bytes: 1 << 20,
        }
    }
}

/// Diagnose every target.
pub fn diagnose(targets: &[Target], opts: &DiagnoseOptions) -> DiagnoseReport {
    let locations: Vec<LocationReport> = targets.iter().map(|t| diagnose_one(t, opts)).collect();
    let mut reasons = Vec::new();
    if locations.is_empty() {
        reasons.push(Reason {
            status: Status::Error,
            message: "no task store was found; pass tasksDir, set ROO_STATE_STORAGE, or check that the extension has created tasks".into(),
        });
    }
    for l in &locations {
        for r in &l.reasons {
            if r.status > Status::Ok {
                reasons.push(Reason {
                    status: r.status,
                    message: format!("{}: {}", l.tasks_dir, r.message),
                });
            }
        }
    }
    let status = reasons.iter().map(|r| r.status).max().unwrap_or(Status::Ok);
    DiagnoseReport {
        status,
        reasons,
        generated_at: roo_js::iso_from_ms(roo_js::now_ms()),
        cache_root: opts.cache_root.display().to_string(),
        locations,
    }
}

fn check_file(dir: &Path, name: &str) -> FileCheck {
    let path = dir.join(name);
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    let exists = path.is_file();
    let mut c = FileCheck {
        name: name.to_owned(),
        exists,
        parses: false,
        bytes,
        problems: 0,
        first_problem: None,
    };
    if !exists {
        return c;
    }
    let diags = match name {
        names::UI_MESSAGES | names::CLAUDE_MESSAGES => {
            roo_formats::for_each_ui_message(&path, |_, _| {}).diagnostics
        }
        names::API_HISTORY => {
            roo_formats::for_each_api_message(&path, |_, _| {})
                .0
                .diagnostics
        }
        names::HISTORY_ITEM => roo_formats::read_history_item(&path).diagnostics,
        _ => roo_formats::read_task_metadata(&path).diagnostics,
    };
    c.problems = diags.len() as u32;
    c.parses = !diags.iter().any(|d| d.severity == Severity::Error);
    c.first_problem = diags.iter().max_by_key(|d| d.severity).map(|d| {
        format!(
            "{}{}: {}",
            if d.path.is_empty() { "" } else { "at " },
            d.path,
            d.message
        )
    });
    c
}

/// The report of one store: every check in turn, each adding its reasons.
fn diagnose_one(t: &Target, opts: &DiagnoseOptions) -> LocationReport {
    let mut reasons: Vec<Reason> = Vec::new();
    let exists = t.tasks_dir.is_dir();
    let listing = roo_state::scan::list_task_dirs(&t.tasks_dir);
    let readable = listing.is_ok();
    let dirs = listing.map(|(d, _)| d).unwrap_or_default();
    if !exists {
        reasons.push(error("the tasks folder does not exist".into()));
    } else if !readable {
        reasons.push(error(
            "the tasks folder cannot be read (permissions?)".into(),
        ));
    }
    let footprints: Vec<TaskFootprint> = dirs
        .par_iter()
        .map(|(_, dir)| TaskFootprint::measure(dir))
        .collect();
    let sizes = store_sizes(&t.tasks_dir, &footprints);
    reasons.extend(checkpoint_reason(&sizes));
    let recent_tasks = recent_tasks(&dirs, &footprints, opts.recent);
    reasons.extend(
        recent_tasks
            .iter()
            .filter(|r| !r.ok)
            .map(broken_recent_task_reason),
    );
    let host = t.host.or_else(|| discover::host_of_path(&t.tasks_dir));
    // Zoo Code 3.80+ lists the tasks whose history_item.json parses: neither `_index.json` nor
    // the task history in state.vscdb (kept there for a downgrade) decides what it shows.
    let lists_history_items =
        host.is_some_and(|h| h.task_list == roo_formats::host::TaskList::HistoryItems);
    let (history_index_entries, history_index_stale) = if lists_history_items {
        let present = t.tasks_dir.join(names::HISTORY_INDEX).is_file();
        let entries = present
            .then(|| stale_history_index(&t.tasks_dir, &mut reasons))
            .flatten();
        reasons.extend(unlisted_by_zoo(&dirs));
        (entries, present)
    } else {
        let n = history_index_entries(&t.tasks_dir, dirs.len(), &mut reasons);
        (n, false)
    };
    let disk_ids: HashSet<String> = dirs.iter().map(|(id, _)| id.clone()).collect();
    let state_db = match (&t.state_db, host) {
        (Some(db), Some(h)) => Some(vscdb::read_state_db(db, h, &disk_ids)),
        _ => None,
    };
    if let Some(db) = &state_db {
        // A readable index makes up for the state's task history (Roo); for Zoo neither counts.
        let listed_elsewhere = history_index_entries.is_some() || lists_history_items;
        reasons.extend(state_db_reasons(db, opts, listed_elsewhere));
    }
    let cache = cache::cache_status(&opts.cache_root, &t.tasks_dir);
    if exists && readable {
        reasons.extend(cache_reason(&cache));
    }
    let damaged_tasks = (exists && readable && cache.exists && cache.unusable.is_none())
        .then(|| damaged_tasks(&opts.cache_root, &t.tasks_dir));
    reasons.extend(damaged_tasks.as_deref().and_then(damaged_reason));
    if reasons.iter().all(|r| r.status == Status::Ok) {
        reasons.insert(
            0,
            Reason {
                status: Status::Ok,
                message: format!("{} task(s), all checks passed", dirs.len()),
            },
        );
    }
    let status = reasons.iter().map(|r| r.status).max().unwrap_or(Status::Ok);
    LocationReport {
        tasks_dir: t.tasks_dir.display().to_string(),
        host: host.map(|h| h.id.to_owned()),
        editor: t.editor.clone(),
        exists,
        readable,
        task_count: dirs.len() as u32,
        recent_tasks,
        sizes,
        history_index_entries,
        history_index_stale,
        state_db,
        cache,
        damaged_tasks,
        status,
        reasons,
    }
}

/// The tasks of a store our cache knows to be damaged, in id order: from the headers' summary
/// when there is one of this version, else from the cache's headers (read, never written).
fn damaged_tasks(cache_root: &Path, tasks_dir: &Path) -> Vec<DamagedTask> {
    let canonical = fsutil::canonical(tasks_dir);
    let (headers, failed) = match cache::read_summary(cache_root, &canonical) {
        Some(s) => (
            s.skeletons,
            s.failed.into_iter().map(|(id, _, d)| (id, d)).collect(),
        ),
        None => {
            let loaded =
                cache::load_skeletons(cache_root, Some(std::slice::from_ref(&canonical)), None);
            (
                loaded.skeletons,
                cache::failed_tasks(cache_root, &canonical),
            )
        }
    };
    let problem = |d: &roo_formats::diag::Diagnostic| {
        let file = Path::new(&d.file)
            .file_name()
            .map_or_else(|| d.file.clone(), |f| f.to_string_lossy().into_owned());
        format!("{file}: {}", d.message)
    };
    let mut out: Vec<DamagedTask> = failed
        .into_iter()
        .map(
            |(task_id, d): (String, Vec<roo_formats::diag::Diagnostic>)| DamagedTask {
                task_id,
                unreadable: true,
                problems: d.iter().take(5).map(problem).collect(),
                more: d.len().saturating_sub(5) as u32,
            },
        )
        .collect();
    for s in &headers {
        let bad: Vec<_> = (s.diagnostics.iter())
            .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
            .collect();
        if !bad.is_empty() {
            out.push(DamagedTask {
                task_id: s.task_id.clone(),
                unreadable: false,
                problems: bad.iter().take(5).map(|d| problem(d)).collect(),
                more: bad.len().saturating_sub(5) as u32,
            });
        }
    }
    out.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    out
}

/// The warning about the damaged tasks our cache knows, naming a few.
fn damaged_reason(tasks: &[DamagedTask]) -> Option<Reason> {
    if tasks.is_empty() {
        return None;
    }
    let shown: Vec<&str> = tasks.iter().take(5).map(|t| t.task_id.as_str()).collect();
    Some(warning(format!(
        "{} task(s) were read with problems or could not be read: {}{}",
        tasks.len(),
        shown.join(", "),
        if tasks.len() > 5 { ", …" } else { "" }
    )))
}

fn error(message: String) -> Reason {
    Reason {
        status: Status::Error,
        message,
    }
}

fn warning(message: String) -> Reason {
    Reason {
        status: Status::Warning,
        message,
    }
}

/// What one task folder holds: its bytes and files by kind, and its newest task file's time.
struct TaskFootprint {
    sizes: SizeSplit,
    /// ms since the epoch.
    newest: i64,
}

impl TaskFootprint {
    fn measure(dir: &Path) -> TaskFootprint {
        let mut sizes = SizeSplit::default();
        for e in walkdir::WalkDir::new(dir)
            .follow_links(false)
            .into_iter()
            .flatten()
        {
            if e.file_type().is_dir() {
                continue;
            }
            let len = e.metadata().map_or(0, |m| m.len());
            let rel = e.path().strip_prefix(dir).unwrap_or(e.path());
            sizes.count_file(rel, len);
        }
        let newest = task_sig(dir)
            .iter()
            .flatten()
            .map(|(_, ns)| ns / 1_000_000)
            .max()
            .unwrap_or(0);
        TaskFootprint { sizes, newest }
    }
}

impl SizeSplit {
    /// Counts a file of `len` bytes at `rel` (inside its task folder) under its kind.
    fn count_file(&mut self, rel: &Path, len: u64) {
        self.total_bytes += len;
        match classify(rel) {
            FileClass::Conversation => {
                self.conversation_bytes += len;
                self.conversation_files += 1;
            }
            FileClass::Checkpoint => {
                self.checkpoint_bytes += len;
                self.checkpoint_files += 1;
            }
            FileClass::Other => {
                self.other_bytes += len;
                self.other_files += 1;
            }
        }
    }

    /// Adds the figures of `other` under `tasks/` (the legacy checkpoints are not added).
    fn add(&mut self, other: &SizeSplit) {
        self.total_bytes += other.total_bytes;
        self.conversation_bytes += other.conversation_bytes;
        self.conversation_files += other.conversation_files;
        self.checkpoint_bytes += other.checkpoint_bytes;
        self.checkpoint_files += other.checkpoint_files;
        self.other_bytes += other.other_bytes;
        self.other_files += other.other_files;
    }
}

/// The sizes of the whole store: its task folders, and the legacy `checkpoints/` beside `tasks/`.
fn store_sizes(tasks_dir: &Path, footprints: &[TaskFootprint]) -> SizeSplit {
    let mut sizes = SizeSplit::default();
    for f in footprints {
        sizes.add(&f.sizes);
    }
    if let Some(base) = tasks_dir.parent() {
        let legacy = base.join("checkpoints");
        if legacy.is_dir() {
            sizes.legacy_checkpoint_bytes = fsutil::tree_size(&legacy).1;
        }
    }
    sizes
}

/// A warning when checkpoints take over a GiB and most of the store.
fn checkpoint_reason(sizes: &SizeSplit) -> Option<Reason> {
    (sizes.checkpoint_bytes > (1 << 30) && sizes.checkpoint_bytes * 2 > sizes.total_bytes).then(|| {
        warning(format!(
            "checkpoints take {:.1} GiB of {:.1} GiB; cleanupObsoleteCheckpoints can free them without touching conversations",
            sizes.checkpoint_bytes as f64 / (1u64 << 30) as f64,
            sizes.total_bytes as f64 / (1u64 << 30) as f64
        ))
    })
}

/// The structure of the `n` most recently modified tasks (ties by id).
fn recent_tasks(dirs: &[TaskDir], footprints: &[TaskFootprint], n: usize) -> Vec<RecentTask> {
    let mut order: Vec<usize> = (0..dirs.len()).collect();
    order.sort_by(|&a, &b| {
        footprints[b]
            .newest
            .cmp(&footprints[a].newest)
            .then_with(|| dirs[a].0.cmp(&dirs[b].0))
    });
    order
        .iter()
        .take(n)
        .map(|&i| {
            let (id, dir) = &dirs[i];
            check_recent_task(id, dir, footprints[i].newest)
        })
        .collect()
}

/// Checks a task's conversation files (`ui_messages.json`, or the older `claude_messages.json`),
/// `history_item.json` and `task_metadata.json`.
fn check_recent_task(id: &str, dir: &Path, last_modified: i64) -> RecentTask {
    let ui_name =
        if dir.join(names::UI_MESSAGES).exists() || !dir.join(names::CLAUDE_MESSAGES).exists() {
            names::UI_MESSAGES
        } else {
            names::CLAUDE_MESSAGES
        };
    let files: Vec<FileCheck> = [
        ui_name,
        names::API_HISTORY,
        names::HISTORY_ITEM,
        names::TASK_METADATA,
    ]
    .iter()
    .map(|n| check_file(dir, n))
    .collect();
    let has_conversation = files.iter().take(2).any(|f| f.exists);
    let ok = has_conversation && files.iter().all(|f| !f.exists || f.parses);
    RecentTask {
        task_id: id.to_owned(),
        last_modified,
        files,
        ok,
    }
}

/// The warning about a recent task that is not ok: no conversation, or files that do not parse.
fn broken_recent_task_reason(r: &RecentTask) -> Reason {
    let what = r
        .files
        .iter()
        .filter(|f| f.exists && !f.parses)
        .map(|f| {
            format!(
                "{} ({})",
                f.name,
                f.first_problem.clone().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>();
    let msg = if what.is_empty() {
        format!(
            "recent task {} has neither ui_messages.json nor api_conversation_history.json",
            r.task_id
        )
    } else {
        format!(
            "recent task {} has files that do not parse: {}",
            r.task_id,
            what.join("; ")
        )
    };
    warning(msg)
}

/// The entries of the extension's history index `tasks/_index.json` (`None` when absent or
/// unreadable), with a warning when it cannot be read or lists fewer than the `task_count` folders.
fn history_index_entries(
    tasks_dir: &Path,
    task_count: usize,
    reasons: &mut Vec<Reason>,
) -> Option<u32> {
    let index_path = tasks_dir.join(names::HISTORY_INDEX);
    if !index_path.is_file() {
        return None;
    }
    let r = roo_formats::read_history_index(&index_path);
    match r.value {
        Some(ix) => {
            let n = ix.entries.len() as u32;
            if (n as usize) < task_count {
                reasons.push(warning(format!(
                    "tasks/_index.json lists {n} of {task_count} task folders; the extension adds the others when it reconciles, or run rebuildRooStateFromTasks with regenerateExtensionIndex"
                )));
            }
            Some(n)
        }
        None => {
            reasons.push(warning("tasks/_index.json cannot be read; the extension will rebuild it from history_item.json files".into()));
            None
        }
    }
}

/// A Zoo Code store's `tasks/_index.json` (left by a release before 3.80, never read again): its
/// entries (`None` when unreadable), reported as information, not as something to regenerate.
fn stale_history_index(tasks_dir: &Path, reasons: &mut Vec<Reason>) -> Option<u32> {
    let index_path = tasks_dir.join(names::HISTORY_INDEX);
    let entries = roo_formats::read_history_index(&index_path)
        .value
        .map(|ix| ix.entries.len() as u32);
    reasons.push(Reason {
        status: Status::Ok,
        message: format!(
            "tasks/_index.json{} is stale and ignored: Zoo Code 3.80+ neither reads nor writes it \
             (its task list is the tasks' history_item.json files)",
            entries.map_or(String::new(), |n| format!(" ({n} entries)"))
        ),
    });
    entries
}

/// The warning about task folders Zoo Code does not list: no `history_item.json` that parses with
/// an `id`.
fn unlisted_by_zoo(dirs: &[TaskDir]) -> Option<Reason> {
    let unlisted = dirs
        .par_iter()
        .filter(|(_, dir)| {
            roo_formats::read_history_item(&dir.join(names::HISTORY_ITEM))
                .value
                .is_none_or(|h| h.id.is_empty())
        })
        .count();
    (unlisted > 0).then(|| {
        warning(format!(
            "{unlisted} task folder(s) have no history_item.json that parses with an id, so Zoo \
             Code does not list them; rebuildRooStateFromTasks with regenerateExtensionIndex \
             writes the missing ones"
        ))
    })
}

/// The warnings about `state.vscdb`: an error reading it, too much extension state, task folders
/// its task history lacks (when nothing else lists them: a readable `_index.json`, or a host
/// that lists its `history_item.json` files).
fn state_db_reasons(
    db: &StateDbReport,
    opts: &DiagnoseOptions,
    listed_elsewhere: bool,
) -> Vec<Reason> {
    let mut reasons = Vec::new();
    if let Some(e) = &db.error {
        reasons.push(warning(format!("state.vscdb: {e}")));
    }
    if db.extension_bytes > opts.state_warn_bytes {
        reasons.push(warning(format!(
            "the extension keeps {:.1} MiB in state.vscdb; editors warn about large extension state and slow down",
            db.extension_bytes as f64 / (1u64 << 20) as f64
        )));
    }
    if let Some(th) = &db.task_history {
        if th.only_on_disk > 0 && !listed_elsewhere {
            reasons.push(warning(format!(
                "{} task folder(s) are missing from the extension's task history in state.vscdb, so it does not list them; rebuildRooStateFromTasks with regenerateExtensionIndex writes an index the extension reads",
                th.only_on_disk
            )));
        }
    }
    reasons
}

/// The warning about our skeleton cache: absent, unusable, or behind the disk.
fn cache_reason(cache: &CacheStatus) -> Option<Reason> {
    if !cache.exists {
        Some(warning(
            "no skeleton cache yet; run buildSkeletonCache".into(),
        ))
    } else if let Some(u) = &cache.unusable {
        Some(warning(format!("the skeleton cache cannot be used: {u}")))
    } else if cache.damaged > 0 || cache.journal_damage.is_some() {
        Some(warning(format!(
            "the skeleton cache is damaged: {} cached skeleton(s) fail their checksum{}; buildSkeletonCache reads those tasks again",
            cache.damaged,
            cache.journal_damage.as_deref().map_or(String::new(), |j| format!(", and {j}"))
        )))
    } else if cache.stale + cache.missing + cache.removed > 0 {
        Some(warning(format!(
            "the skeleton cache is behind: {} changed, {} new, {} deleted task(s); buildSkeletonCache refreshes only those",
            cache.stale, cache.missing, cache.removed
        )))
    } else {
        None
    }
}
