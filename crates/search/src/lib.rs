//! Semantic and lexical search over task history.
//!
//! - [`chunk`]: what people said in a task (user and assistant text, no tool payloads), cut into
//!   chunks of about 800 characters with stable ids.
//! - [`grep`]: every occurrence of a literal or a regular expression in the dialogue of every
//!   task, message by message (user, assistant, tool inputs, tool results).
//! - [`lexical`]: BM25-style sparse vectors, so identifiers and error strings are findable and
//!   search works without any model.
//! - [`embed`]: embedders behind one trait (local all-MiniLM-L6-v2 with candle, a static model
//!   distilled from it, an OpenAI-compatible HTTP service, or none).
//! - [`phrase`]: word order: exact phrases (`"…"`) and the in-order boost, checked on the
//!   text of candidate chunks.
//! - [`store`]: vector stores behind one trait (Qdrant Edge in-process, a Qdrant server, an
//!   in-memory store).
//! - [`index_tasks`]: incremental indexing (its [`progress`]: phase, counts, time left);
//!   [`search_tasks_semantic`]: search grouped by task.
//! - [`fetch_model`]: install the local model (download or local wheel, verified, atomic), from
//!   roo-model, with its errors as this crate's.

pub mod chunk;
pub mod embed;
pub mod error;
pub mod grep;
pub mod index;
pub mod lexical;
pub mod paths;
pub mod phrase;
pub mod progress;
pub mod scope;
pub mod search;
pub mod state;
pub mod store;

pub use embed::{EmbedderConfig, EmbedderId};
pub use error::{Error, Result};
pub use index::{index_status, index_tasks, IndexOptions, IndexProgress, IndexReport, IndexStatus};
pub use roo_model::{ModelFetchOptions, ModelFetchReport, ModelStatus};

/// Whether the local model is installed ([`roo_model::model_status`]), and whether this build can
/// run it (cargo feature `local-model`).
pub fn model_status(dir: Option<&std::path::Path>) -> ModelStatus {
    ModelStatus {
        runnable: cfg!(feature = "local-model"),
        ..roo_model::model_status(dir)
    }
}

/// Install the local model ([`roo_model::fetch_model`]), its errors as this crate's.
pub fn fetch_model(
    opts: &ModelFetchOptions,
    progress: impl Fn(u64, u64),
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<ModelFetchReport> {
    roo_model::fetch_model(opts, progress, cancel).map_err(Error::from)
}
pub use grep::{grep_tasks, GrepOptions, GrepReport};
pub use search::{search_tasks_semantic, Mode, SearchOptions, SearchResponse};
pub use store::{QdrantConfig, StoreConfig};
