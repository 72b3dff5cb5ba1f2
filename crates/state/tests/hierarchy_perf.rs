//! Timing probe (ignored by default): `cargo test --release --test hierarchy_perf -- --ignored --nocapture`.

#[path = "hierarchy_gen.rs"]
mod gen;

use roo_state::hierarchy::{get_task_tree, reconstruct_hierarchy, HierarchyOptions, TreeOptions};
use std::time::Instant;

/// Process CPU time (user + system) in ms, from /proc (Linux only; 0 elsewhere).
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) * 10.0
}

#[test]
#[ignore]
fn timing_50k() {
    for n in [5_000usize, 10_000, 50_000] {
        let g = gen::generate(n, 42);
        let mut sk = g.skeletons.clone();
        gen::strip_links(&mut sk);
        for round in 0..5 {
            let input = sk.clone();
            let c0 = cpu_ms();
            let t = Instant::now();
            let (r, m) = reconstruct_hierarchy(
                input,
                &HierarchyOptions {
                    workspace_filter: None,
                    use_stored_links: false,
                },
            );
            let total = t.elapsed();
            let cpu = cpu_ms() - c0;
            let t2 = Instant::now();
            let tree = get_task_tree(&r, &TreeOptions::default());
            let tt = t2.elapsed();
            let t3 = Instant::now();
            drop(tree);
            drop(r);
            println!(
                "n={n} round {round}: reconstruct {:.1} ms (cpu {cpu:.0} ms, metrics {:.1} ms), tree {:.1} ms, drop {:.1} ms",
                total.as_secs_f64() * 1e3,
                m.elapsed_ms,
                tt.as_secs_f64() * 1e3,
                t3.elapsed().as_secs_f64() * 1e3
            );
        }
    }
}

#[test]
#[ignore]
fn timing_normalize() {
    let g = gen::generate(50_000, 42);
    let mut texts: Vec<&str> = Vec::new();
    for s in &g.skeletons {
        if let Some(i) = s.instruction.as_deref() {
            texts.push(i);
        }
        for c in &s.child_tasks {
            texts.push(&c.message);
        }
    }
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    for _ in 0..3 {
        let t = Instant::now();
        let mut n = 0usize;
        for x in &texts {
            n += roo_formats::text::normalize_instruction(x).len();
        }
        println!(
            "normalize {} strings, {} bytes: {:.1} ms ({n})",
            texts.len(),
            bytes,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    let t = Instant::now();
    let mut trie: radix_trie::Trie<String, u32> = radix_trie::Trie::new();
    for (i, x) in texts.iter().enumerate() {
        trie.insert(x.chars().take(64).collect(), i as u32);
    }
    println!("trie64 {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    let mut trie: radix_trie::Trie<String, u32> = radix_trie::Trie::new();
    for (i, x) in texts.iter().enumerate() {
        trie.insert(x.to_string(), i as u32);
    }
    println!("trie full {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
}

/// What an ASCII fast path in `normalize_instruction` would cost (probe only; not used).
fn ascii_probe(text: &str) -> Option<String> {
    let t = roo_formats::text::unwrap_user_text(text);
    if !t.is_ascii() || t.contains(['\\', '&']) {
        return None;
    }
    let mut out = String::with_capacity(t.len());
    let mut pending = false;
    for &b in t.as_bytes() {
        if b.is_ascii_whitespace() || b == 0x0b {
            pending = !out.is_empty();
        } else {
            if pending {
                out.push(' ');
                pending = false;
            }
            out.push(b.to_ascii_lowercase() as char);
        }
    }
    Some(out)
}

#[test]
#[ignore]
fn timing_ascii_probe() {
    let g = gen::generate(50_000, 42);
    let mut texts: Vec<&str> = Vec::new();
    for s in &g.skeletons {
        if let Some(i) = s.instruction.as_deref() {
            texts.push(i);
        }
        for c in &s.child_tasks {
            texts.push(&c.message);
        }
    }
    for _ in 0..3 {
        let t = Instant::now();
        let mut same = 0usize;
        for x in &texts {
            let fast = ascii_probe(x);
            if fast.is_some_and(|f| f == roo_formats::text::normalize_instruction(x)) {
                same += 1;
            }
        }
        println!("check: {same} of {} equal", texts.len());
        let t2 = Instant::now();
        let mut n = 0usize;
        for x in &texts {
            n += ascii_probe(x).map_or(0, |s| s.len());
        }
        println!(
            "probe {:.1} ms ({n}) [check {:.1} ms]",
            t2.elapsed().as_secs_f64() * 1e3,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}

#[test]
#[ignore]
fn timing_normalize_parallel() {
    use rayon::prelude::*;
    let g = gen::generate(50_000, 42);
    let mut texts: Vec<&str> = Vec::new();
    for s in &g.skeletons {
        if let Some(i) = s.instruction.as_deref() {
            texts.push(i);
        }
        for c in &s.child_tasks {
            texts.push(&c.message);
        }
    }
    for _ in 0..3 {
        let t = Instant::now();
        let v: Vec<String> = texts
            .par_iter()
            .map(|x| roo_formats::text::normalize_instruction(x))
            .collect();
        let par = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let w: Vec<String> = texts
            .iter()
            .map(|x| roo_formats::text::normalize_instruction(x))
            .collect();
        println!(
            "parallel {par:.1} ms, serial {:.1} ms ({} {}) threads {}",
            t.elapsed().as_secs_f64() * 1e3,
            v.len(),
            w.len(),
            rayon::current_num_threads()
        );
    }
}
