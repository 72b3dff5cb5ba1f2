//! Where the writer locks live: in a folder of the user's own (the runtime folder, else the
//! cache folder), private, never in a folder shared with other users; a holder's file is
//! removed when it is done, a killed holder's by the next writer. (One test: it sets the
//! process's environment.)
#![cfg(unix)]

mod common;

use roo_store::lock::{store_writer, writers_dir};
use std::fs;
use std::os::unix::fs::PermissionsExt;

#[test]
fn writer_locks_are_per_user_private_and_never_left_behind() {
    let (tmp, tasks, _cache, ids) = common::temp_store(2);
    let runtime = tmp.path().join("run");
    let home = tmp.path().join("home");
    fs::create_dir_all(&runtime).expect("mkdir");
    std::env::set_var("XDG_RUNTIME_DIR", &runtime);
    std::env::set_var("XDG_CACHE_HOME", home.join(".cache"));
    let dir = writers_dir().expect("folder");
    assert_eq!(dir, runtime.join("roo-state-core").join("writers"));
    let mode = |p: &std::path::Path| fs::metadata(p).expect("md").permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);

    // A lock a killed writer left: removed by the next writer, whose own goes when it is done.
    let stale = dir.join("0123456789abcdef.lock");
    fs::write(&stale, b"{\"pid\":999999}").expect("write");
    let held = store_writer(&tasks, "test").expect("writer");
    assert!(held.path().starts_with(&dir));
    assert!(!stale.exists());
    let second = store_writer(&tasks, "test");
    assert!(
        matches!(second, Err(roo_store::StoreError::Busy(_))),
        "{second:?}"
    );
    drop(held);
    assert_eq!(fs::read_dir(&dir).expect("list").count(), 0);

    // A folder left open to others is made private again.
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).expect("chmod");
    drop(store_writer(&tasks, "test").expect("writer"));
    assert_eq!(mode(&dir), 0o700);

    // Without a runtime folder: the cache folder.
    std::env::remove_var("XDG_RUNTIME_DIR");
    let dir = writers_dir().expect("folder");
    assert_eq!(
        dir,
        home.join(".cache").join("roo-state-core").join("writers")
    );
    drop(store_writer(&tasks, "test").expect("writer"));
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(fs::read_dir(&dir).expect("list").count(), 0);

    killed_writers_leave_no_file_lock(tmp.path(), &tasks, &ids[0]);
}

/// What a writer killed while it held (or took) an extension file lock leaves is removed by the
/// next writer, and only what it made.
fn killed_writers_leave_no_file_lock(tmp: &std::path::Path, tasks: &std::path::Path, id: &str) {
    // A writer killed while it held an extension file lock it had noted: the next writer of the
    // store removes that lock, unless it is no longer the one noted (the extension took it over).
    let item = tasks.join(id).join("history_item.json");
    let path = {
        let mut w = store_writer(tasks, "test").expect("writer");
        let lock = roo_store::history_file::FileLock::acquire(&item).expect("file lock");
        w.note_holding(lock.dir(), lock.mtime_ns());
        let note = fs::read_to_string(w.path()).expect("note");
        assert!(note.contains("\"holding\""), "{note}");
        let path = w.path().to_path_buf();
        std::mem::forget(lock);
        drop(w);
        // What the kill leaves: the note in the writer's file, the extension's lock folder.
        fs::write(&path, note).expect("note left");
        path
    };
    let lock_dir = roo_store::history_file::FileLock::path_for(&item);
    assert!(lock_dir.is_dir());
    let next = store_writer(tasks, "test").expect("writer");
    assert_eq!(next.cleared(), Some(lock_dir.as_path()));
    assert!(!lock_dir.exists());
    drop(next);
    assert!(!path.exists());
    // A lock folder made again since (another holder): left alone.
    fs::create_dir(&lock_dir).expect("theirs");
    let left = format!(
        "{{\"holding\":{{\"lock\":{:?},\"mtimeNs\":1}}}}",
        lock_dir.display().to_string()
    );
    fs::write(&path, left).expect("note");
    let next = store_writer(tasks, "test").expect("writer");
    assert_eq!(next.cleared(), None);
    assert!(lock_dir.is_dir());

    drop(next);
    fs::remove_dir(&lock_dir).expect("rmdir");

    // Killed while taking the lock, after making its folder but before noting its time: the
    // folder, made after the note, is removed by the next writer.
    let path = {
        let mut w = store_writer(tasks, "test").expect("writer");
        w.note_acquiring(&lock_dir);
        let note = fs::read_to_string(w.path()).expect("note");
        let path = w.path().to_path_buf();
        drop(w);
        fs::write(&path, note).expect("note left");
        std::thread::sleep(std::time::Duration::from_millis(30));
        fs::create_dir(&lock_dir).expect("made after the note");
        path
    };
    let next = store_writer(tasks, "test").expect("writer");
    assert_eq!(next.cleared(), Some(lock_dir.as_path()));
    assert!(!lock_dir.exists());
    drop(next);
    // The same note, but the folder was there before it (the holder the writer waited for):
    // left alone.
    fs::create_dir(&lock_dir).expect("theirs");
    std::thread::sleep(std::time::Duration::from_millis(30));
    fs::write(
        &path,
        format!(
            "{{\"holding\":{{\"lock\":{:?}}}}}\n",
            lock_dir.display().to_string()
        ),
    )
    .expect("note");
    let next = store_writer(tasks, "test").expect("writer");
    assert_eq!(next.cleared(), None);
    assert!(lock_dir.is_dir());
    drop(next);
    fs::remove_dir(&lock_dir).expect("rmdir");

    // A killed writer's file found by the writer of another store: its noted lock is removed with
    // it, so the note is never lost before this store's next writer comes.
    let other = tmp.join("other-tasks");
    fs::create_dir_all(&other).expect("mkdir");
    let path = {
        let mut w = store_writer(tasks, "test").expect("writer");
        let lock = roo_store::history_file::FileLock::acquire(&item).expect("file lock");
        w.note_holding(lock.dir(), lock.mtime_ns());
        let note = fs::read_to_string(w.path()).expect("note");
        let path = w.path().to_path_buf();
        std::mem::forget(lock);
        drop(w);
        fs::write(&path, note).expect("note left");
        path
    };
    let elsewhere = store_writer(&other, "test").expect("writer");
    assert_eq!(elsewhere.cleared(), None);
    assert!(!path.exists());
    assert!(!lock_dir.exists());
}
