//! The Qdrant-server path: the qdrant-client store against an in-process server speaking
//! Qdrant's gRPC protocol (built from the client crate's published server traits), with the same
//! suite as the embedded store; and against a real server when `QDRANT_URL` is set.
#![cfg(feature = "remote")]

mod common;

use common::*;
use qdrant_client::qdrant as pb;
use qdrant_client::qdrant::collections_server::{Collections, CollectionsServer};
use qdrant_client::qdrant::points_server::{Points, PointsServer};
use qdrant_client::qdrant::qdrant_server::{Qdrant, QdrantServer};
use roo_search::lexical::SparseVec;
use roo_search::store::memory::MemoryStore;
use roo_search::store::{ChunkPayload, Existing, Filter, Point, Query, VectorStore};
use roo_search::{EmbedderConfig, QdrantConfig, StoreConfig};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tonic::{Request, Response, Status};
use uuid::Uuid;

type Answer<T> = Result<Response<T>, Status>;

/// What the fake server saw, for assertions.
#[derive(Default)]
struct Seen {
    /// Field indexes created: (field, type).
    indexes: Vec<(String, i32)>,
    /// The modifier of the sparse vector `lexical` at creation.
    sparse_modifier: Option<i32>,
    dense_size: Option<u64>,
    calls: HashMap<&'static str, usize>,
}

#[derive(Clone, Default)]
struct Fake {
    collections: Arc<Mutex<HashMap<String, Arc<MemoryStore>>>>,
    seen: Arc<Mutex<Seen>>,
}

impl Fake {
    fn note(&self, call: &'static str) {
        *self
            .seen
            .lock()
            .expect("lock")
            .calls
            .entry(call)
            .or_default() += 1;
    }
    fn store(&self, name: &str) -> Result<Arc<MemoryStore>, Status> {
        self.collections
            .lock()
            .expect("lock")
            .get(name)
            .cloned()
            .ok_or_else(|| Status::not_found(format!("Collection `{name}` doesn't exist!")))
    }
}

fn internal(e: impl std::fmt::Display) -> Status {
    Status::internal(e.to_string())
}

fn parse_id(id: Option<pb::PointId>) -> Result<Uuid, Status> {
    match id.and_then(|i| i.point_id_options) {
        Some(pb::point_id::PointIdOptions::Uuid(s)) => Uuid::parse_str(&s).map_err(internal),
        _ => Err(Status::invalid_argument("ids are UUIDs here")),
    }
}

#[expect(deprecated)]
fn dense_of(v: pb::Vector) -> Option<Vec<f32>> {
    match v.vector {
        Some(pb::vector::Vector::Dense(d)) => Some(d.data),
        Some(_) => None,
        None => (!v.data.is_empty() && v.indices.is_none()).then_some(v.data),
    }
}

#[expect(deprecated)]
fn sparse_of(v: pb::Vector) -> Option<SparseVec> {
    match v.vector {
        Some(pb::vector::Vector::Sparse(s)) => Some(SparseVec {
            indices: s.indices,
            values: s.values,
        }),
        Some(_) => None,
        None => v.indices.map(|i| SparseVec {
            indices: i.data,
            values: v.data,
        }),
    }
}

/// The gRPC filter back into the crate's filter (the subset the client sends).
fn filter_of(f: Option<pb::Filter>) -> Result<Filter, Status> {
    let mut out = Filter::default();
    let Some(f) = f else { return Ok(out) };
    if !f.should.is_empty() || !f.must_not.is_empty() {
        return Err(Status::unimplemented("only `must` filters"));
    }
    for c in f.must {
        let Some(pb::condition::ConditionOneOf::Field(fc)) = c.condition_one_of else {
            return Err(Status::unimplemented("only field conditions"));
        };
        if let Some(m) = fc.r#match.and_then(|m| m.match_value) {
            match (fc.key.as_str(), m) {
                ("task_id", pb::r#match::MatchValue::Keywords(any)) => {
                    out.task_ids = Some(any.strings)
                }
                (key, pb::r#match::MatchValue::Keyword(k)) => match key {
                    "workspace_key" => out.workspace_key = Some(k),
                    "workspace_name" => out.workspace_name = Some(k),
                    "task_id" => out.task_id = Some(k),
                    "source" => out.source = Some(k),
                    other => return Err(Status::invalid_argument(format!("no index on {other}"))),
                },
                _ => return Err(Status::unimplemented("only keyword matches")),
            }
        } else if let Some(r) = fc.range {
            if fc.key != "timestamp" {
                return Err(Status::invalid_argument("ranges only on timestamp"));
            }
            out.from_s = r.gte.map(|v| v as i64);
            out.to_s = r.lte.map(|v| v as i64);
        }
    }
    Ok(out)
}

