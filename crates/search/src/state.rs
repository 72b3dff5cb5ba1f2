//! The index's memory of what it holds: the embedder that made its vectors, and for each task the
//! size and modification time of its source files (the same change rule as the skeleton cache),
//! the ids of its chunks and what a search shows about it.

use crate::embed::http::HttpConfig;
use crate::embed::{self, EmbedderConfig, EmbedderId};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use uuid::Uuid;

/// Version of the state file and of the chunking rules: a change rebuilds the index.
pub const FORMAT: u32 = 1;

/// Size and modification time of one source file of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSig {
    pub name: String,
    pub size: u64,
    pub mtime_ms: i64,
}

/// The files that decide whether a task changed.
pub const SOURCE_FILES: [&str; 5] = [
    "ui_messages.json",
    "claude_messages.json",
    "api_conversation_history.json",
    "history_item.json",
    "task_metadata.json",
];

/// The signature of a task directory: its source files that exist, in a fixed order.
pub fn task_signature(task_dir: &Path) -> Vec<FileSig> {
    SOURCE_FILES
        .iter()
        .filter_map(|name| {
            let md = std::fs::metadata(task_dir.join(name)).ok()?;
            if !md.is_file() {
                // A directory where a file should be is part of the shape too.
                return Some(FileSig {
                    name: (*name).to_owned(),
                    size: u64::MAX,
                    mtime_ms: 0,
                });
            }
            let mtime_ms = md
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as i64);
            Some(FileSig {
                name: (*name).to_owned(),
                size: md.len(),
                mtime_ms,
            })
        })
        .collect()
}

/// What the index holds about one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    pub tasks_dir: String,
    pub files: Vec<FileSig>,
    /// Hash of the task-level payload fields (title, workspace, parent, source, host).
    pub meta_hash: u64,
    pub chunk_ids: Vec<Uuid>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub workspace: Option<String>,
    #[serde(default)]
    pub parent_task_id: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub last_activity: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    pub indexed_at_ms: i64,
    /// The other copies of the task, when several stores hold it (the one indexed is the newer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_in: Vec<roo_store::task_store::AlsoIn>,
}

/// The whole state of one index (one store and collection).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexState {
    pub format: u32,
    pub store: String,
    pub collection: String,
    pub embedder: EmbedderId,
    /// How to reach the HTTP embedder again at search time (never the key).
    #[serde(default)]
    pub http: Option<HttpConfig>,
    /// Where the local model was read from.
    #[serde(default)]
    pub model_dir: Option<PathBuf>,
    /// Grows by one on every saved change.
    pub generation: u64,
    pub tasks: BTreeMap<String, TaskRecord>,
    pub updated_at_ms: i64,
    /// The XXH3 of the stored vectors' files when this state was saved (a store on disk only):
    /// the next run finds a page damaged since (zeroed, cut, altered) by it and starts again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors_digest: Option<u64>,
}

impl IndexState {
    /// Name the other copies of each task several stores hold (from the task store's
    /// `shared_tasks`), and no copy for the others.
    pub(crate) fn name_copies(&mut self, shared: Vec<roo_store::task_store::SharedTask>) {
        for r in self.tasks.values_mut() {
            r.also_in.clear();
        }
        for s in shared {
            if let Some(r) = self.tasks.get_mut(&s.task_id) {
                r.also_in = s.also_in;
            }
        }
    }

    /// What the state keeps of the embedder so that a search can make the same one: an HTTP
    /// service's settings (never its key), or the local model's folder.
    pub(crate) fn remember_embedder(&mut self, config: &EmbedderConfig, eid: &EmbedderId) {
        self.http = match config {
            EmbedderConfig::Http(cfg) if eid.kind == "http" => {
                let mut saved = cfg.clone().with_env();
                saved.api_key = None;
                saved.dimensions = Some(eid.dimension);
                Some(saved)
            }
            _ => None,
        };
        let local = matches!(eid.kind.as_str(), "local" | "static");
        self.model_dir = match config {
            EmbedderConfig::Local { model_dir: Some(d) }
            | EmbedderConfig::Static { model_dir: Some(d) }
                if local =>
            {
                Some(d.clone())
            }
            EmbedderConfig::Local { .. } | EmbedderConfig::Static { .. } | EmbedderConfig::Auto
                if local =>
            {
                Some(embed::default_model_dir())
            }
            _ => None,
        };
    }

    pub fn new(store: String, collection: String, embedder: EmbedderId) -> Self {
        Self {
            format: FORMAT,
            store,
            collection,
            embedder,
            http: None,
            model_dir: None,
            generation: 0,
            tasks: BTreeMap::new(),
            updated_at_ms: now_ms(),
            vectors_digest: None,
        }
    }

    pub fn chunk_count(&self) -> usize {
        self.tasks.values().map(|t| t.chunk_ids.len()).sum()
    }
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The state file of a store identity inside `index_dir`.
pub fn state_path(index_dir: &Path, store_identity: &str) -> PathBuf {
    let h = xxhash_rust::xxh3::xxh3_64(store_identity.as_bytes());
    index_dir.join(format!("state-{h:016x}.json"))
}

/// Read a state file. A missing file is `Ok(None)`; a damaged one or one of another format is
/// also `Ok(None)` with the reason, so the caller rebuilds instead of failing forever.
pub fn load(path: &Path) -> Result<(Option<IndexState>, Option<String>)> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, None)),
        Err(e) => return Err(Error::io(path, e)),
    };
    match serde_json::from_slice::<IndexState>(&bytes) {
        Ok(s) if s.format == FORMAT => Ok((Some(s), None)),
        Ok(s) => Ok((
            None,
            Some(format!(
                "the index was written by another version (format {} instead of {FORMAT})",
                s.format
            )),
        )),
        Err(e) => Ok((
            None,
            Some(format!("the index state file was damaged ({e})")),
        )),
    }
}

type Cache = Mutex<HashMap<PathBuf, (u64, Option<std::time::SystemTime>, Arc<IndexState>)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// [`load`], kept in memory while the file's size and modification time stay the same: a search
/// then costs one `stat` instead of parsing the list of every chunk id.
pub fn load_cached(path: &Path) -> Result<Option<Arc<IndexState>>> {
    let cache = cache();
    let md = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    let key = (md.len(), md.modified().ok());
    if let Ok(c) = cache.lock() {
        if let Some((len, mtime, st)) = c.get(path) {
            if (*len, *mtime) == key {
                return Ok(Some(st.clone()));
            }
        }
    }
    let (st, _) = load(path)?;
    let Some(st) = st else { return Ok(None) };
    let st = Arc::new(st);
    if let Ok(mut c) = cache.lock() {
        c.insert(path.to_path_buf(), (key.0, key.1, st.clone()));
    }
    Ok(Some(st))
}

/// Save a state file atomically.
pub fn save(path: &Path, state: &IndexState) -> Result<()> {
    if let Ok(mut c) = cache().lock() {
        c.remove(path);
    }
    let bytes = serde_json::to_vec(state)
        .map_err(|e| Error::io(path, std::io::Error::other(e.to_string())))?;
    write_atomic(path, &bytes)
}

/// Write `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}
