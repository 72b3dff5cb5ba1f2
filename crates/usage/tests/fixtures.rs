//! Reports over the bundled fixture stores of every host and era, held to references computed
//! here from the files themselves: the hand-derived totals of each task's `expected/*.json`, and
//! per-day sums read straight from the UI records (a plain JSON walk, no code of the crate) in
//! two time zones.

use roo_condense::cost::{calculate_api_cost_anthropic, ModelInfo};
mod common;

use common::{close, fixture_stores, open, stores_root};
use roo_usage::report::{CostMode, Group, ReportOptions};
use roo_usage::zone::Zone;
use roo_usage::UsageIndex;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn opts(group: Group, zone: &str) -> ReportOptions {
    ReportOptions {
        group,
        zone: Zone::parse(zone).expect("zone"),
        cost_mode: CostMode::Recorded,
        ..ReportOptions::default()
    }
}

/// The hand-derived totals of a store's `expected/*.json`.
fn expected_totals(tasks: &Path) -> [f64; 5] {
    let mut t = [0.0; 5];
    let dir = tasks.with_file_name("expected");
    for e in std::fs::read_dir(dir).expect("expected/").flatten() {
        let v: Value =
            serde_json::from_slice(&std::fs::read(e.path()).expect("read")).expect("json");
        for (i, k) in [
            "tokensIn",
            "tokensOut",
            "cacheWrites",
            "cacheReads",
            "totalCost",
        ]
        .iter()
        .enumerate()
        {
            t[i] += v.get(*k).and_then(Value::as_f64).unwrap_or(0.0);
        }
    }
    t
}

#[test]
fn totals_equal_the_hand_derived_facts_of_every_store() {
    for tasks in fixture_stores() {
        let store = open(&tasks);
        let mut index = UsageIndex::new();
        let report = index
            .report(&store, &opts(Group::Daily, "UTC"))
            .expect("report");
        let want = expected_totals(&tasks);
        let s = &report.totals.sums;
        let got = [
            s.tokens_in,
            s.tokens_out,
            s.cache_writes,
            s.cache_reads,
            s.cost,
        ];
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(close(*g, w), "{}: field {i}: {g} != {w}", tasks.display());
        }
        // The rows add up to the totals.
        let rows_cost: f64 = report.rows.iter().map(|r| r.sums.cost).sum();
        assert!(close(rows_cost, s.cost), "{}", tasks.display());
        // The fixtures' history items state what their records add up to.
        assert_eq!(report.history_disagreements, [], "{}", tasks.display());
        // And each task's records add up to the skeleton's own totals.
        let by_task = index
            .report(&store, &opts(Group::Tasks, "UTC"))
            .expect("report");
        for row in &by_task.rows {
            let sk = store.get(&row.key).expect("task");
            assert!(
                close(row.sums.cost, sk.api_totals.total_cost),
                "{}",
                row.key
            );
            assert!(
                close(row.sums.tokens_in, sk.api_totals.tokens_in),
                "{}",
                row.key
            );
        }
    }
}

/// Per-day sums of tokens in, tokens out and cost read straight from a UI record: each
/// `api_req_started` on its own day, a legacy `api_req_finished` on the day of the request it
/// completes, a condense cost on its own day.
fn reference_days(tasks: &Path, offset_ms: i64, into: &mut BTreeMap<i64, [f64; 3]>) {
    for task in std::fs::read_dir(tasks).expect("tasks").flatten() {
        let dir = task.path();
        let ui = ["ui_messages.json", "claude_messages.json"]
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.is_file());
        let Some(ui) = ui else { continue };
        let Ok(Value::Array(msgs)) =
            serde_json::from_slice::<Value>(&std::fs::read(ui).expect("read"))
        else {
            continue; // damaged records: the totals test covers them
        };
        let mut last_start_day = None;
        for m in msgs {
            let ts = m.get("ts").and_then(Value::as_i64).unwrap_or(0);
            let day = (ts + offset_ms).div_euclid(86_400_000);
            let say = m.get("say").and_then(Value::as_str).unwrap_or("");
            let info: Value = m
                .get("text")
                .and_then(Value::as_str)
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or(Value::Null);
            let num = |k: &str| info.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            let (d, vals) = match say {
                "api_req_started" => {
                    last_start_day = Some(day);
                    (day, [num("tokensIn"), num("tokensOut"), num("cost")])
                }
                "api_req_finished" => (
                    last_start_day.unwrap_or(day),
                    [num("tokensIn"), num("tokensOut"), num("cost")],
                ),
                "condense_context" => {
                    let c = m
                        .pointer("/contextCondense/cost")
                        .and_then(Value::as_f64)
                        .unwrap_or(0.0);
                    (day, [0.0, 0.0, c])
                }
                _ => continue,
            };
            let e = into.entry(d).or_insert([0.0; 3]);
            for i in 0..3 {
                e[i] += vals[i];
            }
        }
    }
}

