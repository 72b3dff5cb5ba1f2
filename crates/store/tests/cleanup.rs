//! Checkpoint cleanup: a property test over random task trees (conversation files are never
//! removed or altered) and the policy options.

mod common;

use proptest::prelude::*;
use roo_store::cleanup::{cleanup_obsolete_checkpoints, CleanupOptions, CONVERSATION_NAMES};
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

const DAY_MS: i64 = 86_400_000;

#[derive(Debug, Clone)]
struct TaskSpec {
    conversation: Vec<(usize, Vec<u8>)>,
    backups: Vec<usize>,
    command_output: bool,
    checkpoint_files: Vec<(String, usize)>,
    other_files: Vec<(String, usize)>,
    other_dir_with_conversation: bool,
    age_days: u32,
}

fn task_spec() -> impl Strategy<Value = TaskSpec> {
    (
        proptest::collection::vec(
            (
                0..CONVERSATION_NAMES.len(),
                proptest::collection::vec(any::<u8>(), 0..64),
            ),
            0..5,
        ),
        proptest::collection::vec(0..CONVERSATION_NAMES.len(), 0..2),
        any::<bool>(),
        proptest::collection::vec(("[a-z]{1,6}(/[a-z]{1,6}){0,2}", 0..500usize), 0..6),
        proptest::collection::vec(("[a-z_.]{1,12}", 0..200usize), 0..3),
        any::<bool>(),
        0..120u32,
    )
        .prop_map(
            |(
                conversation,
                backups,
                command_output,
                checkpoint_files,
                other_files,
                odc,
                age_days,
            )| TaskSpec {
                conversation,
                backups,
                command_output,
                checkpoint_files,
                other_files,
                other_dir_with_conversation: odc,
                age_days,
            },
        )
}

fn write(path: &Path, bytes: &[u8]) {
    if let Some(p) = path.parent() {
        fs::create_dir_all(p).expect("mkdir");
    }
    fs::write(path, bytes).expect("write");
}

fn set_age(path: &Path, now: SystemTime, days: u32) {
    let f = fs::OpenOptions::new().write(true).open(path).expect("open");
    f.set_modified(now - Duration::from_secs(u64::from(days) * 86_400))
        .expect("mtime");
}

/// Build the tree; returns the conversation files (relative to the tasks folder) with their bytes.
fn materialise(tasks: &Path, specs: &[TaskSpec], now: SystemTime) -> Vec<(String, Vec<u8>)> {
    let mut protected = Vec::new();
    for (i, t) in specs.iter().enumerate() {
        let dir = tasks.join(format!("task-{i:03}"));
        fs::create_dir_all(&dir).expect("mkdir");
        let mut keep = |rel: String, bytes: Vec<u8>| {
            write(&tasks.join(&rel), &bytes);
            protected.push((rel, bytes));
        };
        let mut last: std::collections::BTreeMap<usize, &Vec<u8>> =
            std::collections::BTreeMap::new();
        for (n, bytes) in &t.conversation {
            last.insert(*n, bytes);
        }
        for (n, bytes) in last {
            keep(
                format!("task-{i:03}/{}", CONVERSATION_NAMES[n]),
                bytes.clone(),
            );
        }
        let backups: std::collections::BTreeSet<usize> = t.backups.iter().copied().collect();
        for n in &backups {
            keep(
                format!("task-{i:03}/.{}.bak_1_x.tmp", CONVERSATION_NAMES[*n]),
                b"old".to_vec(),
            );
        }
        if t.command_output {
            keep(
                format!("task-{i:03}/command-output/cmd-1.txt"),
                b"output".to_vec(),
            );
        }
        if t.other_dir_with_conversation {
            keep(
                format!("task-{i:03}/notes/ui_messages.json.copy"),
                b"[]".to_vec(),
            );
        }
        for (rel, size) in &t.checkpoint_files {
            write(
                &dir.join("checkpoints").join(rel).join("blob"),
                &vec![1u8; *size],
            );
        }
        for (name, size) in &t.other_files {
            let name = name.trim_matches('.');
            if name.is_empty()
                || CONVERSATION_NAMES.iter().any(|c| name.contains(c))
                || name.starts_with("checkpoints")
            {
                continue;
            }
            write(&dir.join(format!("x-{name}")), &vec![2u8; *size]);
        }
        for (n, _) in &t.conversation {
            set_age(&dir.join(CONVERSATION_NAMES[*n]), now, t.age_days);
        }
    }
    protected
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn cleanup_never_removes_or_alters_a_conversation_file(
        specs in proptest::collection::vec(task_spec(), 1..8),
        older in proptest::option::of(0.0f64..90.0),
        keep_last in 0usize..4,
        completed_only in any::<bool>(),
        include_other in any::<bool>(),
    ) {
        let tmp = tempfile::tempdir().expect("tmp");
        let tasks = tmp.path().join("tasks");
        let now = SystemTime::now();
        let protected = materialise(&tasks, &specs, now);
        let opts = CleanupOptions {
            older_than_days: older,
            keep_last,
            completed_only,
            include_other,
            dry_run: false,
            now_ms: roo_js::now_ms(),
        };
        let report = cleanup_obsolete_checkpoints(&tasks, &opts, None).expect("cleanup");
        for (rel, bytes) in &protected {
            let got = fs::read(tasks.join(rel));
            prop_assert!(got.is_ok(), "{} was removed", rel);
            prop_assert_eq!(&got.expect("read"), bytes, "{} was altered", rel);
        }
        // What was reported removed is gone.
        for t in report.tasks.iter().filter(|t| t.removed) {
            for p in &t.paths {
                prop_assert!(!tasks.join(&t.task_id).join(p.trim_end_matches('/')).exists());
            }
        }
    }
}

