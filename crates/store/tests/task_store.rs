//! The task store handle: open from the cache, queries, incremental refresh recorded by appending
//! to the cache, a journal cut short by a crash, and a cache rebuilt by another process.

mod common;

use common::{fixture_tasks, make_tasks, touch};
use roo_state::hierarchy::TreeOptions;
use roo_store::cache;
use roo_store::task_store::{ListQuery, Lookup, OpenOptions, SortKey, TaskStore};
use roo_store::HostEnv;
use std::fs;
use std::path::{Path, PathBuf};

fn open(tasks: &Path, cache_root: Option<&Path>) -> TaskStore {
    common::open_store(tasks, cache_root)
}

fn setup(
    n: usize,
) -> (
    (tempfile::TempDir, tempfile::TempDir),
    PathBuf,
    PathBuf,
    Vec<String>,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let tasks = dir.path().join("tasks");
    let ids = make_tasks(&tasks, n);
    let cache_dir = tempfile::tempdir().expect("tempdir");
    let cache_root = cache_dir.path().join("cache");
    ((dir, cache_dir), tasks, cache_root, ids)
}

/// What a handle holds, comparable across handles: id, parent, title, message count.
fn facts(s: &TaskStore) -> Vec<(String, Option<String>, Option<String>, u32)> {
    s.skeletons()
        .iter()
        .map(|k| {
            (
                k.task_id.clone(),
                k.parent_task_id.clone(),
                k.metadata.title.clone(),
                k.metadata.message_count,
            )
        })
        .collect()
}

/// Every sort key, in its own order and reversed (ties by id).
fn every_sort_key_in_both_orders(cached: &TaskStore) {
    for key in SortKey::ALL {
        let ids = |ascending: Option<bool>| -> Vec<String> {
            let page = cached.list(&ListQuery {
                sort: key,
                ascending,
                ..ListQuery::default()
            });
            page.items.iter().map(|s| s.task_id.clone()).collect()
        };
        let natural = ids(None);
        assert_eq!(natural.len(), 4, "{key:?}");
        let (asc, desc) = (ids(Some(true)), ids(Some(false)));
        assert_eq!(
            if key == SortKey::Title { &asc } else { &desc },
            &natural,
            "{key:?}"
        );
        let value = |id: &str| -> f64 {
            let s = cached.get(id).expect("listed task");
            match key {
                SortKey::LastActivity => s.last_activity_ms.unwrap_or(0) as f64,
                SortKey::CreatedAt => s.created_at_ms.unwrap_or(0) as f64,
                SortKey::Title => 0.0,
                SortKey::MessageCount => f64::from(s.metadata.message_count),
                SortKey::ActionCount => f64::from(s.metadata.action_count),
                SortKey::TotalSize => s.metadata.total_size as f64,
                SortKey::TotalCost => s.api_totals.total_cost,
            }
        };
        let values: Vec<f64> = asc.iter().map(|id| value(id)).collect();
        assert!(
            values.windows(2).all(|w| w[0] <= w[1]),
            "{key:?} {values:?}"
        );
    }
}

