//! One writer at a time per task store: a second rebuild, cleanup or migration of a store being
//! written is refused at once as busy (dry runs are not writers), and the temporary files of a
//! killed rebuild are removed by the next one before any size is measured.

mod common;

use roo_store::cleanup::{cleanup_obsolete_checkpoints, CleanupOptions};
use roo_store::lock::store_writer;
use roo_store::migrate::{migrate_tasks_dir, MigrateOptions};
use roo_store::rebuild::rebuild_from_tasks;
use roo_store::StoreError;
use std::fs;

use common::{rebuild_opts, temp_store as store};

#[test]
fn a_second_writer_is_told_the_store_is_busy() {
    let (tmp, tasks, cache, _ids) = store(4);
    let before = common::snapshot(&tasks);
    let held = store_writer(&tasks, "test").expect("first writer");
    let busy = |r: Result<(), StoreError>, what: &str| match r {
        Err(e @ StoreError::Busy(_)) => assert_eq!(e.code(), "STORE_BUSY"),
        other => panic!("{what}: expected STORE_BUSY, got {other:?}"),
    };
    busy(
        rebuild_from_tasks(&rebuild_opts(&tasks, &cache, false)).map(|_| ()),
        "rebuild",
    );
    busy(
        cleanup_obsolete_checkpoints(
            &tasks,
            &CleanupOptions {
                dry_run: false,
                ..CleanupOptions::default()
            },
            None,
        )
        .map(|_| ()),
        "cleanup",
    );
    busy(
        migrate_tasks_dir(
            &tasks,
            &tmp.path().join("moved"),
            &MigrateOptions {
                dry_run: false,
                ..MigrateOptions::default()
            },
        )
        .map(|_| ()),
        "migrate",
    );
    // Dry runs write nothing and are not refused.
    assert!(rebuild_from_tasks(&rebuild_opts(&tasks, &cache, true)).is_ok());
    assert_eq!(common::snapshot(&tasks), before);
    drop(held);
    // Once the holder is gone, the next writer goes ahead.
    assert!(rebuild_from_tasks(&rebuild_opts(&tasks, &cache, false)).is_ok());
}

#[test]
fn two_rebuilds_at_once_one_runs_and_the_other_is_busy() {
    let (_tmp, tasks, cache, _ids) = store(30);
    let results: Vec<Result<(), StoreError>> = std::thread::scope(|s| {
        let a = s.spawn(|| rebuild_from_tasks(&rebuild_opts(&tasks, &cache, false)).map(|_| ()));
        let b = s.spawn(|| rebuild_from_tasks(&rebuild_opts(&tasks, &cache, false)).map(|_| ()));
        vec![a.join().expect("thread a"), b.join().expect("thread b")]
    });
    let ok = results.iter().filter(|r| r.is_ok()).count();
    let busy = results
        .iter()
        .filter(|r| matches!(r, Err(StoreError::Busy(_))))
        .count();
    assert!(ok >= 1, "{results:?}");
    assert_eq!(ok + busy, 2, "{results:?}");
    // No history item was backed up: none was replaced by a run racing another.
    let history_baks = common::files_under(&tasks)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("history_item.json.bak"))
        })
        .count();
    assert_eq!(history_baks, 0);
}

#[test]
fn temporary_files_of_a_killed_rebuild_are_removed_by_the_next() {
    let (_tmp, tasks, cache, ids) = store(3);
    // The history item is lost, so each rebuild writes it again, measuring the folder.
    let item = tasks.join(&ids[0]).join("history_item.json");
    let _ = fs::remove_file(&item);
    rebuild_from_tasks(&rebuild_opts(&tasks, &cache, false)).expect("first");
    let size_of = |bytes: &[u8]| {
        serde_json::from_slice::<serde_json::Value>(bytes).expect("json")["size"]
            .as_u64()
            .expect("size")
    };
    let size = size_of(&fs::read(&item).expect("item"));
    // What a run killed between writing and renaming leaves.
    let leftover = tasks.join(&ids[0]).join(".history_item.json.tmp-4242-1");
    fs::write(&leftover, vec![b'x'; 50_000]).expect("write");
    let index_leftover = tasks.join("._index.json.tmp-4242-2");
    fs::write(&index_leftover, b"[").expect("write");
    fs::remove_file(&item).expect("lose the item again");
    rebuild_from_tasks(&rebuild_opts(&tasks, &cache, false)).expect("next");
    assert!(!leftover.exists());
    assert!(!index_leftover.exists());
    assert_eq!(size_of(&fs::read(&item).expect("item")), size);
}

#[test]
fn a_cache_builder_that_does_not_wait_is_told_the_cache_is_locked() {
    let (_tmp, tasks, cache, _ids) = store(3);
    let dir = roo_store::cache::store_cache_dir(&cache, &roo_store::fsutil::canonical(&tasks));
    let held = roo_store::lock::DirLock::acquire(&dir, std::time::Duration::ZERO, None)
        .expect("first builder");
    let r = roo_store::cache::build_skeleton_cache(
        std::slice::from_ref(&tasks),
        &roo_store::cache::BuildOptions {
            lock_wait: std::time::Duration::ZERO,
            ..roo_store::cache::BuildOptions::new(&cache)
        },
    );
    match r {
        Err(e @ StoreError::Locked { .. }) => assert_eq!(e.code(), "CACHE_LOCKED"),
        other => panic!("expected CACHE_LOCKED, got {other:?}"),
    }
    drop(held);
    assert!(roo_store::cache::build_skeleton_cache(
        std::slice::from_ref(&tasks),
        &roo_store::cache::BuildOptions::new(&cache)
    )
    .is_ok());
}
