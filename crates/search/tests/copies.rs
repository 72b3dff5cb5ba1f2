//! A task two stores hold (Zoo Code's import of Roo Code's history) is indexed once, from its
//! newer copy, and a search finds it once, naming the other copy.

mod common;

use common::copy_dir;
use roo_search::{
    index_tasks, search_tasks_semantic, EmbedderConfig, IndexOptions, Mode, SearchOptions,
    StoreConfig,
};
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

const PARENT: &str = "019cd6ce-1c9e-7be9-a324-5dcc53ca83b6";
const CHILD: &str = "019cd6ce-5036-7f70-a11e-7f86d559ebe2";

/// Every file of a task folder made `secs` old.
fn age(dir: &Path, secs: u64) {
    let t = SystemTime::now() - Duration::from_secs(secs);
    for f in fs::read_dir(dir).expect("task").flatten() {
        fs::File::open(f.path())
            .and_then(|f| f.set_modified(t))
            .expect("mtime");
    }
}

#[test]
fn an_imported_task_is_found_once_with_its_other_copy_named() {
    let work = tempfile::tempdir().expect("tmp");
    // The only test of this binary: the process environment is its own.
    std::env::set_var("ROO_STATE_CACHE_DIR", work.path().join("cache"));
    let global = work.path().join("globalStorage");
    let roo = global.join("rooveterinaryinc.roo-cline/tasks");
    let zoo = global.join("zoocodeorganization.zoo-code/tasks");
    let fixture = common::repo_root().join("fixtures/stores/history-item-v3.50/tasks");
    copy_dir(&fixture, &roo);
    for id in [PARENT, CHILD] {
        copy_dir(&roo.join(id), &zoo.join(id));
        age(&roo.join(id), 7200);
        age(&zoo.join(id), 3600);
    }
    // The parent was continued in Roo Code after the import: its Roo copy is the newer one.
    let ui = roo.join(PARENT).join("ui_messages.json");
    let mut msgs: Vec<serde_json::Value> =
        serde_json::from_slice(&fs::read(&ui).expect("read")).expect("json");
    let last = msgs
        .iter()
        .filter_map(|m| m["ts"].as_i64())
        .max()
        .expect("ts");
    msgs.push(
        serde_json::json!({"ts": last + 60_000, "type": "say", "say": "user_feedback",
        "text": "Ajoute aussi un compteur de succès du cache dans les logs."}),
    );
    fs::write(&ui, serde_json::to_vec(&msgs).expect("json")).expect("write");

    let index_dir = work.path().join("index");
    let store = StoreConfig::Memory {
        path: Some(index_dir.join("memory.json")),
    };
    let report = index_tasks(&IndexOptions {
        tasks_dirs: vec![roo.clone(), zoo.clone()],
        index_dir: Some(index_dir.clone()),
        embedder: EmbedderConfig::None,
        store: store.clone(),
        ..IndexOptions::default()
    })
    .expect("index");
    // Four tasks, not six: each shared one once.
    assert_eq!(report.tasks_seen, 4);
    let r = search_tasks_semantic(&SearchOptions {
        query: "cache des prévisions meteo-cli".into(),
        mode: Some(Mode::Lexical),
        limit: Some(10),
        index_dir: Some(index_dir.clone()),
        store: store.clone(),
        ..SearchOptions::default()
    })
    .expect("search");
    let ids: Vec<&str> = r.results.iter().map(|t| t.task_id.as_str()).collect();
    for id in [PARENT, CHILD] {
        assert_eq!(ids.iter().filter(|x| **x == id).count(), 1, "{ids:?}");
    }
    let found = |id: &str| r.results.iter().find(|t| t.task_id == id).expect("found");
    // The parent is read from Roo's copy (the newer); Zoo's is named, and differs.
    let parent = found(PARENT);
    assert_eq!(parent.also_in.len(), 1);
    assert_eq!(
        parent.also_in[0].path,
        zoo.join(PARENT).display().to_string()
    );
    assert_eq!(parent.also_in[0].host.as_deref(), Some("zoo-code"));
    assert!(parent.also_in[0].differs);
    // The child's copies are the same conversation: Zoo's files are newer, Roo's is named.
    let child = found(CHILD);
    assert_eq!(child.also_in.len(), 1);
    assert_eq!(child.also_in[0].path, roo.join(CHILD).display().to_string());
    assert!(!child.also_in[0].differs);
    // A task only one store holds names nothing.
    assert!(r
        .results
        .iter()
        .filter(|t| t.task_id != PARENT && t.task_id != CHILD)
        .all(|t| t.also_in.is_empty()));
    // The continuation is in what was indexed (the Roo copy of the parent).
    let r = search_tasks_semantic(&SearchOptions {
        query: "compteur de succès du cache".into(),
        mode: Some(Mode::Lexical),
        limit: Some(3),
        index_dir: Some(index_dir),
        store,
        ..SearchOptions::default()
    })
    .expect("search");
    assert_eq!(r.results.first().map(|t| t.task_id.as_str()), Some(PARENT));
}
