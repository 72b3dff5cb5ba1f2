//! The embedded default: Qdrant Edge in-process, no network.
#![cfg(feature = "edge")]

mod common;

use common::*;
use roo_search::store::edge::EdgeStore;
use roo_search::{EmbedderConfig, Mode, StoreConfig};

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
