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
