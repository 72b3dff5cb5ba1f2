//! Incremental indexing of task folders.
//!
//! A task is read again only when the size or modification time of one of its source files
//! changed. Its chunks are then compared by id (task id + position + content hash): chunks that
//! disappeared are deleted, new ones are embedded and stored, unchanged ones are left alone. Tasks
//! that vanished lose their chunks. The index remembers the embedder; a different model or
//! dimension rebuilds it from scratch, and the report says so.

use crate::chunk::ChunkOptions;
use crate::embed::{self, Embedder, EmbedderConfig, EmbedderId, Purpose};
use crate::error::{Error, Result};
use crate::paths;
use crate::progress::{self, eta};
pub use crate::progress::{IndexProgress, ProgressFn};
use crate::state::{self, IndexState, TaskRecord};
use crate::store::{self, Existing, Point, ResolvedStore, StoreConfig, VectorStore};
use lock::WriteLock;
use prepare::{chunk_task, meta_parent, ChunkContext, LinkedHeader, PendingTask, Prepared};
use rayon::prelude::*;
use roo_store::task_store::{TaskStore, Watch};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use uuid::Uuid;

mod lock;
mod prepare;
mod report;

pub use report::{IndexReport, IndexStatus, StoreSummary, TaskFailure};

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
    // The index is keyed by its canonical path: a relative and an absolute name of one folder
    // are one index (and one open store in this process).
    let index_dir = index_dir.map_or_else(paths::default_index_dir, Path::to_path_buf);
    let index_dir = std::fs::canonicalize(&index_dir)
        .or_else(|_| std::path::absolute(&index_dir))
        .unwrap_or(index_dir);
    let collection = store::collection_name(collection);
    let resolved = store::resolve(store_cfg, &index_dir, &collection);
    let state_path = state::state_path(&index_dir, &resolved.state_key(&index_dir, &collection));
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
    let t = target(
        opts.index_dir.as_deref(),
        &opts.store,
        opts.collection.as_deref(),
    );
    std::fs::create_dir_all(&t.index_dir).map_err(|e| Error::io(&t.index_dir, e))?;

    // Inputs first, so a wrong path fails before anything is touched.
    let tasks_dirs = tasks_dirs_to_index(opts)?;
    let (listing, dir_names, refused) = list_tasks(&tasks_dirs)?;
    let (tasks, cache_note) = open_task_store(&tasks_dirs, opts.cancel)?;
    let listing = one_per_task(listing, tasks.as_ref());

    let _lock = WriteLock::acquire(&t.index_dir)?;
    let mut notes: Vec<String> = cache_note.into_iter().chain(refused).collect();
    let embedder = progress::build_embedder(&opts.embedder, opts.on_progress, &mut notes)?;
    let eid = embedder.id()?;
    let store = store::open(&t.resolved, &t.collection)?;
    let (st, rebuilt) = open_state(opts, &t, store.as_ref(), &eid)?;
    let changes = find_changes(&listing, &dir_names, &st, tasks.as_ref());

    let report = IndexReport {
        index_dir: t.index_dir.display().to_string(),
        tasks_dirs: dir_names.iter().cloned().collect(),
        tasks_seen: listing.len(),
        tasks_unchanged: changes.unchanged,
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
    let mut run = IndexRun {
        opts,
        state_path: &t.state_path,
        tasks: tasks.as_ref(),
        embedder: embedder.as_ref(),
        eid: &eid,
        store: store.as_ref(),
        st,
        report,
    };
    let mut progress = RunProgress::new(opts.on_progress, &changes.todo);
    progress.report(0, "scanning");
    run.remove_gone(&changes.gone)?;
    run.index_changed(&changes.todo, &mut progress)?;

    progress.report(run.report.chunks_embedded, "finishing");
    if let Some(t) = tasks.as_ref() {
        run.st.name_copies(t.shared_tasks());
    }
    let bulk = run.report.chunks_embedded >= 5_000;
    run.save(bulk)?;
    let mut report = run.report;
    report.chunks_total = run.st.chunk_count();
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// The `tasks/` folders asked for, else the extensions' folders found on this machine.
fn tasks_dirs_to_index(opts: &IndexOptions) -> Result<Vec<PathBuf>> {
    tasks_dirs_or_found(&opts.tasks_dirs)
}

/// `given`, else the extensions' folders found on this machine (grep takes them the same way).
pub(crate) fn tasks_dirs_or_found(given: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if !given.is_empty() {
        return Ok(given.to_vec());
    }
    let found = paths::discover_tasks_dirs();
    if found.is_empty() {
        return Err(Error::NoTasksDir);
    }
    Ok(found)
}

/// The task store over `tasks_dirs`, for the linked headers (titles, workspaces, parents: stored
/// or inferred), through our skeleton cache when it can be used, with the cache's note. A
/// cancelled open leaves no handle; the run then stops before its first task.
pub(crate) fn open_task_store(
    tasks_dirs: &[PathBuf],
    cancel: Option<&AtomicBool>,
) -> Result<(Option<TaskStore>, Option<String>)> {
    match TaskStore::open_with_default_cache(
        &roo_store::HostEnv::current(),
        tasks_dirs.to_vec(),
        Watch {
            on_progress: None,
            cancel,
        },
    ) {
        Ok((t, note)) => Ok((Some(t), note)),
        Err(roo_store::StoreError::Aborted) => Ok((None, None)),
        Err(roo_store::StoreError::NotFound { path }) => Err(Error::TasksDirNotFound(path)),
        Err(e) => Err(Error::InvalidArgument(e.to_string())),
    }
}

/// The linked header of task `id`, when the task store holds it.
fn linked_header<'t>(tasks: Option<&'t TaskStore>, id: &str) -> Option<LinkedHeader<'t>> {
    tasks.and_then(|t| t.header(id))
}