fn op_ok() -> Answer<pb::PointsOperationResponse> {
    Ok(Response::new(pb::PointsOperationResponse {
        result: Some(pb::UpdateResult {
            operation_id: Some(1),
            status: pb::UpdateStatus::Completed as i32,
        }),
        time: 0.0,
        usage: None,
    }))
}

#[tonic::async_trait]
impl Qdrant for Fake {
    async fn health_check(
        &self,
        _: Request<pb::HealthCheckRequest>,
    ) -> Answer<pb::HealthCheckReply> {
        Ok(Response::new(pb::HealthCheckReply {
            title: "qdrant - in-process test server".to_owned(),
            version: "1.16.0".to_owned(),
            commit: None,
        }))
    }
}

#[tonic::async_trait]
impl Collections for Fake {
    async fn collection_exists(
        &self,
        r: Request<pb::CollectionExistsRequest>,
    ) -> Answer<pb::CollectionExistsResponse> {
        self.note("collection_exists");
        let exists = self
            .collections
            .lock()
            .expect("lock")
            .contains_key(&r.into_inner().collection_name);
        Ok(Response::new(pb::CollectionExistsResponse {
            result: Some(pb::CollectionExists { exists }),
            time: 0.0,
        }))
    }

    async fn get(
        &self,
        r: Request<pb::GetCollectionInfoRequest>,
    ) -> Answer<pb::GetCollectionInfoResponse> {
        self.note("get");
        let store = self.store(&r.into_inner().collection_name)?;
        let dense_dim = match store.inspect().map_err(internal)? {
            Existing::Present { dense_dim } => dense_dim,
            // The fake server keeps its collections in memory: never damaged.
            Existing::Absent | Existing::Damaged => None,
        };
        let mut map = HashMap::new();
        if let Some(d) = dense_dim {
            map.insert(
                "dense".to_owned(),
                pb::VectorParams {
                    size: d as u64,
                    distance: pb::Distance::Cosine as i32,
                    ..Default::default()
                },
            );
        }
        Ok(Response::new(pb::GetCollectionInfoResponse {
            result: Some(pb::CollectionInfo {
                status: pb::CollectionStatus::Green as i32,
                points_count: Some(store.count().map_err(internal)?),
                config: Some(pb::CollectionConfig {
                    params: Some(pb::CollectionParams {
                        vectors_config: Some(pb::VectorsConfig {
                            config: Some(pb::vectors_config::Config::ParamsMap(
                                pb::VectorParamsMap { map },
                            )),
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            time: 0.0,
        }))
    }

    async fn create(
        &self,
        r: Request<pb::CreateCollection>,
    ) -> Answer<pb::CollectionOperationResponse> {
        self.note("create");
        let c = r.into_inner();
        let dense = match c.vectors_config.and_then(|v| v.config) {
            Some(pb::vectors_config::Config::ParamsMap(m)) => m.map.get("dense").map(|p| p.size),
            Some(pb::vectors_config::Config::Params(_)) => {
                return Err(Status::invalid_argument("the client must name its vectors"))
            }
            None => None,
        };
        let modifier = c
            .sparse_vectors_config
            .and_then(|s| s.map.get("lexical").and_then(|p| p.modifier));
        {
            let mut seen = self.seen.lock().expect("lock");
            seen.sparse_modifier = modifier;
            seen.dense_size = dense;
        }
        let mut cols = self.collections.lock().expect("lock");
        if cols.contains_key(&c.collection_name) {
            return Err(Status::already_exists("collection exists"));
        }
        let store = MemoryStore::open(None).map_err(internal)?;
        store.create(dense.map(|d| d as usize)).map_err(internal)?;
        cols.insert(c.collection_name, Arc::new(store));
        Ok(Response::new(pb::CollectionOperationResponse {
            result: true,
            time: 0.0,
        }))
    }

    async fn delete(
        &self,
        r: Request<pb::DeleteCollection>,
    ) -> Answer<pb::CollectionOperationResponse> {
        self.note("delete_collection");
        let removed = self
            .collections
            .lock()
            .expect("lock")
            .remove(&r.into_inner().collection_name);
        Ok(Response::new(pb::CollectionOperationResponse {
            result: removed.is_some(),
            time: 0.0,
        }))
    }

    async fn list(
        &self,
        _: Request<pb::ListCollectionsRequest>,
    ) -> Answer<pb::ListCollectionsResponse> {
        Err(Status::unimplemented("list"))
    }
    async fn update(
        &self,
        _: Request<pb::UpdateCollection>,
    ) -> Answer<pb::CollectionOperationResponse> {
        Err(Status::unimplemented("update"))
    }
    async fn update_aliases(
        &self,
        _: Request<pb::ChangeAliases>,
    ) -> Answer<pb::CollectionOperationResponse> {
        Err(Status::unimplemented("update_aliases"))
    }
    async fn list_collection_aliases(
        &self,
        _: Request<pb::ListCollectionAliasesRequest>,
    ) -> Answer<pb::ListAliasesResponse> {
        Err(Status::unimplemented("list_collection_aliases"))
    }
    async fn list_aliases(
        &self,
        _: Request<pb::ListAliasesRequest>,
    ) -> Answer<pb::ListAliasesResponse> {
        Err(Status::unimplemented("list_aliases"))
    }
    async fn collection_cluster_info(
        &self,
        _: Request<pb::CollectionClusterInfoRequest>,
    ) -> Answer<pb::CollectionClusterInfoResponse> {
        Err(Status::unimplemented("collection_cluster_info"))
    }
    async fn update_collection_cluster_setup(
        &self,
        _: Request<pb::UpdateCollectionClusterSetupRequest>,
    ) -> Answer<pb::UpdateCollectionClusterSetupResponse> {
        Err(Status::unimplemented("update_collection_cluster_setup"))
    }
    async fn create_shard_key(
        &self,
        _: Request<pb::CreateShardKeyRequest>,
    ) -> Answer<pb::CreateShardKeyResponse> {
        Err(Status::unimplemented("create_shard_key"))
    }
    async fn delete_shard_key(
        &self,
        _: Request<pb::DeleteShardKeyRequest>,
    ) -> Answer<pb::DeleteShardKeyResponse> {
        Err(Status::unimplemented("delete_shard_key"))
    }
    async fn list_shard_keys(
        &self,
        _: Request<pb::ListShardKeysRequest>,
    ) -> Answer<pb::ListShardKeysResponse> {
        Err(Status::unimplemented("list_shard_keys"))
    }
}

#[tonic::async_trait]
impl Points for Fake {
    async fn create_field_index(
        &self,
        r: Request<pb::CreateFieldIndexCollection>,
    ) -> Answer<pb::PointsOperationResponse> {
        self.note("create_field_index");
        let c = r.into_inner();
        self.store(&c.collection_name)?;
        self.seen
            .lock()
            .expect("lock")
            .indexes
            .push((c.field_name, c.field_type.unwrap_or(-1)));
        op_ok()
    }

    async fn upsert(&self, r: Request<pb::UpsertPoints>) -> Answer<pb::PointsOperationResponse> {
        self.note("upsert");
        let u = r.into_inner();
        let store = self.store(&u.collection_name)?;
        let mut points = Vec::with_capacity(u.points.len());
        for p in u.points {
            let id = parse_id(p.id)?;
            let Some(pb::vectors::VectorsOptions::Vectors(named)) =
                p.vectors.and_then(|v| v.vectors_options)
            else {
                return Err(Status::invalid_argument("named vectors expected"));
            };
            let mut named = named.vectors;
            let dense = named.remove("dense").and_then(dense_of);
            let sparse = named
                .remove("lexical")
                .and_then(sparse_of)
                .unwrap_or_default();
            let json: serde_json::Map<String, serde_json::Value> = p
                .payload
                .into_iter()
                .map(|(k, v)| (k, v.into_json()))
                .collect();
            let payload: ChunkPayload =
                serde_json::from_value(serde_json::Value::Object(json)).map_err(internal)?;
            points.push(Point {
                id,
                dense,
                sparse,
                payload,
            });
        }
        store
            .upsert(points)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        op_ok()
    }

    async fn delete(&self, r: Request<pb::DeletePoints>) -> Answer<pb::PointsOperationResponse> {
        self.note("delete_points");
        let d = r.into_inner();
        let store = self.store(&d.collection_name)?;
        let Some(pb::points_selector::PointsSelectorOneOf::Points(list)) =
            d.points.and_then(|p| p.points_selector_one_of)
        else {
            return Err(Status::unimplemented("only deletes by id"));
        };
        let ids = list
            .ids
            .into_iter()
            .map(|i| parse_id(Some(i)))
            .collect::<Result<Vec<_>, _>>()?;
        store.delete(&ids).map_err(internal)?;
        op_ok()
    }

    async fn count(&self, r: Request<pb::CountPoints>) -> Answer<pb::CountResponse> {
        self.note("count");
        let store = self.store(&r.into_inner().collection_name)?;
        Ok(Response::new(pb::CountResponse {
            result: Some(pb::CountResult {
                count: store.count().map_err(internal)?,
            }),
            time: 0.0,
            usage: None,
        }))
    }

    async fn query(&self, r: Request<pb::QueryPoints>) -> Answer<pb::QueryResponse> {
        self.note("query");
        let q = r.into_inner();
        let store = self.store(&q.collection_name)?;
        let filter = filter_of(q.filter)?;
        let limit = q.limit.unwrap_or(10) as usize;
        let Some(pb::query::Variant::Nearest(input)) = q.query.and_then(|q| q.variant) else {
            return Err(Status::unimplemented("only nearest queries"));
        };
        let hits = match (q.using.as_deref(), input.variant) {
            (Some("dense"), Some(pb::vector_input::Variant::Dense(d))) => {
                store.search(Query::Dense(&d.data), &filter, limit)
            }
            (Some("lexical"), Some(pb::vector_input::Variant::Sparse(s))) => {
                let v = SparseVec {
                    indices: s.indices,
                    values: s.values,
                };
                store.search(Query::Sparse(&v), &filter, limit)
            }
            _ => {
                return Err(Status::invalid_argument(
                    "query vector and `using` do not match",
                ))
            }
        }
        .map_err(internal)?;
        let result = hits
            .into_iter()
            .map(|h| {
                let json = serde_json::to_value(&h.payload).map_err(internal)?;
                let payload = qdrant_client::Payload::try_from(json).map_err(internal)?;
                Ok(pb::ScoredPoint {
                    id: Some(pb::PointId {
                        point_id_options: Some(pb::point_id::PointIdOptions::Uuid(
                            h.id.to_string(),
                        )),
                    }),
                    payload: payload.into(),
                    score: h.score,
                    ..Default::default()
                })
            })
            .collect::<Result<Vec<_>, Status>>()?;
        Ok(Response::new(pb::QueryResponse {
            result,
            time: 0.0,
            usage: None,
        }))
    }

    async fn get(&self, _: Request<pb::GetPoints>) -> Answer<pb::GetResponse> {
        Err(Status::unimplemented("get"))
    }
    async fn update_vectors(
        &self,
        _: Request<pb::UpdatePointVectors>,
    ) -> Answer<pb::PointsOperationResponse> {
        Err(Status::unimplemented("update_vectors"))
    }
    async fn delete_vectors(
        &self,
        _: Request<pb::DeletePointVectors>,
    ) -> Answer<pb::PointsOperationResponse> {
        Err(Status::unimplemented("delete_vectors"))
    }
    async fn set_payload(
        &self,
        _: Request<pb::SetPayloadPoints>,
    ) -> Answer<pb::PointsOperationResponse> {
        Err(Status::unimplemented("set_payload"))
    }
    async fn overwrite_payload(
        &self,
        _: Request<pb::SetPayloadPoints>,
    ) -> Answer<pb::PointsOperationResponse> {
        Err(Status::unimplemented("overwrite_payload"))
    }
    async fn delete_payload(
        &self,
        _: Request<pb::DeletePayloadPoints>,
    ) -> Answer<pb::PointsOperationResponse> {
        Err(Status::unimplemented("delete_payload"))
    }
    async fn clear_payload(
        &self,
        _: Request<pb::ClearPayloadPoints>,
    ) -> Answer<pb::PointsOperationResponse> {
        Err(Status::unimplemented("clear_payload"))
    }
    async fn delete_field_index(
        &self,
        _: Request<pb::DeleteFieldIndexCollection>,
    ) -> Answer<pb::PointsOperationResponse> {
        Err(Status::unimplemented("delete_field_index"))
    }
    async fn create_vector_name(
        &self,
        _: Request<pb::CreateVectorNameRequest>,
    ) -> Answer<pb::PointsOperationResponse> {
        Err(Status::unimplemented("create_vector_name"))
    }
    async fn delete_vector_name(
        &self,
        _: Request<pb::DeleteVectorNameRequest>,
    ) -> Answer<pb::PointsOperationResponse> {
        Err(Status::unimplemented("delete_vector_name"))
    }
    async fn search(&self, _: Request<pb::SearchPoints>) -> Answer<pb::SearchResponse> {
        Err(Status::unimplemented("search"))
    }
    async fn search_batch(
        &self,
        _: Request<pb::SearchBatchPoints>,
    ) -> Answer<pb::SearchBatchResponse> {
        Err(Status::unimplemented("search_batch"))
    }
    async fn search_groups(
        &self,
        _: Request<pb::SearchPointGroups>,
    ) -> Answer<pb::SearchGroupsResponse> {
        Err(Status::unimplemented("search_groups"))
    }
    async fn scroll(&self, _: Request<pb::ScrollPoints>) -> Answer<pb::ScrollResponse> {
        Err(Status::unimplemented("scroll"))
    }
    async fn recommend(&self, _: Request<pb::RecommendPoints>) -> Answer<pb::RecommendResponse> {
        Err(Status::unimplemented("recommend"))
    }
    async fn recommend_batch(
        &self,
        _: Request<pb::RecommendBatchPoints>,
    ) -> Answer<pb::RecommendBatchResponse> {
        Err(Status::unimplemented("recommend_batch"))
    }
    async fn recommend_groups(
        &self,
        _: Request<pb::RecommendPointGroups>,
    ) -> Answer<pb::RecommendGroupsResponse> {
        Err(Status::unimplemented("recommend_groups"))
    }
    async fn discover(&self, _: Request<pb::DiscoverPoints>) -> Answer<pb::DiscoverResponse> {
        Err(Status::unimplemented("discover"))
    }
    async fn discover_batch(
        &self,
        _: Request<pb::DiscoverBatchPoints>,
    ) -> Answer<pb::DiscoverBatchResponse> {
        Err(Status::unimplemented("discover_batch"))
    }
    async fn update_batch(
        &self,
        _: Request<pb::UpdateBatchPoints>,
    ) -> Answer<pb::UpdateBatchResponse> {
        Err(Status::unimplemented("update_batch"))
    }
    async fn query_batch(
        &self,
        _: Request<pb::QueryBatchPoints>,
    ) -> Answer<pb::QueryBatchResponse> {
        Err(Status::unimplemented("query_batch"))
    }
    async fn query_groups(
        &self,
        _: Request<pb::QueryPointGroups>,
    ) -> Answer<pb::QueryGroupsResponse> {
        Err(Status::unimplemented("query_groups"))
    }
    async fn facet(&self, _: Request<pb::FacetCounts>) -> Answer<pb::FacetResponse> {
        Err(Status::unimplemented("facet"))
    }
    async fn search_matrix_pairs(
        &self,
        _: Request<pb::SearchMatrixPoints>,
    ) -> Answer<pb::SearchMatrixPairsResponse> {
        Err(Status::unimplemented("search_matrix_pairs"))
    }
    async fn search_matrix_offsets(
        &self,
        _: Request<pb::SearchMatrixPoints>,
    ) -> Answer<pb::SearchMatrixOffsetsResponse> {
        Err(Status::unimplemented("search_matrix_offsets"))
    }
}

/// Start the server on a free port; returns its URL.
fn start_fake_qdrant() -> (String, Fake) {
    let fake = Fake::default();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    listener.set_nonblocking(true).expect("nonblocking");
    let served = fake.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            tonic::transport::Server::builder()
                .add_service(QdrantServer::new(served.clone()))
                .add_service(CollectionsServer::new(served.clone()))
                .add_service(PointsServer::new(served))
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
                .await
                .expect("serve");
        });
    });
    (format!("http://{addr}"), fake)
}

fn qdrant(url: &str) -> StoreConfig {
    StoreConfig::Qdrant(QdrantConfig {
        url: Some(url.to_owned()),
        api_key: None,
        timeout_ms: Some(10_000),
    })
}

#[test]
fn the_client_against_an_in_process_qdrant_grpc_server() {
    let (url, fake) = start_fake_qdrant();
    let work = tempfile::tempdir().expect("tmp");
    let recall = run_store_suite(
        "qdrant-grpc/lexical",
        qdrant(&url),
        EmbedderConfig::None,
        work.path(),
    );
    assert!(recall >= min_recall("lexical"), "{recall}");
    let seen = fake.seen.lock().expect("lock");
    // Same schema as the embedded store: IDF on the sparse vector, payload indexes.
    assert_eq!(seen.sparse_modifier, Some(pb::Modifier::Idf as i32));
    for (field, kind) in [
        ("task_id", pb::FieldType::Keyword),
        ("workspace", pb::FieldType::Keyword),
        ("timestamp", pb::FieldType::Integer),
    ] {
        assert!(
            seen.indexes.contains(&(field.to_owned(), kind as i32)),
            "index on {field}: {:?}",
            seen.indexes
        );
    }
    assert!(seen.calls.get("query").copied().unwrap_or(0) > 40);
    assert!(
        seen.calls.get("delete_collection").copied().unwrap_or(0) >= 1,
        "the forced rebuild drops the collection"
    );
}

#[test]
fn a_narrow_scope_fills_its_page_through_grpc() {
    let (url, fake) = start_fake_qdrant();
    let work = tempfile::tempdir().expect("tmp");
    check_narrow_scope(qdrant(&url), work.path());
    let seen = fake.seen.lock().expect("lock");
    assert!(seen
        .indexes
        .contains(&("source".to_owned(), pb::FieldType::Keyword as i32)));
}

#[test]
fn dense_vectors_through_grpc() {
    let (url, fake) = start_fake_qdrant();
    let server = start_fake_server(FakeBehaviour {
        dims: 64,
        ..FakeBehaviour::default()
    });
    let work = tempfile::tempdir().expect("tmp");
    let recall = run_store_suite(
        "qdrant-grpc/http-hybrid",
        qdrant(&url),
        EmbedderConfig::Http(http_config(&server, Some(64))),
        work.path(),
    );
    assert!(recall > 0.5, "{recall}");
    assert_eq!(fake.seen.lock().expect("lock").dense_size, Some(64));
}

#[test]
fn a_collection_made_by_another_embedder_is_refused() {
    let (url, _fake) = start_fake_qdrant();
    let server = start_fake_server(FakeBehaviour {
        dims: 16,
        ..FakeBehaviour::default()
    });
    let work = tempfile::tempdir().expect("tmp");
    let tasks = copy_fixtures(&work.path().join("tasks"));
    let run = |dir: &str, embedder: EmbedderConfig| {
        roo_search::index_tasks(&roo_search::IndexOptions {
            tasks_dirs: tasks.clone(),
            index_dir: Some(work.path().join(dir)),
            embedder,
            store: qdrant(&url),
            ..Default::default()
        })
    };
    run(
        "machine-a",
        EmbedderConfig::Http(http_config(&server, Some(16))),
    )
    .expect("first machine");
    // A second machine (its own index directory) with no model shares the collection: refused.
    let err = run("machine-b", EmbedderConfig::None).expect_err("dimension mismatch");
    assert_eq!(err.code(), "DIMENSION_MISMATCH", "{err}");
    // The same embedder on the second machine adopts the collection (same ids: no duplicates).
    let again = run(
        "machine-b",
        EmbedderConfig::Http(http_config(&server, Some(16))),
    )
    .expect("same embedder");
    assert!(again.rebuilt.is_none());
}

#[test]
fn an_unreachable_server_is_a_plain_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    let work = tempfile::tempdir().expect("tmp");
    let err = roo_search::search_tasks_semantic(&roo_search::SearchOptions {
        query: "x".to_owned(),
        index_dir: Some(work.path().to_path_buf()),
        store: qdrant(&url),
        ..Default::default()
    })
    .expect_err("nobody listens");
    assert_eq!(err.code(), "STORE_FAILED");
    assert!(err.to_string().contains(&url), "{err}");
}

#[test]
fn a_real_qdrant_server_when_qdrant_url_is_set() {
    let Ok(url) = std::env::var("QDRANT_URL") else {
        println!("skipped: QDRANT_URL is not set, so no real Qdrant server was tested (the same suite ran against the in-process gRPC server above)");
        return;
    };
    let collection = format!("roo_search_test_{}", std::process::id());
    let store = StoreConfig::Qdrant(QdrantConfig {
        url: Some(url),
        api_key: std::env::var("QDRANT_API_KEY").ok(),
        timeout_ms: Some(30_000),
    });
    let work = tempfile::tempdir().expect("tmp");
    let recall = run_store_suite_in(
        "qdrant-server/lexical",
        store.clone(),
        Some(&collection),
        EmbedderConfig::None,
        work.path(),
    );
    assert!(recall >= min_recall("lexical"), "{recall}");
    let resolved = roo_search::store::resolve(&store, work.path(), &collection);
    let s = roo_search::store::open(&resolved, &collection).expect("open");
    s.drop_collection().expect("clean up the test collection");
}
