//! Skeleton building throughput on the real fixtures, next to the raw read and a plain
//! `serde_json` parse of the same bytes, measured in the same run; and a cold scan with the
//! hierarchy (as the binding's `scanTasks` with `hierarchy`) of a generated store of every era
//! against a raw read of the same files: one file after the other (as `cat`, the read the
//! throughput goal is stated against) and in parallel on the scan's thread pool; and against
//! the least any reader must do with those bytes, reading them and checking each file is one JSON
//! value (`roo_formats::json::is_one_json_value`) on the same pool.
//!
//! The fixture cases need the legacy fixtures of `../shared`: without them they are skipped with
//! a line on stderr saying why (a failure with `ROO_STATE_REQUIRE_SHARED=1`, see
//! `roo_corpus::shared`); the generated store needs nothing from outside and is always measured.

use criterion::{Criterion, Throughput};
use rayon::prelude::*;
use roo_state::hierarchy::HierarchyOptions;
use roo_state::scan::{scan_tasks, ScanOptions};
use roo_state::skeleton::{analyze_task, AnalyzeOptions};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

const FILES: [&str; 5] = [
    "ui_messages.json",
    "claude_messages.json",
    "api_conversation_history.json",
    "history_item.json",
    "task_metadata.json",
];

/// The legacy fixture sets of `../shared` the fixture cases read.
const SHARED_SETS: [&str; 2] = [
    "fixtures/legacy-tasks/real-tasks",
    "fixtures/legacy-tasks/controlled-hierarchy",
];

/// Every task directory of the shared fixtures and of the project's own stores; `None` when a
/// shared fixture set is absent (after the line on stderr that says so).
fn fixture_task_dirs() -> Option<Vec<(String, PathBuf)>> {
    let roots = SHARED_SETS
        .iter()
        .map(|set| roo_corpus::shared::shared_fixture(set, "skeletons bench, fixture cases"))
        .collect::<Option<Vec<PathBuf>>>()?;
    let mut out = Vec::new();
    for root in roots.iter() {
        if let Ok(entries) = std::fs::read_dir(root) {
            for e in entries.flatten() {
                if e.path().is_dir() {
                    out.push((e.file_name().to_string_lossy().into_owned(), e.path()));
                }
            }
        }
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Ok(stores) = std::fs::read_dir(manifest.join("../../fixtures/stores")) {
        for store in stores.flatten() {
            if let Ok(tasks) = std::fs::read_dir(store.path().join("tasks")) {
                for t in tasks.flatten() {
                    if t.path().is_dir() {
                        out.push((t.file_name().to_string_lossy().into_owned(), t.path()));
                    }
                }
            }
        }
    }
    out.sort();
    Some(out)
}

fn files_of(dirs: &[(String, PathBuf)]) -> Vec<PathBuf> {
    dirs.iter()
        .flat_map(|(_, d)| FILES.iter().map(move |f| d.join(f)))
        .filter(|p| p.is_file())
        .collect()
}

fn read_all(files: &[PathBuf]) -> usize {
    files
        .iter()
        .map(|f| std::fs::read(f).map(|b| b.len()).unwrap_or(0))
        .sum()
}

fn parse_all(files: &[PathBuf]) -> usize {
    files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .filter_map(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .count()
}

fn skeletons(dirs: &[(String, PathBuf)], opts: &AnalyzeOptions) -> usize {
    dirs.iter()
        .filter_map(|(id, d)| analyze_task(id, d, opts).ok())
        .map(|s| s.metadata.message_count as usize)
        .sum()
}

fn bench_fixtures(c: &mut Criterion, dirs: &[(String, PathBuf)]) {
    let files = files_of(dirs);
    let bytes = read_all(&files) as u64;
    let header = AnalyzeOptions {
        include_sequence: false,
        ..AnalyzeOptions::default()
    };
    let full = AnalyzeOptions::default();
    let mut g = c.benchmark_group("fixtures");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(20);
    g.bench_function("raw read", |b| b.iter(|| black_box(read_all(&files))));
    g.bench_function("serde_json Value parse", |b| {
        b.iter(|| black_box(parse_all(&files)))
    });
    g.bench_function("skeleton headers", |b| {
        b.iter(|| black_box(skeletons(dirs, &header)))
    });
    g.bench_function("skeletons with sequence", |b| {
        b.iter(|| black_box(skeletons(dirs, &full)))
    });
    g.finish();
}

/// A generated store of every era (500 tasks at their natural sizes, about 95 MB), written once
/// per run into a temporary folder.
fn generated_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = roo_corpus::CorpusSpec {
        tasks: 500,
        seed: 17,
        ..roo_corpus::CorpusSpec::default()
    };
    roo_corpus::generate(dir.path(), &spec).expect("generated store");
    let tasks = dir.path().join("tasks");
    (dir, tasks)
}

fn raw_read_parallel(files: &[PathBuf]) -> usize {
    files
        .par_iter()
        .map(|f| std::fs::read(f).map(|b| b.len()).unwrap_or(0))
        .sum()
}

/// The least any reader must do with the store's bytes, on the scan's thread pool: read each
/// file and check it is one JSON value, as the strict readers check what they step over.
fn read_and_check_parallel(files: &[PathBuf]) -> usize {
    files
        .par_iter()
        .filter(|f| std::fs::read(f).is_ok_and(|b| roo_formats::json::is_one_json_value(&b)))
        .count()
}

fn cold_scan(tasks: &Path) -> usize {
    let opts = ScanOptions {
        analyze: AnalyzeOptions {
            include_sequence: false,
            ..AnalyzeOptions::default()
        },
        hierarchy: Some(HierarchyOptions::default()),
        ..ScanOptions::default()
    };
    scan_tasks(tasks, &opts).map_or(0, |r| r.skeletons.len())
}

fn store_files(tasks: &Path) -> Vec<PathBuf> {
    let dirs: Vec<(String, PathBuf)> = std::fs::read_dir(tasks)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .collect()
        })
        .unwrap_or_default();
    files_of(&dirs)
}

