//! diagnose against a fake home with a real SQLite `state.vscdb` made by the test.

mod common;

use roo_store::cache::{build_skeleton_cache, BuildOptions};
use roo_store::diagnose::{diagnose, DiagnoseOptions, Status, Target};
use roo_store::discover::{discover_storage, DiscoverOptions, HOSTS};
use roo_store::{HostEnv, Platform};
use std::fs;
use std::path::Path;

fn make_state_db(path: &Path, history_ids: &[&str]) {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.execute_batch("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        .expect("create");
    let history: Vec<serde_json::Value> = history_ids
        .iter()
        .map(|id| serde_json::json!({"id": id, "ts": 1_750_000_000_000i64, "task": "x", "tokensIn": 1, "tokensOut": 2, "totalCost": 0.1}))
        .collect();
    let main = serde_json::json!({"taskHistory": history, "mode": "code"}).to_string();
    let rows: [(&str, Vec<u8>); 4] = [
        ("RooVeterinaryInc.roo-cline", main.into_bytes()),
        ("rooveterinaryinc.roo-cline.extra", b"{\"a\":1}".to_vec()),
        ("workbench.panel", b"{}".to_vec()),
        ("saoudrizwan.claude-dev", b"{\"taskHistory\":[]}".to_vec()),
    ];
    for (k, v) in rows {
        conn.execute(
            "INSERT INTO ItemTable (key, value) VALUES (?1, ?2)",
            rusqlite::params![k, v],
        )
        .expect("insert");
    }
}

#[test]
fn report_on_a_fake_linux_home_with_state_vscdb() {
    let home = tempfile::tempdir().expect("tmp");
    let global = home.path().join(".config/Code/User/globalStorage");
    let tasks = global.join("rooveterinaryinc.roo-cline/tasks");
    let ids = common::make_tasks(&tasks, 5);
    fs::create_dir_all(tasks.join(&ids[0]).join("checkpoints/.git")).expect("mkdir");
    fs::write(
        tasks.join(&ids[0]).join("checkpoints/.git/packed"),
        vec![0u8; 4096],
    )
    .expect("write");
    fs::write(tasks.join(&ids[1]).join("notes.txt"), "hello").expect("write");
    let db = global.join("state.vscdb");
    make_state_db(&db, &[&ids[0], &ids[1], "gone-task"]);
    let db_before = fs::read(&db).expect("read");

    let env = HostEnv::fake(home.path(), Platform::Linux);
    let found = discover_storage(&env, &DiscoverOptions::default());
    assert_eq!(found.locations.len(), 1);
    assert_eq!(
        found.locations[0].state_db.as_deref(),
        Some(db.display().to_string().as_str())
    );
    let cache = home.path().join(".cache/roo-state-core");
    let target = Target {
        tasks_dir: tasks.clone(),
        host: Some(&HOSTS[0]),
        editor: Some("Code".into()),
        state_db: Some(db.clone()),
    };
    let report = diagnose(std::slice::from_ref(&target), &DiagnoseOptions::new(&cache));
    let l = &report.locations[0];
    assert!(l.exists && l.readable);
    assert_eq!(l.task_count, 5);
    assert_eq!(l.recent_tasks.len(), 5);
    assert!(l.recent_tasks.iter().all(|t| t.ok), "{:#?}", l.recent_tasks);
    assert_eq!(l.sizes.checkpoint_bytes, 4096);
    assert_eq!(l.sizes.other_bytes, 5);
    assert!(l.sizes.conversation_bytes > 0);
    assert_eq!(
        l.sizes.total_bytes,
        l.sizes.conversation_bytes + l.sizes.checkpoint_bytes + l.sizes.other_bytes
    );

    let sdb = l.state_db.as_ref().expect("state db");
    assert!(sdb.readable, "{:?}", sdb.error);
    assert_eq!(sdb.total_keys, 4);
    let keys: Vec<&str> = sdb.extension_keys.iter().map(|k| k.key.as_str()).collect();
    assert_eq!(
        keys,
        vec![
            "RooVeterinaryInc.roo-cline",
            "rooveterinaryinc.roo-cline.extra"
        ]
    );
    let th = sdb.task_history.as_ref().expect("taskHistory");
    assert_eq!(
        (
            th.entries,
            th.on_disk,
            th.matched,
            th.only_on_disk,
            th.only_in_history
        ),
        (3, 5, 2, 3, 1)
    );

    assert_eq!(report.status, Status::Warning);
    assert!(report.reasons.iter().any(|r| r
        .message
        .contains("missing from the extension's task history")));
    assert!(report
        .reasons
        .iter()
        .any(|r| r.message.contains("no skeleton cache")));

    // Opened read-only and immutable: not a byte changed, no journal left.
    assert_eq!(fs::read(&db).expect("read"), db_before);
    assert!(
        !global.join("state.vscdb-journal").exists() && !global.join("state.vscdb-wal").exists()
    );

    // With a fresh cache, the cache reason goes; a touched task makes it stale.
    build_skeleton_cache(std::slice::from_ref(&tasks), &BuildOptions::new(&cache)).expect("build");
    let report = diagnose(std::slice::from_ref(&target), &DiagnoseOptions::new(&cache));
    assert!(
        !report.reasons.iter().any(|r| r.message.contains("cache")),
        "{:?}",
        report.reasons
    );
    assert!(report.locations[0].cache.built_at.is_some());
    common::touch(
        &tasks.join(&ids[2]).join("api_conversation_history.json"),
        9,
    );
    let report = diagnose(std::slice::from_ref(&target), &DiagnoseOptions::new(&cache));
    assert_eq!(report.locations[0].cache.stale, 1);

    // A damaged recent task is named.
    fs::write(
        tasks.join(&ids[3]).join("history_item.json"),
        b"\x00\x01 not json",
    )
    .expect("write");
    common::touch(&tasks.join(&ids[3]).join("history_item.json"), 60);
    let report = diagnose(
        &[Target::from_tasks_dir(&tasks)],
        &DiagnoseOptions::new(&cache),
    );
    let recent = &report.locations[0].recent_tasks[0];
    assert_eq!(recent.task_id, ids[3]);
    assert!(!recent.ok);
    assert!(report.reasons.iter().any(|r| r.message.contains(&ids[3])));
    // Target::from_tasks_dir finds the state.vscdb beside the extension folder.
    assert!(report.locations[0].state_db.is_some());
}

#[test]
fn missing_folder_is_an_error_and_a_broken_db_a_warning() {
    let home = tempfile::tempdir().expect("tmp");
    let cache = home.path().join("cache");
    let report = diagnose(
        &[Target::from_tasks_dir(
            &home.path().join("nope/rooveterinaryinc.roo-cline/tasks"),
        )],
        &DiagnoseOptions::new(&cache),
    );
    assert_eq!(report.status, Status::Error);
    let report = diagnose(&[], &DiagnoseOptions::new(&cache));
    assert_eq!(report.status, Status::Error);

    let global = home.path().join("g");
    let tasks = global.join("rooveterinaryinc.roo-cline/tasks");
    common::make_tasks(&tasks, 1);
    fs::write(global.join("state.vscdb"), b"this is not sqlite").expect("write");
    let report = diagnose(
        &[Target::from_tasks_dir(&tasks)],
        &DiagnoseOptions::new(&cache),
    );
    let sdb = report.locations[0].state_db.as_ref().expect("db");
    assert!(!sdb.readable && sdb.error.is_some());
    assert!(report
        .reasons
        .iter()
        .any(|r| r.message.contains("state.vscdb")));
    // A JSON report.
    let json = serde_json::to_value(&report).expect("json");
    assert_eq!(json["status"], "WARNING");
}

/// A store copied from the v3.50 fixture (its `_index.json` lists three of its four tasks; one
/// task has no `history_item.json`) under `<global>/<extension>/tasks`, with Zoo Code 3.80's
/// own files beside the tasks.
fn v350_store_under(global: &Path, extension: &str) -> std::path::PathBuf {
    let tasks = global.join(extension).join("tasks");
    common::copy_dir(&common::fixture_tasks("history-item-v3.50"), &tasks);
    fs::write(
        tasks.join("_delegation_repair_intent.json"),
        br#"{"version":1,"operationId":"x"}"#,
    )
    .expect("write");
    fs::write(
        tasks.join("_delegation_repair_intent.json.quarantine-1787000000000-k2j4x9"),
        b"{",
    )
    .expect("write");
    let staging = tasks.join("_staging_019cd6ce-1c9e-7be9-a324-5dcc53ca83b6_Qw3rTy");
    fs::create_dir_all(&staging).expect("mkdir");
    fs::write(staging.join("history_item.json"), b"{\"id\":\"019cd6ce\"}").expect("write");
    tasks
}

#[test]
fn a_zoo_code_store_says_its_index_is_stale_and_names_what_zoo_does_not_list() {
    let home = tempfile::tempdir().expect("tmp");
    let cache = home.path().join("cache");
    let global = home.path().join(".config/Code/User/globalStorage");
    let zoo = v350_store_under(&global, "zoocodeorganization.zoo-code");
    let roo = v350_store_under(&global, "rooveterinaryinc.roo-cline");
    let report = diagnose(
        &[Target::from_tasks_dir(&zoo), Target::from_tasks_dir(&roo)],
        &DiagnoseOptions::new(&cache),
    );
    let (z, r) = (&report.locations[0], &report.locations[1]);
    // Zoo's own files and the staging folder are not tasks.
    assert_eq!((z.task_count, r.task_count), (4, 4));
    assert!(z.history_index_stale && !r.history_index_stale);
    assert_eq!(
        (z.history_index_entries, r.history_index_entries),
        (Some(3), Some(3))
    );
    let says = |l: &roo_store::diagnose::LocationReport, status: Status, text: &str| {
        l.reasons
            .iter()
            .any(|x| x.status == status && x.message.contains(text))
    };
    // Zoo: information, not a request to regenerate it; the task Zoo does not list is named.
    assert!(says(z, Status::Ok, "stale and ignored"), "{:#?}", z.reasons);
    assert!(!says(z, Status::Warning, "_index.json"), "{:#?}", z.reasons);
    assert!(says(
        z,
        Status::Warning,
        "1 task folder(s) have no history_item.json"
    ));
    // Roo keeps today's judgement: the index is what the extension reads.
    assert!(says(
        r,
        Status::Warning,
        "tasks/_index.json lists 3 of 4 task folders"
    ));
    assert!(!says(r, Status::Ok, "stale"));
}
