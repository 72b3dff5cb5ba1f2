//! The static model distilled from the local model: made once in the model directory and reused,
//! deterministic, refused for an index made by another embedder, and its recall@5 on the labelled
//! queries. Needs the local model (scripts/fetch-model.sh); skipped without it unless
//! ROO_SEARCH_REQUIRE_MODEL=1.
#![cfg(feature = "local-model")]

mod common;

use common::*;
use roo_search::embed::static_model::{self, StaticHeader, STATIC_FILE};
use roo_search::embed::{self, distill, Embedder, Purpose};
use roo_search::{EmbedderConfig, Mode, StoreConfig};
use std::path::Path;

/// The distilled model of the installed local model (made by the first test that needs it).
fn distilled(dir: &Path) -> std::sync::Arc<static_model::StaticEmbedder> {
    static ONCE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = ONCE.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = std::time::Instant::now();
    let m = distill::ensure(dir, None).expect("distil");
    println!(
        "static model ready in {:.1} s ({} bytes)",
        t0.elapsed().as_secs_f64(),
        std::fs::metadata(dir.join(STATIC_FILE)).map_or(0, |m| m.len())
    );
    m
}

#[test]
fn the_distilled_file_is_made_once_and_reused() {
    let Some(dir) = installed_model_dir() else {
        return;
    };
    let m = distilled(&dir);
    let path = dir.join(STATIC_FILE);
    let before = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .expect("file");
    let h = m.header();
    assert_eq!((h.dims, h.vocab), (256, 30522));
    assert_eq!(
        h.source_digest,
        static_model::source_digest(&dir).expect("digest")
    );
    let id = m.id().expect("id");
    assert_eq!((id.kind.as_str(), id.dimension), ("static", 256));
    assert!(id.model.contains(&h.source_digest[..16]), "{}", id.model);
    // Another method gives another id, even from the same model.
    let other = StaticHeader {
        method: format!("{}-next", h.method),
        ..h.clone()
    };
    assert_ne!(static_model::model_name(&other), id.model);
    // Again, through the public builder: the same file, not made again.
    let e = embed::build(&EmbedderConfig::Static {
        model_dir: Some(dir.clone()),
    })
    .expect("build");
    assert_eq!(e.id().expect("id"), id);
    // The default embedder is the static model when the local model is installed.
    if dir == embed::default_model_dir() {
        let auto = embed::build(&EmbedderConfig::Auto).expect("auto");
        assert_eq!(auto.id().expect("id"), id);
    }
    let after = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .expect("file");
    assert_eq!(before, after, "the distilled file was written again");
    // The file round-trips through its reader.
    let (header, vectors, projection) = static_model::read_file(&path).expect("read");
    assert_eq!(&header, h);
    assert_eq!((vectors.len(), header.hidden), (30522 * 256, 384));
    assert_eq!(projection.components.len(), 384 * 256);
}

#[test]
fn static_vectors_are_deterministic_and_meaningful() {
    let Some(dir) = installed_model_dir() else {
        return;
    };
    let m = distilled(&dir);
    let texts = [
        "How do I keep weather forecasts in a local cache?",
        "Store the forecasts on disk for thirty minutes before calling the API again.",
        "Add discount codes to the checkout page.",
    ];
    let a = m.embed(&texts, Purpose::Document).expect("embed");
    assert_eq!(a, m.embed(&texts, Purpose::Document).expect("embed"));
    for v in &a {
        assert_eq!(v.len(), 256);
        assert!((cos(v, v) - 1.0).abs() < 1e-4);
    }
    assert!(
        cos(&a[0], &a[1]) > cos(&a[0], &a[2]) + 0.1,
        "{} vs {}",
        cos(&a[0], &a[1]),
        cos(&a[0], &a[2])
    );
    // Queries go through the sentence model, projected into the same space: a query is nearer
    // the document that answers it, alone or in a batch.
    let q = m
        .embed(
            &["keep the weather forecasts cached", "promo codes"],
            Purpose::Query,
        )
        .expect("query");
    let alone = m
        .embed(&["keep the weather forecasts cached"], Purpose::Query)
        .expect("query");
    assert_eq!(q[0].len(), 256);
    assert!((cos(&q[0], &q[0]) - 1.0).abs() < 1e-4);
    assert!(cos(&q[0], &alone[0]) > 0.9999);
    assert!(
        cos(&q[0], &a[1]) > cos(&q[0], &a[2]) && cos(&q[1], &a[2]) > cos(&q[1], &a[1]),
        "{q:?}"
    );
    // Long texts are not cut at 256 tokens as the sentence model's are: what comes after counts.
    let head = "cache forecasts on disk. ".repeat(60);
    let tail = format!(
        "{head}{}",
        "add discount codes to the checkout page. ".repeat(60)
    );
    let v = m.embed(&[&head, &tail], Purpose::Document).expect("embed");
    assert!(cos(&v[0], &v[1]) < 0.9, "{}", cos(&v[0], &v[1]));
}

