//! What the integration tests share: the bundled fixture stores and a handle over one of them.
#![allow(dead_code)] // each test binary uses some of these helpers

use roo_store::task_store::{OpenOptions, TaskStore};
use roo_store::HostEnv;
use std::path::{Path, PathBuf};

pub fn stores_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/stores")
}

/// The tasks folder of every bundled fixture store, in name order.
pub fn fixture_stores() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(stores_root())
        .expect("fixtures/stores")
        .filter_map(|e| e.ok().map(|e| e.path().join("tasks")))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// A handle over one tasks folder, read without a cache.
pub fn open(tasks: &Path) -> TaskStore {
    open_all(&[tasks], None)
}

/// A handle over tasks folders, with our cache under `cache` (or none).
pub fn open_all(tasks: &[&Path], cache: Option<&Path>) -> TaskStore {
    TaskStore::open(
        &HostEnv::current(),
        &OpenOptions {
            tasks_dirs: tasks.iter().map(|t| t.to_path_buf()).collect(),
            cache_root: cache.map(Path::to_path_buf),
            ignore_stored_links: false,
            every_file: false,
        },
    )
    .expect("open the stores")
}

/// Equal up to the rounding of a different order of additions.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Write task `n` of a generated store: two requests an hour apart on one of 40 days, a model of
/// three (one without a price), every fifth request without a recorded cost.
pub fn write_task(tasks: &Path, n: usize, cost_scale: f64) {
    let dir = tasks.join(format!("task-{n:05}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let t0: i64 = 1_767_225_600_000 + (n as i64 % 40) * 86_400_000;
    let model = ["claude-sonnet-4-5", "gpt-5", "some-unpriced-model"][n % 3];
    // Every fifth request records no cost: `auto` calculates it from the tokens.
    let cost = if n % 5 == 0 {
        String::new()
    } else {
        format!(r#","cost":{}"#, (n as f64 * 0.0137 + 0.01) * cost_scale)
    };
    let req = format!(
        r#"{{"apiProtocol":"anthropic","tokensIn":{},"tokensOut":{},"cacheReads":{}{cost}}}"#,
        100 + n,
        10 + n % 17,
        n % 7
    );
    let msgs = serde_json::json!([
        {"ts": t0, "type": "say", "say": "text", "text": format!("Task number {n}")},
        {"ts": t0 + 1, "type": "say", "say": "api_req_started", "text": req},
        {"ts": t0 + 3_600_000, "type": "say", "say": "api_req_started", "text": req},
    ]);
    let meta = serde_json::json!({"model_usage": [{"ts": t0, "model_id": model, "model_provider_id": "p", "mode": "code"}]});
    std::fs::write(dir.join("ui_messages.json"), msgs.to_string()).expect("write");
    std::fs::write(dir.join("task_metadata.json"), meta.to_string()).expect("write");
}