/// Whether the index starts again from nothing, and why; when it does, whether the store's
/// collection is dropped too.
struct Restart {
    reason: Option<String>,
    drop_store: bool,
}

impl Restart {
    /// From the saved state: start again when asked, when the state is unusable, or when the
    /// vectors would not match: never mix two embedders in one collection.
    fn from_state(
        rebuild: bool,
        damaged: Option<String>,
        loaded: Option<&IndexState>,
        store_kind: &str,
        eid: &EmbedderId,
    ) -> Self {
        let mut restart = Restart {
            reason: None,
            drop_store: false,
        };
        if rebuild {
            restart.reason = Some("a rebuild was asked for".to_owned());
            restart.drop_store = true;
        } else if let Some(why) = damaged {
            restart.reason = Some(why);
            // A shared server collection is kept: re-writing the same ids is harmless.
            restart.drop_store = store_kind != "qdrant";
        } else if let Some(s) = loaded {
            if !s.embedder.same_vectors(eid) {
                restart.reason = Some(format!(
                    "the embedder changed from {} to {}",
                    s.embedder, eid
                ));
                restart.drop_store = true;
            }
        }
        restart
    }

    /// From what the store holds: a collection gone while the state names tasks, or vectors of
    /// another dimension (refused on a server collection this index did not make).
    fn check_collection(
        &mut self,
        existing: Existing,
        loaded: Option<&IndexState>,
        store: &dyn VectorStore,
        eid: &EmbedderId,
        rebuild: bool,
        collection: &str,
    ) -> Result<()> {
        let want_dim = eid.is_dense().then_some(eid.dimension);
        match existing {
            Existing::Absent => {
                if self.reason.is_none() && loaded.is_some_and(|s| !s.tasks.is_empty()) {
                    self.reason = Some(format!(
                        "the collection was missing from the {}",
                        store.location()
                    ));
                }
            }
            Existing::Present { dense_dim } if dense_dim != want_dim && !self.drop_store => {
                if loaded.is_none() && store.kind() == "qdrant" && !rebuild {
                    return Err(Error::DimensionMismatch {
                        expected: dense_dim.unwrap_or(0),
                        got: eid.dimension,
                        context: format!(
                            "collection {} on the {} was made by another embedder; use that \
                             embedder, or pass rebuild to replace the collection",
                            collection,
                            store.location()
                        ),
                    });
                }
                self.reason.get_or_insert_with(|| {
                    format!(
                        "the store held vectors of {} dimensions, the embedder gives {}",
                        dense_dim.unwrap_or(0),
                        eid.dimension
                    )
                });
                self.drop_store = true;
            }
            Existing::Damaged => {
                self.reason.get_or_insert_with(|| {
                    format!(
                        "the index in the {} was damaged and could not be loaded",
                        store.location()
                    )
                });
                self.drop_store = true;
            }
            Existing::Present { .. } => {}
        }
        Ok(())
    }

