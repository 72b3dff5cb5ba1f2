//! Hierarchy reconstruction on hand-built skeletons: one test per trap, then the API around it.

#[path = "hierarchy_gen.rs"]
mod gen;

use gen::{call, skel, with_calls};
use roo_state::hierarchy::{
    ancestors, descendants, get_task_tree, reconstruct_hierarchy, HierarchyMetrics,
    HierarchyOptions, TreeOptions,
};
use roo_state::ConversationSkeleton;

const T0: i64 = 1_700_000_000_000;
const WS: &str = "D:\\dev\\proj";

fn run(
    skeletons: Vec<ConversationSkeleton>,
    stored: bool,
) -> (Vec<ConversationSkeleton>, HierarchyMetrics) {
    reconstruct_hierarchy(
        skeletons,
        &HierarchyOptions {
            workspace_filter: None,
            use_stored_links: stored,
        },
    )
}

fn parent_of<'a>(r: &'a [ConversationSkeleton], id: &str) -> Option<&'a str> {
    r.iter()
        .find(|s| s.task_id == id)
        .and_then(|s| s.parent_task_id.as_deref())
}

fn get<'a>(r: &'a [ConversationSkeleton], id: &str) -> &'a ConversationSkeleton {
    match r.iter().find(|s| s.task_id == id) {
        Some(s) => s,
        None => panic!("no task {id}"),
    }
}

#[test]
fn simple_inference_with_evidence() {
    let p = with_calls(
        skel("p", Some(WS), Some(T0), "root work"),
        vec![call(
            "Write the parser tests",
            Some(T0 + 10_000),
            Some(T0 + 90_000),
        )],
    );
    let c = skel(
        "c",
        Some("d:/dev/proj/"),
        Some(T0 + 11_000),
        "Write the parser tests",
    );
    let (r, m) = run(vec![c, p], true);
    assert_eq!(parent_of(&r, "c"), Some("p"));
    let ev = get(&r, "c").parent_evidence.clone();
    let Some(ev) = ev else { panic!("no evidence") };
    assert_eq!(ev.source, "instruction_prefix");
    assert_eq!(ev.new_task_ts, Some(T0 + 10_000));
    assert_eq!(ev.gap_ms, Some(1_000));
    assert_eq!(ev.match_kind.as_deref(), Some("exact"));
    assert_eq!(ev.matched_prefix.as_deref(), Some("write the parser tests"));
    assert!(ev.confidence >= 0.9, "{}", ev.confidence);
    assert_eq!(get(&r, "c").root_task_id.as_deref(), Some("p"));
    assert_eq!(get(&r, "p").root_task_id, None);
    assert_eq!(m.links_by_source.instruction_prefix, 1);
    assert_eq!(m.roots, 1);
    assert_eq!(m.max_depth, 1);
    assert_eq!(m.tasks, 2);
}

#[test]
fn trap_same_instruction_two_workspaces() {
    let text = "Run the migration and report the schema differences";
    let pa = with_calls(
        skel("pa", Some("C:\\work\\alpha"), Some(T0), "a"),
        vec![call(text, Some(T0 + 1_000), None)],
    );
    let pb = with_calls(
        skel("pb", Some("C:\\work\\beta"), Some(T0), "b"),
        vec![call(text, Some(T0 + 1_200), None)],
    );
    // Child of pb, created closer in time to pa's call than… no: just after both; the workspace decides.
    let cb = skel("cb", Some("c:/Work/Beta/"), Some(T0 + 1_300), text);
    let ca = skel("ca", Some("c:/work/alpha"), Some(T0 + 1_900), text);
    let (r, m) = run(vec![pa, pb, cb, ca], false);
    assert_eq!(parent_of(&r, "ca"), Some("pa"));
    assert_eq!(parent_of(&r, "cb"), Some("pb"));
    assert_eq!(m.ambiguous, 0);
}

