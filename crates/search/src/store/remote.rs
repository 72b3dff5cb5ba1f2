//! A Qdrant server through qdrant-client (gRPC): the path for an index shared by several
//! machines. Same collection, vectors and payload as the embedded store.
//!
//! The client is asynchronous; this store owns a small tokio runtime and blocks on it, so the
//! rest of the crate stays synchronous. Calls must come from outside any tokio runtime (the N-API
//! binding runs them on the libuv pool).

use super::{
    ChunkPayload, Existing, Filter, Hit, Point, QdrantConfig, Query, VectorStore, DENSE,
    INTEGER_INDEXES, KEYWORD_INDEXES, SPARSE,
};
use crate::error::{Error, Result};
use qdrant_client::qdrant::{
    self as pb, point_id::PointIdOptions, points_selector::PointsSelectorOneOf, vector_input,
    vectors_config, with_payload_selector::SelectorOptions, Condition,
};
use qdrant_client::Qdrant;
use std::collections::HashMap;
use std::time::Duration;
use uuid::Uuid;

pub struct RemoteStore {
    url: String,
    collection: String,
    client: Qdrant,
    rt: tokio::runtime::Runtime,
}

impl RemoteStore {
    /// Connect and check the server answers.
    pub fn connect(cfg: &QdrantConfig, collection: &str) -> Result<Self> {
        let url = cfg.url.clone().ok_or_else(|| {
            Error::InvalidArgument(
                "no Qdrant server URL: set QDRANT_URL or pass store.url".to_owned(),
            )
        })?;
        let fail = |m: String| Error::store(format!("Qdrant server at {url}"), m);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| fail(format!("no runtime for the client: {e}")))?;
        let timeout = Duration::from_millis(cfg.timeout_ms.unwrap_or(15_000));
        let mut builder = Qdrant::from_url(&url)
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(5))
            .skip_compatibility_check();
        if let Some(k) = &cfg.api_key {
            builder = builder.api_key(k.clone());
        }
        let client = {
            let _guard = rt.enter();
            builder.build().map_err(|e| fail(e.to_string()))?
        };
        rt.block_on(client.health_check()).map_err(|e| {
            fail(format!(
                "the server does not answer ({e}); check QDRANT_URL (gRPC port, usually 6334)"
            ))
        })?;
        Ok(Self {
            url,
            collection: collection.to_owned(),
            client,
            rt,
        })
    }

    fn fail(&self, e: impl std::fmt::Display) -> Error {
        Error::store(self.location(), e)
    }
}

fn point_id(id: Uuid) -> pb::PointId {
    pb::PointId {
        point_id_options: Some(PointIdOptions::Uuid(id.to_string())),
    }
}

/// The gRPC filter of a [`Filter`].
pub fn grpc_filter(f: &Filter) -> Option<pb::Filter> {
    let mut must = Vec::new();
    if let Some(k) = &f.workspace_key {
        must.push(Condition::matches("workspace_key", k.clone()));
    }
    if let Some(n) = &f.workspace_name {
        must.push(Condition::matches("workspace_name", n.clone()));
    }
    if let Some(t) = &f.task_id {
        must.push(Condition::matches("task_id", t.clone()));
    }
    if let Some(ids) = &f.task_ids {
        must.push(Condition::matches("task_id", ids.clone()));
    }
    if let Some(h) = &f.source {
        must.push(Condition::matches("source", h.clone()));
    }
    if f.from_s.is_some() || f.to_s.is_some() {
        must.push(Condition::range(
            "timestamp",
            pb::Range {
                gte: f.from_s.map(|v| v as f64),
                lte: f.to_s.map(|v| v as f64),
                ..pb::Range::default()
            },
        ));
    }
    (!must.is_empty()).then(|| pb::Filter::must(must))
}

fn dense_vector(v: Vec<f32>) -> pb::Vector {
    pb::Vector {
        vector: Some(pb::vector::Vector::Dense(pb::DenseVector { data: v })),
        ..pb::Vector::default()
    }
}

