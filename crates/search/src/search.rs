//! `search_tasks_semantic`: find the tasks whose dialogue matches a query, grouped by task.
//!
//! Three modes: `semantic` (cosine of dense vectors), `lexical` (BM25 over the sparse vectors)
//! and `hybrid` (both rankings fused by reciprocal rank, so exact identifiers, file names and
//! error strings surface even when the model does not know them). The default is `hybrid` when
//! the index has dense vectors and `lexical` otherwise.

use crate::embed::{self, Embedder, EmbedderConfig, EmbedderId, Purpose};
use crate::error::{Error, Result};
use crate::index::{target, task_facts, StoreSummary};
use crate::lexical;
use crate::phrase::{self, PhraseQuery};
use crate::scope::Scope;
use crate::state;
use crate::store::{self, Existing, Filter, Hit, Query, StoreConfig, VectorStore};
use roo_formats::text::parse_iso_ms;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use uuid::Uuid;

/// How to match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SearchMode"))]
pub enum Mode {
    Semantic,
    Lexical,
    Hybrid,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "semantic" => Some(Mode::Semantic),
            "lexical" => Some(Mode::Lexical),
            "hybrid" => Some(Mode::Hybrid),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Semantic => "semantic",
            Mode::Lexical => "lexical",
            Mode::Hybrid => "hybrid",
        }
    }
}

/// Options of [`search_tasks_semantic`].
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    pub query: String,
    /// ISO 8601 date or date-time; inclusive.
    pub start_date: Option<String>,
    /// ISO 8601 date or date-time; inclusive (a bare date or midnight means the whole day).
    pub end_date: Option<String>,
    /// A workspace path (matched exactly, after normalising separators and case) or a bare
    /// folder name (matched against the last component).
    pub workspace: Option<String>,
    /// Only tasks of this host family (a label of `roo_formats::host::SOURCES`).
    pub host: Option<String>,
    /// Only this task (an id or unique prefix) and its descendants.
    pub task: Option<String>,
    /// Tasks to return (default 10, at most 100).
    pub limit: Option<usize>,
    pub mode: Option<Mode>,
    /// Snippets per task (default 3).
    pub snippets_per_task: Option<usize>,
    pub index_dir: Option<PathBuf>,
    pub store: StoreConfig,
    pub collection: Option<String>,
    /// The embedder for the query; default: the one that built the index.
    pub embedder: Option<EmbedderConfig>,
}

/// A matching piece of dialogue.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SearchSnippet"))]
pub struct Snippet {
    pub text: String,
    /// ISO 8601 time of the chunk's first message.
    pub timestamp: String,
    /// ISO 8601 time of its last message.
    pub end_timestamp: String,
    /// `user`, `assistant` or `mixed`.
    #[cfg_attr(feature = "ts", ts(type = "\"user\" | \"assistant\" | \"mixed\""))]
    pub role: String,
    pub chunk_index: u32,
    pub score: f32,
    /// Where the query's phrases (or, for a plain query of several words, the whole query in
    /// order) stand in `text`: `[start, end)` in UTF-16 code units, as JavaScript indexes strings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub highlights: Vec<[u32; 2]>,
}

/// A task that matches, with its best snippets.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "TaskSearchResult"),
    ts(optional_fields)
)]
pub struct TaskResult {
    pub task_id: String,
    /// The best chunk score: cosine (semantic), BM25 (lexical) or fused rank in 0..1 (hybrid).
    pub score: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub host: String,
    pub snippets: Vec<Snippet>,
    /// The task's other copies, when several stores hold it (Zoo Code's import of Roo Code's
    /// history): the task is found once, in the newer copy, and these are named.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub also_in: Vec<roo_store::task_store::AlsoIn>,
}

/// What a search found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "SearchTasksResult"))]
pub struct SearchResponse {
    pub query: String,
    pub mode: Mode,
    pub results: Vec<TaskResult>,
    /// Chunks that matched before grouping.
    pub chunks_matched: usize,
    pub embedder: EmbedderId,
    pub store: StoreSummary,
    /// Time spent in the store (and fusing), in ms, excluding the query embedding.
    pub search_ms: f64,
    /// Time spent embedding the query, in ms.
    pub embed_ms: f64,
    /// Things a person should know about this answer (a fallback taken, a filter ignored).
    pub notes: Vec<String>,
}

/// Constant of reciprocal rank fusion.
const RRF_K: f32 = 60.0;

/// Chunks the lexical ranking fetches for a query holding a quoted phrase.
const PHRASE_POOL: usize = 2000;

