//! The strict reading of UI records (the one-pass read of a well-formed file) against the
//! tolerant one: whatever the strict reader takes, the tolerant reader reads the same with nothing
//! to report; and it takes the records every era writes.

use super::ClineMessage;
use crate::diag::Diags;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// The strict reading of `raw`.
fn strict(raw: &str) -> Option<ClineMessage> {
    super::strict::read_whole(raw)
}

/// The tolerant reading, with its diagnostics.
fn tolerant(raw: &str) -> Option<(ClineMessage, Diags)> {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(raw) else {
        return None;
    };
    let mut d = Diags::for_file("");
    let m = ClineMessage::from_object(map, "", &mut d);
    Some((m, d))
}

#[test]
fn takes_the_records_every_era_writes() {
    let records = [
        r#"{"ts":1712000000000,"type":"say","say":"text","text":"Fix \"it\"\n\\ now é😀 \u00e9\ud83d\ude00","images":["data:image/png;base64,AAA"],"partial":false}"#,
        r#"{"ts":1712000000100,"type":"say","say":"api_req_started","text":"{\"request\":\"<task>x</task>\",\"tokensIn\":10,\"cost\":0.25}","apiProtocol":"anthropic"}"#,
        r#"{"ts":2,"type":"ask","ask":"tool","text":"{\"tool\":\"newTask\",\"mode\":\"code\",\"content\":\"go\"}","partial":true,"isProtected":null,"isAnswered":true}"#,
        r#"{"ts":3,"type":"say","say":"checkpoint_saved","text":"abc","checkpoint":{"from":"a","to":"b"},"conversationHistoryIndex":4}"#,
        r#"{"ts":4,"type":"say","say":"condense_context","contextCondense":{"cost":0.5,"prevContextTokens":100,"newContextTokens":20,"summary":"s"}}"#,
        r#"{"ts":5,"type":"say","say":"reasoning","reasoning":"hm","text":null,"lastCheckpointHash":"h","modelInfo":{"id":"m","nested":[1,[2,[3]]]}}"#,
        r#" { "ts" : 6 , "type" : "say" , "say" : "user_feedback" , "text" : "" , "progressStatus" : null } "#,
    ];
    for raw in records {
        let ours = strict(raw);
        assert!(ours.is_some(), "the strict reader declined {raw}");
        let (want, d) = tolerant(raw).expect("an object");
        assert!(d.is_empty(), "{raw}");
        assert_eq!(ours, Some(want), "{raw}");
    }
    for raw in [
        r#"{"ts":1.5,"type":"say","say":"text"}"#,
        r#"{"ts":1,"type":"say"}"#,
        r#"{"ts":1,"type":"say","say":"text","text":7}"#,
        r#"{"ts":1,"type":"say","say":"text","images":["a",null]}"#,
        r#"{"ts":1,"type":"say","say":"text","partial":"yes"}"#,
        r#"{"ts":1,"type":"say","say":"text","contextCondense":[1]}"#,
        r#"{"ts":1,"type":"say","say":"text"} x"#,
        // The field of the other kind, even null, stays among the unknown ones in the tolerant
        // reading: left to it.
        r#"{"ts":1,"type":"ask","ask":"tool","say":null}"#,
        r#"{"ts":1,"type":"say","say":"text","ask":"followup"}"#,
    ] {
        assert_eq!(strict(raw), None, "{raw}");
    }
}

fn arb_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        ".{0,10}".prop_map(Value::from),
        Just(json!("esc \" \\ \n \u{1b} é")),
        Just(json!(["a", "b"])),
        Just(json!(["a", 1])),
        Just(json!({"cost": 0.5, "summary": "s"})),
        Just(json!({"cost": "x"})),
    ]
}

