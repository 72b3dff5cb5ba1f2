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
    let (tmp, tasks, _cache, _ids) = common::temp_store(2);
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
}
