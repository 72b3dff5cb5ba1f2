//! A forward-only JSON reader over a text, for the strict one-pass readers whose records are
//! mostly text to step over (the API history's tool results, file contents and prompts).
//!
//! It hands out the raw literal of every value it passes, checked as `serde_json` checks a value
//! it ignores (string escapes and control characters, number grammar, literals, nesting), and
//! steps over a string 64 bytes at a time ([`crate::string_scan`]). Every method returns `None`
//! on anything it does not accept; the caller then gives the element to the tolerant reader, so a
//! refusal is never wrong, only slower.

use crate::string_scan::{scan_string, Scanned};
use std::borrow::Cow;

/// A position in a JSON text.
pub struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Self {
        Cursor { text, pos: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// The text from `start` to the current position (both on character boundaries: a token
    /// starts and ends on ASCII punctuation or a quote).
    fn since(&self, start: usize) -> Option<&'a str> {
        self.text.get(start..self.pos)
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes().get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes().get(self.pos).copied()
    }

    /// Consume `byte` (after whitespace).
    pub fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// True when only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Step over a string literal; its raw text, quotes included.
    pub fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.pos - 1;
        self.pos = crate::string_scan::string_end(self.bytes(), self.pos)?;
        self.since(start)
    }

    /// A member name, decoded.
    pub fn key(&mut self) -> Option<Cow<'a, str>> {
        decode_literal(self.string()?)
    }

    /// Step over a string literal; its raw text, and what the scan found of its escapes.
    pub fn string_scanned(&mut self) -> Option<(&'a str, Scanned)> {
        self.eat(b'"')?;
        let start = self.pos - 1;
        let scanned = scan_string(self.bytes(), self.pos)?;
        self.pos = scanned.end;
        Some((self.since(start)?, scanned))
    }

    /// A string value, decoded (borrowed from the text when it holds no escape).
    pub fn string_text(&mut self) -> Option<Cow<'a, str>> {
        let (raw, scanned) = self.string_scanned()?;
        if !scanned.escapes {
            return raw.get(1..raw.len() - 1).map(Cow::Borrowed);
        }
        decode_literal(raw)
    }

    /// Step over a number; its text. The grammar is JSON's: an optional minus, an integer part
    /// without leading zeros, an optional fraction and exponent.
    pub fn number(&mut self) -> Option<&'a str> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.bytes();
        let digits = |pos: &mut usize| {
            let from = *pos;
            while bytes.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            *pos > from
        };
        let mut pos = self.pos;
        if bytes.get(pos) == Some(&b'-') {
            pos += 1;
        }
        match bytes.get(pos) {
            Some(b'0') => pos += 1,
            Some(b'1'..=b'9') => {
                digits(&mut pos);
            }
            _ => return None,
        }
        if bytes.get(pos) == Some(&b'.') {
            pos += 1;
            if !digits(&mut pos) {
                return None;
            }
        }
        if let Some(b'e' | b'E') = bytes.get(pos) {
            pos += 1;
            if let Some(b'+' | b'-') = bytes.get(pos) {
                pos += 1;
            }
            if !digits(&mut pos) {
                return None;
            }
        }
        self.pos = pos;
        self.since(start)
    }

    /// `null` as `None`; an integer that fits an `i64`. Anything else (a fraction, an exponent,
    /// another kind of value) is refused, as the typed field it is read into refuses it.
    pub fn opt_i64(&mut self) -> Option<Option<i64>> {
        if self.peek()? == b'n' {
            return self.literal("null").map(|_| None);
        }
        let n = self.number()?;
        if n.contains(['.', 'e', 'E']) {
            return None;
        }
        n.parse::<i64>().ok().map(Some)
    }

    fn literal(&mut self, word: &str) -> Option<&'a str> {
        let start = self.pos;
        let end = start + word.len();
        (self.bytes().get(start..end)? == word.as_bytes()).then(|| {
            self.pos = end;
        })?;
        self.since(start)
    }

    /// Step over any value nested at most `depth` levels deep (a scalar is 0, `[]` is 1); its raw
    /// text.
    pub fn value(&mut self, depth: usize) -> Option<&'a str> {
        let next = self.peek()?;
        let start = self.pos;
        match next {
            b'"' => {
                self.string()?;
            }
            b'{' => {
                let inner = depth.checked_sub(1)?;
                self.object(|c, _| c.value(inner).map(|_| ()))?;
            }
            b'[' => {
                let inner = depth.checked_sub(1)?;
                self.array(|c| c.value(inner).map(|_| ()))?;
            }
            b't' => {
                self.literal("true")?;
            }
            b'f' => {
                self.literal("false")?;
            }
            b'n' => {
                self.literal("null")?;
            }
            _ => {
                self.number()?;
            }
        }
        self.since(start)
    }

    /// Read an object: `member(cursor, name)` is called for each member with the cursor before
    /// its value, and must step over the value.
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        self.sequence(b'{', b'}', |c| {
            let name = c.key()?;
            c.eat(b':')?;
            member(c, name)
        })
    }

    /// Read an array: `item(cursor)` is called before each item and must step over it.
    pub fn array(&mut self, item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.sequence(b'[', b']', item)
    }

    /// `open`, then entries separated by commas (each read by `entry`), then `close`.
    fn sequence(
        &mut self,
        open: u8,
        close: u8,
        mut entry: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.eat(open)?;
        if self.peek()? == close {
            self.pos += 1;
            return Some(());
        }
        loop {
            entry(self)?;
            match self.peek()? {
                b',' => self.pos += 1,
                b if b == close => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

/// How deep the strict readers follow nested arrays and objects: a value nested deeper makes them
/// give up, and the text goes to the tolerant reader, which builds values with serde_json's limit
/// of 128 levels (a strict reader's enclosing records stay far below it).
pub const MAX_NESTING: usize = 64;

/// The raw literals of the members `names` of the JSON object that is the whole of `text` (each
/// `None` when absent), the other members stepped over. `None` when the text is not exactly one
/// object, names one of `names` twice, or nests a value deeper than [`MAX_NESTING`]: the
/// caller then reads it with serde, so a refusal only costs time.
pub fn peek_members<'a, const N: usize>(
    text: &'a str,
    names: [&str; N],
) -> Option<[Option<&'a str>; N]> {
    let mut c = Cursor::new(text);
    let mut found = [None; N];
    c.object(|c, key| {
        let raw = c.value(MAX_NESTING)?;
        if let Some(i) = names.iter().position(|name| *name == key) {
            if found[i].replace(raw).is_some() {
                return None;
            }
        }
        Some(())
    })?;
    c.at_end().then_some(found)
}

/// A member's literal read as an optional number, as serde reads an `Option<f64>` field:
/// `Some(None)` for `null`, `None` when it is not a number.
pub fn opt_f64(raw: Option<&str>) -> Option<Option<f64>> {
    match raw {
        None | Some("null") => Some(None),
        Some(raw) if raw.starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) => {
            // serde's own number parsing, so an integer literal and `-0` read as they do there.
            serde_json::from_str::<f64>(raw).ok().map(Some)
        }
        Some(_) => None,
    }
}

/// A member's literal read as an optional string, as serde reads an `Option<Cow<str>>` field:
/// `Some(None)` for `null`, `None` when it is not a string that decodes.
pub fn opt_text(raw: Option<&str>) -> Option<Option<Cow<'_, str>>> {
    match raw {
        None | Some("null") => Some(None),
        Some(raw) if raw.starts_with('"') => decode_literal(raw).map(Some),
        Some(_) => None,
    }
}

