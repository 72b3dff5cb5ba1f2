//! `json::read_array`: on any text it reads without panicking; on a JSON array serde_json reads,
//! it hands over the same elements, in order, and reports nothing broken.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roo_json::diag::Diags;
use roo_json::json::{max_nesting, read_array, Shape};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut diags = Diags::for_file("fuzz");
    let mut elements = Vec::new();
    let stats = read_array(text, &["messages"], &mut diags, |index, raw| {
        assert_eq!(index, elements.len());
        elements.push(raw.get().to_owned());
    });
    assert!(stats.elements <= elements.len());
    let Ok(Value::Array(theirs)) = serde_json::from_str::<Value>(text) else {
        return;
    };
    if max_nesting(text) >= 64 {
        return;
    }
    assert!(
        matches!(stats.shape, Shape::Array),
        "{text:?}: {:?}",
        stats.shape
    );
    assert!(!stats.incomplete);
    let ours: Vec<Value> = elements
        .iter()
        .map(|raw| serde_json::from_str(raw).unwrap_or_else(|e| panic!("{raw:?}: {e}")))
        .collect();
    assert_eq!(ours, theirs);
});
