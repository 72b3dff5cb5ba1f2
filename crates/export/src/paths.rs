//! Where an export may be written, and how it is written.
//!
//! Every `filePath` goes through [`resolve_output`] before any export work starts:
//!
//! - the path is read the same way on every platform: `/` and `\` both separate components, so
//!   `..\..\x` is caught on Linux as well as on Windows;
//! - rejected outright: an empty path, NUL and other control characters, `..` components, Windows
//!   device names (`CON`, `NUL`, `COM1`, `LPT1.txt`, …), drive-relative paths (`C:x`), device and
//!   verbatim namespaces (`\\?\`, `\\.\`), components ending in a dot or a space (Windows drops
//!   them, so two names would reach one file), the characters `< > : " | ? *` (alternate data
//!   streams, wildcards), backslashes on systems where they are not separators, over-long names;
//! - a relative path is taken inside the output root; an absolute one must lie inside it;
//! - the directories on the way are followed one by one from the (canonical) root: a symbolic link
//!   is accepted only when its target stays inside the root; a missing directory is created (and
//!   removed again if the export fails before anything is written);
//! - the file itself must not be a directory or a symbolic link, must not lie in a task store
//!   being read, and must not exist unless `overwrite` was asked for.
//!
//! [`AtomicFile`] then receives the export in a temporary file of the same directory, which is
//! synced and renamed over the target only when the export is complete (without `overwrite`, the
//! rename refuses to replace a file that appeared in the meantime). An abandoned export leaves
//! nothing behind.

use crate::error::{ExportError, Result};
use std::io::{BufWriter, Write};
use std::path::{Component, Path, PathBuf};

/// Longest accepted path (bytes) and component (bytes).
const MAX_PATH_BYTES: usize = 4096;
const MAX_NAME_BYTES: usize = 255;

/// Where exports may go.
#[derive(Debug, Clone)]
pub struct OutputPolicy {
    /// The output root; relative paths are taken inside it and absolute ones must lie inside it.
    pub root: PathBuf,
    /// Replace an existing file.
    pub overwrite: bool,
    /// Directories never written into (the task stores an export reads).
    pub forbidden: Vec<PathBuf>,
}

/// A checked output path.
#[derive(Debug, Clone)]
pub struct ResolvedPath {
    /// The file to write (its directory is canonical).
    pub path: PathBuf,
    /// The canonical output root.
    pub root: PathBuf,
    /// Directories created on the way, outermost first (removed again if nothing gets written).
    pub created_dirs: Vec<PathBuf>,
    pub overwrite: bool,
}

fn invalid(requested: &str, why: impl std::fmt::Display) -> ExportError {
    ExportError::InvalidPath(format!(
        "the export path {:?} was refused: {why}",
        shorten(requested)
    ))
}

fn shorten(s: &str) -> String {
    let s: String = s.chars().take(200).collect();
    s.replace('\0', "\\0")
}

/// `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9` (and the superscript digits),
/// `CONIN$`, `CONOUT$`, `CLOCK$`, with or without an extension, in any case.
pub fn is_windows_device_name(component: &str) -> bool {
    let stem = component.split('.').next().unwrap_or_default();
    let stem = stem.trim_end_matches([' ', '.']).to_ascii_uppercase();
    match stem.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" | "CLOCK$" => true,
        _ => {
            let (head, tail) = match (stem.get(..3), stem.get(3..)) {
                (Some(h), Some(t)) => (h, t),
                _ => return false,
            };
            (head == "COM" || head == "LPT")
                && matches!(
                    tail,
                    "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³"
                )
        }
    }
}

