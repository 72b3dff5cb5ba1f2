//! The local embedder (all-MiniLM-L6-v2 with candle): no network. The model is fetched by
//! scripts/fetch-model.sh (CI does it); without it these tests say they were skipped, unless
//! ROO_SEARCH_REQUIRE_MODEL=1 (as in CI), where a missing model fails.
#![cfg(feature = "local-model")]

mod common;

use common::*;
use roo_search::embed::{self, Embedder, Purpose};
use roo_search::{EmbedderConfig, Mode, StoreConfig};

#[test]
fn sentence_embeddings_behave() {
    let Some(dir) = installed_model_dir() else {
        return;
    };
    let m = embed::local::LocalEmbedder::load(&dir).expect("load");
    let id = m.id().expect("id");
    assert_eq!(
        (id.kind.as_str(), id.model.as_str(), id.dimension),
        ("local", "all-MiniLM-L6-v2", 384)
    );
    let texts = [
        "How do I keep weather forecasts in a local cache?",
        "Store the forecasts on disk for thirty minutes before calling the API again.",
        "Add discount codes to the checkout page.",
    ];
    let v = m.embed(&texts, Purpose::Document).expect("embed");
    for x in &v {
        assert_eq!(x.len(), 384);
        assert!((cos(x, x) - 1.0).abs() < 1e-4);
    }
    assert!(
        cos(&v[0], &v[1]) > cos(&v[0], &v[2]) + 0.2,
        "{} vs {}",
        cos(&v[0], &v[1]),
        cos(&v[0], &v[2])
    );
    // Padding in a batch does not change a text's vector.
    let alone = m.embed(&texts[2..], Purpose::Query).expect("embed");
    assert!(cos(&alone[0], &v[2]) > 0.9999);
}

#[test]
fn a_missing_model_is_a_plain_error_naming_the_directory() {
    let dir = tempfile::tempdir().expect("tmp");
    let err = roo_search::embed::build(&EmbedderConfig::Local {
        model_dir: Some(dir.path().to_path_buf()),
    })
    .err()
    .expect("no model");
    assert_eq!(err.code(), "MODEL_MISSING");
    let msg = err.to_string();
    assert!(
        msg.contains(&dir.path().display().to_string()) && msg.contains("fetch-model.sh"),
        "{msg}"
    );
}

fn default_store() -> StoreConfig {
    if cfg!(feature = "edge") {
        StoreConfig::Edge { path: None }
    } else {
        StoreConfig::Memory { path: None }
    }
}

#[test]
fn end_to_end_with_the_local_model_and_no_network() {
    let Some(dir) = installed_model_dir() else {
        return;
    };
    let work = tempfile::tempdir().expect("tmp");
    let store = match default_store() {
        StoreConfig::Memory { .. } => StoreConfig::Memory {
            path: Some(work.path().join("index/memory.json")),
        },
        s => s,
    };
    let tasks = copy_fixtures(&work.path().join("tasks"));
    let index_dir = work.path().join("index");
    let opts = roo_search::IndexOptions {
        tasks_dirs: tasks,
        index_dir: Some(index_dir.clone()),
        embedder: EmbedderConfig::Local {
            model_dir: Some(dir),
        },
        store: store.clone(),
        ..Default::default()
    };
    let t0 = std::time::Instant::now();
    let first = roo_search::index_tasks(&opts).expect("index");
    println!(
        "indexed {} chunks with the local model in {:.1} s",
        first.chunks_embedded,
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(first.embedder.dimension, 384);
    assert_eq!(first.tasks_indexed, 28);

    // The embedder is found again from the index: no option needed to search.
    let r = search(&index_dir, &store, "promo codes at checkout", None);
    assert_eq!(r.mode, Mode::Hybrid);
    assert_eq!(r.embedder.kind, "local");
    let ids = task_ids(&r);
    assert!(
        ids.iter()
            .take(3)
            .any(|t| t == "adc9651c-1dbf-4267-850f-beabf45e2568"
                || t == "087ad417-9168-4209-8cd6-4f60a86fcd4f"),
        "{ids:?}"
    );

    let mut recall = std::collections::BTreeMap::new();
    for (name, mode) in [
        ("hybrid", Mode::Hybrid),
        ("semantic", Mode::Semantic),
        ("lexical", Mode::Lexical),
    ] {
        let r = recall_at_5(&format!("local-model/{name}"), |q| {
            task_ids(&search(&index_dir, &store, q, Some(mode)))
        });
        recall.insert(name, r);
    }
    for (name, r) in &recall {
        assert!(
            *r >= min_recall(name),
            "{name} recall@5 {r} < {}",
            min_recall(name)
        );
    }

    // An unchanged tree embeds nothing.
    let again = roo_search::index_tasks(&opts).expect("again");
    assert_eq!((again.tasks_indexed, again.chunks_embedded), (0, 0));
    roo_search::store::close_dir(&index_dir);
}
