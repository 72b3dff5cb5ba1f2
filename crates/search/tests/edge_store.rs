//! The embedded default: Qdrant Edge in-process, no network.
#![cfg(feature = "edge")]

mod common;

use common::*;
use roo_search::lexical::SparseVec;
use roo_search::store::edge::EdgeStore;
use roo_search::store::{ChunkPayload, Filter, Point, Query, VectorStore};
use roo_search::{EmbedderConfig, Mode, StoreConfig};
use std::path::Path;
use uuid::Uuid;

fn edge() -> StoreConfig {
    StoreConfig::Edge { path: None }
}

#[test]
fn lexical_on_the_embedded_store() {
    let work = tempfile::tempdir().expect("tmp");
    let recall = run_store_suite("edge/lexical", edge(), EmbedderConfig::None, work.path());
    assert!(
        recall >= min_recall("lexical"),
        "recall@5 {recall} < {}",
        min_recall("lexical")
    );
    roo_search::store::close_dir(&work.path().join("index"));
}

#[test]
fn hybrid_on_the_embedded_store_with_an_http_embedder() {
    let server = start_fake_server(FakeBehaviour {
        dims: 128,
        ..FakeBehaviour::default()
    });
    let work = tempfile::tempdir().expect("tmp");
    let recall = run_store_suite(
        "edge/http-hybrid",
        edge(),
        EmbedderConfig::Http(http_config(&server, Some(128))),
        work.path(),
    );
    assert!(recall > 0.5, "{recall}");
    roo_search::store::close_dir(&work.path().join("index"));
}

#[test]
fn the_index_survives_a_restart_and_is_locked_while_open() {
    let work = tempfile::tempdir().expect("tmp");
    let tasks = copy_fixtures(&work.path().join("tasks"));
    let index_dir = work.path().join("index");
    let report = roo_search::index_tasks(&roo_search::IndexOptions {
        tasks_dirs: tasks,
        index_dir: Some(index_dir.clone()),
        embedder: EmbedderConfig::None,
        store: edge(),
        ..Default::default()
    })
    .expect("index");
    assert_eq!(report.store.kind, "edge");
    let before = task_ids(&search(
        &index_dir,
        &edge(),
        "discount codes",
        Some(Mode::Lexical),
    ));

    // While this process holds the shard, another opener is refused with a clear message.
    let shard = index_dir.join("edge").join(roo_search::store::COLLECTION);
    let err = EdgeStore::open(&shard).err().expect("locked");
    assert_eq!(err.code(), "INDEX_BUSY");
    assert!(err.to_string().contains("another process"), "{err}");

    // Closed and reopened from disk (as a new process would): same answers.
    assert_eq!(roo_search::store::close_dir(&index_dir), 1);
    let after = task_ids(&search(
        &index_dir,
        &edge(),
        "discount codes",
        Some(Mode::Lexical),
    ));
    assert_eq!(before, after);
    assert!(!after.is_empty());
    roo_search::store::close_dir(&index_dir);
}

#[test]
fn a_narrow_scope_fills_its_page_on_the_embedded_store() {
    let work = tempfile::tempdir().expect("tmp");
    check_narrow_scope(edge(), work.path());
    roo_search::store::close_dir(&work.path().join("index"));
}

/// A point of the log test: task `t<i>`, a 2 kB snippet (so the log fills segments quickly), a
/// sparse vector of its own term and a dense vector.
fn log_point(i: u32, snippet: &str) -> Point {
    let payload = ChunkPayload {
        task_id: format!("t{i}"),
        source_file: "ui_messages.json".to_owned(),
        timestamp: 1_700_000_000 + i64::from(i),
        timestamp_ms: 0,
        end_timestamp_ms: 0,
        dialogue_snippet: snippet.to_owned(),
        user: None,
        workspace: None,
        workspace_key: None,
        workspace_name: None,
        role: "user".to_owned(),
        host: "roo".to_owned(),
        chunk_index: 0,
        task_title: None,
        parent_task_id: None,
        source: None,
    };
    Point {
        id: Uuid::from_u128(u128::from(i) + 1),
        dense: Some((0..64).map(|d| ((i + d) % 7) as f32 + 1.0).collect()),
        sparse: SparseVec {
            indices: vec![i, 1_000_000],
            values: vec![1.0, 0.1],
        },
        payload,
    }
}

fn closed_log_segments(shard: &Path) -> usize {
    std::fs::read_dir(shard.join("wal"))
        .expect("wal folder")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("closed-"))
        .count()
}

/// The snippet of task `t<i>`'s point, found through its own term.
fn snippet_of(store: &EdgeStore, i: u32) -> Option<String> {
    let q = SparseVec {
        indices: vec![i],
        values: vec![1.0],
    };
    let only = Filter {
        task_id: Some(format!("t{i}")),
        ..Filter::default()
    };
    let hits = store.search(Query::Sparse(&q), &only, 1).expect("search");
    hits.into_iter().next().map(|h| h.payload.dialogue_snippet)
}

/// The engine never truncates its write-ahead log: a reopened shard keeps only the newest closed
/// segment, and writes after that still land. The update is of the point written last, whose
/// version is the highest: numbered from a log started again, it would be dropped without a word.
#[test]
fn a_reopened_shard_drops_its_applied_log_and_still_takes_writes() {
    let work = tempfile::tempdir().expect("tmp");
    let shard = work.path().join("shard");
    let long = "x".repeat(2_000);
    {
        let store = EdgeStore::open(&shard).expect("open");
        store.create(Some(64)).expect("create");
        for batch in 0..60 {
            store
                .upsert(
                    (0..100)
                        .map(|j| log_point(batch * 100 + j, &long))
                        .collect(),
                )
                .expect("upsert");
        }
        store.commit(false).expect("commit");
    }
    // Built to be mapped, not read whole at load: a search in a new process touches what it needs.
    let config: serde_json::Value = serde_json::from_slice(
        &std::fs::read(shard.join("edge_config.json")).expect("edge_config.json"),
    )
    .expect("config json");
    for key in [
        "/vectors/dense/on_disk",
        "/sparse_vectors/lexical/on_disk",
        "/hnsw_config/on_disk",
    ] {
        assert_eq!(
            config.pointer(key),
            Some(&serde_json::json!(true)),
            "{key}: {config}"
        );
    }
    let before = closed_log_segments(&shard);
    assert!(
        before >= 3,
        "the test needs a log of several segments: {before}"
    );
    {
        let store = EdgeStore::open(&shard).expect("reopen");
        assert_eq!(closed_log_segments(&shard), 1);
        assert_eq!(store.count().expect("count"), 6_000);
        assert_eq!(snippet_of(&store, 4_321).as_deref(), Some(long.as_str()));
        store
            .upsert(vec![log_point(5_999, "changed"), log_point(6_000, "new")])
            .expect("upsert after the trim");
        store.commit(false).expect("commit");
    }
    let store = EdgeStore::open(&shard).expect("third open");
    assert_eq!(store.count().expect("count"), 6_001);
    assert_eq!(snippet_of(&store, 5_999).as_deref(), Some("changed"));
    assert_eq!(snippet_of(&store, 6_000).as_deref(), Some("new"));
}