#[test]
fn open_from_the_cache_equals_a_scan_and_answers_queries() {
    let (_d, _tasks, cache_root, _) = setup(0);
    let tasks = fixture_tasks("history-item-v3.50");
    let cached = open(&tasks, Some(&cache_root));
    let scanned = open(&tasks, None);
    assert_eq!(facts(&cached), facts(&scanned));
    assert_eq!(cached.skeletons().len(), 4);
    // Lookup by id, by unique prefix, ambiguous prefix, unknown.
    let root = "019cd6ce-1c9e-7be9-a324-5dcc53ca83b6";
    assert!(matches!(cached.lookup(root), Lookup::Found(_)));
    assert_eq!(
        cached.get("019cd6ce-1c").map(|s| s.task_id.as_str()),
        Ok(root)
    );
    match cached.lookup("019cd6") {
        Lookup::Ambiguous(ids) => assert!(ids.len() >= 2, "{ids:?}"),
        other => panic!("expected ambiguous, got {other:?}"),
    }
    assert_eq!(cached.lookup("zzz"), Lookup::NotFound);
    assert_eq!(cached.lookup(""), Lookup::NotFound);
    // Tree, ancestors, descendants.
    let tree = cached.tree(&TreeOptions::default());
    assert_eq!(tree.len(), 1);
    assert_eq!(tree[0].task_id, root);
    let desc = cached.descendants(root);
    assert_eq!(desc.len(), 3);
    for d in &desc {
        assert!(cached.ancestors(d).contains(&root.to_owned()));
    }
    // List: filtered, sorted newest first, paged.
    let all = cached.list(&ListQuery::default());
    assert_eq!(all.total, 4);
    let times: Vec<i64> = all
        .items
        .iter()
        .map(|s| s.last_activity_ms.unwrap_or(0))
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    let page = cached.list(&ListQuery {
        offset: 1,
        limit: Some(2),
        ..ListQuery::default()
    });
    assert_eq!(page.total, 4);
    assert_eq!(page.items.len(), 2);
    assert_eq!(page.items[0].task_id, all.items[1].task_id);
    let roots = cached.list(&ListQuery {
        roots_only: true,
        ..ListQuery::default()
    });
    assert_eq!(roots.total, 1);
    let other_ws = cached.list(&ListQuery {
        workspace: Some("/elsewhere".into()),
        ..ListQuery::default()
    });
    assert_eq!(other_ws.total, 0);
    let ws = cached.list(&ListQuery {
        workspace: Some("/HOME/dev/projets/meteo-cli/".into()),
        ..ListQuery::default()
    });
    assert_eq!(ws.total, 4);
    // A bare folder name names the workspace whose last folder it is.
    let by_name = |name: &str| {
        cached
            .list(&ListQuery {
                workspace: Some(name.into()),
                ..ListQuery::default()
            })
            .total
    };
    assert_eq!(by_name("Meteo-CLI"), 4);
    assert_eq!(by_name("projets"), 0);
    // A mode names the tasks of that mode, in any case.
    let by_mode = |mode: &str| {
        cached
            .list(&ListQuery {
                mode: Some(mode.into()),
                ..ListQuery::default()
            })
            .total
    };
    let first_mode = all.items[0].metadata.mode.clone().expect("a mode");
    let of_first = all
        .items
        .iter()
        .filter(|s| s.metadata.mode.as_deref() == Some(first_mode.as_str()))
        .count();
    assert!(of_first >= 1);
    assert_eq!(by_mode(&first_mode.to_uppercase()), of_first);
    assert_eq!(by_mode("no-such-mode"), 0);
    every_sort_key_in_both_orders(&cached);
    // The bulk transfer is one JSON array of every header.
    let json: serde_json::Value =
        serde_json::from_slice(&cached.headers_json(Default::default()).expect("json"))
            .expect("parse");
    assert_eq!(json.as_array().map(Vec::len), Some(4));
}