#[test]
fn dry_run_reports_and_removes_nothing_then_policy_applies() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("tasks");
    let ids = common::make_tasks(&tasks, 6);
    let now = SystemTime::now();
    for (i, id) in ids.iter().enumerate() {
        write(
            &tasks.join(id).join("checkpoints/.git/objects/pack/p.pack"),
            &vec![0u8; 1000 * (i + 1)],
        );
        for f in roo_store::cache::SOURCE_FILES {
            let p = tasks.join(id).join(f);
            if p.exists() {
                set_age(&p, now, 10 * i as u32);
            }
        }
    }
    let before = common::snapshot(&tasks);
    let now_ms = roo_js::now_ms();
    let opts = CleanupOptions {
        older_than_days: Some(15.0),
        keep_last: 0,
        completed_only: false,
        include_other: false,
        dry_run: true,
        now_ms,
    };
    let dry = cleanup_obsolete_checkpoints(&tasks, &opts, None).expect("dry");
    // Ages 0, 10, 20, 30, 40, 50 days: four are older than 15 days.
    assert_eq!(dry.tasks_affected, 4);
    assert_eq!(dry.tasks_kept, 2);
    assert_eq!(dry.bytes, (3 + 4 + 5 + 6) * 1000);
    assert!(dry
        .tasks
        .iter()
        .all(|t| !t.removed && t.paths == vec!["checkpoints/".to_owned()]));
    assert_eq!(common::snapshot(&tasks), before);

    let real = cleanup_obsolete_checkpoints(
        &tasks,
        &CleanupOptions {
            dry_run: false,
            keep_last: 5,
            ..opts.clone()
        },
        None,
    )
    .expect("real");
    // keepLast 5 protects the five most recent: only the oldest goes.
    assert_eq!(real.tasks_affected, 1);
    assert!(real.tasks[0].removed);
    assert!(!tasks.join(&ids[5]).join("checkpoints").exists());
    assert!(tasks.join(&ids[4]).join("checkpoints").exists());
    let _ = DAY_MS;
}

#[test]
fn completed_only_selects_finished_tasks() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("tasks");
    let ids = common::make_tasks(&tasks, 8);
    for id in &ids {
        write(&tasks.join(id).join("checkpoints/.git/HEAD"), b"ref: x");
    }
    let completed: Vec<bool> = ids
        .iter()
        .map(|id| {
            roo_state::analyze_task(id, &tasks.join(id), &roo_state::AnalyzeOptions::default())
                .is_ok_and(|s| s.is_completed)
        })
        .collect();
    let opts = CleanupOptions {
        older_than_days: None,
        keep_last: 0,
        completed_only: true,
        include_other: false,
        dry_run: true,
        now_ms: roo_js::now_ms(),
    };
    let r = cleanup_obsolete_checkpoints(&tasks, &opts, None).expect("cleanup");
    assert_eq!(
        r.tasks_affected as usize,
        completed.iter().filter(|c| **c).count()
    );
    assert!(r.tasks_affected > 0 && (r.tasks_kept as usize) < ids.len());
}

/// A project folder named as a store with `include_other`, every age and nothing kept: its
/// source files are not conversation files, so they are "other", and a folder holding no
/// conversation file is not a task: nothing of it goes. A task beside it still loses its other
/// files.
#[test]
fn include_other_never_empties_a_folder_that_is_not_a_task() {
    let tmp = tempfile::tempdir().expect("tmp");
    let project = tmp.path().join("project");
    write(&project.join("src/main.rs"), b"fn main() {}");
    write(&project.join("docs/readme.md"), b"# readme");
    write(&project.join("task-1/ui_messages.json"), b"[]");
    write(&project.join("task-1/notes.txt"), b"notes");
    let before_src = fs::read(project.join("src/main.rs")).expect("read");
    let report = cleanup_obsolete_checkpoints(
        &project,
        &CleanupOptions {
            older_than_days: Some(0.0),
            keep_last: 0,
            completed_only: false,
            include_other: true,
            dry_run: false,
            now_ms: roo_js::now_ms() + DAY_MS,
        },
        None,
    )
    .expect("cleanup");
    assert_eq!(fs::read(project.join("src/main.rs")).ok(), Some(before_src));
    assert!(project.join("docs/readme.md").is_file());
    assert_eq!(report.tasks_affected, 1, "{report:?}");
    assert!(!project.join("task-1/notes.txt").exists());
    assert!(project.join("task-1/ui_messages.json").is_file());
}
