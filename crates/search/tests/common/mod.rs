//! Shared helpers of the search tests: fixture paths, the labelled queries, recall@5, a local
//! server speaking the OpenAI embeddings wire format, and the store-independent suite.
#![allow(dead_code)]

use roo_search::embed::http::HttpConfig;
use roo_search::{
    index_tasks, search_tasks_semantic, EmbedderConfig, IndexOptions, Mode, SearchOptions,
    StoreConfig,
};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub struct Labelled {
    pub tasks_dirs: Vec<PathBuf>,
    pub min_recall: Value,
    pub queries: Vec<(String, String, String, Vec<String>)>,
}

/// `fixtures/search/queries.json`.
pub fn labelled() -> Labelled {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("fixtures/search/queries.json"))
        .expect("fixtures/search/queries.json");
    let v: Value = serde_json::from_str(&text).expect("queries.json parses");
    let tasks_dirs = v["tasksDirs"]
        .as_array()
        .expect("tasksDirs")
        .iter()
        .map(|d| root.join(d.as_str().expect("dir")))
        .collect();
    let queries = v["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .map(|q| {
            (
                q["id"].as_str().expect("id").to_owned(),
                q["kind"].as_str().expect("kind").to_owned(),
                q["query"].as_str().expect("query").to_owned(),
                q["expected"]
                    .as_array()
                    .expect("expected")
                    .iter()
                    .map(|e| e.as_str().expect("id").to_owned())
                    .collect(),
            )
        })
        .collect();
    Labelled {
        tasks_dirs,
        min_recall: v["minRecallAt5"].clone(),
        queries,
    }
}

/// The fixture task folders, copied to `dest` (so tests may change them).
pub fn copy_fixtures(dest: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (i, dir) in labelled().tasks_dirs.iter().enumerate() {
        let target = dest.join(format!("store{i}")).join("tasks");
        copy_dir(dir, &target);
        out.push(target);
    }
    out
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).expect("copy");
        }
    }
}

/// recall@5 over the labelled queries (also printed, per kind).
pub fn recall_at_5(label: &str, mut search: impl FnMut(&str) -> Vec<String>) -> f64 {
    let l = labelled();
    let mut total = 0.0;
    let mut by_kind: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
    let mut misses = Vec::new();
    for (id, kind, query, expected) in &l.queries {
        let got = search(query);
        let top: Vec<&String> = got.iter().take(5).collect();
        let found = expected.iter().filter(|e| top.contains(e)).count();
        let r = found as f64 / expected.len() as f64;
        total += r;
        let k = by_kind.entry(kind.clone()).or_default();
        k.0 += r;
        k.1 += 1;
        if r < 1.0 {
            misses.push(format!("{id} ({r:.2}) {query}"));
        }
    }
    let recall = total / l.queries.len() as f64;
    println!(
        "recall@5 [{label}] = {recall:.3} over {} queries",
        l.queries.len()
    );
    for (k, (s, n)) in by_kind {
        println!("  {k}: {:.3} ({n})", s / n as f64);
    }
    for m in misses {
        println!("  miss: {m}");
    }
    recall
}

/// The installed local model's directory; `None` (the test says it was skipped) when it is not
/// installed, unless ROO_SEARCH_REQUIRE_MODEL=1, where a missing model fails.
pub fn installed_model_dir() -> Option<PathBuf> {
    let dir = roo_search::embed::default_model_dir();
    if roo_search::embed::missing_model_file(&dir).is_none() {
        return Some(dir);
    }
    if std::env::var("ROO_SEARCH_REQUIRE_MODEL").is_ok_and(|v| v == "1") {
        panic!(
            "ROO_SEARCH_REQUIRE_MODEL=1 but the model is not in {}; run scripts/fetch-model.sh",
            dir.display()
        );
    }
    println!(
        "skipped: the local model is not installed in {} (run scripts/fetch-model.sh)",
        dir.display()
    );
    None
}

/// Cosine of two unit vectors.
pub fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The least recall@5 accepted for a mode, from queries.json.
pub fn min_recall(mode: &str) -> f64 {
    labelled().min_recall[mode].as_f64().unwrap_or(0.0)
}

// ---------------------------------------------------------------------------------------------
// A local server speaking the OpenAI embeddings wire format.

