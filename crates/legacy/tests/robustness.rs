//! `analyze_task_legacy` on arbitrary file contents: never panics, and what it returns is coherent.

use proptest::prelude::*;
use roo_legacy::{analyze_task_legacy, extract_new_task_instructions_legacy};
use serde_json::{Map, Value};
use std::path::Path;

const FILES: [&str; 4] = [
    "ui_messages.json",
    "api_conversation_history.json",
    "task_metadata.json",
    "history_item.json",
];

const KEYS: &[&str] = &[
    "type",
    "say",
    "ask",
    "text",
    "content",
    "role",
    "ts",
    "timestamp",
    "request",
    "tool",
    "mode",
    "message",
    "messages",
    "parentTaskId",
    "parent_task_id",
    "files_in_context",
    "roo_read_date",
    "roo_edit_date",
    "user_edit_date",
    "workspace",
    "title",
    "length",
    "0",
    "1",
];

const STRINGS: &[&str] = &[
    "say", "ask", "text", "api_req_started", "tool", "newTask", "new_task", "tool_call",
    "tool_result", "user", "assistant", "code", "💻 Code", "",
    "<task>\nA sufficiently long own instruction for the task\n</task>",
    "<task>x</task>",
    "{\"request\":\"[new_task in 💻 Code mode: 'Implement the parser module now please'] ok\"}",
    "{\"request\":\"<task>\\nMain instruction from the api request, long enough\\n</task>\"}",
    "{\"tool\":\"newTask\",\"mode\":\"debug\",\"content\":\"Investigate the failing test suite now\"}",
    "<new_task><mode>ask</mode><message>Explain the design</message></new_task>",
    "<new_task><mode>ask</mode><message>Unclosed but long enough</message>  ",
    "Current Workspace Directory (d:/dev/x) Files",
    "attempt_completion", "\"taskId\"", "2025-09-17T13:28:34.892Z", "2025-13-45", "null",
    "&#55357;", "😀", "\u{FEFF}", "not json {",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        proptest::sample::select(STRINGS).prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..6).prop_map(
                |kv| {
                    let mut m = Map::new();
                    for (k, v) in kv {
                        m.insert(k.to_owned(), v);
                    }
                    Value::Object(m)
                }
            ),
        ]
    })
}

/// File contents: raw bytes, or JSON text (possibly BOM-prefixed, cut short, or as JSONL).
fn contents() -> impl Strategy<Value = Option<Vec<u8>>> {
    let json_text =
        (json_value(), 0u8..5, any::<prop::sample::Index>()).prop_map(|(v, how, cut)| {
            let text = v.to_string();
            match how {
                0 => text,
                1 => format!("\u{FEFF}{text}"),
                2 => {
                    let n = cut.index(text.len() + 1);
                    String::from_utf8_lossy(&text.as_bytes()[..n]).into_owned()
                }
                3 => match v {
                    Value::Array(items) => items
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join("\n"),
                    other => other.to_string(),
                },
                _ => format!("{},", text.trim_start_matches('[').trim_end_matches(']')),
            }
            .into_bytes()
        });
    prop_oneof![
        1 => Just(None),
        2 => proptest::collection::vec(any::<u8>(), 0..300).prop_map(Some),
        4 => json_text.prop_map(Some),
    ]
}

fn check(dir: &Path) -> Result<(), TestCaseError> {
    let analysis = analyze_task_legacy(dir);
    let instructions = extract_new_task_instructions_legacy(dir);
    if let Some(a) = analysis {
        prop_assert_eq!(a.sequence_length, a.message_count + a.action_count);
        let mut seen = std::collections::HashSet::new();
        for p in &a.child_task_instruction_prefixes {
            let units = p.encode_utf16().count();
            prop_assert!(units > 10 && units <= 192, "prefix length {}", units);
            prop_assert!(seen.insert(p.clone()), "duplicate prefix");
        }
        if let Some(t) = &a.truncated_instruction {
            prop_assert!(t.encode_utf16().count() <= 192);
        }
        for i in &a.instructions {
            prop_assert!(i.message.encode_utf16().count() <= 200);
            prop_assert!(!i.mode.is_empty());
        }
        prop_assert_eq!(a.instructions, instructions);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_files_never_panic(files in proptest::collection::vec(contents(), 4)) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (name, content) in FILES.iter().zip(&files) {
            if let Some(bytes) = content {
                std::fs::write(dir.path().join(name), bytes)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
        }
        check(dir.path())?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        ui in proptest::collection::vec(any::<u8>(), 0..2000),
        api in proptest::collection::vec(any::<u8>(), 0..2000),
    ) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        std::fs::write(dir.path().join("ui_messages.json"), &ui)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        std::fs::write(dir.path().join("api_conversation_history.json"), &api)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        check(dir.path())?;
    }
}

