//! End to end on the in-memory store (no heavy features): lexical only, and dense + hybrid with
//! an OpenAI-compatible embedder served locally.

mod common;

use common::*;
use roo_search::{
    index_tasks, search_tasks_semantic, EmbedderConfig, Error, IndexOptions, Mode, SearchOptions,
    StoreConfig,
};

fn memory(dir: &std::path::Path) -> StoreConfig {
    StoreConfig::Memory {
        path: Some(dir.join("index").join("memory.json")),
    }
}

#[test]
fn lexical_only_end_to_end() {
    let work = tempfile::tempdir().expect("tmp");
    let recall = run_store_suite(
        "memory/lexical",
        memory(work.path()),
        EmbedderConfig::None,
        work.path(),
    );
    assert!(
        recall >= min_recall("lexical"),
        "recall@5 {recall} fell below {}",
        min_recall("lexical")
    );
}

#[test]
fn dense_and_hybrid_with_an_http_embedder() {
    let server = start_fake_server(FakeBehaviour {
        dims: 256,
        ..FakeBehaviour::default()
    });
    let work = tempfile::tempdir().expect("tmp");
    let store = memory(work.path());
    let recall = run_store_suite(
        "memory/http-hybrid",
        store.clone(),
        EmbedderConfig::Http(http_config(&server, None)),
        work.path(),
    );
    assert!(recall > 0.5, "{recall}");
    // The index remembers how to reach the embedder: searching needs no embedder option.
    let index_dir = work.path().join("index");
    let r = search(&index_dir, &store, "discount codes", Some(Mode::Semantic));
    assert_eq!(r.mode, Mode::Semantic);
    assert_eq!(r.embedder.dimension, 256);
    assert!(!r.results.is_empty());
    let r = search(&index_dir, &store, "discount codes", None);
    assert_eq!(r.mode, Mode::Hybrid);
}

#[test]
fn a_model_change_rebuilds_and_mixed_dimensions_are_refused() {
    let server = start_fake_server(FakeBehaviour {
        dims: 32,
        ..FakeBehaviour::default()
    });
    let work = tempfile::tempdir().expect("tmp");
    let tasks = copy_fixtures(&work.path().join("tasks"));
    let index_dir = work.path().join("index");
    let store = memory(work.path());
    let run = |embedder: EmbedderConfig| {
        index_tasks(&IndexOptions {
            tasks_dirs: tasks.clone(),
            index_dir: Some(index_dir.clone()),
            embedder,
            store: store.clone(),
            ..IndexOptions::default()
        })
    };
    let lexical = run(EmbedderConfig::None).expect("lexical index");
    assert!(lexical.rebuilt.is_none());
    // Semantic search on a lexical index is refused with a reason; the default mode works.
    let err = search_tasks_semantic(&SearchOptions {
        query: "discount".to_owned(),
        mode: Some(Mode::Semantic),
        index_dir: Some(index_dir.clone()),
        store: store.clone(),
        ..SearchOptions::default()
    })
    .expect_err("semantic on a lexical index");
    assert_eq!(err.code(), "SEMANTIC_UNAVAILABLE");
    assert_eq!(
        search(&index_dir, &store, "discount", None).mode,
        Mode::Lexical
    );

    let dense = run(EmbedderConfig::Http(http_config(&server, Some(32)))).expect("dense index");
    let why = dense.rebuilt.expect("a model change rebuilds");
    assert!(why.contains("embedder changed"), "{why}");
    assert_eq!(dense.chunks_embedded, lexical.chunks_total);

    // A query embedder of another dimension is refused, not silently mixed.
    let other = start_fake_server(FakeBehaviour {
        dims: 48,
        ..FakeBehaviour::default()
    });
    let err = search_tasks_semantic(&SearchOptions {
        query: "discount".to_owned(),
        index_dir: Some(index_dir.clone()),
        store: store.clone(),
        embedder: Some(EmbedderConfig::Http(http_config(&other, None))),
        ..SearchOptions::default()
    })
    .expect_err("mixed dimensions");
    assert_eq!(err.code(), "EMBEDDER_MISMATCH", "{err}");

    // Same model again: nothing to do.
    let same = run(EmbedderConfig::Http(http_config(&server, Some(32)))).expect("same");
    assert_eq!((same.chunks_embedded, same.rebuilt.is_none()), (0, true));
}

#[test]
fn bad_input_is_a_coded_error() {
    let work = tempfile::tempdir().expect("tmp");
    let index_dir = work.path().join("index");
    let store = memory(work.path());
    let err = search_tasks_semantic(&SearchOptions {
        query: "anything".to_owned(),
        index_dir: Some(index_dir.clone()),
        store: store.clone(),
        ..SearchOptions::default()
    })
    .expect_err("not indexed");
    assert_eq!(err.code(), "NOT_INDEXED");
    assert!(err.to_string().contains("indexTasks"));

    let err = index_tasks(&IndexOptions {
        tasks_dirs: vec![work.path().join("nope")],
        index_dir: Some(index_dir.clone()),
        embedder: EmbedderConfig::None,
        store: store.clone(),
        ..IndexOptions::default()
    })
    .expect_err("missing dir");
    assert!(matches!(err, Error::TasksDirNotFound(_)));
    assert_eq!(err.code(), "INVALID_PATH");

    let err = search_tasks_semantic(&SearchOptions {
        query: "  ".to_owned(),
        index_dir: Some(index_dir.clone()),
        store: store.clone(),
        ..SearchOptions::default()
    })
    .expect_err("empty query");
    assert_eq!(err.code(), "INVALID_ARGUMENT");

    let err = search_tasks_semantic(&SearchOptions {
        query: "x".to_owned(),
        start_date: Some("last week".to_owned()),
        index_dir: Some(index_dir),
        store,
        ..SearchOptions::default()
    })
    .expect_err("bad date");
    assert_eq!(err.code(), "INVALID_ARGUMENT");
}

