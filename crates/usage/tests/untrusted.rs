//! Figures and price tables not taken on faith: requests whose tokens or cost are negative, not
//! finite or past any real request are refused, counted apart and said, never summed; price
//! entries from the future or with negative prices are refused and said; a price file is read
//! only when it is a regular file of a bounded size; a reversed range is an error.

mod common;

use common::{close, open, open_all, stores_root};
use roo_usage::prices::{PriceTable, MAX_PRICE_FILE_BYTES};
use roo_usage::report::{CostMode, Group, ReportOptions};
use roo_usage::UsageIndex;
use std::fs;
use std::path::Path;

/// A store of one task whose UI record holds these `api_req_started` payloads (10 June 2025).
fn store_with_requests(root: &Path, requests: &[&str]) -> std::path::PathBuf {
    let tasks = root.join("tasks");
    let task = tasks.join("0197f000-0000-7000-8000-000000000001");
    fs::create_dir_all(&task).expect("mkdir");
    let ts = 1_749_549_600_000_i64;
    let mut records =
        vec![serde_json::json!({"ts": ts, "type": "say", "say": "text", "text": "a task"})];
    for (i, r) in requests.iter().enumerate() {
        records.push(serde_json::json!({
            "ts": ts + 1000 * (i as i64 + 1), "type": "say", "say": "api_req_started", "text": r
        }));
    }
    fs::write(
        task.join("ui_messages.json"),
        serde_json::to_vec(&records).expect("json"),
    )
    .expect("write");
    tasks
}

#[test]
fn requests_past_belief_are_refused_and_counted_apart() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = store_with_requests(
        tmp.path(),
        &[
            r#"{"tokensIn":100,"tokensOut":10,"cost":0.5}"#,
            r#"{"tokensIn":-1000,"tokensOut":-10,"cost":-5.99}"#,
            r#"{"tokensIn":1e308,"tokensOut":1e308,"cost":1e308}"#,
            r#"{"tokensIn":5,"tokensOut":5,"cost":2e7}"#,
        ],
    );
    let store = open(&tasks);
    let report = UsageIndex::new()
        .report(
            &store,
            &ReportOptions {
                group: Group::Tasks,
                cost_mode: CostMode::Recorded,
                ..ReportOptions::default()
            },
        )
        .expect("report");
    let t = &report.totals.sums;
    assert_eq!(
        (t.requests, t.tokens_in, t.tokens_out, t.cost),
        (1, 100.0, 10.0, 0.5)
    );
    assert_eq!(report.refused_records, 3);
    let said = report.notes.join("\n");
    assert!(said.contains("3 records refused"), "{said}");
    assert!(said.contains("-5.99") || said.contains("-1000"), "{said}");
}

#[test]
fn refused_records_are_kept_with_the_others_between_runs() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = store_with_requests(
        tmp.path(),
        &[
            r#"{"tokensIn":100,"tokensOut":10,"cost":0.5}"#,
            r#"{"tokensIn":-1000,"tokensOut":-10,"cost":-5.99}"#,
        ],
    );
    let cache = tmp.path().join("our-cache");
    let options = ReportOptions {
        group: Group::Daily,
        cost_mode: CostMode::Recorded,
        ..ReportOptions::default()
    };
    let run = |options: &ReportOptions| {
        let store = open_all(&[tasks.as_path()], Some(&cache));
        UsageIndex::new().report(&store, options).expect("report")
    };
    let first = run(&options);
    assert_eq!((first.sync.read, first.refused_records), (1, 1));
    // A new process takes the report's kept blocks, the refused record counted in them.
    let second = run(&options);
    assert_eq!((second.sync.read, second.sync.cached), (0, 0));
    assert_eq!((second.sync.blocks_kept, second.refused_records), (1, 1));
    assert_eq!(second.notes, first.notes);
    // A report by task (it keeps no blocks) takes the kept records, the refused one with them.
    let by_task = ReportOptions {
        group: Group::Tasks,
        ..options
    };
    let third = run(&by_task);
    assert_eq!((third.sync.read, third.sync.cached), (0, 1));
    assert_eq!(third.refused_records, 1);
    assert_eq!(third.notes, first.notes);
}