fn arb_record() -> impl Strategy<Value = Value> {
    let fields = [
        "ts",
        "type",
        "ask",
        "say",
        "text",
        "images",
        "partial",
        "reasoning",
        "conversationHistoryIndex",
        "checkpoint",
        "progressStatus",
        "contextCondense",
        "contextTruncation",
        "isProtected",
        "apiProtocol",
        "isAnswered",
        "modelInfo",
    ];
    let kinds = prop_oneof![
        Just(json!({"type": "say", "say": "text"})),
        Just(json!({"type": "ask", "ask": "tool"})),
        Just(json!({"type": "say", "say": "api_req_started"})),
        Just(json!({"type": "say"})),
        Just(json!({})),
    ];
    (
        kinds,
        proptest::collection::vec((0..fields.len(), arb_value()), 0..6),
    )
        .prop_map(move |(kind, extra)| {
            let mut m = match kind {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            for (i, v) in extra {
                m.insert(fields[i].to_owned(), v);
            }
            Value::Object(m)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6000))]

    /// Whatever the strict reader takes, the tolerant reader reads the same, with nothing to
    /// report.
    #[test]
    fn strict_is_the_tolerant_reading(record in arb_record()) {
        let raw = serde_json::to_string(&record).expect("serialise");
        if let Some(ours) = strict(&raw) {
            let (want, d) = tolerant(&raw).expect("an object");
            prop_assert!(d.is_empty(), "the strict reader took a record the tolerant one reports: {}", raw);
            prop_assert_eq!(ours, want);
        }
    }
}

/// A reader of only some texts: those of `say:"text"` records.
fn only_say_text(kind: &super::MessageKind) -> bool {
    matches!(kind, super::MessageKind::Say(super::Say::Text))
}

/// The strict reading of `raw` with only `say:"text"` texts decoded.
fn lean(raw: &str) -> Option<super::StrictRecord<'_>> {
    let mut c = crate::json_cursor::Cursor::new(raw);
    let record = super::read_record(&mut c, Some(&only_say_text))?;
    c.at_end().then_some(record)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6000))]

    /// Reading only some texts takes the records the full reading takes, and gives the same
    /// message but for the texts it was not asked for, whose literal it hands over instead.
    #[test]
    fn texts_not_asked_for_are_only_stepped_over(record in arb_record()) {
        let raw = serde_json::to_string(&record).expect("serialise");
        let full = strict(&raw);
        let ours = lean(&raw);
        prop_assert_eq!(ours.is_some(), full.is_some(), "{}", raw);
        if let (Some(ours), Some(mut full)) = (ours, full) {
            if only_say_text(&full.kind) {
                prop_assert_eq!(ours.unread_text, None);
            } else {
                let text = full.text.take();
                let unread = ours
                    .unread_text
                    .map(|u| serde_json::from_str::<String>(u.literal()).expect("a checked literal"));
                prop_assert_eq!(unread, text, "{}", raw);
            }
            prop_assert_eq!(ours.message, full);
        }
    }

    /// Blankness read from a literal is that of its decoded text.
    #[test]
    fn blankness_from_the_literal(text in proptest::collection::vec(prop_oneof![
        Just(" "), Just("\n"), Just("\t"), Just("\r"), Just("\u{c}"), Just("\u{b}"),
        Just("\u{a0}"), Just("\u{3000}"), Just("\u{2028}"), Just("\u{85}"), Just("a"), Just("\""),
        Just("\\"), Just("/"), Just("\u{8}"), Just("é"),
    ], 0..8)) {
        let text = text.concat();
        let literal = serde_json::to_string(&text).expect("serialise");
        prop_assert_eq!(super::literal_is_blank(&literal), text.trim().is_empty(), "{:?}", literal);
        // Escaped the long way too.
        let escaped: String = text.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
        let literal = format!("\"{escaped}\"");
        prop_assert_eq!(super::literal_is_blank(&literal), text.trim().is_empty(), "{}", literal);
    }
}

#[test]
fn a_text_stepped_over_is_still_checked() {
    // A lone surrogate: the full reading refuses the record, and so does the lean one.
    let raw = r#"{"ts":1,"type":"say","say":"command_output","text":"x\ud800y"}"#;
    assert!(strict(raw).is_none());
    assert!(lean(raw).is_none());
    // A pair is fine, and handed over as its literal.
    let raw = r#"{"ts":1,"type":"say","say":"command_output","text":"x\ud83d\ude00y"}"#;
    let record = lean(raw).expect("read");
    assert_eq!(record.message.text, None);
    let unread = record.unread_text.expect("stepped over");
    assert_eq!(unread.literal(), r#""x\ud83d\ude00y""#);
    assert!(unread.has_unicode_escape());
    // The kind after the text: decided at the end, decoded when asked for.
    let raw = r#"{"text":"hello","ts":1,"type":"say","say":"text"}"#;
    let record = lean(raw).expect("read");
    assert_eq!(record.message.text.as_deref(), Some("hello"));
    assert_eq!(record.unread_text, None);
    // A text that is not a string is refused by both.
    let raw = r#"{"ts":1,"type":"say","say":"reasoning","text":7}"#;
    assert!(strict(raw).is_none());
    assert!(lean(raw).is_none());
}
