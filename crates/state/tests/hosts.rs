//! Task folders as each host writes them today: Cline's first `say:"task"`, auto-approved
//! `say:"command"`, its own message kinds and plan/act mode, API-history-only tasks, and numbers
//! JavaScript reads as `Infinity`.

use roo_state::skeleton::{analyze_task, AnalyzeOptions, DatesFrom, SequenceItem};
use roo_state::ConversationSkeleton;
use std::path::Path;

fn full() -> AnalyzeOptions {
    AnalyzeOptions::default()
}

fn task(files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let task_dir = dir.path().join("tasks").join("t");
    std::fs::create_dir_all(&task_dir).expect("mkdir");
    for (name, text) in files {
        std::fs::write(task_dir.join(name), text).expect("write");
    }
    (dir, task_dir)
}

fn analyze(id: &str, dir: &Path) -> ConversationSkeleton {
    analyze_task(id, dir, &full()).expect("skeleton")
}

fn messages(s: &ConversationSkeleton) -> Vec<(String, String)> {
    s.sequence
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter_map(|i| match i {
            SequenceItem::Message(m) => Some((m.role.clone(), m.content.clone())),
            SequenceItem::Action(_) => None,
        })
        .collect()
}

#[test]
fn cline_first_say_task_is_the_instruction_and_title() {
    let (_d, dir) = task(&[(
        "ui_messages.json",
        r#"[{"ts":1770000000000,"type":"say","say":"task","text":"Fix the login bug"},{"ts":1770000001000,"type":"say","say":"text","text":"Looking at the code"}]"#,
    )]);
    let s = analyze("t", &dir);
    assert_eq!(s.metadata.title.as_deref(), Some("Fix the login bug"));
    assert_eq!(s.instruction.as_deref(), Some("Fix the login bug"));
    assert_eq!(
        messages(&s),
        vec![
            ("user".to_owned(), "Fix the login bug".to_owned()),
            ("assistant".to_owned(), "Looking at the code".to_owned())
        ]
    );
    assert!(
        !s.diagnostics.iter().any(|d| d.message.contains("task")),
        "{:?}",
        s.diagnostics
    );
}

#[test]
fn an_auto_approved_command_is_one_tool_call() {
    let (_d, dir) = task(&[(
        "ui_messages.json",
        r#"[{"ts":1770000000000,"type":"say","say":"task","text":"Run the tests"},{"ts":1770000001000,"type":"say","say":"command","text":"npm test"},{"ts":1770000002000,"type":"say","say":"command_output","text":"ok"},{"ts":1770000003000,"type":"say","say":"completion_result","text":"Tests pass"}]"#,
    )]);
    let s = analyze("t", &dir);
    assert_eq!(s.metadata.action_count, 1);
    let actions: Vec<_> = s
        .sequence
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter_map(|i| match i {
            SequenceItem::Action(a) => Some(a),
            SequenceItem::Message(_) => None,
        })
        .collect();
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0].kind, "command");
    assert_eq!(actions[0].name, "execute_command");
    assert_eq!(actions[0].parameters["command"], "npm test");
    assert!(s.is_completed);
}

#[test]
fn cline_kinds_are_known_and_place_the_task_outside_a_known_path() {
    let (_d, dir) = task(&[(
        "ui_messages.json",
        r#"[{"ts":1770000000000,"type":"say","say":"task","text":"Plan the refactor"},{"ts":1770000000500,"type":"say","say":"checkpoint_created","lastCheckpointHash":"abc"},{"ts":1770000001000,"type":"ask","ask":"plan_mode_respond","text":"{\"response\":\"First split the module\",\"options\":[]}"},{"ts":1770000002000,"type":"say","say":"task_progress","text":"- [ ] split"},{"ts":1770000003000,"type":"say","say":"error_retry","text":"{}"}]"#,
    )]);
    let s = analyze("t", &dir);
    assert_eq!(s.metadata.source, "cline");
    assert!(
        !s.diagnostics
            .iter()
            .any(|d| d.code == roo_formats::DiagCode::UnknownValue),
        "{:?}",
        s.diagnostics
    );
    assert!(messages(&s).contains(&("assistant".to_owned(), "First split the module".to_owned())));
}

#[test]
fn cline_plan_and_act_modes_come_from_the_environment_details() {
    let (_d, dir) = task(&[
        (
            "ui_messages.json",
            r#"[{"ts":1770000000000,"type":"say","say":"task","text":"Plan it"}]"#,
        ),
        (
            "api_conversation_history.json",
            r#"[{"role":"user","content":[{"type":"text","text":"<task>\nPlan it\n</task>"},{"type":"text","text":"<environment_details>\n# Current Working Directory (/home/dev/app) Files\na.ts\n\n# Current Mode\nPLAN MODE\nIn this mode you gather information.\n</environment_details>"}]}]"#,
        ),
    ]);
    let s = analyze("t", &dir);
    assert_eq!(s.metadata.mode.as_deref(), Some("plan"));
    assert_eq!(s.metadata.workspace.as_deref(), Some("/home/dev/app"));
}

