//! Search benchmark: embedding throughput of each local embedder on real-size chunks, indexing
//! throughput with each embedder, and search latency on a 100 000-chunk collection in the
//! embedded store.
//!
//! `cargo bench -p roo-search --all-features --bench search` (set `ROO_SEARCH_BENCH_CHUNKS` to
//! change the collection size; 0 skips the search latency part). Every figure is printed with a ratio against a baseline measured
//! in the same run: embedding against the sentence model (all-MiniLM-L6-v2), indexing against the
//! lexical-only in-memory run, search latency against the
//! exact (brute-force) in-memory store holding the same points.
//!
//! The indexing and embedding figures run on the fixture stores' tasks cloned under new ids, with
//! the real tasks of the legacy fixtures in `../shared` when it is there; when it is absent a line
//! on stderr says the clones leave them out (`ROO_STATE_REQUIRE_SHARED=1` makes that a failure).

use roo_search::embed::{Embedder, EmbedderId, Purpose};
use roo_search::{
    index_tasks, search_tasks_semantic, EmbedderConfig, IndexOptions, Mode, SearchOptions,
    StoreConfig,
};
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

const DIMS: usize = 384;

/// A deterministic in-process embedder (stands in for a model when only the store is measured):
/// each term maps to a pseudo-random dense direction seeded by its hash, and a text is the unit
/// sum of its terms' directions. Texts sharing terms point alike, and every dimension is used, as
/// with a real sentence model (vectors with a few non-zero dimensions, full of ties, are a worst
/// case for the HNSW graph build that no model produces).
struct HashEmbedder;

fn hash_embedding(text: &str, dims: usize) -> Vec<f32> {
    let mut v = vec![0f32; dims];
    for t in roo_search::lexical::terms(text) {
        let mut state = xxhash_rust::xxh3::xxh3_64(t.as_bytes()) | 1;
        for x in v.iter_mut() {
            // xorshift64: a cheap, repeatable stream per term.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *x += (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
        }
    }
    roo_search::embed::normalize(&mut v);
    v
}

impl Embedder for HashEmbedder {
    fn id(&self) -> roo_search::Result<EmbedderId> {
        Ok(EmbedderId {
            kind: "custom".to_owned(),
            model: "hash-384".to_owned(),
            dimension: DIMS,
        })
    }
    fn embed(&self, texts: &[&str], _: Purpose) -> roo_search::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| hash_embedding(t, DIMS)).collect())
    }
    fn batch_size(&self) -> usize {
        256
    }
}

/// A local server speaking the OpenAI embeddings format (hash embeddings), to time the HTTP path.
fn start_http_embedder() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    url
}

fn serve(stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut stream = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h.trim().is_empty() {
                break;
            }
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let data: Vec<serde_json::Value> = req["input"]
            .as_array()
            .map(|a| {
                a.iter()
                    .enumerate()
                    .map(|(i, t)| json!({"index": i, "embedding": hash_embedding(t.as_str().unwrap_or(""), DIMS)}))
                    .collect()
            })
            .unwrap_or_default();
        let payload = json!({"data": data}).to_string();
        let resp = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{payload}",
            payload.len()
        );
        if stream.write_all(resp.as_bytes()).is_err() {
            return;
        }
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The real tasks of the legacy fixtures in `../shared`, looked up once: `None` (after saying
/// on stderr that the clones leave them out) when `../shared` is absent.
fn shared_real_tasks() -> Option<&'static Path> {
    static REAL: OnceLock<Option<PathBuf>> = OnceLock::new();
    REAL.get_or_init(|| {
        roo_corpus::shared::shared_fixture(
            "fixtures/legacy-tasks/real-tasks",
            "search bench: the cloned fixtures' real tasks",
        )
    })
    .as_deref()
}