fn bench_store(c: &mut Criterion, tasks: &Path) {
    let files = store_files(tasks);
    let bytes = read_all(&files) as u64;
    let mut g = c.benchmark_group("generated store, every era");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    g.bench_function("raw read (one thread)", |b| {
        b.iter(|| black_box(read_all(&files)))
    });
    g.bench_function("raw read (parallel)", |b| {
        b.iter(|| black_box(raw_read_parallel(&files)))
    });
    g.bench_function("read + JSON check (parallel)", |b| {
        b.iter(|| black_box(read_and_check_parallel(&files)))
    });
    g.bench_function("scan + hierarchy", |b| {
        b.iter(|| black_box(cold_scan(tasks)))
    });
    g.finish();
}

fn median_secs(mut f: impl FnMut() -> usize, runs: usize) -> f64 {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2]
}

/// The fixture ratios the project tracks, from medians measured here and now.
fn fixture_ratios(dirs: &[(String, PathBuf)]) {
    let files = files_of(dirs);
    let mib = read_all(&files) as f64 / (1024.0 * 1024.0);
    let header = AnalyzeOptions {
        include_sequence: false,
        ..AnalyzeOptions::default()
    };
    let raw = median_secs(|| read_all(&files), 31);
    let parse = median_secs(|| parse_all(&files), 31);
    let skel = median_secs(|| skeletons(dirs, &header), 31);
    println!(
        "\n{} tasks, {mib:.2} MiB of task JSON (median of 31 runs)",
        dirs.len()
    );
    println!("  raw read            {:8.1} MiB/s", mib / raw);
    println!("  serde_json Value    {:8.1} MiB/s", mib / parse);
    println!("  skeleton headers    {:8.1} MiB/s", mib / skel);
    println!("  ratio skeleton / raw read   {:6.2}x the time", skel / raw);
    println!(
        "  ratio skeleton / Value parse {:5.2}x the time",
        skel / parse
    );
}

/// The generated store's ratios the project tracks, from medians measured here and now.
fn store_ratios(tasks: &Path) {
    let files = store_files(tasks);
    let mib = read_all(&files) as f64 / (1024.0 * 1024.0);
    let raw = median_secs(|| read_all(&files), 11);
    let raw_parallel = median_secs(|| raw_read_parallel(&files), 11);
    let floor = median_secs(|| read_and_check_parallel(&files), 11);
    let scan = median_secs(|| cold_scan(tasks), 11);
    println!("\ngenerated store of every era: {mib:.1} MiB (median of 11 runs, page cache warm)");
    println!("  raw read (one thread)    {:8.1} MiB/s", mib / raw);
    println!(
        "  raw read (parallel)      {:8.1} MiB/s",
        mib / raw_parallel
    );
    println!("  read + JSON check (par.) {:8.1} MiB/s", mib / floor);
    println!("  scan + hierarchy         {:8.1} MiB/s", mib / scan);
    println!(
        "  ratio scan / raw read (one thread)   {:6.2}x the time",
        scan / raw
    );
    println!(
        "  ratio scan / raw read (parallel)     {:6.2}x the time",
        scan / raw_parallel
    );
    println!(
        "  ratio read + JSON check / raw read (one thread) {:6.2}x the time",
        floor / raw
    );
    println!(
        "  ratio scan / read + JSON check       {:6.2}x the time",
        scan / floor
    );
}

fn main() {
    // The fixture cases run only with the legacy fixtures of `../shared`.
    let fixtures = fixture_task_dirs();
    // The generated store is written once and serves the criterion cases and the ratios.
    let (_keep, tasks) = generated_store();
    let mut c = Criterion::default().configure_from_args();
    if let Some(dirs) = &fixtures {
        bench_fixtures(&mut c, dirs);
    }
    bench_store(&mut c, &tasks);
    c.final_summary();
    if let Some(dirs) = &fixtures {
        fixture_ratios(dirs);
    }
    store_ratios(&tasks);
}
