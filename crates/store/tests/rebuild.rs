//! rebuildRooStateFromTasks on the fixtures, with regenerateExtensionIndex.

mod common;

use roo_formats::diag::Severity;
use roo_store::rebuild::rebuild_from_tasks;
use std::fs;
use std::path::PathBuf;

/// The key order of a freshly built HistoryItem, then the fields later upserts append.
const KEY_ORDER: [&str; 21] = [
    "id",
    "rootTaskId",
    "parentTaskId",
    "number",
    "ts",
    "task",
    "tokensIn",
    "tokensOut",
    "cacheWrites",
    "cacheReads",
    "totalCost",
    "size",
    "workspace",
    "mode",
    "apiConfigName",
    "status",
    "delegatedToId",
    "awaitingChildId",
    "completedByChildId",
    "completionResultSummary",
    "childIds",
];

fn store() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("ext").join("tasks");
    for s in common::FIXTURE_STORES {
        common::copy_dir(&common::fixture_tasks(s), &tasks);
    }
    // Some history items are lost; the index too.
    let _ = fs::remove_file(tasks.join("_index.json"));
    (tmp, tasks)
}

use common::rebuild_opts as opts;

fn check_extension_format(bytes: &[u8]) {
    let text = std::str::from_utf8(bytes).expect("utf-8");
    assert!(!text.starts_with('\u{feff}') && !text.ends_with('\n'));
    let v: serde_json::Value = serde_json::from_str(text).expect("json");
    // Compact, keys in order: what JSON.stringify writes for this value.
    assert_eq!(roo_js::to_json_string(&v).expect("js"), text);
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    let mut last = 0;
    for k in keys {
        let pos = KEY_ORDER
            .iter()
            .position(|o| o == k)
            .unwrap_or_else(|| panic!("unexpected key {k}"));
        assert!(pos >= last, "key {k} out of order in {text}");
        last = pos;
    }
    for k in ["number", "ts", "tokensIn", "tokensOut", "totalCost", "size"] {
        assert!(v[k].is_number(), "{k} in {text}");
    }
    // JavaScript number text: no `1.0`.
    assert!(!text.contains(".0,") && !text.contains(".0}"), "{text}");
}