#[test]
fn daily_sums_equal_the_records_in_two_time_zones() {
    let mut differ = false;
    for tasks in fixture_stores()
        .into_iter()
        .filter(|p| !p.starts_with(stores_root().join("damaged")))
    {
        let store = open(&tasks);
        let mut index = UsageIndex::new();
        let mut per_zone = Vec::new();
        // Tokyo has no summer time: +09:00 all year, which the reference applies by hand.
        for (zone, offset_h) in [("UTC", 0), ("Asia/Tokyo", 9), ("-10:00", -10)] {
            let mut want = BTreeMap::new();
            reference_days(&tasks, offset_h * 3_600_000, &mut want);
            want.retain(|_, v| v.iter().any(|x| *x != 0.0));
            let report = index
                .report(&store, &opts(Group::Daily, zone))
                .expect("report");
            let got: BTreeMap<i64, [f64; 3]> = report
                .rows
                .iter()
                .filter(|r| r.sums.tokens_in + r.sums.tokens_out + r.sums.cost != 0.0)
                .map(|r| {
                    let day = roo_usage::zone::parse_date(&r.key).expect("a day key");
                    (day, [r.sums.tokens_in, r.sums.tokens_out, r.sums.cost])
                })
                .collect();
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                want.keys().collect::<Vec<_>>(),
                "{} in {zone}",
                tasks.display()
            );
            for (d, w) in &want {
                let g = got[d];
                for i in 0..3 {
                    assert!(
                        close(g[i], w[i]),
                        "{} {zone} day {d}: {g:?} != {w:?}",
                        tasks.display()
                    );
                }
            }
            per_zone.push(want);
        }
        differ |= per_zone[0] != per_zone[1] || per_zone[0] != per_zone[2];
    }
    assert!(
        differ,
        "no fixture has a request near midnight: the zones were not exercised"
    );
}

#[test]
fn calculated_cost_is_the_extension_cost_function_over_the_tokens() {
    // Roo Code 3.3x with claude-sonnet-4-5 over the Anthropic protocol.
    let tasks = stores_root().join("condense-era-v3.3x/tasks");
    let store = open(&tasks);
    let mut index = UsageIndex::new();
    let mut o = opts(Group::Models, "UTC");
    o.cost_mode = CostMode::Calculate;
    let report = index.report(&store, &o).expect("report");
    let sonnet = ModelInfo {
        input_price: Some(3.0),
        output_price: Some(15.0),
        cache_writes_price: Some(3.75),
        cache_reads_price: Some(0.3),
        ..ModelInfo::default()
    };
    let mut want = 0.0;
    let mut condense = 0.0;
    for id in store.skeletons().iter().map(|s| s.task_id.clone()) {
        for r in &index.task(&id).expect("indexed").records {
            match r.kind {
                roo_usage::records::RecordKind::Condense => condense += r.cost.unwrap_or(0.0),
                _ => {
                    assert_eq!(r.model.as_deref(), Some("claude-sonnet-4-5"));
                    // v3.29.5+: `tokensIn` holds the cache tokens; the function takes them apart.
                    assert!(r.input_includes_cache);
                    want += calculate_api_cost_anthropic(
                        &sonnet,
                        (r.tokens_in - r.cache_writes - r.cache_reads).max(0.0),
                        r.tokens_out,
                        Some(r.cache_writes),
                        Some(r.cache_reads),
                    )
                    .total_cost;
                }
            }
        }
    }
    assert!(want > 0.0);
    assert!(
        close(report.totals.sums.cost, want + condense),
        "{} != {}",
        report.totals.sums.cost,
        want + condense
    );
    assert!(report.unpriced_models.is_empty());
    // The fixtures' recorded costs were written with the extension's formulas at these prices:
    // recorded and calculated agree.
    let recorded = index
        .report(&store, &opts(Group::Models, "UTC"))
        .expect("report");
    assert!(close(recorded.totals.sums.cost, report.totals.sums.cost));
}