#[test]
fn one_changed_task_is_parsed_alone_and_appended_to_the_cache() {
    let (_d, tasks, cache_root, ids) = setup(40);
    let mut store = open(&tasks, Some(&cache_root));
    let cache_file = cache::cache_file_for(&cache_root, &tasks);
    let before = fs::metadata(&cache_file).expect("cache").len();
    // Nothing changed: nothing done.
    let r = store.refresh().expect("refresh");
    assert_eq!(
        (r.changed, r.added, r.removed, r.cache.as_str()),
        (0, 0, 0, "none")
    );
    // One task's UI file rewritten with a new first message.
    let ui = tasks.join(&ids[3]).join("ui_messages.json");
    let ui = if ui.exists() {
        ui
    } else {
        tasks.join(&ids[3]).join("claude_messages.json")
    };
    let text = fs::read_to_string(&ui).expect("ui");
    let mut msgs: Vec<serde_json::Value> = serde_json::from_str(&text).expect("json");
    msgs[0]["text"] = serde_json::Value::String("A new task text\n\nwith details".into());
    fs::write(&ui, serde_json::to_vec(&msgs).expect("ser")).expect("write");
    touch(&ui, 5);
    let r = store.refresh().expect("refresh");
    assert_eq!(r.changed, 1);
    assert_eq!(r.cache, "appended");
    let s = store.get(&ids[3]).expect("task");
    assert_eq!(
        s.instruction.as_deref(),
        Some("A new task text\n\nwith details")
    );
    // The cache file grew (appended), it was not rewritten smaller, and a journal exists.
    let after = fs::metadata(&cache_file).expect("cache").len();
    assert!(after > before, "{after} > {before}");
    assert!(cache_file.with_file_name(cache::JOURNAL_FILE).exists());
    // A new handle reads the change from the cache without parsing: the cache is up to date.
    let status = cache::cache_status(&cache_root, &tasks);
    assert_eq!((status.stale, status.missing, status.removed), (0, 0, 0));
    let reopened = open(&tasks, Some(&cache_root));
    assert_eq!(facts(&reopened), facts(&store));
    assert_eq!(facts(&open(&tasks, None)), facts(&store));
    // The refresh's hierarchy metrics were kept beside the journal: the new handle took them as
    // they are (the same pass, to its elapsed time) instead of running a pass of its own.
    let metrics = |s: &TaskStore| serde_json::to_value(s.metrics()).expect("metrics");
    assert_eq!(metrics(&reopened), metrics(&store));
    assert_eq!(reopened.metrics().tasks, 40);
    // Without the note, an open runs the pass: same links and counts, its own timing.
    let note = cache_file.with_file_name(cache::HIERARCHY_NOTE_FILE);
    assert!(note.exists());
    fs::remove_file(&note).expect("remove note");
    let relinked = open(&tasks, Some(&cache_root));
    assert_eq!(facts(&relinked), facts(&store));
    assert_eq!(
        (relinked.metrics().tasks, relinked.metrics().roots),
        (store.metrics().tasks, store.metrics().roots)
    );
}

#[test]
fn added_and_removed_tasks_and_a_full_rebuild_by_another_process() {
    let (_d, tasks, cache_root, ids) = setup(20);
    let mut store = open(&tasks, Some(&cache_root));
    fs::remove_dir_all(tasks.join(&ids[0])).expect("rm");
    common::copy_dir(&tasks.join(&ids[1]), &tasks.join("t99999"));
    let r = store.refresh().expect("refresh");
    assert_eq!((r.added, r.removed), (1, 1));
    assert!(store.get(&ids[0]).is_err());
    assert!(store.get("t99999").is_ok());
    assert_eq!(facts(&open(&tasks, Some(&cache_root))), facts(&store));
    // Another process rebuilds the cache (a new generation): the next change is written whole.
    cache::build_skeleton_cache(
        std::slice::from_ref(&tasks),
        &cache::BuildOptions {
            force_rebuild: true,
            ..cache::BuildOptions::new(&cache_root)
        },
    )
    .expect("rebuild");
    fs::remove_dir_all(tasks.join(&ids[2])).expect("rm");
    let r = store.refresh().expect("refresh");
    assert_eq!(r.removed, 1);
    assert_eq!(r.cache, "rewritten");
    assert_eq!(facts(&open(&tasks, Some(&cache_root))), facts(&store));
}

