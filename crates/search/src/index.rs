//! Incremental indexing of task folders.
//!
//! A task is read again only when the size or modification time of one of its source files
//! changed. Its chunks are then compared by id (task id + position + content hash): chunks that
//! disappeared are deleted, new ones are embedded and stored, unchanged ones are left alone. Tasks
//! that vanished lose their chunks. The index remembers the embedder; a different model or
//! dimension rebuilds it from scratch, and the report says so.

use crate::chunk::{self, ChunkOptions};
use crate::embed::{self, Embedder, EmbedderConfig, EmbedderId, Purpose};
use crate::error::{Error, Result};
use crate::lexical;
use crate::paths;
use crate::progress::{self, eta};
pub use crate::progress::{IndexProgress, ProgressFn};
use crate::state::{self, IndexState, TaskRecord};
use crate::store::{self, ChunkPayload, Existing, Point, ResolvedStore, StoreConfig, VectorStore};
use rayon::prelude::*;
use roo_formats::diag::Diagnostic;
use roo_state::skeleton::{analyze_task, AnalyzeOptions, ConversationSkeleton};
use roo_store::task_store::{TaskStore, Watch};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use uuid::Uuid;

/// Options of [`index_tasks`].
#[derive(Default)]
pub struct IndexOptions<'a> {
    /// `tasks/` folders to index; empty: the extensions' folders found on this machine.
    pub tasks_dirs: Vec<PathBuf>,
    /// Where the index state (and the embedded store) lives; default `<data dir>/search`.
    pub index_dir: Option<PathBuf>,
    pub embedder: EmbedderConfig,
    pub store: StoreConfig,
    pub collection: Option<String>,
    /// Drop what the index holds and start again.
    pub rebuild: bool,
    pub chunking: Option<ChunkOptions>,
    pub on_progress: Option<ProgressFn<'a>>,
    pub cancel: Option<&'a AtomicBool>,
}

/// A task that could not be indexed (the others were).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskFailure {
    pub task_id: String,
    pub message: String,
}

/// Where the index is.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreSummary {
    /// `edge`, `qdrant` or `memory`.
    pub kind: String,
    pub location: String,
    pub collection: String,
}

/// What an indexing run did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
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

/// The exclusive right to write one index directory: a lock within the process and a file lock
/// across processes.
struct WriteLock {
    key: PathBuf,
    _file: File,
}

fn held() -> &'static Mutex<HashSet<PathBuf>> {
    static HELD: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    HELD.get_or_init(|| Mutex::new(HashSet::new()))
}

impl WriteLock {
    fn acquire(index_dir: &Path) -> Result<Self> {
        use fs4::fs_std::FileExt;
        let key = index_dir.to_path_buf();
        {
            let mut h = held().lock().map_err(|_| Error::Busy(key.clone()))?;
            if !h.insert(key.clone()) {
                return Err(Error::Busy(key));
            }
        }
        let release = |key: &PathBuf| {
            if let Ok(mut h) = held().lock() {
                h.remove(key);
            }
        };
        let path = index_dir.join(".index.lock");
        let file = match std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) => {
                release(&key);
                return Err(Error::io(path, e));
            }
        };
        match file.try_lock_exclusive() {
            Ok(true) => Ok(Self { key, _file: file }),
            Ok(false) => {
                release(&key);
                Err(Error::Busy(index_dir.to_path_buf()))
            }
            Err(e) => {
                release(&key);
                Err(Error::io(path, e))
            }
        }
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        if let Ok(mut h) = held().lock() {
            h.remove(&self.key);
        }
    }
}

/// A task read from disk, ready to be embedded.
struct Prepared {
    task_id: String,
    record: TaskRecord,
    points: Vec<Point>,
    failure: Option<String>,
}

/// Task-level payload fields, hashed to notice a change of title, workspace or parent.
fn meta_hash(p: &ChunkPayloadMeta) -> u64 {
    let s = format!(
        "{:?}\u{1}{:?}\u{1}{:?}\u{1}{:?}\u{1}{}\u{1}{:?}",
        p.title, p.workspace, p.parent, p.source, p.host, p.user
    );
    xxhash_rust::xxh3::xxh3_64(s.as_bytes())
}