#[test]
fn trap_siblings_with_the_same_instruction() {
    let text = "Update the changelog";
    let p = with_calls(
        skel("p", Some(WS), Some(T0), "release"),
        vec![
            call(text, Some(T0 + 1_000), Some(T0 + 50_000)),
            call(text, Some(T0 + 60_000), Some(T0 + 120_000)),
        ],
    );
    let c1 = skel("c1", Some(WS), Some(T0 + 1_500), text);
    let c2 = skel("c2", Some(WS), Some(T0 + 60_700), text);
    // A third look-alike task created by hand much later must not take a slot.
    let stray = skel("stray", Some(WS), Some(T0 + 500_000), text);
    let (r, m) = run(vec![c2, stray, p, c1], false);
    assert_eq!(parent_of(&r, "c1"), Some("p"));
    assert_eq!(parent_of(&r, "c2"), Some("p"));
    assert_eq!(parent_of(&r, "stray"), None);
    let gaps: Vec<Option<i64>> = ["c1", "c2"]
        .iter()
        .map(|id| get(&r, id).parent_evidence.as_ref().and_then(|e| e.gap_ms))
        .collect();
    assert_eq!(gaps, vec![Some(500), Some(700)]);
    assert_eq!(m.links_by_source.instruction_prefix, 2);
}

#[test]
fn trap_long_instructions_sharing_192_chars() {
    let a = format!("{}implement the exporter", gen::PREAMBLE);
    let b = format!("{}implement the importer", gen::PREAMBLE);
    assert!(gen::PREAMBLE.len() > 192);
    let p1 = with_calls(
        skel("p1", Some(WS), Some(T0), "one"),
        vec![call(&a, Some(T0 + 1_000), None)],
    );
    let p2 = with_calls(
        skel("p2", Some(WS), Some(T0), "two"),
        vec![call(&b, Some(T0 + 1_100), None)],
    );
    // ca is created closest to p2's call, but its text is p1's.
    let ca = skel("ca", Some(WS), Some(T0 + 1_150), &a);
    let cb = skel("cb", Some(WS), Some(T0 + 5_000), &b);
    let (r, _) = run(vec![p1, p2, ca, cb], false);
    assert_eq!(parent_of(&r, "ca"), Some("p1"));
    assert_eq!(parent_of(&r, "cb"), Some("p2"));
}

#[test]
fn trap_escaping_whitespace_entities() {
    let parent_msg =
        "Fix  \\\\@src/app.ts &amp; the &lt;Header&gt; component\n\n   then   RUN the tests";
    let child_text =
        "<task>\nfix \\@src/app.ts & the <Header> component then run the tests\n</task>";
    let p = with_calls(
        skel("p", Some(WS), Some(T0), "root"),
        vec![call(parent_msg, Some(T0 + 1_000), None)],
    );
    let c = skel("c", Some(WS), Some(T0 + 2_000), child_text);
    let (r, _) = run(vec![p, c], false);
    assert_eq!(parent_of(&r, "c"), Some("p"));
    assert_eq!(
        get(&r, "c")
            .parent_evidence
            .as_ref()
            .and_then(|e| e.match_kind.clone())
            .as_deref(),
        Some("exact")
    );
}

#[test]
fn trap_recorded_message_is_a_prefix() {
    let full =
        "Audit the authentication module for session fixation and write a report with the findings";
    let p = with_calls(
        skel("p", Some(WS), Some(T0), "root"),
        vec![call(
            "Audit the authentication module for session fixation and write a report...",
            Some(T0 + 1_000),
            None,
        )],
    );
    let c = skel("c", Some(WS), Some(T0 + 1_500), full);
    let (r, _) = run(vec![p, c], false);
    assert_eq!(parent_of(&r, "c"), Some("p"));
    let ev = get(&r, "c").parent_evidence.clone();
    assert_eq!(
        ev.as_ref().and_then(|e| e.match_kind.as_deref()),
        Some("prefix")
    );
    assert!(ev.is_some_and(|e| e.confidence < 0.95));
}

