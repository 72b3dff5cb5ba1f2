//! `grep` over every task's dialogue against a raw read of the same bytes, measured in the same
//! run: the files a grep reads (each task's UI record, else its API history) are read whole into
//! a buffer each thread keeps, in parallel as the grep reads them; then the grep runs over the
//! same tasks. Pairs alternate (raw, grep) so both see the same page cache and machine load; the
//! median ratio of the pairs is printed.
//!
//! Each pattern is also run through the text store (the tasks' texts decoded once into one file
//! of the cache, see `grep::texts`): built by one grep before the timed runs (its time printed),
//! then read by each run, against the same raw read.
//!
//! `ROO_GREP_BENCH_TASKS=<tasks folder>` (default: `bench/out/shared-5000/tasks`, the 5 000
//! copies of ../shared's real tasks that `node bench/scan-store.mjs shared` makes);
//! `ROO_GREP_BENCH_RUNS` pairs per pattern (default 5).
//!
//! `cargo bench -p roo-search --bench grep`

use rayon::prelude::*;
use roo_search::grep::{self, GrepOptions, GrepTask, Matcher};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn tasks_dir() -> PathBuf {
    std::env::var_os("ROO_GREP_BENCH_TASKS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/out/shared-5000/tasks"),
        PathBuf::from,
    )
}

