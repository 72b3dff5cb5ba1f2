//! Conversations on the bundled orchestrator trees (links stored in history items and
//! `childIds`, and links inferred from `new_task` messages), Cline's per-request model and mode,
//! cancelled and failed requests, file operations, and the incremental index.

mod common;

use common::{close, open, stores_root};
use roo_store::task_store::TaskStore;
use roo_usage::report::{CostMode, Group, ReportOptions};
use roo_usage::UsageIndex;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn report(store: &TaskStore, index: &mut UsageIndex, group: Group) -> roo_usage::UsageReport {
    let o = ReportOptions {
        group,
        cost_mode: CostMode::Recorded,
        ..ReportOptions::default()
    };
    index.report(store, &o).expect("report")
}

/// The hand-derived total cost of one task (its `expected/<id>.json`).
fn expected_cost(store: &str, id: &str) -> f64 {
    let p = stores_root()
        .join(store)
        .join("expected")
        .join(format!("{id}.json"));
    let v: Value = serde_json::from_slice(&std::fs::read(p).expect("expected")).expect("json");
    v["totalCost"].as_f64().unwrap_or(0.0)
}

#[test]
fn a_conversation_is_the_sum_of_its_tasks_for_stored_and_inferred_links() {
    // (store, root, every task of the tree): stored links (history items, childIds) and links
    // inferred from the parent's new_task messages (no link stored before v3.26.5 / v3.49).
    let trees = [
        (
            "history-item-v3.50",
            "019cd6ce-1c9e-7be9-a324-5dcc53ca83b6",
            vec![
                "019cd6ce-1c9e-7be9-a324-5dcc53ca83b6",
                "019cd6ce-5036-7f70-a11e-7f86d559ebe2",
                "019cd6cf-3402-7119-95b7-f7d5c886c374",
                "019cd6d0-30bf-7f5d-9857-aacfd56b7e5c",
            ],
        ),
        (
            "stack-era-v3.20",
            "adc9651c-1dbf-4267-850f-beabf45e2568",
            vec![
                "adc9651c-1dbf-4267-850f-beabf45e2568",
                "087ad417-9168-4209-8cd6-4f60a86fcd4f",
                "d9a65d7d-6db9-422f-8608-12ab47219197",
            ],
        ),
        (
            "native-tools-v3.45",
            "019bffa6-9e68-7cb6-8ef5-2d29a6c2b475",
            vec![
                "019bffa6-9e68-7cb6-8ef5-2d29a6c2b475",
                "019bffa7-482c-780b-8d44-dffdad2d9716",
            ],
        ),
        (
            "v2-wrapper",
            "019dfdf9-889b-75bc-935a-5ebf9745501c",
            vec![
                "019dfdf9-889b-75bc-935a-5ebf9745501c",
                "019dfdf9-e25e-7480-8a12-6a383dbbc506",
            ],
        ),
    ];
    let mut links = BTreeSet::new();
    for (name, root, members) in trees {
        let store = open(&stores_root().join(name).join("tasks"));
        let mut index = UsageIndex::new();
        let r = report(&store, &mut index, Group::Conversations);
        let row = r
            .rows
            .iter()
            .find(|r| r.key == root)
            .expect("the conversation");
        let detail = row.conversation.as_ref().expect("detail");
        let ids: BTreeSet<&str> = detail.tasks.iter().map(|t| t.task_id.as_str()).collect();
        assert_eq!(ids, members.iter().copied().collect(), "{name}");
        // Tree order: the root first, every task after its parent.
        assert_eq!(detail.tasks[0].task_id, root);
        for (i, t) in detail.tasks.iter().enumerate() {
            if let Some(p) = &t.parent_task_id {
                let at = detail.tasks.iter().position(|x| &x.task_id == p);
                assert!(
                    at.is_some_and(|a| a < i),
                    "{name}: {} before its parent",
                    t.task_id
                );
            }
        }
        // The conversation's total is its tasks' sum, and the hand-derived facts' sum.
        let sum: f64 = detail.tasks.iter().map(|t| t.sums.cost).sum();
        assert!(close(row.sums.cost, sum), "{name}");
        let want: f64 = members.iter().map(|id| expected_cost(name, id)).sum();
        assert!(
            close(row.sums.cost, want),
            "{name}: {} != {want}",
            row.sums.cost
        );
        let tokens: f64 = detail.tasks.iter().map(|t| t.sums.tokens_in).sum();
        assert!(close(row.sums.tokens_in, tokens), "{name}");
        // Shares of tasks and of modes each make the whole.
        let shares: f64 = detail.tasks.iter().map(|t| t.share).sum();
        let mode_shares: f64 = detail.modes.iter().map(|m| m.share).sum();
        assert!(
            close(shares, 1.0) && close(mode_shares, 1.0),
            "{name}: {shares} {mode_shares}"
        );
        assert!(
            detail.modes.len() >= 2,
            "{name}: an orchestrator and its workers"
        );
        links.extend(detail.tasks.iter().filter_map(|t| t.link.clone()));
        // Every conversation row together is the whole store.
        let all: f64 = r.rows.iter().map(|r| r.sums.cost).sum();
        assert!(close(all, r.totals.sums.cost), "{name}");
    }
    assert!(
        links.contains("instruction_prefix")
            && links.contains("history_item")
            && links.contains("child_ids"),
        "both stored and inferred links: {links:?}"
    );
}