    /// The consistency check: a store holding fewer points than the state lists chunks (a
    /// segment lost, files deleted) cannot be brought up to date task by task; it starts again.
    fn check_points(&mut self, store: &dyn VectorStore, loaded: Option<&IndexState>) -> Result<()> {
        let Some(st) = loaded else { return Ok(()) };
        if self.reason.is_some() {
            return Ok(());
        }
        let expected: u64 = st.tasks.values().map(|r| r.chunk_ids.len() as u64).sum();
        let held = store.count()?;
        if held < expected {
            self.reason = Some(format!(
                "the {} holds {held} of the {expected} chunks the index state lists",
                store.location()
            ));
            self.drop_store = true;
            return Ok(());
        }
        // Vectors changed since the last run saved them: a damaged page, whose scores would be
        // wrong without a word.
        if let (Some(saved), Some(now)) = (st.vectors_digest, store.vectors_digest()) {
            if saved != now {
                self.reason = Some(format!(
                    "the stored vectors of the {} are not those the last run wrote (a damaged page)",
                    store.location()
                ));
                self.drop_store = true;
            }
        }
        Ok(())
    }
}

/// The index state to bring up to date, with the collection made ready for `eid`: the saved
/// state, or a new one (and a new collection) when the index starts again, with the reason.
fn open_state(
    opts: &IndexOptions,
    t: &Target,
    store: &dyn VectorStore,
    eid: &EmbedderId,
) -> Result<(IndexState, Option<String>)> {
    let (loaded, damaged) = state::load(&t.state_path)?;
    let mut restart =
        Restart::from_state(opts.rebuild, damaged, loaded.as_ref(), store.kind(), eid);
    let want_dim = eid.is_dense().then_some(eid.dimension);
    // A rebuild wipes whatever the store holds, readable or not, before looking at it.
    let existing = if opts.rebuild {
        if !matches!(store.inspect(), Ok(Existing::Absent)) {
            store.drop_collection()?;
        }
        Existing::Absent
    } else {
        store.inspect()?
    };
    restart.check_collection(
        existing,
        loaded.as_ref(),
        store,
        eid,
        opts.rebuild,
        &t.collection,
    )?;
    if existing != Existing::Absent {
        restart.check_points(store, loaded.as_ref())?;
    }
    let mut st = match (&restart.reason, loaded) {
        (None, Some(s)) => s,
        _ => IndexState::new(
            t.resolved.identity(&t.collection),
            t.collection.clone(),
            eid.clone(),
        ),
    };
    if restart.drop_store && existing != Existing::Absent {
        store.drop_collection()?;
    }
    if restart.drop_store || existing == Existing::Absent {
        store.create(want_dim)?;
    }
    st.embedder = eid.clone();
    st.remember_embedder(&opts.embedder, eid);
    Ok((st, restart.reason))
}

/// What changed on disk since the last run.
struct Changes {
    /// Tasks whose files and parent are as the state recorded them.
    unchanged: usize,
    /// Tasks to read again.
    todo: Vec<PendingTask>,
    /// Tasks of the listed stores that are no longer on disk.
    gone: Vec<String>,
}

/// Compare the listing with the state: a task is read again when its files changed, or when its
/// parent did (a parent inferred, or a link that changed with other tasks).
fn find_changes(
    listing: &[(String, PathBuf, String)],
    dir_names: &BTreeSet<String>,
    st: &IndexState,
    tasks: Option<&TaskStore>,
) -> Changes {
    let mut unchanged = 0usize;
    let mut todo = Vec::new();
    let on_disk: HashSet<&str> = listing.iter().map(|(id, _, _)| id.as_str()).collect();
    for (id, path, dir) in listing {
        let sig = state::task_signature(path);
        let parent_now = match linked_header(tasks, id) {
            Some(Ok(h)) => meta_parent(h),
            _ => None,
        };
        match st.tasks.get(id) {
            Some(r) if r.files == sig && &r.tasks_dir == dir && r.parent_task_id == parent_now => {
                unchanged += 1
            }
            _ => todo.push(PendingTask {
                id: id.clone(),
                dir: path.clone(),
                tasks_dir: dir.clone(),
                files: sig,
            }),
        }
    }
    let gone = st
        .tasks
        .iter()
        .filter(|(id, r)| dir_names.contains(&r.tasks_dir) && !on_disk.contains(id.as_str()))
        .map(|(id, _)| id.clone())
        .collect();
    Changes {
        unchanged,
        todo,
        gone,
    }
}

/// The bytes of a task's files, for the ETA (at least 1; a folder where a file should be has the
/// size u64::MAX and counts for nothing).
fn task_bytes(files: &[state::FileSig]) -> u64 {
    files
        .iter()
        .filter(|s| s.size != u64::MAX)
        .fold(1u64, |n, s| n.saturating_add(s.size))
}

