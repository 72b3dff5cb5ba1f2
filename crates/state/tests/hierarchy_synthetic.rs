//! Precision / recall on generated trees (in memory, every trap), stored links removed then kept.

#[path = "hierarchy_gen.rs"]
mod gen;

use roo_state::hierarchy::{reconstruct_hierarchy, HierarchyOptions};
use std::collections::BTreeMap;

fn opts(stored: bool) -> HierarchyOptions {
    HierarchyOptions {
        workspace_filter: None,
        use_stored_links: stored,
    }
}

fn per_trap(g: &gen::Generated, sc: &gen::Score) -> BTreeMap<&'static str, (usize, usize)> {
    let mut t: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    for (id, trap) in &g.trap {
        let e = t.entry(trap).or_default();
        e.0 += 1;
        if sc.missed.contains(id) || sc.wrong.iter().any(|w| &w.0 == id) {
            e.1 += 1;
        }
    }
    t
}

#[test]
fn inferred_links_precision_and_recall() {
    let mut total = (0usize, 0usize, 0usize);
    for seed in [1u64, 2, 3, 4, 5] {
        let g = gen::generate(800, seed);
        let mut sk = g.skeletons.clone();
        gen::strip_links(&mut sk);
        let (r, m) = reconstruct_hierarchy(sk, &opts(false));
        let sc = gen::score(&r, &g.truth);
        println!(
            "seed {seed}: tasks {} expected {} predicted {} correct {} precision {:.4} recall {:.4} ambiguous {} cycles {} ({:.1} ms)",
            r.len(),
            sc.expected,
            sc.predicted,
            sc.correct,
            sc.precision(),
            sc.recall(),
            m.ambiguous,
            m.cycles_broken,
            m.elapsed_ms
        );
        for (trap, (n, bad)) in per_trap(&g, &sc) {
            if bad > 0 {
                println!("  trap {trap}: {bad} of {n} wrong or missed");
            }
        }
        for id in sc.missed.iter().take(8) {
            let trap = g.trap.get(id).copied().unwrap_or("?");
            if trap == "prefix_record" {
                continue;
            }
            let issue = m
                .issues
                .iter()
                .find(|i| &i.task_id == id)
                .map(|i| i.detail.clone());
            println!(
                "  missed: {id} ({trap}) want {:?} issue {issue:?}",
                g.truth.get(id)
            );
        }
        for w in sc.wrong.iter().take(5) {
            println!(
                "  wrong: {} want {:?} got {:?} ({:?})",
                w.0,
                w.1,
                w.2,
                g.trap.get(&w.0)
            );
        }
        assert_eq!(m.cycles_broken, 0);
        assert!(sc.precision() >= 0.99, "precision {}", sc.precision());
        assert!(sc.recall() >= 0.97, "recall {}", sc.recall());
        total.0 += sc.expected;
        total.1 += sc.predicted;
        total.2 += sc.correct;
    }
    println!(
        "all seeds: expected {} predicted {} correct {} precision {:.4} recall {:.4}",
        total.0,
        total.1,
        total.2,
        total.2 as f64 / total.1 as f64,
        total.2 as f64 / total.0 as f64
    );
}

#[test]
fn stored_links_are_all_honoured() {
    for seed in [11u64, 12, 13] {
        let g = gen::generate(800, seed);
        let stored: Vec<(String, String)> = g
            .skeletons
            .iter()
            .filter_map(|s| {
                s.stored_links
                    .history_item_parent
                    .clone()
                    .map(|p| (s.task_id.clone(), p))
            })
            .collect();
        let (r, m) = reconstruct_hierarchy(g.skeletons.clone(), &opts(true));
        let by_id: BTreeMap<&str, Option<&str>> = r
            .iter()
            .map(|s| (s.task_id.as_str(), s.parent_task_id.as_deref()))
            .collect();
        let honoured = stored
            .iter()
            .filter(|(c, p)| by_id.get(c.as_str()).copied().flatten() == Some(p.as_str()))
            .count();
        println!(
            "seed {seed}: stored {} honoured {} by source {:?} orphans {} conflicts {}",
            stored.len(),
            honoured,
            m.links_by_source,
            m.orphans,
            m.conflicts
        );
        assert_eq!(honoured, stored.len());
        assert_eq!(m.cycles_broken, 0);
        assert_eq!(m.conflicts, 0);
        // Everything is right, inferred or stored.
        let sc = gen::score(&r, &g.truth);
        assert_eq!(sc.precision(), 1.0);
        assert_eq!(sc.recall(), 1.0);
    }
}