#[test]
fn cline_requests_take_model_provider_and_mode_from_model_usage() {
    let store = open(&stores_root().join("cline-v3.4x/tasks"));
    let mut index = UsageIndex::new();
    report(&store, &mut index, Group::Modes);
    let usage = index.task("1771234567890").expect("indexed");
    let modes: Vec<&str> = usage
        .records
        .iter()
        .filter_map(|r| r.mode.as_deref())
        .collect();
    assert_eq!(modes, ["plan", "act", "act", "act"]);
    assert!(usage
        .records
        .iter()
        .all(|r| r.model.as_deref() == Some("claude-sonnet-4-5-20250929")
            && r.provider.as_deref() == Some("anthropic")));
    // The task whose UI record was lost: its requests are its assistant messages, with no usage.
    let lost = index.task("1771300000000").expect("indexed");
    assert!(lost.unrecorded > 0);
    assert!(lost
        .records
        .iter()
        .all(|r| r.cost.is_none() && r.tokens_in == 0.0));
    let r = report(&store, &mut index, Group::Tasks);
    assert!(r
        .no_recorded_cost
        .iter()
        .any(|t| t.task_id == "1771300000000"));
    assert!(!r
        .no_recorded_cost
        .iter()
        .any(|t| t.task_id == "1771234567890"));
}

fn say(ts: i64, say: &str, text: &str) -> Value {
    serde_json::json!({"ts": ts, "type": "say", "say": say, "text": text})
}

fn write_task(tasks: &Path, id: &str, msgs: &[Value]) {
    let dir = tasks.join(id);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let text = serde_json::to_string(msgs).expect("json");
    std::fs::write(dir.join("ui_messages.json"), text).expect("write");
}

#[test]
fn cancelled_and_failed_requests_file_operations_and_incremental_sync() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("tasks");
    let t0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
    let req = |tin: u32, cost: f64, extra: &str| {
        format!(
            r#"{{"apiProtocol":"anthropic","tokensIn":{tin},"tokensOut":10,"cost":{cost}{extra}}}"#
        )
    };
    let new_file = r#"{"tool":"newFileCreated","path":"a.txt","content":"one\ntwo\nthree"}"#;
    let diff = r#"{"tool":"appliedDiff","path":"b.txt","diff":"<<<<<<< SEARCH\nold\n=======\nnew 1\nnew 2\n>>>>>>> REPLACE"}"#;
    let read = r#"{"tool":"readFile","path":"c.txt"}"#;
    write_task(
        &tasks,
        "task-a",
        &[
            say(t0, "text", "Write two files"),
            say(t0 + 1, "api_req_started", &req(100, 0.5, "")),
            say(t0 + 2, "tool", new_file),
            serde_json::json!({"ts": t0 + 3, "type": "ask", "ask": "tool", "text": diff}),
            say(
                t0 + 4,
                "api_req_started",
                &req(50, 0.25, r#","cancelReason":"user_cancelled""#),
            ),
            say(
                t0 + 5,
                "api_req_started",
                &req(20, 0.125, r#","cancelReason":"streaming_failed""#),
            ),
            say(t0 + 86_400_000, "tool", read),
        ],
    );
    let mut store = open(&tasks);
    let mut index = UsageIndex::new();
    let r = report(&store, &mut index, Group::Daily);
    assert_eq!(r.sync.read, 1);
    assert_eq!(r.rows.len(), 2);
    let day1 = &r.rows[0];
    assert_eq!(day1.key, "2026-01-01");
    assert_eq!(
        (day1.sums.requests, day1.sums.cancelled, day1.sums.failed),
        (3, 1, 1)
    );
    // Counted with what they recorded, as the extension's totals count them.
    assert!(close(day1.sums.cost, 0.875));
    assert_eq!(
        (day1.files.creates, day1.files.edits, day1.files.lines),
        (1, 1, 5)
    );
    assert_eq!((r.rows[1].files.reads, r.rows[1].sums.requests), (1, 0));

    // A second task appears and the first is unchanged: only the new one is read.
    write_task(
        &tasks,
        "task-b",
        &[
            say(t0, "text", "Another"),
            say(t0 + 9, "api_req_started", &req(7, 1.0, "")),
        ],
    );
    store.refresh().expect("refresh");
    let r = report(&store, &mut index, Group::Daily);
    assert_eq!((r.sync.read, r.sync.kept), (1, 1));
    assert!(close(r.totals.sums.cost, 1.875));
    // Nothing changed: nothing read.
    store.refresh().expect("refresh");
    let again = report(&store, &mut index, Group::Daily);
    assert_eq!((again.sync.read, again.sync.kept), (0, 2));
    // A task removed leaves the index.
    std::fs::remove_dir_all(tasks.join("task-b")).expect("rm");
    store.refresh().expect("refresh");
    let r = report(&store, &mut index, Group::Daily);
    assert_eq!(r.sync.dropped, 1);
    assert!(close(r.totals.sums.cost, 0.875));
}
