//! Damaged files of every kind: each read recovers what can be recovered and reports the rest.

use proptest::prelude::*;
use roo_formats::diag::DiagCode;
use roo_formats::{
    read_api_history, read_history_index, read_history_item, read_task_metadata, read_ui_messages,
};
use std::path::Path;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write fixture");
    p
}

const THREE: &str = r#"[{"ts":1,"type":"say","say":"text","text":"hello"},{"ts":2,"type":"ask","ask":"tool","text":"{\"tool\":\"readFile\",\"path\":\"a.ts\"}"},{"ts":3,"type":"say","say":"completion_result","text":"done"}]"#;

fn codes(d: &[roo_formats::Diagnostic]) -> Vec<DiagCode> {
    d.iter().map(|d| d.code).collect()
}

#[test]
fn bom_utf16_surrogates_nulls_truncation_jsonl() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();

    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(THREE.as_bytes());
    let r = read_ui_messages(&write(d, "bom.json", &bom));
    assert_eq!(r.value.len(), 3);
    assert!(codes(&r.diagnostics).contains(&DiagCode::Utf8Bom));

    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(THREE.encode_utf16().flat_map(|u| u.to_le_bytes()))
        .collect();
    let r = read_ui_messages(&write(d, "u16.json", &utf16));
    assert_eq!(r.value.len(), 3);
    assert!(codes(&r.diagnostics).contains(&DiagCode::Utf16));

    let lone = r#"[{"ts":1,"type":"say","say":"text","text":"emoji cut \ud83d here"}]"#;
    let r = read_ui_messages(&write(d, "lone.json", lone.as_bytes()));
    assert_eq!(r.value[0].text.as_deref(), Some("emoji cut \u{fffd} here"));
    assert!(codes(&r.diagnostics).contains(&DiagCode::LoneSurrogate));

    let nulls = r#"[null,{"ts":1,"type":"say","say":"text","text":"a"},null]"#;
    let r = read_ui_messages(&write(d, "nulls.json", nulls.as_bytes()));
    assert_eq!(r.value.len(), 1);
    assert!(codes(&r.diagnostics).contains(&DiagCode::NullEntry));

    let cut = &THREE[..THREE.len() - 30];
    let r = read_ui_messages(&write(d, "cut.json", cut.as_bytes()));
    assert_eq!(r.value.len(), 2, "every complete element is kept");
    assert!(codes(&r.diagnostics).contains(&DiagCode::Truncated));

    let jsonl = "{\"ts\":1,\"type\":\"say\",\"say\":\"text\",\"text\":\"a\"}\n{\"ts\":2,\"type\":\"say\",\"say\":\"text\",\"text\":\"b\"}\n";
    let r = read_ui_messages(&write(d, "l.jsonl", jsonl.as_bytes()));
    assert_eq!(r.value.len(), 2);
    assert!(codes(&r.diagnostics).contains(&DiagCode::Jsonl));

    let r = read_ui_messages(&write(d, "empty.json", b""));
    assert!(r.value.is_empty());
    assert_eq!(codes(&r.diagnostics), vec![DiagCode::Empty]);

    let r = read_ui_messages(&write(
        d,
        "bad-utf8.json",
        b"[{\"ts\":1,\"type\":\"say\",\"say\":\"text\",\"text\":\"caf\xE9\"}]",
    ));
    assert_eq!(r.value[0].text.as_deref(), Some("caf\u{fffd}"));
    assert!(codes(&r.diagnostics).contains(&DiagCode::InvalidUtf8));
}

#[test]
fn missing_file_and_directory_in_place_of_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = read_ui_messages(&dir.path().join("nope.json"));
    assert_eq!(codes(&r.diagnostics), vec![DiagCode::Missing]);
    std::fs::create_dir(dir.path().join("ui_messages.json")).expect("mkdir");
    let r = read_ui_messages(&dir.path().join("ui_messages.json"));
    assert_eq!(codes(&r.diagnostics), vec![DiagCode::Unreadable]);
    assert!(r.diagnostics[0].message.contains("directory"));
}

#[test]
fn wrong_field_types_are_kept_and_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = r#"[{"ts":"yesterday","type":"say","say":"text","text":42,"partial":"no","custom":{"x":1}}]"#;
    let r = read_ui_messages(&write(dir.path(), "t.json", text.as_bytes()));
    let m = &r.value[0];
    assert_eq!(m.ts, None);
    assert_eq!(m.text, None);
    assert_eq!(m.extra.get("ts"), Some(&serde_json::json!("yesterday")));
    assert_eq!(m.extra.get("custom"), Some(&serde_json::json!({"x":1})));
    let paths: Vec<&str> = r.diagnostics.iter().map(|d| d.path.as_str()).collect();
    assert!(
        paths.contains(&"[0].ts") && paths.contains(&"[0].text") && paths.contains(&"[0].partial")
    );
}