fn sparse_vector(indices: Vec<u32>, values: Vec<f32>) -> pb::Vector {
    pb::Vector {
        vector: Some(pb::vector::Vector::Sparse(pb::SparseVector {
            values,
            indices,
        })),
        ..pb::Vector::default()
    }
}

fn to_payload(p: &ChunkPayload) -> Result<HashMap<String, pb::Value>> {
    let json = serde_json::to_value(p).map_err(|e| Error::store("qdrant", e))?;
    let payload = qdrant_client::Payload::try_from(json).map_err(|e| Error::store("qdrant", e))?;
    Ok(payload.into())
}

fn from_payload(map: HashMap<String, pb::Value>) -> Option<ChunkPayload> {
    let json: serde_json::Map<String, serde_json::Value> =
        map.into_iter().map(|(k, v)| (k, v.into_json())).collect();
    serde_json::from_value(serde_json::Value::Object(json)).ok()
}

impl VectorStore for RemoteStore {
    fn kind(&self) -> &'static str {
        "qdrant"
    }

    fn location(&self) -> String {
        format!("Qdrant server at {}", self.url)
    }

    fn inspect(&self) -> Result<Existing> {
        let exists = self
            .rt
            .block_on(self.client.collection_exists(pb::CollectionExistsRequest {
                collection_name: self.collection.clone(),
            }))
            .map_err(|e| self.fail(e))?;
        if !exists {
            return Ok(Existing::Absent);
        }
        let info = self
            .rt
            .block_on(self.client.collection_info(pb::GetCollectionInfoRequest {
                collection_name: self.collection.clone(),
            }))
            .map_err(|e| self.fail(e))?;
        let vectors = info
            .result
            .and_then(|r| r.config)
            .and_then(|c| c.params)
            .and_then(|p| p.vectors_config)
            .and_then(|v| v.config);
        let dense_dim = match vectors {
            Some(vectors_config::Config::ParamsMap(m)) => m.map.get(DENSE).map(|p| p.size as usize),
            Some(vectors_config::Config::Params(p)) => Some(p.size as usize),
            None => None,
        };
        Ok(Existing::Present { dense_dim })
    }

    fn create(&self, dense_dim: Option<usize>) -> Result<()> {
        let mut dense = HashMap::new();
        if let Some(d) = dense_dim {
            dense.insert(
                DENSE.to_owned(),
                pb::VectorParams {
                    size: d as u64,
                    distance: pb::Distance::Cosine as i32,
                    ..pb::VectorParams::default()
                },
            );
        }
        let mut sparse = HashMap::new();
        sparse.insert(
            SPARSE.to_owned(),
            pb::SparseVectorParams {
                index: None,
                modifier: Some(pb::Modifier::Idf as i32),
            },
        );
        let request = pb::CreateCollection {
            collection_name: self.collection.clone(),
            vectors_config: Some(pb::VectorsConfig {
                config: Some(vectors_config::Config::ParamsMap(pb::VectorParamsMap {
                    map: dense,
                })),
            }),
            sparse_vectors_config: Some(pb::SparseVectorConfig { map: sparse }),
            ..pb::CreateCollection::default()
        };
        self.rt
            .block_on(self.client.create_collection(request))
            .map_err(|e| self.fail(e))?;
        let indexes = KEYWORD_INDEXES
            .iter()
            .map(|k| (*k, pb::FieldType::Keyword))
            .chain(INTEGER_INDEXES.iter().map(|k| (*k, pb::FieldType::Integer)));
        for (field, kind) in indexes {
            self.rt
                .block_on(
                    self.client
                        .create_field_index(pb::CreateFieldIndexCollection {
                            collection_name: self.collection.clone(),
                            wait: Some(true),
                            field_name: field.to_owned(),
                            field_type: Some(kind as i32),
                            ..pb::CreateFieldIndexCollection::default()
                        }),
                )
                .map_err(|e| self.fail(format!("index on {field}: {e}")))?;
        }
        Ok(())
    }

    fn drop_collection(&self) -> Result<()> {
        self.rt
            .block_on(self.client.delete_collection(pb::DeleteCollection {
                collection_name: self.collection.clone(),
                timeout: None,
            }))
            .map_err(|e| self.fail(e))?;
        Ok(())
    }

    fn upsert(&self, points: Vec<Point>) -> Result<()> {
        if points.is_empty() {
            return Ok(());
        }
        let mut list = Vec::with_capacity(points.len());
        for p in points {
            let mut vectors = HashMap::new();
            if let Some(d) = p.dense {
                vectors.insert(DENSE.to_owned(), dense_vector(d));
            }
            if !p.sparse.is_empty() {
                vectors.insert(
                    SPARSE.to_owned(),
                    sparse_vector(p.sparse.indices, p.sparse.values),
                );
            }
            list.push(pb::PointStruct {
                id: Some(point_id(p.id)),
                payload: to_payload(&p.payload)?,
                vectors: Some(pb::Vectors {
                    vectors_options: Some(pb::vectors::VectorsOptions::Vectors(pb::NamedVectors {
                        vectors,
                    })),
                }),
            });
        }
        self.rt
            .block_on(self.client.upsert_points(pb::UpsertPoints {
                collection_name: self.collection.clone(),
                wait: Some(true),
                points: list,
                ..pb::UpsertPoints::default()
            }))
            .map_err(|e| self.fail(e))?;
        Ok(())
    }

    fn delete(&self, ids: &[Uuid]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.rt
            .block_on(self.client.delete_points(pb::DeletePoints {
                collection_name: self.collection.clone(),
                wait: Some(true),
                points: Some(pb::PointsSelector {
                    points_selector_one_of: Some(PointsSelectorOneOf::Points(pb::PointsIdsList {
                        ids: ids.iter().map(|i| point_id(*i)).collect(),
                    })),
                }),
                ..pb::DeletePoints::default()
            }))
            .map_err(|e| self.fail(e))?;
        Ok(())
    }

    fn search(&self, query: Query<'_>, filter: &Filter, limit: usize) -> Result<Vec<Hit>> {
        let (using, input) = match query {
            Query::Dense(v) => (
                DENSE,
                vector_input::Variant::Dense(pb::DenseVector { data: v.to_vec() }),
            ),
            Query::Sparse(q) => (
                SPARSE,
                vector_input::Variant::Sparse(pb::SparseVector {
                    values: q.values.clone(),
                    indices: q.indices.clone(),
                }),
            ),
        };
        let request = pb::QueryPoints {
            collection_name: self.collection.clone(),
            query: Some(pb::Query {
                variant: Some(pb::query::Variant::Nearest(pb::VectorInput {
                    variant: Some(input),
                })),
            }),
            using: Some(using.to_owned()),
            filter: grpc_filter(filter),
            limit: Some(limit as u64),
            with_payload: Some(pb::WithPayloadSelector {
                selector_options: Some(SelectorOptions::Enable(true)),
            }),
            ..pb::QueryPoints::default()
        };
        let resp = self
            .rt
            .block_on(self.client.query(request))
            .map_err(|e| self.fail(e))?;
        let mut hits = Vec::with_capacity(resp.result.len());
        for p in resp.result {
            let id = match p.id.and_then(|i| i.point_id_options) {
                Some(PointIdOptions::Uuid(s)) => match Uuid::parse_str(&s) {
                    Ok(u) => u,
                    Err(_) => continue,
                },
                Some(PointIdOptions::Num(n)) => Uuid::from_u128(u128::from(n)),
                None => continue,
            };
            if matches!(query, Query::Sparse(_)) && p.score <= 0.0 {
                continue;
            }
            // Points written by something else (without our payload) are skipped.
            let Some(payload) = from_payload(p.payload) else {
                continue;
            };
            hits.push(Hit {
                id,
                score: p.score,
                payload,
            });
        }
        Ok(hits)
    }

    fn count(&self) -> Result<u64> {
        let resp = self
            .rt
            .block_on(self.client.count(pb::CountPoints {
                collection_name: self.collection.clone(),
                exact: Some(true),
                ..pb::CountPoints::default()
            }))
            .map_err(|e| self.fail(e))?;
        Ok(resp.result.map_or(0, |r| r.count))
    }

    fn commit(&self, _bulk_loaded: bool) -> Result<()> {
        // Writes wait for the server; it optimises on its own.
        Ok(())
    }
}
