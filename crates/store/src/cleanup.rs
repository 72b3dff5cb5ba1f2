//! Removing obsolete checkpoint data. Conversation files are never removed or altered.
//!
//! What a task folder holds, by [`classify`]:
//! - **conversation** (never touched): `ui_messages.json`, `claude_messages.json`,
//!   `api_conversation_history.json`, `api_history.jsonl`, `history_item.json`,
//!   `task_metadata.json`, any file whose name contains one of those names (backups, the
//!   extension's `.…new_….tmp`/`.…bak_….tmp` leftovers, which may be the only copy after a crash),
//!   and `command-output/` (terminal output the messages refer to);
//! - **checkpoint**: the `checkpoints/` shadow git repository (and `checkpoints.removing-…` left by
//!   an interrupted cleanup);
//! - **other**: anything else (removed only with `include_other`, and only from a folder holding
//!   a conversation file: a folder that is not a task's loses nothing but checkpoint data).
//!
//! A checkpoint folder is first renamed to `checkpoints.removing-<stamp>` (atomic), then deleted,
//! so an interruption never leaves a half-deleted repository that the extension would try to use.
//! Symbolic links are removed as links, never followed; a task folder that is a link out of the
//! store ([`crate::confine::task_folder_out`]) is left alone and named in the report.

use crate::cache::task_sig;
use crate::fsutil;
use crate::{Result, StoreError};
use roo_formats::read::names;
use serde::Serialize;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// What a file in a task folder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileClass {
    Conversation,
    Checkpoint,
    Other,
}

/// Names whose files hold conversation data.
pub const CONVERSATION_NAMES: [&str; 6] = [
    names::UI_MESSAGES,
    names::CLAUDE_MESSAGES,
    names::API_HISTORY,
    "api_history.jsonl",
    names::HISTORY_ITEM,
    names::TASK_METADATA,
];

/// Class of a path relative to its task folder. Outside `checkpoints/`, a path any of whose
/// components is named like a conversation file is conversation data, wherever it lies.
pub fn classify(rel: &Path) -> FileClass {
    let comps: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().to_lowercase()),
            _ => None,
        })
        .collect();
    let Some(first) = comps.first() else {
        return FileClass::Other;
    };
    if first == "command-output" {
        return FileClass::Conversation;
    }
    let nested = comps.len() > 1;
    if (first == "checkpoints" || first.starts_with("checkpoints.removing-"))
        && (nested || !is_conversation_name(first))
    {
        return FileClass::Checkpoint;
    }
    if comps.iter().any(|c| is_conversation_name(c)) {
        return FileClass::Conversation;
    }
    FileClass::Other
}

fn is_conversation_name(lower: &str) -> bool {
    CONVERSATION_NAMES.iter().any(|n| lower.contains(n))
        || lower.contains("ui_messages")
        || lower.contains("api_conversation_history")
        || lower.contains("claude_messages")
}

/// Options of [`cleanup_obsolete_checkpoints`].
#[derive(Debug, Clone)]
pub struct CleanupOptions {
    /// Only tasks whose last activity is older than this many days (`None`: any age).
    pub older_than_days: Option<f64>,
    /// Never touch the this-many most recently active tasks.
    pub keep_last: usize,
    /// Only tasks that finished (`completion_result` last, or `status: completed`).
    pub completed_only: bool,
    /// Also remove files that are neither conversation nor checkpoint data.
    pub include_other: bool,
    pub dry_run: bool,
    /// "Now", in ms (tests set it).
    pub now_ms: i64,
}

impl Default for CleanupOptions {
    fn default() -> Self {
        CleanupOptions {
            older_than_days: Some(30.0),
            keep_last: 10,
            completed_only: false,
            include_other: false,
            dry_run: true,
            now_ms: roo_js::now_ms(),
        }
    }
}

