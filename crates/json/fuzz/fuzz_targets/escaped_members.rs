//! `escaped_json`: members of an object written inside a string literal, read on the literal's
//! bytes, against serde_json decoding the literal and then reading the object. The literal is one
//! the string scanner accepted, as in the readers (the function's precondition).
#![no_main]

use libfuzzer_sys::fuzz_target;
use roo_json::escaped_json::peek_members;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

const NAMES: [&str; 3] = ["a", "tokensIn", "request"];

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    // Half the inputs are an inner text escaped as the extension writes it, half a literal as is.
    let literal = if mode & 1 == 0 {
        serde_json::to_string(text).expect("a string serialises")
    } else {
        format!("\"{text}\"")
    };
    let Some(scanned) = roo_json::string_scan::scan_string(literal.as_bytes(), 1) else {
        return;
    };
    if scanned.end != literal.len() {
        return;
    }
    let unicode = scanned.unicode;
    let Some(found) = peek_members(&literal, unicode, NAMES) else {
        return;
    };
    let inner: String = serde_json::from_str(&literal)
        .unwrap_or_else(|e| panic!("accepted {literal:?}, serde_json: {e}"));
    // serde_json steps over the inner object (the grammar, not the range of a number)...
    if let Err(e) = serde_json::from_str::<IgnoredAny>(&inner) {
        panic!("accepted {literal:?}, inner {inner:?}: {e}");
    }
    assert!(
        inner.trim_start().starts_with('{'),
        "not an object: {inner:?}"
    );
    // ...and where it builds it, each member found is the member it read.
    let Ok(object) = serde_json::from_str::<Map<String, Value>>(&inner) else {
        return;
    };
    for (name, raw) in NAMES.iter().zip(found) {
        let ours = raw.map(|raw| {
            serde_json::from_str::<Value>(&raw)
                .unwrap_or_else(|e| panic!("member {name} {raw:?}: {e}"))
        });
        assert_eq!(
            ours.as_ref(),
            object.get(*name),
            "member {name} of {inner:?}"
        );
    }
});