const API_ONLY: &str = r#"[{"role":"user","content":[{"type":"text","text":"<task>\nAdd a health endpoint\n</task>"},{"type":"text","text":"<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"}]},{"role":"assistant","content":[{"type":"text","text":"I'll read the server."},{"type":"tool_use","id":"t1","name":"read_file","input":{"path":"server.ts"}}]},{"role":"user","content":[{"type":"text","text":"[read_file for 'server.ts'] Result:"},{"type":"text","text":"import express from 'express'"},{"type":"text","text":"<environment_details>\nx\n</environment_details>"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"execute_command","input":{"command":"npm test"}}]},{"role":"user","content":[{"type":"text","text":"[execute_command for 'npm test'] Result:"},{"type":"text","text":"Command executed.\nOutput: 3 passing"},{"type":"text","text":"The user provided the following feedback:\n<feedback>\nalso add a readiness probe\n</feedback>"}]},{"role":"assistant","content":[{"type":"text","text":"Done."},{"type":"tool_use","id":"t3","name":"attempt_completion","input":{"result":"Added /health and /ready"}}]}]"#;

#[test]
fn api_only_tasks_count_what_the_user_wrote_and_see_the_completion() {
    let (_d, dir) = task(&[
        ("api_conversation_history.json", API_ONLY),
        (
            "task_metadata.json",
            r#"{"files_in_context":[{"path":"server.ts","record_state":"active","record_source":"read_tool","cline_read_date":1770000065000,"cline_edit_date":null,"user_edit_date":null}],"model_usage":[{"ts":1770000090000,"model_id":"claude-sonnet-4-5","model_provider_id":"anthropic","mode":"act"}]}"#,
        ),
    ]);
    let s = analyze("1770000000000", &dir);
    let users: Vec<String> = messages(&s)
        .into_iter()
        .filter(|(r, _)| r == "user")
        .map(|(_, c)| c)
        .collect();
    assert_eq!(
        users,
        vec![
            "Add a health endpoint".to_owned(),
            "also add a readiness probe".to_owned()
        ]
    );
    // Two user messages and two assistant texts; the two tool results are not messages.
    assert_eq!(s.metadata.message_count, 4);
    assert!(
        s.is_completed,
        "the last assistant block is attempt_completion"
    );
    assert_eq!(s.metadata.mode.as_deref(), Some("act"));
    assert_eq!(s.metadata.source, "cline");
    assert_eq!(s.metadata.dates_from, DatesFrom::TaskId);
    assert_eq!(s.created_at_ms, Some(1_770_000_000_000));
    assert_eq!(s.last_activity_ms, Some(1_770_000_090_000));
}

#[test]
fn feedback_after_a_completion_reopens_an_api_only_task() {
    let reopened = API_ONLY.trim_end_matches(']').to_owned()
        + r#",{"role":"user","content":[{"type":"text","text":"[attempt_completion] Result:"},{"type":"text","text":"The user has provided feedback on the results.\n<feedback>\nthe probe fails\n</feedback>"}]}]"#;
    let (_d, dir) = task(&[("api_conversation_history.json", &reopened)]);
    let s = analyze("t", &dir);
    assert!(!s.is_completed);
    assert_eq!(s.metadata.dates_from, DatesFrom::FileTimes);
}

#[test]
fn metadata_times_date_a_task_without_message_times() {
    let (_d, dir) = task(&[
        ("api_conversation_history.json", API_ONLY),
        (
            "task_metadata.json",
            r#"{"files_in_context":[{"path":"a","record_state":"active","record_source":"read_tool","roo_read_date":1760000000000,"roo_edit_date":1760000500000,"user_edit_date":null}]}"#,
        ),
    ]);
    let s = analyze("019a0000-0000-7000-8000-000000000000", &dir);
    assert_eq!(s.metadata.dates_from, DatesFrom::TaskMetadata);
    assert_eq!(s.created_at_ms, Some(1_760_000_000_000));
    assert_eq!(s.last_activity_ms, Some(1_760_000_500_000));
}

#[test]
fn a_message_dated_1e999_is_kept_with_a_diagnostic() {
    let (_d, dir) = task(&[(
        "ui_messages.json",
        r#"[{"ts":1770000000000,"type":"say","say":"text","text":"hello"},{"ts":1e999,"type":"say","say":"text","text":"second"},{"ts":1770000002000,"type":"say","say":"completion_result","text":"done"}]"#,
    )]);
    let s = analyze("t", &dir);
    assert_eq!(s.files.ui_messages, 3);
    assert_eq!(s.metadata.message_count, 3);
    assert!(s.diagnostics.iter().any(|d| d.message.contains("1e999")));
    assert_eq!(s.last_activity_ms, Some(1_770_000_002_000));
}