#[test]
fn regenerates_index_and_missing_history_items_in_the_extension_format() {
    let (tmp, tasks) = store();
    let cache = tmp.path().join("cache");
    let before = common::snapshot(&tasks);
    let existing: Vec<(String, Vec<u8>)> = before
        .iter()
        .filter(|(p, _)| p.ends_with("/history_item.json"))
        .filter(|(p, _)| {
            let r = roo_formats::read_history_item(&tasks.join(p));
            r.value.is_some() && r.diagnostics.iter().all(|d| d.severity < Severity::Error)
        })
        .cloned()
        .collect();
    assert!(!existing.is_empty());

    // Dry run: a plan, no write (not even our cache).
    let dry = rebuild_from_tasks(&opts(&tasks, &cache, true)).expect("dry");
    let plan = dry.extension_index.as_ref().expect("plan");
    assert!(!plan.history_items_created.is_empty());
    assert!(plan.written.is_empty() && plan.backups.is_empty());
    assert_eq!(common::snapshot(&tasks), before);
    assert!(!cache.exists());
    assert!(dry.tasks > 10 && dry.skeletons > 0 && !dry.workspaces.is_empty());

    // Real run.
    let real = rebuild_from_tasks(&opts(&tasks, &cache, false)).expect("rebuild");
    assert!(real.cache_rebuilt);
    assert_eq!(real.cache.as_ref().map(|c| c.tasks), Some(real.tasks));
    assert_eq!(
        real.roots
            + real
                .hierarchy
                .as_ref()
                .map_or(0, |m| m.links_by_source.history_item
                    + m.links_by_source.child_ids
                    + m.links_by_source.task_metadata
                    + m.links_by_source.instruction_prefix),
        real.skeletons
    );
    let ix = real.extension_index.as_ref().expect("index");
    assert_eq!(ix.history_items_created, plan.history_items_created);
    assert_eq!(ix.entries, real.skeletons);

    // Existing history items untouched.
    for (rel, bytes) in &existing {
        assert_eq!(
            &fs::read(tasks.join(rel)).expect("read"),
            bytes,
            "{rel} was rewritten"
        );
    }
    // New ones: accepted by the typed reader, in the extension's format.
    for id in &ix.history_items_created {
        let path = tasks.join(id).join("history_item.json");
        let read = roo_formats::read_history_item(&path);
        let item = read.value.expect("a history item");
        assert_eq!(&item.id, id);
        assert!(
            read.diagnostics
                .iter()
                .all(|d| d.severity < Severity::Warning),
            "{:?}",
            read.diagnostics
        );
        check_extension_format(&fs::read(&path).expect("read"));
    }
    // The index: version 1, every task, sorted by ts descending.
    let index_path = tasks.join("_index.json");
    let read = roo_formats::read_history_index(&index_path);
    assert!(
        read.diagnostics
            .iter()
            .all(|d| d.severity < Severity::Warning),
        "{:?}",
        read.diagnostics
    );
    let index = read.value.expect("index");
    assert_eq!(index.version, Some(1));
    assert_eq!(index.updated_at, Some(1_760_000_000_000));
    assert_eq!(index.entries.len() as u32, real.skeletons);
    let ts: Vec<i64> = index.entries.iter().map(|e| e.ts.unwrap_or(0)).collect();
    assert!(ts.windows(2).all(|w| w[0] >= w[1]));
    let text = fs::read_to_string(&index_path).expect("read");
    assert!(text.starts_with(r#"{"version":1,"updatedAt":1760000000000,"entries":[{"#));
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(roo_js::to_json_string(&v).expect("js"), text);
    for e in v["entries"].as_array().expect("entries") {
        if ix.history_items_created.iter().any(|id| e["id"] == **id) {
            check_extension_format(roo_js::to_json_string(e).expect("js").as_bytes());
        }
    }

    // Again: the old index is backed up, nothing new is created.
    let again = rebuild_from_tasks(&opts(&tasks, &cache, false)).expect("again");
    let ix2 = again.extension_index.expect("index");
    assert!(ix2.history_items_created.is_empty());
    assert_eq!(ix2.backups.len(), 1);
    assert!(ix2.backups[0].contains("_index.json.bak-"));
    assert_eq!(fs::read_to_string(&ix2.backups[0]).expect("backup"), text);
    // The backup is not taken for a task.
    let (dirs, _) = roo_state::scan::list_task_dirs(&tasks).expect("list");
    assert_eq!(dirs.len() as u32, again.tasks);
}

#[test]
fn a_damaged_history_item_is_backed_up_and_replaced() {
    let (tmp, tasks) = store();
    let cache = tmp.path().join("cache");
    let victim = fs::read_dir(&tasks)
        .expect("ls")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("history_item.json").is_file())
        .expect("a task with a history item");
    fs::write(victim.join("history_item.json"), b"{\"id\": ").expect("write");
    let r = rebuild_from_tasks(&opts(&tasks, &cache, false)).expect("rebuild");
    let ix = r.extension_index.expect("index");
    let id = victim
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(
        ix.history_items_replaced.contains(&id),
        "{:?}",
        ix.history_items_replaced
    );
    let backup = ix
        .backups
        .iter()
        .find(|b| b.contains(&id) && b.contains("history_item.json.bak-"))
        .expect("backup");
    assert_eq!(fs::read(backup).expect("read"), b"{\"id\": ");
    assert!(
        roo_formats::read_history_item(&victim.join("history_item.json"))
            .value
            .is_some()
    );
}

#[test]
fn refuses_while_the_extension_holds_its_lock() {
    let (tmp, tasks) = store();
    fs::create_dir_all(tasks.join("_index.json.lock")).expect("mkdir");
    let mut o = opts(&tasks, &tmp.path().join("cache"), false);
    o.now_ms = roo_js::now_ms();
    let err = rebuild_from_tasks(&o).expect_err("busy");
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert!(err.to_string().contains("close the editor"));
}

#[test]
fn a_zoo_store_gets_history_items_under_their_locks_and_no_index() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp
        .path()
        .join("globalStorage")
        .join("zoocodeorganization.zoo-code")
        .join("tasks");
    for s in common::FIXTURE_STORES {
        common::copy_dir(&common::fixture_tasks(s), &tasks);
    }
    // An upgraded machine keeps the index Roo Code wrote; Zoo Code reads it no more.
    let stale = r#"{"version":1,"updatedAt":1,"entries":[]}"#;
    fs::write(tasks.join("_index.json"), stale).expect("stale index");
    let cache = tmp.path().join("cache");
    // A writer that is gone left a lock on one task's file: it is taken over.
    let (dirs, _) = roo_state::scan::list_task_dirs(&tasks).expect("list");
    let missing: Vec<&PathBuf> = dirs
        .iter()
        .map(|(_, p)| p)
        .filter(|p| !p.join("history_item.json").exists())
        .collect();
    assert!(missing.len() > 2, "fixtures without history items");
    let left = missing[0].join("history_item.json.lock");
    fs::create_dir(&left).expect("lock");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
    fs::File::open(&left)
        .and_then(|f| f.set_modified(old))
        .expect("age");

    let r = rebuild_from_tasks(&opts(&tasks, &cache, false)).expect("rebuild");
    let ix = r.extension_index.expect("report");
    let locked_id = missing[0]
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    assert!(ix.history_items_created.contains(&locked_id));
    assert!(ix.history_items_created.len() > 2);
    for id in &ix.history_items_created {
        assert!(missing.iter().any(|p| p.ends_with(id)), "{id} had a record");
    }
    assert!(ix
        .index_not_written
        .as_deref()
        .is_some_and(|w| w.contains("Zoo Code")));
    assert!(ix.written.iter().all(|w| w.ends_with("history_item.json")));
    // Only the damaged records the fixtures hold are backed up; the index is not touched.
    assert_eq!(ix.backups.len(), ix.history_items_replaced.len());
    assert!(ix
        .backups
        .iter()
        .all(|b| b.contains("history_item.json.bak-")));
    assert_eq!(
        fs::read_to_string(tasks.join("_index.json")).expect("index"),
        stale
    );
    for id in &ix.history_items_created {
        let file = tasks.join(id).join("history_item.json");
        check_extension_format(&fs::read(&file).expect("written"));
        assert!(!tasks.join(id).join("history_item.json.lock").exists());
    }
    // Run again: every record now exists and is kept as it is.
    let again = rebuild_from_tasks(&opts(&tasks, &cache, false)).expect("again");
    let ix2 = again.extension_index.expect("report");
    assert!(ix2.history_items_created.is_empty() && ix2.written.is_empty());
}
