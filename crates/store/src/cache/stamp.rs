//! Stat passes that let a task folder's modification time stand for its files, where the store's
//! writer allows it.
//!
//! Roo Code, Zoo Code and Kilo Code write each task file to a temporary file beside it and
//! rename that over the old one, and a rename changes the folder's modification time. In such a
//! store a folder whose time has not moved holds the files it held, so a pass stats the folder
//! alone: one `statx` per task instead of four. Cline writes its files in place, which leaves the
//! folder's time as it was, and so may any other tool. A folder's time stands for its files only
//! when all of these hold:
//! - the store's path names a host that writes by rename ([`writes_by_rename`]), and the caller
//!   did not ask for every file to be stat'ed;
//! - the store's most recently written tasks show it: each of those folders is at least as new
//!   as each of its files ([`trusted`]). Older tasks may have been written in place by an older
//!   version of the host; what matters is how the store is written now;
//! - the folder's time is the one its [`FolderMark`] recorded when its files were last stat'ed,
//!   and that time was then already [`SETTLE_NS`] old (a change within the same tick of the file
//!   system's clock would leave the time as it was);
//! - the task is not in the pass's slice: each pass stats every file of one folder in
//!   [`SLICES`], so a change made in place by another tool is seen within that many passes. Such
//!   a change leaves a file newer than its folder and makes the task the store's newest, which
//!   ends the trust in the store until newer tasks are written by rename again.
//!
//! The folder is stat'ed before its files: a rename between the two leaves an old folder time
//! beside new file signatures, which the next pass sees as a moved folder.

use super::{sig_with, TaskSig};
use crate::fsutil;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Each pass stats every file of the folders at positions `slice`, `slice + SLICES`, ….
pub const SLICES: usize = 16;

/// How old a folder's time must be when seen for a mark to stand (FAT keeps times to 2 s).
pub const SETTLE_NS: i64 = 2_000_000_000;

/// How many of a store's most recently written tasks [`trusted`] looks at.
const NEWEST: usize = 8;

/// A task folder's modification time, as the last pass that stat'ed its files saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderMark {
    /// The folder's modification time, ns since the epoch.
    #[serde(rename = "t")]
    pub mtime: i64,
    /// The time was at least [`SETTLE_NS`] old when seen: it may stand for the files.
    #[serde(rename = "s")]
    pub settled: bool,
}

/// A task's signature from its last pass and its mark.
pub type Prior = (TaskSig, FolderMark);

/// How a pass treats task folders.
pub enum Folders<'a> {
    /// Every file stat'ed, no folder: a store whose writer may write in place.
    Ignore,
    /// Every file stat'ed, and each folder, to mark it.
    Mark,
    /// [`Folders::Mark`], except that a folder whose mark stands keeps the files it had
    /// (`prior`: a task's last signature and mark, by position in the listing and id; `slice`:
    /// see the module).
    Trust {
        prior: &'a (dyn Fn(usize, &str) -> Option<Prior> + Sync),
        slice: usize,
    },
}

impl<'a> Folders<'a> {
    /// Every file stat'ed, and each folder marked where its time may stand for its files later
    /// (a store whose host writes by rename, unless `every_file`).
    pub fn marking(tasks_dir: &Path, every_file: bool) -> Folders<'static> {
        if every_file || !writes_by_rename(tasks_dir) {
            Folders::Ignore
        } else {
            Folders::Mark
        }
    }

    /// [`Folders::Trust`] where the store lets a folder's time stand for its files: it is marked
    /// ([`Folders::marking`]) and its most recently written tasks show the pattern ([`trusted`],
    /// of each task's last signature and mark); `None` otherwise.
    pub fn trusting<'t>(
        tasks_dir: &Path,
        every_file: bool,
        tasks: impl Iterator<Item = (&'t TaskSig, Option<FolderMark>)>,
        prior: &'a (dyn Fn(usize, &str) -> Option<Prior> + Sync),
        slice: usize,
    ) -> Option<Folders<'a>> {
        match Folders::marking(tasks_dir, every_file) {
            Folders::Mark if trusted(tasks) => Some(Folders::Trust { prior, slice }),
            _ => None,
        }
    }
}

/// The slice a process's first pass checks in full: it moves with the clock, so short-lived
/// callers (a CLI command, an open) check every folder in turn too.
pub fn clock_slice() -> usize {
    usize::try_from(roo_js::now_ms() / 1000).unwrap_or(0) % SLICES
}

/// What a pass saw of one task folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub sig: TaskSig,
    pub folder: Option<FolderMark>,
    /// The files were not stat'ed: the folder's mark stood for them.
    pub trusted: bool,
}

/// Whether the store at `tasks_dir` is written by a host that replaces its task files by rename.
pub fn writes_by_rename(tasks_dir: &Path) -> bool {
    roo_formats::host::host_of_path(tasks_dir).is_some_and(|h| h.writes_by_rename)
}

