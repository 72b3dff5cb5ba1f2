//! What a report says besides requests and how its rows are laid out: the person's messages,
//! conversations, tool calls and commands per day; columns that add up; years; the order and the
//! last periods; hosts; and the guard against a `history_item.json` whose totals disagree with
//! the task's own request records.

mod common;

use common::{close, fixture_stores, open, open_all};
use roo_usage::report::{CostMode, Group, Order, ReportOptions, UsageRow};
use roo_usage::zone::Zone;
use roo_usage::UsageIndex;
use serde_json::json;
use std::path::{Path, PathBuf};

const DAY: i64 = 86_400_000;
/// 2026-03-02 00:00 UTC, a Monday.
const T0: i64 = 1_772_409_600_000;

fn opts(group: Group) -> ReportOptions {
    ReportOptions {
        group,
        cost_mode: CostMode::Recorded,
        ..ReportOptions::default()
    }
}

fn req(tokens_in: u64, cache_reads: u64, cost: f64) -> String {
    json!({"apiProtocol": "openai", "tokensIn": tokens_in, "tokensOut": 10, "cacheWrites": 0, "cacheReads": cache_reads, "cost": cost}).to_string()
}

fn write_ui(tasks: &Path, id: &str, msgs: serde_json::Value) -> PathBuf {
    let dir = tasks.join(id);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("ui_messages.json"), msgs.to_string()).expect("write");
    dir
}

/// A conversation over two days: the root (day 0: its opening message, a request, a tool call, a
/// command, an answer of the person; day 1: a request and feedback) and a subtask created on day
/// 1 (its opening message is the root's, not the person's).
fn conversation(tasks: &Path) {
    let tool = json!({"tool": "readFile", "path": "src/a.rs"}).to_string();
    let root = write_ui(
        tasks,
        "019d1111-0000-7000-8000-000000000001",
        json!([
            {"ts": T0 + 3_600_000, "type": "say", "say": "text", "text": "Make the build faster"},
            {"ts": T0 + 3_601_000, "type": "say", "say": "api_req_started", "text": req(1000, 600, 0.01)},
            {"ts": T0 + 3_602_000, "type": "ask", "ask": "tool", "text": tool},
            {"ts": T0 + 3_603_000, "type": "ask", "ask": "command", "text": "cargo build"},
            {"ts": T0 + 3_604_000, "type": "say", "say": "user_feedback", "text": "use sccache"},
            {"ts": T0 + DAY + 60_000, "type": "say", "say": "api_req_started", "text": req(2000, 1500, 0.02)},
            {"ts": T0 + DAY + 61_000, "type": "say", "say": "user_feedback_diff", "text": "{}"},
        ]),
    );
    std::fs::write(
        root.join("history_item.json"),
        json!({"id": "019d1111-0000-7000-8000-000000000001", "ts": T0 + DAY + 61_000, "task": "Make the build faster", "tokensIn": 3000, "tokensOut": 20, "totalCost": 0.03}).to_string(),
    )
    .expect("write");
    let child = write_ui(
        tasks,
        "019d1111-0000-7000-8000-000000000002",
        json!([
            {"ts": T0 + DAY + 120_000, "type": "say", "say": "text", "text": "Add sccache to the CI"},
            {"ts": T0 + DAY + 121_000, "type": "say", "say": "api_req_started", "text": req(500, 0, 0.005)},
        ]),
    );
    // The child's history item states estimated totals: more tokens and cost than its requests.
    std::fs::write(
        child.join("history_item.json"),
        json!({"id": "019d1111-0000-7000-8000-000000000002", "ts": T0 + DAY + 121_000, "task": "Add sccache to the CI", "parentTaskId": "019d1111-0000-7000-8000-000000000001", "tokensIn": 4000, "tokensOut": 10, "totalCost": 0.5}).to_string(),
    )
    .expect("write");
}

/// One handle over every bundled fixture store, read without a cache.
fn every_fixture_store() -> roo_store::task_store::TaskStore {
    let stores = fixture_stores();
    open_all(
        &stores.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
        None,
    )
}

fn row<'a>(rows: &'a [UsageRow], key: &str) -> &'a UsageRow {
    rows.iter()
        .find(|r| r.key == key)
        .unwrap_or_else(|| panic!("no row {key}"))
}

