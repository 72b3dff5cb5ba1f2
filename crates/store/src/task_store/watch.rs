//! A watch on the handle's task folders, so that a refresh with nothing changed stats nothing.
//!
//! A refresh stats every task folder (50 000 `statx` calls at 50 000 tasks: 60–100 ms on a
//! 2-core machine). A process that keeps a handle (the daemon, a server) can instead be told by
//! the system what changed: [`TaskStore::watch`] asks for events on each tasks folder and, where
//! the system's watch is not recursive (inotify on Linux), on each task folder. Any event on a
//! tasks folder, a task folder or a file directly in one marks the handle changed; the next
//! refresh then makes its full pass, exactly as without a watch. Events deeper down (a
//! checkpoint's files) are not what a skeleton is made of and are let go. Reads are never
//! events, so the pass does not wake the watch itself.
//!
//! The system reads its events on a thread of its own, a little after the writes. So that a
//! refresh sees every write made before it was called, it first syncs with that thread, as
//! watchman does: it creates a file in a folder of ours watched through the same queue and
//! waits for that file's event; every event queued before it has then been taken in (inotify
//! keeps one queue per watch instance, in order). Nothing is ever written into a store.
//!
//! The watch never makes a refresh skip something it would have seen: it starts marked changed
//! (what happened before it started is unknown), it is marked again when a pass fails, and a
//! watch the system stops serving (a lost event queue, a folder it cannot watch, the limit on
//! watched folders) is dropped, every refresh then stating the folders as before, with the
//! reason kept for [`TaskStore::watch_status`].

use super::{RefreshReport, TaskStore};
use crate::cache;
use notify::event::ModifyKind;
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a refresh waits for its sync file's event before it makes its pass anyway.
const SYNC_WAIT: Duration = Duration::from_secs(2);

/// Whether the system's watch of a folder reports only the folder's own entries (inotify), so
/// each task folder needs a watch of its own. Elsewhere (FSEvents, ReadDirectoryChangesW) one
/// recursive watch of the tasks folder sees everything, and events below a task folder's files
/// are let go.
const PER_FOLDER: bool = cfg!(any(target_os = "linux", target_os = "android"));

/// What a handle's watch is doing.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "TaskStoreWatch"),
    ts(optional_fields)
)]
pub struct WatchStatus {
    /// The system reports changes: a refresh with nothing changed stats nothing.
    pub watching: bool,
    /// Folders watched: the tasks folders, and each task folder where the watch is per folder.
    pub folders: u32,
    /// Why the handle is not (or no longer) watched: every refresh stats the folders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What the watch's thread tells the handle.
#[derive(Default)]
struct Seen {
    /// Something changed since the last refresh's pass began.
    changed: AtomicBool,
    /// Folders created or moved into a tasks folder since: watched before the next pass.
    created: Mutex<Vec<PathBuf>>,
    /// Why the watch can no longer be trusted.
    broken: Mutex<Option<String>>,
    /// The highest sync file number whose event was taken in, and its signal.
    synced: Mutex<u64>,
    synced_signal: Condvar,
}

impl Seen {
    fn mark(&self) {
        self.changed.store(true, Ordering::SeqCst);
    }

    fn fail(&self, why: String) {
        if let Ok(mut b) = self.broken.lock() {
            b.get_or_insert(why);
        }
        self.mark();
    }

    /// Take in one event from the system.
    fn take(&self, roots: &[Root], sync_dir: &Path, event: Event) {
        if matches!(event.kind, EventKind::Access(_)) {
            return;
        }
        if let Some(n) = (event.paths.first()).and_then(|p| sync_number(sync_dir, p)) {
            if let Ok(mut synced) = self.synced.lock() {
                *synced = (*synced).max(n);
                self.synced_signal.notify_all();
            }
            return;
        }
        if event.need_rescan() {
            // The system dropped events: nothing can be said of what changed.
            self.fail("the system's event queue overflowed".into());
            return;
        }
        if event.paths.is_empty() {
            self.mark();
        }
        for path in &event.paths {
            match roots.iter().find_map(|r| r.depth(path)) {
                // Below a task folder's own files: not what a skeleton is made of.
                Some(d) if d > 2 => {}
                // The tasks folder's own attributes or times (a chmod, a touch): it is still
                // watched; the next pass sees what that changed.
                Some(0) if matches!(event.kind, EventKind::Modify(ModifyKind::Metadata(_))) => {
                    self.mark()
                }
                Some(0) => self.fail(format!("{} itself was removed or moved", path.display())),
                Some(d) => {
                    self.mark();
                    let arrived = matches!(
                        event.kind,
                        EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(_))
                    );
                    if PER_FOLDER && d == 1 && arrived {
                        if let Ok(mut c) = self.created.lock() {
                            c.push(path.clone());
                        }
                    }
                }
                // A path under none of the roots as given: assume the worst.
                None => self.mark(),
            }
        }
    }
}

