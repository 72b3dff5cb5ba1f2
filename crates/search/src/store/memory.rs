//! A small exact store: every point in memory, searched by brute force, saved as one JSON file.
//! It serves tests, the benchmark's baseline and builds without the `edge` feature.

use super::{Existing, Filter, Hit, Point, Query, VectorStore};
use crate::error::{Error, Result};
use crate::lexical::{idf, SparseVec};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::RwLock;
use uuid::Uuid;

#[derive(Default, Serialize, Deserialize)]
struct Inner {
    /// `None`: no collection.
    collection: Option<Collection>,
}

#[derive(Default, Serialize, Deserialize)]
struct Collection {
    dense_dim: Option<usize>,
    points: HashMap<Uuid, Point>,
    #[serde(skip)]
    df: HashMap<u32, u64>,
}

impl Collection {
    fn rebuild_df(&mut self) {
        self.df.clear();
        for p in self.points.values() {
            for &i in &p.sparse.indices {
                *self.df.entry(i).or_default() += 1;
            }
        }
    }

    fn forget_terms(&mut self, v: &SparseVec) {
        for i in &v.indices {
            if let Some(n) = self.df.get_mut(i) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.df.remove(i);
                }
            }
        }
    }
}

pub struct MemoryStore {
    path: Option<PathBuf>,
    inner: RwLock<Inner>,
}

impl MemoryStore {
    /// Open (or start) a store saved at `path`; `None` keeps it in memory only.
    pub fn open(path: Option<PathBuf>) -> Result<Self> {
        let mut inner = Inner::default();
        if let Some(p) = &path {
            match std::fs::read(p) {
                Ok(bytes) => {
                    inner = serde_json::from_slice(&bytes).map_err(|e| {
                        Error::store(
                            format!("memory store {}", p.display()),
                            format!("the file is damaged ({e}); delete it to rebuild the index"),
                        )
                    })?;
                    if let Some(c) = inner.collection.as_mut() {
                        c.rebuild_df();
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(p.clone(), e)),
            }
        }
        Ok(Self {
            path,
            inner: RwLock::new(inner),
        })
    }

    fn fail(&self, msg: impl std::fmt::Display) -> Error {
        Error::store(self.location(), msg)
    }

    fn read(&self) -> Result<std::sync::RwLockReadGuard<'_, Inner>> {
        self.inner.read().map_err(|_| self.fail("lock poisoned"))
    }

    fn write(&self) -> Result<std::sync::RwLockWriteGuard<'_, Inner>> {
        self.inner.write().map_err(|_| self.fail("lock poisoned"))
    }
}

/// Cosine similarity of two unit vectors.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl VectorStore for MemoryStore {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn location(&self) -> String {
        match &self.path {
            Some(p) => format!("in-memory store saved at {}", p.display()),
            None => "in-memory store".to_owned(),
        }
    }

    fn inspect(&self) -> Result<Existing> {
        Ok(match &self.read()?.collection {
            None => Existing::Absent,
            Some(c) => Existing::Present {
                dense_dim: c.dense_dim,
            },
        })
    }

    fn create(&self, dense_dim: Option<usize>) -> Result<()> {
        let mut g = self.write()?;
        if g.collection.is_none() {
            g.collection = Some(Collection {
                dense_dim,
                ..Collection::default()
            });
        }
        Ok(())
    }

    fn drop_collection(&self) -> Result<()> {
        self.write()?.collection = None;
        if let Some(p) = &self.path {
            match std::fs::remove_file(p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(p.clone(), e)),
            }
        }
        Ok(())
    }

    fn upsert(&self, points: Vec<Point>) -> Result<()> {
        let mut g = self.write()?;
        let Some(c) = g.collection.as_mut() else {
            return Err(self.fail("the collection does not exist"));
        };
        for p in points {
            match (c.dense_dim, &p.dense) {
                (Some(d), Some(v)) if v.len() == d => {}
                (None, None) => {}
                (Some(d), Some(v)) => {
                    return Err(Error::DimensionMismatch {
                        expected: d,
                        got: v.len(),
                        context: "upsert into the in-memory store".to_owned(),
                    })
                }
                (Some(_), None) => return Err(self.fail("a point lacks its dense vector")),
                (None, Some(_)) => return Err(self.fail("the collection has no dense vector")),
            }
            for &i in &p.sparse.indices {
                *c.df.entry(i).or_default() += 1;
            }
            if let Some(old) = c.points.insert(p.id, p) {
                c.forget_terms(&old.sparse);
            }
        }
        Ok(())
    }

    fn delete(&self, ids: &[Uuid]) -> Result<()> {
        let mut g = self.write()?;
        if let Some(c) = g.collection.as_mut() {
            for id in ids {
                if let Some(old) = c.points.remove(id) {
                    c.forget_terms(&old.sparse);
                }
            }
        }
        Ok(())
    }

    fn search(&self, query: Query<'_>, filter: &Filter, limit: usize) -> Result<Vec<Hit>> {
        let g = self.read()?;
        let Some(c) = g.collection.as_ref() else {
            return Ok(Vec::new());
        };
        let n = c.points.len() as u64;
        // Score everything, keep the best `limit`, and only then copy their payloads.
        let mut scored: Vec<(f32, &Point)> = c
            .points
            .values()
            .filter(|p| filter.accepts(&p.payload))
            .filter_map(|p| {
                let score = match query {
                    Query::Dense(q) => dot(q, p.dense.as_deref()?),
                    Query::Sparse(q) => {
                        let s = q.dot_weighted(&p.sparse, |t| {
                            idf(n, c.df.get(&t).copied().unwrap_or(0))
                        });
                        if s <= 0.0 {
                            return None;
                        }
                        s
                    }
                };
                Some((score, p))
            })
            .collect();
        let order =
            |a: &(f32, &Point), b: &(f32, &Point)| b.0.total_cmp(&a.0).then(a.1.id.cmp(&b.1.id));
        if scored.len() > limit && limit > 0 {
            scored.select_nth_unstable_by(limit - 1, order);
            scored.truncate(limit);
        }
        scored.sort_by(order);
        scored.truncate(limit);
        Ok(scored
            .into_iter()
            .map(|(score, p)| Hit {
                id: p.id,
                score,
                payload: p.payload.clone(),
            })
            .collect())
    }

    fn count(&self) -> Result<u64> {
        Ok(self
            .read()?
            .collection
            .as_ref()
            .map_or(0, |c| c.points.len() as u64))
    }

    fn commit(&self, _bulk_loaded: bool) -> Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let g = self.read()?;
        let bytes = serde_json::to_vec(&*g).map_err(|e| self.fail(e))?;
        crate::state::write_atomic(path, &bytes)
    }
}
