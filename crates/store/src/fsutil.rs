//! File-system helpers: atomic writes, backups, signatures, tree sizes and hashes.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// `2025-09-17T13:11:01.175Z` → `20250917T131101175Z`: a sortable stamp usable in file names.
pub fn file_stamp(ms: i64) -> String {
    roo_js::iso_from_ms(ms)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect()
}

/// Size and modification time (ns since the epoch) of a regular file; `None` when it is missing
/// or not a file.
pub type FileSig = Option<(u64, i64)>;

pub fn file_sig(path: &Path) -> FileSig {
    let md = fs::metadata(path).ok()?;
    if !md.is_file() {
        return None;
    }
    Some((md.len(), mtime_ns(&md)))
}

/// A folder opened once, whose files are stat'ed by paths relative to it: on Linux one `statx` on
/// the open folder (the kernel walks only the relative part, and `AT_STATX_DONT_SYNC` lets a
/// network file system answer from what it holds), elsewhere [`file_sig`] of the joined path.
pub struct SigDir {
    path: PathBuf,
    #[cfg(target_os = "linux")]
    fd: Option<rustix::fd::OwnedFd>,
}

impl SigDir {
    pub fn open(path: &Path) -> SigDir {
        SigDir {
            path: path.to_path_buf(),
            #[cfg(target_os = "linux")]
            fd: rustix::fs::open(
                path,
                rustix::fs::OFlags::PATH
                    | rustix::fs::OFlags::DIRECTORY
                    | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .ok(),
        }
    }

    /// [`file_sig`] of `rel` inside the folder (an absolute `rel` is taken as it is).
    pub fn file_sig(&self, rel: &Path) -> FileSig {
        match self.stat(rel)? {
            (Kind::File, len, ns) => Some((len, ns)),
            _ => None,
        }
    }

    /// The modification time (ns since the epoch) of the folder `rel` inside this one; `None`
    /// when it is missing or not a folder.
    pub fn folder_mtime(&self, rel: &Path) -> Option<i64> {
        match self.stat(rel)? {
            (Kind::Folder, _, ns) => Some(ns),
            _ => None,
        }
    }

    /// The kind, size and modification time of `rel` (symbolic links followed).
    fn stat(&self, rel: &Path) -> Option<(Kind, u64, i64)> {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            use rustix::fs::{statx, AtFlags, FileType, StatxFlags};
            let mask = StatxFlags::TYPE | StatxFlags::SIZE | StatxFlags::MTIME;
            match statx(fd, rel, AtFlags::STATX_DONT_SYNC, mask) {
                Ok(st) => {
                    let kind = match FileType::from_raw_mode(st.stx_mode.into()) {
                        FileType::RegularFile => Kind::File,
                        FileType::Directory => Kind::Folder,
                        _ => Kind::Other,
                    };
                    let t = &st.stx_mtime;
                    // As `mtime_ns`: a time before the epoch is 0.
                    let ns = if t.tv_sec < 0 {
                        0
                    } else {
                        (i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec))
                            .min(i128::from(i64::MAX)) as i64
                    };
                    return Some((kind, st.stx_size, ns));
                }
                // A kernel without statx: the path as below.
                Err(rustix::io::Errno::NOSYS) => {}
                Err(_) => return None,
            }
        }
        let md = fs::metadata(self.path.join(rel)).ok()?;
        let kind = if md.is_file() {
            Kind::File
        } else if md.is_dir() {
            Kind::Folder
        } else {
            Kind::Other
        };
        Some((kind, md.len(), mtime_ns(&md)))
    }
}

enum Kind {
    File,
    Folder,
    Other,
}

pub fn mtime_ns(md: &fs::Metadata) -> i64 {
    md.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64)
}

pub fn mtime_ms(md: &fs::Metadata) -> i64 {
    mtime_ns(md) / 1_000_000
}

/// Write `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader sees the old content or the new one, never a mix. The directory is created if needed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, true)
}

/// [`write_atomic`]; `durable: false` skips the flush to disk before the rename (for our own
/// cache, where a file damaged by a power cut is detected and rebuilt).
pub fn write_atomic_with(path: &Path, bytes: &[u8], durable: bool) -> io::Result<()> {
    write_atomic_by(path, durable, |f| f.write_all(bytes))
}

/// [`write_atomic_with`] of what `write` writes to the temporary file (a file written in parts,
/// without first joining them in memory).
pub fn write_atomic_by(
    path: &Path,
    durable: bool,
    write: impl FnOnce(&mut fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        write(&mut f)?;
        if durable {
            f.sync_all()?;
        }
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Remove the temporary files [`write_atomic_with`] left in `dir` for the files named in
/// `names` (a run killed between writing and renaming leaves `.<name>.tmp-<pid>-<ns>`). Only for a
/// caller holding the store's writer lock: no live writer can own them then. Returns how many
/// were removed.
pub fn remove_stale_temps(dir: &Path, names: &[&str]) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let file_name = e.file_name();
        let n = file_name.to_string_lossy();
        let ours = names
            .iter()
            .any(|name| n.starts_with(&format!(".{name}.tmp-")));
        if ours && e.file_type().is_ok_and(|t| t.is_file()) && fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// A free backup name beside `path`: `<name>.bak-<stamp>` (then `-2`, `-3`, … if taken).
pub fn backup_path(path: &Path, stamp: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let first = path.with_file_name(format!("{name}.bak-{stamp}"));
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|i| path.with_file_name(format!("{name}.bak-{stamp}-{i}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

/// Copy `path` to a fresh backup beside it (see [`backup_path`]); returns the backup's path.
pub fn backup_file(path: &Path, stamp: &str) -> io::Result<PathBuf> {
    let dest = backup_path(path, stamp);
    fs::copy(path, &dest)?;
    Ok(dest)
}

/// Files and bytes under `root` (symbolic links are counted as links, never followed).
pub fn tree_size(root: &Path) -> (u64, u64) {
    let mut files = 0u64;
    let mut bytes = 0u64;
    for entry in walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file() {
            files += 1;
            bytes += entry.metadata().map_or(0, |m| m.len());
        }
    }
    (files, bytes)
}

/// Size and xxh3-64 hash of a file's content.
pub fn hash_file(path: &Path) -> io::Result<(u64, u64)> {
    let mut f = fs::File::open(path)?;
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((size, hasher.digest()))
}

/// A stable short key for a path (cache directory names).
pub fn path_key(path: &Path) -> String {
    format!(
        "{:016x}",
        xxhash_rust::xxh3::xxh3_64(path.to_string_lossy().as_bytes())
    )
}

/// `path` made absolute and canonical when possible (symbolic links resolved), else absolute.
pub fn canonical(path: &Path) -> PathBuf {
    if let Ok(p) = fs::canonicalize(path) {
        return strip_verbatim(p);
    }
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Windows' `\\?\C:\…` → `C:\…` (canonicalize adds the prefix; people never write it).
fn strip_verbatim(p: PathBuf) -> PathBuf {
    let s = p.to_string_lossy();
    if let Some(rest) = s.strip_prefix(r"\\?\") {
        if !rest.starts_with("UNC") {
            return PathBuf::from(rest.to_owned());
        }
    }
    p
}

/// True when `inner` is `outer` or lies under it (both canonicalised first).
pub fn is_within(inner: &Path, outer: &Path) -> bool {
    canonical(inner).starts_with(canonical(outer))
}