/// The result of a pass, without its timing, as comparable text.
fn outcome(
    r: &[roo_state::ConversationSkeleton],
    m: &roo_state::hierarchy::HierarchyMetrics,
) -> String {
    let mut m = m.clone();
    m.elapsed_ms = 0.0;
    let links: Vec<_> = r
        .iter()
        .map(|s| {
            (
                &s.task_id,
                &s.parent_task_id,
                &s.root_task_id,
                &s.parent_evidence,
            )
        })
        .collect();
    serde_json::to_string(&(links, m)).unwrap_or_default()
}

#[test]
fn a_memo_kept_between_passes_changes_nothing() {
    use roo_state::hierarchy::{reconstruct_hierarchy_with, KeyMemo};
    let mut memo = KeyMemo::default();
    for (round, seed) in [21u64, 22, 23].into_iter().enumerate() {
        let g = gen::generate(600, seed);
        let mut sk = g.skeletons.clone();
        gen::strip_links(&mut sk);
        // Between passes the store changes: tasks gone, instructions and calls rewritten.
        if round > 0 {
            sk.retain(|s| !s.task_id.ends_with('7'));
            for (i, s) in sk.iter_mut().enumerate() {
                if i % 5 == 0 {
                    if let Some(t) = s.instruction.as_mut() {
                        t.push_str(" (again)");
                    }
                }
                if i % 7 == 0 {
                    for c in &mut s.child_tasks {
                        c.message = c.message.to_uppercase();
                    }
                }
            }
        }
        for stored in [false, true] {
            let (fresh, fm) = reconstruct_hierarchy(sk.clone(), &opts(stored));
            let (kept, km) = reconstruct_hierarchy_with(sk.clone(), &opts(stored), &mut memo);
            assert_eq!(
                outcome(&fresh, &fm),
                outcome(&kept, &km),
                "seed {seed}, stored {stored}"
            );
            assert!(fm.links_by_source.instruction_prefix > 0 || stored);
        }
        assert!(!memo.is_empty());
    }
    // Only the texts of the last pass are held.
    let (_, _) = reconstruct_hierarchy_with(Vec::new(), &opts(false), &mut memo);
    assert!(memo.is_empty());
}

#[test]
fn the_borrowed_tree_and_the_written_one_serialise_as_the_owned_one() {
    use roo_state::hierarchy::{get_task_tree, get_task_tree_view, TreeOptions};
    use roo_state::hierarchy::{tree_json, JsonText};
    let g = gen::generate(400, 31);
    let (linked, _) = reconstruct_hierarchy(g.skeletons.clone(), &opts(true));
    let some_parent = linked
        .iter()
        .find_map(|s| s.parent_task_id.clone())
        .expect("a linked task");
    let workspace = linked
        .iter()
        .find_map(|s| s.metadata.workspace.clone())
        .expect("a workspace");
    for o in [
        TreeOptions::default(),
        TreeOptions {
            max_depth: Some(1),
            ..TreeOptions::default()
        },
        TreeOptions {
            root_id: Some(some_parent),
            ..TreeOptions::default()
        },
        TreeOptions {
            workspace: Some(workspace),
            ..TreeOptions::default()
        },
    ] {
        let owned = serde_json::to_string(&get_task_tree(&linked, &o)).unwrap_or_default();
        let view = serde_json::to_string(&get_task_tree_view(&linked, &o)).unwrap_or_default();
        assert!(owned.len() > 2, "{o:?}");
        assert_eq!(owned, view, "{o:?}");
        // Written straight from the forest, in one part or several (more parts than top nodes
        // included), as UTF-8 and as Latin-1.
        let latin1 = roo_js::to_latin1_json(&get_task_tree(&linked, &o)).unwrap_or_default();
        for parts in [1, 3, 1000] {
            let written = tree_json(&linked, &o, JsonText::Utf8, parts).unwrap_or_default();
            assert_eq!(owned.as_bytes(), written, "{o:?} {parts}");
            let written = tree_json(&linked, &o, JsonText::Latin1, parts);
            assert_eq!(latin1, written.unwrap_or_default(), "{o:?} {parts}");
        }
    }
}

/// The trees a view asks for: whole, one level deep, and one workspace's.
fn tree_options(
    linked: &[roo_state::ConversationSkeleton],
) -> [roo_state::hierarchy::TreeOptions; 3] {
    use roo_state::hierarchy::TreeOptions;
    let workspace = (linked.iter())
        .find_map(|s| s.metadata.workspace.clone())
        .expect("a workspace");
    [
        TreeOptions::default(),
        TreeOptions {
            max_depth: Some(1),
            ..TreeOptions::default()
        },
        TreeOptions {
            workspace: Some(workspace),
            ..TreeOptions::default()
        },
    ]
}