fn has_drive_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Lexical checks of a requested path; returns its components (without `.` and empty ones) and
/// whether it is absolute.
fn lexical(requested: &str) -> Result<(Vec<String>, bool)> {
    if requested.trim().is_empty() {
        return Err(invalid(
            requested,
            "it is empty; give a file name such as export.xml",
        ));
    }
    if requested.contains('\0') {
        return Err(invalid(requested, "it contains a NUL byte"));
    }
    if requested.len() > MAX_PATH_BYTES {
        return Err(invalid(
            requested,
            format!("it is longer than {MAX_PATH_BYTES} bytes"),
        ));
    }
    if let Some(c) = requested.chars().find(|c| c.is_control()) {
        return Err(invalid(
            requested,
            format!("it contains the control character U+{:04X}", c as u32),
        ));
    }
    let unified = requested.replace('\\', "/");
    if unified.starts_with("//?/") || unified.starts_with("//./") || unified.starts_with("/??/") {
        return Err(invalid(
            requested,
            "device and verbatim namespaces (\\\\?\\, \\\\.\\) are not accepted",
        ));
    }
    let mut absolute = unified.starts_with('/');
    let mut rest = unified.as_str();
    let mut parts = Vec::new();
    if has_drive_prefix(&unified) {
        let after = &unified[2..];
        if !after.starts_with('/') {
            return Err(invalid(
                requested,
                "it is drive-relative (C:name depends on the drive's current directory); \
                 give a path relative to the output root or a full path inside it",
            ));
        }
        if !cfg!(windows) {
            return Err(invalid(
                requested,
                "a Windows drive path cannot lie inside the output root on this system",
            ));
        }
        absolute = true;
        parts.push(unified[..2].to_ascii_uppercase());
        rest = after;
    }
    if !cfg!(windows) && requested.contains('\\') {
        return Err(invalid(
            requested,
            "it contains a backslash, which is not a separator on this system; use /",
        ));
    }
    if cfg!(windows) && unified.starts_with("//") {
        return Err(invalid(requested, "network (UNC) paths are not accepted"));
    }
    for part in rest.split('/') {
        match part {
            "" | "." => continue,
            ".." => {
                return Err(invalid(
                    requested,
                    "'..' is not allowed in an export path; give a path inside the output root",
                ))
            }
            _ => {}
        }
        if is_windows_device_name(part) {
            return Err(invalid(
                requested,
                format!("{part:?} is a reserved Windows device name"),
            ));
        }
        if part.ends_with('.') || part.ends_with(' ') {
            return Err(invalid(
                requested,
                format!("the name {part:?} ends with a dot or a space"),
            ));
        }
        if let Some(c) = part.chars().find(|c| "<>:\"|?*".contains(*c)) {
            return Err(invalid(
                requested,
                format!("the name {part:?} contains {c:?}, which file names may not hold"),
            ));
        }
        if part.len() > MAX_NAME_BYTES {
            return Err(invalid(
                requested,
                format!("a name is longer than {MAX_NAME_BYTES} bytes"),
            ));
        }
        parts.push(part.to_owned());
    }
    if parts.is_empty() || (parts.len() == 1 && has_drive_prefix(&unified)) {
        return Err(invalid(requested, "it names no file"));
    }
    Ok((parts, absolute))
}

/// Components of an absolute path as strings (no `..`, which the caller has excluded).
fn absolute_parts(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::Prefix(p) => {
                let s = p.as_os_str().to_string_lossy().replace('\\', "/");
                Some(s.strip_prefix("//?/").unwrap_or(&s).to_owned())
            }
            _ => None,
        })
        .collect()
}