/// The millisecond bounds of a date range; a bare end date (or one at midnight) covers its day.
pub fn date_bounds(start: Option<&str>, end: Option<&str>) -> Result<(Option<i64>, Option<i64>)> {
    let parse = |s: &str, what: &str| {
        parse_iso_ms(s).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{what} `{s}` is not an ISO 8601 date (2025-06-01) or date-time \
                 (2025-06-01T10:00:00Z)"
            ))
        })
    };
    let from = start
        .filter(|s| !s.trim().is_empty())
        .map(|s| parse(s, "startDate"))
        .transpose()?;
    let to = end
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            let ms = parse(s, "endDate")?;
            Ok::<i64, Error>(if ms.rem_euclid(86_400_000) == 0 {
                ms + 86_399_999
            } else {
                ms
            })
        })
        .transpose()?;
    if let (Some(f), Some(t)) = (from, to) {
        if f > t {
            return Err(Error::InvalidArgument(
                "startDate is after endDate".to_owned(),
            ));
        }
    }
    Ok((from, to))
}

/// The store filter of a workspace and a date range.
pub fn build_filter(workspace: Option<&str>, from: Option<i64>, to: Option<i64>) -> Filter {
    let mut f = Filter {
        from_s: from.map(|ms| ms.div_euclid(1000)),
        to_s: to.map(|ms| ms.div_euclid(1000)),
        ..Filter::default()
    };
    if let Some(ws) = workspace
        .map(str::trim)
        .filter(|w| !w.is_empty() && *w != "*")
    {
        if ws.contains('/') || ws.contains('\\') {
            f.workspace_key = Some(roo_state::hierarchy::normalize_workspace(ws));
        } else {
            f.workspace_name = Some(ws.to_lowercase());
        }
    }
    f
}

/// Search the index.
pub fn search_tasks_semantic(opts: &SearchOptions) -> Result<SearchResponse> {
    let query = opts.query.trim();
    if query.is_empty() {
        return Err(Error::InvalidArgument("the query is empty".to_owned()));
    }
    let limit = opts.limit.unwrap_or(10).clamp(1, 100);
    let per_task = opts.snippets_per_task.unwrap_or(3).clamp(1, 20);
    let (from_ms, to_ms) = date_bounds(opts.start_date.as_deref(), opts.end_date.as_deref())?;
    let mut filter = build_filter(opts.workspace.as_deref(), from_ms, to_ms);

    let t = target(
        opts.index_dir.as_deref(),
        &opts.store,
        opts.collection.as_deref(),
    );
    let st = state::load_cached(&t.state_path)?;
    let remote = matches!(t.resolved, store::ResolvedStore::Qdrant(_));
    if st.is_none() && !remote {
        return Err(Error::NotIndexed(t.index_dir.clone()));
    }
    let store = store::open(&t.resolved, &t.collection)?;
    let index_dense = match store.inspect()? {
        Existing::Absent => return Err(Error::NotIndexed(t.index_dir.clone())),
        Existing::Damaged => return Err(Error::store(
            store.location(),
            "the index is damaged and cannot be loaded; run indexTasks (it starts the index again)",
        )),
        Existing::Present { dense_dim } => dense_dim,
    };
    let scope = Scope::new(opts.host.as_deref(), opts.task.as_deref(), st.as_deref())?;
    scope.narrow(&mut filter);
    let mut notes = Vec::new();
    let (embedder_id, embedder) = query_embedder(opts, st.as_deref(), index_dense, &mut notes)?;
    let mode = search_mode(opts.mode, index_dense.is_some(), embedder.is_some())?;

    let embed_start = std::time::Instant::now();
    let dense_q = match (&embedder, mode) {
        (Some(e), Mode::Semantic | Mode::Hybrid) => e
            .embed(&[query], Purpose::Query)?
            .into_iter()
            .next()
            .filter(|v| !v.is_empty()),
        _ => None,
    };
    let embed_ms = embed_start.elapsed().as_secs_f64() * 1000.0;
    let search_start = std::time::Instant::now();
    let order = PhraseQuery::parse(query);
    let chunks = ChunkSearch {
        store: store.as_ref(),
        filter: &filter,
        candidates: candidate_pool(limit, &embedder_id),
        from_ms,
        to_ms,
    };
    // A quoted phrase is checked on the chunks' text: BM25 ranks every chunk that holds its
    // words, in any order, so the lexical pool is as deep as a store answers.
    let sparse_chunks = ChunkSearch {
        candidates: if order.phrases.is_empty() {
            chunks.candidates
        } else {
            PHRASE_POOL
        },
        ..chunks
    };
    let dense_hits = match &dense_q {
        Some(v) => chunks.run(Query::Dense(v))?,
        None => Vec::new(),
    };
    let sparse_hits = if mode != Mode::Semantic {
        sparse_chunks.lexical(query, mode, &mut notes)?
    } else {
        Vec::new()
    };
    let fused = fuse(mode, dense_hits, sparse_hits);
    let fused = phrase::rerank(&order, fused, |h| h.payload.dialogue_snippet.as_str());
    let chunks_matched = fused.len();
    let results = group(fused, limit, per_task, st.as_deref(), &order);
    let search_ms = search_start.elapsed().as_secs_f64() * 1000.0;
    Ok(SearchResponse {
        query: query.to_owned(),
        mode,
        results,
        chunks_matched,
        embedder: embedder_id,
        store: StoreSummary {
            kind: store.kind().to_owned(),
            location: store.location(),
            collection: t.collection.clone(),
        },
        search_ms,
        embed_ms,
        notes,
    })
}

