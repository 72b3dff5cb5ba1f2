//! A watched handle: a refresh with nothing changed stats nothing, and every change the system
//! reports (a file written in place, a task added, a task folder added then written, a task
//! removed, the tasks folder chmod'ed) makes the very next refresh's full pass, ending where a fresh
//! open ends; only the tasks folder moved or removed drops the watch.

mod common;

use common::{copy_dir, open_store, temp_store, touch};
use roo_store::task_store::{RefreshReport, TaskStore};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The refresh right after a change: the watch has synced with the system's queue, so it makes
/// its pass (never a stale "nothing changed").
fn pass_after_change(store: &mut TaskStore) -> RefreshReport {
    let r = store.refresh().expect("refresh");
    assert!(
        !r.watched,
        "a refresh right after a change left out its pass: {r:?}"
    );
    r
}

/// What a handle holds, comparable with another: id, parent, message count.
fn facts(s: &TaskStore) -> Vec<(String, Option<String>, u32)> {
    (s.skeletons().iter())
        .map(|k| {
            let id = k.task_id.clone();
            (id, k.parent_task_id.clone(), k.metadata.message_count)
        })
        .collect()
}

#[test]
fn a_watched_handle_stats_nothing_until_something_changes() {
    let (_tmp, tasks, cache, ids) = temp_store(6);
    let mut store = open_store(&tasks, Some(&cache));
    let status = store.watch();
    assert!(status.watching, "{status:?}");
    if cfg!(target_os = "linux") {
        // The tasks folder and each task folder.
        assert_eq!(status.folders, 7);
    }
    // What happened before the watch began is unknown: the first refresh makes its pass.
    let first = store.refresh().expect("refresh");
    assert!(!first.watched);
    let quiet = store.refresh().expect("refresh");
    assert!(quiet.watched, "{quiet:?}");
    assert_eq!(quiet.tasks, 6);
    assert_eq!((quiet.changed, quiet.added, quiet.removed), (0, 0, 0));

    // A file written in place.
    touch(&a_file_of(&tasks.join(&ids[2])), 30);
    let r = pass_after_change(&mut store);
    assert_eq!((r.changed, r.added, r.removed), (1, 0, 0), "{r:?}");

    // A task folder added, then a file of it written: its folder is watched from the pass on.
    copy_dir(&tasks.join(&ids[0]), &tasks.join("t-new"));
    let r = pass_after_change(&mut store);
    assert_eq!((r.changed, r.added, r.removed), (0, 1, 0), "{r:?}");
    assert!(store.refresh().expect("refresh").watched);
    touch(&a_file_of(&tasks.join("t-new")), 60);
    let r = pass_after_change(&mut store);
    assert_eq!((r.changed, r.added, r.removed), (1, 0, 0), "{r:?}");

    // A task removed.
    fs::remove_dir_all(tasks.join(&ids[4])).expect("remove");
    let r = pass_after_change(&mut store);
    assert_eq!(r.removed, 1, "{r:?}");
    assert!(store.refresh().expect("refresh").watched);

    // The watched handle ends where a fresh open of the same folders ends.
    let fresh = open_store(&tasks, Some(&cache));
    assert_eq!(facts(&store), facts(&fresh));
    assert_eq!(store.skeletons().len(), 6);
}

/// The first task file (by name, not a writer's hidden temporary file) of a task folder.
fn a_file_of(dir: &Path) -> PathBuf {
    let mut files: Vec<PathBuf> = (fs::read_dir(dir).expect("task folder"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    files.into_iter().next().expect("a task file")
}

#[test]
fn a_handle_not_watched_stats_on_every_refresh() {
    let (_tmp, tasks, cache, _ids) = temp_store(2);
    let mut store = open_store(&tasks, Some(&cache));
    for _ in 0..3 {
        assert!(!store.refresh().expect("refresh").watched);
    }
    let status = store.watch_status();
    assert!(!status.watching);
    assert_eq!(status.reason, None);
}

#[test]
fn a_tasks_folder_removed_drops_the_watch_and_says_why() {
    let (_tmp, tasks, cache, _ids) = temp_store(2);
    let mut store = open_store(&tasks, Some(&cache));
    assert!(store.watch().watching);
    store.refresh().expect("refresh");
    let moved = tasks.with_file_name("tasks-moved");
    fs::rename(&tasks, &moved).expect("rename");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        // The refresh itself may fail (the folder is gone); the watch is dropped either way.
        let _ = store.refresh();
        if !store.watch_status().watching {
            break;
        }
        assert!(Instant::now() < deadline, "the watch was never dropped");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = store.watch_status();
    assert!(status.reason.is_some(), "{status:?}");
}

#[cfg(unix)]
#[test]
fn a_chmod_of_the_tasks_folder_keeps_the_watch() {
    use std::os::unix::fs::PermissionsExt;
    let (_tmp, tasks, cache, _ids) = temp_store(2);
    let mut store = open_store(&tasks, Some(&cache));
    assert!(store.watch().watching);
    store.refresh().expect("refresh");
    assert!(store.refresh().expect("refresh").watched);
    fs::set_permissions(&tasks, fs::Permissions::from_mode(0o750)).expect("chmod");
    // The change is seen (a pass), and the folder is still watched afterwards.
    pass_after_change(&mut store);
    assert!(store.watch_status().watching, "{:?}", store.watch_status());
    assert!(store.refresh().expect("refresh").watched);
}