/// What was (or would be) removed from one task.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct TaskCleanup {
    pub task_id: String,
    /// ms since the epoch (newest conversation file).
    pub last_activity: i64,
    pub files: u64,
    pub bytes: u64,
    /// Removed paths, relative to the task folder (`checkpoints/` for the whole repository).
    pub paths: Vec<String>,
    pub removed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What [`cleanup_obsolete_checkpoints`] did.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CleanupReport {
    pub tasks_dir: String,
    pub dry_run: bool,
    pub tasks_scanned: u32,
    /// Tasks with something to remove that the policy selected.
    pub tasks_affected: u32,
    /// Tasks left alone by `keepLast`, `olderThanDays` or `completedOnly` although they hold
    /// checkpoint data.
    pub tasks_kept: u32,
    pub files: u64,
    /// Bytes freed (or that would be, in a dry run).
    pub bytes: u64,
    pub tasks: Vec<TaskCleanup>,
    /// Task folders left alone because they are links out of the store (each said in a sentence).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub refused: Vec<String>,
}

struct Removable {
    files: u64,
    bytes: u64,
    /// Top-level entries to remove (`checkpoints` as a whole, other files one by one).
    targets: Vec<PathBuf>,
}

fn removable(task_dir: &Path, include_other: bool) -> Removable {
    let mut r = Removable {
        files: 0,
        bytes: 0,
        targets: Vec::new(),
    };
    let Ok(entries) = fs::read_dir(task_dir) else {
        return r;
    };
    let mut tops: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    tops.sort();
    // "Other" files are taken only from a folder that is a task's: one holding a conversation
    // file. A folder that is not (a project, a home folder named as a store by mistake) loses
    // nothing but checkpoint data.
    let include_other = include_other && tops.iter().any(|p| is_conversation_file(p));
    for top in tops {
        let Ok(rel) = top.strip_prefix(task_dir) else {
            continue;
        };
        let md = match fs::symlink_metadata(&top) {
            Ok(m) => m,
            Err(_) => continue,
        };
        let class = if md.is_dir() && !md.file_type().is_symlink() {
            // Classify the folder by a path inside it.
            classify(&rel.join("x"))
        } else {
            classify(rel)
        };
        let take = match class {
            FileClass::Checkpoint => true,
            FileClass::Other => include_other,
            FileClass::Conversation => false,
        };
        if !take {
            continue;
        }
        if md.is_dir() && !md.file_type().is_symlink() {
            // Inside a checkpoint or other folder, everything goes with the folder, except that a
            // conversation file found in an "other" folder keeps the folder alive.
            let mut files = 0;
            let mut bytes = 0;
            let mut protected = false;
            for e in walkdir::WalkDir::new(&top)
                .follow_links(false)
                .into_iter()
                .flatten()
            {
                if e.file_type().is_dir() {
                    continue;
                }
                let rel_e = e.path().strip_prefix(task_dir).unwrap_or(e.path());
                if classify(rel_e) == FileClass::Conversation {
                    protected = true;
                }
                files += 1;
                bytes += e.metadata().map_or(0, |m| m.len());
            }
            if protected {
                continue;
            }
            r.files += files;
            r.bytes += bytes;
        } else {
            r.files += 1;
            r.bytes += md.len();
        }
        r.targets.push(top);
    }
    r
}

/// Whether `path` is one of the conversation files a task folder holds (a regular file).
fn is_conversation_file(path: &Path) -> bool {
    let named = path.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        CONVERSATION_NAMES.iter().any(|c| n == *c)
    });
    named && fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

fn is_completed(task_id: &str, dir: &Path) -> bool {
    let opts = roo_state::AnalyzeOptions {
        include_sequence: false,
        ..Default::default()
    };
    roo_state::analyze_task(task_id, dir, &opts).is_ok_and(|s| s.is_completed)
}