/// The query embedder: the one asked for (it must match the index), else the index's own; none
/// when the index has no dense vectors or only a lexical search is asked for. Without a mode
/// asked for, an embedder that cannot be built leaves a lexical search and a note.
fn query_embedder(
    opts: &SearchOptions,
    st: Option<&state::IndexState>,
    index_dense: Option<usize>,
    notes: &mut Vec<String>,
) -> Result<(EmbedderId, Option<Arc<dyn Embedder>>)> {
    let index_id = st.map(|s| s.embedder.clone());
    let embedder_id = index_id.clone().unwrap_or_else(EmbedderId::none);
    if index_dense.is_none() || opts.mode == Some(Mode::Lexical) {
        return Ok((embedder_id, None));
    }
    let built = match (&opts.embedder, &index_id) {
        (Some(cfg), _) => embed::build(cfg),
        (None, Some(id)) => embed::for_index(
            id,
            st.and_then(|s| s.http.as_ref()),
            st.and_then(|s| s.model_dir.as_deref()),
        ),
        (None, None) => embed::build(&EmbedderConfig::Auto),
    };
    match built {
        Ok(e) => {
            let id = e.id()?;
            if let Some(dim) = index_dense {
                if id.dimension != dim || index_id.as_ref().is_some_and(|i| !i.same_vectors(&id)) {
                    return Err(Error::EmbedderMismatch {
                        index: index_id
                            .as_ref()
                            .map_or_else(|| format!("{dim}-dimension vectors"), ToString::to_string),
                        query: id.to_string(),
                        hint: "search with the index's embedder, or run indexTasks with this one to rebuild",
                    });
                }
            }
            Ok((id, Some(e)))
        }
        Err(e) if opts.mode.is_none() => {
            notes.push(format!(
                "lexical search only: the index's embedder is not usable here ({e})"
            ));
            Ok((embedder_id, None))
        }
        Err(e) => Err(e),
    }
}

/// How many chunks each ranking fetches. A static model's dense ranking is coarser than a
/// sentence model's: fusion needs a deeper pool of chunks to find the tasks both rankings agree
/// on (small limits lose recall else).
fn candidate_pool(limit: usize, embedder: &EmbedderId) -> usize {
    let least = if embedder.kind == "static" { 100 } else { 50 };
    (limit * 10).clamp(least, 1000)
}

/// One ranking of chunks from the store: the filter, the pool size, and the exact date bounds
/// (the store filters on whole seconds).
#[derive(Clone, Copy)]
struct ChunkSearch<'a> {
    store: &'a dyn VectorStore,
    filter: &'a Filter,
    candidates: usize,
    from_ms: Option<i64>,
    to_ms: Option<i64>,
}

impl ChunkSearch<'_> {
    /// The chunks `query` finds, within the date bounds to the millisecond.
    fn run(&self, query: Query) -> Result<Vec<Hit>> {
        let exact = |h: &Hit| {
            self.from_ms.is_none_or(|f| h.payload.timestamp_ms >= f)
                && self.to_ms.is_none_or(|t| h.payload.timestamp_ms <= t)
        };
        Ok(self
            .store
            .search(query, self.filter, self.candidates)?
            .into_iter()
            .filter(exact)
            .collect())
    }

    /// The BM25 ranking of `query`; none, with a note in a lexical search, when it has no
    /// searchable words.
    fn lexical(&self, query: &str, mode: Mode, notes: &mut Vec<String>) -> Result<Vec<Hit>> {
        let q = lexical::query_vector(query);
        if q.is_empty() {
            if mode == Mode::Lexical {
                notes.push("the query has no searchable words".to_owned());
            }
            return Ok(Vec::new());
        }
        self.run(Query::Sparse(&q))
    }
}

/// The mode a search runs in: the one asked for, when the index can serve it; else hybrid when
/// the query can be embedded, lexical otherwise.
fn search_mode(wanted: Option<Mode>, index_dense: bool, can_embed: bool) -> Result<Mode> {
    match wanted {
        Some(m @ (Mode::Semantic | Mode::Hybrid)) => {
            if !index_dense {
                return Err(Error::SemanticUnavailable(
                    "the index was built without one (lexical vectors only); install the model \
                     (`roo-state models fetch`, fetchModel() or scripts/fetch-model.sh) or \
                     configure an HTTP embedder, then run indexTasks"
                        .to_owned(),
                ));
            }
            Ok(m)
        }
        Some(Mode::Lexical) => Ok(Mode::Lexical),
        None if can_embed => Ok(Mode::Hybrid),
        None => Ok(Mode::Lexical),
    }
}