/// Whether a store's most recently written tasks (by their newest file) each have a folder at
/// least as new as their files.
pub fn trusted<'a>(tasks: impl Iterator<Item = (&'a TaskSig, Option<FolderMark>)>) -> bool {
    // The newest few, newest first: (time of the newest file, marked).
    let mut newest: Vec<(i64, bool)> = Vec::with_capacity(NEWEST + 1);
    for (sig, mark) in tasks {
        let t = newest_file(sig);
        if newest.len() == NEWEST && newest.last().is_some_and(|l| l.0 >= t) {
            continue;
        }
        let at = newest.partition_point(|n| n.0 >= t);
        newest.insert(at, (t, mark.is_some_and(|m| m.mtime >= t)));
        newest.truncate(NEWEST);
    }
    !newest.is_empty() && newest.iter().all(|n| n.1)
}

/// A listed folder relative to the tasks folder: its id when that is its name (the id is the
/// name made UTF-8, so it is longer when they differ), else the name.
fn relative<'a>(id: &'a str, dir: &'a Path) -> &'a Path {
    if dir.as_os_str().as_encoded_bytes().ends_with(id.as_bytes()) {
        Path::new(id)
    } else {
        dir.file_name().map_or(dir, Path::new)
    }
}

fn newest_file(sig: &TaskSig) -> i64 {
    sig.iter().flatten().map(|f| f.1).max().unwrap_or(0)
}

/// The stamp of each task folder of `tasks_dir` (as [`super::list_tasks`] gave them), in
/// parallel, paths relative to `tasks_dir` opened once ([`fsutil::SigDir`]).
pub fn task_stamps(tasks_dir: &Path, dirs: &[(String, PathBuf)], folders: &Folders) -> Vec<Stamp> {
    let at = fsutil::SigDir::open(tasks_dir);
    let now = roo_js::now_ms().saturating_mul(1_000_000);
    dirs.par_iter()
        .enumerate()
        .map_init(PathBuf::new, |path, (i, (id, d))| {
            let rel = relative(id, d);
            let folder = match folders {
                Folders::Ignore => None,
                _ => at.folder_mtime(rel),
            };
            if let (Folders::Trust { prior, slice }, Some(t)) = (folders, folder) {
                if i % SLICES != *slice {
                    if let Some((sig, mark)) =
                        prior(i, id).filter(|p| p.1.settled && p.1.mtime == t)
                    {
                        return Stamp {
                            sig,
                            folder: Some(mark),
                            trusted: true,
                        };
                    }
                }
            }
            let sig = sig_with(|name| {
                // One path buffer per thread, not one allocation per file.
                path.as_mut_os_string().clear();
                path.push(rel);
                path.push(name);
                at.file_sig(path)
            });
            let folder = folder.map(|t| FolderMark {
                mtime: t,
                settled: t.saturating_add(SETTLE_NS) <= now,
            });
            Stamp {
                sig,
                folder,
                trusted: false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(file_ns: i64, folder_ns: Option<i64>) -> (TaskSig, Option<FolderMark>) {
        let sig = [
            Some((10, file_ns)),
            None,
            Some((20, file_ns - 5)),
            None,
            None,
        ];
        let mark = folder_ns.map(|mtime| FolderMark {
            mtime,
            settled: true,
        });
        (sig, mark)
    }

    fn trusts(tasks: &[(TaskSig, Option<FolderMark>)]) -> bool {
        trusted(tasks.iter().map(|(s, m)| (s, *m)))
    }

    #[test]
    fn the_newest_tasks_decide() {
        // Twenty tasks written by rename (folder as new as the files), newest last.
        let mut tasks: Vec<_> = (0..20).map(|i| task(1000 + i, Some(1000 + i))).collect();
        assert!(trusts(&tasks));
        // An old task written in place (file newer than folder, older than the rest): no matter.
        tasks.push(task(500, Some(400)));
        assert!(trusts(&tasks));
        // The newest task written in place: the store is not trusted.
        tasks.push(task(2000, Some(1990)));
        assert!(!trusts(&tasks));
        // Eight newer tasks written by rename push it out of the newest few.
        tasks.extend((0..8).map(|i| task(3000 + i, Some(3000 + i))));
        assert!(trusts(&tasks));
        // A newest task whose folder was never stat'ed: not trusted.
        tasks.push(task(4000, None));
        assert!(!trusts(&tasks));
        assert!(!trusts(&[]));
    }

    #[test]
    fn a_folder_is_found_by_its_name_even_when_it_is_not_utf8() {
        let dir = Path::new("/s/tasks/0190-a");
        assert_eq!(relative("0190-a", dir), Path::new("0190-a"));
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let raw = std::ffi::OsStr::from_bytes(b"t\xffz");
            let dir = Path::new("/s/tasks").join(raw);
            assert_eq!(relative("t\u{fffd}z", &dir), Path::new(raw));
        }
    }

    #[test]
    fn only_hosts_that_write_by_rename() {
        let under = |host: &str| Path::new("/h/globalStorage").join(host).join("tasks");
        assert!(writes_by_rename(&under("rooveterinaryinc.roo-cline")));
        assert!(writes_by_rename(&under("zoocodeorganization.zoo-code")));
        assert!(writes_by_rename(&under("kilocode.kilo-code")));
        assert!(!writes_by_rename(&under("saoudrizwan.claude-dev")));
        assert!(!writes_by_rename(Path::new("/tmp/store/tasks")));
    }
}
