//! The header read of the API history (`ApiHead`, `for_each_api_head`) against the tolerant,
//! full read: same heads, same subtasks, same counts and diagnostics, on well-formed messages,
//! wrong field types, escaped markers, deep nesting and damaged files.

use proptest::prelude::*;
use roo_formats::extract::{Extraction, Extractor};
use roo_formats::{for_each_api_head, for_each_api_message, ApiHead, ApiMessage, Diags, LazyText};
use serde_json::{json, Value};
use std::path::Path;

/// An extractor that has already seen two `new_task` calls, so that a delegation result in the
/// message under test has a call to name its child on.
fn primed() -> Extractor {
    let seed = json!({"role": "assistant", "content": [
        {"type": "tool_use", "name": "new_task", "input": {"message": "seed one"}},
        {"type": "tool_use", "id": "call_1", "name": "new_task", "input": {"message": "seed two"}},
    ]});
    let Value::Object(map) = seed else {
        unreachable!()
    };
    let mut x = Extractor::new();
    x.api(&ApiMessage::from_object(
        map,
        "",
        &mut Diags::for_file("seed"),
    ));
    x
}

/// What a header consumer sees of a head: ts, role, the decoded texts, and the subtasks.
fn view_of_head(head: &ApiHead) -> (Option<i64>, Option<String>, Vec<String>, Extraction) {
    let mut x = primed();
    x.api_head(head);
    let mut extraction = x.finish(None);
    extraction.tool_calls.clear();
    (
        head.ts,
        head.role.as_ref().map(|r| r.as_str().to_owned()),
        head.texts.iter().map(|t| t.get().into_owned()).collect(),
        extraction,
    )
}

/// The same, from the whole message through the full extractor (tool calls left out: a head has
/// none).
fn view_of_message(msg: &ApiMessage) -> (Option<i64>, Option<String>, Vec<String>, Extraction) {
    let mut x = primed();
    x.api(msg);
    let mut extraction = x.finish(None);
    extraction.tool_calls.clear();
    (
        msg.ts,
        msg.role.as_ref().map(|r| r.as_str().to_owned()),
        msg.texts().map(str::to_owned).collect(),
        extraction,
    )
}

/// The tolerant reading of one element, as the file reader does it.
fn tolerant(raw: &str) -> Option<(ApiMessage, Diags)> {
    let mut diags = Diags::for_file("x");
    match serde_json::from_str::<Value>(raw).unwrap_or(Value::Null) {
        Value::Object(map) => Some((ApiMessage::from_object(map, "[0]", &mut diags), diags)),
        _ => None,
    }
}

fn check_element(raw: &str) -> Result<(), TestCaseError> {
    let slow = tolerant(raw);
    if let Some((msg, _)) = &slow {
        // The head built from the tolerant message says what the message says.
        let head = ApiHead::from_message(msg.clone());
        prop_assert_eq!(view_of_head(&head), view_of_message(msg));
    }
    if let Some(fast) = ApiHead::from_json(raw) {
        let Some((msg, diags)) = slow else {
            return Err(TestCaseError::fail(format!(
                "the strict path read what the tolerant one skips: {raw}"
            )));
        };
        prop_assert!(
            diags.is_empty(),
            "the strict path accepted an element the tolerant one reports: {}",
            raw
        );
        prop_assert_eq!(view_of_head(&fast), view_of_message(&msg));
    }
    Ok(())
}

const TEXTS: [&str; 10] = [
    "hello",
    "   ",
    "<task>\nDo the thing</task>",
    "<environment_details>\n# Current Workspace Directory (/w/p) Files\n# Current Mode\n<slug>code</slug>",
    "I will delegate.\n<new_task>\n<mode>code</mode>\n<message>Build the parser</message>\n</new_task>",
    "[new_task in 💻 Code mode: 'Write the tests'] Result:\nok",
    "Delegated to child task 0190-abc",
    "  Delegated to child task 0190-def and more",
    "line \u{1b}[31m with a control character and \"quotes\" \\ and / slash",
    "",
];

fn arb_text() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0..TEXTS.len()).prop_map(|i| Value::String(TEXTS[i].to_owned())),
        ".{0,12}".prop_map(Value::String),
    ]
}

fn arb_any() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(5)),
        Just(json!(true)),
        Just(json!(1.5)),
        arb_text(),
        Just(json!({"nested": [1, {"a": null}]})),
    ]
}

