//! A report keeps the blocks of tasks it summed and, after a refresh, sums again only the blocks
//! holding a changed task: whatever it kept, it must equal the report of a fresh index, to the
//! last bit.

mod common;

use common::{open, write_task};
use roo_store::task_store::TaskStore;
use roo_usage::prices::PriceTable;
use roo_usage::report::{CostMode, Group, ReportOptions};
use roo_usage::{SyncReport, UsageIndex, UsageReport};

const TASKS: usize = 2_600; // three blocks of 1 024

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