#[test]
fn a_file_from_another_model_or_damaged_is_not_used() {
    let Some(dir) = installed_model_dir() else {
        return;
    };
    let work = tempfile::tempdir().expect("tmp");
    // A model directory with the same files (linked) and a static file of another model.
    for f in embed::MODEL_FILES {
        std::os::unix::fs::symlink(dir.join(f), work.path().join(f)).expect("link");
    }
    let header = StaticHeader {
        source_digest: "0".repeat(32),
        method: static_model::METHOD.to_owned(),
        vocab: 30522,
        dims: 2,
        hidden: 3,
    };
    let projection = roo_search::embed::pca::Projection {
        mean: vec![0.0; 3],
        components: vec![1.0; 6],
        k: 2,
    };
    let path = work.path().join(STATIC_FILE);
    static_model::write_file(&path, &header, &vec![0.5; 30522 * 2], &projection).expect("write");
    let (h, v, p) = static_model::read_file(&path).expect("read");
    assert_eq!((h, v.len(), p), (header, 30522 * 2, projection));
    assert!(static_model::load_current(work.path())
        .expect("load")
        .is_none());
    std::fs::write(&path, b"RSTATIC1\xff\xff\xff\xff{").expect("write");
    assert!(static_model::load_current(work.path())
        .expect("load")
        .is_none());
    // A search never distils: it says the file is missing.
    let err = roo_search::embed::for_index(
        &roo_search::EmbedderId {
            kind: "static".to_owned(),
            model: "x".to_owned(),
            dimension: 256,
        },
        None,
        Some(work.path()),
    )
    .err()
    .expect("refused");
    assert_eq!(err.code(), "MODEL_LOAD_FAILED", "{err}");
}

fn memory_store(work: &Path) -> StoreConfig {
    StoreConfig::Memory {
        path: Some(work.join("index/memory.json")),
    }
}

#[test]
fn recall_of_the_static_model_and_a_mismatched_embedder_is_refused() {
    let Some(dir) = installed_model_dir() else {
        return;
    };
    let _ = distilled(&dir);
    let work = tempfile::tempdir().expect("tmp");
    let store = memory_store(work.path());
    let index_dir = work.path().join("index");
    let phases = std::sync::Mutex::new(Vec::new());
    let on_progress = |p: &roo_search::IndexProgress| {
        phases
            .lock()
            .expect("lock")
            .push((p.phase, p.done, p.total, p.eta_ms));
    };
    let opts = roo_search::IndexOptions {
        tasks_dirs: copy_fixtures(&work.path().join("tasks")),
        index_dir: Some(index_dir.clone()),
        embedder: EmbedderConfig::Static {
            model_dir: Some(dir.clone()),
        },
        store: store.clone(),
        on_progress: Some(&on_progress),
        ..Default::default()
    };
    let first = roo_search::index_tasks(&opts).expect("index");
    assert_eq!(
        (first.embedder.kind.as_str(), first.embedder.dimension),
        ("static", 256)
    );
    assert_eq!(first.tasks_indexed, 28);
    // Progress ends with every task done and no time left.
    let phases = phases.into_inner().expect("lock");
    let last = phases
        .iter()
        .rev()
        .find(|p| p.0 == "indexing")
        .expect("indexing");
    assert_eq!((last.1, last.2, last.3), (28, 28, Some(0)));

    let r = search(&index_dir, &store, "promo codes at checkout", None);
    assert_eq!((r.mode, r.embedder.kind.as_str()), (Mode::Hybrid, "static"));
    for (name, mode) in [("hybrid", Mode::Hybrid), ("semantic", Mode::Semantic)] {
        let r = recall_at_5(&format!("static/{name}"), |q| {
            task_ids(&search(&index_dir, &store, q, Some(mode)))
        });
        let floor = min_recall(&format!("static-{name}"));
        assert!(floor > 0.0, "no floor for static-{name} in queries.json");
        assert!(r >= floor, "static {name} recall@5 {r} < {floor}");
    }

    // The sentence model's vectors are not compared with the static model's.
    let err = roo_search::search_tasks_semantic(&roo_search::SearchOptions {
        query: "promo codes".to_owned(),
        index_dir: Some(index_dir.clone()),
        store: store.clone(),
        embedder: Some(EmbedderConfig::Local {
            model_dir: Some(dir),
        }),
        ..Default::default()
    })
    .expect_err("refused");
    assert_eq!(err.code(), "EMBEDDER_MISMATCH", "{err}");
}
