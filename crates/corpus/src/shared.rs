//! The legacy fixtures and reference outputs in `../shared`, beside the checkout. They are optional:
//! a test that needs them and finds them absent says on stderr that it skips and why, and returns;
//! with `ROO_STATE_REQUIRE_SHARED=1` (set by CI) their absence fails the test instead.

use std::path::{Path, PathBuf};

/// The environment variable that makes `../shared` required.
pub const REQUIRE_SHARED: &str = "ROO_STATE_REQUIRE_SHARED";

/// Where `../shared` is looked for instead, when set (e.g. a checkout whose sibling has another name).
pub const SHARED_DIR: &str = "ROO_STATE_SHARED_DIR";

/// `ROO_STATE_SHARED_DIR` when set, else `../shared` beside the checkout (`crates/corpus/../../..`).
pub fn shared_root() -> PathBuf {
    match std::env::var_os(SHARED_DIR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// `rel` inside `../shared` when it exists. When it does not: `None`, after a line on stderr naming
/// `test` and the missing path; or a panic when `ROO_STATE_REQUIRE_SHARED=1`.
pub fn shared_fixture(rel: &str, test: &str) -> Option<PathBuf> {
    let path = shared_root().join(rel);
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{} is absent (../shared beside the checkout holds the legacy fixtures and reference outputs)",
        path.display()
    );
    if std::env::var(REQUIRE_SHARED).as_deref() == Ok("1") {
        panic!("{test}: {REQUIRE_SHARED}=1 but {why}");
    }
    eprintln!("{test}: skipped: {why}; set {REQUIRE_SHARED}=1 to make this an error");
    None
}
