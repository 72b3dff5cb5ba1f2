//! Moving a tasks folder to another place, crash-safe at every step.
//!
//! Same device: a marker naming the destination is written into the source, then one rename
//! moves everything (marker included). Otherwise, or with `force_copy`:
//!
//! 1. copy into a staging folder beside the destination (`.<name>.roo-migrating`), keeping
//!    modification times;
//! 2. verify every file of the source against its copy (size and xxh3 hash);
//! 3. write the marker into the staging folder;
//! 4. rename the staging folder onto the destination (atomic: the destination appears complete,
//!    marker included, or not at all);
//! 5. rename the source aside (`.<name>.roo-migrated-removing`), then delete it.
//!
//! Before step 4 the source is untouched; from step 4 on the destination is complete and
//! verified. Running again after any interruption finishes the job: a staging folder without a
//! marked destination is discarded and copied again; a marked destination with the source still
//! present goes on to step 5 (after checking that the source holds nothing the copy lacks); a
//! finished migration is reported as such and nothing is done.
//!
//! The marker is `.roo-state-migration.json` (a dot-file, which the extension never takes for a
//! task).

use crate::fsutil;
use crate::{Result, StoreError};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// The marker file name.
pub const MARKER: &str = ".roo-state-migration.json";

/// Named points of the migration, where a test can make it fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Step {
    /// Before the marker is written into the source (rename path).
    MarkSource,
    /// Before the rename of the source onto the destination.
    Rename,
    /// After the rename.
    Renamed,
    /// After the n-th file copied.
    CopyFile,
    /// After the copy.
    Copied,
    /// After the verification.
    Verified,
    /// After the marker is written into the staging folder.
    StagedMarker,
    /// After the staging folder became the destination.
    Swapped,
    /// After the source was renamed aside.
    SourceRenamed,
    /// After the n-th entry of the source was deleted.
    RemoveEntry,
    /// After the source is gone.
    Removed,
}

/// Where to fail: the `after`-th time `step` is reached (counting from 1 for counted steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailPoint {
    pub step: Step,
    pub after: usize,
}

/// Options of [`migrate_tasks_dir`].
#[derive(Debug, Clone, Default)]
pub struct MigrateOptions {
    /// Report what would happen; write nothing.
    pub dry_run: bool,
    /// Copy and verify even when a rename would do.
    pub force_copy: bool,
    /// Tests only: stop with [`StoreError::Injected`] at this point, as a crash would.
    #[doc(hidden)]
    pub fail_at: Option<FailPoint>,
}

/// The marker's content.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Marker {
    pub from: String,
    pub to: String,
    /// `rename` or `copy`.
    pub method: String,
    pub files: u64,
    pub bytes: u64,
    /// ms since the epoch.
    pub at: i64,
    pub version: String,
}

/// What [`migrate_tasks_dir`] did.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MigrateReport {
    pub from: String,
    pub to: String,
    pub dry_run: bool,
    /// `rename`, `copy`, or `none` (already done).
    #[cfg_attr(feature = "ts", ts(type = "\"rename\" | \"copy\" | \"none\""))]
    pub method: String,
    /// The migration had already finished; nothing was done.
    pub already_done: bool,
    /// An interrupted migration was completed.
    pub resumed: bool,
    pub files: u64,
    pub bytes: u64,
    pub marker: String,
    /// Steps taken, in order.
    pub steps: Vec<String>,
}

struct Run<'a> {
    opts: &'a MigrateOptions,
    report: MigrateReport,
}

