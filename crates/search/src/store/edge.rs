//! Qdrant Edge: the Qdrant engine in-process, persisted in the index directory.
//!
//! One shard directory per collection. While a process has it open it holds an exclusive lock
//! on `<shard>.lock`, so a second process gets a clear "busy" error instead of two writers on
//! one write-ahead log. Search structures (HNSW) are built by [`VectorStore::commit`] after bulk
//! loads: the engine has no background optimiser.
//!
//! Every call into the engine goes through [`guarded`]: a damaged shard can make the engine
//! panic (a cut `status.dat`, a zeroed page), and a panic there becomes an error here, never the
//! end of the process. A shard that cannot be loaded is [`Existing::Damaged`]: indexing drops it
//! and starts again; searching says so.

use super::{
    Existing, Filter, Hit, Point, Query, VectorStore, DENSE, INTEGER_INDEXES, KEYWORD_INDEXES,
    SPARSE,
};
use crate::error::{Error, Result};
use qdrant_edge::{
    CreateIndex, Distance, EdgeConfigBuilder, EdgeShard, EdgeSparseVectorParamsBuilder,
    EdgeVectorParamsBuilder, FieldIndexOperations, HnswIndexConfig, Modifier, NamedQuery, Payload,
    PointInsertOperations, PointOperations, PointStructPersisted, QueryEnum, SearchRequest,
    UpdateOperation, Vector, VectorStructPersisted, Vectors, WalOptions, WithPayloadInterface,
};
use serde_json::{json, Value};
use std::fs::File;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use uuid::Uuid;

pub struct EdgeStore {
    path: PathBuf,
    shard: RwLock<Option<EdgeShard>>,
    /// Why the shard on disk could not be loaded (until it is dropped).
    damaged: RwLock<Option<String>>,
    _lock: File,
}

fn edge_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::store(format!("embedded Qdrant Edge at {}", path.display()), e)
}

/// The text of a panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

/// Run `f`, a call into the engine: a panic inside it becomes an error naming `what` was done.
pub(crate) fn guarded<T>(path: &Path, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(edge_err(
            path,
            format!(
                "the engine failed while {what} ({}); the index is damaged: run indexTasks with rebuild",
                panic_text(payload.as_ref())
            ),
        )),
    }
}

/// The XXH3 of every file of the shard's vector storages (`segments/*/vector_storage*/…`, each
/// by its path inside the shard and its bytes, in path order); `None` when one cannot be read.
fn vector_files_digest(shard: &Path) -> Option<u64> {
    use std::io::Read as _;
    let mut files: Vec<PathBuf> = Vec::new();
    for segment in std::fs::read_dir(shard.join("segments")).ok()?.flatten() {
        for part in std::fs::read_dir(segment.path()).ok()?.flatten() {
            if !part
                .file_name()
                .to_string_lossy()
                .starts_with("vector_storage")
            {
                continue;
            }
            let mut dirs = vec![part.path()];
            while let Some(d) = dirs.pop() {
                for e in std::fs::read_dir(&d).ok()?.flatten() {
                    match e.file_type().ok()? {
                        t if t.is_dir() => dirs.push(e.path()),
                        t if t.is_file() => files.push(e.path()),
                        _ => {}
                    }
                }
            }
        }
    }
    files.sort();
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    for f in files {
        h.update(
            f.strip_prefix(shard)
                .unwrap_or(&f)
                .to_string_lossy()
                .as_bytes(),
        );
        let mut file = File::open(&f).ok()?;
        loop {
            let n = file.read(&mut buf).ok()?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
    }
    Some(h.digest())
}

/// Remove the closed segments of the shard's write-ahead log but the newest.
///
/// qdrant-edge 0.7 logs every update and never truncates its log, nor does it read the log back
/// when it loads a shard: the segments, flushed at every [`VectorStore::commit`], are the data.
/// Left alone, the log keeps every point ever written (1.9 GB beside 2.1 GB of segments at
/// 50 000 tasks), and each load reads and checks all of it. The newest closed segment stays: its
/// name holds the index the next writes continue from, and a stored point ignores an update
/// numbered below its own version. Called only before the engine opens the log, with the shard's
/// lock held. A segment that cannot be removed stays (it costs time, not data).
fn trim_log(shard: &Path) {
    let Ok(entries) = std::fs::read_dir(shard.join("wal")) else {
        return;
    };
    let mut closed: Vec<(u64, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let start = name.to_str()?.strip_prefix("closed-")?.parse().ok()?;
            Some((start, e.path()))
        })
        .collect();
    closed.sort_unstable_by_key(|(start, _)| *start);
    closed.pop();
    for (_, path) in closed {
        let _ = std::fs::remove_file(path);
    }
}