#[test]
fn cancelling_keeps_what_was_done() {
    let work = tempfile::tempdir().expect("tmp");
    let tasks = copy_fixtures(&work.path().join("tasks"));
    let index_dir = work.path().join("index");
    let flag = std::sync::atomic::AtomicBool::new(true);
    let r = index_tasks(&IndexOptions {
        tasks_dirs: tasks.clone(),
        index_dir: Some(index_dir.clone()),
        embedder: EmbedderConfig::None,
        store: memory(work.path()),
        cancel: Some(&flag),
        ..IndexOptions::default()
    })
    .expect("cancelled run");
    assert!(r.cancelled);
    assert_eq!(r.tasks_indexed, 0);
    let done = index_tasks(&IndexOptions {
        tasks_dirs: tasks,
        index_dir: Some(index_dir),
        embedder: EmbedderConfig::None,
        store: memory(work.path()),
        ..IndexOptions::default()
    })
    .expect("full run");
    assert_eq!(done.tasks_indexed, 28);
}

#[test]
fn only_dialogue_is_indexed() {
    use roo_search::chunk::{chunk_dialogue, extract_dialogue, ChunkOptions};
    let mut chunks = 0;
    for dir in labelled().tasks_dirs {
        for e in std::fs::read_dir(&dir).expect("dir") {
            let path = e.expect("entry").path();
            if !path.is_dir() {
                continue;
            }
            let d = extract_dialogue(&path);
            for c in chunk_dialogue(&d.messages, &ChunkOptions::default()) {
                chunks += 1;
                for payload in [
                    "human_size",                  // in a tool call's diff
                    "<environment_details>",       // environment details
                    "Current Workspace Directory", // file listings
                    "\"tool\":",                   // UI tool payloads
                    "\"tokensIn\"",                // API request records
                    "[read_file for",              // tool results in the API history
                    "from reportlab.pdfgen",       // ... and their content
                    "4 passed in 0.21s",           // command output
                ] {
                    assert!(
                        !c.text.contains(payload),
                        "{payload} in {}: {}",
                        path.display(),
                        c.text
                    );
                }
                assert!(c.text.chars().count() <= 820, "{}", c.text.len());
                assert!(
                    c.first_ts.is_some(),
                    "every chunk carries its messages' time"
                );
            }
        }
    }
    assert!(chunks > 200);
}

/// A task folder with one UI record: `(type, kind, text, ts)` per message.
fn write_task(tasks: &std::path::Path, id: &str, messages: &[(&str, &str, &str, i64)]) {
    let dir = tasks.join(id);
    std::fs::create_dir_all(&dir).expect("task dir");
    let ui: Vec<serde_json::Value> = messages
        .iter()
        .map(|(t, kind, text, ts)| serde_json::json!({ "type": t, *t: kind, "text": text, "ts": ts }))
        .collect();
    std::fs::write(
        dir.join("ui_messages.json"),
        serde_json::to_vec(&ui).expect("json"),
    )
    .expect("write");
}

#[test]
fn chunks_name_the_inferred_parent_and_follow_it_when_it_appears() {
    let work = tempfile::tempdir().expect("tmp");
    let tasks = work.path().join("tasks");
    let instruction = "Write the invoice parser for the billing service";
    write_task(
        &tasks,
        "child-task",
        &[
            ("say", "text", instruction, 1_700_000_060_000),
            (
                "say",
                "text",
                "The invoice parser reads every line item.",
                1_700_000_070_000,
            ),
        ],
    );
    let store = memory(work.path());
    let index_dir = work.path().join("index");
    let opts = IndexOptions {
        tasks_dirs: vec![tasks.clone()],
        index_dir: Some(index_dir.clone()),
        embedder: EmbedderConfig::None,
        store: store.clone(),
        ..IndexOptions::default()
    };
    let parent_of = |r: &roo_search::SearchResponse| {
        r.results
            .iter()
            .find(|t| t.task_id == "child-task")
            .map(|t| t.parent_task_id.clone())
    };
    let first = index_tasks(&opts).expect("first index");
    assert_eq!(first.tasks_indexed, 1);
    let r = search(&index_dir, &store, "invoice parser", Some(Mode::Lexical));
    assert_eq!(parent_of(&r), Some(None));

    // The parent's folder arrives (a copy from another machine): the child's files did not
    // change, its parent did.
    let call = serde_json::json!({ "tool": "newTask", "mode": "code", "content": instruction });
    write_task(
        &tasks,
        "parent-task",
        &[
            ("say", "text", "Plan the billing service", 1_700_000_000_000),
            ("ask", "tool", &call.to_string(), 1_700_000_050_000),
        ],
    );
    let second = index_tasks(&opts).expect("second index");
    assert_eq!(second.tasks_indexed, 2, "{second:?}");
    let r = search(&index_dir, &store, "invoice parser", Some(Mode::Lexical));
    assert_eq!(parent_of(&r), Some(Some("parent-task".to_owned())));
    let third = index_tasks(&opts).expect("third index");
    assert_eq!((third.tasks_indexed, third.tasks_unchanged), (0, 2));
}

#[test]
fn a_narrow_scope_fills_its_page_in_memory() {
    let work = tempfile::tempdir().expect("tmp");
    check_narrow_scope(memory(work.path()), work.path());
}
