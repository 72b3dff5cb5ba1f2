//! Tolerant reading of the JSON arrays the extension writes, one element at a time.
//!
//! The readers never hold a parsed copy of a whole file: elements are handed to a callback as they
//! are parsed, so the peak is the file text plus one element. What is accepted, in order:
//! a JSON array; an object wrapping the array under a key (`{"version":2,"messages":[…]}`); JSON
//! Lines (one value per line); and a comma-separated list of objects with the brackets lost.
//! A truncated or broken array keeps every element that was complete before the break.

use crate::diag::{DiagCode, Diags, Severity};
use crate::json_cursor::MAX_NESTING;
use serde::de::{Deserializer as _, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;

/// The shape the top-level value turned out to have.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Shape {
    /// 0 bytes or only whitespace.
    Empty,
    /// A plain JSON array (possibly cut short).
    Array,
    /// An object holding the array under a key, with its `version` when it has one.
    Wrapper { key: String, version: Option<i64> },
    /// One JSON value per line.
    Jsonl,
    /// Objects separated by commas with no surrounding brackets.
    BareList,
    /// A single value that holds no array (kept as one element when it is an object).
    Single,
    /// Nothing could be parsed.
    Invalid,
}

/// Counts of what a tolerant read produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayStats {
    pub shape: Shape,
    /// Elements handed to the callback (including `null` ones).
    pub elements: usize,
    /// True when the read stopped before the end of the data.
    pub incomplete: bool,
}

struct EachElement<'f, F> {
    callback: &'f mut F,
    count: &'f mut usize,
}

impl<'de, F: FnMut(usize, &RawValue)> Visitor<'de> for EachElement<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(element) = seq.next_element::<&'de RawValue>()? {
            (self.callback)(*self.count, element);
            *self.count += 1;
        }
        Ok(())
    }
}

/// The one-pass read of a file whose array may also be held under one of `wrapper_keys`
/// (`{"version":2,"messages":[…]}`), the array read by `read`. `read(array)` gets the text of the
/// plain or wrapped array and returns `Ok(n)` when that text is exactly an array whose `n`
/// elements all read strictly (then [`read_array`] would have found a complete array of `n`
/// elements and reported nothing), or `Err(k)` after handing over `k` elements: the caller then
/// reads the text with [`read_array`], skipping the first `k` (the wrapped array's elements are
/// numbered as [`read_array`] numbers them, so the skip holds). A wrapper is taken only when the
/// whole text is one object that [`read_array`] would take as a wrapper ([`CursorWrapper`] steps
/// over it once to make sure, before `read` reads its array); anything else is left to it
/// (`Err(0)`).
pub fn read_strict_in<'de>(
    text: &'de str,
    wrapper_keys: &[&str],
    read: impl FnOnce(&'de str) -> Result<usize, usize>,
) -> Result<(usize, Shape), usize> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return read(trimmed).map(|n| (n, Shape::Array));
    }
    if !trimmed.starts_with('{') {
        return Err(0);
    }
    // One object and nothing after it, read as a wrapper: what `read_array` requires.
    let Some(wrapper) = CursorWrapper::read(trimmed) else {
        return Err(0);
    };
    let Some((key, inner)) = wrapper.array(wrapper_keys) else {
        return Err(0);
    };
    let version = wrapper.version();
    read(inner).map(|n| {
        (
            n,
            Shape::Wrapper {
                key: key.to_owned(),
                version,
            },
        )
    })
}

/// A parse error's diagnostic code: `truncated` when the text ends too early, else `invalid_json`.
fn parse_error_code(err: &serde_json::Error) -> DiagCode {
    if err.is_eof() {
        DiagCode::Truncated
    } else {
        DiagCode::InvalidJson
    }
}

fn describe(err: &serde_json::Error) -> String {
    format!("line {} column {}: {}", err.line(), err.column(), err)
}

/// Stream the elements of the array held in `text` (positioned at `[`) into `callback`.
fn stream_array<F: FnMut(usize, &RawValue)>(
    text: &str,
    path: &str,
    diags: &mut Diags,
    callback: &mut F,
) -> (usize, bool) {
    let mut count = 0usize;
    let mut de = serde_json::Deserializer::from_str(text);
    let result = (&mut de).deserialize_seq(EachElement {
        callback,
        count: &mut count,
    });
    match result.and_then(|()| de.end()) {
        Ok(()) => (count, false),
        Err(err) => {
            let code = parse_error_code(&err);
            let what = if err.is_eof() {
                "the array is cut short"
            } else {
                "the array is broken"
            };
            diags.push(
                path,
                code,
                Severity::Warning,
                format!(
                    "{what} at {}; the {count} complete element(s) before it were kept and the rest could not be read",
                    describe(&err)
                ),
            );
            (count, true)
        }
    }
}

