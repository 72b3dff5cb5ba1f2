//! An exclusive lock on a cache directory, so two processes (or two threads) never write the same
//! cache at once.
//!
//! It is an advisory lock held by the operating system on an open `lock` file (`flock` on Unix,
//! `LockFileEx` on Windows, through `fs4`). The OS releases it when the holder exits or crashes, so
//! no stale lock can outlive its process and no pid or age check is needed. The file also records
//! who holds the lock, for people reading the directory.
//!
//! [`store_writer`] is the one-writer rule of the maintenance commands that write into a task
//! store (rebuild, cleanup, migrate): a lock file per store, taken without waiting (the second
//! writer is told the store is busy), in a folder of the user's own ([`writers_dir`]: the
//! runtime folder `$XDG_RUNTIME_DIR`, else the platform's cache folder, never a folder shared
//! with other users, and not the `--cache-dir`, so that processes with different cache folders
//! see each other), made private (0700) and refused when another user owns it. The holder
//! removes its file when it is done; a file a killed holder left (its lock released by the OS) is
//! removed by the next writer.

use crate::{Result, StoreError};
use fs4::fs_std::FileExt;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a builder waits for another one by default.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
}

impl DirLock {
    /// Take the lock of `dir` (created if needed), waiting up to `wait` for another holder and
    /// giving up early when `cancel` is set.
    pub fn acquire(dir: &Path, wait: Duration, cancel: Option<&AtomicBool>) -> Result<DirLock> {
        fs::create_dir_all(dir).map_err(|e| StoreError::io("creating", dir, e))?;
        let path = dir.join("lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::io("opening the lock file", &path, e))?;
        let start = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            match file.try_lock_exclusive() {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(StoreError::io("locking", &path, e)),
            }
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Err(StoreError::Aborted);
            }
            if start.elapsed() >= wait {
                return Err(StoreError::Locked {
                    path,
                    waited_ms: start.elapsed().as_millis() as u64,
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
        }
        let mut lock = DirLock { file, path };
        lock.note_holder();
        Ok(lock)
    }

    fn note_holder(&mut self) {
        let _ = self.file.set_len(0);
        let _ = writeln!(
            self.file,
            "{{\"pid\":{},\"since\":{}}}",
            std::process::id(),
            roo_js::now_ms()
        );
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The folder of the writer locks: `$XDG_RUNTIME_DIR/roo-state-core/writers` when the system
/// gives the user a runtime folder (an absolute path), else
/// `<the user's cache folder>/roo-state-core/writers`; created private (0700 on Unix), made
/// private again when it is not, and refused when another user owns it.
pub fn writers_dir() -> Result<PathBuf> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = runtime
        .or_else(|| roo_dirs::current(roo_dirs::Folder::Cache))
        .ok_or_else(|| {
            StoreError::InvalidPath(
                "no per-user folder for the writer locks: neither XDG_RUNTIME_DIR nor a home \
                 folder is set"
                    .into(),
            )
        })?;
    let dir = base.join("roo-state-core").join("writers");
    private_dir(&dir)?;
    Ok(dir)
}

/// Create `dir` (and what it lacks) readable by its owner only, and check it is the user's own.
fn private_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| StoreError::io("creating", dir, e))?;
        let md = fs::symlink_metadata(dir).map_err(|e| StoreError::io("reading", dir, e))?;
        let me = rustix::process::geteuid().as_raw();
        if !md.is_dir() || md.uid() != me {
            return Err(StoreError::InvalidPath(format!(
                "{} is not a folder of this user's own (owner {}, this user {me}); the writer \
                 locks are not kept there",
                dir.display(),
                md.uid()
            )));
        }
        if md.mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| StoreError::io("making private", dir, e))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        fs::create_dir_all(dir).map_err(|e| StoreError::io("creating", dir, e))
    }
}

/// A store's writer lock, held until dropped (its file then removed).
#[derive(Debug)]
pub struct WriterLock {
    file: File,
    path: PathBuf,
    /// What the lock file says: the holder, and the extension's file lock it holds now.
    note: serde_json::Value,
    /// An extension file lock a killed writer of this store left behind, removed on taking over.
    cleared: Option<PathBuf>,
}

impl WriterLock {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Note in the lock file that this writer is about to take the extension's file lock
    /// `lock_dir`: if it is killed between making that folder and [`WriterLock::note_holding`],
    /// the next writer still knows the folder is its own (made after this note, within the few
    /// seconds a writer waits for a lock).
    pub fn note_acquiring(&mut self, lock_dir: &Path) {
        self.note["holding"] = serde_json::json!({ "lock": lock_dir.display().to_string() });
        self.write_note();
    }

    /// Note in the lock file that this writer holds the extension's file lock `lock_dir` (a
    /// `proper-lockfile` folder, made at `mtime_ns`): if this process is killed before
    /// [`WriterLock::note_released`], the next writer of the store removes that folder rather than
    /// leave the extension waiting for it to go stale.
    pub fn note_holding(&mut self, lock_dir: &Path, mtime_ns: i64) {
        self.note["holding"] = serde_json::json!({
            "lock": lock_dir.display().to_string(),
            "mtimeNs": mtime_ns,
        });
        self.write_note();
    }

