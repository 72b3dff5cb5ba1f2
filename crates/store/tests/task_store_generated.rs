//! The task store handle on a generated store (every era, inferred links only): a file of a task
//! rewritten in place (its folder's time unchanged), a refresh, and then every link, the tree and
//! the sorted lists are what a fresh scan and hierarchy pass give.

use roo_state::hierarchy::{self, HierarchyOptions, TreeOptions};
use roo_state::scan::{scan_tasks, ScanOptions};
use roo_state::skeleton::AnalyzeOptions;
use roo_state::ConversationSkeleton;
use roo_store::task_store::{Fields, ListQuery, SortKey, TaskStore, HEADER_FIELDS};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

mod common;

/// A generated store of `n` tasks (about 6 kB each) in a temporary folder, and its tasks folder;
/// `strip`: without stored links, so that every link is inferred.
fn generated(n: usize, seed: u64, strip: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    generated_in("store", n, seed, strip)
}

/// [`generated`] in `<temporary folder>/<sub>/tasks`.
fn generated_in(
    sub: &str,
    n: usize,
    seed: u64,
    strip: bool,
) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store_dir = dir.path().join(sub);
    roo_corpus::generate(
        &store_dir,
        &roo_corpus::CorpusSpec {
            tasks: n,
            seed,
            target_bytes: Some(n as u64 * 6_000),
            strip_stored_links: strip,
            ..roo_corpus::CorpusSpec::default()
        },
    )
    .expect("corpus");
    (dir, store_dir.join("tasks"))
}

fn open(tasks: &Path, cache_root: &Path) -> TaskStore {
    common::open_store(tasks, Some(cache_root))
}

/// Every task's parent, from a fresh scan of the folder linked by a fresh hierarchy pass.
fn fresh_links(tasks: &Path) -> BTreeMap<String, Option<String>> {
    let (linked, _) =
        hierarchy::reconstruct_hierarchy(fresh_headers(tasks), &HierarchyOptions::default());
    linked
        .into_iter()
        .map(|s| (s.task_id, s.parent_task_id))
        .collect()
}

/// Every task's header, from a fresh scan of the folder.
fn fresh_headers(tasks: &Path) -> Vec<ConversationSkeleton> {
    scan_tasks(
        tasks,
        &ScanOptions {
            concurrency: 0,
            analyze: AnalyzeOptions {
                include_sequence: false,
                ..AnalyzeOptions::default()
            },
            on_progress: None,
            cancel: None,
            hierarchy: None,
        },
    )
    .expect("scan")
    .skeletons
}

/// Every task's link as the handle holds it: parent, root and evidence (as JSON).
fn whole_links(store: &TaskStore) -> Vec<(String, Option<String>, Option<String>, String)> {
    let link = |s: &ConversationSkeleton| {
        let evidence = serde_json::to_string(&s.parent_evidence).expect("json");
        let (id, parent, root) = (&s.task_id, &s.parent_task_id, &s.root_task_id);
        (id.clone(), parent.clone(), root.clone(), evidence)
    };
    store.skeletons().iter().map(link).collect()
}

fn links(store: &TaskStore) -> BTreeMap<String, Option<String>> {
    store
        .skeletons()
        .iter()
        .map(|s| (s.task_id.clone(), s.parent_task_id.clone()))
        .collect()
}

/// The ids of a whole list in `key`'s order.
fn listed(store: &TaskStore, key: SortKey) -> Vec<String> {
    let q = ListQuery {
        sort: key,
        ..ListQuery::default()
    };
    store
        .list(&q)
        .items
        .iter()
        .map(|s| s.task_id.clone())
        .collect()
}

/// Rewrite a child task's instruction wherever its ui messages hold it, in place (same file, same size,
/// a later modification time; the folder's entries and time untouched). Returns its id.
fn rewrite_an_instruction(store: &TaskStore, tasks: &Path) -> String {
    rewrite_an_instruction_by(store, tasks, false)
}

