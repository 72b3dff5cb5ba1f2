//! Hierarchy reconstruction of 10 000 and 50 000 generated skeletons (in memory), stored links
//! removed (everything inferred) and kept, plus 5 000 to set beside the legacy baseline; and the
//! inferred pass with the keys of the previous pass kept, as the task store runs it. Target: ≤ 100 ms
//! at 50 000.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use roo_state::hierarchy::{
    get_task_tree, reconstruct_hierarchy, reconstruct_hierarchy_with, HierarchyOptions, KeyMemo,
    TreeOptions,
};
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/hierarchy_gen.rs"]
mod gen;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("hierarchy");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for n in [5_000usize, 10_000, 50_000] {
        let g = gen::generate(n, 42);
        let mut stripped = g.skeletons.clone();
        gen::strip_links(&mut stripped);
        let inferred = HierarchyOptions {
            workspace_filter: None,
            use_stored_links: false,
        };
        group.bench_function(format!("reconstruct_inferred/{n}"), |b| {
            b.iter_batched(
                || stripped.clone(),
                |sk| black_box(reconstruct_hierarchy(sk, &inferred)),
                BatchSize::LargeInput,
            )
        });
        // As a long-lived task store runs it: the keys of the previous pass kept.
        let mut memo = KeyMemo::default();
        let _ = reconstruct_hierarchy_with(stripped.clone(), &inferred, &mut memo);
        group.bench_function(format!("reconstruct_inferred_memo/{n}"), |b| {
            b.iter_batched(
                || stripped.clone(),
                |sk| black_box(reconstruct_hierarchy_with(sk, &inferred, &mut memo)),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("reconstruct_stored/{n}"), |b| {
            b.iter_batched(
                || g.skeletons.clone(),
                |sk| black_box(reconstruct_hierarchy(sk, &HierarchyOptions::default())),
                BatchSize::LargeInput,
            )
        });
        let (done, _) = reconstruct_hierarchy(g.skeletons.clone(), &HierarchyOptions::default());
        group.bench_function(format!("get_task_tree/{n}"), |b| {
            b.iter(|| black_box(get_task_tree(&done, &TreeOptions::default())))
        });
    }
    group.finish();
}

/// `normalize_instruction` over every instruction and call message of a generated store: the
/// costly part of a pass without a memo (MB/s).
fn normalize(c: &mut Criterion) {
    let g = gen::generate(50_000, 42);
    let texts: Vec<&str> = g
        .skeletons
        .iter()
        .flat_map(|s| {
            s.instruction
                .as_deref()
                .into_iter()
                .chain(s.child_tasks.iter().map(|c| c.message.as_str()))
        })
        .collect();
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let mut group = c.benchmark_group("normalize_instruction");
    group
        .sample_size(10)
        .throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(format!("{}_texts", texts.len()), |b| {
        b.iter(|| {
            texts
                .iter()
                .map(|t| roo_formats::text::normalize_instruction(t).len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench, normalize);
criterion_main!(benches);