impl Run<'_> {
    fn point(&self, step: Step, n: usize) -> Result<()> {
        match self.opts.fail_at {
            Some(f) if f.step == step && f.after == n => {
                Err(StoreError::Injected(format!("{step:?}#{n}")))
            }
            _ => Ok(()),
        }
    }

    fn step(&mut self, s: impl Into<String>) {
        self.report.steps.push(s.into());
    }

    /// The marker of this migration, made by `method`, stamped now.
    fn marker(&self, method: &str) -> Marker {
        Marker {
            from: self.report.from.clone(),
            to: self.report.to.clone(),
            method: method.to_owned(),
            files: self.report.files,
            bytes: self.report.bytes,
            at: roo_js::now_ms(),
            version: crate::ENGINE_VERSION.to_owned(),
        }
    }
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tasks".into());
    path.with_file_name(format!(".{name}.{suffix}"))
}

fn absolute(p: &Path) -> PathBuf {
    fsutil::canonical(p)
}

fn is_empty_dir(p: &Path) -> bool {
    fs::read_dir(p).is_ok_and(|mut rd| rd.next().is_none())
}

fn read_marker(path: &Path) -> Option<Marker> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

fn write_marker(path: &Path, m: &Marker) -> Result<()> {
    let bytes =
        serde_json::to_vec_pretty(m).map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
    fsutil::write_atomic(path, &bytes).map_err(|e| StoreError::io("writing the marker", path, e))
}

/// Move the tasks folder `from` to `to`. See the [module documentation](self).
pub fn migrate_tasks_dir(from: &Path, to: &Path, opts: &MigrateOptions) -> Result<MigrateReport> {
    let from = absolute(from);
    let to = absolute(to);
    if from == to || to.starts_with(&from) || from.starts_with(&to) {
        return Err(StoreError::InvalidArgument(format!(
            "the source {} and the destination {} must be distinct and not inside each other",
            from.display(),
            to.display()
        )));
    }
    let _writer = if opts.dry_run {
        None
    } else {
        Some(crate::lock::store_writer(&from, "migration")?)
    };
    let marker_path = to.join(MARKER);
    let mut run = Run {
        opts,
        report: MigrateReport {
            from: from.display().to_string(),
            to: to.display().to_string(),
            dry_run: opts.dry_run,
            marker: marker_path.display().to_string(),
            ..MigrateReport::default()
        },
    };
    let places = Places {
        staging: sibling(&to, "roo-migrating"),
        doomed: sibling(&from, "roo-migrated-removing"),
        from,
        to,
    };
    if let Some(m) = read_marker(&marker_path) {
        return finish_marked(run, &places, &m);
    }
    let (from, to) = (&places.from, &places.to);
    if !from.is_dir() {
        return Err(StoreError::NotFound { path: from.clone() });
    }
    if to.exists() && !(to.is_dir() && is_empty_dir(to)) {
        return Err(StoreError::DestinationNotEmpty { path: to.clone() });
    }
    let (files, bytes) = fsutil::tree_size(from);
    run.report.files = files;
    run.report.bytes = bytes;
    if opts.dry_run {
        run.report.method = if opts.force_copy || !same_device(from, to) {
            "copy".into()
        } else {
            "rename".into()
        };
        run.step(format!("would move {files} file(s), {bytes} byte(s)"));
        return Ok(run.report);
    }
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| StoreError::io("creating", parent, e))?;
    }
    if !opts.force_copy && move_by_rename(&mut run, &places)? {
        return Ok(run.report);
    }
    move_by_copy(&mut run, &places)?;
    Ok(run.report)
}

/// The folders a migration touches.
struct Places {
    from: PathBuf,
    to: PathBuf,
    /// `.<name>.roo-migrating` beside the destination: the copy until it is complete and marked.
    staging: PathBuf,
    /// `.<name>.roo-migrated-removing` beside the source: the source on its way out.
    doomed: PathBuf,
}