/// [`rewrite_an_instruction`]; `by_rename`: the new text written beside the file and renamed
/// over it, as Roo Code writes (the folder's time moves).
fn rewrite_an_instruction_by(store: &TaskStore, tasks: &Path, by_rename: bool) -> String {
    rewrite_an_instruction_of(store, tasks, by_rename, |_| true)
}

/// [`rewrite_an_instruction_by`] for the first child task that `pick` takes.
fn rewrite_an_instruction_of(
    store: &TaskStore,
    tasks: &Path,
    by_rename: bool,
    pick: impl Fn(&ConversationSkeleton) -> bool,
) -> String {
    for s in store.skeletons() {
        let (Some(_), Some(instruction)) = (&s.parent_task_id, &s.instruction) else {
            continue;
        };
        if !pick(s) {
            continue;
        }
        let file = tasks.join(&s.task_id).join("ui_messages.json");
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        let quoted = serde_json::to_string(instruction).expect("json");
        let inner = &quoted[1..quoted.len() - 1];
        if !text.contains(inner) {
            continue;
        }
        // Letters and digits become `q`: the same length, a text no parent issued.
        let other: String = instruction
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { 'q' } else { c })
            .collect();
        let other = serde_json::to_string(&other).expect("json");
        let changed = text.replace(inner, &other[1..other.len() - 1]);
        let dir_time = fs::metadata(file.parent().expect("folder"))
            .and_then(|m| m.modified())
            .expect("folder time");
        if by_rename {
            let tmp = file.with_file_name(".ui_messages.json.tmp");
            fs::write(&tmp, changed.as_bytes()).expect("write");
            fs::rename(&tmp, &file).expect("rename");
            return s.task_id.clone();
        }
        let mut f = fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&file)
            .expect("open in place");
        f.write_all(changed.as_bytes()).expect("write");
        f.set_modified(SystemTime::now() + Duration::from_secs(5))
            .expect("mtime");
        drop(f);
        let after = fs::metadata(file.parent().expect("folder"))
            .and_then(|m| m.modified())
            .expect("folder time");
        assert_eq!(
            dir_time, after,
            "the folder's time moved: not a change in place"
        );
        return s.task_id.clone();
    }
    panic!("no child task with its instruction in ui_messages.json");
}

#[test]
fn a_change_inside_a_folder_relinks_like_a_fresh_pass() {
    let (dir, tasks) = generated(300, 31, true);
    let cache_root = dir.path().join("cache");
    let mut store = open(&tasks, &cache_root);
    assert_eq!(links(&store), fresh_links(&tasks), "after the open");
    // The kept views exist before the change: a refresh must drop them.
    let titles_before = listed(&store, SortKey::Title);
    let tree_before = store.tree_json(&TreeOptions::default()).expect("tree");

    let changed = rewrite_an_instruction(&store, &tasks);
    let parent_before = store.get(&changed).expect("task").parent_task_id.clone();
    let report = store.refresh().expect("refresh");
    assert_eq!((report.changed, report.added, report.removed), (1, 0, 0));
    let header = store.get(&changed).expect("task");
    assert!(header
        .instruction
        .as_deref()
        .is_some_and(|i| i.contains("qq")));
    assert_ne!(
        header.parent_task_id, parent_before,
        "the rewritten child kept its parent"
    );

    // Every link, the tree and the lists as a fresh pass (and a fresh handle) give them.
    assert_eq!(links(&store), fresh_links(&tasks), "after the refresh");
    let fresh = open(&tasks, &dir.path().join("cache-fresh"));
    let tree = store.tree_json(&TreeOptions::default()).expect("tree");
    let fresh_tree = fresh.tree_json(&TreeOptions::default()).expect("tree");
    assert!(tree == fresh_tree, "the tree differs from a fresh handle's");
    assert!(
        tree != tree_before,
        "the tree kept from before the change was served"
    );
    let titles = listed(&store, SortKey::Title);
    assert_eq!(titles, listed(&fresh, SortKey::Title));
    assert_ne!(titles, titles_before, "the retitled task kept its place");
    for key in [
        SortKey::LastActivity,
        SortKey::MessageCount,
        SortKey::TotalSize,
    ] {
        assert_eq!(listed(&store, key), listed(&fresh, key), "{key:?}");
    }
    // A header with some fields is the full one without the others, for each field.
    let full: Vec<serde_json::Value> =
        serde_json::from_slice(&store.headers_json(Fields::default()).expect("json"))
            .expect("parse");
    // The Latin-1 form JavaScript gets reads back as the same headers, whole and lean.
    for fields in [
        Fields::default(),
        Fields::parse(&["metadata"]).expect("fields"),
    ] {
        let latin1 = store.headers_latin1(fields).expect("json");
        let text: String = latin1.iter().map(|&b| char::from(b)).collect();
        let utf8: serde_json::Value =
            serde_json::from_slice(&store.headers_json(fields).expect("json")).expect("parse");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).expect("parse"),
            utf8
        );
    }
    for name in HEADER_FIELDS {
        let fields = Fields::parse(&[name]).expect("fields");
        let picked: Vec<serde_json::Value> =
            serde_json::from_slice(&store.headers_json(fields).expect("json")).expect("parse");
        assert_eq!(picked.len(), full.len());
        for (f, p) in full.iter().zip(&picked) {
            let mut want = serde_json::Map::new();
            for k in ["taskId", name] {
                if let Some(v) = f.get(k) {
                    want.insert(k.into(), v.clone());
                }
            }
            assert_eq!(p, &serde_json::Value::Object(want), "{name}");
        }
    }
    assert!(Fields::parse(&["instructions"]).is_err());
}

