//! Hierarchy on the real fixture trees: the legacy pair by inference alone, the stores' stored links,
//! and the legacy engine's links side by side with ours.

use roo_legacy::legacy_links;
use roo_state::hierarchy::{reconstruct_hierarchy, HierarchyOptions};
use roo_state::{scan_tasks, ConversationSkeleton, ScanOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PARENT: &str = "ac8aa7b4-319c-4925-a139-4f4adca81921";
const CHILD: &str = "bc93a6f7-cd2e-4686-a832-46e3cd14d338";

/// `../shared/fixtures/legacy-tasks`, or `None` (the test skips, saying why) when it is absent.
fn legacy_tasks(test: &str) -> Option<PathBuf> {
    roo_corpus::shared::shared_fixture("fixtures/legacy-tasks", test)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scan(dir: &Path) -> Vec<ConversationSkeleton> {
    let mut opts = ScanOptions::default();
    opts.analyze.include_sequence = false;
    match scan_tasks(dir, &opts) {
        Ok(r) => r.skeletons,
        Err(e) => panic!("scan {}: {e}", dir.display()),
    }
}

fn links(r: &[ConversationSkeleton]) -> BTreeMap<String, String> {
    r.iter()
        .filter_map(|s| s.parent_task_id.clone().map(|p| (s.task_id.clone(), p)))
        .collect()
}

fn opts(stored: bool) -> HierarchyOptions {
    HierarchyOptions {
        workspace_filter: None,
        use_stored_links: stored,
    }
}

#[test]
fn real_pair_linked_by_inference_alone() {
    let Some(legacy_tasks) = legacy_tasks("real_pair_linked_by_inference_alone") else {
        return;
    };
    let dir = legacy_tasks.join("real-tasks");
    let sk = scan(&dir);
    assert_eq!(sk.len(), 2);
    for s in &sk {
        assert!(
            s.stored_links.history_item_parent.is_none()
                && s.stored_links.metadata_parent.is_none()
        );
    }
    let (r, m) = reconstruct_hierarchy(sk, &opts(false));
    let child = r.iter().find(|s| s.task_id == CHILD);
    assert_eq!(
        child.and_then(|s| s.parent_task_id.as_deref()),
        Some(PARENT)
    );
    let ev = child.and_then(|s| s.parent_evidence.clone());
    println!(
        "evidence: {}",
        serde_json::to_string(&ev).unwrap_or_default()
    );
    let Some(ev) = ev else { panic!("no evidence") };
    assert_eq!(ev.source, "instruction_prefix");
    assert!(ev.new_task_ts.is_some());
    assert!(ev.confidence >= 0.8, "{}", ev.confidence);
    assert_eq!(child.and_then(|s| s.root_task_id.as_deref()), Some(PARENT));
    assert_eq!(m.links_by_source.instruction_prefix, 1);
    assert_eq!(m.cycles_broken, 0);
    assert_eq!(m.max_depth, 1);
}

#[test]
fn legacy_engine_finds_the_real_pair_too() {
    let Some(legacy_tasks) = legacy_tasks("legacy_engine_finds_the_real_pair_too") else {
        return;
    };
    let dir = legacy_tasks.join("real-tasks");
    let l = legacy_links(&dir);
    assert_eq!(l, vec![(CHILD.to_owned(), PARENT.to_owned())]);
}

#[test]
fn legacy_and_ours_side_by_side() {
    // The legacy trees when ../shared is there; the stores of this repository always.
    let mut sets: Vec<PathBuf> = legacy_tasks("legacy_and_ours_side_by_side (legacy trees)")
        .map(|d| vec![d.join("real-tasks"), d.join("controlled-hierarchy")])
        .unwrap_or_default();
    if let Ok(rd) = std::fs::read_dir(repo().join("fixtures/stores")) {
        let mut stores: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path().join("tasks")))
            .collect();
        stores.sort();
        sets.extend(stores.into_iter().filter(|p| p.is_dir()));
    }
    println!(
        "{:<28} {:<12} {:<12} ours (inference only)",
        "set", "child", "legacy"
    );
    for dir in sets {
        let name = dir
            .components()
            .rev()
            .find(|c| c.as_os_str() != "tasks")
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let legacy: BTreeMap<String, String> = legacy_links(&dir).into_iter().collect();
        let (r, m) = reconstruct_hierarchy(scan(&dir), &opts(false));
        let ours = links(&r);
        assert_eq!(m.cycles_broken, 0, "{name}");
        let mut ids: Vec<&String> = legacy.keys().chain(ours.keys()).collect();
        ids.sort();
        ids.dedup();
        for id in ids {
            let (a, b) = (legacy.get(id), ours.get(id));
            let short =
                |x: Option<&String>| x.map_or("—".to_owned(), |s| s.chars().take(8).collect());
            let tag = match (a, b) {
                (Some(x), Some(y)) if x == y => "same",
                (Some(_), Some(_)) => "DIFFERENT",
                (Some(_), None) => "legacy only",
                _ => "ours only",
            };
            println!(
                "{name:<28} {:<12} {:<12} {:<12} {tag}",
                short(Some(id)),
                short(a),
                short(b)
            );
        }
    }
}

