//! Precision / recall on generated task stores (`roo-corpus`: every era, with traps), read from disk by
//! the scanner: stored links stripped (all inferred), then kept (all honoured).

use roo_corpus::{CorpusSpec, Era, Truth};
use roo_state::hierarchy::{reconstruct_hierarchy, HierarchyMetrics, HierarchyOptions};
use roo_state::{scan_tasks, ConversationSkeleton, ScanOptions};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

fn scan(dir: &Path) -> Vec<ConversationSkeleton> {
    let mut opts = ScanOptions::default();
    opts.analyze.include_sequence = false;
    match scan_tasks(dir, &opts) {
        Ok(r) => r.skeletons,
        Err(e) => panic!("scan {}: {e}", dir.display()),
    }
}

fn spec(seed: u64, strip: bool) -> CorpusSpec {
    CorpusSpec {
        tasks: 600,
        seed,
        eras: Era::ALL.to_vec(),
        target_bytes: Some(4 * 1024 * 1024),
        traps: true,
        strip_stored_links: strip,
        workspaces: 8,
    }
}

struct Eval {
    expected: usize,
    predicted: usize,
    correct: usize,
    lines: Vec<String>,
}

fn evaluate(r: &[ConversationSkeleton], m: &HierarchyMetrics, truth: &Truth) -> Eval {
    let present: HashSet<&str> = r.iter().map(|s| s.task_id.as_str()).collect();
    let want: BTreeMap<&str, (Option<&str>, &[String])> = truth
        .tasks
        .iter()
        .map(|t| {
            (
                t.task_id.as_str(),
                (t.parent.as_deref(), t.traps.as_slice()),
            )
        })
        .collect();
    let mut e = Eval {
        expected: 0,
        predicted: 0,
        correct: 0,
        lines: Vec::new(),
    };
    let mut per_trap: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for s in r {
        let (w, traps) = want.get(s.task_id.as_str()).copied().unwrap_or((None, &[]));
        let w_here = w.filter(|p| present.contains(p));
        let got = s.parent_task_id.as_deref().filter(|p| present.contains(p));
        if w_here.is_some() {
            e.expected += 1;
        }
        if got.is_some() {
            e.predicted += 1;
        }
        let ok = got == w_here;
        if got.is_some() && ok {
            e.correct += 1;
        }
        for t in traps {
            let x = per_trap.entry(t.clone()).or_default();
            x.0 += 1;
            if !ok {
                x.1 += 1;
            }
        }
        if !ok {
            let issue = m
                .issues
                .iter()
                .find(|i| i.task_id == s.task_id)
                .map(|i| i.detail.as_str());
            e.lines.push(format!(
                "  {} traps {:?}: want {:?} got {:?} ({:?}) issue {:?}",
                s.task_id,
                traps,
                w,
                s.parent_task_id,
                s.parent_evidence
                    .as_ref()
                    .map(|v| (&v.source, v.confidence, v.gap_ms)),
                issue
            ));
        }
    }
    for (t, (n, bad)) in per_trap {
        e.lines
            .push(format!("  trap {t}: {n} tasks, {bad} wrong or missed"));
    }
    e
}

#[test]
fn corpus_links_removed_precision_recall() {
    let mut total = (0usize, 0usize, 0usize);
    for seed in [1u64, 2, 3] {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let truth = roo_corpus::generate(dir.path(), &spec(seed, true))
            .unwrap_or_else(|e| panic!("generate: {e}"));
        let sk = scan(&dir.path().join("tasks"));
        let (r, m) = reconstruct_hierarchy(
            sk,
            &HierarchyOptions {
                workspace_filter: None,
                use_stored_links: false,
            },
        );
        let e = evaluate(&r, &m, &truth);
        let (p, rc) = (
            e.correct as f64 / e.predicted.max(1) as f64,
            e.correct as f64 / e.expected.max(1) as f64,
        );
        println!(
            "seed {seed}: {} tasks, {} links expected, {} predicted, {} correct: precision {p:.4} recall {rc:.4}; ambiguous {} cycles {} ({:.1} ms)",
            r.len(),
            e.expected,
            e.predicted,
            e.correct,
            m.ambiguous,
            m.cycles_broken,
            m.elapsed_ms
        );
        for l in e.lines.iter().take(40) {
            println!("{l}");
        }
        assert_eq!(m.cycles_broken, 0);
        assert!(p >= 0.99, "precision {p}");
        assert!(rc >= 0.97, "recall {rc}");
        total.0 += e.expected;
        total.1 += e.predicted;
        total.2 += e.correct;
    }
    println!(
        "all: expected {} predicted {} correct {}: precision {:.4} recall {:.4}",
        total.0,
        total.1,
        total.2,
        total.2 as f64 / total.1.max(1) as f64,
        total.2 as f64 / total.0.max(1) as f64
    );
}

#[test]
fn corpus_links_kept_all_honoured() {
    for seed in [4u64, 5] {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let truth = roo_corpus::generate(dir.path(), &spec(seed, false))
            .unwrap_or_else(|e| panic!("generate: {e}"));
        let sk = scan(&dir.path().join("tasks"));
        let stored: Vec<(String, String)> = sk
            .iter()
            .filter_map(|s| {
                s.stored_links
                    .history_item_parent
                    .clone()
                    .or_else(|| s.stored_links.metadata_parent.clone())
                    .map(|p| (s.task_id.clone(), p))
            })
            .collect();
        let (r, m) = reconstruct_hierarchy(sk, &HierarchyOptions::default());
        let got: BTreeMap<&str, Option<&str>> = r
            .iter()
            .map(|s| (s.task_id.as_str(), s.parent_task_id.as_deref()))
            .collect();
        let honoured = stored
            .iter()
            .filter(|(c, p)| got.get(c.as_str()).copied().flatten() == Some(p.as_str()))
            .count();
        let e = evaluate(&r, &m, &truth);
        println!(
            "seed {seed}: stored links {} honoured {}; by source {:?}; overall precision {:.4} recall {:.4}; orphans {} conflicts {}",
            stored.len(),
            honoured,
            m.links_by_source,
            e.correct as f64 / e.predicted.max(1) as f64,
            e.correct as f64 / e.expected.max(1) as f64,
            m.orphans,
            m.conflicts
        );
        for l in e.lines.iter().take(20) {
            println!("{l}");
        }
        assert_eq!(honoured, stored.len());
        assert_eq!(m.cycles_broken, 0);
    }
}