/// One more message at the end of a task's UI messages, written in place (a later modification
/// time): its counts and last activity change, its instruction and links do not.
fn append_a_message(tasks: &Path, id: &str) {
    let file = tasks.join(id).join("ui_messages.json");
    let text = fs::read_to_string(&file).expect("ui messages");
    let mut messages: Vec<serde_json::Value> = serde_json::from_str(&text).expect("json");
    let mut last = messages.last().cloned().expect("a message");
    last["ts"] = serde_json::json!(last["ts"].as_i64().expect("ts") + 60_000);
    last["type"] = serde_json::json!("say");
    last["say"] = serde_json::json!("text");
    last["text"] = serde_json::json!("one more message");
    messages.push(last);
    fs::write(&file, serde_json::to_vec(&messages).expect("json")).expect("write");
    common::touch(&file, 5);
}

#[test]
fn a_change_that_moves_no_task_patches_the_kept_tree_like_a_fresh_build() {
    let (dir, tasks) = generated(300, 43, true);
    let mut store = open(&tasks, &dir.path().join("cache"));
    let shallow = TreeOptions {
        max_depth: Some(1),
        ..TreeOptions::default()
    };
    // A top task, a child and a grandchild (deeper than the shallow tree shows).
    let depth_of = |s: &ConversationSkeleton| {
        let mut depth = 0;
        let mut at = s.parent_task_id.clone();
        while let Some(p) = at.filter(|_| depth < 100) {
            depth += 1;
            at = store.get(&p).ok().and_then(|p| p.parent_task_id.clone());
        }
        depth
    };
    let ui = |s: &&ConversationSkeleton| tasks.join(&s.task_id).join("ui_messages.json").exists();
    let picked: Vec<String> = [0, 1, 2]
        .iter()
        .map(|&d| {
            let mut at = store.skeletons().iter().filter(ui);
            let s = at.find(|s| depth_of(s) == d).expect("a task at that depth");
            s.task_id.clone()
        })
        .collect();
    // Each tree kept, then each task changed: the next tree is the one a fresh handle writes.
    let mut round = 0;
    for opts in [TreeOptions::default(), shallow] {
        for id in &picked {
            round += 1;
            let before = store.tree_json(&opts).expect("tree");
            assert!(before == store.tree_json(&opts).expect("tree"), "kept");
            append_a_message(&tasks, id);
            let report = store.refresh().expect("refresh");
            assert_eq!((report.changed, report.relinked), (1, 0), "{round}");
            let tree = store.tree_json(&opts).expect("tree");
            let fresh = open(&tasks, &dir.path().join(format!("cache-{round}")));
            assert!(
                tree == fresh.tree_json(&opts).expect("tree"),
                "{opts:?} {id}"
            );
            let shown = String::from_utf8_lossy(&tree).contains(id.as_str());
            assert_eq!(tree != before, shown, "{opts:?} {id}");
            assert_eq!(
                listed(&store, SortKey::LastActivity),
                listed(&fresh, SortKey::LastActivity)
            );
        }
    }
}

