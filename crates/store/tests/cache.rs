//! The incremental skeleton cache: what is parsed again, removal, concurrent builders, versions.

mod common;

use roo_store::cache::{
    build_skeleton_cache, cache_file_for, cache_status, load_skeletons, BuildOptions,
};
use std::fs;
use std::path::{Path, PathBuf};

fn build(tasks: &Path, cache: &Path) -> roo_store::cache::StoreBuild {
    let r = build_skeleton_cache(&[tasks.to_path_buf()], &BuildOptions::new(cache)).expect("build");
    r.stores.into_iter().next().expect("one store")
}

fn setup(n: usize) -> (tempfile::TempDir, PathBuf, PathBuf, Vec<String>) {
    common::temp_store(n)
}

#[test]
fn cold_then_warm_then_one_touched() {
    let (_tmp, tasks, cache, ids) = setup(12);
    let cold = build(&tasks, &cache);
    assert_eq!(
        (cold.built, cold.reused, cold.failed, cold.removed),
        (12, 0, 0, 0)
    );
    assert!(cold.written);

    let warm = build(&tasks, &cache);
    assert_eq!((warm.built, warm.reused), (0, 12));
    assert!(!warm.written, "nothing changed, nothing written");

    // Touch one file of one task: only that task is parsed again.
    common::touch(
        &tasks.join(&ids[3]).join("api_conversation_history.json"),
        5,
    );
    let after = build(&tasks, &cache);
    assert_eq!((after.built, after.reused), (1, 11));
    assert_eq!(after.parsed, vec![ids[3].clone()]);

    // A file that appears changes the signature too.
    fs::write(
        tasks.join(&ids[5]).join("task_metadata.json"),
        r#"{"files_in_context":[]}"#,
    )
    .expect("write");
    let after = build(&tasks, &cache);
    assert_eq!(after.parsed, vec![ids[5].clone()]);

    let loaded = load_skeletons(&cache, Some(std::slice::from_ref(&tasks)), None);
    assert_eq!(loaded.skeletons.len(), 12);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    // Served skeletons equal fresh ones (parents apart, which the hierarchy sets).
    let fresh = roo_state::analyze_task(
        &ids[3],
        &tasks.join(&ids[3]),
        &roo_state::AnalyzeOptions {
            include_sequence: false,
            ..Default::default()
        },
    )
    .expect("analyse");
    let mut cached = loaded
        .skeletons
        .iter()
        .find(|s| s.task_id == ids[3])
        .expect("cached")
        .clone();
    cached.parent_task_id = fresh.parent_task_id.clone();
    cached.root_task_id = fresh.root_task_id.clone();
    cached.parent_evidence = None;
    assert_eq!(cached, fresh);
}

#[test]
fn deleted_task_is_removed_and_new_task_added() {
    let (_tmp, tasks, cache, ids) = setup(6);
    build(&tasks, &cache);
    fs::remove_dir_all(tasks.join(&ids[2])).expect("rm");
    common::copy_dir(&tasks.join(&ids[0]), &tasks.join("t-new"));
    let r = build(&tasks, &cache);
    assert_eq!((r.built, r.reused, r.removed), (1, 5, 1));
    let loaded = load_skeletons(&cache, Some(std::slice::from_ref(&tasks)), None);
    let got: Vec<&str> = loaded
        .skeletons
        .iter()
        .map(|s| s.task_id.as_str())
        .collect();
    assert!(!got.contains(&ids[2].as_str()));
    assert!(got.contains(&"t-new"));
    assert_eq!(got.len(), 6);
    let st = cache_status(&cache, &tasks);
    assert_eq!((st.stale, st.missing, st.removed), (0, 0, 0));
}

#[test]
fn a_task_without_files_fails_once_then_is_reused() {
    let (_tmp, tasks, cache, _ids) = setup(3);
    fs::create_dir_all(tasks.join("empty-task")).expect("mkdir");
    let cold = build(&tasks, &cache);
    assert_eq!((cold.built, cold.failed), (3, 1));
    let warm = build(&tasks, &cache);
    assert_eq!((warm.built, warm.failed, warm.reused), (0, 0, 4));
}

#[test]
fn older_format_or_engine_version_is_rebuilt() {
    let (_tmp, tasks, cache, _ids) = setup(4);
    build(&tasks, &cache);
    let file = cache_file_for(&cache, &tasks);
    let text = fs::read_to_string(&file).expect("read");
    let (header, rest) = text.split_once('\n').expect("header line");
    let mut h: serde_json::Value = serde_json::from_str(header).expect("json");
    h["formatVersion"] = serde_json::json!(0);
    h["engineVersion"] = serde_json::json!("0.0.1");
    fs::write(&file, format!("{h}\n{rest}")).expect("write");
    let st = cache_status(&cache, &tasks);
    assert!(
        st.unusable.as_deref().is_some_and(|u| u.contains("0.0.1")),
        "{st:?}"
    );
    let r = build_skeleton_cache(std::slice::from_ref(&tasks), &BuildOptions::new(&cache))
        .expect("build");
    assert_eq!((r.built, r.reused), (4, 0));
    assert!(r.diagnostics.iter().any(|d| d.message.contains("rebuilt")));
    assert_eq!(build(&tasks, &cache).reused, 4);

    // A damaged file is rebuilt too.
    fs::write(&file, b"not a cache").expect("write");
    assert_eq!(build(&tasks, &cache).built, 4);
}

