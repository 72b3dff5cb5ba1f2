//! Vector stores behind one trait: Qdrant Edge in-process (the default), a Qdrant server, and a
//! small in-memory store (tests, and builds without the `edge` feature).
//!
//! Every store holds one collection (`roo_tasks_semantic_index` unless told otherwise) whose
//! points have an optional dense vector `dense`, a sparse vector `lexical` (BM25 weights, the
//! store applying the inverse document frequency) and the payload of [`ChunkPayload`], with
//! payload indexes on `task_id`, `workspace` (and its normalised key and base name), `source` and
//! `timestamp`.

#[cfg(feature = "edge")]
pub mod edge;
pub mod memory;
#[cfg(feature = "remote")]
pub mod remote;

use crate::error::{Error, Result};
use crate::lexical::SparseVec;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use uuid::Uuid;

/// The collection name of seed 004.
pub const COLLECTION: &str = "roo_tasks_semantic_index";
/// Name of the dense vector.
pub const DENSE: &str = "dense";
/// Name of the sparse (lexical) vector.
pub const SPARSE: &str = "lexical";

/// Payload fields that get an index.
/// (`source` is filtered on without an index in collections made before it had one.)
pub const KEYWORD_INDEXES: [&str; 5] = [
    "task_id",
    "workspace",
    "workspace_key",
    "workspace_name",
    "source",
];
pub const INTEGER_INDEXES: [&str; 1] = ["timestamp"];

/// The payload of a chunk (seed 004 §2.3 plus workspace, role, host and position).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkPayload {
    pub task_id: String,
    /// `ui_messages.json`, `claude_messages.json` or `api_conversation_history.json`.
    pub source_file: String,
    /// Seconds since the epoch of the chunk's first message.
    pub timestamp: i64,
    /// Milliseconds since the epoch of the first and last messages of the chunk.
    pub timestamp_ms: i64,
    pub end_timestamp_ms: i64,
    pub dialogue_snippet: String,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub workspace: Option<String>,
    /// `workspace` normalised (separators, case) for exact filtering.
    #[serde(default)]
    pub workspace_key: Option<String>,
    /// The last path component of the workspace, lower case.
    #[serde(default)]
    pub workspace_name: Option<String>,
    /// `user`, `assistant` or `mixed`.
    pub role: String,
    pub host: String,
    /// Position of the chunk in its task, from 0.
    pub chunk_index: u32,
    #[serde(default)]
    pub task_title: Option<String>,
    #[serde(default)]
    pub parent_task_id: Option<String>,
    /// A label of `roo_formats::host::SOURCES`.
    #[serde(default)]
    pub source: Option<String>,
}

/// A point to store.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub id: Uuid,
    #[serde(default)]
    pub dense: Option<Vec<f32>>,
    pub sparse: SparseVec,
    pub payload: ChunkPayload,
}

/// A point found by a search.
#[derive(Debug, Clone)]
pub struct Hit {
    pub id: Uuid,
    pub score: f32,
    pub payload: ChunkPayload,
}

/// Conditions every hit must meet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub workspace_key: Option<String>,
    pub workspace_name: Option<String>,
    /// Inclusive bounds on `timestamp` (seconds).
    pub from_s: Option<i64>,
    pub to_s: Option<i64>,
    pub task_id: Option<String>,
    /// Only chunks of one of these tasks (a subtree).
    pub task_ids: Option<Vec<String>>,
    /// Only chunks of this host family (`source`, lower case).
    pub source: Option<String>,
}

impl Filter {
    /// Whether a payload meets the filter (used by the in-memory store and to re-check hits).
    pub fn accepts(&self, p: &ChunkPayload) -> bool {
        if let Some(k) = &self.workspace_key {
            if p.workspace_key.as_deref() != Some(k.as_str()) {
                return false;
            }
        }
        if let Some(n) = &self.workspace_name {
            if p.workspace_name.as_deref() != Some(n.as_str()) {
                return false;
            }
        }
        if let Some(t) = &self.task_id {
            if &p.task_id != t {
                return false;
            }
        }
        if let Some(ids) = &self.task_ids {
            if !ids.contains(&p.task_id) {
                return false;
            }
        }
        if let Some(h) = &self.source {
            if p.source.as_deref() != Some(h.as_str()) {
                return false;
            }
        }
        if self.from_s.is_some_and(|f| p.timestamp < f)
            || self.to_s.is_some_and(|t| p.timestamp > t)
        {
            return false;
        }
        true
    }
}

