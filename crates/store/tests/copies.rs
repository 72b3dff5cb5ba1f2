//! A task held by two stores (Zoo Code's import of Roo Code's history copies task folders under
//! Zoo's own folder): one handle over both shows each task once, the newer copy, names the other,
//! and keeps doing so as copies change, appear and go.

mod common;

use common::{copy_dir, fixture_tasks, set_mtime};
use roo_store::task_store::{AlsoIn, OpenOptions, TaskStore};
use roo_store::HostEnv;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The v3.50 fixture: parent, its two children, a grandchild; 019cd6d0 has no history_item.json.
const PARENT: &str = "019cd6ce-1c9e-7be9-a324-5dcc53ca83b6";
const CHILD: &str = "019cd6ce-5036-7f70-a11e-7f86d559ebe2";
const GRANDCHILD: &str = "019cd6cf-3402-7119-95b7-f7d5c886c374";
const NO_ITEM: &str = "019cd6d0-30bf-7f5d-9857-aacfd56b7e5c";
/// The Zoo Code fixture's own task.
const ZOO_OWN: &str = "019ee0c5-2600-7c3a-8a41-0b5e6d7f8091";

struct Home {
    _tmp: tempfile::TempDir,
    roo: PathBuf,
    zoo: PathBuf,
    cache: PathBuf,
}

/// Every file of a task folder (not below) and the folder itself made `age` old.
fn age(dir: &Path, age: Duration) {
    let t = SystemTime::now() - age;
    for f in fs::read_dir(dir).expect("task").flatten() {
        if f.path().is_file() {
            set_mtime(&f.path(), t);
        }
    }
    set_mtime(dir, t);
}

/// Roo Code's store (the v3.50 tasks, with checkpoints), and Zoo Code's holding its own task and
/// the import of Roo's tasks that have a history_item.json (their four files, no checkpoints),
/// copied an hour later.
fn home() -> Home {
    let tmp = tempfile::tempdir().expect("tmp");
    let global = tmp.path().join(".config/Code/User/globalStorage");
    let roo = global.join("rooveterinaryinc.roo-cline/tasks");
    let zoo = global.join("zoocodeorganization.zoo-code/tasks");
    copy_dir(&fixture_tasks("history-item-v3.50"), &roo);
    copy_dir(&fixture_tasks("zoo-code-2026"), &zoo);
    for id in [PARENT, CHILD, GRANDCHILD, NO_ITEM] {
        let cp = roo.join(id).join("checkpoints");
        fs::create_dir_all(&cp).expect("mkdir");
        fs::write(cp.join("HEAD"), "ref: refs/heads/main\n").expect("write");
        age(&roo.join(id), Duration::from_secs(7200));
    }
    for id in [PARENT, CHILD, GRANDCHILD] {
        let (from, to) = (roo.join(id), zoo.join(id));
        fs::create_dir_all(&to).expect("mkdir");
        for f in [
            "history_item.json",
            "ui_messages.json",
            "api_conversation_history.json",
            "task_metadata.json",
        ] {
            if from.join(f).is_file() {
                fs::copy(from.join(f), to.join(f)).expect("copy");
            }
        }
        age(&to, Duration::from_secs(3600));
    }
    let cache = tmp.path().join("cache");
    Home {
        _tmp: tmp,
        roo,
        zoo,
        cache,
    }
}

/// The conversation continued: a message appended `after_ms` after the last one, written as the
/// extension writes (a new file renamed over the old one).
fn continue_task(dir: &Path, after_ms: i64, text: &str) {
    let path = dir.join("ui_messages.json");
    let mut msgs: Vec<serde_json::Value> =
        serde_json::from_slice(&fs::read(&path).expect("read")).expect("json");
    let last = msgs
        .iter()
        .filter_map(|m| m["ts"].as_i64())
        .max()
        .expect("a ts");
    msgs.push(serde_json::json!({"ts": last + after_ms, "type": "say", "say": "user_feedback", "text": text}));
    let tmp = dir.join(".ui_messages.json.new");
    fs::write(&tmp, serde_json::to_vec(&msgs).expect("json")).expect("write");
    fs::rename(&tmp, &path).expect("rename");
}

/// A file written again, unchanged, as the extension writes (renamed over the old one).
fn rewrite(path: &Path) {
    let tmp = path.with_extension("json.new");
    fs::copy(path, &tmp).expect("copy");
    fs::rename(&tmp, path).expect("rename");
}

