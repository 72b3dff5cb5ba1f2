//! A report keeps the blocks of tasks it summed and, after a refresh, sums again only the blocks
//! holding a changed task: whatever it kept, it must equal the report of a fresh index, to the
//! last bit.

#[allow(dead_code)] // the other helpers serve the other tests
mod common;

use common::open;
use roo_store::task_store::TaskStore;
use roo_usage::prices::PriceTable;
use roo_usage::report::{CostMode, Group, ReportOptions};
use roo_usage::{SyncReport, UsageIndex, UsageReport};
use std::path::Path;

const TASKS: usize = 2_600; // three blocks of 1 024

fn write_task(tasks: &Path, n: usize, cost_scale: f64) {
    let dir = tasks.join(format!("task-{n:05}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let t0: i64 = 1_767_225_600_000 + (n as i64 % 40) * 86_400_000;
    let model = ["claude-sonnet-4-5", "gpt-5", "some-unpriced-model"][n % 3];
    // Every fifth request records no cost: `auto` calculates it from the tokens.
    let cost = if n % 5 == 0 {
        String::new()
    } else {
        format!(r#","cost":{}"#, (n as f64 * 0.0137 + 0.01) * cost_scale)
    };
    let req = format!(
        r#"{{"apiProtocol":"anthropic","tokensIn":{},"tokensOut":{},"cacheReads":{}{cost}}}"#,
        100 + n,
        10 + n % 17,
        n % 7
    );
    let msgs = serde_json::json!([
        {"ts": t0, "type": "say", "say": "text", "text": format!("Task number {n}")},
        {"ts": t0 + 1, "type": "say", "say": "api_req_started", "text": req},
        {"ts": t0 + 3_600_000, "type": "say", "say": "api_req_started", "text": req},
    ]);
    let meta = serde_json::json!({"model_usage": [{"ts": t0, "model_id": model, "model_provider_id": "p", "mode": "code"}]});
    std::fs::write(dir.join("ui_messages.json"), msgs.to_string()).expect("write");
    std::fs::write(dir.join("task_metadata.json"), meta.to_string()).expect("write");
}

fn opts(group: Group, prices: PriceTable) -> ReportOptions {
    ReportOptions {
        group,
        cost_mode: CostMode::Auto,
        breakdown: true,
        prices,
        ..ReportOptions::default()
    }
}

/// The report and what its sync did, the report without its sync.
fn report(
    store: &TaskStore,
    index: &mut UsageIndex,
    o: &ReportOptions,
) -> (UsageReport, SyncReport) {
    let mut r = index.report(store, o).expect("report");
    let sync = std::mem::take(&mut r.sync);
    (r, sync)
}

fn fresh(store: &TaskStore, o: &ReportOptions) -> UsageReport {
    report(store, &mut UsageIndex::new(), o).0
}

#[test]
fn kept_blocks_give_the_report_of_a_fresh_index() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("tasks");
    for n in 0..TASKS {
        write_task(&tasks, n, 1.0);
    }
    let mut store = open(&tasks);
    let mut index = UsageIndex::new();
    let daily = opts(Group::Daily, PriceTable::bundled());

    let (first, s) = report(&store, &mut index, &daily);
    assert_eq!(
        (s.read, s.blocks_summed, s.blocks_kept),
        (TASKS as u32, 3, 0)
    );
    assert_eq!(first.rows.len(), 40);
    assert!(first.totals.sums.cost > 0.0);
    let (again, s) = report(&store, &mut index, &daily);
    assert_eq!((s.read, s.blocks_summed, s.blocks_kept), (0, 0, 3));
    assert_eq!(again, first);

    // One task of the second block changes in place: that block alone is summed again.
    write_task(&tasks, 1_501, 3.0);
    store.refresh().expect("refresh");
    let (after, s) = report(&store, &mut index, &daily);
    assert_eq!((s.read, s.blocks_summed, s.blocks_kept), (1, 1, 2));
    assert_eq!(after, fresh(&store, &daily));
    assert_ne!(after.totals.sums.cost, first.totals.sums.cost);

    // Other options sum every block; the kept blocks are those of the last options.
    let (weekly, s) = report(
        &store,
        &mut index,
        &opts(Group::Weekly, PriceTable::bundled()),
    );
    assert_eq!(s.blocks_summed, 3);
    assert_eq!(
        weekly,
        fresh(&store, &opts(Group::Weekly, PriceTable::bundled()))
    );
    let (_, s) = report(&store, &mut index, &daily);
    assert_eq!(s.blocks_summed, 3);

    // A task added moves the positions of every task after it: every block is summed again.
    write_task(&tasks, 9_999, 1.0);
    store.refresh().expect("refresh");
    let (added, s) = report(&store, &mut index, &daily);
    assert_eq!((s.read, s.blocks_summed), (1, 3));
    assert_eq!(added, fresh(&store, &daily));

    // A price file rewritten under the same path is another table: nothing kept.
    let file = tmp.path().join("prices.json");
    let table = |price: f64| {
        let text = format!(
            r#"{{"updated":"2026-01-01","models":[{{"match":["some-unpriced-model"],"inputPrice":{price},"outputPrice":1,"contextWindow":1000,"supportsPromptCache":false}}]}}"#
        );
        std::fs::write(&file, text).expect("write prices");
        opts(
            Group::Daily,
            PriceTable::with_file(&file).expect("price file"),
        )
    };
    let cheap = table(1.0);
    let (a, _) = report(&store, &mut index, &cheap);
    let dear = table(5.0);
    let (b, s) = report(&store, &mut index, &dear);
    assert_eq!(s.blocks_summed, 3);
    assert_eq!(b, fresh(&store, &dear));
    assert!(b.totals.sums.cost > a.totals.sums.cost);
}
