//! `string_scan`: where a string literal ends, against serde_json stepping over the same literal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::IgnoredAny;

fuzz_target!(|data: &[u8]| {
    let Ok(tail) = std::str::from_utf8(data) else {
        return;
    };
    let text = format!("\"{tail}");
    let ours = roo_json::string_scan::string_end(text.as_bytes(), 1);
    let scanned = roo_json::string_scan::scan_string(text.as_bytes(), 1);
    assert_eq!(
        ours,
        scanned.as_ref().map(|s| s.end),
        "string_end and scan_string differ"
    );
    let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<IgnoredAny>();
    let theirs = match stream.next() {
        Some(Ok(_)) => Some(stream.byte_offset()),
        _ => None,
    };
    assert_eq!(ours, theirs, "end of {text:?}");
    if let (Some(end), Some(scanned)) = (ours, scanned) {
        let literal = &text[..end];
        assert_eq!(scanned.escapes, literal[1..end - 1].contains('\\'));
        // The decoded text, where serde_json can decode it (it refuses lone surrogates).
        let decoded = roo_json::json_cursor::decode_literal(literal).map(|t| t.into_owned());
        assert_eq!(
            decoded,
            serde_json::from_str::<String>(literal).ok(),
            "{literal:?}"
        );
    }
});