/// One ranking out of the dense and sparse ones.
pub fn fuse(mode: Mode, dense: Vec<Hit>, sparse: Vec<Hit>) -> Vec<Hit> {
    match mode {
        Mode::Semantic => dense,
        Mode::Lexical => sparse,
        Mode::Hybrid => {
            let mut by_id: HashMap<Uuid, (f32, Hit)> = HashMap::new();
            for list in [dense, sparse] {
                for (rank, h) in list.into_iter().enumerate() {
                    let add = 1.0 / (RRF_K + rank as f32 + 1.0);
                    by_id
                        .entry(h.id)
                        .and_modify(|(s, _)| *s += add)
                        .or_insert((add, h));
                }
            }
            // Scaled so a chunk ranked first by both has 1.
            let top = 2.0 / (RRF_K + 1.0);
            let mut out: Vec<Hit> = by_id
                .into_values()
                .map(|(s, mut h)| {
                    h.score = s / top;
                    h
                })
                .collect();
            out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
            out
        }
    }
}

fn group(
    hits: Vec<Hit>,
    limit: usize,
    per_task: usize,
    st: Option<&state::IndexState>,
    phrases: &PhraseQuery,
) -> Vec<TaskResult> {
    let facts = st.map(task_facts).unwrap_or_default();
    let mut order: Vec<String> = Vec::new();
    let mut by_task: HashMap<String, Vec<Hit>> = HashMap::new();
    for h in hits {
        let id = h.payload.task_id.clone();
        let entry = by_task.entry(id.clone()).or_insert_with(|| {
            order.push(id);
            Vec::new()
        });
        entry.push(h);
    }
    order
        .into_iter()
        .take(limit)
        .filter_map(|id| {
            let hits = by_task.remove(&id)?;
            let best = hits.first()?;
            let p = &best.payload;
            let fact = facts.get(id.as_str());
            let snippets = hits
                .iter()
                .take(per_task)
                .map(|h| Snippet {
                    text: h.payload.dialogue_snippet.clone(),
                    timestamp: roo_js::iso_from_ms(h.payload.timestamp_ms),
                    end_timestamp: roo_js::iso_from_ms(h.payload.end_timestamp_ms),
                    role: h.payload.role.clone(),
                    chunk_index: h.payload.chunk_index,
                    score: h.score,
                    highlights: phrases
                        .highlights(&h.payload.dialogue_snippet)
                        .into_iter()
                        .map(|r| phrase::utf16_range(&h.payload.dialogue_snippet, r))
                        .collect(),
                })
                .collect();
            Some(TaskResult {
                score: best.score,
                title: fact
                    .and_then(|f| f.title.clone())
                    .or_else(|| p.task_title.clone()),
                workspace: fact
                    .and_then(|f| f.workspace.clone())
                    .or_else(|| p.workspace.clone()),
                created_at: fact.and_then(|f| f.created_at.clone()),
                last_activity: fact.and_then(|f| f.last_activity.clone()),
                parent_task_id: fact
                    .and_then(|f| f.parent_task_id.clone())
                    .or_else(|| p.parent_task_id.clone()),
                source: fact
                    .and_then(|f| f.source.clone())
                    .or_else(|| p.source.clone()),
                host: p.host.clone(),
                snippets,
                also_in: fact.map(|f| f.also_in.clone()).unwrap_or_default(),
                task_id: id,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_dates_cover_their_day() {
        let (f, t) = date_bounds(Some("2025-06-01"), Some("2025-06-01")).expect("dates");
        assert_eq!(t.zip(f).map(|(t, f)| t - f), Some(86_399_999));
        let (_, t) = date_bounds(None, Some("2025-06-01T10:00:00Z")).expect("dates");
        assert_eq!(t.map(|t| t % 86_400_000), Some(36_000_000));
        assert!(date_bounds(Some("yesterday"), None).is_err());
        assert!(date_bounds(Some("2025-06-02"), Some("2025-06-01")).is_err());
    }

    #[test]
    fn workspace_filter_takes_paths_or_names() {
        let f = build_filter(Some("C:\\Dev\\Shop\\"), None, None);
        assert_eq!(f.workspace_key.as_deref(), Some("c:/dev/shop"));
        let f = build_filter(Some("Shop"), None, None);
        assert_eq!(f.workspace_name.as_deref(), Some("shop"));
        assert_eq!(build_filter(Some("*"), None, None), Filter::default());
    }
}