fn same_name(a: &str, b: &str) -> bool {
    if cfg!(windows) || cfg!(target_os = "macos") {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// `parts` (an absolute path's components) with the root's components removed, if it starts with them.
fn strip_root(parts: &[String], root: &Path) -> Option<Vec<String>> {
    let root_parts = absolute_parts(root);
    if parts.len() < root_parts.len() {
        return None;
    }
    let inside = root_parts
        .iter()
        .zip(parts)
        .all(|(r, p)| same_name(r.trim_end_matches(['/', '\\']), p.trim_end_matches('/')));
    inside.then(|| parts[root_parts.len()..].to_vec())
}

fn canonical(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// Is `path` (canonical) inside `root` (canonical)?
fn within(path: &Path, root: &Path) -> bool {
    strip_root(&absolute_parts(path), root).is_some()
}

/// Check `requested` against `policy` and prepare the directories on the way. See the
/// [module documentation](self).
pub fn resolve_output(requested: &str, policy: &OutputPolicy) -> Result<ResolvedPath> {
    let (parts, absolute) = lexical(requested)?;
    let root = output_root(policy)?;
    let relative = if absolute {
        inside_root(requested, &parts, &root, policy)?
    } else {
        parts
    };
    let Some((file_name, dirs)) = relative.split_last() else {
        return Err(invalid(requested, "it names no file"));
    };
    let lexical_target = relative.iter().fold(root.clone(), |p, c| p.join(c));
    if let Some(store) = forbidden_store(&lexical_target, policy) {
        return Err(invalid(requested, inside_store(&store)));
    }
    let mut walk = DirWalk {
        requested,
        root: &root,
        current: root.clone(),
        created_dirs: Vec::new(),
    };
    for dir in dirs {
        if let Err(e) = walk.enter(dir) {
            remove_created(&walk.created_dirs);
            return Err(e);
        }
    }
    let path = walk.current.join(file_name);
    let created_dirs = walk.created_dirs;
    if let Err(why) = check_target_file(&path, policy) {
        remove_created(&created_dirs);
        return Err(invalid(requested, why));
    }
    Ok(ResolvedPath {
        path,
        root,
        created_dirs,
        overwrite: policy.overwrite,
    })
}

/// The canonical output root, which must be an existing directory.
fn output_root(policy: &OutputPolicy) -> Result<PathBuf> {
    match std::fs::metadata(&policy.root) {
        Ok(md) if md.is_dir() => canonical(&policy.root).ok_or_else(|| {
            ExportError::InvalidPath(format!(
                "the output root {} cannot be resolved",
                policy.root.display()
            ))
        }),
        _ => Err(ExportError::InvalidPath(format!(
            "the output root {} is not an existing directory; create it or configure \
             another one (configureXmlExport set defaults.outputRoot)",
            policy.root.display()
        ))),
    }
}

/// An absolute path's components below the output root (canonical, or as configured); refused
/// when it lies outside the root or is the root itself.
fn inside_root(
    requested: &str,
    parts: &[String],
    root: &Path,
    policy: &OutputPolicy,
) -> Result<Vec<String>> {
    let given_root = if policy.root.is_absolute() {
        policy.root.clone()
    } else {
        std::env::current_dir()
            .map(|d| d.join(&policy.root))
            .unwrap_or_else(|_| policy.root.clone())
    };
    strip_root(parts, root)
        .or_else(|| strip_root(parts, &given_root))
        .filter(|r| !r.is_empty())
        .ok_or_else(|| {
            invalid(
                requested,
                format!(
                    "it lies outside the output root {}; give a path inside it (or a relative one)",
                    root.display()
                ),
            )
        })
}

/// The task store of `policy` that `path` lies in, if any (stores that cannot be resolved are
/// not there to protect).
fn forbidden_store(path: &Path, policy: &OutputPolicy) -> Option<PathBuf> {
    policy
        .forbidden
        .iter()
        .filter_map(|store| canonical(store))
        .find(|store| within(path, store))
}

/// Why a path inside the task store `store` is refused.
fn inside_store(store: &Path) -> String {
    format!(
        "it lies inside the task store {} that the export reads; exports never write there",
        store.display()
    )
}

/// The directories of an export path followed one by one from the root, following links only
/// while they stay inside it and creating the missing ones.
struct DirWalk<'a> {
    requested: &'a str,
    root: &'a Path,
    /// The (canonical) directory reached so far.
    current: PathBuf,
    /// Directories created on the way, outermost first.
    created_dirs: Vec<PathBuf>,
}

impl DirWalk<'_> {
    /// Step into `dir` below the current directory.
    fn enter(&mut self, dir: &str) -> Result<()> {
        let next = self.current.join(dir);
        match std::fs::symlink_metadata(&next) {
            Ok(md) if md.file_type().is_symlink() => self.current = self.follow_link(&next)?,
            Ok(md) if md.is_dir() => self.current = next,
            Ok(_) => {
                return Err(self.refuse(format!("{} exists and is not a directory", next.display())))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.current = self.create(next)?;
            }
            Err(e) => {
                return Err(self.refuse(format!("{} cannot be examined: {e}", next.display())))
            }
        }
        Ok(())
    }

    /// The target of the link `next`, which must be a directory inside the root.
    fn follow_link(&self, next: &Path) -> Result<PathBuf> {
        let target = canonical(next)
            .ok_or_else(|| self.refuse(format!("{} is a broken symbolic link", next.display())))?;
        if !within(&target, self.root) {
            return Err(self.refuse(format!(
                "{} is a symbolic link leading outside the output root",
                next.display()
            )));
        }
        if !target.is_dir() {
            return Err(self.refuse(format!("{} is not a directory", next.display())));
        }
        Ok(target)
    }

    /// Create the missing directory `next` (unless it appeared meanwhile); whatever now stands
    /// there must still be a directory inside the root.
    fn create(&mut self, next: PathBuf) -> Result<PathBuf> {
        match std::fs::create_dir(&next) {
            Ok(()) => self.created_dirs.push(next.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(self.refuse(format!(
                    "the directory {} could not be created: {e}",
                    next.display()
                )))
            }
        }
        match canonical(&next) {
            Some(c) if within(&c, self.root) && c.is_dir() => Ok(c),
            _ => Err(self.refuse(format!(
                "{} changed while it was being created",
                next.display()
            ))),
        }
    }

    /// The refusal of the requested path, for `why`.
    fn refuse(&self, why: String) -> ExportError {
        invalid(self.requested, why)
    }
}

/// Why the file `path` may not be written: inside a task store, a link, a directory, or an
/// existing file without `overwrite`.
fn check_target_file(path: &Path, policy: &OutputPolicy) -> std::result::Result<(), String> {
    if let Some(store) = forbidden_store(path, policy) {
        return Err(inside_store(&store));
    }
    match std::fs::symlink_metadata(path) {
        Ok(md) if md.file_type().is_symlink() => Err(format!(
            "{} is a symbolic link; exports do not write through links",
            path.display()
        )),
        Ok(md) if md.is_dir() => Err(format!("{} is a directory", path.display())),
        Ok(_) if !policy.overwrite => Err(format!(
            "{} already exists; pass overwrite: true to replace it",
            path.display()
        )),
        _ => Ok(()),
    }
}

fn remove_created(dirs: &[PathBuf]) {
    for d in dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
}

/// An export being written: a temporary file beside the target, renamed over it by [`finish`].
///
/// [`finish`]: AtomicFile::finish
pub struct AtomicFile {
    out: Option<BufWriter<tempfile::NamedTempFile>>,
    target: ResolvedPath,
    bytes: u64,
}

impl AtomicFile {
    /// Open a temporary file in the target's directory.
    pub fn create(target: ResolvedPath) -> Result<Self> {
        let dir = target
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut builder = tempfile::Builder::new();
        builder.prefix(".roo-export-").suffix(".tmp");
        // An export is an ordinary file: created with the user's umask (usually 0644), not the
        // 0600 of a private temporary file.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let tmp = builder.tempfile_in(&dir).map_err(|e| {
            remove_created(&target.created_dirs);
            ExportError::InvalidPath(format!(
                "a temporary file could not be created in {}: {e}",
                dir.display()
            ))
        })?;
        Ok(Self {
            out: Some(BufWriter::with_capacity(1 << 16, tmp)),
            target,
            bytes: 0,
        })
    }

    /// Flush, sync and rename over the target. Returns the path written and its size.
    pub fn finish(mut self) -> Result<(PathBuf, u64)> {
        let out = self
            .out
            .take()
            .ok_or_else(|| ExportError::Generation("the export file was already closed".into()))?;
        let tmp = out
            .into_inner()
            .map_err(|e| ExportError::io("the export could not be written", e.into_error()))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| ExportError::io("the export could not be synced to disk", e))?;
        // The directory must still be the one checked (inside the root).
        let dir_ok = self
            .target
            .path
            .parent()
            .and_then(canonical)
            .is_some_and(|d| within(&d, &self.target.root));
        if !dir_ok {
            return Err(ExportError::InvalidPath(format!(
                "the directory of {} changed during the export; nothing was written",
                self.target.path.display()
            )));
        }
        let persisted = if self.target.overwrite {
            tmp.persist(&self.target.path).map(|_| ())
        } else {
            tmp.persist_noclobber(&self.target.path).map(|_| ())
        };
        persisted.map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                ExportError::InvalidPath(format!(
                    "{} appeared during the export; pass overwrite: true to replace it",
                    self.target.path.display()
                ))
            } else {
                ExportError::io(
                    &format!(
                        "the export could not be moved to {}",
                        self.target.path.display()
                    ),
                    e.error,
                )
            }
        })?;
        self.target.created_dirs.clear();
        Ok((self.target.path.clone(), self.bytes))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not finished: the temporary file goes (NamedTempFile's own drop), then the directories
        // this export created.
        if let Some(out) = self.out.take() {
            drop(out);
            remove_created(&self.target.created_dirs);
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the export file is closed"))?;
        let n = out.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.out.as_mut() {
            Some(o) => o.flush(),
            None => Ok(()),
        }
    }
}

