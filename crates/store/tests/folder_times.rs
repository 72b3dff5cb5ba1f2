//! A refresh lets a task folder's modification time stand for its files only where the store's
//! host writes by rename, and still sees every change: at once when a file is replaced by rename,
//! within `SLICES` refreshes when it is written in place.

mod common;

use common::{age, make_tasks, open_store_with, set_mtime};
use roo_store::cache::{self, SLICES};
use roo_store::task_store::{Lookup, TaskStore};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

const N: usize = 40;

/// `n` tasks in `<tmp>/globalStorage/<host>/tasks`, every file 100 s old and every folder 90 s
/// (newer than its files, as a writer that renames leaves them, and old enough to be settled).
fn store(host: &str, n: usize) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("globalStorage").join(host).join("tasks");
    make_tasks(&tasks, n);
    for dir in folders(&tasks) {
        age(&dir, 100, 90);
    }
    let cache = tmp.path().join("cache");
    (tmp, tasks, cache)
}

fn open(tasks: &Path, cache: &Path, every_file: bool) -> TaskStore {
    open_store_with(tasks, Some(cache), every_file)
}

/// The task folders in the order a pass lists them.
fn folders(tasks: &Path) -> Vec<PathBuf> {
    cache::list_tasks(tasks)
        .expect("list")
        .into_iter()
        .map(|(_, d)| d)
        .collect()
}

/// The task's UI file (`ui_messages.json`, or `claude_messages.json` in the oldest tasks).
fn ui_file(dir: &Path) -> PathBuf {
    let ui = dir.join("ui_messages.json");
    if ui.exists() {
        ui
    } else {
        dir.join("claude_messages.json")
    }
}

/// The task's UI file with one more byte, written in place (its folder's time stays).
fn write_in_place(dir: &Path) {
    let f = ui_file(dir);
    let mut bytes = fs::read(&f).expect("read");
    bytes.push(b'\n');
    fs::write(&f, bytes).expect("write");
}

/// The task's UI file with one more byte, written beside it and renamed over it.
fn write_by_rename(dir: &Path) {
    let f = ui_file(dir);
    let mut bytes = fs::read(&f).expect("read");
    bytes.push(b'\n');
    let tmp = dir.join(".ui.tmp");
    fs::write(&tmp, bytes).expect("write");
    fs::rename(&tmp, &f).expect("rename");
}

#[test]
fn a_roo_store_stats_one_folder_per_task_and_checks_a_slice_in_full() {
    let (_tmp, tasks, cache) = store("rooveterinaryinc.roo-cline", N);
    let mut s = open(&tasks, &cache, false);
    let r = s.refresh().expect("refresh");
    assert_eq!((r.changed, r.added, r.removed), (0, 0, 0), "{r:?}");
    // Each refresh checks one folder in 16 in full: 2 or 3 of 40.
    assert_full_check_of_one_slice(r.folders_trusted);
    // Asked to, the same store is stat'ed file by file.
    let mut every = open(&tasks, &cache, true);
    assert_eq!(every.refresh().expect("refresh").folders_trusted, 0);
}

#[test]
fn old_tasks_written_in_place_do_not_end_the_trust() {
    let (_tmp, tasks, cache) = store("rooveterinaryinc.roo-cline", N);
    // Ten tasks from before the host wrote by rename: files newer than their folder, and older
    // than the other tasks' files.
    for dir in &folders(&tasks)[..10] {
        age(dir, 150, 200);
    }
    let mut s = open(&tasks, &cache, false);
    let r = s.refresh().expect("refresh");
    assert_full_check_of_one_slice(r.folders_trusted);
}

fn assert_full_check_of_one_slice(trusted: u32) {
    let checked = N - trusted as usize;
    assert!(
        (N / SLICES..=N.div_ceil(SLICES)).contains(&checked),
        "{checked} folders checked in full"
    );
}

#[test]
fn a_file_replaced_by_rename_is_seen_at_once() {
    let (_tmp, tasks, cache) = store("zoocodeorganization.zoo-code", N);
    let dirs = folders(&tasks);
    let mut s = open(&tasks, &cache, false);
    s.refresh().expect("refresh");
    write_by_rename(&dirs[5]);
    let r = s.refresh().expect("refresh");
    assert_eq!(r.changed, 1, "{r:?}");
    assert!(r.folders_trusted > 0, "{r:?}");
    let i = position(&s, &dirs[5]);
    assert_eq!(s.signature(i), Some(cache::task_sig(&dirs[5])));
    // A fresh process sees it the same way.
    drop(s);
    write_by_rename(&dirs[7]);
    let s = open(&tasks, &cache, false);
    let i = position(&s, &dirs[7]);
    assert_eq!(s.signature(i), Some(cache::task_sig(&dirs[7])));
}