#[test]
fn prefix_must_be_word_aligned_and_substantial() {
    let p = with_calls(
        skel("p", Some(WS), Some(T0), "root"),
        vec![call("Fix the bug", Some(T0 + 1_000), None)],
    );
    let c = skel(
        "c",
        Some(WS),
        Some(T0 + 1_500),
        "Fix the bugs in the payment flow and the refund handler as well",
    );
    let (r, _) = run(vec![p, c], false);
    assert_eq!(parent_of(&r, "c"), None);
}

#[test]
fn trap_deleted_parent_folder() {
    // Stored link to a parent that is gone: kept, counted as an orphan.
    let mut c = skel("c", Some(WS), Some(T0 + 2_000), "Generate the API docs");
    c.stored_links.history_item_parent = Some("gone".into());
    // A look-alike that issued the same instruction long before and was closed: must not adopt it.
    let old = with_calls(
        skel("old", Some(WS), Some(T0 - 900_000), "older root"),
        vec![call(
            "Generate the API docs",
            Some(T0 - 800_000),
            Some(T0 - 700_000),
        )],
    );
    let (r, m) = run(vec![c.clone(), old.clone()], true);
    assert_eq!(parent_of(&r, "c"), Some("gone"));
    assert_eq!(m.orphans, 1);
    assert!(m
        .issues
        .iter()
        .any(|i| i.kind == "orphan" && i.task_id == "c"));
    assert_eq!(get(&r, "c").root_task_id.as_deref(), Some("gone"));
    // Without stored links: no parent rather than the look-alike.
    let (r, m) = run(vec![c, old], false);
    assert_eq!(parent_of(&r, "c"), None);
    assert_eq!(m.orphans, 0);
}

#[test]
fn trap_parent_truncated_after_new_task() {
    // The parent's record stops at the newTask ask: no subtask_result, last activity = the call.
    let mut p = with_calls(
        skel("p", Some(WS), Some(T0), "root"),
        vec![call("Profile the slow endpoint", Some(T0 + 5_000), None)],
    );
    p.last_activity_ms = Some(T0 + 5_000);
    let c = skel("c", Some(WS), Some(T0 + 6_000), "Profile the slow endpoint");
    let (r, _) = run(vec![p, c], false);
    assert_eq!(parent_of(&r, "c"), Some("p"));
}

#[test]
fn parent_activity_bounds_the_child() {
    // The parent kept working for an hour after an unanswered call: a task created after that is not its child.
    let mut p = with_calls(
        skel("p", Some(WS), Some(T0), "root"),
        vec![call("Profile the slow endpoint", Some(T0 + 5_000), None)],
    );
    p.last_activity_ms = Some(T0 + 3_600_000);
    let c = skel(
        "c",
        Some(WS),
        Some(T0 + 7_200_000),
        "Profile the slow endpoint",
    );
    let (r, _) = run(vec![p, c], false);
    assert_eq!(parent_of(&r, "c"), None);
}

#[test]
fn an_open_call_does_not_adopt_a_task_days_later() {
    let p = with_calls(
        skel("p", Some(WS), Some(T0), "root"),
        vec![call("Run the full test suite", Some(T0 + 1_000), None)],
    );
    let late = skel(
        "late",
        Some(WS),
        Some(T0 + 3 * 86_400_000),
        "Run the full test suite",
    );
    let (r, _) = run(vec![p.clone(), late], false);
    assert_eq!(parent_of(&r, "late"), None);
    let soon = skel(
        "soon",
        Some(WS),
        Some(T0 + 3_600_000),
        "Run the full test suite",
    );
    let (r, _) = run(vec![p, soon], false);
    assert_eq!(parent_of(&r, "soon"), Some("p"));
}