#[test]
fn a_patched_tree_is_the_tree_written_again() {
    use roo_state::hierarchy::{JsonText, TreeOptions, TreeText};
    let g = gen::generate(400, 37);
    let (mut linked, _) = reconstruct_hierarchy(g.skeletons.clone(), &opts(true));
    let options = tree_options(&linked);
    let trees: Vec<(TreeText, &TreeOptions, JsonText, usize)> = (options.iter())
        .flat_map(|o| {
            [(o, JsonText::Utf8, 1), (o, JsonText::Latin1, 7)]
                .into_iter()
                .chain([(o, JsonText::Utf8, 1000)])
        })
        .map(|(o, text, parts)| {
            let t = TreeText::new(&linked, o, text, parts).expect("written");
            (t, o, text, parts)
        })
        .collect();
    // What a refresh changes in place: titles (to any text), dates of activity, counts,
    // completion, modes and how a link was made; never a parent, a creation date or a workspace.
    let changed: Vec<usize> = (0..linked.len()).step_by(37).collect();
    for (k, &i) in changed.iter().enumerate() {
        let s = &mut linked[i];
        s.metadata.title = Some(format!("retitled {k} \"é\" 日本 🚀\n"));
        s.metadata.last_activity = format!("2031-01-0{}T00:00:00.000Z", k % 9 + 1);
        s.metadata.message_count += 1_000 * k as u32;
        s.metadata.action_count += 1;
        s.metadata.mode = (k % 2 == 0).then(|| "architect".to_owned());
        s.is_completed = !s.is_completed;
        if let Some(e) = s.parent_evidence.as_mut() {
            e.confidence = 0.5;
            e.gap_ms = Some(k as i64);
        }
    }
    for (tree, o, text, parts) in trees {
        let before = tree.json().clone();
        let patched = tree.patch(&linked, &changed).expect("patched");
        let fresh = TreeText::new(&linked, o, text, parts).expect("written");
        assert!(patched.json() == fresh.json(), "{o:?} {text:?} {parts}");
        assert!(
            patched.json() != &before,
            "{o:?} {text:?} {parts}: nothing changed"
        );
        // Patched again with nothing changed: the same text, not a copy.
        let kept = patched.json().clone();
        let again = patched.patch(&linked, &[]).expect("patched");
        assert!(std::sync::Arc::ptr_eq(again.json(), &kept));
        // Headers that are not the tree's are refused.
        assert!(again.patch(&linked[1..], &changed).is_err());
    }
}

/// What a refresh may do to a tree: a task added on top (the newest), a child added, a task with
/// children removed (they become top nodes whose parent is missing), a task moved under another
/// parent, titles changed. Returns the headers after, and the identities of the tasks whose
/// header changed.
fn restructured(
    linked: &[roo_state::ConversationSkeleton],
) -> (Vec<roo_state::ConversationSkeleton>, Vec<u64>) {
    use roo_state::hierarchy::task_identity;
    let mut after = linked.to_vec();
    let mut dirty = Vec::new();
    let is_parent = |id: &str| {
        linked
            .iter()
            .any(|c| c.parent_task_id.as_deref() == Some(id))
    };
    let parents: Vec<String> = (linked.iter())
        .filter(|s| is_parent(&s.task_id))
        .map(|s| s.task_id.clone())
        .collect();
    assert!(parents.len() >= 3, "the generated store has parents");
    let mut top = linked[5].clone();
    top.task_id = "ffffffff-0000-4000-8000-00000000000a".into();
    top.parent_task_id = None;
    top.parent_evidence = None;
    top.metadata.created_at = "2099-01-01T00:00:00.000Z".into();
    let mut child = linked[9].clone();
    child.task_id = "ffffffff-0000-4000-8000-00000000000b".into();
    child.parent_task_id = Some(parents[0].clone());
    child.metadata.created_at = "2099-01-02T00:00:00.000Z".into();
    after.retain(|s| s.task_id != parents[1]);
    let moved = (after.iter_mut())
        .find(|s| s.parent_task_id.as_deref() == Some(parents[2].as_str()))
        .expect("a child");
    moved.parent_task_id = Some(parents[0].clone());
    dirty.push(task_identity(&moved.task_id));
    for s in after.iter_mut().step_by(53) {
        s.metadata.title = Some(format!("retitled \"{}\"", s.task_id));
        dirty.push(task_identity(&s.task_id));
    }
    after.extend([top, child]);
    dirty.extend(
        after
            .iter()
            .rev()
            .take(2)
            .map(|s| task_identity(&s.task_id)),
    );
    (after, dirty)
}

