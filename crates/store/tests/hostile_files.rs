//! Task folders whose files are not what they should be: a FIFO (never opened blocking), a link
//! to /dev/zero, a sparse file over the size cap, a link loop. Opening the store neither hangs nor
//! reads them, every task is still listed, and the handle's diagnostics name each file left
//! unread, from the folders and from the cache alike.
#![cfg(unix)]

mod common;

use roo_store::task_store::{OpenOptions, TaskStore};
use roo_store::HostEnv;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn open(tasks: &Path, cache: Option<&Path>) -> Option<TaskStore> {
    let (tasks, cache) = (tasks.to_path_buf(), cache.map(Path::to_path_buf));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = TaskStore::open(
            &HostEnv::current(),
            &OpenOptions {
                tasks_dirs: vec![tasks],
                cache_root: cache,
                ignore_stored_links: false,
                every_file: false,
            },
        );
        let _ = tx.send(r);
    });
    // A generous grace period: a reader blocked on a FIFO never returns.
    rx.recv_timeout(Duration::from_secs(60))
        .ok()
        .map(|r| r.expect("open"))
}

#[test]
fn hostile_files_are_named_and_never_read() {
    let (_tmp, tasks, cache, ids) = common::temp_store(6);
    let dir = |i: usize| tasks.join(&ids[i]);
    let ui = |i: usize| dir(i).join("ui_messages.json");
    let _ = std::fs::remove_file(ui(0));
    let made = std::process::Command::new("mkfifo")
        .arg(ui(0))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let _ = std::fs::remove_file(ui(1));
    std::os::unix::fs::symlink("/dev/zero", ui(1)).expect("link");
    let api = dir(2).join("api_conversation_history.json");
    let sparse = std::fs::File::create(&api).expect("create");
    sparse
        .set_len(roo_formats::read::max_file_bytes() + 1)
        .expect("sparse");
    let _ = std::fs::remove_file(ui(3));
    let other: PathBuf = dir(3).join("loop.json");
    std::os::unix::fs::symlink(&other, ui(3)).expect("link");
    std::os::unix::fs::symlink(ui(3), &other).expect("link");

    for cache_root in [None, Some(cache.as_path()), Some(cache.as_path())] {
        let store = open(&tasks, cache_root).expect("the store did not open: a reader blocked");
        let listed: Vec<&str> = store
            .skeletons()
            .iter()
            .map(|s| s.task_id.as_str())
            .collect();
        for (i, id) in ids.iter().enumerate().take(4) {
            assert!(listed.contains(&id.as_str()), "task {i} is not listed");
            let named = store
                .diagnostics()
                .iter()
                .any(|d| d.file.contains(id.as_str()));
            assert!(named, "task {i} is not named: {:?}", store.diagnostics());
        }
    }
}
