//! `json_cursor`: every value the cursor accepts is one serde_json accepts when it steps over a
//! value (`IgnoredAny`: the grammar, not the range of a number), read to the same value where
//! serde_json builds one, and an array it reads whole is the array serde_json reads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roo_json::json_cursor::{read_array_with, Cursor, MAX_NESTING};
use serde::de::IgnoredAny;
use serde_json::Value;

/// serde_json steps over `raw` as one value.
fn ignored(raw: &str) {
    if let Err(e) = serde_json::from_str::<IgnoredAny>(raw) {
        panic!("the cursor accepted {raw:?}, serde_json: {e}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut cursor = Cursor::new(text);
    if let Some(raw) = cursor.value(MAX_NESTING) {
        ignored(raw);
        if cursor.at_end() {
            ignored(text);
            let value = serde_json::from_str::<Value>(raw).ok();
            assert_eq!(serde_json::from_str::<Value>(text).ok(), value);
        }
    }
    let mut cursor = Cursor::new(text);
    if let Some(literal) = cursor.string() {
        let decoded = Cursor::new(literal).string_text().map(|t| t.into_owned());
        assert_eq!(
            decoded,
            serde_json::from_str::<String>(literal).ok(),
            "{literal:?}"
        );
    }
    let mut elements = Vec::new();
    let read = read_array_with(text, |c| c.value(MAX_NESTING - 1), |raw| elements.push(raw));
    for raw in &elements {
        ignored(raw);
    }
    if let Ok(n) = read {
        assert_eq!(n, elements.len());
        ignored(text);
        let theirs = serde_json::from_str::<Vec<Value>>(text).ok();
        let ours: Option<Vec<Value>> = elements
            .iter()
            .map(|raw| serde_json::from_str(raw).ok())
            .collect();
        assert_eq!(ours, theirs);
    }
});