#[test]
fn stores_stored_links_honoured_and_inference_agrees() {
    let Ok(rd) = std::fs::read_dir(repo().join("fixtures/stores")) else {
        println!("no fixtures/stores");
        return;
    };
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path().join("tasks")))
        .collect();
    dirs.sort();
    for dir in dirs.into_iter().filter(|p| p.is_dir()) {
        let sk = scan(&dir);
        let stored: BTreeMap<String, String> = sk
            .iter()
            .filter_map(|s| {
                s.stored_links
                    .history_item_parent
                    .clone()
                    .map(|p| (s.task_id.clone(), p))
            })
            .collect();
        let (kept, mk) = reconstruct_hierarchy(sk.clone(), &opts(true));
        let kept = links(&kept);
        for (c, p) in &stored {
            assert_eq!(
                kept.get(c),
                Some(p),
                "{}: stored link of {c} not honoured",
                dir.display()
            );
        }
        let (inferred, mi) = reconstruct_hierarchy(sk, &opts(false));
        let inferred = links(&inferred);
        println!(
            "{}: stored {} kept {} (conflicts {}) inferred {} (ambiguous {})",
            dir.display(),
            stored.len(),
            kept.len(),
            mk.conflicts,
            inferred.len(),
            mi.ambiguous
        );
        // Whatever inference finds must agree with what the files store.
        for (c, p) in &inferred {
            if let Some(k) = kept.get(c) {
                assert_eq!(k, p, "{}: {c}", dir.display());
            }
        }
        assert_eq!(mi.cycles_broken, 0);
    }
}

#[test]
fn controlled_hierarchy_against_its_summary() {
    let Some(legacy_tasks) = legacy_tasks("controlled_hierarchy_against_its_summary") else {
        return;
    };
    let dir = legacy_tasks.join("controlled-hierarchy");
    let summary: serde_json::Value = std::fs::read_to_string(dir.join("hierarchy-summary.json"))
        .ok()
        .and_then(|t| serde_json::from_str(t.trim_start_matches('\u{feff}')).ok())
        .unwrap_or_default();
    let truth: BTreeMap<String, String> = summary
        .get("hierarchy")
        .and_then(|h| h.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|t| {
                    let id = t.get("TaskId")?.as_str()?;
                    let p = t.get("ParentId")?.as_str()?;
                    Some((id.to_owned(), p.to_owned()))
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(truth.len(), 6);
    let sk = scan(&dir);
    for s in &sk {
        println!(
            "{} instr {:?} calls {} stored {:?}/{:?}",
            &s.task_id[..8.min(s.task_id.len())],
            s.instruction
                .as_deref()
                .map(|i| i.chars().take(50).collect::<String>()),
            s.child_tasks.len(),
            s.stored_links.history_item_parent,
            s.stored_links.metadata_parent
        );
    }
    for stored in [false, true] {
        let (r, m) = reconstruct_hierarchy(sk.clone(), &opts(stored));
        let got = links(&r);
        let right = truth.iter().filter(|(c, p)| got.get(*c) == Some(p)).count();
        let wrong: Vec<(&String, &String)> = got
            .iter()
            .filter(|(c, p)| truth.get(*c).is_some_and(|t| t != *p))
            .collect();
        println!("stored links {stored}: {right} of {} documented links, {} links in all, wrong {wrong:?}, issues {:?}", truth.len(), got.len(), m.issues);
        assert_eq!(m.cycles_broken, 0);
        if !stored {
            assert!(wrong.is_empty());
        }
    }
}
