//! Skeletons at the Rust level: the real pair, files far above the legacy 10 MiB cap, foreign
//! record shapes, and arbitrary bytes in every task file.

use proptest::prelude::*;
use roo_state::skeleton::{analyze_task, AnalyzeOptions};
use std::path::{Path, PathBuf};

/// `../shared/fixtures/legacy-tasks/real-tasks`, or `None` (the test skips, saying why).
fn real_tasks(test: &str) -> Option<PathBuf> {
    roo_corpus::shared::shared_fixture("fixtures/legacy-tasks/real-tasks", test)
}

fn header() -> AnalyzeOptions {
    AnalyzeOptions {
        include_sequence: false,
        ..AnalyzeOptions::default()
    }
}

#[test]
fn the_real_pair() {
    let Some(real_tasks) = real_tasks("the_real_pair") else {
        return;
    };
    let real = |id: &str| real_tasks.join(id);
    let child_id = "bc93a6f7-cd2e-4686-a832-46e3cd14d338";
    let parent_id = "ac8aa7b4-319c-4925-a139-4f4adca81921";
    let child = analyze_task(child_id, &real(child_id), &header()).expect("child skeleton");
    let parent = analyze_task(parent_id, &real(parent_id), &header()).expect("parent skeleton");
    assert_eq!(child.child_tasks.len(), 6);
    assert_eq!(parent.child_tasks.len(), 22);
    let key = child.truncated_instruction.clone().expect("child key");
    assert!(parent.child_task_instruction_prefixes.contains(&key));
    assert!(!child.child_task_instruction_prefixes.contains(&key));
    assert_eq!(child.created_at_ms, Some(1_758_114_661_175));
    assert_eq!(child.metadata.created_at, "2025-09-17T13:11:01.175Z");
}

#[test]
fn files_far_above_ten_mib_are_read_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let task = dir.path().join("big");
    std::fs::create_dir(&task).expect("mkdir");
    let filler = "lorem ipsum dolor sit amet ".repeat(400);
    let mut text = String::from("[");
    let n = 2_500usize;
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        let say = if i == 0 { "text" } else { "completion_result" };
        text.push_str(&format!(
            r#"{{"ts":{},"type":"say","say":"{say}","text":"message {i} {filler}"}}"#,
            1_760_000_000_000i64 + i as i64
        ));
    }
    text.push(']');
    assert!(
        text.len() > 25 * 1024 * 1024,
        "the file is {} bytes",
        text.len()
    );
    std::fs::write(task.join("ui_messages.json"), &text).expect("write");
    drop(text);
    let s = analyze_task("big", &task, &header()).expect("skeleton");
    assert_eq!(s.files.ui_messages as usize, n);
    assert_eq!(s.metadata.message_count as usize, n);
    assert_eq!(s.last_activity_ms, Some(1_760_000_000_000 + n as i64 - 1));
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
}

#[test]
fn foreign_records_are_read_as_plain_messages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ui = r#"[{"id":"m1","type":"user","timestamp":"2025-01-01T10:00:00.000Z","content":{"text":"Write the report"}},
                 {"id":"m2","type":"assistant","timestamp":"2025-01-01T10:01:00.000Z","content":"On it."}]"#;
    std::fs::write(dir.path().join("ui_messages.json"), ui).expect("write");
    let s = analyze_task("t", dir.path(), &AnalyzeOptions::default()).expect("skeleton");
    assert_eq!(s.instruction.as_deref(), Some("Write the report"));
    assert_eq!(s.metadata.message_count, 2);
    assert_eq!(s.metadata.created_at, "2025-01-01T10:00:00.000Z");
    assert!(s
        .diagnostics
        .iter()
        .any(|d| d.message.contains("plain messages")));
}