#[test]
fn messages_conversations_tool_calls_and_estimated_history_items() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("tasks");
    conversation(&tasks);
    let store = open(&tasks);
    let r = UsageIndex::new()
        .report(&store, &opts(Group::Daily))
        .expect("report");
    let (d0, d1) = (row(&r.rows, "2026-03-02"), row(&r.rows, "2026-03-03"));
    // Day 0: the root's opening message and one answer; its conversation started.
    assert_eq!(
        (
            d0.sums.requests,
            d0.activity.user_messages,
            d0.activity.conversations
        ),
        (1, 2, 1)
    );
    assert_eq!((d0.activity.tool_calls, d0.activity.commands), (2, 1));
    // Day 1: feedback of the person; the subtask's opening message is not theirs.
    assert_eq!(
        (
            d1.sums.requests,
            d1.activity.user_messages,
            d1.activity.conversations
        ),
        (2, 1, 0)
    );
    assert_eq!(r.totals.activity.user_messages, 3);
    assert_eq!(r.totals.activity.conversations, 1);
    // The records win: the child's estimated totals are named, not counted.
    assert!(close(r.totals.sums.cost, 0.035));
    assert_eq!(r.history_disagreements.len(), 1);
    let h = &r.history_disagreements[0];
    assert_eq!(h.task_id, "019d1111-0000-7000-8000-000000000002");
    assert_eq!(h.fields, ["tokensIn", "totalCost"]);
    assert_eq!(h.history.tokens_in, Some(4000.0));
    assert_eq!(h.records.tokens_in, Some(500.0));
    // OpenAI rows hold their cache reads in tokensIn: Input is the rest, and the columns add up.
    assert_eq!(r.totals.sums.tokens_in, 3500.0);
    assert_eq!(r.totals.sums.cache_reads, 2100.0);
    assert_eq!(r.totals.sums.input, 1400.0);
    assert_eq!(r.totals.sums.total_tokens, 1400.0 + 30.0 + 2100.0);
    // By mode or model, what belongs to no request is in the totals only.
    let by_model = UsageIndex::new()
        .report(&store, &opts(Group::Models))
        .expect("report");
    assert!(by_model.rows.iter().all(|r| r.activity.user_messages == 0));
    assert_eq!(by_model.totals.activity, r.totals.activity);
}

#[test]
fn every_fixture_row_adds_up_and_years_hold_their_months() {
    let store = every_fixture_store();
    let mut index = UsageIndex::new();
    let monthly = index.report(&store, &opts(Group::Monthly)).expect("report");
    for r in monthly.rows.iter().chain([&monthly.totals]) {
        let s = &r.sums;
        let parts = s.input + s.tokens_out + s.cache_writes + s.cache_reads;
        assert!(
            close(parts, s.total_tokens),
            "{}: {parts} != {}",
            r.key,
            s.total_tokens
        );
    }
    // The one fixture request whose tokensIn is below its cache tokens is counted and said.
    assert!(monthly.input_below_cache > 0);
    let yearly = index.report(&store, &opts(Group::Yearly)).expect("report");
    assert!(close(yearly.totals.sums.cost, monthly.totals.sums.cost));
    assert_eq!(
        yearly.totals.sums.total_tokens,
        monthly.totals.sums.total_tokens
    );
    assert_eq!(yearly.totals.activity, monthly.totals.activity);
    for y in &yearly.rows {
        assert_eq!(y.key.len(), 4);
        let cost: f64 = monthly
            .rows
            .iter()
            .filter(|m| m.key.starts_with(&y.key))
            .map(|m| m.sums.cost)
            .sum();
        assert!(close(cost, y.sums.cost), "{}", y.key);
    }

    // Newest first, and the last three months: their rows, and totals that are theirs.
    let desc = index
        .report(
            &store,
            &ReportOptions {
                order: Some(Order::Desc),
                ..opts(Group::Monthly)
            },
        )
        .expect("report");
    let mut keys: Vec<&str> = desc.rows.iter().map(|r| r.key.as_str()).collect();
    keys.reverse();
    assert_eq!(
        keys,
        monthly
            .rows
            .iter()
            .map(|r| r.key.as_str())
            .collect::<Vec<_>>()
    );
    let last = index
        .report(
            &store,
            &ReportOptions {
                last: Some(3),
                ..opts(Group::Monthly)
            },
        )
        .expect("report");
    let want: Vec<&UsageRow> = monthly.rows.iter().rev().take(3).rev().collect();
    assert_eq!(last.rows.iter().collect::<Vec<_>>(), want);
    let cost: f64 = want.iter().map(|r| r.sums.cost).sum();
    assert!(close(last.totals.sums.cost, cost));
    assert_eq!(last.last, Some(3));
    let err = index.report(
        &store,
        &ReportOptions {
            last: Some(3),
            ..opts(Group::Models)
        },
    );
    assert!(err.is_err());

    // One host's tasks: a part of the whole.
    let cline = index
        .report(
            &store,
            &ReportOptions {
                hosts: vec!["cline".into()],
                ..opts(Group::Monthly)
            },
        )
        .expect("report");
    assert!(cline.totals.sums.requests > 0);
    assert!(cline.totals.sums.requests < monthly.totals.sums.requests);
    let by_host = index.report(&store, &opts(Group::Hosts)).expect("report");
    let host = &row(&by_host.rows, "cline").sums;
    assert_eq!(host.total_tokens, cline.totals.sums.total_tokens);
    assert!(close(host.cost, cline.totals.sums.cost));
}