/// The members of an object that may wrap the array, as [`Wrapper`] reads them (each as its JSON
/// text), found by the JSON cursor, which steps over the wrapped array about twice as fast as
/// serde_json. `None` when the cursor does not take the text: not exactly one object, a member
/// of [`Wrapper`] named twice (which serde refuses too), or nested deeper than the cursor
/// follows (serde then decides, in the tolerant read). Every text it takes, serde reads as a
/// [`Wrapper`] with the same members.
struct CursorWrapper<'a> {
    version: Option<&'a str>,
    messages: Option<&'a str>,
    entries: Option<&'a str>,
}

impl<'a> CursorWrapper<'a> {
    fn read(text: &'a str) -> Option<Self> {
        let mut wrapper = CursorWrapper {
            version: None,
            messages: None,
            entries: None,
        };
        let mut cursor = crate::json_cursor::Cursor::new(text);
        cursor.object(|c, key| {
            let value = c.value(MAX_NESTING - 1)?;
            let slot = match key.as_ref() {
                "version" => &mut wrapper.version,
                "messages" => &mut wrapper.messages,
                "entries" => &mut wrapper.entries,
                _ => return Some(()),
            };
            // `null` is a member all the same: serde refuses it named twice too.
            slot.replace(value).is_none().then_some(())
        })?;
        cursor.at_end().then_some(wrapper)
    }

    /// [`Wrapper::array`] (`null` is not an array, as serde reads it into an absent member).
    fn array<'k>(&self, wrapper_keys: &[&'k str]) -> Option<(&'k str, &'a str)> {
        first_array(wrapper_keys, self.messages, self.entries, |raw| {
            raw.starts_with('[')
        })
    }

    /// [`Wrapper::version`].
    fn version(&self) -> Option<i64> {
        self.version
            .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
            .and_then(|v| v.as_i64())
    }
}

/// The first of `wrapper_keys` whose member (`messages` or `entries`) is an array, with it.
fn first_array<'k, T: Copy>(
    wrapper_keys: &[&'k str],
    messages: Option<T>,
    entries: Option<T>,
    is_array: impl Fn(T) -> bool,
) -> Option<(&'k str, T)> {
    wrapper_keys.iter().find_map(|key| {
        let inner = match *key {
            "messages" => messages,
            "entries" => entries,
            _ => None,
        }?;
        is_array(inner).then_some((*key, inner))
    })
}

#[derive(Deserialize)]
struct Wrapper<'a> {
    #[serde(default)]
    version: Option<Value>,
    #[serde(borrow, default)]
    messages: Option<&'a RawValue>,
    #[serde(borrow, default)]
    entries: Option<&'a RawValue>,
}

impl<'a> Wrapper<'a> {
    /// The first of `wrapper_keys` whose value is an array, with that array.
    fn array<'k>(&self, wrapper_keys: &[&'k str]) -> Option<(&'k str, &'a RawValue)> {
        first_array(wrapper_keys, self.messages, self.entries, |raw| {
            raw.get().trim_start().starts_with('[')
        })
    }

    fn version(&self) -> Option<i64> {
        self.version.as_ref().and_then(Value::as_i64)
    }
}

/// Read the array in `text`, calling `callback(index, element)` for each element, handed over as
/// its raw JSON text (borrowed from `text`: nothing is parsed into values here).
///
/// `wrapper_keys` lists the keys under which an object may wrap the array (`messages`, `entries`).
pub fn read_array<F: FnMut(usize, &RawValue)>(
    text: &str,
    wrapper_keys: &[&str],
    diags: &mut Diags,
    mut callback: F,
) -> ArrayStats {
    let trimmed = text.trim_start();
    let Some(first) = trimmed.chars().next() else {
        diags.push("", DiagCode::Empty, Severity::Warning, "the file is empty");
        return ArrayStats {
            shape: Shape::Empty,
            elements: 0,
            incomplete: false,
        };
    };
    if first == '[' {
        let (elements, incomplete) = stream_array(trimmed, "", diags, &mut callback);
        return ArrayStats {
            shape: Shape::Array,
            elements,
            incomplete,
        };
    }
    if first == '{' {
        return read_object_start(trimmed, wrapper_keys, diags, callback);
    }
    read_values(trimmed, diags, callback)
}