/// What to search with.
#[derive(Debug, Clone, Copy)]
pub enum Query<'a> {
    Dense(&'a [f32]),
    Sparse(&'a SparseVec),
}

/// What a store holds before indexing starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    Absent,
    /// The collection exists; `dense_dim` is `None` when it has no dense vector.
    Present {
        dense_dim: Option<usize>,
    },
    /// The collection is on disk but cannot be loaded (damaged files); indexing starts again.
    Damaged,
}

/// A vector store holding one collection.
pub trait VectorStore: Send + Sync {
    /// `edge`, `qdrant` or `memory`.
    fn kind(&self) -> &'static str;
    /// Where it is, for messages (`embedded Qdrant Edge at …`).
    fn location(&self) -> String;
    fn inspect(&self) -> Result<Existing>;
    /// Create the collection with the given dense dimension (none: lexical only) and indexes.
    fn create(&self, dense_dim: Option<usize>) -> Result<()>;
    /// Remove the collection and every point in it.
    fn drop_collection(&self) -> Result<()>;
    fn upsert(&self, points: Vec<Point>) -> Result<()>;
    fn delete(&self, ids: &[Uuid]) -> Result<()>;
    fn search(&self, query: Query<'_>, filter: &Filter, limit: usize) -> Result<Vec<Hit>>;
    fn count(&self) -> Result<u64>;
    /// Make what was written durable; after a bulk load, also build the search structures.
    fn commit(&self, bulk_loaded: bool) -> Result<()>;
    /// A digest of the stored vectors' files, for a store on disk that can give one (`None`
    /// otherwise): equal to the one taken after the last commit unless a file changed since.
    fn vectors_digest(&self) -> Option<u64> {
        None
    }
}

/// Which store to use.
#[derive(Debug, Clone, Default)]
pub enum StoreConfig {
    /// A Qdrant server when `QDRANT_URL` is set, else Qdrant Edge (else the in-memory store
    /// persisted in the index directory, in builds without the `edge` feature).
    #[default]
    Auto,
    /// Qdrant Edge in `path` (default `<index dir>/edge/<collection>`).
    Edge { path: Option<PathBuf> },
    /// A Qdrant server.
    Qdrant(QdrantConfig),
    /// In memory, saved to `path` when given.
    Memory { path: Option<PathBuf> },
}

/// How to reach a Qdrant server.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QdrantConfig {
    /// gRPC URL (`http://localhost:6334`); `QDRANT_URL` when unset.
    pub url: Option<String>,
    /// `QDRANT_API_KEY` when unset.
    pub api_key: Option<String>,
    /// Per-call timeout in ms (default `QDRANT_TIMEOUT_MS` or 15 000).
    pub timeout_ms: Option<u64>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The collection name: the given one, `QDRANT_COLLECTION_NAME`, or [`COLLECTION`].
pub fn collection_name(given: Option<&str>) -> String {
    given
        .map(str::to_owned)
        .or_else(|| env("QDRANT_COLLECTION_NAME"))
        .unwrap_or_else(|| COLLECTION.to_owned())
}

/// A store configuration with everything resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum ResolvedStore {
    Edge(PathBuf),
    Qdrant(QdrantConfig),
    Memory(Option<PathBuf>),
}

impl ResolvedStore {
    /// A stable identity of the store and collection (names the state file).
    pub fn identity(&self, collection: &str) -> String {
        match self {
            ResolvedStore::Edge(p) => format!("edge:{}", p.display()),
            ResolvedStore::Qdrant(q) => {
                format!("qdrant:{}#{collection}", q.url.as_deref().unwrap_or(""))
            }
            ResolvedStore::Memory(p) => match p {
                Some(p) => format!("memory:{}", p.display()),
                None => "memory:".to_owned(),
            },
        }
    }

    /// The key of the state file: [`ResolvedStore::identity`], except that a store inside the
    /// index directory is named relative to it, so the index is found again by any name of its
    /// folder and after the folder is copied or moved.
    pub fn state_key(&self, index_dir: &Path, collection: &str) -> String {
        let inside = |p: &Path| {
            p.strip_prefix(index_dir).ok().map(|rel| {
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/")
            })
        };
        match self {
            ResolvedStore::Edge(p) => inside(p).map(|r| format!("edge:@index/{r}")),
            ResolvedStore::Memory(Some(p)) => inside(p).map(|r| format!("memory:@index/{r}")),
            _ => None,
        }
        .unwrap_or_else(|| self.identity(collection))
    }