#[test]
fn a_rebuilt_tree_is_the_tree_written_again() {
    use roo_state::hierarchy::{JsonText, TreeText};
    let g = gen::generate(400, 41);
    let (linked, _) = reconstruct_hierarchy(g.skeletons.clone(), &opts(true));
    let options = tree_options(&linked);
    let (after, dirty) = restructured(&linked);
    for o in &options {
        for (text, parts) in [
            (JsonText::Utf8, 1),
            (JsonText::Latin1, 7),
            (JsonText::Utf8, 64),
        ] {
            let before = TreeText::new(&linked, o, text, parts).expect("written");
            let rebuilt =
                (before.rebuild(&after, o, |i| dirty.contains(&i), parts)).expect("rebuilt");
            let fresh = TreeText::new(&after, o, text, parts).expect("written");
            assert!(rebuilt.json() == fresh.json(), "{o:?} {text:?} {parts}");
            // Rebuilt again with nothing changed: the same text.
            let again = rebuilt
                .rebuild(&after, o, |_| false, parts)
                .expect("rebuilt");
            assert!(again.json() == fresh.json(), "{o:?} {text:?} {parts}");
        }
    }
}

#[test]
fn a_rebuild_copies_the_runs_it_is_told_did_not_change() {
    use roo_state::hierarchy::{JsonText, TreeOptions, TreeText};
    let g = gen::generate(400, 43);
    let (linked, _) = reconstruct_hierarchy(g.skeletons.clone(), &opts(true));
    let o = TreeOptions::default();
    // The oldest task retitled, a newest task added on top: told that nothing changed, a rebuild
    // in many runs keeps the old title (it copied the oldest task's run); in one run, the run
    // that holds the new task is written again, old title and all.
    let oldest = (linked.iter())
        .min_by(|a, b| {
            (&a.metadata.created_at, &a.task_id).cmp(&(&b.metadata.created_at, &b.task_id))
        })
        .map(|s| s.task_id.clone())
        .expect("a task");
    let mut after = linked.clone();
    for s in after.iter_mut().filter(|s| s.task_id == oldest) {
        s.metadata.title = Some("a title written after".into());
    }
    let mut top = linked[0].clone();
    top.task_id = "ffffffff-0000-4000-8000-00000000000c".into();
    top.parent_task_id = None;
    top.parent_evidence = None;
    top.metadata.created_at = "2099-01-01T00:00:00.000Z".into();
    after.push(top);
    let has_new_title = |t: &TreeText| {
        let json = t.json();
        json.windows(21).any(|w| w == b"a title written after")
    };
    for parts in [1, 16] {
        let before = TreeText::new(&linked, &o, JsonText::Utf8, parts).expect("written");
        let told_nothing = before
            .rebuild(&after, &o, |_| false, parts)
            .expect("rebuilt");
        assert_eq!(has_new_title(&told_nothing), parts == 1, "{parts}");
        let top_id = b"ffffffff-0000-4000-8000-00000000000c";
        assert!(told_nothing.json().windows(36).any(|w| w == top_id));
    }
}

#[test]
fn rebuilds_chained_over_random_changes_stay_the_tree_written_again() {
    use roo_state::hierarchy::{task_identity, JsonText, TreeText};
    let g = gen::generate(300, 47);
    let (mut tasks, _) = reconstruct_hierarchy(g.skeletons.clone(), &opts(true));
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for o in tree_options(&tasks) {
        let mut tree = TreeText::new(&tasks, &o, JsonText::Latin1, 16).expect("written");
        for round in 0..40 {
            let mut dirty = Vec::new();
            for _ in 0..1 + next(4) {
                let n = tasks.len();
                match next(4) {
                    // A task added: on top, or under any task.
                    0 => {
                        let mut s = tasks[next(n)].clone();
                        s.task_id = format!("ffffffff-{round:04}-4000-8000-{:012}", next(1 << 30));
                        s.parent_task_id = (next(2) == 0).then(|| tasks[next(n)].task_id.clone());
                        s.metadata.created_at = format!("2099-01-01T00:00:{:02}.000Z", next(60));
                        dirty.push(task_identity(&s.task_id));
                        tasks.push(s);
                    }
                    // A task removed (its children's parent goes missing).
                    1 if n > 50 => {
                        tasks.swap_remove(next(n));
                    }
                    // A task moved under another (a cycle leaves its tasks out of both trees).
                    2 => {
                        let parent = tasks[next(n)].task_id.clone();
                        let s = &mut tasks[next(n)];
                        s.parent_task_id = Some(parent);
                        dirty.push(task_identity(&s.task_id));
                    }
                    // A title changed.
                    _ => {
                        let s = &mut tasks[next(n)];
                        s.metadata.title = Some(format!("round {round}"));
                        dirty.push(task_identity(&s.task_id));
                    }
                }
            }
            tree = (tree.rebuild(&tasks, &o, |i| dirty.contains(&i), 16)).expect("rebuilt");
            let fresh = TreeText::new(&tasks, &o, JsonText::Latin1, 16).expect("written");
            assert!(tree.json() == fresh.json(), "{o:?} round {round}");
        }
    }
}
