//! Tests of the trees (`tree.rs`).
use super::*;
use crate::skeleton::{ApiTotalsOut, DatesFrom, SkeletonMetadata, StoredLinks, TaskFiles};

const T0: i64 = 1_750_000_000_000;

/// A linked header: `parent` as the hierarchy left it, created at `created` (none: no date).
fn task(id: &str, parent: Option<&str>, created: Option<i64>, ws: &str) -> ConversationSkeleton {
    ConversationSkeleton {
        task_id: id.to_owned(),
        parent_task_id: parent.map(str::to_owned),
        sequence: None,
        metadata: SkeletonMetadata {
            title: Some(format!("task {id}")),
            created_at: roo_js::iso_from_ms(created.unwrap_or(0)),
            last_activity: roo_js::iso_from_ms(created.unwrap_or(0) + 60_000),
            mode: Some("code".into()),
            message_count: 7,
            action_count: 3,
            total_size: 0,
            workspace: Some(ws.to_owned()),
            data_source: format!("/tasks/{id}"),
            source: "roo".into(),
            dates_from: DatesFrom::UiMessages,
        },
        child_task_instruction_prefixes: Vec::new(),
        is_completed: id.starts_with('c'),
        truncated_instruction: None,
        instruction: None,
        child_tasks: Vec::new(),
        stored_links: StoredLinks::default(),
        parent_evidence: None,
        root_task_id: None,
        api_totals: ApiTotalsOut::default(),
        files: TaskFiles::default(),
        created_at_ms: created,
        last_activity_ms: created.map(|c| c + 60_000),
        diagnostics: Vec::new(),
    }
}

fn ids(nodes: &[TaskTreeNode]) -> Vec<&str> {
    nodes.iter().map(|n| n.task_id.as_str()).collect()
}