#[test]
fn retired_and_unknown_kinds_are_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = r#"[{"ts":1,"type":"say","say":"api_cost","text":"{}"},{"ts":2,"type":"ask","ask":"brand_new_ask","text":"x"},{"ts":3,"type":"ask","ask":"plan_mode_respond","text":"y"}]"#;
    let r = read_ui_messages(&write(dir.path(), "t.json", text.as_bytes()));
    assert_eq!(r.value.len(), 3);
    assert!(r.value[0].say().is_some_and(|s| s.is_retired()));
    assert!(r.value[1].ask().is_some_and(|a| a.is_unknown()));
    // A kind one host family writes (Cline's plan mode answer) is known, not an anomaly.
    assert!(r.value[2]
        .ask()
        .is_some_and(|a| !a.is_unknown() && !a.is_retired()));
    let out = serde_json::to_string(&r.value[1]).expect("serialise");
    assert_eq!(
        out,
        r#"{"ts":2,"type":"ask","ask":"brand_new_ask","text":"x"}"#
    );
    let unusual: Vec<&str> = r
        .diagnostics
        .iter()
        .filter(|d| d.code == roo_formats::DiagCode::UnknownValue)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(unusual.len(), 2, "{unusual:?}");
    assert!(unusual.iter().all(|m| !m.contains("plan_mode_respond")));
}

#[test]
fn api_history_both_shapes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let legacy = r#"[{"role":"user","content":[{"type":"text","text":"<task>\nhi\n</task>"}],"ts":1},{"type":"reasoning","encrypted_content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"new_task","input":{"mode":"code","message":"do"}}],"ts":2}]"#;
    let r = read_api_history(&write(dir.path(), "a.json", legacy.as_bytes()));
    let h = r.value.expect("history");
    assert_eq!(h.messages.len(), 3);
    assert_eq!(h.messages[1].item_type.as_deref(), Some("reasoning"));
    let v2 = r#"{"version":2,"messages":[{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c1","toolName":"new_task","input":{"mode":"code","message":"do"}}]},{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"new_task","output":{"type":"text","value":"ok"}}]}]}"#;
    let r = read_api_history(&write(dir.path(), "b.json", v2.as_bytes()));
    let h = r.value.expect("history");
    assert_eq!(h.format, roo_formats::HistoryFormat::Versioned);
    assert_eq!(h.version, Some(2));
    assert_eq!(h.messages[0].blocks()[0].kind(), "tool-call");
}

#[test]
fn history_item_metadata_and_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let item = r#"{"id":"a","parentTaskId":"p","number":1,"ts":1760000000000,"task":"t","tokensIn":-5,"tokensOut":1,"totalCost":0,"childIds":["c1",7],"toolProtocol":"xml"}"#;
    let r = read_history_item(&write(dir.path(), "h.json", item.as_bytes()));
    let h = r.value.expect("item");
    assert_eq!(h.parent_task_id.as_deref(), Some("p"));
    assert_eq!(h.child_ids.as_deref(), Some(&["c1".to_owned()][..]));
    assert_eq!(h.extra.get("toolProtocol"), Some(&serde_json::json!("xml")));
    let c = codes(&r.diagnostics);
    assert!(
        c.contains(&DiagCode::InvalidValue),
        "negative tokensIn is reported: {c:?}"
    );
    assert!(
        c.contains(&DiagCode::InvalidField),
        "non-string child id is reported"
    );

    let bad = read_history_item(&write(dir.path(), "bad.json", b"{\"id\":"));
    assert!(bad.value.is_none());
    assert_eq!(codes(&bad.diagnostics), vec![DiagCode::Truncated]);

    let meta = r#"{"files_in_context":[{"path":"a.ts","record_state":"active","record_source":"read_tool","roo_read_date":1,"roo_edit_date":null}],"parent_task_id":"p2"}"#;
    let m = read_task_metadata(&write(dir.path(), "m.json", meta.as_bytes()))
        .value
        .expect("meta");
    assert_eq!(m.parent_task_id.as_deref(), Some("p2"));
    assert_eq!(m.files_in_context.len(), 1);

    let index = r#"{"version":1,"updatedAt":5,"entries":[{"id":"a","ts":1760000000000,"task":"x","number":1,"tokensIn":0,"tokensOut":0,"totalCost":0},{"task":"no id"}]}"#;
    let i = read_history_index(&write(dir.path(), "_index.json", index.as_bytes()))
        .value
        .expect("index");
    assert_eq!(i.entries.len(), 1, "entries without an id are skipped");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary bytes never make any reader panic.
    #[test]
    fn readers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = write(dir.path(), "x.json", &bytes);
        let _ = read_ui_messages(&p);
        let _ = read_api_history(&p);
        let _ = read_history_item(&p);
        let _ = read_task_metadata(&p);
        let _ = read_history_index(&p);
    }

    /// JSON-ish bytes (brackets, quotes, escapes, surrogates) never make any reader panic, and a
    /// valid array prefix is never lost.
    #[test]
    fn jsonish_input_never_panics(parts in proptest::collection::vec(prop_oneof![
        Just("[".to_owned()), Just("]".to_owned()), Just("{".to_owned()), Just("}".to_owned()),
        Just(",".to_owned()), Just("\"".to_owned()), Just("\\".to_owned()), Just("\\ud83d".to_owned()),
        Just("\\ude00".to_owned()), Just("\\u00".to_owned()), Just("\"ts\":1".to_owned()), Just("null".to_owned()),
        Just("\n".to_owned()), Just("\u{feff}".to_owned()), "[a-z]{0,4}".prop_map(|s| s),
    ], 0..40)) {
        let text: String = parts.concat();
        let dir = tempfile::tempdir().expect("tempdir");
        let p = write(dir.path(), "x.json", text.as_bytes());
        let _ = read_ui_messages(&p);
        let _ = read_api_history(&p);
        let _ = read_history_item(&p);
    }
}