#[test]
fn trap_child_created_before_a_look_alike_parent() {
    let text = "Benchmark the cache layer";
    let real = with_calls(
        skel("real", Some(WS), Some(T0), "root"),
        vec![call(text, Some(T0 + 1_000), None)],
    );
    let child = skel("child", Some(WS), Some(T0 + 2_000), text);
    // Created after the child, issuing the same instruction (closer to nothing the child did).
    let look = with_calls(
        skel("look", Some(WS), Some(T0 + 1_500), "other root"),
        vec![call(text, Some(T0 + 1_900_000), None)],
    );
    let (r, _) = run(vec![look, child, real], false);
    assert_eq!(parent_of(&r, "child"), Some("real"));
}

#[test]
fn ambiguity_is_reported_not_guessed() {
    let text = "Regenerate the lockfile";
    let p1 = with_calls(
        skel("p1", Some(WS), Some(T0), "a"),
        vec![call(text, Some(T0 + 1_000), None)],
    );
    let p2 = with_calls(
        skel("p2", Some(WS), Some(T0), "b"),
        vec![call(text, Some(T0 + 1_300), None)],
    );
    let c = skel("c", Some(WS), Some(T0 + 2_000), text);
    let (r, m) = run(vec![p1, p2, c], false);
    assert_eq!(parent_of(&r, "c"), None);
    assert_eq!(m.ambiguous, 1);
    let issue = m.issues.iter().find(|i| i.kind == "ambiguous");
    assert_eq!(
        issue.map(|i| i.candidates.clone()),
        Some(vec!["p1".to_owned(), "p2".to_owned()])
    );
}

#[test]
fn untimed_slots_link_only_when_unique() {
    let text = "Convert the config to TOML";
    let p1 = with_calls(
        skel("p1", Some(WS), Some(T0), "a"),
        vec![call(text, None, None)],
    );
    let c = skel("c", Some(WS), Some(T0 + 2_000), text);
    let (r, _) = run(vec![p1.clone(), c.clone()], false);
    assert_eq!(parent_of(&r, "c"), Some("p1"));
    assert!(get(&r, "c")
        .parent_evidence
        .as_ref()
        .is_some_and(|e| e.confidence < 0.8));
    let p2 = with_calls(
        skel("p2", Some(WS), Some(T0), "b"),
        vec![call(text, None, None)],
    );
    let (r, m) = run(vec![p1, p2, c], false);
    assert_eq!(parent_of(&r, "c"), None);
    assert_eq!(m.ambiguous, 1);
}

#[test]
fn one_child_per_new_task_call() {
    let text = "Write the release notes";
    let p = with_calls(
        skel("p", Some(WS), Some(T0), "root"),
        vec![call(text, Some(T0 + 1_000), None)],
    );
    let c1 = skel("c1", Some(WS), Some(T0 + 1_400), text);
    let c2 = skel("c2", Some(WS), Some(T0 + 9_000), text);
    let (r, _) = run(vec![p, c1, c2], false);
    assert_eq!(parent_of(&r, "c1"), Some("p"));
    assert_eq!(parent_of(&r, "c2"), None);
}

#[test]
fn never_its_own_parent() {
    // A task whose own call repeats its instruction (self-contamination in legacy) is not its own child.
    let s = with_calls(
        skel("s", Some(WS), Some(T0), "Plan the sprint"),
        vec![call("Plan the sprint", Some(T0 + 1_000), None)],
    );
    let mut t = skel("t", Some(WS), Some(T0 + 5_000), "Other");
    t.stored_links.history_item_parent = Some("t".into());
    let (r, m) = run(vec![s, t], true);
    assert_eq!(parent_of(&r, "s"), None);
    assert_eq!(parent_of(&r, "t"), None);
    assert!(m
        .issues
        .iter()
        .any(|i| i.kind == "self_link" && i.task_id == "t"));
}