#[test]
fn a_journal_cut_short_by_a_crash_ends_where_it_breaks() {
    let (_d, tasks, cache_root, ids) = setup(10);
    let mut store = open(&tasks, Some(&cache_root));
    fs::remove_dir_all(tasks.join(&ids[4])).expect("rm");
    store.refresh().expect("refresh");
    let journal = cache::cache_file_for(&cache_root, &tasks).with_file_name(cache::JOURNAL_FILE);
    let mut text = fs::read_to_string(&journal).expect("journal");
    text.push_str("{\"gen\":1,\"id\":\"t00005\",\"removed\":tr");
    fs::write(&journal, text).expect("write");
    // The complete line applies; the cut one is ignored (t00005 is still there).
    let reopened = open(&tasks, Some(&cache_root));
    assert!(reopened.get(&ids[4]).is_err());
    assert!(reopened.get(&ids[5]).is_ok());
    assert_eq!(facts(&reopened), facts(&store));
}

#[test]
fn a_file_or_an_empty_path_is_refused_with_what_it_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("f.json");
    fs::write(&file, "{}").expect("write");
    for (p, words) in [
        (file.as_path(), "a file"),
        (Path::new(""), "no tasks folder"),
    ] {
        let err = TaskStore::open(
            &HostEnv::current(),
            &OpenOptions {
                tasks_dirs: vec![p.to_path_buf()],
                ..OpenOptions::default()
            },
        )
        .err()
        .expect("refused");
        assert!(err.to_string().contains(words), "{err}");
    }
}

#[test]
fn two_stores_open_as_one_in_id_order_and_the_newer_copy_of_a_shared_id_is_shown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (first, second) = (
        dir.path().join("a").join("tasks"),
        dir.path().join("b").join("tasks"),
    );
    make_tasks(&first, 4);
    // t00000..t00006: the first four are the first store's ids too (the same conversations);
    // t00007 has no task files.
    make_tasks(&second, 7);
    fs::create_dir_all(second.join("t00007")).expect("mkdir");
    // The same conversation, copied at different times: the later files are the copy shown.
    for (i, id) in ["t00000", "t00001", "t00002", "t00003"].iter().enumerate() {
        let (newer, older) = if i < 2 {
            (&first, &second)
        } else {
            (&second, &first)
        };
        common::age(&newer.join(id), 600, 600);
        common::age(&older.join(id), 7200, 7200);
    }
    let cache_root = dir.path().join("cache");
    // Without a cache, then from a cache built by the first open and read back by the second.
    for cache in [None, Some(&cache_root), Some(&cache_root)] {
        let store = TaskStore::open(
            &HostEnv::current(),
            &OpenOptions {
                tasks_dirs: vec![first.clone(), second.clone()],
                cache_root: cache.cloned(),
                ..OpenOptions::default()
            },
        )
        .expect("open");
        let ids: Vec<&str> = store
            .skeletons()
            .iter()
            .map(|s| s.task_id.as_str())
            .collect();
        assert_eq!(
            ids,
            ["t00000", "t00001", "t00002", "t00003", "t00004", "t00005", "t00006"]
        );
        for (i, id) in ids.iter().enumerate() {
            let (home, other) = if i < 2 {
                (&first, Some(&second))
            } else {
                (&second, (i < 4).then_some(&first))
            };
            assert_eq!(store.task_dir(id), Some(home.join(id)), "{id}");
            assert_eq!(store.lookup(id), Lookup::Found(i));
            let named: Vec<(String, bool)> = (store.also_in(id).into_iter())
                .map(|a| (a.path, a.differs))
                .collect();
            let want: Vec<(String, bool)> = other
                .map(|o| (o.join(id).display().to_string(), false))
                .into_iter()
                .collect();
            assert_eq!(named, want, "{id}");
        }
        assert!(matches!(store.header("t00007"), Some(Err(d)) if !d.is_empty()));
        assert_eq!(store.stores()[0].tasks, 4);
        assert_eq!(store.stores()[1].tasks, 8);
    }
}