fn open(dirs: &[&Path], cache: Option<&Path>) -> TaskStore {
    TaskStore::open(
        &HostEnv::current(),
        &OpenOptions {
            tasks_dirs: dirs.iter().map(|d| d.to_path_buf()).collect(),
            cache_root: cache.map(Path::to_path_buf),
            ..OpenOptions::default()
        },
    )
    .expect("open")
}

/// Where the handle shows each task from, and what it names beside.
fn placed(store: &TaskStore) -> Vec<(String, PathBuf, Vec<AlsoIn>)> {
    (store.skeletons().iter())
        .map(|s| {
            let dir = store.task_dir(&s.task_id).expect("a folder");
            (s.task_id.clone(), dir, store.also_in(&s.task_id))
        })
        .collect()
}

fn also(dir: &Path, id: &str, differs: bool) -> AlsoIn {
    AlsoIn {
        tasks_dir: dir.display().to_string(),
        host: roo_state::skeleton::source_in_path(dir).map(str::to_owned),
        path: dir.join(id).display().to_string(),
        differs,
    }
}

#[test]
fn an_imported_task_is_one_task_shown_from_its_newer_copy() {
    let h = home();
    // The parent was continued in Zoo Code after the import: its Zoo copy is newer and differs.
    continue_task(
        &h.zoo.join(PARENT),
        86_400_000,
        "Et ajoute un test pour --no-cache.",
    );
    let want = vec![
        (
            PARENT.to_owned(),
            h.zoo.join(PARENT),
            vec![also(&h.roo, PARENT, true)],
        ),
        (
            CHILD.to_owned(),
            h.zoo.join(CHILD),
            vec![also(&h.roo, CHILD, false)],
        ),
        (
            GRANDCHILD.to_owned(),
            h.zoo.join(GRANDCHILD),
            vec![also(&h.roo, GRANDCHILD, false)],
        ),
        (NO_ITEM.to_owned(), h.roo.join(NO_ITEM), vec![]),
        (ZOO_OWN.to_owned(), h.zoo.join(ZOO_OWN), vec![]),
    ];
    // Whatever the order of the stores, without a cache, then building it, then reading it.
    for cache in [None, Some(h.cache.as_path()), Some(h.cache.as_path())] {
        for dirs in [[&h.roo, &h.zoo], [&h.zoo, &h.roo]] {
            let store = open(&[dirs[0], dirs[1]], cache);
            assert_eq!(placed(&store), want, "{dirs:?} {cache:?}");
            // One forest over both: the child that only Roo holds hangs under the parent shown
            // from Zoo (the parent's childIds name it).
            let child = store.get(NO_ITEM).expect("task");
            assert_eq!(child.parent_task_id.as_deref(), Some(PARENT));
            let shared = store.shared_tasks();
            let ids: Vec<&str> = shared.iter().map(|s| s.task_id.as_str()).collect();
            assert_eq!(ids, [PARENT, CHILD, GRANDCHILD]);
            assert!(shared.iter().all(|s| s.host.as_deref() == Some("zoo-code")));
            assert!(store.diagnostics().is_empty(), "{:?}", store.diagnostics());
            // Each store still counts its own folders.
            let counts: Vec<u32> = store.stores().iter().map(|s| s.tasks).collect();
            assert_eq!(counts, [4, 4]);
        }
    }
}

