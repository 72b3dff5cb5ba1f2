//! Migration: a failure injected at every step never loses a task, and a second run finishes.

mod common;

use roo_store::migrate::{migrate_tasks_dir, FailPoint, MigrateOptions, Step, MARKER};
use std::fs;
use std::path::Path;

type Snapshot = Vec<(String, Vec<u8>)>;

fn without_marker(s: Snapshot) -> Snapshot {
    s.into_iter().filter(|(p, _)| p != MARKER).collect()
}

fn complete(dir: &Path, original: &Snapshot) -> bool {
    dir.is_dir() && &without_marker(common::snapshot(dir)) == original
}

fn setup() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    Snapshot,
) {
    let tmp = tempfile::tempdir().expect("tmp");
    let from = tmp.path().join("old").join("tasks");
    common::make_tasks(&from, 5);
    // Checkpoint data and an index, as a real store has.
    fs::create_dir_all(from.join("t00000/checkpoints/.git/objects")).expect("mkdir");
    fs::write(
        from.join("t00000/checkpoints/.git/objects/ab"),
        vec![7u8; 3000],
    )
    .expect("write");
    fs::write(
        from.join("_index.json"),
        br#"{"version":1,"updatedAt":1,"entries":[]}"#,
    )
    .expect("write");
    let to = tmp.path().join("new").join("tasks");
    let original = common::snapshot(&from);
    (tmp, from, to, original)
}

fn finish_and_check(from: &Path, to: &Path, original: &Snapshot, force_copy: bool) {
    let opts = MigrateOptions {
        force_copy,
        ..MigrateOptions::default()
    };
    let r = migrate_tasks_dir(from, to, &opts).expect("second run finishes");
    assert!(!r.already_done || !from.exists());
    assert!(complete(to, original), "destination complete");
    assert!(!from.exists(), "source removed");
    assert!(to.join(MARKER).is_file(), "marker written");
    let parent_from = from.parent().expect("parent");
    let leftovers: Vec<String> = fs::read_dir(parent_from)
        .expect("ls")
        .chain(fs::read_dir(to.parent().expect("parent")).expect("ls"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("roo-migrat"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Idempotent.
    let again = migrate_tasks_dir(from, to, &opts).expect("third run");
    assert!(again.already_done);
    assert!(complete(to, original));
}

fn points(force_copy: bool) -> Vec<FailPoint> {
    let one = |step| FailPoint { step, after: 0 };
    if force_copy {
        let mut v: Vec<FailPoint> = [
            Step::Copied,
            Step::Verified,
            Step::StagedMarker,
            Step::Swapped,
            Step::SourceRenamed,
            Step::Removed,
        ]
        .into_iter()
        .map(one)
        .collect();
        for n in [1, 2, 5, 9] {
            v.push(FailPoint {
                step: Step::CopyFile,
                after: n,
            });
            v.push(FailPoint {
                step: Step::RemoveEntry,
                after: n,
            });
        }
        v
    } else {
        vec![one(Step::MarkSource), one(Step::Rename), one(Step::Renamed)]
    }
}

#[test]
fn every_failure_point_keeps_a_complete_copy() {
    for force_copy in [true, false] {
        for point in points(force_copy) {
            let (_tmp, from, to, original) = setup();
            let opts = MigrateOptions {
                force_copy,
                fail_at: Some(point),
                ..MigrateOptions::default()
            };
            let err = migrate_tasks_dir(&from, &to, &opts).expect_err("injected failure");
            assert_eq!(err.code(), "INJECTED_FAILURE", "{point:?}: {err}");
            let doomed = from.with_file_name(".tasks.roo-migrated-removing");
            assert!(
                complete(&from, &original) || complete(&to, &original),
                "{point:?}: no complete copy left (from exists: {}, to exists: {}, doomed: {})",
                from.exists(),
                to.exists(),
                doomed.exists()
            );
            finish_and_check(&from, &to, &original, force_copy);
        }
    }
}

#[test]
fn plain_runs_and_dry_run() {
    for force_copy in [false, true] {
        let (_tmp, from, to, original) = setup();
        let dry = migrate_tasks_dir(
            &from,
            &to,
            &MigrateOptions {
                dry_run: true,
                force_copy,
                ..MigrateOptions::default()
            },
        )
        .expect("dry run");
        assert_eq!(dry.method, if force_copy { "copy" } else { "rename" });
        assert!(dry.files > 0);
        assert!(!to.exists() && complete(&from, &original));
        let r = migrate_tasks_dir(
            &from,
            &to,
            &MigrateOptions {
                force_copy,
                ..MigrateOptions::default()
            },
        )
        .expect("migrate");
        assert_eq!(r.method, if force_copy { "copy" } else { "rename" });
        finish_and_check(&from, &to, &original, force_copy);
    }
}

#[test]
fn refuses_a_non_empty_destination_and_nested_paths() {
    let (_tmp, from, to, original) = setup();
    fs::create_dir_all(&to).expect("mkdir");
    fs::write(to.join("something"), "x").expect("write");
    let err = migrate_tasks_dir(&from, &to, &MigrateOptions::default()).expect_err("refused");
    assert_eq!(err.code(), "DESTINATION_NOT_EMPTY");
    let err = migrate_tasks_dir(&from, &from.join("inner"), &MigrateOptions::default())
        .expect_err("nested");
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert!(complete(&from, &original));
    // An empty destination folder is fine.
    fs::remove_file(to.join("something")).expect("rm");
    migrate_tasks_dir(&from, &to, &MigrateOptions::default()).expect("migrate");
    assert!(complete(&to, &original));
}

#[test]
fn a_source_used_again_after_migration_is_kept() {
    let (_tmp, from, to, original) = setup();
    let opts = MigrateOptions {
        force_copy: true,
        fail_at: Some(FailPoint {
            step: Step::Swapped,
            after: 0,
        }),
        ..MigrateOptions::default()
    };
    migrate_tasks_dir(&from, &to, &opts).expect_err("injected");
    // The extension writes a new task into the old place before the migration is resumed.
    fs::create_dir_all(from.join("t-late")).expect("mkdir");
    fs::write(from.join("t-late/ui_messages.json"), "[]").expect("write");
    let err = migrate_tasks_dir(&from, &to, &MigrateOptions::default()).expect_err("kept");
    assert_eq!(err.code(), "VERIFY_FAILED");
    assert!(from.join("t-late/ui_messages.json").is_file());
    assert!(complete(&to, &original));
}
