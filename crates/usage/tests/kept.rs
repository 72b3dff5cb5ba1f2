//! The records kept beside the skeleton cache: a new index over a new handle (a new process)
//! takes them instead of reading the task folders, reads again only the tasks whose files
//! changed, and trusts nothing that does not check out; its report is the report of an index that
//! read every folder.

mod common;

use common::{open_all, stores_root, write_task};
use roo_usage::kept;
use roo_usage::report::{CostMode, Group, ReportOptions};
use roo_usage::{SyncReport, UsageIndex, UsageReport};
use std::path::{Path, PathBuf};

const TASKS: usize = 60;

/// The stores of a test: generated tasks, and the fixture stores of two eras (condense costs,
/// cancelled requests, file operations, history items), read where they are.
fn stores(tasks: &Path) -> Vec<PathBuf> {
    let mut all = vec![tasks.to_path_buf()];
    all.extend(
        ["native-tools-v3.45", "condense-era-v3.3x"].map(|s| stores_root().join(s).join("tasks")),
    );
    all
}

fn open_cached(tasks: &Path, cache: Option<&Path>) -> roo_store::task_store::TaskStore {
    let all = stores(tasks);
    let dirs: Vec<&Path> = all.iter().map(PathBuf::as_path).collect();
    open_all(&dirs, cache)
}

/// A report by task: it keeps no blocks between runs (tests/kept_blocks.rs), so each new process
/// takes every task's records, from the kept records or the folders.
fn by_task() -> ReportOptions {
    ReportOptions {
        group: Group::Tasks,
        cost_mode: CostMode::Auto,
        breakdown: true,
        ..ReportOptions::default()
    }
}

/// A report of a new index over a new handle (as a new process makes it), and what its sync did.
fn new_process(tasks: &Path, cache: &Path) -> (UsageReport, SyncReport) {
    let store = open_cached(tasks, Some(cache));
    let mut r = UsageIndex::new()
        .report(&store, &by_task())
        .expect("report");
    let sync = std::mem::take(&mut r.sync);
    (r, sync)
}

/// The report of an index that read every task folder (no cache at all).
fn from_folders(tasks: &Path) -> UsageReport {
    let mut r = UsageIndex::new()
        .report(&open_cached(tasks, None), &by_task())
        .expect("report");
    r.sync = SyncReport::default();
    r
}

/// A store of generated tasks.
fn store(root: &Path) -> PathBuf {
    let tasks = root.join("store").join("tasks");
    for n in 0..TASKS {
        write_task(&tasks, n, 1.0);
    }
    tasks
}

/// Every task of the test's stores.
fn count(tasks: &Path) -> u32 {
    stores(tasks)
        .iter()
        .map(|d| std::fs::read_dir(d).expect("tasks").count() as u32)
        .sum()
}

#[test]
fn a_new_process_reads_only_the_tasks_that_changed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = store(tmp.path());
    let cache = tmp.path().join("usage-cache");
    let n = count(&tasks);

    let (first, s) = new_process(&tasks, &cache);
    assert_eq!((s.read, s.cached), (n, 0));
    let file = kept::store_file(&cache, &tasks);
    assert!(
        file.is_file(),
        "the records were kept in {}",
        file.display()
    );
    assert_eq!(first, from_folders(&tasks));
    assert!(first.totals.sums.cost > 0.0 && first.totals.files.reads > 0);

    // Nothing changed: every task taken from the kept records, none read, the file left as it was.
    let written = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
    let (again, s) = new_process(&tasks, &cache);
    assert_eq!((s.read, s.cached), (0, n));
    assert_eq!(again, first);
    assert_eq!(
        std::fs::metadata(&file).and_then(|m| m.modified()).ok(),
        written
    );

    // One task changed, one added, one removed: those read again, the rest kept.
    write_task(&tasks, 7, 3.0);
    write_task(&tasks, 500, 1.0);
    std::fs::remove_dir_all(tasks.join("task-00009")).expect("remove");
    let (changed, s) = new_process(&tasks, &cache);
    assert_eq!((s.read, s.cached), (2, n - 2));
    assert_eq!(changed, from_folders(&tasks));
    assert_ne!(changed.totals.sums.cost, first.totals.sums.cost);
    let (_, s) = new_process(&tasks, &cache);
    assert_eq!((s.read, s.cached), (0, n));
}

#[test]
fn kept_records_that_do_not_check_out_are_read_again_and_said() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = store(tmp.path());
    let cache = tmp.path().join("usage-cache");
    let n = count(&tasks);
    let (first, _) = new_process(&tasks, &cache);
    let file = kept::store_file(&cache, &tasks);

    // A byte of the first body altered: that task is read from its folder and named.
    let mut bytes = std::fs::read(&file).expect("read");
    bytes[48] ^= 0x5a;
    std::fs::write(&file, &bytes).expect("write");
    let (r, s) = new_process(&tasks, &cache);
    assert_eq!((s.read, s.cached), (1, n - 1));
    assert!(
        r.warnings.iter().any(|n| n.contains("checksum")),
        "{:?}",
        r.warnings
    );
    let mut without_warnings = r.clone();
    without_warnings.warnings.clear();
    assert_eq!(without_warnings, first);
    // It was written again whole: the next process reads nothing.
    let (_, s) = new_process(&tasks, &cache);
    assert_eq!((s.read, s.cached), (0, n));

    // A file cut short holds nothing: every task of its store read, and said (the other stores'
    // files are theirs).
    let len = std::fs::metadata(&file).expect("meta").len();
    let bytes = std::fs::read(&file).expect("read");
    std::fs::write(&file, &bytes[..(len / 2) as usize]).expect("write");
    let (r, s) = new_process(&tasks, &cache);
    let others = n - TASKS as u32;
    assert_eq!((s.read, s.cached), (TASKS as u32, others));
    assert!(
        r.warnings.iter().any(|n| n.contains("cut short")),
        "{:?}",
        r.warnings
    );

    // A file of another format version holds nothing either.
    let mut bytes = std::fs::read(&file).expect("read");
    bytes[8] = bytes[8].wrapping_add(1);
    std::fs::write(&file, &bytes).expect("write");
    let (_, s) = new_process(&tasks, &cache);
    assert_eq!((s.read, s.cached), (TASKS as u32, others));
}

#[test]
fn without_a_cache_every_task_is_read_and_nothing_is_kept() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = store(tmp.path());
    let n = count(&tasks);
    for _ in 0..2 {
        let r = UsageIndex::new()
            .report(&open_cached(&tasks, None), &by_task())
            .expect("report");
        assert_eq!((r.sync.read, r.sync.cached), (n, 0));
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("tmp")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["store"]);
}