    pub fn kind(&self) -> &'static str {
        match self {
            ResolvedStore::Edge(_) => "edge",
            ResolvedStore::Qdrant(_) => "qdrant",
            ResolvedStore::Memory(_) => "memory",
        }
    }
}

/// Resolve `config` against the environment and the index directory.
pub fn resolve(config: &StoreConfig, index_dir: &Path, collection: &str) -> ResolvedStore {
    let edge_default = || index_dir.join("edge").join(collection);
    match config {
        StoreConfig::Auto => {
            if let Some(url) = env("QDRANT_URL") {
                return ResolvedStore::Qdrant(QdrantConfig {
                    url: Some(url),
                    api_key: env("QDRANT_API_KEY"),
                    timeout_ms: env("QDRANT_TIMEOUT_MS").and_then(|t| t.parse().ok()),
                });
            }
            if cfg!(feature = "edge") {
                ResolvedStore::Edge(edge_default())
            } else {
                ResolvedStore::Memory(Some(index_dir.join(format!("{collection}.memory.json"))))
            }
        }
        StoreConfig::Edge { path } => {
            ResolvedStore::Edge(path.clone().unwrap_or_else(edge_default))
        }
        StoreConfig::Qdrant(q) => {
            let mut q = q.clone();
            if q.url.is_none() {
                q.url = env("QDRANT_URL");
            }
            if q.api_key.is_none() {
                q.api_key = env("QDRANT_API_KEY");
            }
            if q.timeout_ms.is_none() {
                q.timeout_ms = env("QDRANT_TIMEOUT_MS").and_then(|t| t.parse().ok());
            }
            ResolvedStore::Qdrant(q)
        }
        StoreConfig::Memory { path } => ResolvedStore::Memory(path.clone()),
    }
}

type Registry = Mutex<HashMap<String, Arc<dyn VectorStore>>>;

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Open a store, sharing one instance per store and collection within the process (an embedded
/// store stays open, with its lock held, until [`close`] is called).
pub fn open(resolved: &ResolvedStore, collection: &str) -> Result<Arc<dyn VectorStore>> {
    let key = resolved.identity(collection);
    let mut reg = registry()
        .lock()
        .map_err(|_| Error::store(key.clone(), "the store registry was poisoned"))?;
    if let Some(s) = reg.get(&key) {
        return Ok(s.clone());
    }
    let store: Arc<dyn VectorStore> = match resolved {
        ResolvedStore::Memory(path) => Arc::new(memory::MemoryStore::open(path.clone())?),
        #[cfg(feature = "edge")]
        ResolvedStore::Edge(path) => Arc::new(edge::EdgeStore::open(path)?),
        #[cfg(not(feature = "edge"))]
        ResolvedStore::Edge(_) => return Err(Error::FeatureMissing { feature: "edge" }),
        #[cfg(feature = "remote")]
        ResolvedStore::Qdrant(q) => Arc::new(remote::RemoteStore::connect(q, collection)?),
        #[cfg(not(feature = "remote"))]
        ResolvedStore::Qdrant(_) => return Err(Error::FeatureMissing { feature: "remote" }),
    };
    reg.insert(key, store.clone());
    Ok(store)
}

/// Close the stores whose identity starts with `prefix` (all of them for `""`): embedded stores
/// are released once the searches running on them end.
pub fn close(prefix: &str) -> usize {
    match registry().lock() {
        Ok(mut reg) => {
            let before = reg.len();
            reg.retain(|k, _| !k.starts_with(prefix));
            before - reg.len()
        }
        Err(_) => 0,
    }
}

/// Close the stores that live under `index_dir` (embedded and in-memory ones).
pub fn close_dir(index_dir: &Path) -> usize {
    // Stores are opened under the canonical path of their index directory.
    let index_dir = std::fs::canonicalize(index_dir)
        .or_else(|_| std::path::absolute(index_dir))
        .unwrap_or_else(|_| index_dir.to_path_buf());
    let shown = index_dir.display().to_string();
    close(&format!("edge:{shown}")) + close(&format!("memory:{shown}"))
}