fn arb_input() -> impl Strategy<Value = Value> {
    prop_oneof![
        (arb_text(), proptest::option::of("[a-z]{1,6}"))
            .prop_map(|(m, mode)| { json!({"mode": mode, "message": m, "todos": "- [ ] one"}) }),
        arb_text().prop_map(|c| json!({"content": c})),
        arb_any(),
    ]
}

fn arb_block() -> impl Strategy<Value = Value> {
    let name = prop_oneof![
        Just(json!("new_task")),
        Just(json!("newTask")),
        Just(json!("read_file")),
        Just(json!(7)),
        Just(Value::Null),
    ];
    let id = prop_oneof![Just(json!("call_1")), Just(json!(3)), Just(Value::Null)];
    prop_oneof![
        (arb_text(), any::<bool>()).prop_map(|(t, bad)| if bad {
            json!({"type": "text", "text": 3})
        } else {
            json!({"type": "text", "text": t})
        }),
        Just(json!({"type": "text"})),
        arb_text(),
        arb_any(),
        Just(json!([[1]])),
        (id.clone(), name.clone(), arb_input())
            .prop_map(|(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input})),
        (id.clone(), name, arb_input(), any::<bool>()).prop_map(|(id, name, input, args)| {
            if args {
                json!({"type": "tool-call", "toolCallId": id, "toolName": name, "input": null, "args": input})
            } else {
                json!({"type": "tool-call", "toolCallId": id, "toolName": name, "input": input})
            }
        }),
        (id.clone(), arb_text(), prop_oneof![Just(json!(false)), Just(json!("no"))], 0..3usize)
            .prop_map(|(id, t, err, shape)| {
                let content = match shape {
                    0 => t,
                    1 => json!([{"type": "text", "text": t}]),
                    _ => json!({"value": t}),
                };
                json!({"type": "tool_result", "tool_use_id": id, "content": content, "is_error": err})
            }),
        (id, arb_text(), any::<bool>()).prop_map(|(id, t, result)| {
            if result {
                json!({"type": "tool-result", "toolCallId": id, "toolName": "new_task", "result": t})
            } else {
                json!({"type": "tool-result", "toolCallId": id, "output": {"type": "text", "value": t}})
            }
        }),
        arb_any().prop_map(|t| json!({"type": "thinking", "thinking": t, "signature": "s"})),
        arb_any().prop_map(|t| json!({"type": "reasoning", "text": t})),
        arb_any().prop_map(|t| json!({"type": t, "text": "x", "cache_control": {"type": "ephemeral"}})),
    ]
}

fn arb_message() -> impl Strategy<Value = Value> {
    let role = prop_oneof![
        Just(json!("user")),
        Just(json!("assistant")),
        Just(json!("tool")),
        Just(json!("system")),
        Just(Value::Null),
        Just(json!(5)),
    ];
    let content = prop_oneof![
        arb_text(),
        proptest::collection::vec(arb_block(), 0..5).prop_map(Value::Array),
        arb_block(),
        Just(Value::Null),
        Just(json!(12)),
    ];
    let ts = prop_oneof![
        (0i64..2_000_000_000_000).prop_map(Value::from),
        Just(json!(1.5)),
        Just(json!("1700000000000")),
        Just(json!(u64::MAX)),
        Just(Value::Null),
    ];
    let extra = prop_oneof![
        Just(json!({})),
        Just(json!({"id": "m1", "isSummary": true, "condenseParent": "c"})),
        Just(json!({"id": 4})),
        Just(json!({"isSummary": "yes"})),
        Just(json!({"isTruncationMarker": null, "truncationId": 9})),
        Just(json!({"type": "reasoning", "summary": []})),
        Just(json!({"type": 8})),
        Just(json!({"unknown": {"deep": [[1, 2], {"x": "y"}]}})),
    ];
    (
        proptest::option::of(role),
        proptest::option::of(content),
        proptest::option::of(ts),
        extra,
    )
        .prop_map(|(role, content, ts, extra)| {
            let mut m = serde_json::Map::new();
            if let Some(r) = role {
                m.insert("role".into(), r);
            }
            if let Some(c) = content {
                m.insert("content".into(), c);
            }
            if let Some(t) = ts {
                m.insert("ts".into(), t);
            }
            if let Value::Object(e) = extra {
                m.extend(e);
            }
            Value::Object(m)
        })
}