struct ChunkPayloadMeta {
    title: Option<String>,
    workspace: Option<String>,
    parent: Option<String>,
    source: Option<String>,
    host: String,
    user: Option<String>,
}

/// The parent a task's chunks name: the hierarchy's, else what its files store.
fn meta_parent(s: &ConversationSkeleton) -> Option<String> {
    s.parent_task_id
        .clone()
        .or_else(|| s.stored_links.history_item_parent.clone())
        .or_else(|| s.stored_links.metadata_parent.clone())
}

fn workspace_name(ws: &str) -> Option<String> {
    let key = roo_state::hierarchy::normalize_workspace(ws);
    roo_state::hierarchy::workspace_folder(&key).map(str::to_owned)
}

#[allow(clippy::too_many_arguments)]
fn chunk_task(
    task_id: &str,
    task_dir: &Path,
    tasks_dir: &str,
    files: Vec<state::FileSig>,
    header: Option<std::result::Result<&ConversationSkeleton, &[Diagnostic]>>,
    host: &str,
    user: Option<&String>,
    chunking: &ChunkOptions,
) -> Prepared {
    // A folder the task store does not hold (gone or renamed between the listing and the store's
    // open) is read here, which reports why it has no header.
    let read;
    let header = match header {
        Some(h) => h,
        None => {
            read = analyze_task(
                task_id,
                task_dir,
                &AnalyzeOptions {
                    include_sequence: false,
                    ..AnalyzeOptions::default()
                },
            );
            read.as_ref().map_err(Vec::as_slice)
        }
    };
    let (meta, created_ms, last_ms, created, last, failure) = match &header {
        Ok(s) => (
            ChunkPayloadMeta {
                title: s.metadata.title.clone(),
                workspace: s.metadata.workspace.clone(),
                parent: meta_parent(s),
                source: Some(s.metadata.source.clone()),
                host: host.to_owned(),
                user: user.cloned(),
            },
            s.created_at_ms,
            s.last_activity_ms,
            Some(s.metadata.created_at.clone()),
            Some(s.metadata.last_activity.clone()),
            None,
        ),
        Err(diags) => (
            ChunkPayloadMeta {
                title: None,
                workspace: None,
                parent: None,
                source: None,
                host: host.to_owned(),
                user: user.cloned(),
            },
            None,
            None,
            None,
            None,
            Some(
                diags
                    .first()
                    .map(|d| d.message.clone())
                    .unwrap_or_else(|| "the folder holds no task files".to_owned()),
            ),
        ),
    };
    let dialogue = chunk::extract_dialogue(task_dir);
    let texts = chunk::chunk_dialogue(&dialogue.messages, chunking);
    let fallback_ts = created_ms.or(last_ms).unwrap_or(0);
    let ws_key = meta
        .workspace
        .as_deref()
        .map(roo_state::hierarchy::normalize_workspace);
    let ws_name = meta.workspace.as_deref().and_then(workspace_name);
    let points: Vec<Point> = texts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let first = c.first_ts.unwrap_or(fallback_ts);
            let last = c.last_ts.unwrap_or(first);
            Point {
                id: chunk::chunk_id(task_id, i, &c.text),
                dense: None,
                sparse: lexical::document_vector(&c.text),
                payload: ChunkPayload {
                    task_id: task_id.to_owned(),
                    source_file: dialogue.source_file.clone(),
                    timestamp: first.div_euclid(1000),
                    timestamp_ms: first,
                    end_timestamp_ms: last,
                    dialogue_snippet: c.text.clone(),
                    user: meta.user.clone(),
                    workspace: meta.workspace.clone(),
                    workspace_key: ws_key.clone(),
                    workspace_name: ws_name.clone(),
                    role: c.role.to_owned(),
                    host: meta.host.clone(),
                    chunk_index: i as u32,
                    task_title: meta.title.clone(),
                    parent_task_id: meta.parent.clone(),
                    source: meta.source.clone(),
                },
            }
        })
        .collect();
    let record = TaskRecord {
        tasks_dir: tasks_dir.to_owned(),
        files,
        meta_hash: meta_hash(&meta),
        chunk_ids: points.iter().map(|p| p.id).collect(),
        title: meta.title.clone(),
        workspace: meta.workspace.clone(),
        parent_task_id: meta.parent.clone(),
        created_at: created,
        last_activity: last,
        source: meta.source.clone(),
        indexed_at_ms: state::now_ms(),
    };
    Prepared {
        task_id: task_id.to_owned(),
        record,
        points,
        failure,
    }
}

