//! Exact phrases over a store whose tasks share one small vocabulary
//! (`fixtures/search/phrases.json`, store made by roo-corpus): BM25 and the embeddings cannot tell
//! these tasks apart, word order can. The task holding a quoted phrase must rank first for at least
//! `minFirst` of the labelled queries, in the default mode (hybrid with the static model when the
//! local model is installed; lexical without it), and the matched phrase is highlighted.

mod common;

use common::*;
use roo_search::{EmbedderConfig, Mode, StoreConfig};
use serde_json::Value;
use std::path::Path;

struct Phrases {
    tasks_dir: std::path::PathBuf,
    min_first: usize,
    /// (quoted query, expected task)
    queries: Vec<(String, String)>,
}

fn phrases() -> Phrases {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("fixtures/search/phrases.json"))
        .expect("fixtures/search/phrases.json");
    let v: Value = serde_json::from_str(&text).expect("phrases.json parses");
    let queries = v["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .map(|q| {
            (
                q["query"].as_str().expect("query").to_owned(),
                q["expected"][0].as_str().expect("expected").to_owned(),
            )
        })
        .collect();
    Phrases {
        tasks_dir: root.join(v["tasksDirs"][0].as_str().expect("tasksDirs")),
        min_first: v["minFirst"].as_u64().expect("minFirst") as usize,
        queries,
    }
}

/// Index the phrase store with `embedder` into a memory store under `work`.
fn index(work: &Path, embedder: EmbedderConfig) -> (std::path::PathBuf, StoreConfig) {
    let p = phrases();
    let tasks = work.join("tasks");
    copy_dir(&p.tasks_dir, &tasks);
    let index_dir = work.join("index");
    let store = StoreConfig::Memory {
        path: Some(index_dir.join("memory.json")),
    };
    let report = roo_search::index_tasks(&roo_search::IndexOptions {
        tasks_dirs: vec![tasks],
        index_dir: Some(index_dir.clone()),
        embedder,
        store: store.clone(),
        ..Default::default()
    })
    .expect("index");
    assert_eq!(report.tasks_indexed, 150);
    (index_dir, store)
}

/// How many labelled queries rank their task first, quoted and unquoted (printed).
fn firsts(label: &str, index_dir: &Path, store: &StoreConfig, mode: Option<Mode>) -> usize {
    let p = phrases();
    let (mut quoted, mut plain) = (0usize, 0usize);
    for (q, want) in &p.queries {
        let r = search(index_dir, store, q, mode);
        let top = r.results.first().map(|t| t.task_id.as_str());
        if top == Some(want.as_str()) {
            quoted += 1;
            // The phrase is highlighted in the best snippet, where it stands.
            let s = &r.results[0].snippets[0];
            let [a, b] = *s.highlights.first().expect("a highlight");
            let units: Vec<u16> = s.text.encode_utf16().collect();
            let shown = String::from_utf16_lossy(&units[a as usize..b as usize]);
            assert_eq!(shown, q.trim_matches('"'), "highlight of {q}");
        } else {
            println!("  miss ({label}): {q} -> {top:?}, want {want}");
        }
        let unquoted = search(index_dir, store, q.trim_matches('"'), mode);
        if unquoted.results.first().map(|t| t.task_id.as_str()) == Some(want.as_str()) {
            plain += 1;
        }
    }
    let n = p.queries.len();
    println!("phrases [{label}]: quoted first {quoted}/{n}, unquoted first {plain}/{n}");
    quoted
}

#[test]
fn quoted_phrases_rank_their_task_first_lexically() {
    let work = tempfile::tempdir().expect("tmp");
    let (index_dir, store) = index(work.path(), EmbedderConfig::None);
    let got = firsts("lexical", &index_dir, &store, None);
    let want = phrases().min_first;
    assert!(got >= want, "lexical: {got} first < {want}");
}

#[cfg(feature = "local-model")]
#[test]
fn quoted_phrases_rank_their_task_first_in_the_default_mode() {
    let Some(dir) = installed_model_dir() else {
        return;
    };
    let work = tempfile::tempdir().expect("tmp");
    let (index_dir, store) = index(
        work.path(),
        EmbedderConfig::Static {
            model_dir: Some(dir),
        },
    );
    let r = search(&index_dir, &store, "deploy cluster", None);
    assert_eq!(r.mode, Mode::Hybrid);
    let got = firsts("hybrid/static", &index_dir, &store, None);
    let want = phrases().min_first;
    assert!(got >= want, "hybrid: {got} first < {want}");
}

#[test]
fn host_and_subtree_filters_keep_their_tasks_only() {
    let work = tempfile::tempdir().expect("tmp");
    let tasks = work.path().join("tasks");
    copy_dir(
        &repo_root().join("fixtures/stores/history-item-v3.50/tasks"),
        &tasks,
    );
    let index_dir = work.path().join("index");
    let store = StoreConfig::Memory {
        path: Some(index_dir.join("memory.json")),
    };
    roo_search::index_tasks(&roo_search::IndexOptions {
        tasks_dirs: vec![tasks],
        index_dir: Some(index_dir.clone()),
        embedder: EmbedderConfig::None,
        store: store.clone(),
        ..Default::default()
    })
    .expect("index");
    let run = |host: Option<&str>, task: Option<&str>| {
        roo_search::search_tasks_semantic(&roo_search::SearchOptions {
            query: "cache prévisions".to_owned(),
            index_dir: Some(index_dir.clone()),
            store: store.clone(),
            host: host.map(str::to_owned),
            task: task.map(str::to_owned),
            ..Default::default()
        })
    };
    let all = task_ids(&run(None, None).expect("search"));
    assert_eq!(all.len(), 4, "{all:?}");
    let (root, child, grandchild) = (
        "019cd6ce-1c9e-7be9-a324-5dcc53ca83b6",
        "019cd6ce-5036-7f70-a11e-7f86d559ebe2",
        "019cd6cf-3402-7119-95b7-f7d5c886c374",
    );
    let mut sub = task_ids(&run(None, Some(&child[..13])).expect("subtree"));
    sub.sort();
    assert_eq!(sub, vec![child.to_owned(), grandchild.to_owned()]);
    assert_eq!(
        task_ids(&run(None, Some(grandchild)).expect("leaf")),
        vec![grandchild]
    );
    assert_eq!(task_ids(&run(None, Some(root)).expect("root")).len(), 4);
    let err = run(None, Some("ffff")).expect_err("unknown task");
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    let r = run(None, None).expect("search");
    let source = r.results[0].source.clone().unwrap_or_default();
    assert_eq!(task_ids(&run(Some(&source), None).expect("host")).len(), 4);
    assert!(task_ids(&run(Some("kilo-code-other"), None).expect("host")).is_empty());
}
