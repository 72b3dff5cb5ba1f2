//! The OpenAI-compatible embedder against a local server speaking the same wire format.

mod common;

use common::*;
use roo_search::embed::http::HttpEmbedder;
use roo_search::embed::{Embedder, Purpose};
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn texts_go_in_batches_and_come_back_in_order() {
    let server = start_fake_server(FakeBehaviour {
        dims: 24,
        ..FakeBehaviour::default()
    });
    let e = HttpEmbedder::new(http_config(&server, None)).expect("embedder");
    let texts: Vec<String> = (0..40)
        .map(|i| format!("text number {i} about caches"))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let v = e.embed(&refs, Purpose::Document).expect("embed");
    assert_eq!(v.len(), 40);
    assert_eq!(
        *server.behaviour.batches.lock().expect("lock"),
        vec![16, 16, 8]
    );
    // The server answers in reverse order; `index` puts each vector back in its place.
    for (t, got) in texts.iter().zip(&v) {
        let want = fake_embedding(t, 24);
        assert!(
            got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-5),
            "{t}"
        );
    }
    let id = e.id().expect("id");
    assert_eq!(
        (id.kind.as_str(), id.model.as_str(), id.dimension),
        ("http", "fake-embedding", 24)
    );
    assert!(server
        .behaviour
        .auth
        .lock()
        .expect("lock")
        .iter()
        .all(|a| a == "Bearer test-key"));
}

#[test]
fn a_429_then_a_503_are_retried() {
    let server = start_fake_server(FakeBehaviour {
        dims: 8,
        fail_429: AtomicUsize::new(1),
        fail_503: AtomicUsize::new(1),
        ..FakeBehaviour::default()
    });
    let e = HttpEmbedder::new(http_config(&server, Some(8))).expect("embedder");
    let v = e
        .embed(&["hello"], Purpose::Query)
        .expect("retried to success");
    assert_eq!(v.len(), 1);
    assert_eq!(server.behaviour.requests.load(Ordering::SeqCst), 3);
}

#[test]
fn retries_end_with_a_readable_error() {
    let server = start_fake_server(FakeBehaviour {
        dims: 8,
        fail_429: AtomicUsize::new(100),
        ..FakeBehaviour::default()
    });
    let e = HttpEmbedder::new(http_config(&server, Some(8))).expect("embedder");
    let err = e.embed(&["hello"], Purpose::Query).expect_err("gives up");
    assert_eq!(err.code(), "EMBEDDING_FAILED");
    let msg = err.to_string();
    assert!(
        msg.contains("429") && msg.contains("after 4 attempts"),
        "{msg}"
    );
    assert_eq!(server.behaviour.requests.load(Ordering::SeqCst), 4);
}

#[test]
fn a_wrong_dimension_is_rejected() {
    let server = start_fake_server(FakeBehaviour {
        dims: 8,
        wrong_dim_from: AtomicUsize::new(2),
        ..FakeBehaviour::default()
    });
    // Expected dimension given: the first answer is fine, the second has 9 values.
    let e = HttpEmbedder::new(http_config(&server, Some(8))).expect("embedder");
    e.embed(&["one"], Purpose::Document).expect("first answer");
    let err = e
        .embed(&["two"], Purpose::Document)
        .expect_err("wrong dimension");
    assert_eq!(err.code(), "DIMENSION_MISMATCH", "{err}");
    assert!(err.to_string().contains("9 dimensions where 8"), "{err}");

    // No dimension given: the first answer sets it, and a later change is caught too.
    let server = start_fake_server(FakeBehaviour {
        dims: 8,
        wrong_dim_from: AtomicUsize::new(2),
        ..FakeBehaviour::default()
    });
    let e = HttpEmbedder::new(http_config(&server, None)).expect("embedder");
    assert_eq!(e.id().expect("probe").dimension, 8);
    let err = e
        .embed(&["two"], Purpose::Document)
        .expect_err("changed dimension");
    assert_eq!(err.code(), "DIMENSION_MISMATCH");
}

#[test]
fn an_unreachable_service_is_a_plain_error() {
    // A port nobody listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    drop(listener);
    let mut cfg = roo_search::embed::http::HttpConfig {
        base_url: Some(url.clone()),
        model: Some("m".to_owned()),
        dimensions: Some(4),
        max_retries: Some(1),
        retry_base_ms: Some(1),
        ..Default::default()
    };
    cfg.api_key = Some("k".to_owned());
    let e = HttpEmbedder::new(cfg).expect("embedder");
    let err = e.embed(&["x"], Purpose::Query).expect_err("refused");
    assert_eq!(err.code(), "EMBEDDING_FAILED");
    assert!(
        err.to_string().contains(&format!("{url}/embeddings")),
        "{err}"
    );
}