#[test]
fn an_entry_pointing_outside_the_data_is_parsed_again() {
    let (_tmp, tasks, cache, ids) = setup(5);
    build(&tasks, &cache);
    let file = cache_file_for(&cache, &tasks);
    let text = fs::read_to_string(&file).expect("read");
    let mut lines = text.splitn(3, '\n');
    let (header, entries, data) = (
        lines.next().expect("h"),
        lines.next().expect("e"),
        lines.next().expect("d"),
    );
    let mut e: serde_json::Value = serde_json::from_str(entries).expect("json");
    e[2]["off"] = serde_json::json!(u64::MAX);
    e[3]["len"] = serde_json::json!(u64::MAX - 3);
    // The entry list's checksum made to match, so that the entries' spans are what is checked.
    let e = e.to_string();
    let mut h: serde_json::Value = serde_json::from_str(header).expect("header");
    h["entriesHash"] = serde_json::json!(xxhash_rust::xxh3::xxh3_64(e.as_bytes()));
    fs::write(&file, format!("{h}\n{e}\n{data}")).expect("write");
    // Serving skips them and says so; building parses them again.
    let loaded = load_skeletons(&cache, Some(std::slice::from_ref(&tasks)), None);
    assert_eq!(loaded.skeletons.len(), 3);
    assert_eq!(loaded.diagnostics.len(), 1);
    common::touch(
        &tasks.join(&ids[0]).join("api_conversation_history.json"),
        2,
    );
    let r = build(&tasks, &cache);
    assert_eq!((r.built, r.reused), (3, 2), "{r:?}");
    assert_eq!(load_skeletons(&cache, None, None).skeletons.len(), 5);
}

#[test]
fn force_rebuild_and_workspace_filter() {
    let (_tmp, tasks, cache, ids) = setup(10);
    build(&tasks, &cache);
    let r = build_skeleton_cache(
        std::slice::from_ref(&tasks),
        &BuildOptions {
            force_rebuild: true,
            ..BuildOptions::new(&cache)
        },
    )
    .expect("build");
    assert_eq!(r.built, 10);

    let all = load_skeletons(&cache, None, None).skeletons;
    let (ws, n_ws) = {
        let mut counts = std::collections::BTreeMap::new();
        for s in &all {
            if let Some(w) = &s.metadata.workspace {
                *counts.entry(w.clone()).or_insert(0) += 1;
            }
        }
        counts
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .expect("a workspace")
    };
    let served = load_skeletons(&cache, None, Some(&ws.replace('/', "\\").to_uppercase()));
    assert_eq!(served.skeletons.len(), n_ws, "normalised comparison");

    // Touch every task; with a filter only that workspace's tasks are parsed again.
    for id in &ids {
        for f in roo_store::cache::SOURCE_FILES {
            let p = tasks.join(id).join(f);
            if p.exists() {
                common::touch(&p, 3);
            }
        }
    }
    let r = build_skeleton_cache(
        std::slice::from_ref(&tasks),
        &BuildOptions {
            workspace_filter: Some(ws.clone()),
            ..BuildOptions::new(&cache)
        },
    )
    .expect("build");
    let touched_total = r.built + r.skipped + r.reused;
    assert_eq!(touched_total, 10);
    assert!(r.skipped > 0 && r.built >= n_ws as u32, "{r:?}");
    // Skipped entries stay stale until a build without filter.
    assert!(cache_status(&cache, &tasks).stale > 0);
    let r = build(&tasks, &cache);
    assert!(r.built > 0);
    assert_eq!(cache_status(&cache, &tasks).stale, 0);
}

#[test]
fn cache_dir_inside_the_extension_folder_is_refused() {
    // A store in the extension's own storage folder: that whole folder is the extension's.
    let tmp = tempfile::tempdir().expect("tempdir");
    let ext = tmp
        .path()
        .join("globalStorage")
        .join("rooveterinaryinc.roo-cline");
    let tasks = ext.join("tasks");
    common::make_tasks(&tasks, 1);
    for inside in [
        ext.join("our-cache"),
        tasks.join("cache"),
        ext.join("settings/c"),
    ] {
        let err = build_skeleton_cache(std::slice::from_ref(&tasks), &BuildOptions::new(&inside))
            .expect_err("refused");
        assert_eq!(err.code(), "INVALID_CACHE_DIR");
        assert!(
            err.to_string().contains("a folder the extension owns"),
            "{err}"
        );
        assert!(!inside.exists());
    }
}