/// The number of a sync file of `sync_dir` (`sync-N`), if `path` is one.
fn sync_number(sync_dir: &Path, path: &Path) -> Option<u64> {
    if path.parent()? != sync_dir {
        return None;
    }
    path.file_name()?
        .to_str()?
        .strip_prefix("sync-")?
        .parse()
        .ok()
}

/// A tasks folder as watched, and as the system may name it back (links resolved).
struct Root {
    given: PathBuf,
    real: Option<PathBuf>,
}

impl Root {
    fn new(dir: &Path) -> Root {
        let real = std::fs::canonicalize(dir).ok().filter(|r| r != dir);
        Root {
            given: dir.to_path_buf(),
            real,
        }
    }

    /// How many levels below the tasks folder `path` is (0: the folder itself).
    fn depth(&self, path: &Path) -> Option<usize> {
        let rel = path
            .strip_prefix(&self.given)
            .ok()
            .or_else(|| path.strip_prefix(self.real.as_ref()?).ok())?;
        Some(rel.components().count())
    }
}

/// The watch of one handle.
pub(super) struct FolderWatch {
    watcher: RecommendedWatcher,
    seen: Arc<Seen>,
    /// A folder of ours, watched through the same queue, for the sync files (removed on drop).
    sync_dir: PathBuf,
    syncs: AtomicU64,
    folders: u32,
    /// The task count of the last full pass (a refresh that stats nothing reports it).
    pub(super) tasks: u32,
}

/// What the watch says before a refresh.
pub(super) enum Before {
    /// Nothing changed since the last pass began.
    Unchanged,
    /// Something did: a full pass, with the mark taken.
    Changed,
    /// The watch stopped: why.
    Broken(String),
}

impl FolderWatch {
    /// Watch the tasks folders `dirs` (and, per folder, each task folder in them).
    fn start(dirs: &[PathBuf]) -> Result<FolderWatch, String> {
        if let Some((dir, kind)) = dirs.iter().find_map(|d| Some((d, remote_filesystem(d)?))) {
            return Err(format!(
                "{} is on a {kind} filesystem, whose changes made from elsewhere (another machine, \
                 the other side of a virtual machine) the system reports no event for",
                dir.display()
            ));
        }
        let seen = Arc::new(Seen::default());
        let roots: Vec<Root> = dirs.iter().map(|d| Root::new(d)).collect();
        let sync_dir = make_sync_dir()?;
        let on_event = Arc::clone(&seen);
        let their_sync_dir = sync_dir.clone();
        let watcher = notify::recommended_watcher(move |res: notify::Result<Event>| match res {
            Ok(event) => on_event.take(&roots, &their_sync_dir, event),
            Err(e) => on_event.fail(e.to_string()),
        })
        .map_err(|e| format!("the system's file watch could not start: {e}"))?;
        let mode = match PER_FOLDER {
            true => RecursiveMode::NonRecursive,
            false => RecursiveMode::Recursive,
        };
        let mut watch = FolderWatch {
            watcher,
            seen,
            sync_dir,
            syncs: AtomicU64::new(0),
            folders: 0,
            tasks: 0,
        };
        watch_one(
            &mut watch.watcher,
            &watch.sync_dir.clone(),
            RecursiveMode::NonRecursive,
        )?;
        watch.watch_stores(dirs, mode)?;
        // What changed before the watch began is unknown: the first refresh makes its pass.
        watch.seen.mark();
        Ok(watch)
    }

    /// Watch each tasks folder (and, per folder, each task folder in them).
    fn watch_stores(&mut self, dirs: &[PathBuf], mode: RecursiveMode) -> Result<(), String> {
        let watcher = &mut self.watcher;
        let mut folders = 0u32;
        for dir in dirs {
            watch_one(watcher, dir, mode)?;
            folders += 1;
            if PER_FOLDER {
                let listed = cache::list_tasks(dir).map_err(|e| e.to_string())?;
                for (_, task_dir) in listed {
                    watch_one(watcher, &task_dir, mode)?;
                    folders += 1;
                }
            }
        }
        self.folders = folders;
        Ok(())
    }