/// A shard directory holds a config once it was created.
fn shard_exists(path: &Path) -> bool {
    path.join("edge_config.json").is_file()
}

impl EdgeStore {
    pub fn open(path: &Path) -> Result<Self> {
        use fs4::fs_std::FileExt;
        let parent = path.parent().unwrap_or(path);
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        let lock_path = path.with_extension("lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io(&lock_path, e))?;
        match lock.try_lock_exclusive() {
            Ok(true) => {}
            Ok(false) => return Err(Error::HeldOpen(path.to_path_buf())),
            Err(e) => return Err(Error::io(&lock_path, e)),
        }
        // A shard that cannot be loaded (an error or a panic in the engine) is kept as damaged.
        let (shard, damaged) = if shard_exists(path) {
            trim_log(path);
            let loaded = guarded(path, "loading the index", || {
                EdgeShard::load(path, None).map_err(|e| {
                    edge_err(
                        path,
                        format!("the index could not be loaded ({e}); run indexTasks with rebuild"),
                    )
                })
            });
            match loaded {
                Ok(s) => (Some(s), None),
                Err(e) => (None, Some(e.to_string())),
            }
        } else if path.exists() {
            // Segments without a config (a deleted `edge_config.json`): damaged too.
            let leftovers = std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_some());
            (
                None,
                leftovers.then(|| format!("{} holds no edge_config.json", path.display())),
            )
        } else {
            (None, None)
        };
        Ok(Self {
            path: path.to_path_buf(),
            shard: RwLock::new(shard),
            damaged: RwLock::new(damaged),
            _lock: lock,
        })
    }

    fn damage(&self) -> Option<String> {
        self.damaged.read().ok().and_then(|d| d.clone())
    }

    fn fail(&self, e: impl std::fmt::Display) -> Error {
        edge_err(&self.path, e)
    }

    fn with_shard<T>(&self, what: &str, f: impl FnOnce(&EdgeShard) -> Result<T>) -> Result<T> {
        let g = self.shard.read().map_err(|_| self.fail("lock poisoned"))?;
        match g.as_ref() {
            Some(s) => guarded(&self.path, what, || f(s)),
            None => Err(self
                .fail(self.damage().unwrap_or_else(|| {
                    "the collection does not exist; run indexTasks".to_owned()
                }))),
        }
    }
}

/// The Qdrant filter (in its JSON form) of a [`Filter`].
pub(crate) fn filter_json(f: &Filter) -> Option<Value> {
    let mut must = Vec::new();
    if let Some(k) = &f.workspace_key {
        must.push(json!({"key": "workspace_key", "match": {"value": k}}));
    }
    if let Some(n) = &f.workspace_name {
        must.push(json!({"key": "workspace_name", "match": {"value": n}}));
    }
    if let Some(t) = &f.task_id {
        must.push(json!({"key": "task_id", "match": {"value": t}}));
    }
    if let Some(ids) = &f.task_ids {
        must.push(json!({"key": "task_id", "match": {"any": ids}}));
    }
    if let Some(h) = &f.source {
        must.push(json!({"key": "source", "match": {"value": h}}));
    }
    if f.from_s.is_some() || f.to_s.is_some() {
        let mut range = serde_json::Map::new();
        if let Some(v) = f.from_s {
            range.insert("gte".to_owned(), json!(v));
        }
        if let Some(v) = f.to_s {
            range.insert("lte".to_owned(), json!(v));
        }
        must.push(json!({"key": "timestamp", "range": range}));
    }
    (!must.is_empty()).then(|| json!({ "must": must }))
}

