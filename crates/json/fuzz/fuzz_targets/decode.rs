//! `decode`: any bytes become a text without panicking; a text that needs no repair (UTF-8, no
//! byte-order mark, no NUL, no `\u` escape) comes back unchanged, and serde_json reads a JSON
//! text the same before and after.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roo_json::decode::decode_json_bytes;
use roo_json::diag::Diags;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let mut diags = Diags::for_file("fuzz");
    let text = decode_json_bytes(data.to_vec(), &mut diags);
    let Ok(original) = std::str::from_utf8(data) else {
        return;
    };
    let plain =
        !original.starts_with('\u{feff}') && !original.contains('\0') && !original.contains("\\u");
    if plain {
        assert_eq!(text, original);
    }
    if let Ok(value) = serde_json::from_str::<Value>(original) {
        if !original.contains('\0') {
            assert_eq!(
                serde_json::from_str::<Value>(&text).ok(),
                Some(value),
                "{original:?}"
            );
        }
    }
});