#[test]
fn an_open_reports_progress_and_can_be_cancelled() {
    use roo_store::task_store::Watch;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (_keep, tasks, cache_root, ids) = setup(12);
    for cache in [None, Some(cache_root.clone())] {
        let seen = AtomicUsize::new(0);
        let last = AtomicUsize::new(0);
        let progress = |done: usize, total: usize| {
            seen.fetch_add(1, Ordering::Relaxed);
            last.fetch_max(done, Ordering::Relaxed);
            assert_eq!(total, ids.len());
        };
        let opts = OpenOptions {
            tasks_dirs: vec![tasks.clone()],
            cache_root: cache.clone(),
            ignore_stored_links: false,
            every_file: false,
        };
        let store = TaskStore::open_with(
            &HostEnv::current(),
            &opts,
            Watch {
                on_progress: Some(&progress),
                cancel: None,
            },
        )
        .expect("open");
        assert_eq!(store.skeletons().len(), ids.len());
        assert!(seen.load(Ordering::Relaxed) > 0, "cache {cache:?}");
        assert_eq!(last.load(Ordering::Relaxed), ids.len());
        // A header by exact id; a prefix is not an id here.
        assert!(matches!(store.header(&ids[0]), Some(Ok(s)) if s.task_id == ids[0]));
        assert!(store.header(&ids[0][..3]).is_none());
    }
    // Cancelled before it starts: no handle.
    let stop = AtomicBool::new(true);
    let r = TaskStore::open_with(
        &HostEnv::current(),
        &OpenOptions {
            tasks_dirs: vec![tasks.clone()],
            cache_root: Some(cache_root.with_file_name("other")),
            ignore_stored_links: false,
            every_file: false,
        },
        Watch {
            on_progress: None,
            cancel: Some(&stop),
        },
    );
    assert!(matches!(r, Err(roo_store::StoreError::Aborted)));
}

/// The source file a task of `make_tasks` has.
fn source_file(tasks: &Path, id: &str) -> PathBuf {
    [
        "ui_messages.json",
        "claude_messages.json",
        "api_conversation_history.json",
    ]
    .iter()
    .map(|n| tasks.join(id).join(n))
    .find(|p| p.exists())
    .expect("a source file")
}

#[test]
fn changed_since_names_the_tasks_reparsed_in_place_until_the_layout_moves() {
    let (_tmp, tasks, _cache, ids) = setup(12);
    let mut store = open(&tasks, None);
    let (layout, start) = (store.layout(), store.revision());
    assert_eq!(store.changed_since(start), Some(Vec::new()));
    let position = |s: &TaskStore, id: &str| {
        s.skeletons()
            .iter()
            .position(|k| k.task_id == id)
            .expect("position")
    };
    touch(&source_file(&tasks, &ids[3]), 5);
    store.refresh().expect("refresh");
    touch(&source_file(&tasks, &ids[7]), 5);
    store.refresh().expect("refresh");
    let mut both = vec![position(&store, &ids[3]), position(&store, &ids[7])];
    both.sort_unstable();
    assert_eq!(store.layout(), layout);
    assert_eq!(store.changed_since(start), Some(both));
    assert_eq!(
        store.changed_since(start + 1),
        Some(vec![position(&store, &ids[7])])
    );
    // Nothing changed: no new revision.
    let now = store.revision();
    store.refresh().expect("refresh");
    assert_eq!(store.revision(), now);
    // A task removed moves the layout: the old revisions are no longer answered.
    fs::remove_dir_all(tasks.join(&ids[0])).expect("rm");
    store.refresh().expect("refresh");
    assert_ne!(store.layout(), layout);
    assert_eq!(store.changed_since(start), None);
    assert_eq!(store.changed_since(store.revision()), Some(Vec::new()));
    // Only the last refreshes are remembered.
    let old = store.revision();
    for round in 0..70 {
        touch(&source_file(&tasks, &ids[5]), 10 + round);
        store.refresh().expect("refresh");
    }
    assert_eq!(store.changed_since(old), None);
    assert_eq!(
        store.changed_since(store.revision() - 1),
        Some(vec![position(&store, &ids[5])])
    );
}
