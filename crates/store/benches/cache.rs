//! Skeleton cache on a generated store of 5 000 tasks (roo-corpus):
//! - warm build, nothing changed (target ≤ 50 ms);
//! - warm build with 1 % of the tasks changed;
//! - baseline measured in the same run: stat'ing the same source files with no cache at all
//!   (the floor a warm build cannot go under), and the cold build.
//!
//! `cargo bench -p roo-store --bench cache` (ROO_BENCH_TASKS overrides the task count).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use roo_store::cache::{build_skeleton_cache, task_sig, BuildOptions, SOURCE_FILES};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

struct Fixture {
    _tmp: tempfile::TempDir,
    tasks: PathBuf,
    cache: PathBuf,
    ids: Vec<String>,
}

fn fixture() -> Fixture {
    let n: usize = std::env::var("ROO_BENCH_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("store");
    let t = Instant::now();
    roo_corpus::generate(
        &store,
        &roo_corpus::CorpusSpec {
            tasks: n,
            seed: 7,
            target_bytes: Some(n as u64 * 12_000),
            ..roo_corpus::CorpusSpec::default()
        },
    )
    .expect("corpus");
    let tasks = store.join("tasks");
    let (dirs, _) = roo_state::scan::list_task_dirs(&tasks).expect("list");
    eprintln!(
        "corpus: {} tasks in {:.1} s",
        dirs.len(),
        t.elapsed().as_secs_f64()
    );
    Fixture {
        cache: tmp.path().join("cache"),
        ids: dirs.into_iter().map(|(id, _)| id).collect(),
        tasks,
        _tmp: tmp,
    }
}

fn build(f: &Fixture) -> roo_store::cache::BuildReport {
    build_skeleton_cache(std::slice::from_ref(&f.tasks), &BuildOptions::new(&f.cache))
        .expect("build")
}

/// The floor: list the tasks and stat their source files, nothing else.
fn stat_only(tasks: &Path) -> usize {
    use rayon::prelude::*;
    let dirs = roo_store::cache::list_tasks(tasks).expect("list");
    dirs.par_iter()
        .map(|(_, d)| task_sig(d).iter().flatten().count())
        .sum()
}

fn touch_some(f: &Fixture, round: u64) -> usize {
    let step = 100; // 1 %
    let mut n = 0;
    for id in f.ids.iter().step_by(step) {
        let dir = f.tasks.join(id);
        if let Some(p) = SOURCE_FILES
            .iter()
            .map(|s| dir.join(s))
            .find(|p| p.exists())
        {
            if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&p) {
                let t = SystemTime::now() + Duration::from_secs(round % 1000 + 1);
                let _ = file.set_modified(t);
                n += 1;
            }
        }
    }
    n
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time<F: FnMut()>(runs: usize, mut f: F) -> f64 {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect(),
    )
}

fn benches(c: &mut Criterion) {
    let f = fixture();
    let t = Instant::now();
    let cold = build(&f);
    let cold_ms = t.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(cold.built as usize + cold.failed as usize, f.ids.len());

    // Summary with ratios, measured in this run.
    let stats = time(15, || {
        stat_only(&f.tasks);
    });
    let warm = time(15, || {
        let r = build(&f);
        assert_eq!(r.built, 0);
    });
    let mut round = 0;
    let changed = time(7, || {
        round += 1;
        touch_some(&f, round);
        let r = build(&f);
        assert!(r.built > 0);
    });
    eprintln!(
        "\n{} tasks: cold {cold_ms:.0} ms | warm unchanged {warm:.1} ms (target <= 50 ms; {:.2}x the bare stat floor of {stats:.1} ms; {:.0}x faster than cold) | warm 1 % changed {changed:.1} ms ({:.0}x faster than cold)\n",
        f.ids.len(),
        warm / stats,
        cold_ms / warm,
        cold_ms / changed,
    );

    let mut g = c.benchmark_group("skeleton_cache");
    g.sample_size(20);
    g.bench_function("stat_floor", |b| b.iter(|| stat_only(&f.tasks)));
    g.bench_function("warm_unchanged", |b| b.iter(|| build(&f)));
    g.sample_size(10);
    let mut round = 1000;
    g.bench_function("warm_1pct_changed", |b| {
        b.iter_batched(
            || {
                round += 1;
                touch_some(&f, round)
            },
            |_| build(&f),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(cache, benches);
criterion_main!(cache);