/// Ways to write the same JSON differently: `<` as `\u003c`, a duplicate key first.
fn rewrite(raw: &str, how: u8) -> String {
    match how {
        1 => raw.replace('<', "\\u003c"),
        2 => raw.replacen('{', "{\"ts\":1,\"role\":\"user\",", 1),
        3 => raw.replacen('{', "{\"content\":\"first\",", 1),
        4 => raw.replace("Delegated", "\\u0044elegated"),
        _ => raw.to_owned(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Strict head ≡ tolerant message, on every generated element.
    #[test]
    fn head_paths_agree(msg in arb_message(), how in 0u8..5) {
        let raw = rewrite(&serde_json::to_string(&msg).expect("serialise"), how);
        check_element(&raw)?;
    }

    /// Not objects at all.
    #[test]
    fn non_objects_go_to_the_tolerant_path(v in arb_any().prop_filter("not an object", |v| !v.is_object())) {
        let raw = serde_json::to_string(&v).expect("serialise");
        prop_assert!(ApiHead::from_json(&raw).is_none());
    }
}

fn arb_request_text() -> impl Strategy<Value = String> {
    let request = prop_oneof![
        arb_text(),
        Just(Value::Null),
        Just(json!(4)),
        Just(json!(["<task>x</task>"])),
    ];
    (
        proptest::option::of(request),
        proptest::option::of(arb_any()),
        0u8..7,
    )
        .prop_map(|(request, other, how)| {
            let mut m = serde_json::Map::new();
            if let Some(o) = other {
                m.insert("cost".into(), o);
            }
            if let Some(r) = request {
                m.insert("request".into(), r);
            }
            let text = serde_json::to_string(&Value::Object(m)).expect("serialise");
            match how {
                1 => text.replacen('{', "{\"request\":\"first\",", 1),
                2 => text.replacen('{', "{\"x\":\"\\ud800\",", 1),
                3 => format!("[{text}]"),
                4 => text.chars().take(text.chars().count() / 2).collect(),
                5 => format!("{text} trailing"),
                6 => text.replacen(
                    '{',
                    &format!("{{\"deep\":{}{},", "[".repeat(130), "]".repeat(130)),
                    1,
                ),
                _ => text,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// The borrowed read of `request` equals the full parse's.
    #[test]
    fn request_peek_equals_the_full_parse(text in arb_request_text()) {
        prop_assert_eq!(
            roo_formats::ui::ApiReqInfo::parse_request(&text),
            roo_formats::ui::ApiReqInfo::parse(&text).and_then(|r| r.request)
        );
    }
}

#[test]
fn the_marker_pre_check_never_hides_a_marker() {
    let texts = [
        r#""plain""#,
        r#""\u003cnew_task>""#,
        r#""a\n<new_task>""#,
        r#""[new_task\u0020in ""#,
    ];
    for raw in texts {
        let t = LazyText::Json(raw);
        for marker in ["<new_task>", "[new_task in ", "<environment_details>"] {
            if t.get().contains(marker) {
                assert!(t.may_contain(marker), "{raw} / {marker}");
            }
        }
    }
}

/// Values nested around `serde_json`'s recursion limit: whatever the tolerant reader cannot read,
/// the strict one does not read either.
#[test]
fn deep_nesting_matches_the_tolerant_reader() {
    for depth in [
        1usize, 60, 61, 62, 63, 64, 65, 100, 123, 124, 125, 126, 127, 128, 130, 200,
    ] {
        let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        for raw in [
            format!(r#"{{"role":"user","content":[{{"type":"tool_result","content":{nested}}}]}}"#),
            format!(r#"{{"role":"user","x":{nested},"content":"hi"}}"#),
            format!(
                r#"{{"role":"user","content":[{{"type":"tool_use","name":"new_task","input":{{"message":"m","k":{nested}}}}}]}}"#
            ),
            format!(r#"{{"role":"user","content":[{nested}]}}"#),
        ] {
            check_element(&raw).unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        }
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write fixture");
    p
}

/// Whole files, damaged in every way the readers know: same counts, shapes, diagnostics and
/// heads from both readers.
#[test]
fn file_readers_agree_on_damaged_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = r#"[{"role":"user","content":[{"type":"text","text":"<task>go</task>"},{"type":"text","text":"<environment_details>\n# Current Mode\n<slug>ask</slug></environment_details>"}],"ts":1},null,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"new_task","input":{"mode":"code","message":"child \ud800 one"}}],"ts":2},"a string",{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Delegated to child task c-1"}],"ts":3},{"role":"user","content":[{"type":"text","text":5}],"ts":4.5},{"role":"assistant","content":"<new_task><message>xml child</message></new_task>","ts":"6"}]"#;
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(good.encode_utf16().flat_map(|u| u.to_le_bytes()))
        .collect();
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(good.as_bytes());
    let jsonl = "{\"role\":\"user\",\"content\":\"a\",\"ts\":1}\n{broken\n{\"role\":\"assistant\",\"content\":[{\"type\":\"tool-call\",\"toolCallId\":\"c\",\"toolName\":\"new_task\",\"args\":{\"message\":\"v2 child\"}}]}\n";
    let wrapper = r#"{"version":2,"messages":[{"role":"user","content":"hi"},{"role":"tool","content":[{"type":"tool-result","toolCallId":"c","output":{"type":"text","value":"Delegated to child task c-2"}}]}]}"#;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("plain", good.as_bytes().to_vec()),
        ("truncated", good.as_bytes()[..good.len() / 2].to_vec()),
        ("utf16", utf16),
        ("bom", bom),
        ("jsonl", jsonl.as_bytes().to_vec()),
        ("wrapper", wrapper.as_bytes().to_vec()),
        ("wrapper cut", wrapper.as_bytes()[..wrapper.len() - 20].to_vec()),
        ("wrapper, version last", wrapper.replacen(r#""version":2,"#, "", 1).replacen("]}]}", r#"]}],"version":3}"#, 1).into_bytes()),
        ("wrapper, messages twice", wrapper.replacen("]}]}", r#"]}],"messages":[]}"#, 1).into_bytes()),
        ("wrapper, bad element", wrapper.replacen(r#"{"role":"user","content":"hi"}"#, r#"{"role":"user","content":"hi"},{"role":7,"ts":"x"}"#, 1).into_bytes()),
        ("wrapper, trailing", format!("{wrapper}, ").into_bytes()),
        ("wrapper, not an array", br#"{"version":2,"messages":{"role":"user"}}"#.to_vec()),
        ("empty", Vec::new()),
        ("garbage", b"not json".to_vec()),
        ("invalid utf8", b"[{\"role\":\"user\",\"content\":\"a\xFFb\"}]".to_vec()),
        ("escaped markers", br#"[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"new_task","input":{"message":"m"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"\u0044elegated to child task c-9"}]}]},{"role":"assistant","content":[{"type":"text","text":"\u003cnew_task><message>esc</message></new_task>"}]},{"role":"user","content":[{"type":"text","text":"[new_task in Code mode: 'a\u0027] Result:"}]}]"#.to_vec()),
        ("foreign", br#"[{"author":"human","text":"hi"},{"type":"say","say":"text"}]"#.to_vec()),
    ];
    for (name, bytes) in cases {
        let path = write(dir.path(), &format!("{name}.json"), &bytes);
        let mut full = Vec::new();
        let (s1, f1) = for_each_api_message(&path, |i, m| full.push((i, view_of_message(&m))));
        let mut heads = Vec::new();
        let (s2, f2) = for_each_api_head(&path, |i, h| heads.push((i, view_of_head(&h))));
        assert_eq!(full, heads, "{name}");
        assert_eq!(s1.kept, s2.kept, "{name}");
        assert_eq!(s1.stats, s2.stats, "{name}");
        assert_eq!(s1.diagnostics, s2.diagnostics, "{name}");
        assert_eq!(f1, f2, "{name}");
    }
    let missing = dir.path().join("missing.json");
    let (s, f) = for_each_api_head(&missing, |_, _| {});
    assert!(!s.exists());
    assert!(f.is_none());
}

/// The UI reader's one-pass read (a well-formed array straight into messages) and its fallback
/// (elements re-read one by one from where the one-pass read stopped) against the per-element
/// reference, on files damaged at any point.
fn ui_reference(
    bytes: &[u8],
) -> (
    Vec<roo_formats::ClineMessage>,
    roo_formats::json::ArrayStats,
) {
    let mut diags = Diags::for_file("x");
    let text = roo_formats::decode::decode_json_bytes(bytes.to_vec(), &mut diags);
    let mut out = Vec::new();
    let stats = roo_formats::json::read_array(&text, &["messages"], &mut diags, |i, raw| {
        let mut d = Diags::for_file("x");
        if let Some(m) = roo_formats::ClineMessage::from_json(raw.get(), &format!("[{i}]"), &mut d)
        {
            out.push(m);
        }
    });
    (out, stats)
}

fn arb_ui_record() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..2_000_000_000_000, arb_text())
            .prop_map(|(ts, t)| json!({"ts": ts, "type": "say", "say": "text", "text": t})),
        Just(
            json!({"ts": 2, "type": "ask", "ask": "tool", "text": "{\"tool\":\"newTask\",\"content\":\"go\"}", "partial": false})
        ),
        Just(json!({"ts": 3, "type": "say", "say": "new_task_started", "x": [1, {"y": null}]})),
        Just(json!({"ts": 4.5, "type": "say", "say": "text"})),
        Just(json!({"ts": 5, "type": "say"})),
        Just(json!({"role": "user", "content": "foreign"})),
        Just(Value::Null),
        Just(json!(7)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn ui_one_pass_and_fallback_agree(records in proptest::collection::vec(arb_ui_record(), 0..8),
                                      cut in proptest::option::of(0usize..400),
                                      how in 0u8..8) {
        let mut text = serde_json::to_string(&Value::Array(records)).expect("serialise");
        match how {
            1 => text.push_str(" trailing"),
            2 => text = format!("{{\"messages\":{text}}}"),
            3 => text = format!("\u{feff}{text}"),
            4 => text = format!("{{\"version\":2,\"messages\":{text},\"other\":[1]}}"),
            5 => text = format!("{{\"messages\":{text},\"version\":\"two\",\"messages\":[]}}"),
            6 => text = format!("{{\"entries\":[],\"messages\":{text}}} {{}}"),
            7 => text = format!("{{\"messages\":{text},\"version\":2.5}}"),
            _ => {}
        }
        if let Some(cut) = cut {
            let chars: Vec<char> = text.chars().collect();
            if cut < chars.len() {
                text = chars[..cut].iter().collect();
            }
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(dir.path(), "ui_messages.json", text.as_bytes());
        let mut got = Vec::new();
        let summary = roo_formats::for_each_ui_message(&path, |i, m| got.push((i, m)));
        let (want, stats) = ui_reference(text.as_bytes());
        prop_assert_eq!(summary.kept, want.len());
        prop_assert_eq!(got.iter().map(|(i, _)| *i).collect::<Vec<_>>(), (0..want.len()).collect::<Vec<_>>());
        prop_assert_eq!(got.into_iter().map(|(_, m)| m).collect::<Vec<_>>(), want);
        prop_assert_eq!(summary.stats, Some(stats));
    }
}

/// The strict reader takes the messages every era writes (the fallback would give the same heads,
/// only slower, so this checks that it is not taken): string and block content, tool calls and
/// results of both protocols, reasoning, condensation fields, escapes of every kind.
#[test]
fn strict_reader_takes_the_usual_shapes() {
    let messages = [
        r#"{"role":"user","content":"<task>\nFix \"it\" \\ now</task>\n<environment_details>\n# Current Mode\n<slug>code</slug>","ts":1712000000000}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"Working \u00e9\ud83d\ude00"},{"type":"tool_use","id":"toolu_1","name":"new_task","input":{"mode":"code","message":"Write the tests"}}],"ts":1712000000100}"#,
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"Delegated to child task 0190-abc"}],"is_error":false},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]}"#,
        r#"{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c1","toolName":"newTask","args":{"message":"m"}},{"type":"reasoning","text":"think"}]}"#,
        r#"{"role":"tool","content":[{"type":"tool-result","toolCallId":"c1","toolName":"newTask","output":"Delegated to child task 0190-def"}]}"#,
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"sig"}],"isSummary":true,"condenseId":"c-1","condenseParent":null,"id":"m1"}"#,
        r#"{"type":"reasoning","summary":[],"content":null,"encrypted_content":"abc","ts":1712000000200}"#,
        r#"{ "role" : "user" , "content" : [ "bare text" , null , 3 , true ] , "ts" : -5 }"#,
    ];
    for raw in messages {
        let head = ApiHead::from_json(raw);
        assert!(head.is_some(), "the strict reader declined {raw}");
        check_element(raw).expect("same head as the tolerant read");
    }
    let file = format!("[{}]", messages.join(","));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("api_conversation_history.json");
    std::fs::write(&path, &file).expect("write");
    let mut heads = 0;
    let (summary, _) = for_each_api_head(&path, |_, _| heads += 1);
    assert_eq!((heads, summary.kept), (messages.len(), messages.len()));
    assert!(summary.diagnostics.is_empty());
    // What the strict reader declines: wrong types the tolerant reader reports, a float time,
    // content given twice, a nested content array, trailing text.
    for raw in [
        r#"{"role":"user","content":"a","ts":1.5}"#,
        r#"{"role":7,"content":"a"}"#,
        r#"{"role":"user","content":"a","content":"b"}"#,
        r#"{"role":"user","content":[["nested"]]}"#,
        r#"{"role":"user","content":"a"} x"#,
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":4}]}"#,
    ] {
        assert!(ApiHead::from_json(raw).is_none(), "{raw}");
    }
}