/// The one-pass read of a well-formed array, each element read by `read` (which gives up on
/// anything the tolerant reader would report): `Ok(n)` when `text` is exactly an array whose `n`
/// elements all read, `Err(k)` after `k` elements were handed to `each`.
pub fn read_array_with<'a, T>(
    text: &'a str,
    mut read: impl FnMut(&mut Cursor<'a>) -> Option<T>,
    mut each: impl FnMut(T),
) -> Result<usize, usize> {
    let mut cursor = Cursor::new(text);
    let mut count = 0usize;
    let complete = cursor.array(|c| {
        each(read(c)?);
        count += 1;
        Some(())
    });
    match complete {
        Some(()) if cursor.at_end() => Ok(count),
        _ => Err(count),
    }
}

/// The text of a checked string literal: the inside of the quotes when it holds no escape, else
/// the decoded text; `None` when it cannot be decoded (a surrogate escape outside a pair, which
/// serde_json refuses too).
pub fn decode_literal(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    match memchr::memchr(b'\\', inner.as_bytes()) {
        None => Some(Cow::Borrowed(inner)),
        Some(first) => {
            let mut out = String::with_capacity(inner.len());
            unescape_into(inner, first, &mut out)?;
            Some(Cow::Owned(out))
        }
    }
}

/// [`decode_literal`] handed to `use_text`; a literal with escapes is decoded into a buffer the
/// thread keeps between texts (up to [`MAX_KEPT_DECODED`] bytes), for texts that are only looked
/// at. `use_text` comes back unused when `raw` is not a literal that can be decoded.
pub fn with_decoded_literal<R, F: FnOnce(&str) -> R>(raw: &str, use_text: F) -> Result<R, F> {
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return Err(use_text);
    };
    let Some(first) = memchr::memchr(b'\\', inner.as_bytes()) else {
        return Ok(use_text(inner));
    };
    crate::kept::with_kept(&DECODED, MAX_KEPT_DECODED, |buffer| {
        buffer.clear();
        match unescape_into(inner, first, buffer) {
            Some(()) => Ok(use_text(buffer)),
            None => Err(use_text),
        }
    })
}