fn to_payload(p: &super::ChunkPayload) -> Result<Payload> {
    match serde_json::to_value(p) {
        Ok(Value::Object(map)) => Ok(Payload(map)),
        Ok(_) => Err(Error::store("edge", "a payload is not an object")),
        Err(e) => Err(Error::store("edge", e)),
    }
}

impl VectorStore for EdgeStore {
    fn kind(&self) -> &'static str {
        "edge"
    }

    fn location(&self) -> String {
        format!("embedded Qdrant Edge at {}", self.path.display())
    }

    fn inspect(&self) -> Result<Existing> {
        if self.damage().is_some() {
            return Ok(Existing::Damaged);
        }
        let g = self.shard.read().map_err(|_| self.fail("lock poisoned"))?;
        match g.as_ref() {
            None => Ok(Existing::Absent),
            Some(s) => guarded(&self.path, "reading the index configuration", || {
                Ok(Existing::Present {
                    dense_dim: s.config().vectors.get(DENSE).map(|v| v.size),
                })
            }),
        }
    }

    fn create(&self, dense_dim: Option<usize>) -> Result<()> {
        let mut g = self.shard.write().map_err(|_| self.fail("lock poisoned"))?;
        if g.is_some() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.path).map_err(|e| Error::io(&self.path, e))?;
        let mut builder = EdgeConfigBuilder::new()
            .sparse_vector(
                SPARSE,
                EdgeSparseVectorParamsBuilder::new()
                    .modifier(Modifier::Idf)
                    .on_disk(true)
                    .build(),
            )
            .hnsw_config(HnswIndexConfig {
                on_disk: Some(true),
                ..HnswIndexConfig::default()
            })
            .wal_options(WalOptions {
                segment_capacity: 4 * 1024 * 1024,
                segment_queue_len: 0,
                retain_closed: NonZeroUsize::MIN,
            });
        if let Some(d) = dense_dim {
            builder = builder.vector(
                DENSE,
                EdgeVectorParamsBuilder::new(d, Distance::Cosine)
                    .on_disk(true)
                    .build(),
            );
        }
        let shard = guarded(&self.path, "creating the index", || {
            EdgeShard::new(&self.path, builder.build()).map_err(|e| self.fail(e))
        })?;
        let indexes = KEYWORD_INDEXES
            .iter()
            .map(|k| (*k, "keyword"))
            .chain(INTEGER_INDEXES.iter().map(|k| (*k, "integer")));
        for (field, kind) in indexes {
            let op: CreateIndex = serde_json::from_value(json!({
                "field_name": field,
                "field_schema": { "type": kind, "on_disk": true },
            }))
            .map_err(|e| self.fail(format!("index on {field}: {e}")))?;
            guarded(&self.path, "creating a payload index", || {
                shard
                    .update(UpdateOperation::FieldIndexOperation(
                        FieldIndexOperations::CreateIndex(op),
                    ))
                    .map_err(|e| self.fail(format!("index on {field}: {e}")))
            })?;
        }
        *g = Some(shard);
        Ok(())
    }

    fn drop_collection(&self) -> Result<()> {
        let mut g = self.shard.write().map_err(|_| self.fail("lock poisoned"))?;
        let _ = guarded(&self.path, "closing the index", || {
            drop(g.take());
            Ok(())
        });
        if self.path.exists() {
            std::fs::remove_dir_all(&self.path).map_err(|e| Error::io(&self.path, e))?;
        }
        if let Ok(mut d) = self.damaged.write() {
            *d = None;
        }
        Ok(())
    }

    fn upsert(&self, points: Vec<Point>) -> Result<()> {
        if points.is_empty() {
            return Ok(());
        }
        let mut list = Vec::with_capacity(points.len());
        for p in points {
            let mut named: Vec<(&str, Vector)> = Vec::with_capacity(2);
            if let Some(d) = p.dense {
                named.push((DENSE, Vector::new_dense(d)));
            }
            if !p.sparse.is_empty() {
                let v = Vector::new_sparse(p.sparse.indices, p.sparse.values)
                    .map_err(|e| self.fail(e))?;
                named.push((SPARSE, v));
            }
            list.push(PointStructPersisted {
                id: qdrant_edge::PointId::Uuid(p.id),
                vector: VectorStructPersisted::from(Vectors::new_named(named).0),
                payload: Some(to_payload(&p.payload)?),
            });
        }
        self.with_shard("writing points", |s| {
            s.update(UpdateOperation::PointOperation(
                PointOperations::UpsertPoints(PointInsertOperations::PointsList(list)),
            ))
            .map_err(|e| self.fail(e))
        })
    }

    fn delete(&self, ids: &[Uuid]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.with_shard("deleting points", |s| {
            s.update(UpdateOperation::PointOperation(
                PointOperations::DeletePoints {
                    ids: ids
                        .iter()
                        .map(|id| qdrant_edge::PointId::Uuid(*id))
                        .collect(),
                },
            ))
            .map_err(|e| self.fail(e))
        })
    }

    fn search(&self, query: Query<'_>, filter: &Filter, limit: usize) -> Result<Vec<Hit>> {
        let (name, vector) = match query {
            Query::Dense(v) => (DENSE, Vector::new_dense(v.to_vec())),
            Query::Sparse(q) => (
                SPARSE,
                Vector::new_sparse(q.indices.clone(), q.values.clone())
                    .map_err(|e| self.fail(e))?,
            ),
        };
        let filter = match filter_json(filter) {
            Some(j) => Some(serde_json::from_value(j).map_err(|e| self.fail(e))?),
            None => None,
        };
        let request = SearchRequest {
            query: QueryEnum::Nearest(NamedQuery {
                query: vector.0,
                using: Some(name.into()),
            }),
            filter,
            params: None,
            limit,
            offset: 0,
            with_payload: Some(WithPayloadInterface::Bool(true)),
            with_vector: None,
            score_threshold: None,
        };
        let found =
            self.with_shard("searching", |s| s.search(request).map_err(|e| self.fail(e)))?;
        let mut hits = Vec::with_capacity(found.len());
        for p in found {
            let id = match p.id {
                qdrant_edge::PointId::Uuid(u) => u,
                qdrant_edge::PointId::NumId(n) => Uuid::from_u128(u128::from(n)),
            };
            let Some(payload) = p.payload else { continue };
            let Ok(payload) = serde_json::from_value(Value::Object(payload.0)) else {
                continue;
            };
            if matches!(query, Query::Sparse(_)) && p.score <= 0.0 {
                continue;
            }
            hits.push(Hit {
                id,
                score: p.score,
                payload,
            });
        }
        Ok(hits)
    }

    fn count(&self) -> Result<u64> {
        let g = self.shard.read().map_err(|_| self.fail("lock poisoned"))?;
        match g.as_ref() {
            None => Ok(0),
            Some(s) => guarded(&self.path, "counting points", || {
                Ok(s.info().points_count as u64)
            }),
        }
    }

    fn commit(&self, bulk_loaded: bool) -> Result<()> {
        let g = self.shard.read().map_err(|_| self.fail("lock poisoned"))?;
        if let Some(s) = g.as_ref() {
            guarded(&self.path, "saving the index", || {
                if bulk_loaded {
                    s.optimize().map_err(|e| self.fail(e))?;
                }
                s.flush();
                Ok(())
            })?;
        }
        Ok(())
    }

    fn vectors_digest(&self) -> Option<u64> {
        if !shard_exists(&self.path) || self.damage().is_some() {
            return None;
        }
        vector_files_digest(&self.path)
    }
}
