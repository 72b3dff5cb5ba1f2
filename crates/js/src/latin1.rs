//! JSON text for a one-byte JavaScript string.
//!
//! V8 keeps a string whose characters are all below U+0100 one byte per character, and N-API's
//! `napi_create_string_latin1` fills one with a plain copy of Latin-1 bytes. A UTF-8 text must be
//! decoded instead, which for a 27 MB tree with a few accented titles takes longer than a third of
//! `JSON.parse` itself. [`to_latin1_json`] writes the JSON text straight as Latin-1 bytes: ASCII
//! as is, U+0080..=U+00FF as their one byte, and every character above as `\uXXXX` escapes (two,
//! a surrogate pair, past U+FFFF), which `JSON.parse` reads back as the same character. Outside
//! strings JSON is ASCII, so only string contents change. The bytes are not UTF-8: they are
//! meant for a JavaScript engine, never for a file.

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io::{self, Write};

/// `value` as compact JSON text in Latin-1 (see the module documentation).
pub fn to_latin1_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(4096);
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out,
        Latin1Formatter,
    ))?;
    Ok(out)
}

/// serde_json's compact formatter (the trait's default methods), writing string contents as
/// Latin-1.
#[derive(Debug, Clone, Copy, Default)]
pub struct Latin1Formatter;

impl Formatter for Latin1Formatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        text: &str,
    ) -> io::Result<()> {
        let mut rest = text;
        while !rest.is_empty() {
            // Most text is ASCII: copy each run of it at once.
            let ascii = rest
                .bytes()
                .position(|b| !b.is_ascii())
                .unwrap_or(rest.len());
            w.write_all(&rest.as_bytes()[..ascii])?;
            let mut chars = rest[ascii..].chars();
            let Some(c) = chars.next() else { break };
            rest = chars.as_str();
            match u8::try_from(u32::from(c)) {
                Ok(byte) => w.write_all(&[byte])?,
                Err(_) => {
                    for unit in c.encode_utf16(&mut [0; 2]) {
                        write!(w, "\\u{unit:04x}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// The bytes read as Latin-1 characters, as `napi_create_string_latin1` reads them.
    fn as_latin1(bytes: &[u8]) -> String {
        bytes.iter().map(|&b| char::from(b)).collect()
    }

    #[test]
    fn reads_back_as_the_same_value() {
        let v = json!({
            "ascii": "plain \"quoted\" \\ /\n\t\u{1}",
            "latin1": "déjà vu, ½ ÿ",
            "bmp": "résumé — ✓ 日本",
            "astral": "a 😀 b",
            "n": [1, -2.5, 1e21, null, true],
            "clé": {"ÿ": "€"},
        });
        let bytes = to_latin1_json(&v).expect("serialises");
        let text = as_latin1(&bytes);
        assert!(text.chars().all(|c| u32::from(c) < 0x100));
        let back: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back, v);
    }

    #[test]
    fn escapes_above_latin1_as_utf16_units() {
        let bytes = to_latin1_json("é€😀").expect("serialises");
        assert_eq!(bytes, b"\"\xe9\\u20ac\\ud83d\\ude00\"");
        assert_eq!(to_latin1_json("abc").expect("ok"), b"\"abc\"");
    }
}