#[test]
fn model_and_mode_rows_count_the_file_operations_and_tool_calls_of_their_requests() {
    let store = every_fixture_store();
    let mut index = UsageIndex::new();
    let daily = index.report(&store, &opts(Group::Daily)).expect("report");
    assert!(daily.totals.files.reads + daily.totals.files.edits > 0);
    for group in [Group::Models, Group::Modes] {
        let r = index.report(&store, &opts(group)).expect("report");
        let files = |f: fn(&roo_usage::report::FileOps) -> u64| {
            r.rows.iter().map(|x| f(&x.files)).sum::<u64>()
        };
        // Every file operation is in the row of a request, and the rows add up to the totals.
        assert_eq!(files(|f| f.reads), daily.totals.files.reads, "{group:?}");
        assert_eq!(
            files(|f| f.writes + f.creates),
            daily.totals.files.writes + daily.totals.files.creates
        );
        assert_eq!(files(|f| f.edits), daily.totals.files.edits);
        let calls: u64 = r.rows.iter().map(|x| x.activity.tool_calls).sum();
        assert_eq!(calls, daily.totals.activity.tool_calls, "{group:?}");
        assert_eq!(r.totals.files, daily.totals.files);
        // The person's messages belong to no request.
        assert!(r.rows.iter().all(|x| x.activity.user_messages == 0));
    }
}

#[test]
fn a_workspace_is_one_row_however_its_path_was_written() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("tasks");
    // One Windows workspace written three ways, a POSIX one in two cases (two workspaces).
    for (n, ws) in [
        "c:\\dev\\notes-api",
        "C:/dev/notes-api/",
        "c:/Dev/Notes-API",
        "/home/a/Shop",
        "/home/a/shop",
    ]
    .iter()
    .enumerate()
    {
        let dir = write_ui(
            &tasks,
            &format!("019d2222-0000-7000-8000-00000000000{n}"),
            json!([
                {"ts": T0 + n as i64 * 1000, "type": "say", "say": "text", "text": "Work"},
                {"ts": T0 + n as i64 * 1000 + 1, "type": "say", "say": "api_req_started", "text": req(100, 0, 0.01)},
            ]),
        );
        std::fs::write(
            dir.join("history_item.json"),
            json!({"id": format!("019d2222-0000-7000-8000-00000000000{n}"), "ts": T0, "task": "Work", "workspace": ws}).to_string(),
        )
        .expect("write");
    }
    let store = open(&tasks);
    let r = UsageIndex::new()
        .report(&store, &opts(Group::Workspaces))
        .expect("report");
    let mut keys: Vec<(&str, u64)> = r
        .rows
        .iter()
        .map(|x| (x.key.as_str(), x.sums.requests))
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            ("/home/a/Shop", 1),
            ("/home/a/shop", 1),
            ("c:/dev/notes-api", 3)
        ]
    );
}

#[test]
fn the_local_zone_is_the_one_tz_names() {
    // The system zone is looked up once per process (the CLI suite runs two values of TZ).
    std::env::set_var("TZ", "Asia/Tokyo");
    let tokyo = Zone::local();
    assert_eq!(tokyo.name(), "Asia/Tokyo");
    // 2026-03-02 20:00 UTC is already the 3rd in Tokyo.
    let t = T0 + 20 * 3_600_000;
    assert_eq!(tokyo.day(t), Zone::utc().day(t) + 1);
}