    /// Wait until every event queued before now has been taken in (module documentation).
    /// `false`: the sync file could not be made or its event did not come in time.
    fn sync(&self) -> bool {
        let n = self.syncs.fetch_add(1, Ordering::SeqCst) + 1;
        let file = self.sync_dir.join(format!("sync-{n}"));
        if std::fs::File::create(&file).is_err() {
            return false;
        }
        let waited = self.seen.synced.lock().ok().and_then(|synced| {
            let (synced, timeout) = (self.seen.synced_signal)
                .wait_timeout_while(synced, SYNC_WAIT, |s| *s < n)
                .ok()?;
            Some(!timeout.timed_out() && *synced >= n)
        });
        let _ = std::fs::remove_file(&file);
        waited.unwrap_or(false)
    }

    /// Sync with the watch's thread, watch the folders that arrived, then say whether a pass is
    /// needed (taking the mark).
    fn before_refresh(&mut self) -> Before {
        if !self.sync() {
            // Not known to be up to date: the pass is made.
            self.seen.mark();
        }
        let created = match self.seen.created.lock() {
            Ok(mut c) => std::mem::take(&mut *c),
            Err(_) => return Before::Broken("the watch's state is unusable".into()),
        };
        for dir in created.iter().filter(|d| d.is_dir()) {
            if let Err(why) = watch_one(&mut self.watcher, dir, RecursiveMode::NonRecursive) {
                return Before::Broken(why);
            }
            self.folders += 1;
        }
        if let Some(why) = self.seen.broken.lock().ok().and_then(|b| b.clone()) {
            return Before::Broken(why);
        }
        match self.seen.changed.swap(false, Ordering::SeqCst) {
            true => Before::Changed,
            false => Before::Unchanged,
        }
    }
}

impl Drop for FolderWatch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.sync_dir);
    }
}

/// Filesystems (Linux `statfs` magic numbers) where writes made from elsewhere (another machine,
/// the host of a virtual machine) raise no event here: a watch there could miss a change.
#[cfg(any(target_os = "linux", target_os = "android"))]
const REMOTE: [(u64, &str); 11] = [
    (0x6969, "NFS"),
    (0x517B, "SMB"),
    (0xFF53_4D42, "CIFS"),
    (0xFE53_4D42, "SMB2"),
    (0x6573_5546, "FUSE"),
    (0x00C3_6400, "Ceph"),
    (0x5346_414F, "AFS"),
    (0x0102_1997, "9P"),
    (0x7375_7245, "Coda"),
    (0x6A65_6A63, "virtiofs"),
    (0x786F_4256, "VirtualBox shared folder"),
];

/// The kind of network or shared filesystem `dir` is on, if it is on one (module `REMOTE`).
fn remote_filesystem(dir: &Path) -> Option<&'static str> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let kind = (rustix::fs::statfs(dir).ok()?.f_type as u64) & 0xFFFF_FFFF;
        REMOTE
            .iter()
            .find(|(m, _)| *m == kind)
            .map(|(_, name)| *name)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = dir;
        None
    }
}

/// A new folder of this process for a watch's sync files, in the system's temporary folder.
fn make_sync_dir() -> Result<PathBuf, String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("roo-state-watch-{}-{n}", std::process::id()));
    // Left by an earlier process of the same id: its files are no one's now.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("{} could not be made for the watch: {e}", dir.display()))?;
    Ok(dir)
}

/// Watch one folder; a folder gone meanwhile is not an error (the pass sees it gone).
fn watch_one(w: &mut RecommendedWatcher, dir: &Path, mode: RecursiveMode) -> Result<(), String> {
    match w.watch(dir, mode) {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.kind, notify::ErrorKind::PathNotFound) => Ok(()),
        Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => Err(format!(
            "the system's limit on watched folders was reached at {} (on Linux: \
             fs.inotify.max_user_watches)",
            dir.display()
        )),
        Err(e) => Err(format!("{} could not be watched: {e}", dir.display())),
    }
}

