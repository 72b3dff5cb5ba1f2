//! What indexing and [`super::index_status`] report.

use crate::embed::EmbedderId;
use serde::Serialize;

/// A task that could not be indexed (the others were).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SearchIndexFailure"))]
pub struct TaskFailure {
    pub task_id: String,
    pub message: String,
}

/// Where the index is.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SearchStoreInfo"))]
pub struct StoreSummary {
    /// `edge`, `qdrant` or `memory`.
    #[cfg_attr(feature = "ts", ts(type = "\"edge\" | \"qdrant\" | \"memory\""))]
    pub kind: String,
    pub location: String,
    pub collection: String,
}

/// What an indexing run did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "SearchIndexReport", optional_fields)
)]
pub struct IndexReport {
    pub index_dir: String,
    pub tasks_dirs: Vec<String>,
    /// Task directories seen.
    pub tasks_seen: usize,
    /// Tasks whose files had not changed since the last run.
    pub tasks_unchanged: usize,
    /// Tasks read again because their files changed (or were new).
    pub tasks_indexed: usize,
    /// Up to 1 000 ids of the tasks read again.
    pub indexed_task_ids: Vec<String>,
    /// Tasks gone from disk whose chunks were removed.
    pub tasks_removed: usize,
    pub failures: Vec<TaskFailure>,
    /// Chunks embedded and written in this run.
    pub chunks_embedded: usize,
    /// Chunks removed (tasks gone or shrunk, content changed).
    pub chunks_deleted: usize,
    /// Chunks the index holds after the run.
    pub chunks_total: usize,
    pub embedder: EmbedderId,
    pub store: StoreSummary,
    /// Why the index was rebuilt from scratch, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuilt: Option<String>,
    pub cancelled: bool,
    pub duration_ms: u64,
    /// Things a person should know (a fallback taken).
    pub notes: Vec<String>,
}

/// What an index holds, without changing it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "SearchIndexStatus", optional_fields)
)]
pub struct IndexStatus {
    pub index_dir: String,
    pub exists: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedder: Option<EmbedderId>,
    pub tasks: usize,
    pub chunks: usize,
    pub store: StoreSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Whether the local model is installed (and built in), and where it is looked for.
    pub local_model_available: bool,
    pub model_dir: String,
}