#[test]
fn trap_cycles_in_stored_links() {
    let mut a = skel("a", Some(WS), Some(T0), "A");
    let mut b = skel("b", Some(WS), Some(T0 + 1_000), "B");
    let mut c = skel("c", Some(WS), Some(T0 + 2_000), "C");
    a.stored_links.metadata_parent = Some("c".into());
    b.stored_links.history_item_parent = Some("a".into());
    c.stored_links.history_item_parent = Some("b".into());
    let (r, m) = run(vec![c, b, a], true);
    // The weakest link (task_metadata) goes; a becomes the root.
    assert_eq!(parent_of(&r, "a"), None);
    assert_eq!(parent_of(&r, "b"), Some("a"));
    assert_eq!(parent_of(&r, "c"), Some("b"));
    assert_eq!(m.cycles_broken, 1);
    let issue = m.issues.iter().find(|i| i.kind == "cycle");
    assert_eq!(issue.map(|i| i.task_id.as_str()), Some("a"));
    assert_eq!(get(&r, "c").root_task_id.as_deref(), Some("a"));
    assert_eq!(m.max_depth, 2);
    // Equal sources: the earliest-created member becomes the root, whatever the input order.
    let mut x = skel("x", Some(WS), Some(T0 + 5_000), "X");
    let mut y = skel("y", Some(WS), Some(T0), "Y");
    x.stored_links.history_item_parent = Some("y".into());
    y.stored_links.history_item_parent = Some("x".into());
    let (r1, m1) = run(vec![x.clone(), y.clone()], true);
    let (mut r2, _) = run(vec![y, x], true);
    assert_eq!(parent_of(&r1, "y"), None);
    assert_eq!(parent_of(&r1, "x"), Some("y"));
    r2.reverse();
    assert_eq!(r1, r2);
    assert_eq!(m1.cycles_broken, 1);
}

#[test]
fn trap_conflicting_stored_links() {
    let p = skel("p", Some(WS), Some(T0), "P");
    let mut q = skel("q", Some(WS), Some(T0), "Q");
    q.stored_links.child_ids = vec!["c".into()];
    let mut c = skel("c", Some(WS), Some(T0 + 1_000), "C");
    c.stored_links.history_item_parent = Some("p".into());
    c.stored_links.metadata_parent = Some("q".into());
    let (r, m) = run(vec![p, q, c], true);
    assert_eq!(parent_of(&r, "c"), Some("p"));
    let ev = get(&r, "c").parent_evidence.clone();
    let Some(ev) = ev else { panic!("no evidence") };
    assert_eq!(ev.source, "history_item");
    assert_eq!(
        ev.conflicts,
        vec!["child_ids:q".to_owned(), "task_metadata:q".to_owned()]
    );
    assert!(ev.confidence < 1.0);
    assert_eq!(m.conflicts, 1);
    assert!(m
        .issues
        .iter()
        .any(|i| i.kind == "conflict" && i.candidates == vec!["p".to_owned(), "q".to_owned()]));
}

#[test]
fn stored_links_agreeing_and_child_ids() {
    let mut p = skel("p", Some(WS), Some(T0), "P");
    p.stored_links.child_ids = vec!["c".into(), "d".into()];
    let mut c = skel("c", Some(WS), Some(T0 + 1_000), "C");
    c.stored_links.history_item_parent = Some("p".into());
    let d = skel("d", Some(WS), Some(T0 + 2_000), "D");
    let mut e = skel("e", Some(WS), Some(T0 + 3_000), "E");
    e.stored_links.metadata_parent = Some("d".into());
    let (r, m) = run(vec![p, c, d, e], true);
    assert_eq!(parent_of(&r, "c"), Some("p"));
    assert_eq!(
        get(&r, "c")
            .parent_evidence
            .as_ref()
            .map(|e| e.source.as_str()),
        Some("history_item")
    );
    assert_eq!(parent_of(&r, "d"), Some("p"));
    assert_eq!(
        get(&r, "d")
            .parent_evidence
            .as_ref()
            .map(|e| e.source.as_str()),
        Some("child_ids")
    );
    assert_eq!(parent_of(&r, "e"), Some("d"));
    assert_eq!(m.links_by_source.history_item, 1);
    assert_eq!(m.links_by_source.child_ids, 1);
    assert_eq!(m.links_by_source.task_metadata, 1);
    assert_eq!(m.conflicts, 0);
    assert_eq!(m.max_depth, 2);
    assert_eq!(get(&r, "e").root_task_id.as_deref(), Some("p"));
}