/// Remove checkpoint data from the tasks of `tasks_dir` that the policy selects.
pub fn cleanup_obsolete_checkpoints(
    tasks_dir: &Path,
    opts: &CleanupOptions,
    cancel: Option<&AtomicBool>,
) -> Result<CleanupReport> {
    let _writer = if opts.dry_run {
        None
    } else {
        Some(crate::lock::store_writer(tasks_dir, "cleanup")?)
    };
    let (dirs, _) = roo_state::scan::list_task_dirs(tasks_dir).map_err(|e| match e {
        roo_state::scan::ScanError::NotFound(p) => StoreError::NotFound { path: p },
        other => StoreError::InvalidPath(other.to_string()),
    })?;
    let mut report = CleanupReport {
        tasks_dir: tasks_dir.display().to_string(),
        dry_run: opts.dry_run,
        tasks_scanned: dirs.len() as u32,
        ..CleanupReport::default()
    };
    // Last activity: the newest conversation file.
    let mut tasks: Vec<(String, PathBuf, i64)> = dirs
        .into_iter()
        .map(|(id, dir)| {
            let last = task_sig(&dir)
                .iter()
                .flatten()
                .map(|(_, ns)| ns / 1_000_000)
                .max()
                .unwrap_or_else(|| fs::metadata(&dir).map_or(0, |m| fsutil::mtime_ms(&m)));
            (id, dir, last)
        })
        .collect();
    tasks.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let cutoff = opts
        .older_than_days
        .map(|d| opts.now_ms - (d * 86_400_000.0) as i64);
    let stamp = fsutil::file_stamp(opts.now_ms);
    for (rank, (id, dir, last)) in tasks.into_iter().enumerate() {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(StoreError::Aborted);
        }
        if let Some(out) = crate::confine::task_folder_out(&dir) {
            report.refused.push(out.to_string());
            continue;
        }
        let found = removable(&dir, opts.include_other);
        if found.targets.is_empty() {
            continue;
        }
        let selected = rank >= opts.keep_last
            && cutoff.is_none_or(|c| last < c)
            && (!opts.completed_only || is_completed(&id, &dir));
        if !selected {
            report.tasks_kept += 1;
            continue;
        }
        let mut t = TaskCleanup {
            task_id: id.clone(),
            last_activity: last,
            files: found.files,
            bytes: found.bytes,
            paths: found
                .targets
                .iter()
                .filter_map(|p| p.strip_prefix(&dir).ok())
                .map(|p| {
                    let s = p.to_string_lossy().replace('\\', "/");
                    if dir.join(p).is_dir() {
                        format!("{s}/")
                    } else {
                        s
                    }
                })
                .collect(),
            removed: false,
            error: None,
        };
        if !opts.dry_run {
            match remove_targets(&dir, &found.targets, &stamp) {
                Ok(()) => t.removed = true,
                Err(e) => t.error = Some(e.to_string()),
            }
        }
        report.tasks_affected += 1;
        report.files += t.files;
        report.bytes += t.bytes;
        report.tasks.push(t);
    }
    Ok(report)
}

fn remove_targets(task_dir: &Path, targets: &[PathBuf], stamp: &str) -> std::io::Result<()> {
    // Checked again right before removal: the folder may have been swapped for a link since.
    if let Some(out) = crate::confine::task_folder_out(task_dir) {
        return Err(std::io::Error::other(out.to_string()));
    }
    for target in targets {
        let rel = target.strip_prefix(task_dir).unwrap_or(target);
        // Checked again right before removal: a conversation path is never removed.
        if classify(rel) == FileClass::Conversation {
            continue;
        }
        let md = fs::symlink_metadata(target)?;
        if md.is_dir() && !md.file_type().is_symlink() {
            let name = target
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let doomed = if name.starts_with("checkpoints.removing-") {
                target.clone()
            } else {
                let d = task_dir.join(format!("checkpoints.removing-{stamp}"));
                let d = if name == "checkpoints" && !d.exists() {
                    d
                } else {
                    task_dir.join(format!(".{name}.removing-{stamp}"))
                };
                fs::rename(target, &d)?;
                d
            };
            fs::remove_dir_all(&doomed)?;
        } else {
            fs::remove_file(target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let c = |p: &str| classify(Path::new(p));
        assert_eq!(c("ui_messages.json"), FileClass::Conversation);
        assert_eq!(c(".ui_messages.json.bak_1_x.tmp"), FileClass::Conversation);
        assert_eq!(c("history_item.json.bak-2025"), FileClass::Conversation);
        assert_eq!(c("command-output/cmd-1.txt"), FileClass::Conversation);
        assert_eq!(c("checkpoints/.git/HEAD"), FileClass::Checkpoint);
        assert_eq!(c("checkpoints/ui_messages.json"), FileClass::Checkpoint);
        assert_eq!(c("checkpoints.removing-x/a"), FileClass::Checkpoint);
        assert_eq!(c("notes.txt"), FileClass::Other);
        assert_eq!(c("checkpoints"), FileClass::Checkpoint);
        assert_eq!(c("notes/ui_messages.json.copy"), FileClass::Conversation);
    }
}