#[test]
fn tasks_that_come_go_or_move_rebuild_the_kept_tree_like_a_fresh_build() {
    let (dir, tasks) = generated(300, 47, true);
    let mut store = open(&tasks, &dir.path().join("cache"));
    let shallow = TreeOptions {
        max_depth: Some(1),
        ..TreeOptions::default()
    };
    let has_children =
        |id: &str| (store.skeletons().iter()).any(|c| c.parent_task_id.as_deref() == Some(id));
    let ui = |id: &str| tasks.join(id).join("ui_messages.json").exists();
    let tops: Vec<String> = (store.skeletons().iter())
        .filter(|s| s.parent_task_id.is_none() && ui(&s.task_id))
        .map(|s| s.task_id.clone())
        .collect();
    let lone = tops
        .iter()
        .find(|id| !has_children(id))
        .expect("a lone top")
        .clone();
    let parent = tops
        .iter()
        .find(|id| has_children(id))
        .expect("a parent")
        .clone();
    let other = tops
        .iter()
        .rev()
        .find(|id| **id != lone)
        .expect("a top")
        .clone();
    let mut round = 0;
    for opts in [TreeOptions::default(), shallow] {
        let copy = format!("ffffffff-0000-4000-8000-{:012}", round);
        // Each step changes the store, then the kept tree is asked for again.
        let steps: [&dyn Fn(); 4] = [
            // A task added (a copy of a top task: its instruction now names two tasks).
            &|| common::copy_dir(&tasks.join(&lone), &tasks.join(&copy)),
            // A task changed in place and a task with children removed, in one refresh.
            &|| {
                append_a_message(&tasks, &other);
                fs::remove_dir_all(tasks.join(&parent)).expect("remove");
            },
            // The removed task back, the copy gone.
            &|| {
                let backup = dir.path().join("removed");
                common::copy_dir(&backup, &tasks.join(&parent));
                fs::remove_dir_all(tasks.join(&copy)).expect("remove");
            },
            // Nothing changed.
            &|| {},
        ];
        common::copy_dir(&tasks.join(&parent), &dir.path().join("removed"));
        for step in steps {
            round += 1;
            store.tree_json(&opts).expect("tree");
            step();
            store.refresh().expect("refresh");
            let tree = store.tree_json(&opts).expect("tree");
            let fresh = open(&tasks, &dir.path().join(format!("cache-{round}")));
            assert!(
                tree == fresh.tree_json(&opts).expect("tree"),
                "{opts:?} {round}"
            );
            assert_eq!(whole_links(&store), whole_links(&fresh), "{round}");
        }
        fs::remove_dir_all(dir.path().join("removed")).expect("remove");
    }
}

#[test]
fn a_new_parent_of_a_task_with_children_reaches_the_cache_of_its_descendants() {
    let (dir, tasks) = generated(300, 31, true);
    let cache_root = dir.path().join("cache");
    let mut store = open(&tasks, &cache_root);
    // A child that has children of its own: given a text no parent issued, it becomes a top
    // task, and its descendants' root with it (their parent unchanged).
    let parents: std::collections::HashSet<String> = (store.skeletons().iter())
        .filter_map(|s| s.parent_task_id.clone())
        .collect();
    let changed =
        rewrite_an_instruction_of(&store, &tasks, false, |s| parents.contains(&s.task_id));
    let roots_before = whole_links(&store);
    assert_eq!(store.refresh().expect("refresh").changed, 1);
    let after = whole_links(&store);
    let moved_roots = (roots_before.iter().zip(&after))
        .filter(|(b, a)| b.0 != changed && b.1 == a.1 && b.2 != a.2)
        .count();
    assert!(moved_roots > 0, "no descendant of {changed} changed root");
    // A handle opened from the cache the refresh recorded holds the same links, and so does a
    // fresh one.
    let differ = |other: &TaskStore| -> Vec<String> {
        let links = whole_links(other);
        assert_eq!(links.len(), after.len());
        let differ = links.iter().zip(&after).filter(|(a, b)| a != b);
        differ.map(|(a, b)| format!("{a:?} != {b:?}")).collect()
    };
    assert_eq!(differ(&open(&tasks, &cache_root)), [""; 0], "reopened");
    let fresh = open(&tasks, &dir.path().join("cache-fresh"));
    assert_eq!(differ(&fresh), [""; 0], "fresh");
}