/// A destination marked with `m`: the copy is complete, so what is left of the source is removed
/// (after checking that it holds nothing the copy lacks); nothing is done when it is already gone.
fn finish_marked(mut run: Run<'_>, places: &Places, m: &Marker) -> Result<MigrateReport> {
    let Places {
        from, to, doomed, ..
    } = places;
    if m.from != run.report.from {
        return Err(StoreError::DestinationNotEmpty { path: to.clone() });
    }
    run.report.files = m.files;
    run.report.bytes = m.bytes;
    run.report.method = m.method.clone();
    if !from.exists() && !doomed.exists() {
        run.report.already_done = true;
        run.report.method = "none".into();
        run.step("already migrated");
        return Ok(run.report);
    }
    run.report.resumed = true;
    if run.opts.dry_run {
        run.step("would remove what is left of the source");
        return Ok(run.report);
    }
    if from.exists() {
        // The source must hold nothing the copy lacks (it may have been used again since).
        verify(from, to).map_err(|e| match e {
            StoreError::VerifyFailed { detail, .. } => StoreError::VerifyFailed {
                path: from.clone(),
                detail: format!(
                    "{detail}; the source changed after it was migrated, so it was kept"
                ),
            },
            other => other,
        })?;
    }
    remove_source(&mut run, from, doomed)?;
    Ok(run.report)
}

/// The move in one rename: the source is marked, then renamed onto the destination. `false` when
/// the rename is refused (another device), with the source's marker removed again.
fn move_by_rename(run: &mut Run<'_>, places: &Places) -> Result<bool> {
    let Places { from, to, .. } = places;
    run.point(Step::MarkSource, 0)?;
    let src_marker = from.join(MARKER);
    write_marker(&src_marker, &run.marker("rename"))?;
    run.step("marked the source");
    run.point(Step::Rename, 0)?;
    if to.exists() {
        let _ = fs::remove_dir(to);
    }
    match fs::rename(from, to) {
        Ok(()) => {
            run.step("renamed");
            run.point(Step::Renamed, 0)?;
            run.report.method = "rename".into();
            Ok(true)
        }
        Err(e) => {
            // Another device (or a rename the OS refuses): copy instead.
            let _ = fs::remove_file(&src_marker);
            run.step(format!("rename refused ({e}); copying"));
            Ok(false)
        }
    }
}

/// The move by copy: copied into the staging folder, verified, marked, renamed onto the
/// destination; then the source is removed.
fn move_by_copy(run: &mut Run<'_>, places: &Places) -> Result<()> {
    let Places {
        from,
        to,
        staging,
        doomed,
    } = places;
    run.report.method = "copy".into();
    if staging.exists() {
        fs::remove_dir_all(staging)
            .map_err(|e| StoreError::io("removing the old staging folder", staging, e))?;
        run.step("discarded an unfinished copy");
    }
    copy_tree(run, from, staging)?;
    run.step("copied");
    run.point(Step::Copied, 0)?;
    verify(from, staging)?;
    run.step("verified");
    run.point(Step::Verified, 0)?;
    write_marker(&staging.join(MARKER), &run.marker("copy"))?;
    run.point(Step::StagedMarker, 0)?;
    if to.exists() {
        fs::remove_dir(to).map_err(|e| StoreError::io("removing the empty destination", to, e))?;
    }
    fs::rename(staging, to).map_err(|e| StoreError::io("renaming the copy into place", to, e))?;
    run.step("swapped");
    run.point(Step::Swapped, 0)?;
    remove_source(run, from, doomed)
}

fn remove_source(run: &mut Run, from: &Path, doomed: &Path) -> Result<()> {
    if from.exists() {
        if doomed.exists() {
            fs::remove_dir_all(doomed).map_err(|e| StoreError::io("removing", doomed, e))?;
        }
        fs::rename(from, doomed)
            .map_err(|e| StoreError::io("renaming the source aside", from, e))?;
        run.step("source renamed aside");
        run.point(Step::SourceRenamed, 0)?;
    }
    if doomed.exists() {
        remove_tree(run, doomed)?;
        run.step("source removed");
    }
    run.point(Step::Removed, 0)?;
    Ok(())
}

