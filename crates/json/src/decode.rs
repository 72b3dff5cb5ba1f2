//! Turning the bytes of a task file into JSON text, whatever state they are in.
//!
//! The extension writes compact UTF-8 without a BOM, but files in the wild have been re-saved by
//! editors (UTF-8 BOM, UTF-16), cut by crashes, or carry escapes that JavaScript accepts and
//! `serde_json` does not (unpaired `\udXXX` surrogates). Each repair is reported, never silent.
//!
//! The buffer is repaired in place where the repair keeps its length (surrogate escapes), so a
//! large file is held once in memory; only transcoding (UTF-16, invalid UTF-8) needs a second buffer,
//! and the first one is dropped as soon as the second exists.

use crate::diag::{DiagCode, Diags, Severity};
use std::borrow::Cow;

const UTF8_BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// Decode raw file bytes into UTF-8 JSON text, reporting every repair into `diags`.
pub fn decode_json_bytes(mut bytes: Vec<u8>, diags: &mut Diags) -> String {
    match decode_json_in_place(&mut bytes, diags) {
        Cow::Owned(text) => text,
        Cow::Borrowed(text) => text.to_owned(),
    }
}

/// As [`decode_json_bytes`], repairing `bytes` in place and borrowing the text from them when
/// they are UTF-8 (the usual case): a reader can then keep one buffer for every file it reads.
/// Only transcoding (UTF-16, invalid UTF-8) makes a text of its own.
pub fn decode_json_in_place<'b>(bytes: &'b mut [u8], diags: &mut Diags) -> Cow<'b, str> {
    if let Some(encoding) = utf16_encoding(bytes) {
        let text = decode_utf16(bytes, encoding, diags);
        // UTF-16 text can still hold surrogate escapes written by JavaScript.
        let mut owned = text.into_bytes();
        sanitize_surrogate_escapes(&mut owned, diags);
        return Cow::Owned(into_string_lossy(owned, diags));
    }
    let body = if bytes.starts_with(UTF8_BOM) {
        diags.push(
            "",
            DiagCode::Utf8Bom,
            Severity::Info,
            "a UTF-8 byte-order mark was stripped (the extension itself would read this file as empty)",
        );
        &mut bytes[UTF8_BOM.len()..]
    } else {
        bytes
    };
    sanitize_surrogate_escapes(body, diags);
    let body: &'b [u8] = body;
    // The vectorised check first (the files are mostly ASCII, where it runs several times faster);
    // the standard one only to locate an error.
    if let Ok(text) = simdutf8::basic::from_utf8(body) {
        return Cow::Borrowed(text);
    }
    match std::str::from_utf8(body) {
        Ok(text) => Cow::Borrowed(text),
        Err(err) => {
            report_invalid_utf8(err.valid_up_to(), diags);
            Cow::Owned(String::from_utf8_lossy(body).into_owned())
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Utf16 {
    Le,
    Be,
}

/// UTF-16 is recognised by its BOM, or, without one, by the NUL bytes that ASCII JSON punctuation
/// leaves in it (`[\0{\0` or `\0[\0{`).
fn utf16_encoding(bytes: &[u8]) -> Option<Utf16> {
    match bytes {
        [0xFF, 0xFE, ..] => Some(Utf16::Le),
        [0xFE, 0xFF, ..] => Some(Utf16::Be),
        [a, 0, b, 0, ..] if a.is_ascii() && b.is_ascii() && *a != 0 => Some(Utf16::Le),
        [0, a, 0, b, ..] if a.is_ascii() && b.is_ascii() && *a != 0 => Some(Utf16::Be),
        _ => None,
    }
}

fn decode_utf16(bytes: &[u8], encoding: Utf16, diags: &mut Diags) -> String {
    let has_bom = matches!(
        (encoding, bytes),
        (Utf16::Le, [0xFF, 0xFE, ..]) | (Utf16::Be, [0xFE, 0xFF, ..])
    );
    let body = if has_bom { &bytes[2..] } else { bytes };
    let units = body.chunks_exact(2).map(|pair| match encoding {
        Utf16::Le => u16::from_le_bytes([pair[0], pair[1]]),
        Utf16::Be => u16::from_be_bytes([pair[0], pair[1]]),
    });
    let mut text = String::with_capacity(body.len() / 2);
    let mut unpaired = 0usize;
    for decoded in char::decode_utf16(units) {
        match decoded {
            Ok(c) => text.push(c),
            Err(_) => {
                unpaired += 1;
                text.push(char::REPLACEMENT_CHARACTER);
            }
        }
    }
    let name = match encoding {
        Utf16::Le => "UTF-16LE",
        Utf16::Be => "UTF-16BE",
    };
    diags.push(
        "",
        DiagCode::Utf16,
        Severity::Info,
        format!(
            "the file is {name}{}; it was transcoded to UTF-8",
            if has_bom {
                " with a BOM"
            } else {
                " without a BOM"
            }
        ),
    );
    if body.len() % 2 == 1 {
        diags.push(
            "",
            DiagCode::Truncated,
            Severity::Warning,
            "the UTF-16 text ends with half a code unit, which was dropped",
        );
    }
    if unpaired > 0 {
        diags.push(
            "",
            DiagCode::LoneSurrogate,
            Severity::Warning,
            format!("{unpaired} unpaired UTF-16 surrogate(s) were replaced by U+FFFD"),
        );
    }
    // A BOM may also follow the UTF-16 one in a doubly re-encoded file.
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        text = rest.to_owned();
    }
    text
}

fn into_string_lossy(bytes: Vec<u8>, diags: &mut Diags) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            report_invalid_utf8(err.utf8_error().valid_up_to(), diags);
            let bytes = err.into_bytes();
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

fn report_invalid_utf8(first_bad: usize, diags: &mut Diags) {
    diags.push(
        "",
        DiagCode::InvalidUtf8,
        Severity::Warning,
        format!(
            "bytes that are not valid UTF-8 (first at byte offset {first_bad}) were replaced by U+FFFD"
        ),
    );
}

fn hex_value(digits: &[u8]) -> Option<u16> {
    if digits.len() != 4 {
        return None;
    }
    let mut value: u16 = 0;
    for &d in digits {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        value = (value << 4) | u16::from(v);
    }
    Some(value)
}

/// Reads the `\uXXXX` escape at `at` (which points at the backslash), if there is one.
fn escape_at(bytes: &[u8], at: usize) -> Option<u16> {
    if bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u') {
        hex_value(bytes.get(at + 2..at + 6)?)
    } else {
        None
    }
}

