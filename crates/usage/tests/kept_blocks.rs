//! The blocks of a report kept beside the cache between runs: a new index over a new handle (a
//! new process) answers a report made before without reading any task's records, and after a
//! change reads and sums again only the blocks holding a changed task. Whatever it took, its
//! report must equal the report of an index that read every folder, to the last bit.

mod common;

use common::{open_all, write_task};
use roo_usage::report::{CostMode, Group, ReportOptions};
use roo_usage::{SyncReport, UsageIndex, UsageReport};
use std::path::{Path, PathBuf};

const TASKS: usize = 2_600; // three blocks of 1 024

fn opts(group: Group) -> ReportOptions {
    ReportOptions {
        group,
        cost_mode: CostMode::Auto,
        breakdown: true,
        ..ReportOptions::default()
    }
}

/// The report and sync of a new index over a new handle with the cache `cache`.
fn new_process(tasks: &Path, cache: &Path, o: &ReportOptions) -> (UsageReport, SyncReport) {
    let store = open_all(&[tasks], Some(cache));
    let mut r = UsageIndex::new().report(&store, o).expect("report");
    let sync = std::mem::take(&mut r.sync);
    (r, sync)
}

/// The report of an index that read every folder (no cache).
fn from_folders(tasks: &Path, o: &ReportOptions) -> UsageReport {
    let mut r = (UsageIndex::new().report(&open_all(&[tasks], None), o)).expect("report");
    r.sync = SyncReport::default();
    r
}

/// A store of `n` generated tasks in a temporary folder: the folder, its tasks and our cache.
fn generated(n: usize) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("store").join("tasks");
    for k in 0..n {
        write_task(&tasks, k, 1.0);
    }
    let cache = tmp.path().join("cache");
    (tmp, tasks, cache)
}

fn blocks_file(cache: &Path, tasks: &Path) -> PathBuf {
    roo_store::cache::store_cache_dir(cache, tasks).join("usage.blocks")
}

#[test]
fn a_new_process_takes_the_blocks_the_last_one_kept() {
    let (_tmp, tasks, cache) = generated(TASKS);
    let daily = opts(Group::Daily);

    // The first run reads every task and keeps the three blocks of its report.
    let (first, s) = new_process(&tasks, &cache, &daily);
    assert_eq!(
        (s.read, s.blocks_summed, s.blocks_kept),
        (TASKS as u32, 3, 0)
    );
    assert!(blocks_file(&cache, &tasks).is_file());
    assert_eq!(first, from_folders(&tasks, &daily));
    assert!(first.totals.sums.cost > 0.0 && first.rows.len() == 40);

    // Nothing changed: no record read, from the kept records or the folders.
    let (again, s) = new_process(&tasks, &cache, &daily);
    assert_eq!(
        (s.read, s.cached, s.kept, s.blocks_summed, s.blocks_kept),
        (0, 0, TASKS as u32, 0, 3)
    );
    assert_eq!(again, first);

    // One task of the second block changed: that block alone is read (the changed task from its
    // folder, the others from the kept records) and summed.
    write_task(&tasks, 1_501, 3.0);
    let (changed, s) = new_process(&tasks, &cache, &daily);
    assert_eq!(
        (s.read, s.cached, s.blocks_summed, s.blocks_kept),
        (1, 1_023, 1, 2)
    );
    let expected = from_folders(&tasks, &daily);
    assert_eq!(changed, expected);
    assert_ne!(changed.totals.sums.cost, first.totals.sums.cost);
    // …and kept: the next process reads nothing.
    let (_, s) = new_process(&tasks, &cache, &daily);
    assert_eq!((s.read, s.cached, s.blocks_kept), (0, 0, 3));

    // The index then syncs in full for its next report, whatever the options.
    let store = open_all(&[&tasks], Some(&cache));
    let mut index = UsageIndex::new();
    let first_of_index = index.report(&store, &daily).expect("report");
    assert_eq!(first_of_index.sync.blocks_kept, 3);
    let weekly = opts(Group::Weekly);
    let mut second = index.report(&store, &weekly).expect("report");
    assert_eq!(second.sync.cached + second.sync.read, TASKS as u32);
    second.sync = SyncReport::default();
    assert_eq!(second, from_folders(&tasks, &weekly));

    // Other options have blocks of their own beside the daily ones.
    let (_, s) = new_process(&tasks, &cache, &weekly);
    assert_eq!(s.blocks_kept, 3);
    let (_, s) = new_process(&tasks, &cache, &daily);
    assert_eq!(s.blocks_kept, 3);

    // The first task gone moves every other: no block is taken.
    std::fs::remove_dir_all(tasks.join("task-00000")).expect("remove");
    let (moved, s) = new_process(&tasks, &cache, &daily);
    assert_eq!((s.blocks_kept, s.blocks_summed), (0, 3));
    assert_eq!(moved, from_folders(&tasks, &daily));
    // A task added last changes the last block only.
    write_task(&tasks, 9_999, 1.0);
    let (added, s) = new_process(&tasks, &cache, &daily);
    assert_eq!((s.read, s.blocks_kept, s.blocks_summed), (1, 2, 1));
    assert_eq!(added, from_folders(&tasks, &daily));
}

#[test]
fn a_blocks_file_that_does_not_read_is_summed_again_and_written_anew() {
    let (_tmp, tasks, cache) = generated(1_100);
    let daily = opts(Group::Daily);
    let (first, _) = new_process(&tasks, &cache, &daily);
    let file = blocks_file(&cache, &tasks);
    for damage in [
        |b: &mut Vec<u8>| b.truncate(b.len() / 2),
        |b: &mut Vec<u8>| b.iter_mut().take(64).for_each(|c| *c = b'x'),
        |b: &mut Vec<u8>| *b = b"{\"format\":99,\"engine\":\"\",\"reports\":[]}".to_vec(),
        // A figure changed, the file still JSON: the first cost's first digit made another.
        |b: &mut Vec<u8>| {
            let text = String::from_utf8_lossy(b).into_owned();
            let at = text.find("\"totals\":{\"sums\":[").expect("totals") + 17;
            let at = at + text[at..].find(',').expect("figures") + 1;
            b[at] = if b[at] == b'9' { b'1' } else { b[at] + 1 };
        },
    ] {
        let mut bytes = std::fs::read(&file).expect("read");
        damage(&mut bytes);
        std::fs::write(&file, &bytes).expect("write");
        let (r, s) = new_process(&tasks, &cache, &daily);
        assert_eq!((s.blocks_kept, s.blocks_summed), (0, 2));
        assert_eq!(r, first);
        let (_, s) = new_process(&tasks, &cache, &daily);
        assert_eq!((s.blocks_kept, s.blocks_summed), (2, 0), "written anew");
    }
}

#[test]
fn reports_of_the_last_periods_by_task_and_without_a_cache_keep_no_blocks() {
    let (_tmp, tasks, cache) = generated(50);
    let by_task = opts(Group::Tasks);
    for _ in 0..2 {
        let (r, s) = new_process(&tasks, &cache, &by_task);
        assert_eq!(s.blocks_kept, 0);
        assert_eq!(r, from_folders(&tasks, &by_task));
    }
    assert!(!blocks_file(&cache, &tasks).exists());
    let last = ReportOptions {
        last: Some(7),
        ..opts(Group::Daily)
    };
    for _ in 0..2 {
        let (r, s) = new_process(&tasks, &cache, &last);
        assert_eq!(s.blocks_kept, 0);
        assert_eq!(r, from_folders(&tasks, &last));
    }
}