/// How the fake embeddings server behaves.
#[derive(Default)]
pub struct FakeBehaviour {
    /// Dimension of the vectors it returns.
    pub dims: usize,
    /// Answer 429 to this many requests first.
    pub fail_429: AtomicUsize,
    /// Answer 503 to this many requests first (after the 429s).
    pub fail_503: AtomicUsize,
    /// From this request on (1-based), return vectors of `dims + 1` values; 0: never.
    pub wrong_dim_from: AtomicUsize,
    /// Sizes of the batches received (successful or not).
    pub batches: Mutex<Vec<usize>>,
    pub requests: AtomicUsize,
    /// `Authorization` headers seen.
    pub auth: Mutex<Vec<String>>,
}

pub struct FakeServer {
    pub url: String,
    pub behaviour: Arc<FakeBehaviour>,
}

/// A deterministic embedding: hashed terms of the text, unit length. Texts that share words
/// are close, which is all the tests need from a model.
pub fn fake_embedding(text: &str, dims: usize) -> Vec<f32> {
    let mut v = vec![0f32; dims];
    for t in roo_search::lexical::terms(text) {
        let h = xxhash_like(&t);
        v[(h % dims as u64) as usize] += 1.0;
    }
    let n: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    } else {
        v[0] = 1.0;
    }
    v
}

fn xxhash_like(s: &str) -> u64 {
    // FNV-1a: enough to spread terms over the dimensions.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

pub fn start_fake_server(behaviour: FakeBehaviour) -> FakeServer {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let behaviour = Arc::new(behaviour);
    let b = behaviour.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let b = b.clone();
            std::thread::spawn(move || serve(stream, &b));
        }
    });
    FakeServer { url, behaviour }
}

fn serve(stream: TcpStream, b: &FakeBehaviour) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut stream = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line.trim().is_empty() {
            continue;
        }
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let lower = h.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                len = v.trim().parse().unwrap_or(0);
            }
            if lower.starts_with("authorization:") {
                b.auth.lock().expect("lock").push(h[14..].trim().to_owned());
            }
        }
        let mut body = vec![0u8; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let n = b.requests.fetch_add(1, Ordering::SeqCst) + 1;
        let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let inputs: Vec<String> = req["input"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| x.as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default();
        b.batches.lock().expect("lock").push(inputs.len());
        let (status, payload) = if b
            .fail_429
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |x| x.checked_sub(1))
            .is_ok()
        {
            (
                "429 Too Many Requests",
                r#"{"error":{"message":"rate limited"}}"#.to_owned(),
            )
        } else if b
            .fail_503
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |x| x.checked_sub(1))
            .is_ok()
        {
            ("503 Service Unavailable", r#"{"error":"busy"}"#.to_owned())
        } else {
            let wrong = b.wrong_dim_from.load(Ordering::SeqCst);
            let dims = if wrong > 0 && n >= wrong {
                b.dims + 1
            } else {
                b.dims
            };
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .rev() // out of order on purpose: clients must use `index`
                .map(|(i, t)| serde_json::json!({"object": "embedding", "index": i, "embedding": fake_embedding(t, dims)}))
                .collect();
            (
                "200 OK",
                serde_json::json!({"object": "list", "model": req["model"], "data": data})
                    .to_string(),
            )
        };
        let resp = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 0\r\n\r\n{payload}",
            payload.len()
        );
        if stream.write_all(resp.as_bytes()).is_err() {
            return;
        }
    }
}

pub fn http_config(server: &FakeServer, dims: Option<usize>) -> HttpConfig {
    HttpConfig {
        base_url: Some(server.url.clone()),
        model: Some("fake-embedding".to_owned()),
        dimensions: dims,
        api_key: Some("test-key".to_owned()),
        batch_size: Some(16),
        timeout_ms: Some(5_000),
        max_retries: Some(3),
        retry_base_ms: Some(1),
    }
}

// ---------------------------------------------------------------------------------------------
// The suite every store runs.

pub fn task_ids(r: &roo_search::SearchResponse) -> Vec<String> {
    r.results.iter().map(|t| t.task_id.clone()).collect()
}

pub fn search(
    index_dir: &Path,
    store: &StoreConfig,
    query: &str,
    mode: Option<Mode>,
) -> roo_search::SearchResponse {
    search_in(index_dir, store, None, query, mode)
}