/// The resolved pieces every entry point needs.
pub(crate) struct Target {
    pub index_dir: PathBuf,
    pub collection: String,
    pub resolved: ResolvedStore,
    pub state_path: PathBuf,
}

pub(crate) fn target(
    index_dir: Option<&Path>,
    store_cfg: &StoreConfig,
    collection: Option<&str>,
) -> Target {
    let index_dir = index_dir.map_or_else(paths::default_index_dir, Path::to_path_buf);
    let collection = store::collection_name(collection);
    let resolved = store::resolve(store_cfg, &index_dir, &collection);
    let state_path = state::state_path(&index_dir, &resolved.identity(&collection));
    Target {
        index_dir,
        collection,
        resolved,
        state_path,
    }
}

/// Index (or bring up to date) the tasks of `opts.tasks_dirs`.
pub fn index_tasks(opts: &IndexOptions) -> Result<IndexReport> {
    let started = std::time::Instant::now();
    let cancelled = || opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let t = target(
        opts.index_dir.as_deref(),
        &opts.store,
        opts.collection.as_deref(),
    );
    std::fs::create_dir_all(&t.index_dir).map_err(|e| Error::io(&t.index_dir, e))?;

    // Inputs first, so a wrong path fails before anything is touched.
    let tasks_dirs = if opts.tasks_dirs.is_empty() {
        let found = paths::discover_tasks_dirs();
        if found.is_empty() {
            return Err(Error::NoTasksDir);
        }
        found
    } else {
        opts.tasks_dirs.clone()
    };
    let (listing, dir_names) = list_tasks(&tasks_dirs)?;

    // Linked headers (titles, workspaces, parents: stored or inferred) from the task store,
    // through our skeleton cache when it can be used.
    // A cancelled open leaves no handle; the run then stops before its first task.
    let (tasks, cache_note) = match TaskStore::open_with_default_cache(
        &roo_store::HostEnv::current(),
        tasks_dirs.clone(),
        Watch {
            on_progress: None,
            cancel: opts.cancel,
        },
    ) {
        Ok((t, note)) => (Some(t), note),
        Err(roo_store::StoreError::Aborted) => (None, None),
        Err(roo_store::StoreError::NotFound { path }) => return Err(Error::TasksDirNotFound(path)),
        Err(e) => return Err(Error::InvalidArgument(e.to_string())),
    };
    let header_of = |id: &str| tasks.as_ref().and_then(|t| t.header(id));

    let _lock = WriteLock::acquire(&t.index_dir)?;
    let mut notes: Vec<String> = cache_note.into_iter().collect();
    let embedder = progress::build_embedder(&opts.embedder, opts.on_progress, &mut notes)?;
    let eid = embedder.id()?;
    let store = store::open(&t.resolved, &t.collection)?;
    let (loaded, damaged) = state::load(&t.state_path)?;

    // Start again from nothing when asked, when the state is unusable, or when the vectors
    // would not match: never mix two embedders in one collection.
    let mut rebuilt: Option<String> = None;
    let mut drop_store = false;
    if opts.rebuild {
        rebuilt = Some("a rebuild was asked for".to_owned());
        drop_store = true;
    } else if let Some(why) = damaged {
        rebuilt = Some(why);
        // A shared server collection is kept: re-writing the same ids is harmless.
        drop_store = store.kind() != "qdrant";
    } else if let Some(s) = &loaded {
        if !s.embedder.same_vectors(&eid) {
            rebuilt = Some(format!(
                "the embedder changed from {} to {}",
                s.embedder, eid
            ));
            drop_store = true;
        }
    }
    let want_dim = eid.is_dense().then_some(eid.dimension);
    let existing = store.inspect()?;
    match existing {
        Existing::Absent => {
            if rebuilt.is_none() && loaded.as_ref().is_some_and(|s| !s.tasks.is_empty()) {
                rebuilt = Some(format!(
                    "the collection was missing from the {}",
                    store.location()
                ));
            }
        }
        Existing::Present { dense_dim } if dense_dim != want_dim && !drop_store => {
            if loaded.is_none() && store.kind() == "qdrant" && !opts.rebuild {
                return Err(Error::DimensionMismatch {
                    expected: dense_dim.unwrap_or(0),
                    got: eid.dimension,
                    context: format!(
                        "collection {} on the {} was made by another embedder; use that \
                         embedder, or pass rebuild to replace the collection",
                        t.collection,
                        store.location()
                    ),
                });
            }
            rebuilt.get_or_insert_with(|| {
                format!(
                    "the store held vectors of {} dimensions, the embedder gives {}",
                    dense_dim.unwrap_or(0),
                    eid.dimension
                )
            });
            drop_store = true;
        }
        Existing::Present { .. } => {}
    }
    let mut st = match (&rebuilt, loaded) {
        (None, Some(s)) => s,
        _ => IndexState::new(
            t.resolved.identity(&t.collection),
            t.collection.clone(),
            eid.clone(),
        ),
    };
    if drop_store && existing != Existing::Absent {
        store.drop_collection()?;
    }
    if drop_store || existing == Existing::Absent {
        store.create(want_dim)?;
    }
    st.embedder = eid.clone();
    st.remember_embedder(&opts.embedder, &eid);

    // What changed.
    let mut unchanged = 0usize;
    let mut todo: Vec<(String, PathBuf, String, Vec<state::FileSig>)> = Vec::new();
    let on_disk: HashSet<&str> = listing.iter().map(|(id, _, _)| id.as_str()).collect();
    for (id, path, dir) in &listing {
        let sig = state::task_signature(path);
        // A task whose files did not change is done again when its parent did (a parent
        // inferred, or a link that changed with other tasks).
        let parent_now = match header_of(id) {
            Some(Ok(h)) => meta_parent(h),
            _ => None,
        };
        match st.tasks.get(id) {
            Some(r) if r.files == sig && &r.tasks_dir == dir && r.parent_task_id == parent_now => {
                unchanged += 1
            }
            _ => todo.push((id.clone(), path.clone(), dir.clone(), sig)),
        }
    }
    let gone: Vec<String> = st
        .tasks
        .iter()
        .filter(|(id, r)| dir_names.contains(&r.tasks_dir) && !on_disk.contains(id.as_str()))
        .map(|(id, _)| id.clone())
        .collect();

    let mut report = IndexReport {
        index_dir: t.index_dir.display().to_string(),
        tasks_dirs: dir_names.iter().cloned().collect(),
        tasks_seen: listing.len(),
        tasks_unchanged: unchanged,
        tasks_indexed: 0,
        indexed_task_ids: Vec::new(),
        tasks_removed: 0,
        failures: Vec::new(),
        chunks_embedded: 0,
        chunks_deleted: 0,
        chunks_total: 0,
        embedder: eid.clone(),
        store: StoreSummary {
            kind: store.kind().to_owned(),
            location: store.location(),
            collection: t.collection.clone(),
        },
        rebuilt,
        cancelled: false,
        duration_ms: 0,
        notes,
    };
    // The ETA follows the bytes of the task files read so far (chunks follow the dialogue's size).
    // (A folder where a file should be has the size u64::MAX: it counts for nothing.)
    let task_bytes = |sigs: &[state::FileSig]| {
        sigs.iter()
            .filter(|s| s.size != u64::MAX)
            .fold(1u64, |n, s| n.saturating_add(s.size))
    };
    let total_bytes: u64 = todo
        .iter()
        .fold(0, |n, (_, _, _, sig)| n.saturating_add(task_bytes(sig)));
    let mut done_bytes = 0u64;
    let index_start = std::time::Instant::now();
    let progress = |done: usize, done_bytes: u64, chunks: usize, phase: &'static str| {
        if let Some(cb) = opts.on_progress {
            cb(&IndexProgress {
                phase,
                done,
                total: todo.len(),
                chunks_embedded: chunks,
                elapsed_ms: index_start.elapsed().as_millis() as u64,
                eta_ms: eta(index_start.elapsed(), done_bytes, total_bytes),
            });
        }
    };
    progress(0, 0, 0, "scanning");

    for id in &gone {
        if let Some(r) = st.tasks.remove(id) {
            store.delete(&r.chunk_ids)?;
            report.chunks_deleted += r.chunk_ids.len();
            report.tasks_removed += 1;
        }
    }

    let host = paths::host_name();
    let user = paths::user_name();
    let chunking = opts.chunking.unwrap_or_default();
    // Smaller groups when embedding is slow (a sentence model, a service), so progress and saved
    // state move often; the static model embeds about as fast as the lexical vectors are made.
    let slow_embedder = eid.is_dense() && eid.kind != "static";
    let group_size = if slow_embedder { 8 } else { 64 };
    let mut done = 0usize;
    for group in todo.chunks(group_size) {
        if cancelled() {
            report.cancelled = true;
            break;
        }
        let prepared: Vec<Prepared> = group
            .par_iter()
            .map(|(id, path, dir, sig)| {
                let header = header_of(id);
                chunk_task(
                    id,
                    path,
                    dir,
                    sig.clone(),
                    header,
                    &host,
                    user.as_ref(),
                    &chunking,
                )
            })
            .collect();
        // Deletions and the points to embed.
        let mut pending: Vec<Point> = Vec::new();
        for p in &prepared {
            let old = st.tasks.get(&p.task_id);
            let old_ids: HashSet<Uuid> = old
                .map(|r| r.chunk_ids.iter().copied().collect())
                .unwrap_or_default();
            let new_ids: HashSet<Uuid> = p.record.chunk_ids.iter().copied().collect();
            let meta_changed = old.is_none_or(|r| r.meta_hash != p.record.meta_hash);
            let stale: Vec<Uuid> = old_ids.difference(&new_ids).copied().collect();
            if !stale.is_empty() {
                store.delete(&stale)?;
                report.chunks_deleted += stale.len();
            }
            pending.extend(
                p.points
                    .iter()
                    .filter(|pt| meta_changed || !old_ids.contains(&pt.id))
                    .cloned(),
            );
        }
        let aborted = embed_and_store(
            embedder.as_ref(),
            eid.is_dense(),
            store.as_ref(),
            pending,
            &cancelled,
            &mut |n| {
                report.chunks_embedded += n;
                progress(done, done_bytes, report.chunks_embedded, "indexing");
            },
        )?;
        if aborted {
            report.cancelled = true;
            break;
        }
        for p in prepared {
            if let Some(message) = p.failure {
                report.failures.push(TaskFailure {
                    task_id: p.task_id.clone(),
                    message,
                });
            }
            if report.indexed_task_ids.len() < 1000 {
                report.indexed_task_ids.push(p.task_id.clone());
            }
            report.tasks_indexed += 1;
            st.tasks.insert(p.task_id, p.record);
        }
        done += group.len();
        done_bytes = group.iter().fold(done_bytes, |n, (_, _, _, sig)| {
            n.saturating_add(task_bytes(sig))
        });
        progress(done, done_bytes, report.chunks_embedded, "indexing");
        st.generation += 1;
        st.updated_at_ms = state::now_ms();
        // Points first, then the state that names them: a crash in between only re-embeds.
        store.commit(false)?;
        state::save(&t.state_path, &st)?;
    }

    progress(done, done_bytes, report.chunks_embedded, "finishing");
    let bulk = report.chunks_embedded >= 5_000;
    store.commit(bulk)?;
    st.generation += 1;
    st.updated_at_ms = state::now_ms();
    state::save(&t.state_path, &st)?;
    report.chunks_total = st.chunk_count();
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Every task folder of the stores, with its store (the same task id in two stores, a migrated
/// copy, is indexed once), and the stores' names.
#[allow(clippy::type_complexity)]
fn list_tasks(
    tasks_dirs: &[PathBuf],
) -> Result<(Vec<(String, PathBuf, String)>, BTreeSet<String>)> {
    let mut listing: Vec<(String, PathBuf, String)> = Vec::new();
    let mut seen_ids: HashSet<String> = HashSet::new();
    let mut dir_names: BTreeSet<String> = BTreeSet::new();
    for dir in tasks_dirs {
        let (dirs, _diags) = roo_state::scan::list_task_dirs(dir)
            .map_err(|_| Error::TasksDirNotFound(dir.clone()))?;
        let dir_name = dir.display().to_string();
        dir_names.insert(dir_name.clone());
        for (id, path) in dirs {
            if seen_ids.insert(id.clone()) {
                listing.push((id, path, dir_name.clone()));
            }
        }
    }
    Ok((listing, dir_names))
}

/// Embed `points` in batches and write them. Returns `true` when cancelled part way.
fn embed_and_store(
    embedder: &dyn Embedder,
    dense: bool,
    store: &dyn VectorStore,
    points: Vec<Point>,
    cancelled: &dyn Fn() -> bool,
    on_batch: &mut dyn FnMut(usize),
) -> Result<bool> {
    let batch = if dense {
        embedder.batch_size().max(1)
    } else {
        512
    };
    let mut points = points;
    while !points.is_empty() {
        if cancelled() {
            return Ok(true);
        }
        let rest = points.split_off(batch.min(points.len()));
        let mut chunk = std::mem::replace(&mut points, rest);
        if dense {
            let texts: Vec<&str> = chunk
                .iter()
                .map(|p| p.payload.dialogue_snippet.as_str())
                .collect();
            let vectors = embedder.embed(&texts, Purpose::Document)?;
            if vectors.len() != chunk.len() {
                return Err(Error::Embedding {
                    url: "embedder".to_owned(),
                    message: format!(
                        "{} texts were given but {} vectors came back",
                        chunk.len(),
                        vectors.len()
                    ),
                });
            }
            for (p, v) in chunk.iter_mut().zip(vectors) {
                p.dense = Some(v);
            }
        }
        let n = chunk.len();
        store.upsert(chunk)?;
        on_batch(n);
    }
    Ok(false)
}

/// What an index holds, without changing it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
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

/// Describe an index.
pub fn index_status(
    index_dir: Option<&Path>,
    store_cfg: &StoreConfig,
    collection: Option<&str>,
) -> Result<IndexStatus> {
    let t = target(index_dir, store_cfg, collection);
    let (loaded, _) = state::load(&t.state_path)?;
    let model_dir = embed::default_model_dir();
    let (kind, location) = match &t.resolved {
        ResolvedStore::Edge(p) => ("edge", format!("embedded Qdrant Edge at {}", p.display())),
        ResolvedStore::Qdrant(q) => (
            "qdrant",
            format!("Qdrant server at {}", q.url.as_deref().unwrap_or("")),
        ),
        ResolvedStore::Memory(p) => (
            "memory",
            p.as_ref()
                .map_or("in-memory store".to_owned(), |p| p.display().to_string()),
        ),
    };
    Ok(IndexStatus {
        index_dir: t.index_dir.display().to_string(),
        exists: loaded.is_some(),
        embedder: loaded.as_ref().map(|s| s.embedder.clone()),
        tasks: loaded.as_ref().map_or(0, |s| s.tasks.len()),
        chunks: loaded.as_ref().map_or(0, IndexState::chunk_count),
        store: StoreSummary {
            kind: kind.to_owned(),
            location,
            collection: t.collection.clone(),
        },
        updated_at: loaded
            .as_ref()
            .map(|s| roo_js::iso_from_ms(s.updated_at_ms)),
        local_model_available: embed::local_model_available(&model_dir),
        model_dir: model_dir.display().to_string(),
    })
}

/// Per-task facts for search results, by task id.
pub(crate) fn task_facts(st: &IndexState) -> HashMap<&str, &TaskRecord> {
    st.tasks.iter().map(|(k, v)| (k.as_str(), v)).collect()
}