/// Where an export goes: returned in memory, or written to a checked file.
pub enum Sink {
    Memory(Vec<u8>),
    File(AtomicFile),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Memory(v) => {
                v.extend_from_slice(buf);
                Ok(buf.len())
            }
            Sink::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Memory(_) => Ok(()),
            Sink::File(f) => f.flush(),
        }
    }
}

/// What a finished sink produced.
pub enum Produced {
    Content(String),
    File { path: PathBuf, bytes: u64 },
}

impl Sink {
    /// An in-memory sink, or a file sink for `file_path` checked against `policy`.
    pub fn open(file_path: Option<&str>, policy: &OutputPolicy) -> Result<Self> {
        match file_path {
            None => Ok(Sink::Memory(Vec::new())),
            Some(p) => Ok(Sink::File(AtomicFile::create(resolve_output(p, policy)?)?)),
        }
    }

    pub fn finish(self) -> Result<Produced> {
        match self {
            Sink::Memory(v) => String::from_utf8(v)
                .map(Produced::Content)
                .map_err(|e| ExportError::Generation(format!("the export is not UTF-8: {e}"))),
            Sink::File(f) => f
                .finish()
                .map(|(path, bytes)| Produced::File { path, bytes }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names() {
        for n in [
            "CON", "con.xml", "Nul", "COM1.txt", "lpt9", "COM¹", "CONOUT$", "aux .md",
        ] {
            assert!(is_windows_device_name(n), "{n}");
        }
        for n in ["console.xml", "com10", "lpt", "null", "export.xml", "CONS"] {
            assert!(!is_windows_device_name(n), "{n}");
        }
    }

    #[test]
    fn lexical_rules() {
        assert!(lexical("a/b.xml").is_ok());
        assert!(lexical("./a//b.xml").is_ok());
        for bad in [
            "",
            " ",
            "../x",
            "a/../../x",
            "a\0b",
            "C:x.xml",
            "\\\\?\\C:\\x",
            "a/CON",
            "x.xml.",
            "x.xml ",
            "a:b",
            "a|b",
            "a\nb",
        ] {
            assert!(lexical(bad).is_err(), "{bad:?}");
        }
    }
}