pub fn search_in(
    index_dir: &Path,
    store: &StoreConfig,
    collection: Option<&str>,
    query: &str,
    mode: Option<Mode>,
) -> roo_search::SearchResponse {
    search_tasks_semantic(&SearchOptions {
        query: query.to_owned(),
        mode,
        index_dir: Some(index_dir.to_path_buf()),
        store: store.clone(),
        collection: collection.map(str::to_owned),
        ..SearchOptions::default()
    })
    .expect("search")
}

/// Index the fixtures with `embedder` into `store`, check the expected tasks come back, that a
/// second run embeds nothing, and that changing, touching and deleting tasks re-embeds only what
/// changed. Returns recall@5 of the default mode.
pub fn run_store_suite(
    label: &str,
    store: StoreConfig,
    embedder: EmbedderConfig,
    work: &Path,
) -> f64 {
    run_store_suite_in(label, store, None, embedder, work)
}

/// [`run_store_suite`] on a named collection.
pub fn run_store_suite_in(
    label: &str,
    store: StoreConfig,
    collection: Option<&str>,
    embedder: EmbedderConfig,
    work: &Path,
) -> f64 {
    let suite = StoreSuite {
        tasks: copy_fixtures(&work.join("tasks")),
        index_dir: work.join("index"),
        store,
        collection,
        embedder,
    };
    let first = suite.index(false, "first index");
    println!("[{label}] first run: {first:?}");
    check_first_run(&first);
    check_expected_task_found(&suite);
    check_filters(&suite);
    // Labelled queries.
    let recall = recall_at_5(label, |q| task_ids(&suite.search(q, None)));
    check_unchanged_run(&suite);
    let shop_ui = check_grown_task(&suite);
    check_touched_task(&suite, &shop_ui.path);
    check_shrunk_task(&suite, shop_ui);
    let removed = check_deleted_task(&suite, &first);
    check_forced_rebuild(&suite, &removed);
    recall
}

/// The fixtures copied for one run of the store suite, and where and how they are indexed.
struct StoreSuite<'a> {
    tasks: Vec<PathBuf>,
    index_dir: PathBuf,
    store: StoreConfig,
    collection: Option<&'a str>,
    embedder: EmbedderConfig,
}

impl StoreSuite<'_> {
    /// Index the copied fixtures (`rebuild`: from scratch); `what` names the run if it fails.
    fn index(&self, rebuild: bool, what: &str) -> roo_search::IndexReport {
        index_tasks(&IndexOptions {
            tasks_dirs: self.tasks.clone(),
            index_dir: Some(self.index_dir.clone()),
            embedder: self.embedder.clone(),
            store: self.store.clone(),
            collection: self.collection.map(str::to_owned),
            rebuild,
            ..IndexOptions::default()
        })
        .expect(what)
    }

    /// Search the suite's index with the defaults but `mode`.
    fn search(&self, query: &str, mode: Option<Mode>) -> roo_search::SearchResponse {
        search_in(&self.index_dir, &self.store, self.collection, query, mode)
    }

    /// Search the suite's index with `opts` (its index, store and collection filled in).
    fn search_with(&self, opts: SearchOptions) -> roo_search::SearchResponse {
        search_tasks_semantic(&SearchOptions {
            index_dir: Some(self.index_dir.clone()),
            store: self.store.clone(),
            collection: self.collection.map(str::to_owned),
            ..opts
        })
        .expect("search")
    }
}

/// The first run reads every task and embeds every chunk.
fn check_first_run(first: &roo_search::IndexReport) {
    assert_eq!(first.tasks_seen, 28, "26 fixture tasks + 2 real ones");
    assert_eq!(first.tasks_indexed, 28);
    assert!(first.chunks_embedded > 200, "{}", first.chunks_embedded);
    assert_eq!(first.chunks_total, first.chunks_embedded);
}

/// Expected tasks are found, with their header facts and snippets.
fn check_expected_task_found(suite: &StoreSuite) {
    let r = suite.search("InvalidDiscountError", None);
    assert_eq!(
        r.results.first().map(|t| t.task_id.as_str()),
        Some("087ad417-9168-4209-8cd6-4f60a86fcd4f"),
        "{r:?}"
    );
    let top = &r.results[0];
    assert_eq!(top.workspace.as_deref(), Some("/home/dev/projects/shop"));
    assert!(top
        .title
        .as_deref()
        .is_some_and(|t| t.contains("discount codes")));
    assert!(top.last_activity.is_some());
    assert!(top
        .snippets
        .iter()
        .any(|s| s.text.contains("InvalidDiscountError")));
    assert!(
        top.snippets
            .iter()
            .all(|s| s.timestamp.starts_with("2025-06-19")),
        "{:?}",
        top.snippets
    );
}

