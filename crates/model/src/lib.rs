//! # roo-model — the local embedding model on disk
//!
//! Where the local model (all-MiniLM-L6-v2) lives, what a model directory must hold, and
//! [`fetch::fetch_model`], which installs it without installing anything into Python. roo-search
//! loads the model from here; the binding and the CLI install it through here.

pub mod error;
pub mod fetch;
mod paths;

pub use error::{Error, Result};
pub use fetch::{fetch_model, model_status, ModelFetchOptions, ModelFetchReport, ModelStatus};
pub use paths::data_dir;

use std::path::{Path, PathBuf};

/// The name of the local model and its directory under the data directory.
pub const LOCAL_MODEL: &str = "all-MiniLM-L6-v2";

/// The files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The model directory: `ROO_SEARCH_MODEL_DIR`, else `<data dir>/models/all-MiniLM-L6-v2`.
pub fn default_model_dir() -> PathBuf {
    match std::env::var_os("ROO_SEARCH_MODEL_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => data_dir().join("models").join(LOCAL_MODEL),
    }
}

/// The first missing model file, if any.
pub fn missing_model_file(dir: &Path) -> Option<&'static str> {
    MODEL_FILES.into_iter().find(|f| !dir.join(f).is_file())
}
