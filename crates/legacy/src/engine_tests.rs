use super::*;
use serde_json::json;

fn candidates(records: Value) -> Vec<EngineCandidate> {
    engine_candidates(&records.to_string()).unwrap_or_default()
}

fn said(text: &str) -> Value {
    json!({ "type": "say", "say": "text", "ts": 7, "text": text })
}

#[test]
fn every_pattern_compiles() {
    assert!(patterns_compile());
}

#[test]
fn a_block_is_closed_by_its_own_name_in_any_case() {
    let c = candidates(json!([said(
        "<Delegate x='1'><mode>Code</mode><message>Closed by its own name</message></DELEGATE>"
    )]));
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].kind, c[0].mode.as_str()), (Kind::Plain, "code"));
    assert_eq!(c[0].message, "Closed by its own name");
    let open = candidates(json!([said(
        "<delegate><mode>code</mode><message>Never closed at all</message></other>"
    )]));
    assert!(open.iter().all(|c| c.message != "Never closed at all"));
}

#[test]
fn new_task_needs_an_ascii_word_boundary() {
    let c = candidates(json!([said(
        "<new_taskx><mode>a</mode><message>not this one</message></new_task> \
         <new_task-x><mode>b</mode><message>but this one</message></new_task>"
    )]));
    let xml: Vec<_> = c.iter().filter(|c| c.kind == Kind::Xml).collect();
    assert_eq!(xml.len(), 1);
    assert_eq!(xml[0].message, "but this one");
}

#[test]
fn a_tool_ask_keeps_its_raw_mode_and_task_id() {
    let tool =
        json!({ "tool": "newTask", "mode": "💻 Code", "content": "Write it all", "taskId": "t-1" });
    let c =
        candidates(json!([{ "type": "ask", "ask": "tool", "ts": 3, "text": tool.to_string() }]));
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].kind, Kind::Tool);
    assert_eq!(c[0].mode, "💻 Code");
    assert_eq!(c[0].task_id, Some(json!("t-1")));
    assert_eq!(
        (c[0].timestamp.clone(), c[0].real_ts),
        (json!(3), Some(3.0))
    );
}

#[test]
fn times_follow_the_legacy_fallbacks() {
    let c = candidates(json!([
        { "type": "say", "say": "text", "ts": 0, "timestamp": "2024-01-01", "text": "<task>second field</task>" },
        { "type": "say", "say": "text", "text": "<task>no time at all</task>" },
    ]));
    assert_eq!(c[0].timestamp, json!("2024-01-01"));
    assert_eq!(c[0].real_ts, Some(0.0));
    assert_eq!((c[1].timestamp.clone(), c[1].real_ts), (Value::Null, None));
}

#[test]
fn with_nothing_per_record_the_joined_texts_are_read() {
    let c = candidates(json!([
        said("<new_task><mode>Code</mode>"),
        said("<message>spans two records</message></new_task>"),
    ]));
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].mode.as_str(), c[0].message.as_str()),
        ("code", "spans two records")
    );
    assert_eq!((c[0].timestamp.clone(), c[0].real_ts), (Value::Null, None));
}

#[test]
fn where_the_legacy_extractor_throws_there_is_an_error() {
    assert_eq!(engine_candidates("[{"), Err(EngineError::NotJson));
    assert_eq!(
        engine_candidates(&json!([said("<task>first task body</task>"), null]).to_string()),
        Err(EngineError::NullRecord(1))
    );
    assert_eq!(engine_candidates(r#"{"items":[]}"#), Ok(Vec::new()));
}

#[test]
fn a_french_delegation_gives_its_mode() {
    let c = candidates(json!([said(
        "Je délègue cette partie au mode Code pour la suite."
    )]));
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].mode, "code");
    let asked = candidates(
        json!([{ "type": "ask", "ask": "followup", "text": "Je confie ceci au mode debug" }]),
    );
    assert!(asked.is_empty());
}