fn read_object_start<F: FnMut(usize, &RawValue)>(
    text: &str,
    wrapper_keys: &[&str],
    diags: &mut Diags,
    mut callback: F,
) -> ArrayStats {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
    let first = stream.next();
    let after_first = stream.byte_offset();
    let rest = text[after_first..].trim_start();
    match first {
        Some(Ok(raw)) if rest.is_empty() => {
            if let Ok(wrapper) = serde_json::from_str::<Wrapper>(raw.get()) {
                if let Some((key, inner)) = wrapper.array(wrapper_keys) {
                    let (elements, incomplete) =
                        stream_array(inner.get(), key, diags, &mut callback);
                    return ArrayStats {
                        shape: Shape::Wrapper {
                            key: key.to_owned(),
                            version: wrapper.version(),
                        },
                        elements,
                        incomplete,
                    };
                }
            }
            diags.push(
                "",
                DiagCode::UnexpectedShape,
                Severity::Warning,
                "the file holds a single object where an array was expected; it was read as one element",
            );
            callback(0, raw);
            ArrayStats {
                shape: Shape::Single,
                elements: 1,
                incomplete: false,
            }
        }
        Some(Ok(_)) if rest.starts_with(',') => read_bare_list(text, diags, callback),
        Some(Err(err)) if err.is_eof() => {
            // A lone object cut short: nothing complete to keep.
            diags.push(
                "",
                DiagCode::Truncated,
                Severity::Error,
                format!(
                    "the file is cut short at {}; nothing complete could be read",
                    describe(&err)
                ),
            );
            ArrayStats {
                shape: Shape::Invalid,
                elements: 0,
                incomplete: true,
            }
        }
        _ => read_values(text, diags, callback),
    }
}

/// Objects separated by commas without brackets: re-read as an array.
fn read_bare_list<F: FnMut(usize, &RawValue)>(
    text: &str,
    diags: &mut Diags,
    mut callback: F,
) -> ArrayStats {
    diags.push(
        "",
        DiagCode::UnexpectedShape,
        Severity::Warning,
        "the array's brackets are missing; the comma-separated objects were read as an array",
    );
    let body = text.trim_end().trim_end_matches(',');
    let wrapped = format!("[{body}]");
    let (elements, incomplete) = stream_array(&wrapped, "", diags, &mut callback);
    ArrayStats {
        shape: Shape::BareList,
        elements,
        incomplete,
    }
}

/// JSON Lines (or any whitespace-separated values). A bad line is reported and skipped.
fn read_values<F: FnMut(usize, &RawValue)>(
    text: &str,
    diags: &mut Diags,
    mut callback: F,
) -> ArrayStats {
    let mut elements = 0usize;
    let mut bad_lines = 0usize;
    let mut offset = 0usize;
    while offset < text.len() {
        let mut stream =
            serde_json::Deserializer::from_str(&text[offset..]).into_iter::<&RawValue>();
        match stream.next() {
            None => break,
            Some(Ok(value)) => {
                callback(elements, value);
                elements += 1;
                offset += stream.byte_offset();
            }
            Some(Err(err)) => {
                bad_lines += 1;
                let failed_at = offset + stream.byte_offset();
                // Skip to the line after the failure.
                match memchr::memchr(b'\n', &text.as_bytes()[failed_at..]) {
                    Some(nl) => {
                        if bad_lines <= 3 {
                            diags.push(
                                "",
                                DiagCode::InvalidJson,
                                Severity::Warning,
                                format!("a line could not be parsed ({}); it was skipped", err),
                            );
                        }
                        offset = failed_at + nl + 1;
                    }
                    None => {
                        if bad_lines <= 3 {
                            diags.push(
                                "",
                                parse_error_code(&err),
                                Severity::Warning,
                                format!(
                                    "the last line could not be parsed ({}); it was skipped",
                                    err
                                ),
                            );
                        }
                        break;
                    }
                }
            }
        }
    }
    if bad_lines > 3 {
        diags.push(
            "",
            DiagCode::InvalidJson,
            Severity::Warning,
            format!("{bad_lines} lines could not be parsed in all"),
        );
    }
    let shape = match (elements, bad_lines) {
        (0, _) => {
            diags.push(
                "",
                DiagCode::InvalidJson,
                Severity::Error,
                "the file is not JSON: no value could be read from it",
            );
            Shape::Invalid
        }
        (1, 0) => {
            diags.push(
                "",
                DiagCode::UnexpectedShape,
                Severity::Warning,
                "the file holds a single value where an array was expected",
            );
            Shape::Single
        }
        _ => {
            diags.push(
                "",
                DiagCode::Jsonl,
                Severity::Info,
                format!("the file holds one JSON value per line ({elements} read)"),
            );
            Shape::Jsonl
        }
    };
    ArrayStats {
        shape,
        elements,
        incomplete: bad_lines > 0,
    }
}