/// The task folders the clones are made from: the fixture stores' tasks, and the real tasks of
/// `../shared` when it is there.
fn fixture_task_dirs() -> Vec<PathBuf> {
    let stores = repo_root().join("fixtures/stores");
    let mut sources = Vec::new();
    for store in std::fs::read_dir(&stores).expect("stores").flatten() {
        let t = store.path().join("tasks");
        if let Ok(rd) = std::fs::read_dir(&t) {
            sources.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
        }
    }
    if let Some(real) = shared_real_tasks() {
        if let Ok(rd) = std::fs::read_dir(real) {
            sources.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
        }
    }
    sources
}

/// The fixture tasks cloned `copies` times under new ids into one `tasks/` folder.
fn cloned_fixtures(dest: &Path, copies: usize) -> PathBuf {
    let tasks = dest.join("tasks");
    std::fs::create_dir_all(&tasks).expect("mkdir");
    let sources = fixture_task_dirs();
    for c in 0..copies {
        for (i, src) in sources.iter().enumerate() {
            let dir = tasks.join(format!("{c:04}{i:04}-0000-4000-8000-000000000000"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            for f in std::fs::read_dir(src).expect("task").flatten() {
                if f.path().is_file() {
                    std::fs::copy(f.path(), dir.join(f.file_name())).expect("copy");
                }
            }
        }
    }
    tasks
}

/// The vocabulary of the synthetic dialogues.
const WORDS: &[&str] = &[
    "cache",
    "forecast",
    "checkout",
    "discount",
    "migration",
    "postgres",
    "sqlite",
    "docker",
    "compose",
    "retry",
    "backoff",
    "timeout",
    "header",
    "invoice",
    "logo",
    "render",
    "sensor",
    "temperature",
    "quiz",
    "shuffle",
    "answer",
    "backup",
    "photo",
    "rename",
    "exif",
    "build",
    "vite",
    "alias",
    "tsconfig",
    "module",
    "config",
    "loader",
    "defaults",
    "validate",
    "test",
    "fixture",
    "pytest",
    "mocha",
    "supertest",
    "route",
    "service",
    "error",
    "exception",
    "workspace",
    "task",
    "history",
    "restore",
    "index",
    "search",
    "embedding",
    "vector",
    "payload",
    "filter",
    "range",
    "date",
    "timezone",
    "utc",
    "local",
    "expiry",
    "flaky",
    "orchestrator",
    "subtask",
    "delegate",
    "report",
    "document",
    "readme",
    "option",
    "flag",
    "parser",
    "argument",
    "command",
    "output",
    "server",
    "client",
    "request",
    "response",
    "status",
    "token",
    "cost",
    "model",
    "prompt",
    "context",
    "condense",
    "summary",
    "file",
    "folder",
    "path",
    "script",
    "powershell",
    "python",
    "rust",
    "typescript",
    "node",
    "npm",
];

/// A repeatable stream of pseudo-random numbers (xorshift64).
struct Xorshift(u64);

impl Xorshift {
    /// The next number of the stream.
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A word of the vocabulary.
    fn word(&mut self) -> &'static str {
        WORDS[(self.next() % WORDS.len() as u64) as usize]
    }
}

/// The UI messages of synthetic task `t`: `per_task` messages of about 800 characters on `topic`,
/// each ending with an identifier of its own (`ERR_<task>_<message>`).
fn synthetic_messages(
    rng: &mut Xorshift,
    t: usize,
    per_task: usize,
    topic: &[&str],
    base_ts: i64,
) -> Vec<serde_json::Value> {
    let mut msgs = Vec::with_capacity(per_task + 1);
    for m in 0..per_task {
        let mut text = String::new();
        while text.len() < 760 {
            // Zipf-like: the topic words often, the rest of the vocabulary rarely.
            let r = rng.next();
            let w = if r.is_multiple_of(3) {
                topic[(r >> 8) as usize % topic.len()]
            } else {
                WORDS[((r >> 16) % WORDS.len() as u64) as usize]
            };
            text.push_str(w);
            text.push(if r.is_multiple_of(11) { '.' } else { ' ' });
        }
        text.push_str(&format!(" ERR_{t}_{m}"));
        let say = if m > 0 && m % 2 == 0 {
            "user_feedback"
        } else {
            "text"
        };
        msgs.push(
            json!({"ts": base_ts + m as i64 * 1000, "type": "say", "say": say, "text": text}),
        );
    }
    msgs
}

/// A synthetic store of `tasks` tasks with `per_task` chunks of about 800 characters each.
fn synthetic_store(dest: &Path, tasks: usize, per_task: usize) -> PathBuf {
    let root = dest.join("tasks");
    let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
    for t in 0..tasks {
        let id = format!("{t:08}-0000-4000-8000-{:012}", t);
        let dir = root.join(&id);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let topic: Vec<&str> = (0..4).map(|_| rng.word()).collect();
        let base_ts = 1_750_000_000_000i64 + t as i64 * 3_600_000;
        let msgs = synthetic_messages(&mut rng, t, per_task, &topic, base_ts);
        std::fs::write(
            dir.join("ui_messages.json"),
            serde_json::to_string(&msgs).expect("json"),
        )
        .expect("write");
        let ws = format!("/home/dev/projects/p{}", t % 20);
        std::fs::write(
            dir.join("history_item.json"),
            json!({"id": id, "number": t, "ts": base_ts, "task": topic.join(" "), "tokensIn": 0, "tokensOut": 0, "totalCost": 0, "workspace": ws}).to_string(),
        )
        .expect("write");
    }
    root
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn index_run(
    label: &str,
    tasks: &Path,
    work: &Path,
    embedder: EmbedderConfig,
    store: StoreConfig,
) -> f64 {
    let t0 = Instant::now();
    let r = index_tasks(&IndexOptions {
        tasks_dirs: vec![tasks.to_path_buf()],
        index_dir: Some(work.to_path_buf()),
        embedder,
        store,
        ..IndexOptions::default()
    })
    .expect("index");
    let secs = t0.elapsed().as_secs_f64();
    let rate = r.chunks_embedded as f64 / secs;
    println!(
        "  {label:<34} {:>7} chunks in {secs:>7.2} s = {rate:>9.1} chunks/s",
        r.chunks_embedded
    );
    roo_search::store::close_dir(work);
    rate
}

/// Chunks of about 800 characters (600 or more) from the fixture dialogues, as indexing makes them.
fn real_size_chunks(tasks: &Path) -> Vec<String> {
    let opts = roo_search::chunk::ChunkOptions::default();
    let mut out = Vec::new();
    for e in std::fs::read_dir(tasks).expect("tasks").flatten() {
        let d = roo_search::chunk::extract_dialogue(&e.path());
        out.extend(
            roo_search::chunk::chunk_dialogue(&d.messages, &opts)
                .into_iter()
                .map(|c| c.text)
                .filter(|t| t.chars().count() >= 600),
        );
    }
    out
}

/// Chunks per second of `embedder` over `texts`, in its own batch size.
fn embed_rate(label: &str, embedder: &dyn Embedder, texts: &[&str]) -> f64 {
    // One batch first: lazy set-up (thread pools, allocations) is not what is measured.
    let warm = embedder.batch_size().min(texts.len());
    embedder
        .embed(&texts[..warm], Purpose::Document)
        .expect("embed");
    let t0 = Instant::now();
    for batch in texts.chunks(embedder.batch_size().max(1)) {
        embedder.embed(batch, Purpose::Document).expect("embed");
    }
    let secs = t0.elapsed().as_secs_f64();
    let rate = texts.len() as f64 / secs;
    println!(
        "  {label:<42} {:>5} chunks in {secs:>7.2} s = {rate:>9.1} chunks/s",
        texts.len()
    );
    rate
}

/// Embedding throughput of each local embedder on real-size chunks, against the sentence model
/// (the baseline) measured in the same run.
#[cfg(feature = "local-model")]
fn embedder_throughput(tasks: &Path) {
    let model_dir = roo_search::embed::default_model_dir();
    if !roo_search::embed::local_model_available(&model_dir) {
        println!("== embedders: the local model is not installed, not measured");
        return;
    }
    let chunks = real_size_chunks(tasks);
    let mean = chunks.iter().map(|c| c.chars().count()).sum::<usize>() / chunks.len().max(1);
    println!(
        "== embedding throughput on {} chunks of about 800 characters (mean {mean}), 2 threads unless RAYON_NUM_THREADS",
        chunks.len()
    );
    let texts: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let local = roo_search::embed::local::shared(&model_dir).expect("local model");
    let n = texts.len().min(96);
    let base = embed_rate(
        "all-MiniLM-L6-v2, candle (baseline)",
        local.as_ref(),
        &texts[..n],
    );
    let t0 = Instant::now();
    let distilled = roo_search::embed::distill::distill(&model_dir, None).expect("distil");
    println!(
        "  distilling the static model: {:.1} s, {} bytes",
        t0.elapsed().as_secs_f64(),
        std::fs::metadata(model_dir.join(roo_search::embed::static_model::STATIC_FILE))
            .map_or(0, |m| m.len())
    );
    let t0 = Instant::now();
    let stat = roo_search::embed::static_model::load_current(&model_dir)
        .expect("load")
        .expect("distilled");
    println!(
        "  loading it (digest check included): {:.0} ms ({})",
        t0.elapsed().as_secs_f64() * 1000.0,
        distilled.method
    );
    // Enough repetitions to time: the static model is fast.
    let many: Vec<&str> = texts
        .iter()
        .cycle()
        .take(texts.len().max(1) * 20)
        .copied()
        .collect();
    let r = embed_rate("static, distilled (256 dimensions)", stat.as_ref(), &many);
    println!("    ratio to baseline: {:.1}", r / base);
}

#[cfg(not(feature = "local-model"))]
fn embedder_throughput(_tasks: &Path) {
    println!("== embedders: built without the local-model feature, not measured");
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken from the command line.
    let scratch = tempfile::tempdir().expect("tmp");
    let root = scratch.path();
    embedder_throughput(&cloned_fixtures(&root.join("clones-embed"), 1));
    let default_store = if cfg!(feature = "edge") {
        StoreConfig::Edge { path: None }
    } else {
        StoreConfig::Memory {
            path: Some(root.join("i1").join("m.json")),
        }
    };
    indexing_throughput(root, &default_store);
    let chunks: usize = std::env::var("ROO_SEARCH_BENCH_CHUNKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    if chunks > 0 {
        search_latency(root, chunks, default_store);
    }
}

/// Indexing throughput with each embedder, against the lexical-only in-memory run.
fn indexing_throughput(root: &Path, default_store: &StoreConfig) {
    println!("== indexing throughput (fixture tasks cloned under new ids)");
    let copies: usize = std::env::var("ROO_SEARCH_BENCH_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let tasks = cloned_fixtures(&root.join("clones"), copies);
    let mem = |name: &str| StoreConfig::Memory {
        path: Some(root.join(name).join("m.json")),
    };
    let base = index_run(
        "lexical only, in-memory (baseline)",
        &tasks,
        &root.join("i0"),
        EmbedderConfig::None,
        mem("i0"),
    );
    let r = index_run(
        "lexical only, embedded store",
        &tasks,
        &root.join("i1"),
        EmbedderConfig::None,
        default_store.clone(),
    );
    println!("    ratio to baseline: {:.2}", r / base);
    let url = start_http_embedder();
    let http = roo_search::embed::http::HttpConfig {
        base_url: Some(url),
        model: Some("hash-384".to_owned()),
        ..Default::default()
    };
    let r = index_run(
        "HTTP embedder (local server)",
        &tasks,
        &root.join("i2"),
        EmbedderConfig::Http(http),
        default_store.clone(),
    );
    println!("    ratio to baseline: {:.2}", r / base);
    let model_dir = roo_search::embed::default_model_dir();
    if roo_search::embed::local_model_available(&model_dir) {
        let small = cloned_fixtures(&root.join("clones-small"), 1);
        let r = index_run(
            "local all-MiniLM-L6-v2 (candle)",
            &small,
            &root.join("i3"),
            EmbedderConfig::Local {
                model_dir: Some(model_dir.clone()),
            },
            default_store.clone(),
        );
        println!("    ratio to baseline: {:.4}", r / base);
        let r = index_run(
            "static model (the default) + embedded store",
            &tasks,
            &root.join("i4"),
            EmbedderConfig::Static {
                model_dir: Some(model_dir),
            },
            default_store.clone(),
        );
        println!("    ratio to baseline: {:.2}", r / base);
    } else {
        println!(
            "  local model: not installed in {} (scripts/fetch-model.sh), not measured",
            model_dir.display()
        );
    }
}

/// Search latency on a synthetic collection of `chunks` chunks, against the exact in-memory store.
fn search_latency(root: &Path, chunks: usize, default_store: StoreConfig) {
    let per_task = 100;
    let n_tasks = chunks.div_ceil(per_task);
    println!("== search latency on {} chunks ({n_tasks} tasks x {per_task}), {DIMS}-d vectors, query embedding excluded", n_tasks * per_task);
    let synth = synthetic_store(&root.join("synthetic"), n_tasks, per_task);
    let embedder = EmbedderConfig::Custom(Arc::new(HashEmbedder));
    let stores = [
        // Not saved to disk: the in-memory store writes one JSON file, fine for tests only.
        (
            "exact in-memory (baseline)",
            StoreConfig::Memory { path: None },
        ),
        ("embedded (Qdrant Edge)", default_store),
    ];
    let queries: Vec<String> = (0..200)
        .map(|i| match i % 4 {
            0 => "flaky expiry test with utc timezone".to_owned(),
            1 => format!("ERR_{}_{}", (i * 37) % n_tasks, i % per_task),
            2 => "retry backoff timeout on the server".to_owned(),
            _ => "discount checkout route service".to_owned(),
        })
        .collect();
    let mut base_p50: Vec<f64> = Vec::new();
    for (si, (label, store)) in stores.iter().enumerate() {
        let dir = root.join(format!("s{si}"));
        let t0 = Instant::now();
        let r = index_tasks(&IndexOptions {
            tasks_dirs: vec![synth.clone()],
            index_dir: Some(dir.clone()),
            embedder: embedder.clone(),
            store: store.clone(),
            ..IndexOptions::default()
        })
        .expect("index synthetic");
        println!(
            "  {label}: indexed {} chunks in {:.1} s ({:.0} chunks/s, including the optimisation pass)",
            r.chunks_total,
            t0.elapsed().as_secs_f64(),
            r.chunks_total as f64 / t0.elapsed().as_secs_f64()
        );
        for (mi, mode) in [Mode::Semantic, Mode::Lexical, Mode::Hybrid]
            .into_iter()
            .enumerate()
        {
            for filtered in [false, true] {
                let mut times = Vec::with_capacity(queries.len());
                for (qi, q) in queries.iter().enumerate() {
                    let resp = search_tasks_semantic(&SearchOptions {
                        query: q.clone(),
                        mode: Some(mode),
                        workspace: filtered.then(|| format!("p{}", qi % 20)),
                        index_dir: Some(dir.clone()),
                        store: store.clone(),
                        embedder: Some(embedder.clone()),
                        ..SearchOptions::default()
                    })
                    .expect("search");
                    times.push(resp.search_ms);
                }
                times.sort_by(f64::total_cmp);
                let (p50, p99) = (percentile(&times, 0.5), percentile(&times, 0.99));
                let key = mi * 2 + usize::from(filtered);
                let ratio = if si == 0 {
                    base_p50.push(p50);
                    String::from("baseline")
                } else {
                    format!(
                        "{:.2}x the baseline's p50",
                        p50 / base_p50.get(key).copied().unwrap_or(f64::NAN)
                    )
                };
                println!(
                    "    {:<9} {:<18} p50 {p50:>7.3} ms  p99 {p99:>7.3} ms  ({ratio})",
                    mode.as_str(),
                    if filtered {
                        "workspace filter"
                    } else {
                        "no filter"
                    }
                );
            }
        }
        roo_search::store::close_dir(&dir);
    }
}