#[test]
fn edge_cases_return_what_the_legacy_builder_returns() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let p = dir.path();
    // No file: null.
    assert!(analyze_task_legacy(p).is_none());
    // A directory where a file is expected: stat succeeds, reading fails → metadata read error is fatal.
    std::fs::create_dir(p.join("task_metadata.json")).unwrap_or_else(|e| panic!("{e}"));
    assert!(analyze_task_legacy(p).is_none());
    std::fs::remove_dir(p.join("task_metadata.json")).unwrap_or_else(|e| panic!("{e}"));
    // A null ui item makes the builder throw.
    std::fs::write(p.join("ui_messages.json"), "[null]").unwrap_or_else(|e| panic!("{e}"));
    assert!(analyze_task_legacy(p).is_none());
    // Unparsable metadata is replaced by {}.
    std::fs::write(p.join("ui_messages.json"), "[]").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(p.join("task_metadata.json"), "{oops").unwrap_or_else(|e| panic!("{e}"));
    let a = analyze_task_legacy(p);
    assert_eq!(a.as_ref().map(|a| a.total_size), Some(7));
    // Empty parent id counts as absent; history_item is the fallback.
    std::fs::write(
        p.join("task_metadata.json"),
        r#"{"parentTaskId":"","title":"T"}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(p.join("history_item.json"), r#"{"parentTaskId":"P"}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let a = analyze_task_legacy(p);
    assert_eq!(
        a.as_ref().and_then(|a| a.parent_task_id.clone()).as_deref(),
        Some("P")
    );
    assert_eq!(
        a.as_ref().and_then(|a| a.title.clone()).as_deref(),
        Some("T")
    );
    // An invalid files_in_context date makes toISOString throw → null.
    std::fs::write(
        p.join("task_metadata.json"),
        r#"{"files_in_context":[{"roo_read_date":"yesterday"}]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(analyze_task_legacy(p).is_none());
    // Truncated api history: no workspace, no dates; items come from the JSONL fallback.
    std::fs::write(p.join("task_metadata.json"), r#"{"workspace":"meta-ws"}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        p.join("api_conversation_history.json"),
        "{\"role\":\"user\",\"ts\":5,\"content\":\"Current Workspace Directory (d:/x)\"}\n[{\"role\":",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let a = analyze_task_legacy(p).unwrap_or_else(|| panic!("analysis"));
    assert_eq!(a.workspace.as_deref(), Some("meta-ws"));
    assert_eq!(a.created_at_ms, None);
    assert_eq!(a.message_count, 1);
    // Well-formed api history: workspace from the raw text wins, dates from ts.
    std::fs::write(
        p.join("api_conversation_history.json"),
        r#"[{"role":"user","ts":5,"content":"Current Workspace Directory ( d:/x ) Files"},{"role":"assistant","ts":3,"content":"<attempt_completion>"}]"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let a = analyze_task_legacy(p).unwrap_or_else(|| panic!("analysis"));
    assert_eq!(a.workspace.as_deref(), Some("d:/x"));
    assert_eq!(
        (a.created_at_ms, a.last_activity_ms),
        (Some(3.0), Some(5.0))
    );
    assert!(a.is_completed);
    assert_eq!(a.message_count, 2);
}

/// A FIFO, a link to an endless device and a sparse side file are stat'ed, never read: the builder
/// answers at once (no blocking open, no unbounded read) and treats them as unreadable files.
#[cfg(unix)]
#[test]
fn hostile_task_files_are_never_opened_or_read_without_bound() {
    use std::process::Command;
    let dir = tempfile::tempdir().expect("temp dir");
    let task = dir.path().join("t");
    std::fs::create_dir(&task).expect("task dir");
    let fifo = task.join("ui_messages.json");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", task.join("api_conversation_history.json"))
        .expect("symlink");
    let meta = std::fs::File::create(task.join("task_metadata.json")).expect("metadata file");
    meta.set_len(roo_legacy::MAX_SIDE_FILE_SIZE + 1)
        .expect("sparse size");
    let files = roo_legacy::read_legacy_task_files(&task);
    for (name, f) in [
        ("ui", &files.ui_messages),
        ("api", &files.api_history),
        ("meta", &files.metadata),
    ] {
        let f = f.as_ref().expect("stat'ed");
        assert!(f.bytes.is_none(), "{name} was read");
    }
    assert_eq!(
        files.metadata.as_ref().map(|f| f.size),
        Some(roo_legacy::MAX_SIDE_FILE_SIZE + 1)
    );
    // The task is skipped (its metadata unreadable), as for any unreadable task_metadata.json.
    assert!(roo_legacy::analyze_task_legacy(&task).is_none());
}