#[test]
fn a_rename_in_a_roo_store_relinks_like_a_fresh_pass_with_one_stat_per_folder() {
    let (dir, tasks) = generated_in("globalStorage/rooveterinaryinc.roo-cline", 300, 33, true);
    // Files written two minutes ago and each folder one (settled, and newer than its files).
    for e in fs::read_dir(&tasks).expect("tasks").flatten() {
        if e.path().is_dir() {
            common::age(&e.path(), 120, 60);
        }
    }
    let mut store = open(&tasks, &dir.path().join("cache"));
    let changed = rewrite_an_instruction_by(&store, &tasks, true);
    let report = store.refresh().expect("refresh");
    assert_eq!((report.changed, report.added, report.removed), (1, 0, 0));
    assert!(report.folders_trusted > 250, "{report:?}");
    assert!(store
        .get(&changed)
        .expect("task")
        .instruction
        .as_deref()
        .is_some_and(|i| i.contains("qq")));
    assert_eq!(links(&store), fresh_links(&tasks), "after the refresh");
}

#[test]
fn a_cold_open_hands_over_what_the_cache_file_gives_back() {
    let (dir, tasks) = generated(120, 7, false);
    let cache_root = dir.path().join("cache");
    // Built and handed over by the build; then read back from the file it wrote; then no cache.
    let cold = open(&tasks, &cache_root);
    let warm = open(&tasks, &cache_root);
    let scanned = common::open_store(&tasks, None);
    let all = |s: &TaskStore| s.headers_json(Fields::default()).expect("json");
    assert_eq!(cold.skeletons().len(), 120);
    assert!(all(&cold) == all(&warm), "the handed-over headers differ");
    assert!(
        all(&cold) == all(&scanned),
        "the cached headers differ from a scan"
    );
    let counts = |s: &TaskStore| {
        let m = s.metrics();
        (m.tasks, m.roots, m.orphans, m.max_depth)
    };
    assert_eq!(counts(&cold), counts(&warm));
    assert_eq!(counts(&cold), counts(&scanned));
    // The handed-over handle knows the file it came from: nothing to record.
    let mut cold = cold;
    assert_eq!(cold.refresh().expect("refresh").cache, "none");
    let report = roo_store::cache::build_skeleton_cache(
        std::slice::from_ref(&tasks),
        &roo_store::cache::BuildOptions::new(&cache_root),
    )
    .expect("build");
    assert!(
        !report.stores[0].written,
        "the written cache was not current"
    );
    assert_eq!(report.stores[0].repaired, 0);
    // The data section's temporary file is gone.
    let left: Vec<String> = fs::read_dir(roo_store::cache::store_cache_dir(&cache_root, &tasks))
        .expect("cache dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The fields of a header the handle keeps apart, from its JSON.
const APART: [&str; 3] = [
    "childTasks",
    "truncatedInstruction",
    "childTaskInstructionPrefixes",
];

fn apart_of(header: &serde_json::Value) -> serde_json::Value {
    APART.map(|f| header.get(f).cloned()).into()
}

/// Each task's fields kept apart (their JSON), as a fresh scan reads them.
fn fresh_calls(tasks: &Path) -> BTreeMap<String, serde_json::Value> {
    let calls = |s: ConversationSkeleton| (s.task_id.clone(), apart_of(&serde_json::json!(s)));
    fresh_headers(tasks).into_iter().map(calls).collect()
}

/// Each task's fields kept apart as the handle shows them: in the bulk headers, in a list page
/// that asks for them, and in each header made whole (what `get` writes). The three must agree.
fn shown_calls(store: &TaskStore) -> BTreeMap<String, serde_json::Value> {
    let bulk: Vec<serde_json::Value> =
        serde_json::from_slice(&store.headers_json(Fields::default()).expect("json"))
            .expect("parse");
    let id = |h: &serde_json::Value| h["taskId"].as_str().expect("id").to_owned();
    let bulk: BTreeMap<String, serde_json::Value> =
        bulk.iter().map(|h| (id(h), apart_of(h))).collect();
    let fields = Fields::parse(&APART).expect("fields");
    let page = store.list(&ListQuery {
        fields,
        ..ListQuery::default()
    });
    let page: serde_json::Value = serde_json::to_value(&page).expect("page");
    for item in page["items"].as_array().expect("items") {
        assert_eq!(apart_of(item), bulk[&id(item)], "{}: list page", id(item));
    }
    for i in 0..store.skeletons().len() {
        let whole = serde_json::json!(store.whole(i).expect("whole"));
        assert_eq!(apart_of(&whole), bulk[&id(&whole)], "{}", id(&whole));
    }
    bulk
}

#[test]
fn what_a_handle_keeps_apart_shows_as_read_even_after_a_change() {
    let (dir, tasks) = generated(300, 41, true);
    let cache = dir.path().join("cache");
    let cold = open(&tasks, &cache);
    // The resident headers keep no todos nor match keys, and leave shared messages empty.
    let kept = cold.skeletons();
    assert!(kept.iter().all(|s| s.truncated_instruction.is_none()));
    assert!(kept
        .iter()
        .all(|s| s.child_task_instruction_prefixes.is_empty()));
    let calls: Vec<_> = (cold.skeletons().iter())
        .flat_map(|s| &s.child_tasks)
        .collect();
    assert!(calls.iter().all(|c| c.todos.is_none()));
    assert!(calls.iter().filter(|c| c.message.is_empty()).count() * 2 > calls.len());
    let fresh = fresh_calls(&tasks);
    let with_todos = fresh.values().flat_map(|c| c[0].as_array().expect("calls"));
    assert!(with_todos.filter(|c| c.get("todos").is_some()).count() > 10);
    assert!(fresh.values().filter(|a| a[1].is_string()).count() > 250);
    let scanned = common::open_store(&tasks, None);
    assert_eq!(shown_calls(&cold), fresh, "cold open");
    assert_eq!(shown_calls(&scanned), fresh, "no cache");
    let mut store = open(&tasks, &cache);
    assert_eq!(shown_calls(&store), fresh, "warm open");
    // The warm open hashed each header's texts as it read its line, the cold one after: both
    // keep the same messages apart.
    let apart = |s: &TaskStore| {
        let calls = s.skeletons().iter().flat_map(|s| &s.child_tasks);
        calls.filter(|c| c.message.is_empty()).count()
    };
    assert_eq!(apart(&store), apart(&cold));
    // A child's instruction rewritten in place: its parent's call keeps the text the parent wrote
    // (in the handle, that text was the child's instruction before the change).
    let child = rewrite_an_instruction(&store, &tasks);
    let header = store.get(&child).expect("child");
    let old = header.instruction.clone().expect("instruction");
    let parent = header.parent_task_id.clone().expect("a parent");
    let messages = |apart: &serde_json::Value| -> Vec<String> {
        let calls = apart[0].as_array().expect("calls").iter();
        calls
            .map(|c| c["message"].as_str().expect("message").to_owned())
            .collect()
    };
    assert!(
        messages(&fresh[&parent]).contains(&old),
        "{parent} did not call {child}"
    );
    assert_eq!(store.refresh().expect("refresh").changed, 1);
    let now = fresh_calls(&tasks);
    assert_eq!(now[&parent], fresh[&parent]);
    assert_eq!(shown_calls(&store), now, "after the refresh");
    let header = store.get(&child).expect("child");
    assert_ne!(header.instruction.as_deref(), Some(old.as_str()));
}