#[test]
fn a_refresh_follows_the_copies() {
    let h = home();
    let mut store = open(&[&h.roo, &h.zoo], Some(&h.cache));
    assert_eq!(store.refresh().expect("refresh").cache, "none");

    // The Roo copy of the child is continued later: it becomes the copy shown.
    continue_task(
        &h.roo.join(CHILD),
        3_600_000,
        "Relance les tests une fois de plus.",
    );
    let r = store.refresh().expect("refresh");
    assert_eq!((r.changed, r.added, r.removed), (1, 0, 0));
    assert_eq!(store.task_dir(CHILD), Some(h.roo.join(CHILD)));
    assert_eq!(store.also_in(CHILD), vec![also(&h.zoo, CHILD, true)]);
    assert_eq!(store.skeletons().len(), 5);
    // Its subtree follows it: the grandchild still hangs under it.
    let grandchild = store.get(GRANDCHILD).expect("task");
    assert_eq!(grandchild.parent_task_id.as_deref(), Some(CHILD));

    // The Zoo copy of the child changes but stays the older conversation: nothing shown moves.
    let (revision, layout) = (store.revision(), store.layout());
    rewrite(&h.zoo.join(CHILD).join("history_item.json"));
    let r = store.refresh().expect("refresh");
    assert_eq!((r.changed, r.cache.as_str()), (1, "appended"));
    assert_eq!((store.revision(), store.layout()), (revision, layout));
    assert_eq!(store.task_dir(CHILD), Some(h.roo.join(CHILD)));
    // The same conversation rewritten later is the newer copy: the Roo grandchild takes over.
    rewrite(&h.roo.join(GRANDCHILD).join("history_item.json"));
    store.refresh().expect("refresh");
    assert_eq!(store.task_dir(GRANDCHILD), Some(h.roo.join(GRANDCHILD)));
    assert_eq!(
        store.also_in(GRANDCHILD),
        vec![also(&h.zoo, GRANDCHILD, false)]
    );

    // The Zoo copy of the parent goes: the Roo copy takes its place.
    fs::remove_dir_all(h.zoo.join(PARENT)).expect("rm");
    let r = store.refresh().expect("refresh");
    assert_eq!(r.removed, 0);
    assert_eq!(store.task_dir(PARENT), Some(h.roo.join(PARENT)));
    assert!(store.also_in(PARENT).is_empty());
    assert_eq!(store.skeletons().len(), 5);

    // A task new in both stores at once: one task, the newer copy shown.
    let new_id = "019f0a11-7c2e-7d40-9b15-2a6f8e4c1d03";
    for (dir, age_s) in [(&h.roo, 60), (&h.zoo, 600)] {
        copy_dir(
            &fixture_tasks("zoo-code-2026").join(ZOO_OWN),
            &dir.join(new_id),
        );
        age(&dir.join(new_id), Duration::from_secs(age_s));
    }
    let r = store.refresh().expect("refresh");
    assert_eq!(r.added, 2);
    assert_eq!(store.skeletons().len(), 6);
    assert_eq!(store.task_dir(new_id), Some(h.roo.join(new_id)));
    assert_eq!(store.also_in(new_id), vec![also(&h.zoo, new_id, false)]);

    // A copy that goes is no longer named; nothing else moves.
    fs::remove_dir_all(h.zoo.join(new_id)).expect("rm");
    let r = store.refresh().expect("refresh");
    assert_eq!(r.removed, 1);
    assert!(store.also_in(new_id).is_empty());
    assert_eq!(store.refresh().expect("refresh").cache, "none");

    // A handle opened afresh from the caches the refreshes wrote says the same.
    let reopened = open(&[&h.roo, &h.zoo], Some(&h.cache));
    assert_eq!(placed(&reopened), placed(&store));
    let scanned = open(&[&h.roo, &h.zoo], None);
    assert_eq!(placed(&scanned), placed(&store));
}

#[test]
fn handles_of_one_store_each_agree_on_the_copy_shown() {
    let h = home();
    continue_task(
        &h.zoo.join(PARENT),
        86_400_000,
        "Et ajoute un test pour --no-cache.",
    );
    let (roo, zoo) = (open(&[&h.roo], None), open(&[&h.zoo], None));
    for handles in [[&roo, &zoo], [&zoo, &roo]] {
        let shared = TaskStore::shared_across(&handles);
        let got: Vec<(&str, &str, Vec<AlsoIn>)> = shared
            .iter()
            .map(|s| (s.task_id.as_str(), s.tasks_dir.as_str(), s.also_in.clone()))
            .collect();
        let zoo_dir = h.zoo.display().to_string();
        assert_eq!(
            got,
            vec![
                (PARENT, zoo_dir.as_str(), vec![also(&h.roo, PARENT, true)]),
                (CHILD, zoo_dir.as_str(), vec![also(&h.roo, CHILD, false)]),
                (
                    GRANDCHILD,
                    zoo_dir.as_str(),
                    vec![also(&h.roo, GRANDCHILD, false)]
                ),
            ]
        );
    }
    // The same decisions as one handle over both.
    let both = open(&[&h.roo, &h.zoo], None);
    let across = TaskStore::shared_across(&[&roo, &zoo]);
    assert_eq!(both.shared_tasks(), across);
}