#[test]
fn figures_past_belief_are_left_out_of_the_totals_and_said() {
    let dir = tempfile::tempdir().expect("tempdir");
    let req = |ts: i64, figures: &str| {
        let text = serde_json::to_string(figures).expect("text");
        format!(r#"{{"ts":{ts},"type":"say","say":"api_req_started","text":{text}}}"#)
    };
    let ui = format!(
        "[{},{},{},{},{}]",
        r#"{"ts":1749549600000,"type":"say","say":"text","text":"Numbers"}"#,
        req(
            1_749_549_600_001,
            r#"{"tokensIn":100,"tokensOut":10,"cost":0.5}"#
        ),
        req(
            1_749_549_600_002,
            r#"{"tokensIn":-1000,"tokensOut":-10,"cost":-5.99}"#
        ),
        req(
            1_749_549_600_003,
            r#"{"tokensIn":1e308,"tokensOut":1e308,"cost":1e308}"#
        ),
        req(
            1_749_549_600_004,
            r#"{"tokensIn":20,"tokensOut":2,"cost":2000000}"#
        ),
    );
    std::fs::write(dir.path().join("ui_messages.json"), ui).expect("write");
    let s = analyze_task("t", dir.path(), &header()).expect("skeleton");
    // Every request is counted; only the one whose figures can be believed adds to the sums.
    let t = s.api_totals;
    assert_eq!(t.requests, 4);
    assert_eq!(
        (t.tokens_in, t.tokens_out, t.total_cost),
        (100.0, 10.0, 0.5)
    );
    let said: Vec<&str> = (s.diagnostics.iter())
        .filter(|d| d.code == roo_formats::diag::DiagCode::InvalidValue)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(said[0].contains("ts 1749549600002") && said[0].contains("tokensIn is -1000"));
    assert!(said[1].contains("tokensIn is 1e308"));
    assert!(said[2].contains("its cost is 2000000"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Arbitrary bytes in every task file: a skeleton (or a diagnostic), never a panic.
    #[test]
    fn any_bytes_in_any_task_file(ui in proptest::collection::vec(any::<u8>(), 0..300),
                                   api in proptest::collection::vec(any::<u8>(), 0..300),
                                   item in proptest::collection::vec(any::<u8>(), 0..120),
                                   meta in proptest::collection::vec(any::<u8>(), 0..120)) {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, bytes) in [("ui_messages.json", &ui), ("api_conversation_history.json", &api),
                              ("history_item.json", &item), ("task_metadata.json", &meta)] {
            std::fs::write(dir.path().join(name), bytes).expect("write");
        }
        let s = analyze_task("t", dir.path(), &AnalyzeOptions::default());
        prop_assert!(s.is_ok());
    }
}

/// Every task directory under `root` (one level of `tasks/` folders or task folders).
fn task_dirs_under(root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if !p.is_dir() {
            continue;
        }
        let has_task_file = [
            "ui_messages.json",
            "claude_messages.json",
            "api_conversation_history.json",
            "history_item.json",
            "task_metadata.json",
        ]
        .iter()
        .any(|f| p.join(f).exists());
        if has_task_file {
            out.push((e.file_name().to_string_lossy().into_owned(), p));
        } else {
            task_dirs_under(&p, out);
        }
    }
}

/// A header reads the API history through its fast head path; the full skeleton through the
/// whole messages. Apart from `sequence`, they must be the same skeleton: on every fixture of
/// every era, damaged ones included, and on a generated store of every era with its traps.
#[test]
fn headers_equal_full_skeletons_without_sequence() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = Vec::new();
    // The legacy fixtures when ../shared is there; this repository's fixtures and the corpus always.
    if let Some(legacy) = roo_corpus::shared::shared_fixture(
        "fixtures",
        "headers_equal_full_skeletons_without_sequence (legacy fixtures)",
    ) {
        task_dirs_under(&legacy, &mut dirs);
    }
    task_dirs_under(&manifest.join("../../fixtures"), &mut dirs);
    let corpus = tempfile::tempdir().expect("tempdir");
    roo_corpus::generate(
        corpus.path(),
        &roo_corpus::CorpusSpec {
            tasks: 300,
            seed: 7,
            eras: roo_corpus::Era::ALL.to_vec(),
            target_bytes: Some(3 * 1024 * 1024),
            traps: true,
            strip_stored_links: false,
            workspaces: 4,
        },
    )
    .expect("corpus");
    task_dirs_under(corpus.path(), &mut dirs);
    assert!(dirs.len() > 300, "{} task directories", dirs.len());
    let mut with_api = 0usize;
    for (id, dir) in &dirs {
        let head = analyze_task(id, dir, &header());
        let full = analyze_task(id, dir, &AnalyzeOptions::default()).map(|mut s| {
            s.sequence = None;
            s
        });
        if head.as_ref().is_ok_and(|s| s.files.api_history) {
            with_api += 1;
        }
        assert_eq!(head, full, "{}", dir.display());
    }
    assert!(with_api > 300, "{with_api} tasks with an API history");
}
