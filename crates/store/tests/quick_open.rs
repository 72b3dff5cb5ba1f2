//! The quick open from the headers' summary: partial headers that answer lists, trees and links as
//! a handle opened from the cache does, made whole on demand, and never trusted beyond the task
//! folders (a change, a damaged summary, a summary of another store all go the usual way).

mod common;

use common::{copy_dir, fixture_tasks, make_tasks, touch};
use roo_state::hierarchy::TreeOptions;
use roo_store::cache;
use roo_store::task_store::{Fields, ListQuery, OpenOptions, SortKey, TaskStore, Watch};
use roo_store::HostEnv;
use std::fs;
use std::path::{Path, PathBuf};

fn opts(tasks: &Path, cache_root: &Path) -> OpenOptions {
    OpenOptions {
        tasks_dirs: vec![tasks.to_path_buf()],
        cache_root: Some(cache_root.to_path_buf()),
        ignore_stored_links: false,
        every_file: false,
    }
}

fn quick(tasks: &Path, cache_root: &Path) -> TaskStore {
    TaskStore::open_quick(
        &HostEnv::current(),
        &opts(tasks, cache_root),
        Watch::default(),
    )
    .expect("open quick")
}

fn full(tasks: &Path, cache_root: &Path) -> TaskStore {
    TaskStore::open(&HostEnv::current(), &opts(tasks, cache_root)).expect("open")
}

/// A store of tasks of every era, the damaged fixture's among them (tasks without a header,
/// headers with diagnostics).
fn store() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("rooveterinaryinc.roo-cline").join("tasks");
    make_tasks(&tasks, 30);
    copy_dir(&fixture_tasks("damaged"), &tasks);
    let cache_root = tmp.path().join("cache");
    (tmp, tasks, cache_root)
}

/// Every field a summary keeps (all but the sequence, the instruction, the child calls and the
/// match keys).
fn summary_fields() -> Fields {
    let names: Vec<&str> = (roo_store::task_store::HEADER_FIELDS.iter().copied())
        .filter(|f| {
            ![
                "sequence",
                "instruction",
                "childTasks",
                "truncatedInstruction",
                "childTaskInstructionPrefixes",
            ]
            .contains(f)
        })
        .collect();
    Fields::parse(&names).expect("fields")
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("utf-8")
}

/// What two handles answer alike: every summary field, the child calls without their texts,
/// the tree, a list page, the metrics and the diagnostics.
fn assert_same_answers(a: &TaskStore, b: &TaskStore) {
    let fields = summary_fields();
    assert_eq!(
        text(a.headers_json(fields).expect("headers")),
        text(b.headers_json(fields).expect("headers"))
    );
    let calls = |s: &TaskStore| -> Vec<String> {
        (s.skeletons().iter())
            .flat_map(|k| &k.child_tasks)
            .map(|c| {
                format!(
                    "{:?} {:?} {:?} {:?} {:?}",
                    c.ts, c.mode, c.sources, c.child_task_id, c.completed_ts
                )
            })
            .collect()
    };
    assert_eq!(calls(a), calls(b));
    let tree = |s: &TaskStore| s.tree_json(&TreeOptions::default()).expect("tree").to_vec();
    assert!(tree(a) == tree(b), "the same tree");
    let page = |s: &TaskStore| {
        let q = ListQuery {
            sort: SortKey::CreatedAt,
            limit: Some(7),
            offset: 3,
            fields,
            ..ListQuery::default()
        };
        serde_json::to_string(&s.list(&q)).expect("page")
    };
    assert_eq!(page(a), page(b));
    let json = |v: &dyn erased::Json| v.json();
    assert_eq!(json(a.metrics()), json(b.metrics()));
    assert_eq!(
        serde_json::to_string(a.diagnostics()).expect("diagnostics"),
        serde_json::to_string(b.diagnostics()).expect("diagnostics")
    );
}

mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).expect("json")
        }
    }
}

#[test]
fn a_store_opens_from_its_summary_with_the_answers_of_its_cache() {
    let (_tmp, tasks, root) = store();
    // The first open reads the folders, builds the cache and writes the summary.
    let first = quick(&tasks, &root);
    assert!(!first.is_partial());
    assert!(cache::summary_file(&root, &roo_store::fsutil::canonical(&tasks)).is_file());
    let reference = full(&tasks, &root);
    let mut q = quick(&tasks, &root);
    assert!(q.is_partial(), "the second open comes from the summary");
    assert!(
        !q.diagnostics().is_empty(),
        "the damaged tasks are reported"
    );
    assert_same_answers(&q, &reference);
    // No instruction until filled; then every header whole, as the cache's.
    assert!(q.skeletons().iter().all(|s| s.instruction.is_none()));
    q.fill().expect("fill");
    assert!(!q.is_partial());
    assert_eq!(
        text(q.headers_json(Fields::default()).expect("headers")),
        text(reference.headers_json(Fields::default()).expect("headers"))
    );
    assert_eq!(q.whole(3), reference.whole(3));
}