/// Filters: workspace (path or name) and dates.
fn check_filters(suite: &StoreSuite) {
    let ws = suite.search_with(SearchOptions {
        query: "cache".to_owned(),
        workspace: Some("/home/dev/projets/meteo-cli/".to_owned()),
        ..SearchOptions::default()
    });
    assert!(!ws.results.is_empty());
    assert!(
        ws.results
            .iter()
            .all(|t| t.workspace.as_deref() == Some("/home/dev/projets/meteo-cli")),
        "{ws:?}"
    );
    let by_name = suite.search_with(SearchOptions {
        query: "discount".to_owned(),
        workspace: Some("shop".to_owned()),
        ..SearchOptions::default()
    });
    assert_eq!(by_name.results.len(), 3, "{by_name:?}");
    let dated = suite.search_with(SearchOptions {
        query: "build".to_owned(),
        start_date: Some("2024-10-01".to_owned()),
        end_date: Some("2024-10-03".to_owned()),
        ..SearchOptions::default()
    });
    assert!(!dated.results.is_empty());
    assert!(
        dated.results.iter().all(|t| t
            .snippets
            .iter()
            .all(|s| s.timestamp.starts_with("2024-10-0"))),
        "{dated:?}"
    );
}

/// Unchanged tree: nothing embedded.
fn check_unchanged_run(suite: &StoreSuite) {
    let again = suite.index(false, "second index");
    assert_eq!(
        (
            again.tasks_indexed,
            again.chunks_embedded,
            again.chunks_deleted
        ),
        (0, 0, 0),
        "{again:?}"
    );
    assert_eq!(again.tasks_unchanged, 28);
}

/// The task the change checks edit: its `ui_messages.json` and the messages it held before.
struct EditedTask {
    path: PathBuf,
    original: Vec<Value>,
}

/// One task gains a message: only it is read and embedded. Returns the task's file as it was.
fn check_grown_task(suite: &StoreSuite) -> EditedTask {
    let shop = suite.tasks[4].join("d9a65d7d-6db9-422f-8608-12ab47219197");
    let ui = shop.join("ui_messages.json");
    let mut msgs: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&ui).expect("read")).expect("json");
    let original = msgs.clone();
    let last_ts = msgs.last().and_then(|m| m["ts"].as_i64()).expect("ts");
    msgs.push(serde_json::json!({"ts": last_ts + 1000, "type": "say", "say": "user_feedback", "text": "Also cover an expired coupon called OLDCODE2019"}));
    std::fs::write(&ui, serde_json::to_string(&msgs).expect("json")).expect("write");
    let grown = suite.index(false, "index after change");
    assert_eq!(
        grown.indexed_task_ids,
        vec!["d9a65d7d-6db9-422f-8608-12ab47219197".to_owned()],
        "{grown:?}"
    );
    assert!(
        grown.chunks_embedded >= 1 && grown.chunks_embedded <= 2,
        "{grown:?}"
    );
    let r = suite.search("OLDCODE2019", Some(Mode::Lexical));
    assert_eq!(
        task_ids(&r),
        vec!["d9a65d7d-6db9-422f-8608-12ab47219197".to_owned()]
    );
    EditedTask { path: ui, original }
}

/// Touched without a change: read again, nothing embedded.
fn check_touched_task(suite: &StoreSuite, ui: &Path) {
    let f = std::fs::File::options()
        .append(true)
        .open(ui)
        .expect("open");
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .expect("touch");
    drop(f);
    let touched = suite.index(false, "index after touch");
    assert_eq!(
        (touched.tasks_indexed, touched.chunks_embedded),
        (1, 0),
        "{touched:?}"
    );
}

/// A task shrinks back: its extra chunk goes.
fn check_shrunk_task(suite: &StoreSuite, edited: EditedTask) {
    std::fs::write(
        &edited.path,
        serde_json::to_string(&edited.original).expect("json"),
    )
    .expect("write");
    let shrunk = suite.index(false, "index after shrink");
    assert!(shrunk.chunks_deleted >= 1, "{shrunk:?}");
    assert!(suite
        .search("OLDCODE2019", Some(Mode::Lexical))
        .results
        .is_empty());
}