/// Every task folder, in name order, as a grep would search it (no header facts needed here).
fn tasks(dir: &Path) -> Vec<GrepTask> {
    let mut out: Vec<GrepTask> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| GrepTask {
                    task_id: e.file_name().to_string_lossy().into_owned(),
                    title: None,
                    workspace: None,
                    dir: e.path(),
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    out
}

/// The raw read: the same files, whole, into a buffer kept per thread, in parallel.
fn raw_read(tasks: &[GrepTask]) -> u64 {
    tasks
        .par_iter()
        .map_init(Vec::new, |buf, t| {
            let Some(file) = grep::dialogue::source_file(&t.dir) else {
                return 0;
            };
            match roo_formats::read::read_task_file_into(&file, buf) {
                Ok(true) => buf.len() as u64,
                _ => 0,
            }
        })
        .sum()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let dir = tasks_dir();
    let tasks = tasks(&dir);
    if tasks.is_empty() {
        println!(
            "skipped: no tasks in {} (make them with `node bench/scan-store.mjs shared`, or set \
             ROO_GREP_BENCH_TASKS)",
            dir.display()
        );
        return;
    }
    let runs: usize = std::env::var("ROO_GREP_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let bytes = raw_read(&tasks); // warms the page cache
    println!(
        "grep bench: {} tasks, {:.1} MiB of dialogue files, {} threads, {runs} pairs per pattern",
        tasks.len(),
        bytes as f64 / 1_048_576.0,
        rayon::current_num_threads()
    );
    println!(
        "{:<44} {:>9} {:>9} {:>8} {:>8} {:>8} {:>7}",
        "pattern", "raw ms", "grep ms", "ratio", "target", "matches", "parsed"
    );
    // The text store, built once by a first grep.
    let cache = tempfile::tempdir().expect("tmp");
    let store = roo_store::task_store::TaskStore::open(
        &roo_store::HostEnv::current(),
        &roo_store::task_store::OpenOptions {
            tasks_dirs: vec![dir.clone()],
            ..Default::default()
        },
    )
    .expect("task store");
    let through = |m: &Matcher, o: &GrepOptions| {
        grep::grep_through_texts(
            &store,
            tasks.clone(),
            cache.path(),
            m,
            o,
            (None, None),
            None,
        )
        .expect("grep through the text store")
    };
    build_store(&dir, cache.path(), &through);
    let cases: [(&str, &str, bool, Option<f64>); 5] = [
        ("literal", "Get-ChildItem", false, Some(1.5)),
        ("regex", r"Get-ChildItem\s+-\w+", true, Some(3.0)),
        ("literal, in most tasks", "hiérarchie", false, None),
        ("literal, case-insensitive", "get-childitem", false, None),
        (
            "regex, no literal to pre-check",
            r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}",
            true,
            None,
        ),
    ];
    for (label, pattern, is_regex, target) in cases {
        let ignore_case = label.contains("case-insensitive");
        let matcher = Matcher::new(pattern, is_regex, ignore_case).expect("pattern");
        let opts = GrepOptions {
            pattern: pattern.to_owned(),
            regex: is_regex,
            ignore_case,
            max_matches: Some(100_000),
            ..GrepOptions::default()
        };
        let (mut raw_ms, mut grep_ms, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut last = None;
        for _ in 0..runs {
            let t = Instant::now();
            let b = raw_read(&tasks);
            let raw = t.elapsed().as_secs_f64() * 1000.0;
            let t = Instant::now();
            let r = grep::grep_selected(&tasks, &matcher, &opts, (None, None), None).expect("grep");
            let g = t.elapsed().as_secs_f64() * 1000.0;
            // A grep that stops at its match limit reads fewer files.
            if !r.truncated {
                assert_eq!(
                    r.bytes_read, b,
                    "the grep read other bytes than the raw read"
                );
            }
            raw_ms.push(raw);
            grep_ms.push(g);
            ratios.push(g / raw);
            last = Some(r);
        }
        let r = last.expect("a run");
        let (passed, pre_ms) = precheck_only(&tasks, &matcher);
        println!(
            "{:<44} {:>9.1} {:>9.1} {:>7.2}x {:>8} {:>7}{} {:>7}",
            format!("{label}: {pattern}"),
            median(raw_ms),
            median(grep_ms),
            median(ratios),
            target.map_or_else(|| "-".to_owned(), |t| format!("<= {t}x")),
            r.matches.len(),
            if r.truncated { "+" } else { " " },
            r.files_parsed
        );
        println!("    read + pre-check only: {pre_ms:.1} ms, {passed} files pass");
        through_store(&tasks, runs, r.matches.len(), target, || {
            through(&matcher, &opts)
        });
    }
}

/// The runs of one pattern through the text store, against the raw read of each pair.
fn through_store(
    tasks: &[GrepTask],
    runs: usize,
    matches: usize,
    target: Option<f64>,
    through: impl Fn() -> grep::GrepReport,
) {
    let (mut store_ms, mut store_ratios) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        raw_read(tasks);
        let raw = t.elapsed().as_secs_f64() * 1000.0;
        let t = Instant::now();
        let s = through();
        let g = t.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(
            s.matches.len(),
            matches,
            "the text store found other matches"
        );
        assert_eq!(s.files_parsed, 0, "a task was read from its folder");
        store_ms.push(g);
        store_ratios.push(g / raw);
    }
    println!(
        "    through the text store: {:.1} ms, {:.2}x the raw read{}",
        median(store_ms),
        median(store_ratios.clone()),
        target.map_or_else(String::new, |t| format!(
            " (target <= {t}x: {})",
            if median(store_ratios) <= t {
                "met"
            } else {
                "not met"
            }
        ))
    );
}

/// The first grep through the text store, which writes it: its time and the file's size.
fn build_store(
    dir: &Path,
    cache: &Path,
    through: &impl Fn(&Matcher, &GrepOptions) -> grep::GrepReport,
) {
    let t = Instant::now();
    // A pattern found nowhere: every task is read, none stops the run.
    let nowhere = "q7Zx-nowhere-in-any-task";
    let built = through(
        &Matcher::new(nowhere, false, false).expect("pattern"),
        &GrepOptions {
            pattern: nowhere.to_owned(),
            ..GrepOptions::default()
        },
    );
    let store_file = grep::texts::store_file(cache, dir);
    let store_mib = std::fs::metadata(&store_file).map_or(0, |m| m.len()) as f64 / 1_048_576.0;
    println!(
        "text store: built by a first grep in {:.0} ms ({} tasks read from their folders), {store_mib:.1} MiB",
        t.elapsed().as_secs_f64() * 1000.0,
        built.files_parsed
    );
}

/// The file-level pre-check alone (read and check, no parse), for where the time goes: the files
/// that pass, and the time.
fn precheck_only(tasks: &[GrepTask], matcher: &Matcher) -> (usize, f64) {
    // The file-level pre-check alone (read and check, no parse), for where the time goes.
    let t = Instant::now();
    let passed: usize = tasks
        .par_iter()
        .map_init(Vec::new, |buf, t| {
            let Some(file) = grep::dialogue::source_file(&t.dir) else {
                return 0;
            };
            match roo_formats::read::read_task_file_into(&file, buf) {
                Ok(true) => usize::from(matcher.may_match(buf)),
                _ => 0,
            }
        })
        .sum();
    let pre_ms = t.elapsed().as_secs_f64() * 1000.0;
    (passed, pre_ms)
}