#[test]
fn a_change_since_the_summary_takes_the_usual_way() {
    let (_tmp, tasks, root) = store();
    drop(quick(&tasks, &root));
    // One task's file rewritten: the summary no longer agrees with that folder.
    let id = "t00004";
    let ui = tasks.join(id).join("ui_messages.json");
    let file = if ui.exists() {
        ui
    } else {
        tasks.join(id).join("api_conversation_history.json")
    };
    touch(&file, 30);
    let q = quick(&tasks, &root);
    assert!(
        !q.is_partial(),
        "the refresh that saw the change filled the headers"
    );
    let reference = full(&tasks, &root);
    assert_same_answers(&q, &reference);
    // The summary was written again: the next open is quick.
    assert!(quick(&tasks, &root).is_partial());
    // A refresh of a partial handle that sees a change fills it first, then relinks.
    let mut p = quick(&tasks, &root);
    touch(&file, 60);
    let r = p.refresh().expect("refresh");
    assert_eq!(r.changed, 1);
    assert!(!p.is_partial());
    assert_same_answers(&p, &full(&tasks, &root));
    // A task added and one removed.
    let mut p = quick(&tasks, &root);
    copy_dir(&tasks.join("t00001"), &tasks.join("t99999"));
    fs::remove_dir_all(tasks.join("t00002")).expect("rm");
    let r = p.refresh().expect("refresh");
    assert_eq!((r.added, r.removed), (1, 1));
    assert_same_answers(&p, &full(&tasks, &root));
}

#[test]
fn a_summary_that_does_not_check_out_is_not_used() {
    let (_tmp, tasks, root) = store();
    drop(quick(&tasks, &root));
    let file = cache::summary_file(&root, &roo_store::fsutil::canonical(&tasks));
    let good = fs::read(&file).expect("summary");
    // A byte changed, the file cut short, another store's summary: each opens the usual way
    // and writes the summary again.
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x20;
    let other = tempfile::tempdir().expect("tmp");
    let other_tasks = other.path().join("tasks");
    make_tasks(&other_tasks, 3);
    drop(quick(&other_tasks, &root));
    let foreign = fs::read(cache::summary_file(
        &root,
        &roo_store::fsutil::canonical(&other_tasks),
    ))
    .expect("other summary");
    for bad in [
        flipped,
        good[..good.len() - 9].to_vec(),
        foreign,
        Vec::new(),
    ] {
        fs::write(&file, &bad).expect("write");
        let q = quick(&tasks, &root);
        assert!(!q.is_partial());
        assert_same_answers(&q, &full(&tasks, &root));
        assert_eq!(fs::read(&file).expect("rewritten"), good);
    }
}

#[test]
fn a_partial_handle_whose_cache_moved_on_reads_its_tasks_from_their_folders() {
    let (_tmp, tasks, root) = store();
    drop(quick(&tasks, &root));
    let mut q = quick(&tasks, &root);
    assert!(q.is_partial());
    // The cache gone meanwhile: filling reads each task from its folder.
    fs::remove_file(cache::cache_file_for(
        &root,
        &roo_store::fsutil::canonical(&tasks),
    ))
    .expect("rm cache");
    q.fill().expect("fill");
    let reference = full(&tasks, &root);
    assert_eq!(
        text(q.headers_json(Fields::default()).expect("headers")),
        text(reference.headers_json(Fields::default()).expect("headers"))
    );
}

#[test]
fn the_trees_of_some_tasks_are_their_subtrees_of_the_whole_forest() {
    let (_tmp, tasks, root) = store();
    // Links of every kind, subtasks among them; a parent removed so that its children are tops
    // whose parent is missing.
    copy_dir(&fixture_tasks("history-item-v3.50"), &tasks);
    copy_dir(&fixture_tasks("stack-era-v3.20"), &tasks);
    fs::remove_dir_all(tasks.join("019cd6ce-1c9e-7be9-a324-5dcc53ca83b6")).expect("rm root");
    let s = quick(&tasks, &root);
    let ids: Vec<String> = s.skeletons().iter().map(|k| k.task_id.clone()).collect();
    for depth in [None, Some(0), Some(1)] {
        for id in &ids {
            let one = serde_json::to_string(&s.trees_view(std::slice::from_ref(id), depth))
                .expect("json");
            let opts = TreeOptions {
                root_id: Some(id.clone()),
                max_depth: depth,
                ..TreeOptions::default()
            };
            let whole = serde_json::to_string(&s.tree_view(&opts)).expect("json");
            assert_eq!(one, whole, "{id} {depth:?}");
        }
        // Several at once, in the order given.
        let all = serde_json::to_string(&s.trees_view(&ids, depth)).expect("json");
        let each: Vec<serde_json::Value> = (ids.iter())
            .flat_map(|id| {
                serde_json::to_value(s.trees_view(std::slice::from_ref(id), depth))
                    .expect("json")
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(all, serde_json::to_string(&each).expect("json"));
    }
}