#[test]
fn a_reversed_range_is_an_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = store_with_requests(tmp.path(), &[r#"{"tokensIn":1,"cost":0.1}"#]);
    let r = UsageIndex::new().report(
        &open(&tasks),
        &ReportOptions {
            since: Some("2026-01-01".into()),
            until: Some("2020-01-01".into()),
            ..ReportOptions::default()
        },
    );
    let e = r.expect_err("a reversed range was taken");
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert!(e.to_string().contains("reversed"), "{e}");
}

/// One million input tokens of claude-sonnet-4 on 10 June 2025, priced with `prices`.
fn priced_cost(root: &Path, prices: PriceTable) -> (f64, Vec<String>) {
    let tasks = store_with_requests(
        root,
        &[
            r##"{"request":"<environment_details>\n# Current Mode\n<slug>code</slug>\n<model>claude-sonnet-4-20250514</model>\n</environment_details>","tokensIn":1000000,"tokensOut":0}"##,
        ],
    );
    let report = UsageIndex::new()
        .report(
            &open(&tasks),
            &ReportOptions {
                group: Group::Models,
                cost_mode: CostMode::Calculate,
                prices,
                ..ReportOptions::default()
            },
        )
        .expect("report");
    (report.totals.sums.cost, report.notes)
}

#[test]
fn price_entries_from_the_future_or_below_zero_are_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (bundled, _) = priced_cost(&tmp.path().join("a"), PriceTable::bundled());
    assert!(close(bundled, 3.0), "{bundled}");
    for (name, entry) in [
        ("future", r#""from":"2099-01-01","inputPrice":4000"#),
        ("negative", r#""from":"2025-01-01","inputPrice":-3"#),
        (
            "tiers",
            r#""from":"2025-01-01","inputPrice":3,"tiers":[{"inputPrice":-1}]"#,
        ),
    ] {
        let file = tmp.path().join(format!("{name}.json"));
        fs::write(
            &file,
            format!(r#"{{"models":[{{"match":["claude-sonnet-4"],"outputPrice":15,{entry}}}]}}"#),
        )
        .expect("write");
        let table = PriceTable::with_file(&file).expect("table");
        assert_eq!(table.refused.len(), 1, "{name}: {:?}", table.refused);
        let (cost, notes) = priced_cost(&tmp.path().join(name), table);
        assert!(close(cost, 3.0), "{name}: {cost}");
        assert!(
            notes.iter().any(|n| n.contains("refused")),
            "{name}: {notes:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_price_file_is_read_only_when_it_is_a_bounded_regular_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    let fifo = tmp.path().join("prices.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let sparse = tmp.path().join("sparse.json");
    fs::File::create(&sparse)
        .and_then(|f| f.set_len(3 << 30))
        .expect("sparse");
    let big = tmp.path().join("big.json");
    fs::write(&big, vec![b' '; MAX_PRICE_FILE_BYTES as usize + 1]).expect("write");
    for (file, said) in [
        (Path::new("/dev/zero"), "not a regular file"),
        (fifo.as_path(), "not a regular file"),
        (sparse.as_path(), "bytes, more than"),
        (big.as_path(), "bytes, more than"),
    ] {
        let e = PriceTable::with_file(file).expect_err("read");
        assert_eq!(e.code(), "INVALID_ARGUMENT");
        assert!(e.to_string().contains(said), "{}: {e}", file.display());
    }
}

#[test]
fn the_real_stores_have_nothing_to_refuse() {
    for e in fs::read_dir(stores_root())
        .expect("fixtures/stores")
        .flatten()
    {
        let tasks = e.path().join("tasks");
        if !tasks.is_dir() {
            continue;
        }
        let report = UsageIndex::new()
            .report(&open(&tasks), &ReportOptions::default())
            .expect("report");
        assert_eq!(report.refused_records, 0, "{}", tasks.display());
        assert!(
            report.notes.iter().all(|n| !n.contains("refused")),
            "{:?}",
            report.notes
        );
    }
}