fn arb_record() -> impl Strategy<Value = serde_json::Value> {
    let kind = prop_oneof![
        Just(("ask", "tool")),
        Just(("ask", "followup")),
        Just(("say", "text")),
        Just(("say", "api_req_started")),
        Just(("say", "browser_action")),
        Just(("ask", "plan_mode_respond")),
    ];
    (
        kind,
        proptest::option::of(0i64..2_000_000_000_000),
        proptest::option::of(".{0,20}"),
        proptest::option::of(any::<bool>()),
        proptest::option::of(proptest::collection::vec("[a-z]{0,5}", 0..3)),
        proptest::option::of((any::<f64>(), ".{0,8}")),
        proptest::option::of("[a-z]{1,6}"),
    )
        .prop_map(|((t, k), ts, text, partial, images, condense, unknown)| {
            let mut m = serde_json::Map::new();
            if let Some(ts) = ts {
                m.insert("ts".into(), ts.into());
            }
            m.insert("type".into(), t.into());
            m.insert(t.into(), k.into());
            if let Some(text) = text {
                m.insert("text".into(), text.into());
            }
            if let Some(p) = partial {
                m.insert("partial".into(), p.into());
            }
            if let Some(i) = images {
                m.insert("images".into(), i.into());
            }
            if let Some((cost, summary)) = condense {
                if cost.is_finite() {
                    m.insert(
                        "contextCondense".into(),
                        serde_json::json!({"summary": summary, "cost": cost}),
                    );
                }
            }
            if let Some(u) = unknown {
                m.insert(
                    format!("x_{u}"),
                    serde_json::json!({"kept": [1, null, "two"]}),
                );
                m.insert("nullField".into(), serde_json::Value::Null);
            }
            serde_json::Value::Object(m)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The fast strict path and the tolerant path read every well-formed record the same way.
    #[test]
    fn strict_and_tolerant_paths_agree(record in arb_record()) {
        let raw = serde_json::to_string(&record).expect("serialise");
        let mut d1 = roo_formats::Diags::for_file("x");
        let fast = roo_formats::ClineMessage::from_json(&raw, "[0]", &mut d1).expect("a record");
        let serde_json::Value::Object(map) = record else { unreachable!() };
        let mut d2 = roo_formats::Diags::for_file("x");
        let slow = roo_formats::ClineMessage::from_object(map, "[0]", &mut d2);
        prop_assert_eq!(&fast, &slow);
        prop_assert!(d1.is_empty());
    }
}

#[test]
fn a_number_beyond_a_double_is_kept_as_null_with_a_diagnostic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = r#"[{"ts":1770000000000,"type":"say","say":"text","text":"a"},{"ts":1e999,"type":"say","say":"text","text":"b \"1e999\""},{"ts":1770000002000,"type":"say","say":"text","text":"c"}]"#;
    let r = read_ui_messages(&write(dir.path(), "ui.json", text.as_bytes()));
    assert_eq!(r.value.len(), 3, "no message is lost");
    assert_eq!(r.value[1].ts, None);
    assert_eq!(r.value[1].text.as_deref(), Some("b \"1e999\""));
    assert!(r
        .diagnostics
        .iter()
        .any(|d| d.path == "[1]" && d.message.contains("1e999")));
    assert!(!r
        .diagnostics
        .iter()
        .any(|d| d.code == roo_formats::DiagCode::NullEntry));
    let api = r#"[{"role":"user","content":"hi","ts":-1e999},{"role":"assistant","content":"ok","ts":5}]"#;
    let r = read_api_history(&write(dir.path(), "api.json", api.as_bytes()));
    let h = r.value.expect("history");
    assert_eq!(h.messages.len(), 2);
    assert_eq!(h.messages[0].ts, None);
}
