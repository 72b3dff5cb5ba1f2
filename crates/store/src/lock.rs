//! An exclusive lock on a cache directory, so two processes (or two threads) never write the same
//! cache at once.
//!
//! It is an advisory lock held by the operating system on an open `lock` file (`flock` on Unix,
//! `LockFileEx` on Windows, through `fs4`). The OS releases it when the holder exits or crashes, so
//! no stale lock can outlive its process and no pid or age check is needed. The file also records
//! who holds the lock, for people reading the directory.
//!
//! [`store_writer`] is the one-writer rule of the maintenance commands that write into a task
//! store (rebuild, cleanup, migrate): a lock per store, in the system's temporary folder (so that
//! processes with different cache folders see each other), taken without waiting: the second
//! writer is told the store is busy.

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

/// The writer lock of the task store `tasks_dir`, for `what` (a command's name); another holder
/// makes it [`StoreError::Busy`] at once.
pub fn store_writer(tasks_dir: &Path, what: &str) -> Result<DirLock> {
    let dir = std::env::temp_dir()
        .join("roo-state-core-writers")
        .join(crate::fsutil::path_key(&crate::fsutil::canonical(
            tasks_dir,
        )));
    DirLock::acquire(&dir, Duration::ZERO, None).map_err(|e| match e {
        StoreError::Locked { .. } => StoreError::Busy(format!(
            "another roo-state process is writing {} (a rebuild, cleanup or migration); the {what} \
             was not started: run it again when that one has finished",
            tasks_dir.display()
        )),
        other => other,
    })
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        // Closing the file releases the lock; unlocking first makes it immediate on every OS.
        let _ = FileExt::unlock(&self.file);
    }
}