impl TaskStore {
    /// Watch the handle's folders from now on: a refresh with nothing changed since the last
    /// one then stats nothing (module documentation). The first refresh after this still makes
    /// its full pass. A watch that cannot start leaves the handle as it was, and says why.
    pub fn watch(&mut self) -> WatchStatus {
        if self.watch.is_none() {
            let dirs: Vec<PathBuf> = self
                .stores
                .iter()
                .map(|s| s.tasks_dir.clone().into())
                .collect();
            match FolderWatch::start(&dirs) {
                Ok(w) => {
                    self.watch = Some(w);
                    self.unwatched = None;
                }
                Err(why) => self.unwatched = Some(why),
            }
        }
        self.watch_status()
    }

    /// Whether the handle is watched, how widely, or why not.
    pub fn watch_status(&self) -> WatchStatus {
        WatchStatus {
            watching: self.watch.is_some(),
            folders: self.watch.as_ref().map_or(0, |w| w.folders),
            reason: self.unwatched.clone(),
        }
    }

    /// The watch's word before a refresh: the report of a refresh that makes no pass, when
    /// nothing changed since the last one. A watch that broke is dropped here (its reason kept),
    /// and the pass made.
    pub(super) fn unchanged_since_last_pass(&mut self) -> Option<RefreshReport> {
        let w = self.watch.as_mut()?;
        match w.before_refresh() {
            Before::Unchanged => Some(RefreshReport {
                tasks: w.tasks,
                cache: "none".into(),
                watched: true,
                ..RefreshReport::default()
            }),
            Before::Changed => None,
            Before::Broken(why) => {
                self.watch = None;
                self.unwatched = Some(why);
                None
            }
        }
    }

    /// After a pass: its task count kept for the refreshes that make none; a failed pass leaves
    /// the watch marked, so the next refresh makes it again.
    pub(super) fn after_pass(&mut self, tasks: Option<u32>) {
        if let Some(w) = self.watch.as_mut() {
            match tasks {
                Some(n) => w.tasks = n,
                None => w.seen.mark(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, ModifyKind};

    fn event(kind: EventKind, path: &str) -> Event {
        Event::new(kind).add_path(PathBuf::from(path))
    }

    fn roots() -> Vec<Root> {
        vec![Root {
            given: PathBuf::from("/s/tasks"),
            real: None,
        }]
    }

    #[test]
    fn a_local_folder_is_not_taken_for_a_network_one() {
        assert_eq!(remote_filesystem(&std::env::temp_dir()), None);
        assert_eq!(
            remote_filesystem(Path::new(env!("CARGO_MANIFEST_DIR"))),
            None
        );
    }

    #[test]
    fn a_file_of_a_task_folder_marks_the_handle_changed() {
        let seen = Seen::default();
        seen.take(
            &roots(),
            Path::new("/sync"),
            event(
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                "/s/tasks/t1/ui_messages.json",
            ),
        );
        assert!(seen.changed.load(Ordering::SeqCst));
    }

    #[test]
    fn reads_and_files_below_a_task_folder_do_not() {
        let seen = Seen::default();
        let open = EventKind::Access(notify::event::AccessKind::Open(
            notify::event::AccessMode::Read,
        ));
        seen.take(
            &roots(),
            Path::new("/sync"),
            event(open, "/s/tasks/t1/ui_messages.json"),
        );
        seen.take(
            &roots(),
            Path::new("/sync"),
            event(
                EventKind::Create(CreateKind::File),
                "/s/tasks/t1/checkpoints/.git/objects/ab",
            ),
        );
        assert!(!seen.changed.load(Ordering::SeqCst));
    }

    #[test]
    fn a_new_task_folder_is_marked_and_kept_to_watch() {
        let seen = Seen::default();
        seen.take(
            &roots(),
            Path::new("/sync"),
            event(EventKind::Create(CreateKind::Folder), "/s/tasks/t2"),
        );
        assert!(seen.changed.load(Ordering::SeqCst));
        let created = seen.created.lock().map(|c| c.clone()).unwrap_or_default();
        assert_eq!(created.is_empty(), !PER_FOLDER);
    }

    #[test]
    fn an_unknown_path_or_the_tasks_folder_itself_assume_the_worst() {
        let seen = Seen::default();
        seen.take(
            &roots(),
            Path::new("/sync"),
            event(EventKind::Create(CreateKind::File), "/elsewhere/x"),
        );
        assert!(seen.changed.load(Ordering::SeqCst));
        let seen = Seen::default();
        seen.take(
            &roots(),
            Path::new("/sync"),
            event(
                EventKind::Remove(notify::event::RemoveKind::Folder),
                "/s/tasks",
            ),
        );
        assert!(seen.broken.lock().map(|b| b.is_some()).unwrap_or(false));
    }
}
