//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

/// `fixtures/stores/<name>/tasks`.
pub fn fixture_tasks(name: &str) -> PathBuf {
    repo_root()
        .join("fixtures")
        .join("stores")
        .join(name)
        .join("tasks")
}

/// Every fixture store name.
pub const FIXTURE_STORES: [&str; 6] = [
    "claude-dev-2024",
    "damaged",
    "history-item-v3.50",
    "native-tools-v3.45",
    "stack-era-v3.20",
    "v2-wrapper",
];

pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for e in fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

/// A tasks folder holding `n` tasks copied round-robin from the fixture stores, each with a
/// fresh id `t00000`, `t00001`, …
pub fn make_tasks(tasks_dir: &Path, n: usize) -> Vec<String> {
    let mut sources: Vec<PathBuf> = Vec::new();
    for s in [
        "history-item-v3.50",
        "native-tools-v3.45",
        "stack-era-v3.20",
        "v2-wrapper",
        "claude-dev-2024",
    ] {
        for e in fs::read_dir(fixture_tasks(s)).expect("fixture") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                sources.push(p);
            }
        }
    }
    sources.sort();
    let mut ids = Vec::new();
    for i in 0..n {
        let id = format!("t{i:05}");
        copy_dir(&sources[i % sources.len()], &tasks_dir.join(&id));
        ids.push(id);
    }
    ids
}

/// Move a file's modification time forward by `secs`.
pub fn touch(path: &Path, secs: u64) {
    let f = fs::OpenOptions::new().write(true).open(path).expect("open");
    let md = f.metadata().expect("md");
    let t = md.modified().unwrap_or(SystemTime::now()) + Duration::from_secs(secs);
    f.set_modified(t).expect("set mtime");
}

/// Every file of `dir` made `files` seconds old, and `dir` itself `folder` seconds.
pub fn age(dir: &Path, files: u64, folder: u64) {
    let now = SystemTime::now();
    for f in fs::read_dir(dir).expect("task").flatten() {
        set_mtime(&f.path(), now - Duration::from_secs(files));
    }
    set_mtime(dir, now - Duration::from_secs(folder));
}

pub fn set_mtime(path: &Path, t: SystemTime) {
    fs::File::open(path)
        .and_then(|f| f.set_modified(t))
        .expect("set mtime");
}

/// Every file under `root` (folders followed down, symbolic links as they point), sorted; a
/// folder that cannot be read holds nothing.
pub fn files_under(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out.sort();
    out
}

/// Every file under `root` with its bytes, relative paths sorted.
pub fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = (files_under(root).into_iter())
        .map(|p| {
            let rel = p
                .strip_prefix(root)
                .expect("prefix")
                .to_string_lossy()
                .replace('\\', "/");
            (rel, fs::read(&p).expect("read"))
        })
        .collect();
    out.sort();
    out
}

/// A temporary folder holding `ext/tasks` with `n` tasks ([`make_tasks`]) and the path of a cache
/// root beside it (not created).
pub fn temp_store(n: usize) -> (tempfile::TempDir, PathBuf, PathBuf, Vec<String>) {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("ext").join("tasks");
    let ids = make_tasks(&tasks, n);
    let cache = tmp.path().join("cache");
    (tmp, tasks, cache, ids)
}

/// Rebuild options regenerating the extension's index, at a fixed "now".
pub fn rebuild_opts(
    tasks: &Path,
    cache: &Path,
    dry_run: bool,
) -> roo_store::rebuild::RebuildOptions<'static> {
    roo_store::rebuild::RebuildOptions {
        tasks_dir: tasks.to_path_buf(),
        cache_root: cache.to_path_buf(),
        regenerate_extension_index: true,
        dry_run,
        on_progress: None,
        cancel: None,
        now_ms: 1_760_000_000_000,
    }
}

/// A task store handle over `tasks`, with its cache under `cache_root` (`None`: no cache).
pub fn open_store(tasks: &Path, cache_root: Option<&Path>) -> roo_store::task_store::TaskStore {
    open_store_with(tasks, cache_root, false)
}

/// [`open_store`]; `every_file`: every file of every task stat'ed on each refresh.
pub fn open_store_with(
    tasks: &Path,
    cache_root: Option<&Path>,
    every_file: bool,
) -> roo_store::task_store::TaskStore {
    roo_store::task_store::TaskStore::open(
        &roo_store::HostEnv::current(),
        &roo_store::task_store::OpenOptions {
            tasks_dirs: vec![tasks.to_path_buf()],
            cache_root: cache_root.map(Path::to_path_buf),
            ignore_stored_links: false,
            every_file,
        },
    )
    .expect("open")
}