/// A task is deleted: its chunks go. Returns the report of that run.
fn check_deleted_task(
    suite: &StoreSuite,
    first: &roo_search::IndexReport,
) -> roo_search::IndexReport {
    let gone_id = "3cb47840-33af-4c5c-a4e2-e347c0183356";
    std::fs::remove_dir_all(suite.tasks[0].join(gone_id)).expect("rm");
    let removed = suite.index(false, "index after delete");
    assert_eq!(removed.tasks_removed, 1);
    assert_eq!(removed.chunks_deleted, 2, "{removed:?}");
    assert!(
        !task_ids(&suite.search("dry run backup photos NAS", None)).contains(&gone_id.to_owned())
    );
    assert_eq!(removed.chunks_total, first.chunks_total - 2);
    removed
}

/// A forced rebuild says so and re-embeds everything.
fn check_forced_rebuild(suite: &StoreSuite, before: &roo_search::IndexReport) {
    let rebuilt = suite.index(true, "rebuild");
    assert!(rebuilt.rebuilt.is_some());
    assert_eq!(rebuilt.chunks_embedded, before.chunks_total);
}

/// A narrow scope over a large index still fills its page: 1 100 Roo tasks that rank above the
/// three Cline tasks (the query's word five times against once), and a search for the Cline host
/// or one Cline subtree must still find its tasks, the store filtering before it ranks.
pub fn check_narrow_scope(store: StoreConfig, work: &Path) {
    let write = |tasks: &Path, id: &str, text: &str, parent: Option<&str>| {
        let dir = tasks.join(id);
        std::fs::create_dir_all(&dir).expect("task dir");
        let ui = serde_json::json!([
            { "type": "say", "say": "text", "text": text, "ts": 1_700_000_000_000i64 }
        ]);
        std::fs::write(dir.join("ui_messages.json"), ui.to_string()).expect("write");
        if let Some(p) = parent {
            let item = serde_json::json!({ "id": id, "parentTaskId": p, "ts": 1_700_000_000_000i64, "task": text });
            std::fs::write(dir.join("history_item.json"), item.to_string()).expect("write");
        }
    };
    let roo = work
        .join("a")
        .join("rooveterinaryinc.roo-cline")
        .join("tasks");
    let cline = work.join("b").join("saoudrizwan.claude-dev").join("tasks");
    for i in 0..1100 {
        let text = format!("forecast {i} forecast forecast forecast forecast");
        write(&roo, &format!("roo-{i:04}"), &text, None);
    }
    write(
        &cline,
        "cline-0",
        "the forecast of the first cline task",
        None,
    );
    write(
        &cline,
        "cline-1",
        "the forecast of a child task",
        Some("cline-0"),
    );
    write(
        &cline,
        "cline-2",
        "the forecast of a grandchild task",
        Some("cline-1"),
    );
    let index_dir = work.join("index");
    let report = index_tasks(&IndexOptions {
        tasks_dirs: vec![roo, cline],
        index_dir: Some(index_dir.clone()),
        embedder: EmbedderConfig::None,
        store: store.clone(),
        ..IndexOptions::default()
    })
    .expect("index");
    assert_eq!(report.tasks_indexed, 1103);
    let run = |host: Option<&str>, task: Option<&str>| {
        let r = search_tasks_semantic(&SearchOptions {
            query: "forecast".to_owned(),
            index_dir: Some(index_dir.clone()),
            store: store.clone(),
            host: host.map(str::to_owned),
            task: task.map(str::to_owned),
            limit: Some(3),
            ..SearchOptions::default()
        })
        .expect("search");
        let mut ids = task_ids(&r);
        ids.sort();
        ids
    };
    let all_cline = vec!["cline-0", "cline-1", "cline-2"];
    assert!(run(None, None).iter().all(|t| t.starts_with("roo-")));
    assert_eq!(run(Some("cline"), None), all_cline);
    assert_eq!(run(None, Some("cline-0")), all_cline);
    assert_eq!(run(None, Some("cline-1")), vec!["cline-1", "cline-2"]);
    assert_eq!(run(Some("roo"), Some("cline-0")), Vec::<String>::new());
}