#[test]
fn stored_link_claims_its_slot() {
    // c is p's stored child; the look-alike z (no stored link) must not take the same call.
    let text = "Translate the UI strings";
    let p = with_calls(
        skel("p", Some(WS), Some(T0), "root"),
        vec![call(text, Some(T0 + 1_000), None)],
    );
    let mut c = skel("c", Some(WS), Some(T0 + 3_000), text);
    c.stored_links.history_item_parent = Some("p".into());
    let z = skel("z", Some(WS), Some(T0 + 1_200), text);
    let (r, _) = run(vec![p.clone(), c.clone(), z.clone()], true);
    assert_eq!(parent_of(&r, "c"), Some("p"));
    assert_eq!(parent_of(&r, "z"), None);
    // Delegation record naming the child claims it too.
    let mut p2 = p;
    if let Some(call) = p2.child_tasks.first_mut() {
        call.child_task_id = Some("c".into());
    }
    let mut c2 = c;
    c2.stored_links = Default::default();
    let (r, _) = run(vec![p2, c2, z], true);
    assert_eq!(parent_of(&r, "c"), Some("p"));
    assert_eq!(
        get(&r, "c")
            .parent_evidence
            .as_ref()
            .map(|e| e.source.as_str()),
        Some("child_ids")
    );
    assert_eq!(parent_of(&r, "z"), None);
}

#[test]
fn an_abandoned_subtask_keeps_no_parent() {
    // Zoo Code's "Abandon subtask": the child's own history_item.json lost its parentTaskId; the
    // parent still lists it in childIds and its delegation record still names it. Neither may
    // link it, and inference (the same instruction, in the parent's window) must not either.
    let text = "Migrate the invoices table to the new schema";
    let mut p = with_calls(
        skel("p", Some(WS), Some(T0), "root"),
        vec![
            call(text, Some(T0 + 1_000), None),
            call("Write the migration as two steps", Some(T0 + 60_000), None),
        ],
    );
    p.stored_links.child_ids = vec!["b".into(), "d".into()];
    if let Some(c) = p.child_tasks.first_mut() {
        c.child_task_id = Some("b".into());
    }
    let mut b = skel("b", Some(WS), Some(T0 + 1_500), text);
    b.files.history_item = true;
    b.stored_links.status = Some("interrupted".into());
    // A look-alike created in the same window must not take the abandoned child's call.
    let z = skel("z", Some(WS), Some(T0 + 1_800), text);
    let mut d = skel(
        "d",
        Some(WS),
        Some(T0 + 61_000),
        "Write the migration as two steps",
    );
    d.files.history_item = true;
    d.stored_links.history_item_parent = Some("p".into());
    let (r, m) = run(vec![p.clone(), b.clone(), z.clone(), d.clone()], true);
    assert_eq!(parent_of(&r, "b"), None);
    assert_eq!(parent_of(&r, "z"), None);
    assert_eq!(parent_of(&r, "d"), Some("p"));
    assert_eq!(m.abandoned, 1);
    let issue = m
        .issues
        .iter()
        .find(|i| i.kind == "abandoned")
        .expect("an abandoned issue");
    assert_eq!(issue.task_id, "b");
    assert_eq!(issue.candidates, vec!["p".to_owned()]);
    assert!(issue.detail.contains("abandoned by p"), "{}", issue.detail);
    assert_eq!(m.roots, 3);
    let tree = get_task_tree(&r, &TreeOptions::default());
    let top: Vec<&str> = tree.iter().map(|n| n.task_id.as_str()).collect();
    assert_eq!(top, vec!["p", "b", "z"]);

    // Listed in childIds only (no delegation record): the same.
    let mut p_ids = p.clone();
    if let Some(c) = p_ids.child_tasks.first_mut() {
        c.child_task_id = None;
    }
    let (r, m) = run(vec![p_ids, b.clone(), z.clone(), d.clone()], true);
    assert_eq!((parent_of(&r, "b"), parent_of(&r, "z")), (None, None));
    assert_eq!(m.abandoned, 1);

    // Without its own history_item.json (a v3.50 child whose file is missing), the parent's
    // records still link it: only the child's own record can say "no parent".
    let mut b2 = b.clone();
    b2.files.history_item = false;
    let (r, m) = run(vec![p.clone(), b2, z.clone(), d.clone()], true);
    assert_eq!(parent_of(&r, "b"), Some("p"));
    assert_eq!(m.abandoned, 0);

    // With stored links ignored, the rule does not apply (every link is inferred).
    let (r, m) = run(vec![p, b, z, d], false);
    assert_eq!(m.abandoned, 0);
    assert!(parent_of(&r, "b").is_some() || parent_of(&r, "z").is_some());
}

