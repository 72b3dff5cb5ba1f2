//! Links out of a store (`roo_store::confine`): a task folder linked to a folder elsewhere, a task
//! file linked to a file elsewhere. No reader shows what they hold (the handle names them in its
//! diagnostics, from the folders and from the cache alike), and no writer follows them: the
//! cleanup leaves the linked folder's checkpoints, the rebuild writes no history item through
//! the link and replaces no linked history item; everything outside the store stays byte for
//! byte as it was.
#![cfg(unix)]

mod common;

use roo_store::cleanup::{cleanup_obsolete_checkpoints, CleanupOptions};
use roo_store::rebuild::rebuild_from_tasks;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

const CANARY: &str = "zanzibar-outside-the-store";

/// A folder outside the store: a task folder holding the canary and checkpoint data, and a UI
/// record and a history item of its own.
fn elsewhere(root: &Path) -> std::path::PathBuf {
    let out = root.join("elsewhere");
    let t1 = out.join("t1");
    fs::create_dir_all(t1.join("checkpoints").join("objects")).expect("mkdir");
    let ui = format!(r#"[{{"ts":1760000000000,"type":"say","say":"text","text":"fix {CANARY}"}}]"#);
    fs::write(t1.join("ui_messages.json"), &ui).expect("write");
    fs::write(t1.join("checkpoints").join("objects").join("pack"), b"pack").expect("write");
    fs::write(out.join("secret-ui.json"), &ui).expect("write");
    fs::write(out.join("history.json"), b"{not json").expect("write");
    out
}

#[test]
fn links_out_of_the_store_are_never_read_or_followed() {
    let (tmp, tasks, cache, ids) = common::temp_store(4);
    let out = elsewhere(tmp.path());
    let before = common::snapshot(&out);
    // A task folder linked out, a UI record linked out, a history item linked out.
    symlink(out.join("t1"), tasks.join("linked-out")).expect("link");
    let ui = tasks.join(&ids[1]).join("ui_messages.json");
    let _ = fs::remove_file(&ui);
    symlink(out.join("secret-ui.json"), &ui).expect("link");
    let item = tasks.join(&ids[2]).join("history_item.json");
    let _ = fs::remove_file(&item);
    symlink(out.join("history.json"), &item).expect("link");
    // A folder linked inside the store is a task as any other.
    symlink(tasks.join(&ids[3]), tasks.join("linked-in")).expect("link");

    for cache_root in [None, Some(cache.as_path()), Some(cache.as_path())] {
        let store = common::open_store(&tasks, cache_root);
        let headers = serde_json::to_string(store.skeletons()).expect("json");
        assert!(!headers.contains(CANARY), "{headers}");
        assert!(store.header("linked-in").is_some_and(|h| h.is_ok()));
        let said = serde_json::to_string(store.diagnostics()).expect("json");
        assert!(
            said.contains("linked-out") && said.contains("outside its store"),
            "{said}"
        );
        assert!(
            said.contains(&ids[1]) && said.contains("secret-ui.json"),
            "{said}"
        );
    }
    // One task read alone, as `show` and the exports read it.
    let opts = roo_state::AnalyzeOptions {
        include_sequence: true,
        ..Default::default()
    };
    let refused = roo_state::analyze_task("linked-out", &tasks.join("linked-out"), &opts);
    let why = format!("{refused:?}");
    assert!(
        refused.is_err() && why.contains("outside its store"),
        "{why}"
    );
    let one = roo_state::analyze_task(&ids[1], &tasks.join(&ids[1]), &opts).expect("skeleton");
    let shown = serde_json::to_string(&one).expect("json");
    assert!(!shown.contains(CANARY), "{shown}");
    assert!(shown.contains("outside its store"), "{shown}");

    // The writers.
    let cleaned = cleanup_obsolete_checkpoints(
        &tasks,
        &CleanupOptions {
            older_than_days: None,
            keep_last: 0,
            dry_run: false,
            ..CleanupOptions::default()
        },
        None,
    )
    .expect("cleanup");
    assert_eq!(cleaned.refused.len(), 1, "{:?}", cleaned.refused);
    assert!(cleaned.refused[0].contains("linked-out"));
    let rebuilt =
        rebuild_from_tasks(&common::rebuild_opts(&tasks, &cache, false)).expect("rebuild");
    let index = rebuilt.extension_index.expect("index");
    assert!(
        index
            .refused
            .iter()
            .any(|r| r.contains("history_item.json")),
        "{:?}",
        index.refused
    );
    assert_eq!(
        common::snapshot(&out),
        before,
        "a file outside the store changed"
    );
    assert!(fs::symlink_metadata(&item).is_ok_and(|m| m.file_type().is_symlink()));
}