/// Replace every `\uD800`–`\uDFFF` escape that is not part of a high+low pair by `\ufffd`.
///
/// JavaScript strings may hold lone surrogates and `JSON.stringify` writes them as escapes, which
/// `serde_json` refuses. The replacement has the same length, so it is done in place. Backslashes
/// are only meaningful inside strings, and every escape is consumed as a unit, so `\\udead`
/// (an escaped backslash followed by text) is left alone.
pub fn sanitize_surrogate_escapes(bytes: &mut [u8], diags: &mut Diags) -> usize {
    // Only `\u` sequences matter, so they are searched for directly (JSON text is full of other
    // escapes). A `\u` is an escape when its backslash ends a run of an odd number of backslashes;
    // the runs never reach back into a consumed escape (those end with a hex digit or `u`).
    let finder = memchr::memmem::Finder::new(b"\\u");
    let mut replaced = 0usize;
    let mut pos = 0usize;
    while let Some(offset) = finder.find(&bytes[pos..]) {
        let at = pos + offset;
        let run = bytes[..=at]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if run % 2 == 0 {
            // An escaped backslash followed by a plain `u`.
            pos = at + 2;
            continue;
        }
        let Some(unit) = escape_at(bytes, at) else {
            pos = at + 2;
            continue;
        };
        if (0xD800..0xDC00).contains(&unit) {
            let pairs_with_low =
                escape_at(bytes, at + 6).is_some_and(|next| (0xDC00..0xE000).contains(&next));
            if pairs_with_low {
                pos = at + 12;
            } else {
                bytes[at + 2..at + 6].copy_from_slice(b"fffd");
                replaced += 1;
                pos = at + 6;
            }
        } else if (0xDC00..0xE000).contains(&unit) {
            bytes[at + 2..at + 6].copy_from_slice(b"fffd");
            replaced += 1;
            pos = at + 6;
        } else {
            pos = at + 6;
        }
    }
    if replaced > 0 {
        diags.push(
            "",
            DiagCode::LoneSurrogate,
            Severity::Info,
            format!("{replaced} unpaired \\udXXX escape(s) were replaced by U+FFFD"),
        );
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> (String, Vec<crate::diag::DiagCode>) {
        let mut d = Diags::for_file("t.json");
        let s = decode_json_bytes(bytes.to_vec(), &mut d);
        (s, d.into_vec().into_iter().map(|d| d.code).collect())
    }

    /// The byte-at-a-time implementation the search above replaced, kept as the reference.
    fn sanitize_reference(bytes: &mut [u8]) -> usize {
        let mut replaced = 0usize;
        let mut pos = 0usize;
        while let Some(offset) = memchr::memchr(b'\\', &bytes[pos..]) {
            let at = pos + offset;
            match bytes.get(at + 1) {
                Some(b'u') => {
                    let Some(unit) = escape_at(bytes, at) else {
                        pos = at + 2;
                        continue;
                    };
                    if (0xD800..0xDC00).contains(&unit) {
                        let pairs_with_low = escape_at(bytes, at + 6)
                            .is_some_and(|next| (0xDC00..0xE000).contains(&next));
                        if pairs_with_low {
                            pos = at + 12;
                        } else {
                            bytes[at + 2..at + 6].copy_from_slice(b"fffd");
                            replaced += 1;
                            pos = at + 6;
                        }
                    } else if (0xDC00..0xE000).contains(&unit) {
                        bytes[at + 2..at + 6].copy_from_slice(b"fffd");
                        replaced += 1;
                        pos = at + 6;
                    } else {
                        pos = at + 6;
                    }
                }
                Some(_) => pos = at + 2,
                None => break,
            }
        }
        replaced
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The `\u` search gives the same bytes and count as the reference scan.
        #[test]
        fn sanitize_matches_reference(parts in proptest::collection::vec(proptest::prop_oneof![
            proptest::strategy::Just("\\".to_owned()),
            proptest::strategy::Just("\\u".to_owned()),
            proptest::strategy::Just("u".to_owned()),
            proptest::strategy::Just("\\ud83d".to_owned()),
            proptest::strategy::Just("\\ude00".to_owned()),
            proptest::strategy::Just("\\uDBFF".to_owned()),
            proptest::strategy::Just("\\u0041".to_owned()),
            proptest::strategy::Just("\\\\".to_owned()),
            proptest::strategy::Just("\"".to_owned()),
            "[0-9a-fA-FxX]{0,4}",
        ], 0..24)) {
            let text = parts.concat();
            let mut fast = text.clone().into_bytes();
            let mut slow = text.into_bytes();
            let mut d = Diags::for_file("t");
            let n_fast = sanitize_surrogate_escapes(&mut fast, &mut d);
            let n_slow = sanitize_reference(&mut slow);
            proptest::prop_assert_eq!(n_fast, n_slow);
            proptest::prop_assert_eq!(fast, slow);
        }

        /// The in-place decoding of any bytes without escapes (ASCII, multi-byte characters, stray
        /// continuation bytes, truncated sequences and surrogate encodings mixed in) gives the
        /// text and diagnostics of the standard library's check and lossy conversion.
        #[test]
        fn in_place_decoding_matches_std(parts in proptest::collection::vec(proptest::prop_oneof![
            proptest::strategy::Strategy::prop_map("[a-zA-Z0-9 {}:,\"]{0,40}", String::into_bytes),
            proptest::strategy::Just("é€😀".as_bytes().to_vec()),
            proptest::strategy::Just(vec![0x80]),
            proptest::strategy::Just(vec![0xE2, 0x82]),
            proptest::strategy::Just(vec![0xF0, 0x9F, 0x98]),
            proptest::strategy::Just(vec![0xED, 0xA0, 0x80]),
            proptest::strategy::Just(vec![0xC0, 0xAF]),
            proptest::strategy::Just(vec![0xFF]),
        ], 0..12)) {
            let mut bytes = b"[".to_vec();
            bytes.extend(parts.concat());
            let expected_text = String::from_utf8_lossy(&bytes).into_owned();
            let expected_bad = std::str::from_utf8(&bytes).is_err();
            let mut d = Diags::for_file("t");
            let text = decode_json_in_place(&mut bytes, &mut d).into_owned();
            let codes: Vec<DiagCode> = d.into_vec().into_iter().map(|d| d.code).collect();
            proptest::prop_assert_eq!(text, expected_text);
            proptest::prop_assert_eq!(codes.contains(&DiagCode::InvalidUtf8), expected_bad);
        }
    }

    #[test]
    fn strips_utf8_bom() {
        let (s, codes) = decode(b"\xEF\xBB\xBF[1]");
        assert_eq!(s, "[1]");
        assert_eq!(codes, vec![DiagCode::Utf8Bom]);
    }

    #[test]
    fn transcodes_utf16_le_and_be() {
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("[\"é\"]".encode_utf16().flat_map(|u| u.to_le_bytes()))
            .collect();
        assert_eq!(decode(&le).0, "[\"é\"]");
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("[1]".encode_utf16().flat_map(|u| u.to_be_bytes()))
            .collect();
        assert_eq!(decode(&be).0, "[1]");
        let le_no_bom: Vec<u8> = "[{}]"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(decode(&le_no_bom).0, "[{}]");
    }

    #[test]
    fn lone_surrogates_become_replacement_escapes() {
        let (s, codes) = decode(br#"["a\ud83d b", "\ud83d\ude00", "\ude00", "\\ud83d"]"#);
        assert_eq!(s, r#"["a\ufffd b", "\ud83d\ude00", "\ufffd", "\\ud83d"]"#);
        assert_eq!(codes, vec![DiagCode::LoneSurrogate]);
        let parsed: Vec<String> = serde_json::from_str(&s).expect("valid after repair");
        assert_eq!(parsed[0], "a\u{fffd} b");
        assert_eq!(parsed[1], "😀");
        assert_eq!(parsed[3], "\\ud83d");
    }

    #[test]
    fn invalid_utf8_is_replaced_and_reported() {
        let (s, codes) = decode(b"[\"a\xFFb\"]");
        assert_eq!(s, "[\"a\u{fffd}b\"]");
        assert_eq!(codes, vec![DiagCode::InvalidUtf8]);
    }

    #[test]
    fn truncated_escape_at_end_does_not_panic() {
        for input in [
            &b"\\"[..],
            b"\\u",
            b"\\ud8",
            b"\\ud83d\\",
            b"\\ud83d\\u",
            b"\\ud83d\\udc",
        ] {
            let _ = decode(input);
        }
    }
}