#[test]
fn use_stored_links_false_ignores_them() {
    let mut c = skel("c", Some(WS), Some(T0 + 1_000), "C");
    c.stored_links.history_item_parent = Some("p".into());
    c.parent_task_id = Some("p".into());
    let p = skel("p", Some(WS), Some(T0), "P");
    let (r, m) = run(vec![p, c], false);
    assert_eq!(parent_of(&r, "c"), None);
    assert_eq!(m.roots, 2);
}

#[test]
fn deterministic_whatever_the_input_order() {
    let g = gen::generate(300, 7);
    let mut a = g.skeletons.clone();
    gen::strip_links(&mut a);
    let mut b = a.clone();
    b.reverse();
    let (mut ra, mut ma) = run(a, false);
    let (mut rb, mut mb) = run(b, false);
    ra.sort_by(|x, y| x.task_id.cmp(&y.task_id));
    rb.sort_by(|x, y| x.task_id.cmp(&y.task_id));
    assert_eq!(ra, rb);
    ma.elapsed_ms = 0.0;
    mb.elapsed_ms = 0.0;
    assert_eq!(ma, mb);
}

#[test]
fn workspace_filter_keeps_one_workspace() {
    let p = with_calls(
        skel("p", Some("C:\\a"), Some(T0), "root"),
        vec![call("Do the thing now", Some(T0 + 1), None)],
    );
    let c = skel("c", Some("c:/A/"), Some(T0 + 500), "Do the thing now");
    let o = skel("o", Some("c:/b"), Some(T0), "other");
    let (r, m) = reconstruct_hierarchy(
        vec![p, c, o],
        &HierarchyOptions {
            workspace_filter: Some("C:/a".into()),
            use_stored_links: true,
        },
    );
    let ids: Vec<&str> = r.iter().map(|s| s.task_id.as_str()).collect();
    assert_eq!(ids, vec!["p", "c"], "input order kept");
    assert_eq!(parent_of(&r, "c"), Some("p"));
    assert_eq!(m.tasks, 2);
}