    /// The file lock noted with [`WriterLock::note_holding`] was released.
    pub fn note_released(&mut self) {
        if let Some(o) = self.note.as_object_mut() {
            o.remove("holding");
        }
        self.write_note();
    }

    /// The extension file lock a killed writer of this store had noted and left, removed when
    /// this lock was taken.
    pub fn cleared(&self) -> Option<&Path> {
        self.cleared.as_deref()
    }

    /// The note is one line, written over the old one and then cut to its length: a kill between
    /// the two leaves the new note on the first line, never an empty file.
    fn write_note(&mut self) {
        use std::io::{Seek, SeekFrom};
        let line = format!("{}\n", self.note);
        if self.file.seek(SeekFrom::Start(0)).is_ok()
            && self.file.write_all(line.as_bytes()).is_ok()
        {
            let _ = self.file.set_len(line.len() as u64);
        }
    }
}

/// How long after its "about to take" note a writer can have made the lock folder: its waits for
/// the lock (3.3 s in all) and slack. The extension takes a lock over only once it is 31 s old.
const ACQUIRING_WINDOW_NS: i64 = 10_000_000_000;

/// The extension file lock a killed writer noted in the lock file `file` and left as it made it,
/// removed and returned: the folder still there with the modification time noted, or, when the
/// writer was killed while taking it, made after the note (the note file's own modification time)
/// and within [`ACQUIRING_WINDOW_NS`] of it.
fn clear_left_holding(file: &mut File) -> Option<PathBuf> {
    use std::io::{Read, Seek, SeekFrom};
    let noted_at = crate::fsutil::mtime_ns(&file.metadata().ok()?);
    file.seek(SeekFrom::Start(0)).ok()?;
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    let note: serde_json::Value = serde_json::from_str(text.lines().next()?.trim()).ok()?;
    let holding = note.get("holding")?;
    let lock = PathBuf::from(holding.get("lock")?.as_str()?);
    let md = fs::symlink_metadata(&lock).ok()?;
    if !md.is_dir() {
        return None;
    }
    let made = crate::fsutil::mtime_ns(&md);
    let ours = match holding.get("mtimeNs").and_then(serde_json::Value::as_i64) {
        Some(noted) => made == noted,
        None => made >= noted_at && made - noted_at <= ACQUIRING_WINDOW_NS,
    };
    if !ours {
        return None;
    }
    fs::remove_dir(&lock).ok()?;
    Some(lock)
}

/// Whether `path` still names the file `file` is open on (a holder that finished removes its
/// file; a writer that opened it before must then start again on a new one).
fn still_named(path: &Path, file: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (fs::metadata(path), file.metadata()) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (path, file);
        true
    }
}

/// Lock `path` (created if needed) without waiting: `Ok(None)` when another process holds it.
fn try_lock_file(path: &Path) -> Result<Option<File>> {
    for _ in 0..8 {
        let mut o = OpenOptions::new();
        o.create(true).truncate(false).read(true).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        let file = o
            .open(path)
            .map_err(|e| StoreError::io("opening the lock file", path, e))?;
        match file.try_lock_exclusive() {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => return Err(StoreError::io("locking", path, e)),
        }
        if still_named(path, &file) {
            return Ok(Some(file));
        }
    }
    Err(StoreError::Busy(format!(
        "the writer lock {} kept changing hands; try again",
        path.display()
    )))
}

/// Remove the lock files of `dir` that no process holds (their holders were killed), `keep`
/// aside.
fn remove_stale(dir: &Path, keep: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p == keep || p.extension().is_none_or(|x| x != "lock") {
            continue;
        }
        if let Ok(Some(mut file)) = try_lock_file(&p) {
            // Its holder was killed: an extension file lock it noted goes with it.
            let _ = clear_left_holding(&mut file);
            let _ = fs::remove_file(&p);
            let _ = FileExt::unlock(&file);
        }
    }
}

/// The writer lock of the task store `tasks_dir`, for `what` (a command's name), in
/// [`writers_dir`]; another holder makes it [`StoreError::Busy`] at once.
pub fn store_writer(tasks_dir: &Path, what: &str) -> Result<WriterLock> {
    let dir = writers_dir()?;
    let key = crate::fsutil::path_key(&crate::fsutil::canonical(tasks_dir));
    let path = dir.join(format!("{key}.lock"));
    let Some(mut file) = try_lock_file(&path)? else {
        return Err(StoreError::Busy(format!(
            "another roo-state process is writing {} (a rebuild, cleanup or migration); the {what} \
             was not started: run it again when that one has finished",
            tasks_dir.display()
        )));
    };
    let cleared = clear_left_holding(&mut file);
    let note = serde_json::json!({
        "pid": std::process::id(),
        "since": roo_js::now_ms(),
        "store": tasks_dir.display().to_string(),
    });
    remove_stale(&dir, &path);
    let mut lock = WriterLock {
        file,
        path,
        note,
        cleared,
    };
    lock.write_note();
    Ok(lock)
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Removed while held: a writer that opened it before finds it gone and starts again.
        #[cfg(unix)]
        let _ = fs::remove_file(&self.path);
        let _ = FileExt::unlock(&self.file);
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        // Closing the file releases the lock; unlocking first makes it immediate on every OS.
        let _ = FileExt::unlock(&self.file);
    }
}