/// Delete a tree file by file (so a test can stop it half way).
fn remove_tree(run: &Run, root: &Path) -> Result<()> {
    let mut n = 0;
    let entries: Vec<walkdir::DirEntry> = walkdir::WalkDir::new(root)
        .follow_links(false)
        .contents_first(true)
        .into_iter()
        .flatten()
        .collect();
    for e in entries {
        let p = e.path();
        if e.file_type().is_dir() {
            fs::remove_dir(p).map_err(|err| StoreError::io("removing", p, err))?;
        } else {
            fs::remove_file(p).map_err(|err| StoreError::io("removing", p, err))?;
            n += 1;
            run.point(Step::RemoveEntry, n)?;
        }
    }
    Ok(())
}

fn copy_tree(run: &mut Run, from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).map_err(|e| StoreError::io("creating", to, e))?;
    let mut n = 0;
    for e in walkdir::WalkDir::new(from).follow_links(false).min_depth(1) {
        let e = e.map_err(|err| {
            let path = err
                .path()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| from.to_path_buf());
            StoreError::io("reading", path, std::io::Error::other(err.to_string()))
        })?;
        let rel = e.path().strip_prefix(from).unwrap_or(e.path());
        let dest = to.join(rel);
        let ft = e.file_type();
        if ft.is_dir() {
            fs::create_dir_all(&dest).map_err(|err| StoreError::io("creating", &dest, err))?;
        } else if ft.is_symlink() {
            copy_link(e.path(), &dest)?;
        } else {
            fs::copy(e.path(), &dest).map_err(|err| StoreError::io("copying", e.path(), err))?;
            if let Ok(mtime) = fs::metadata(e.path()).and_then(|m| m.modified()) {
                if let Ok(f) = fs::OpenOptions::new().write(true).open(&dest) {
                    let _ = f.set_modified(mtime);
                }
            }
            n += 1;
            run.point(Step::CopyFile, n)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn copy_link(src: &Path, dest: &Path) -> Result<()> {
    let target = fs::read_link(src).map_err(|e| StoreError::io("reading the link", src, e))?;
    std::os::unix::fs::symlink(target, dest)
        .map_err(|e| StoreError::io("creating the link", dest, e))
}

#[cfg(not(unix))]
fn copy_link(src: &Path, dest: &Path) -> Result<()> {
    // Links inside a tasks folder are unusual; copy what they point to.
    fs::copy(src, dest)
        .map(|_| ())
        .map_err(|e| StoreError::io("copying", src, e))
}

/// Every file of `src` exists in `dst` with the same size and hash (the marker excepted).
fn verify(src: &Path, dst: &Path) -> Result<()> {
    for e in walkdir::WalkDir::new(src).follow_links(false).min_depth(1) {
        let e = e.map_err(|err| StoreError::VerifyFailed {
            path: src.to_path_buf(),
            detail: err.to_string(),
        })?;
        if !e.file_type().is_file() {
            continue;
        }
        let rel = e.path().strip_prefix(src).unwrap_or(e.path());
        if rel == Path::new(MARKER) {
            continue;
        }
        let copy = dst.join(rel);
        let a =
            fsutil::hash_file(e.path()).map_err(|err| StoreError::io("reading", e.path(), err))?;
        let b = fsutil::hash_file(&copy).map_err(|_| StoreError::VerifyFailed {
            path: copy.clone(),
            detail: format!("{} is missing from the copy", rel.display()),
        })?;
        if a != b {
            return Err(StoreError::VerifyFailed {
                path: copy,
                detail: format!("{} differs (size {} vs {})", rel.display(), a.0, b.0),
            });
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_device(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let dev = |p: &Path| {
        p.ancestors()
            .find_map(|q| fs::metadata(q).ok())
            .map(|m| m.dev())
    };
    dev(a).is_some() && dev(a) == dev(b)
}

#[cfg(not(unix))]
fn same_device(a: &Path, b: &Path) -> bool {
    let root = |p: &Path| {
        p.components()
            .next()
            .map(|c| c.as_os_str().to_ascii_lowercase())
    };
    root(a) == root(b)
}