#[test]
fn a_file_written_in_place_is_seen_within_a_round_of_slices_and_ends_the_trust() {
    let (_tmp, tasks, cache) = store("kilocode.kilo-code", N);
    let dirs = folders(&tasks);
    let mut s = open(&tasks, &cache, false);
    s.refresh().expect("refresh");
    write_in_place(&dirs[5]);
    let mut seen_after = None;
    for pass in 1..=SLICES {
        let r = s.refresh().expect("refresh");
        if r.changed == 1 {
            seen_after = Some(pass);
            break;
        }
        assert_eq!(r.changed, 0, "{r:?}");
    }
    assert!(seen_after.is_some(), "not seen within {SLICES} refreshes");
    let i = position(&s, &dirs[5]);
    assert_eq!(s.signature(i), Some(cache::task_sig(&dirs[5])));
    // Its file is now newer than its folder, and it is the store's newest task: no folder of
    // the store is trusted any more, so a second write in place is seen at once.
    let r = s.refresh().expect("refresh");
    assert_eq!((r.changed, r.folders_trusted), (0, 0), "{r:?}");
    write_in_place(&dirs[9]);
    assert_eq!(s.refresh().expect("refresh").changed, 1);
}

#[test]
fn a_cline_store_and_an_unnamed_one_stat_every_file() {
    for host in ["saoudrizwan.claude-dev", "some-other-tool"] {
        let (_tmp, tasks, cache) = store(host, N);
        let dirs = folders(&tasks);
        let mut s = open(&tasks, &cache, false);
        write_in_place(&dirs[5]);
        let r = s.refresh().expect("refresh");
        assert_eq!((r.changed, r.folders_trusted), (1, 0), "{host}: {r:?}");
    }
}

#[test]
fn a_folder_changed_within_the_last_two_seconds_is_not_trusted() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp
        .path()
        .join("globalStorage")
        .join("rooveterinaryinc.roo-cline")
        .join("tasks");
    make_tasks(&tasks, N);
    // Each folder as new as its files, as a rename leaves it, and just written: a change in the
    // same clock tick could hide behind its time.
    for dir in folders(&tasks) {
        set_mtime(&dir, SystemTime::now());
    }
    let cache = tmp.path().join("cache");
    let mut s = open(&tasks, &cache, false);
    let r = s.refresh().expect("refresh");
    assert_eq!(r.folders_trusted, 0, "{r:?}");
    // Settled, they are (files 20 s old, folders 10 s).
    for dir in folders(&tasks) {
        age(&dir, 20, 10);
    }
    s.refresh().expect("refresh");
    let r = s.refresh().expect("refresh");
    assert!(r.folders_trusted > 0, "{r:?}");
}

/// The handle's position of the task in `dir`.
fn position(s: &TaskStore, dir: &Path) -> usize {
    let id = dir.file_name().expect("name").to_string_lossy();
    match s.lookup(&id) {
        Lookup::Found(i) => i,
        other => panic!("{id}: {other:?}"),
    }
}

#[test]
fn an_open_after_a_few_changes_refreshes_them_and_after_many_rebuilds() {
    let (_tmp, tasks, cache) = store("rooveterinaryinc.roo-cline", N);
    let dirs = folders(&tasks);
    drop(open(&tasks, &cache, false));
    let (generation, data) = cache::cache_generation(&cache, &tasks).expect("cache");
    // One task in 40 changed while no handle was open: the cache is taken and the task read
    // again, its line appended (no new generation).
    write_by_rename(&dirs[3]);
    let s = open(&tasks, &cache, false);
    assert_eq!(
        s.signature(position(&s, &dirs[3])),
        Some(cache::task_sig(&dirs[3]))
    );
    let (after, grown) = cache::cache_generation(&cache, &tasks).expect("cache");
    assert_eq!(after, generation, "the cache was rebuilt for one change");
    assert!(grown > data, "the changed task's line was not appended");
    drop(s);
    // Ten in 40: more than one in 8, the open rebuilds the cache.
    for dir in &dirs[10..20] {
        write_by_rename(dir);
    }
    let s = open(&tasks, &cache, false);
    assert_eq!(
        s.signature(position(&s, &dirs[15])),
        Some(cache::task_sig(&dirs[15]))
    );
    let (rebuilt, _) = cache::cache_generation(&cache, &tasks).expect("cache");
    assert_ne!(rebuilt, generation);
}