/// The largest decoding buffer a thread keeps for its next text.
const MAX_KEPT_DECODED: usize = 1 << 20;

thread_local! {
    static DECODED: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// The inside of a checked literal with its escapes decoded (the first at `first`), appended to
/// `out`.
fn unescape_into(inner: &str, first: usize, out: &mut String) -> Option<()> {
    let bytes = inner.as_bytes();
    out.reserve(inner.len());
    let mut from = 0usize;
    let mut at = first;
    loop {
        out.push_str(inner.get(from..at)?);
        let (c, len) = escape_at(bytes, at)?;
        out.push(c);
        from = at + len;
        match crate::string_scan::find_backslash(bytes, from) {
            Some(next) => at = next,
            None => {
                out.push_str(inner.get(from..)?);
                return Some(());
            }
        }
    }
}

/// The character of the escape whose backslash is at `at`, and the escape's length.
fn escape_at(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    Some(match *bytes.get(at + 1)? {
        b'"' => ('"', 2),
        b'\\' => ('\\', 2),
        b'/' => ('/', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        b'n' => ('\n', 2),
        b'r' => ('\r', 2),
        b't' => ('\t', 2),
        b'u' => {
            let unit = hex4(bytes.get(at + 2..at + 6)?)?;
            match unit {
                0xD800..=0xDBFF => {
                    // A high surrogate must be followed by an escaped low one.
                    let low = match bytes.get(at + 6..at + 8) {
                        Some(b"\\u") => hex4(bytes.get(at + 8..at + 12)?)?,
                        _ => return None,
                    };
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    (char::from_u32(code)?, 12)
                }
                0xDC00..=0xDFFF => return None,
                _ => (char::from_u32(unit)?, 6),
            }
        }
        _ => return None,
    })
}

fn hex4(digits: &[u8]) -> Option<u32> {
    digits
        .iter()
        .try_fold(0u32, |acc, &d| Some(acc * 16 + (d as char).to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Whether `serde_json` accepts `text` as one value (ignored), as the cursor's verdict.
    fn serde_accepts(text: &str) -> bool {
        serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
    }

    fn cursor_accepts(text: &str) -> bool {
        let mut c = Cursor::new(text);
        c.value(usize::MAX).is_some() && c.at_end()
    }

    #[test]
    fn steps_over_strings_with_every_escape() {
        for text in [
            r#""""#,
            r#""plain""#,
            r#""a\"b\\c\/d\be\ff\ng\rh\ti\u00e9j\uD83D\uDE00""#,
            r#""long text without any escape at all, well past eight bytes""#,
            "\"é€😀 multi-byte\"",
        ] {
            let mut c = Cursor::new(text);
            assert_eq!(c.string(), Some(text), "{text}");
            assert!(c.at_end());
        }
        for bad in [
            "\"raw\ncontrol\"",
            r#""bad \x escape""#,
            r#""short \u12""#,
            r#""unterminated"#,
            r#""ends in a backslash\"#,
        ] {
            assert_eq!(Cursor::new(bad).string(), None, "{bad}");
        }
    }

    #[test]
    fn numbers_follow_json_grammar() {
        for ok in ["0", "-0", "12", "-3.25", "1e9", "2E-3", "6.02e+23"] {
            assert!(cursor_accepts(ok), "{ok}");
        }
        for bad in ["01", "-", "1.", ".5", "1e", "+1", "--1", "0x10"] {
            assert!(!cursor_accepts(bad), "{bad}");
        }
        assert_eq!(
            Cursor::new("1712000000000").opt_i64(),
            Some(Some(1_712_000_000_000))
        );
        assert_eq!(Cursor::new("null").opt_i64(), Some(None));
        assert_eq!(Cursor::new("1.5").opt_i64(), None);
        assert_eq!(Cursor::new("1e3").opt_i64(), None);
        assert_eq!(Cursor::new("9223372036854775808").opt_i64(), None);
        assert_eq!(Cursor::new("\"1\"").opt_i64(), None);
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}{}", "[".repeat(5), "]".repeat(5));
        assert!(Cursor::new(&deep).value(5).is_some());
        assert!(Cursor::new(&deep).value(4).is_none());
        assert!(Cursor::new("{\"a\":{\"b\":1}}").value(2).is_some());
        assert!(Cursor::new("{\"a\":{\"b\":1}}").value(1).is_none());
    }

    #[test]
    fn keys_are_decoded() {
        let mut c = Cursor::new(r#"{"plain":1,"esc\u0061ped":2}"#);
        let mut keys = Vec::new();
        c.object(|c, k| {
            keys.push(k.into_owned());
            c.value(0).map(|_| ())
        })
        .expect("object");
        assert_eq!(keys, ["plain", "escaped"]);
    }

    /// JSON texts built from pieces, valid or not.
    fn arb_json_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("[".to_owned()),
            Just("]".to_owned()),
            Just(",".to_owned()),
            Just(":".to_owned()),
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just("\\u00e9".to_owned()),
            Just("\\ud83d".to_owned()),
            Just("\\ude00".to_owned()),
            Just("\\u0041".to_owned()),
            Just("\\x".to_owned()),
            Just("\n".to_owned()),
            Just(" ".to_owned()),
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("-0.5e3".to_owned()),
            Just("01".to_owned()),
            "[a-z0-9 ]{0,12}",
            "\"[a-z\\\\\"é]{0,20}\"",
        ];
        proptest::collection::vec(piece, 0..16).prop_map(|p| p.concat())
    }

    #[test]
    fn unescapes_as_serde_json_does() {
        for raw in [
            r#""plain""#,
            r#""a\"b\\c\/d\be\ff\ng\rh\ti""#,
            r#""\u00e9\u20AC\ud83d\ude00\u0000 end""#,
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\ud800x""#,
            r#""\ud800\""#,
            "\"é€😀 \\n mixed\"",
        ] {
            let ours = decode_literal(raw).map(Cow::into_owned);
            assert_eq!(ours, serde_json::from_str::<String>(raw).ok(), "{raw}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The decoded text of any literal the cursor takes is serde_json's, and it fails to
        /// decode exactly when serde_json refuses it.
        #[test]
        fn decodes_as_serde_json_does(text in arb_json_text()) {
            let literal = format!("\"{text}\"");
            let mut c = Cursor::new(&literal);
            if let Some(raw) = c.string() {
                if c.at_end() {
                    let ours = decode_literal(raw).map(Cow::into_owned);
                    prop_assert_eq!(ours, serde_json::from_str::<String>(raw).ok(), "{:?}", raw);
                }
            }
        }

        /// Any string, written by serde_json, decodes back to itself.
        #[test]
        fn round_trips_any_string(s in proptest::arbitrary::any::<String>()) {
            let raw = serde_json::to_string(&s).expect("serialise");
            prop_assert_eq!(decode_literal(&raw).map(Cow::into_owned), Some(s));
        }

        /// The cursor accepts a text as one value exactly when `serde_json` does.
        #[test]
        fn accepts_what_serde_json_accepts(text in arb_json_text()) {
            prop_assert_eq!(cursor_accepts(&text), serde_accepts(&text), "{:?}", text);
        }

        /// On valid JSON the raw literal it hands out is the value's text.
        #[test]
        fn raw_literal_is_the_value(v in proptest::arbitrary::any::<(String, Vec<i32>, Option<bool>, f64)>()) {
            let value = serde_json::json!({"s": v.0, "a": v.1, "o": v.2, "f": v.3});
            let text = serde_json::to_string(&value).expect("serialise");
            let mut c = Cursor::new(&text);
            let raw = c.value(usize::MAX);
            prop_assert_eq!(raw, Some(text.as_str()));
        }
    }
}