#[test]
fn tree_and_walks() {
    let mut p = skel("p", Some(WS), Some(T0), "P");
    p.stored_links.child_ids = vec!["b".into(), "a".into()];
    let a = skel("a", Some(WS), Some(T0 + 1_000), "A");
    let b = skel("b", Some(WS), Some(T0 + 2_000), "B");
    let mut g = skel("g", Some(WS), Some(T0 + 3_000), "G");
    g.stored_links.history_item_parent = Some("b".into());
    let lone = skel("lone", Some("c:/elsewhere"), Some(T0 - 1), "L");
    let (r, _) = run(vec![g, b, a, p, lone], true);

    let tree = get_task_tree(&r, &TreeOptions::default());
    let tops: Vec<&str> = tree.iter().map(|n| n.task_id.as_str()).collect();
    assert_eq!(tops, vec!["lone", "p"]);
    let p_node = &tree[1];
    let kids: Vec<&str> = p_node.children.iter().map(|n| n.task_id.as_str()).collect();
    assert_eq!(kids, vec!["a", "b"]);
    assert_eq!(p_node.children[1].children[0].task_id, "g");
    assert_eq!(p_node.children[1].children[0].depth, 2);

    let sub = get_task_tree(
        &r,
        &TreeOptions {
            root_id: Some("b".into()),
            ..Default::default()
        },
    );
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0].children.len(), 1);

    let shallow = get_task_tree(
        &r,
        &TreeOptions {
            max_depth: Some(1),
            workspace: Some("d:/dev/proj".into()),
            ..Default::default()
        },
    );
    assert_eq!(shallow.len(), 1);
    assert!(shallow[0].children.iter().all(|c| c.children.is_empty()));

    assert_eq!(ancestors(&r, "g"), vec!["b".to_owned(), "p".to_owned()]);
    assert!(ancestors(&r, "p").is_empty());
    assert_eq!(
        descendants(&r, "p"),
        vec!["a".to_owned(), "b".to_owned(), "g".to_owned()]
    );
    assert!(descendants(&r, "nope").is_empty());
}

#[test]
fn walks_survive_cycles_in_raw_skeletons() {
    let mut x = skel("x", Some(WS), Some(T0), "X");
    let mut y = skel("y", Some(WS), Some(T0), "Y");
    x.parent_task_id = Some("y".into());
    y.parent_task_id = Some("x".into());
    let raw = vec![x, y];
    assert_eq!(ancestors(&raw, "x"), vec!["y".to_owned()]);
    assert_eq!(descendants(&raw, "x"), vec!["y".to_owned()]);
    assert!(get_task_tree(&raw, &TreeOptions::default()).is_empty());
}

#[test]
fn deep_chain_does_not_overflow() {
    let n = 20_000;
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let mut s = skel(&format!("t{i:06}"), Some(WS), Some(T0 + i as i64), "x");
        if i > 0 {
            s.stored_links.history_item_parent = Some(format!("t{:06}", i - 1));
        }
        v.push(s);
    }
    let (r, m) = run(v, true);
    assert_eq!(m.max_depth, (n - 1) as u32);
    let tree = get_task_tree(&r, &TreeOptions::default());
    assert_eq!(tree.len(), 1);
    assert_eq!(ancestors(&r, "t019999").len(), n - 1);
    assert_eq!(descendants(&r, "t000000").len(), n - 1);
    // Dropping a deep tree recursively is the caller's business; keep it off this thread's stack.
    let mut stack = tree;
    while let Some(mut node) = stack.pop() {
        stack.append(&mut node.children);
    }
}

#[test]
fn metrics_serialise_in_camel_case() {
    let (_, m) = run(Vec::new(), true);
    let v = serde_json::to_value(&m).unwrap_or_default();
    for k in [
        "tasks",
        "linksBySource",
        "roots",
        "orphans",
        "ambiguous",
        "cyclesBroken",
        "conflicts",
        "maxDepth",
        "elapsedMs",
        "issues",
    ] {
        assert!(v.get(k).is_some(), "{k}");
    }
    let l = v.get("linksBySource").cloned().unwrap_or_default();
    for k in [
        "historyItem",
        "childIds",
        "taskMetadata",
        "instructionPrefix",
    ] {
        assert!(l.get(k).is_some(), "{k}");
    }
}