/// Progress of a run: tasks done out of the tasks to read, and an ETA that follows the bytes of
/// the task files read so far (chunks follow the dialogue's size).
struct RunProgress<'a> {
    on_progress: Option<ProgressFn<'a>>,
    total: usize,
    total_bytes: u64,
    done: usize,
    done_bytes: u64,
    start: std::time::Instant,
}

impl<'a> RunProgress<'a> {
    /// Progress over `todo`, its clock started now.
    fn new(on_progress: Option<ProgressFn<'a>>, todo: &[PendingTask]) -> Self {
        let total_bytes = todo
            .iter()
            .fold(0u64, |n, t| n.saturating_add(task_bytes(&t.files)));
        Self {
            on_progress,
            total: todo.len(),
            total_bytes,
            done: 0,
            done_bytes: 0,
            start: std::time::Instant::now(),
        }
    }

    /// Count `group` as read.
    fn advance(&mut self, group: &[PendingTask]) {
        self.done += group.len();
        self.done_bytes = group.iter().fold(self.done_bytes, |n, t| {
            n.saturating_add(task_bytes(&t.files))
        });
    }

    /// Tell the caller where the run is.
    fn report(&self, chunks_embedded: usize, phase: &'static str) {
        if let Some(cb) = self.on_progress {
            cb(&IndexProgress {
                phase,
                done: self.done,
                total: self.total,
                chunks_embedded,
                elapsed_ms: self.start.elapsed().as_millis() as u64,
                eta_ms: eta(self.start.elapsed(), self.done_bytes, self.total_bytes),
            });
        }
    }
}

/// One indexing run once the store, the embedder and the state are open.
struct IndexRun<'r, 'o> {
    opts: &'r IndexOptions<'o>,
    state_path: &'r Path,
    tasks: Option<&'r TaskStore>,
    embedder: &'r dyn Embedder,
    eid: &'r EmbedderId,
    store: &'r dyn VectorStore,
    st: IndexState,
    report: IndexReport,
}