/// Parse a single JSON object file (history_item.json, task_metadata.json).
pub fn read_object(text: &str, diags: &mut Diags) -> Option<serde_json::Map<String, Value>> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        diags.push("", DiagCode::Empty, Severity::Warning, "the file is empty");
        return None;
    }
    let parsed = match value_from_text(trimmed, "", diags) {
        Some(v) => Ok(v),
        None => serde_json::from_str::<Value>(trimmed),
    };
    match parsed {
        Ok(Value::Object(map)) => Some(map),
        Ok(other) => {
            diags.push(
                "",
                DiagCode::UnexpectedShape,
                Severity::Error,
                format!("expected a JSON object, found {}", kind_of(&other)),
            );
            None
        }
        Err(err) => {
            diags.push(
                "",
                parse_error_code(&err),
                Severity::Error,
                format!("the file is not valid JSON ({})", describe(&err)),
            );
            None
        }
    }
}

/// Deepest nesting of arrays and objects in a JSON text (strings skipped). A strict reader that
/// skips or borrows parts of a value (which `serde_json` does without a depth limit) checks this to
/// stay within the 128 levels that building a `Value` allows.
pub fn max_nesting(raw: &str) -> usize {
    let bytes = raw.as_bytes();
    let (mut depth, mut max, mut i) = (0usize, 0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string: to the next quote that is not escaped.
                i += 1;
                while let Some(off) = memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                    i += off;
                    if bytes[i] == b'\\' {
                        i += 2;
                    } else {
                        break;
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// A short name for the JSON type of a value, for messages.
pub use roo_js::kind_of;

/// Parse one JSON value as JavaScript would read it, reporting what differs: a number beyond the
/// range of a double (`1e999`, which `JSON.parse` reads as `Infinity`) is read as `null` with a
/// diagnostic instead of failing the whole value. `None` when the text is not JSON at all.
pub fn value_from_text(raw: &str, path: &str, diags: &mut Diags) -> Option<Value> {
    match serde_json::from_str::<Value>(raw) {
        Ok(v) => Some(v),
        Err(err) if err.to_string().contains("number out of range") => {
            let (fixed, count) = null_out_of_range_numbers(raw);
            let v = serde_json::from_str::<Value>(&fixed).ok()?;
            diags.push(
                path,
                DiagCode::InvalidValue,
                Severity::Warning,
                format!(
                    "{count} number(s) beyond the range of a double (such as 1e999) were read as null"
                ),
            );
            Some(v)
        }
        Err(_) => None,
    }
}

/// Replace every number literal outside strings whose value overflows a double by `null`.
fn null_out_of_range_numbers(raw: &str) -> (String, usize) {
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut count = 0usize;
    let mut i = 0usize;
    let mut copied = 0usize;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 2,
                b'"' => {
                    in_string = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let literal = &raw[start..i];
                if literal.parse::<f64>().is_ok_and(|v| v.is_infinite()) {
                    out.push_str(&raw[copied..start]);
                    out.push_str("null");
                    copied = i;
                    count += 1;
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&raw[copied.min(raw.len())..]);
    (out, count)
}

/// Whether `bytes` are UTF-8 holding exactly one JSON value (white space around it allowed) that
/// `serde_json` would accept, nested at most 64 deep: checked as the strict readers check the
/// values they step over, building nothing. It is the least any reader of these files must do
/// with their bytes, so the throughput benchmarks time it beside the raw read of the same files.
pub fn is_one_json_value(bytes: &[u8]) -> bool {
    let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
        return false;
    };
    let mut cursor = crate::json_cursor::Cursor::new(text);
    cursor.value(MAX_NESTING).is_some() && cursor.at_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wrapper objects: members of the names a wrapper reads (one of them written with an
    /// escape), named twice at times, with values of every kind; sometimes damaged.
    fn arb_wrapper_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let name = prop_oneof![
            Just("version"),
            Just("messages"),
            Just("entries"),
            Just("other"),
            Just("mess\\u0061ges"),
        ];
        let value = prop_oneof![
            Just("null"),
            Just("[]"),
            Just("[1,{\"a\":\"b\\n\"}]"),
            Just("2"),
            Just("-3"),
            Just("2.5"),
            Just("18446744073709551616"),
            Just("\"x\""),
            Just("{\"k\":[1]}"),
            Just("[[[]]]"),
            Just("[01]"),
        ];
        let object = proptest::collection::vec((name, value), 0..5).prop_map(|members| {
            let members: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("\"{k}\": {v}"))
                .collect();
            format!("{{{}}}", members.join(", "))
        });
        (object, 0u8..8).prop_map(|(o, damage)| match damage {
            0 => format!("{o} x"),
            1 => format!("{o}\n "),
            2 => o[..o.len() / 2].to_owned(),
            3 => o.replacen('}', ",}", 1),
            _ => o,
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// The cursor takes a wrapper exactly when serde does, and finds the same array and
        /// version.
        #[test]
        fn cursor_wrapper_is_serdes(text in arb_wrapper_text()) {
            let ours = CursorWrapper::read(&text);
            let theirs = serde_json::from_str::<Wrapper>(&text).ok();
            proptest::prop_assert_eq!(ours.is_some(), theirs.is_some(), "{}", text);
            if let (Some(ours), Some(theirs)) = (ours, theirs) {
                for keys in [&["messages"][..], &["entries"], &["messages", "entries"]] {
                    proptest::prop_assert_eq!(
                        ours.array(keys),
                        theirs.array(keys).map(|(k, raw)| (k, raw.get())),
                        "{}", text
                    );
                }
                proptest::prop_assert_eq!(ours.version(), theirs.version(), "{}", text);
            }
        }
    }

    #[test]
    fn one_json_value_is_what_serde_json_accepts() {
        for text in [
            "[]",
            " {\"a\": [1, -2.5e3, true, null, \"x\\n\\u00e9\"]} \n",
            "\"\\ud83d\\ude00\"",
            "[\"\\ud800\"]",
            "[1,]",
            "{\"a\":1,}",
            "[01]",
            "[\"a\\qb\"]",
            "[\"a\nb\"]",
            "[\"\\u00g9\"]",
            "[1] [2]",
            "[1",
            "",
            "  ",
            "tru",
        ] {
            let serde = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
            assert_eq!(is_one_json_value(text.as_bytes()), serde, "{text:?}");
        }
        assert!(!is_one_json_value(b"[\"\xff\"]"), "not UTF-8");
        let deep = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert!(is_one_json_value(deep.as_bytes()));
        let deeper = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert!(
            !is_one_json_value(deeper.as_bytes()),
            "deeper than the readers go"
        );
    }

    fn read(text: &str) -> (Vec<Value>, ArrayStats, Vec<DiagCode>) {
        let mut diags = Diags::for_file("x.json");
        let mut out = Vec::new();
        let stats = read_array(text, &["messages"], &mut diags, |_, raw| {
            out.push(serde_json::from_str::<Value>(raw.get()).expect("raw elements are valid JSON"))
        });
        (
            out,
            stats,
            diags.into_vec().into_iter().map(|d| d.code).collect(),
        )
    }

    #[test]
    fn plain_array() {
        let (v, s, d) = read("[{\"a\":1},null,2]");
        assert_eq!(v.len(), 3);
        assert_eq!(s.shape, Shape::Array);
        assert!(d.is_empty());
    }

    #[test]
    fn truncated_array_keeps_complete_elements() {
        let (v, s, d) = read("[{\"a\":1},{\"b\":2},{\"c\":\"unfinis");
        assert_eq!(v.len(), 2);
        assert!(s.incomplete);
        assert_eq!(d, vec![DiagCode::Truncated]);
    }

    #[test]
    fn wrapper_v2() {
        let (v, s, _) = read("{\"version\":2,\"messages\":[{\"role\":\"user\"}]}");
        assert_eq!(v.len(), 1);
        assert_eq!(
            s.shape,
            Shape::Wrapper {
                key: "messages".into(),
                version: Some(2)
            }
        );
    }

    #[test]
    fn jsonl_with_a_bad_line() {
        let (v, s, d) = read("{\"a\":1}\n{broken\n{\"b\":2}\n");
        assert_eq!(v.len(), 2);
        assert_eq!(s.shape, Shape::Jsonl);
        assert!(d.contains(&DiagCode::InvalidJson));
    }

    #[test]
    fn bare_list() {
        let (v, s, _) = read("{\"a\":1},{\"b\":2},");
        assert_eq!(v.len(), 2);
        assert_eq!(s.shape, Shape::BareList);
    }

    #[test]
    fn empty_and_garbage() {
        assert_eq!(read("  \n").1.shape, Shape::Empty);
        assert_eq!(read("not json").1.shape, Shape::Invalid);
        assert_eq!(read("{\"a\":").1.shape, Shape::Invalid);
    }
}
