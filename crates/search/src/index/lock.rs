//! The exclusive right to write one index directory.

use crate::error::{Error, Result};
use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The exclusive right to write one index directory: a lock within the process and a file lock
/// across processes.
pub(super) struct WriteLock {
    key: PathBuf,
    _file: File,
}

/// The index directories locked by this process.
fn held() -> &'static Mutex<HashSet<PathBuf>> {
    static HELD: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    HELD.get_or_init(|| Mutex::new(HashSet::new()))
}

impl WriteLock {
    /// Take the lock of `index_dir`; `Busy` when another run (here or in another process) holds it.
    pub(super) fn acquire(index_dir: &Path) -> Result<Self> {
        use fs4::fs_std::FileExt;
        let key = index_dir.to_path_buf();
        {
            let mut h = held().lock().map_err(|_| Error::Busy(key.clone()))?;
            if !h.insert(key.clone()) {
                return Err(Error::Busy(key));
            }
        }
        let release = |key: &PathBuf| {
            if let Ok(mut h) = held().lock() {
                h.remove(key);
            }
        };
        let path = index_dir.join(".index.lock");
        let file = match std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) => {
                release(&key);
                return Err(Error::io(path, e));
            }
        };
        match file.try_lock_exclusive() {
            Ok(true) => Ok(Self { key, _file: file }),
            Ok(false) => {
                release(&key);
                Err(Error::Busy(index_dir.to_path_buf()))
            }
            Err(e) => {
                release(&key);
                Err(Error::io(path, e))
            }
        }
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        if let Ok(mut h) = held().lock() {
            h.remove(&self.key);
        }
    }
}