#[test]
fn a_store_directly_in_the_home_folder_takes_the_default_cache() {
    // A custom storage path of `~`: tasks/ sits in the home folder, beside the platform cache.
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let tasks = home.join("tasks");
    common::make_tasks(&tasks, 2);
    let cache = home.join(".cache").join("roo-state-core");
    let r = build(&tasks, &cache);
    assert_eq!(r.built, 2);
    // The extension's own folders beside tasks/ stay refused.
    for inside in [
        home.join("settings").join("c"),
        home.join("tasks").join("c"),
    ] {
        let err = build_skeleton_cache(std::slice::from_ref(&tasks), &BuildOptions::new(&inside))
            .expect_err("refused");
        assert_eq!(err.code(), "INVALID_CACHE_DIR");
    }
}

#[test]
fn two_concurrent_builders_leave_a_consistent_cache() {
    let (_tmp, tasks, cache, ids) = setup(40);
    let run = || {
        let tasks = tasks.clone();
        let cache = cache.clone();
        std::thread::spawn(move || {
            build_skeleton_cache(&[tasks], &BuildOptions::new(&cache)).expect("build")
        })
    };
    let (a, b) = (run(), run());
    let (a, b) = (a.join().expect("a"), b.join().expect("b"));
    // One built everything, the other found it done.
    let built = [a.built, b.built];
    assert!(built.contains(&40) && built.contains(&0), "{built:?}");
    let loaded = load_skeletons(&cache, Some(std::slice::from_ref(&tasks)), None);
    assert_eq!(loaded.skeletons.len(), 40);
    assert!(loaded.diagnostics.is_empty());

    // Again while tasks change under them.
    for id in ids.iter().take(10) {
        common::touch(&tasks.join(id).join("api_conversation_history.json"), 7);
    }
    let (a, b) = (run(), run());
    let (a, b) = (a.join().expect("a"), b.join().expect("b"));
    assert_eq!(a.built + b.built, 10);
    let st = cache_status(&cache, &tasks);
    assert_eq!(
        (st.entries, st.stale, st.missing, st.removed),
        (40, 0, 0, 0)
    );
}

/// Child side of the two-process test: builds when `ROO_STORE_CHILD_BUILD` names a tasks folder.
#[test]
fn child_process_builder() {
    let (Ok(tasks), Ok(cache)) = (
        std::env::var("ROO_STORE_CHILD_BUILD"),
        std::env::var("ROO_STORE_CHILD_CACHE"),
    ) else {
        return;
    };
    let r =
        build_skeleton_cache(&[PathBuf::from(tasks)], &BuildOptions::new(cache)).expect("build");
    println!("CHILD-BUILT {}", r.built);
}

#[test]
fn two_processes_leave_a_consistent_cache() {
    let (_tmp, tasks, cache, _ids) = setup(60);
    let exe = std::env::current_exe().expect("exe");
    let spawn = || {
        std::process::Command::new(&exe)
            .args([
                "--exact",
                "child_process_builder",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("ROO_STORE_CHILD_BUILD", &tasks)
            .env("ROO_STORE_CHILD_CACHE", &cache)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let (a, b) = (spawn(), spawn());
    let outs = [
        a.wait_with_output().expect("a"),
        b.wait_with_output().expect("b"),
    ];
    let mut built = Vec::new();
    for o in &outs {
        assert!(o.status.success());
        let text = String::from_utf8_lossy(&o.stdout);
        let n: u32 = text
            .lines()
            .find_map(|l| l.split("CHILD-BUILT ").nth(1))
            .and_then(|n| n.trim().parse().ok())
            .expect("child output");
        built.push(n);
    }
    built.sort();
    assert_eq!(built, vec![0, 60]);
    let loaded = load_skeletons(&cache, Some(std::slice::from_ref(&tasks)), None);
    assert_eq!(loaded.skeletons.len(), 60);
    assert!(loaded.diagnostics.is_empty());
}

#[test]
fn load_without_cache_says_so() {
    let (_tmp, tasks, cache, _ids) = setup(1);
    let loaded = load_skeletons(&cache, Some(&[tasks]), None);
    assert!(loaded.skeletons.is_empty());
    assert_eq!(loaded.diagnostics.len(), 1);
    assert!(loaded.diagnostics[0].message.contains("buildSkeletonCache"));
}

#[test]
fn hierarchy_links_are_served() {
    // The v3.50 fixture holds a parent with a delegated child.
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("ext").join("tasks");
    common::copy_dir(&common::fixture_tasks("history-item-v3.50"), &tasks);
    let cache = tmp.path().join("cache");
    let r = build(&tasks, &cache);
    assert!(
        r.hierarchy
            .as_ref()
            .is_some_and(|m| m.links_by_source.history_item > 0),
        "{r:?}"
    );
    let loaded = load_skeletons(&cache, None, None);
    assert!(loaded
        .skeletons
        .iter()
        .any(|s| s.parent_task_id.is_some() && s.parent_evidence.is_some()));
}