#[test]
fn nodes_carry_dates_counts_completion_and_parent() {
    let tasks = vec![
        task("root", None, Some(T0), "/w"),
        task("child", Some("root"), Some(T0 + 1_000), "/w"),
    ];
    let tree = get_task_tree(&tasks, &TreeOptions::default());
    let root = &tree[0];
    assert_eq!(
        root.last_activity.as_deref(),
        Some("2025-06-15T15:07:40.000Z")
    );
    assert_eq!((root.message_count, root.action_count), (Some(7), Some(3)));
    assert_eq!(root.is_completed, Some(false));
    assert_eq!(
        (root.parent_task_id.as_deref(), root.parent_missing),
        (None, None)
    );
    let child = &root.children[0];
    assert_eq!(child.is_completed, Some(true));
    assert_eq!(child.parent_task_id.as_deref(), Some("root"));
    assert_eq!(child.parent_missing, None);
    let json = serde_json::to_string(child).unwrap_or_default();
    assert!(
        json.contains(r#""depth":1,"children":[],"lastActivity":"2025-06-15T15:07:41.000Z","messageCount":7,"actionCount":3,"isCompleted":true,"parentTaskId":"root"}"#),
        "{json}"
    );
}

#[test]
fn a_node_says_how_it_was_linked_without_the_matched_text() {
    let mut child = task("child", Some("root"), Some(T0 + 1_000), "/w");
    child.parent_evidence = Some(ParentEvidence {
        source: "instruction_prefix".into(),
        confidence: 0.9,
        matched_prefix: Some("write the parser tests".into()),
        new_task_ts: Some(T0 + 500),
        match_kind: Some("exact".into()),
        gap_ms: Some(500),
        conflicts: vec!["other".into()],
    });
    let tasks = vec![task("root", None, Some(T0), "/w"), child];
    let want = serde_json::json!({
        "source": "instruction_prefix", "confidence": 0.9, "newTaskTs": T0 + 500,
        "matchKind": "exact", "gapMs": 500, "conflicts": ["other"],
    });
    let owned =
        serde_json::to_value(get_task_tree(&tasks, &TreeOptions::default())).expect("serialises");
    let view = serde_json::to_value(get_task_tree_view(&tasks, &TreeOptions::default()))
        .expect("serialises");
    assert_eq!(owned[0]["children"][0]["parentEvidence"], want);
    assert_eq!(view, owned);
    // The header keeps the text.
    let header = serde_json::to_value(&tasks[1]).expect("serialises");
    assert_eq!(
        header["parentEvidence"]["matchedPrefix"],
        "write the parser tests"
    );
}

/// [`super::super::tree_json`] in `parts` parts.
fn written(tasks: &[ConversationSkeleton], o: &TreeOptions, parts: usize) -> String {
    let written = super::super::tree_json(tasks, o, JsonText::Utf8, parts).expect("written");
    String::from_utf8(written).expect("UTF-8")
}

#[test]
fn a_written_tree_is_the_owned_tree_with_cycles_missing_parents_and_any_text() {
    let mut tasks = vec![
        task("a", None, Some(T0), "/w"),
        task("a1", Some("a"), Some(T0 + 1), "/w"),
        task("a2", Some("a"), Some(T0 + 2), "/w"),
        task("a11", Some("a1"), Some(T0 + 3), "/w"),
        task("orphan", Some("gone"), Some(T0 + 4), "/w"),
        task("x", Some("y"), Some(T0 + 5), "/v"),
        task("y", Some("x"), Some(T0 + 6), "/v"),
        task("b", None, None, "/v"),
    ];
    tasks[1].metadata.title = Some("résumé \"quoted\" 日本語 🚀\n\u{1}".into());
    let by_depth = TreeOptions {
        max_depth: Some(1),
        ..TreeOptions::default()
    };
    let rooted = TreeOptions {
        root_id: Some("a1".into()),
        ..TreeOptions::default()
    };
    tasks[2].metadata.title = Some("ÿ½ \u{7f}\u{1f}\t\r\u{8}\u{c}/€".into());
    for o in [TreeOptions::default(), by_depth, rooted] {
        let owned = serde_json::to_string(&get_task_tree(&tasks, &o)).expect("serialises");
        for parts in [1, 2, 5, 50] {
            assert_eq!(written(&tasks, &o, parts), owned, "{o:?} {parts}");
        }
        let latin1 = roo_js::to_latin1_json(&get_task_tree(&tasks, &o)).expect("serialises");
        let written = super::super::tree_json(&tasks, &o, JsonText::Latin1, 3);
        assert_eq!(written.expect("written"), latin1, "{o:?}");
    }
    // A workspace with no task: one empty array.
    let none = TreeOptions {
        workspace: Some("/nowhere".into()),
        ..TreeOptions::default()
    };
    assert_eq!(written(&tasks, &none, 4), "[]");
}

#[test]
fn a_tree_fed_run_by_run_is_the_tree_written_whole() {
    // 40 tasks, 8 of them with children, in several runs.
    let mut tasks = Vec::new();
    for i in 0..40 {
        let parent = (i % 5 != 0).then(|| format!("t{:02}", i - i % 5));
        let mut t = task(&format!("t{i:02}"), parent.as_deref(), Some(T0 + i), "/w");
        t.metadata.title = Some(format!("task {i} \"é\" 日本"));
        tasks.push(t);
    }
    for parts in [1, 3, 7, 64] {
        let mut fed: Vec<Vec<u8>> = Vec::new();
        let o = TreeOptions::default();
        let text =
            super::super::TreeText::new_fed(&tasks, &o, JsonText::Latin1, parts, &mut |run| {
                fed.push(run.to_vec())
            })
            .expect("written");
        let whole = super::super::tree_json(&tasks, &o, JsonText::Latin1, 1).expect("written");
        assert_eq!(text.json().as_slice(), whole.as_slice(), "{parts}");
        // One text per run: as many runs as asked for, at most, and several when asked.
        assert!(
            fed.len() <= parts && (fed.len() > 1) == (parts > 1),
            "{}",
            fed.len()
        );
        // Each fed text is an array; their elements, in order, are the whole tree's.
        let arrays: Vec<serde_json::Value> = (fed.iter())
            .map(|t| t.iter().map(|&b| char::from(b)).collect::<String>())
            .map(|t| serde_json::from_str(&t).expect("an array"))
            .collect();
        let joined: Vec<serde_json::Value> = (arrays.into_iter())
            .flat_map(|a| a.as_array().cloned().unwrap_or_default())
            .collect();
        let owned = serde_json::to_value(get_task_tree(&tasks, &o)).expect("serialises");
        assert_eq!(serde_json::Value::Array(joined), owned, "{parts}");
        // From a thread of a pool of one (where waiting for the pool would wait for itself).
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build();
        let mut again = 0;
        let text = one.expect("a pool").install(|| {
            super::super::TreeText::new_fed(&tasks, &o, JsonText::Latin1, parts, &mut |_| {
                again += 1
            })
        });
        assert_eq!(text.expect("written").json().as_slice(), whole.as_slice());
        assert_eq!(again, fed.len());
    }
}

#[test]
fn sorting_by_keys_is_sorting_by_the_order() {
    // Dates alike in their first 16 bytes or shorter, a NUL, no date, the extreme times.
    let texts = [
        "2025-06-15T15:07:41.000Z",
        "2025-06-15T15:07:41.001Z",
        "2025-06-15T15:07",
        "2025-06-15T15:0",
        "2025-06-15T15:07\0",
        "",
        "2025-06-15T15:07:41.000Z",
        "9",
        "10",
    ];
    let times = [
        Some(T0),
        Some(T0 + 1),
        None,
        Some(i64::MAX),
        Some(i64::MIN),
        Some(-1),
        None,
    ];
    let tasks: Vec<ConversationSkeleton> = (0..texts.len() * times.len())
        .map(|i| {
            let mut t = task(&format!("t{:02}", (i * 5) % 63), None, None, "/w");
            t.metadata.created_at = texts[i % texts.len()].to_owned();
            t.created_at_ms = times[i % times.len()];
            t
        })
        .collect();
    for order in [SiblingOrder::CreatedAtText, SiblingOrder::CreatedMs] {
        let forest = Forest::new(&tasks, None, order);
        let mut by_keys: Vec<usize> = (0..forest.items.len()).rev().collect();
        forest.sort(&mut by_keys);
        let mut by_order = by_keys.clone();
        by_order.sort_by(|&a, &b| order.compare(forest.items[a], forest.items[b]));
        assert_eq!(by_keys, by_order, "{order:?}");
    }
}

#[test]
fn a_written_tree_of_any_depth_needs_no_recursion() {
    // A chain deeper than serialising nested nodes could go on a thread's stack.
    let n = 200_000;
    let tasks: Vec<ConversationSkeleton> = (0..n)
        .map(|i| {
            let parent = (i > 0).then(|| format!("t{:06}", i - 1));
            task(&format!("t{i:06}"), parent.as_deref(), Some(T0 + i), "/w")
        })
        .collect();
    let text = written(&tasks, &TreeOptions::default(), 4);
    assert_eq!(text.matches("\"taskId\"").count(), n as usize);
    assert!(text.contains(r#""depth":199999,"children":[]"#));
    assert!(text.starts_with(r#"[{"taskId":"t000000""#));
}

#[test]
fn several_trees_at_once_are_the_trees_of_each_root() {
    let tasks = vec![
        task("a", None, Some(T0), "/w"),
        task("a1", Some("a"), Some(T0 + 1), "/w"),
        task("a11", Some("a1"), Some(T0 + 2), "/w"),
        task("b", None, Some(T0 + 3), "/v"),
        task("orphan", Some("gone"), Some(T0 + 4), "/w"),
    ];
    let json = |v: &TaskTreeView<'_>| serde_json::to_string(v).unwrap_or_default();
    let wanted = ["b", "nope", "orphan", "a", "a1"].map(String::from);
    for depth in [None, Some(0), Some(1)] {
        let many = get_task_trees_view(&tasks, &wanted, depth);
        // In the order given, an unknown id left out.
        let expected: Vec<String> = ["b", "orphan", "a", "a1"]
            .iter()
            .map(|id| {
                let one = get_task_tree_view(
                    &tasks,
                    &TreeOptions {
                        root_id: Some((*id).to_owned()),
                        max_depth: depth,
                        ..TreeOptions::default()
                    },
                );
                assert_eq!(one.len(), 1, "{id}");
                one.first().map(json).unwrap_or_default()
            })
            .collect();
        let got: Vec<String> = many.iter().map(json).collect();
        assert_eq!(got, expected, "depth {depth:?}");
    }
}

#[test]
fn a_top_node_whose_parent_is_not_there_says_so() {
    let tasks = vec![
        task("orphan", Some("gone"), Some(T0), "/w"),
        task("elsewhere", None, Some(T0), "/other"),
        task("moved", Some("elsewhere"), Some(T0 + 1), "/w"),
        task("kid", Some("orphan"), Some(T0 + 2), "/w"),
    ];
    let all = get_task_tree(&tasks, &TreeOptions::default());
    let orphan = all.iter().find(|n| n.task_id == "orphan");
    assert_eq!(orphan.and_then(|n| n.parent_missing), Some(true));
    assert_eq!(orphan.map(|n| n.children[0].parent_missing), Some(None));
    // A parent left out by the workspace filter is still in the store.
    let w = get_task_tree(
        &tasks,
        &TreeOptions {
            workspace: Some("/w".into()),
            ..TreeOptions::default()
        },
    );
    assert_eq!(ids(&w), vec!["orphan", "moved"]);
    assert_eq!(w[0].parent_missing, Some(true));
    assert_eq!(w[1].parent_missing, None);
    assert_eq!(w[1].parent_task_id.as_deref(), Some("elsewhere"));
    // The subtree of a task: its top node is judged the same way.
    let sub = get_task_tree(
        &tasks,
        &TreeOptions {
            root_id: Some("kid".into()),
            ..TreeOptions::default()
        },
    );
    assert_eq!(sub[0].parent_missing, None);
    let view = serde_json::to_string(&get_task_tree_view(&tasks, &TreeOptions::default()));
    let owned = serde_json::to_string(&all);
    assert_eq!(view.ok(), owned.ok());
}

#[test]
fn trees_order_by_creation_text_then_id_and_walks_keep_dateless_tasks_last() {
    let tasks = vec![
        task("p", None, Some(T0), "/w"),
        task("b", Some("p"), Some(T0 + 5), "/w"),
        task("a", Some("p"), Some(T0 + 5), "/w"),
        task("undated", Some("p"), None, "/w"),
        task("early", Some("p"), Some(T0 + 1), "/w"),
        task("r2", None, None, "/w"),
    ];
    let tree = get_task_tree(&tasks, &TreeOptions::default());
    assert_eq!(ids(&tree), vec!["r2", "p"]);
    assert_eq!(ids(&tree[1].children), vec!["undated", "early", "a", "b"]);
    assert_eq!(descendants(&tasks, "p"), vec!["early", "a", "b", "undated"]);
}