impl IndexRun<'_, '_> {
    /// Whether the caller asked the run to stop.
    fn cancelled(&self) -> bool {
        self.opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Delete the chunks of the tasks gone from disk.
    fn remove_gone(&mut self, gone: &[String]) -> Result<()> {
        for id in gone {
            if let Some(r) = self.st.tasks.remove(id) {
                self.store.delete(&r.chunk_ids)?;
                self.report.chunks_deleted += r.chunk_ids.len();
                self.report.tasks_removed += 1;
            }
        }
        Ok(())
    }

    /// Read, embed and record the changed tasks group by group, saving after each group; stops
    /// early, saying so in the report, when cancelled.
    fn index_changed(&mut self, todo: &[PendingTask], progress: &mut RunProgress) -> Result<()> {
        let ctx = ChunkContext {
            host: paths::host_name(),
            user: paths::user_name(),
            chunking: self.opts.chunking.unwrap_or_default(),
        };
        // Smaller groups when embedding is slow (a sentence model, a service), so progress and
        // saved state move often; the static model embeds about as fast as the lexical vectors
        // are made.
        let slow_embedder = self.eid.is_dense() && self.eid.kind != "static";
        let group_size = if slow_embedder { 8 } else { 64 };
        for group in todo.chunks(group_size) {
            if !self.index_group(group, &ctx, progress)? {
                self.report.cancelled = true;
                break;
            }
        }
        Ok(())
    }

    /// Read, embed and record one group of tasks, then save; `false` when cancelled first.
    fn index_group(
        &mut self,
        group: &[PendingTask],
        ctx: &ChunkContext,
        progress: &mut RunProgress,
    ) -> Result<bool> {
        if self.cancelled() {
            return Ok(false);
        }
        let tasks = self.tasks;
        let prepared: Vec<Prepared> = group
            .par_iter()
            .map(|task| chunk_task(task, linked_header(tasks, &task.id), ctx))
            .collect();
        let pending = self.delete_stale(&prepared)?;
        let cancel = self.opts.cancel;
        let report = &mut self.report;
        let aborted = embed_and_store(
            self.embedder,
            self.eid.is_dense(),
            self.store,
            pending,
            &|| cancel.is_some_and(|c| c.load(Ordering::Relaxed)),
            &mut |n| {
                report.chunks_embedded += n;
                progress.report(report.chunks_embedded, "indexing");
            },
        )?;
        if aborted {
            return Ok(false);
        }
        self.record(prepared);
        progress.advance(group);
        progress.report(self.report.chunks_embedded, "indexing");
        self.save(false)?;
        Ok(true)
    }

    /// Delete the chunks the tasks no longer have; returns the points to embed: the new ones, or
    /// all of a task's when its title, workspace, parent, host or user changed.
    fn delete_stale(&mut self, prepared: &[Prepared]) -> Result<Vec<Point>> {
        let mut pending: Vec<Point> = Vec::new();
        for p in prepared {
            let old = self.st.tasks.get(&p.task_id);
            let old_ids: HashSet<Uuid> = old
                .map(|r| r.chunk_ids.iter().copied().collect())
                .unwrap_or_default();
            let new_ids: HashSet<Uuid> = p.record.chunk_ids.iter().copied().collect();
            let meta_changed = old.is_none_or(|r| r.meta_hash != p.record.meta_hash);
            let stale: Vec<Uuid> = old_ids.difference(&new_ids).copied().collect();
            if !stale.is_empty() {
                self.store.delete(&stale)?;
                self.report.chunks_deleted += stale.len();
            }
            pending.extend(
                p.points
                    .iter()
                    .filter(|pt| meta_changed || !old_ids.contains(&pt.id))
                    .cloned(),
            );
        }
        Ok(pending)
    }

    /// Put the tasks' new records in the state and count them (and their failures) in the report.
    fn record(&mut self, prepared: Vec<Prepared>) {
        for p in prepared {
            if let Some(message) = p.failure {
                self.report.failures.push(TaskFailure {
                    task_id: p.task_id.clone(),
                    message,
                });
            }
            if self.report.indexed_task_ids.len() < 1000 {
                self.report.indexed_task_ids.push(p.task_id.clone());
            }
            self.report.tasks_indexed += 1;
            self.st.tasks.insert(p.task_id, p.record);
        }
    }

    /// Commit the store (`bulk`: the optimisation pass after a large write), then save the state.
    /// Points first, then the state that names them: a crash in between only re-embeds.
    fn save(&mut self, bulk: bool) -> Result<()> {
        self.store.commit(bulk)?;
        self.st.vectors_digest = self.store.vectors_digest();
        self.st.generation += 1;
        self.st.updated_at_ms = state::now_ms();
        state::save(self.state_path, &self.st)
    }
}

/// Every task folder of the stores, with its store, the stores' names, and the task folders refused
/// as links out of their store (`roo_store::confine::task_folder_out`), each said in a sentence.
#[expect(clippy::type_complexity)]
fn list_tasks(
    tasks_dirs: &[PathBuf],
) -> Result<(
    Vec<(String, PathBuf, String)>,
    BTreeSet<String>,
    Vec<String>,
)> {
    let mut listing: Vec<(String, PathBuf, String)> = Vec::new();
    let mut dir_names: BTreeSet<String> = BTreeSet::new();
    let mut refused = Vec::new();
    for dir in tasks_dirs {
        let (dirs, _diags) = roo_state::scan::list_task_dirs(dir)
            .map_err(|_| Error::TasksDirNotFound(dir.clone()))?;
        let dir_name = dir.display().to_string();
        dir_names.insert(dir_name.clone());
        for (id, path) in dirs {
            if let Some(out) = roo_store::confine::task_folder_out(&path) {
                refused.push(out.to_string());
                continue;
            }
            listing.push((id, path, dir_name.clone()));
        }
    }
    Ok((listing, dir_names, refused))
}

/// One folder per task id: a task two stores hold (Zoo Code's import of Roo Code's history) is
/// indexed once, from the copy the task store shows (the newer), else from the first store.
fn one_per_task(
    listing: Vec<(String, PathBuf, String)>,
    tasks: Option<&TaskStore>,
) -> Vec<(String, PathBuf, String)> {
    let mut at: HashMap<String, usize> = HashMap::with_capacity(listing.len());
    let mut out: Vec<(String, PathBuf, String)> = Vec::with_capacity(listing.len());
    for entry in listing {
        match at.get(&entry.0) {
            None => {
                at.insert(entry.0.clone(), out.len());
                out.push(entry);
            }
            Some(&k) => {
                let shown = tasks.and_then(|t| t.task_dir(&entry.0));
                if shown.as_deref() == Some(entry.1.as_path()) {
                    out[k] = entry;
                }
            }
        }
    }
    out
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
