//! JavaScript semantics that the compatibility target depends on.
//!
//! The legacy server runs on V8, so its strings are sequences of UTF-16 code units, its `\s` class is
//! the ECMAScript white-space set, its `toLowerCase()` is full Unicode, `JSON.parse` accepts lone
//! surrogate escapes, and `JSON.stringify`/`String(x)`/truthiness follow ECMAScript rules. This module
//! gives the Rust side the same answers.
//!
//! **Lone surrogates.** A Rust `String` cannot hold an unpaired UTF-16 surrogate, while a JS string can
//! (a `substring` that splits a pair, `String.fromCharCode(0xD83D)`, a `"\ud83d"` JSON escape). Every
//! place where the legacy computation would produce one, this crate produces U+FFFD REPLACEMENT
//! CHARACTER instead — exactly what ECMAScript's `String.prototype.toWellFormed()` does. U+FFFD is one
//! UTF-16 unit like the surrogate it replaces, is not white space, is not a word character, has no case
//! and is not case-ignorable, so lengths, truncation points, trimming, tag scanning and lowercasing
//! downstream are unchanged. The contract is therefore: our string == `legacyString.toWellFormed()`.

use serde_json::{Map, Value};
use std::borrow::Cow;

/// ECMAScript `WhiteSpace ∪ LineTerminator`, i.e. what `\s` matches without the `u` flag and what
/// `String.prototype.trim` removes. Note: U+FEFF is included, U+0085 is not (unlike Rust's
/// `char::is_whitespace`).
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// The same set as a `regex` crate character class (for the regex-based matchers).
pub(crate) const JS_SPACE_CLASS: &str = r"[\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";

/// `\w` without the `u` flag: `[A-Za-z0-9_]`.
pub(crate) fn is_js_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `String.prototype.trim`.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// `String.prototype.trimEnd`.
pub(crate) fn js_trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_space)
}

/// `.replace(/\s+/g, ' ')`.
pub(crate) fn collapse_js_space(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_space = false;
    for c in s.chars() {
        if is_js_space(c) {
            if !in_space {
                out.push(' ');
                in_space = true;
            }
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

/// `s.length` — the number of UTF-16 code units.
pub(crate) fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// `s.substring(0, n)` in UTF-16 code units. When unit `n` falls inside a surrogate pair, the
/// dangling high surrogate JS would keep becomes U+FFFD (see the module docs).
pub(crate) fn utf16_prefix(s: &str, n: usize) -> Cow<'_, str> {
    let mut units = 0usize;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if units + w > n {
            if units < n {
                // `n` splits this astral character: JS keeps its high surrogate alone.
                let mut out = String::with_capacity(i + 3);
                out.push_str(&s[..i]);
                out.push('\u{FFFD}');
                return Cow::Owned(out);
            }
            return Cow::Borrowed(&s[..i]);
        }
        units += w;
    }
    Cow::Borrowed(s)
}

/// `s.substring(start)` in UTF-16 code units; a split pair leaves a lone low surrogate in JS, which
/// becomes U+FFFD here.
pub(crate) fn utf16_suffix_from(s: &str, start: usize) -> Cow<'_, str> {
    let mut units = 0usize;
    for (i, c) in s.char_indices() {
        if units >= start {
            return Cow::Borrowed(&s[i..]);
        }
        let w = c.len_utf16();
        if units + w > start {
            // `start` points at the low half of this astral character.
            let mut out = String::with_capacity(s.len() - i + 3);
            out.push('\u{FFFD}');
            out.push_str(&s[i + c.len_utf8()..]);
            return Cow::Owned(out);
        }
        units += w;
    }
    Cow::Borrowed("")
}

/// ASCII-case-insensitive `starts_with` (what a JS `/i` regex without `u` does for ASCII literals:
/// its canonicalisation never folds a non-ASCII character onto an ASCII one).
pub(crate) fn starts_with_ascii_ci(s: &str, lit: &str) -> bool {
    s.len() >= lit.len() && s.as_bytes()[..lit.len()].eq_ignore_ascii_case(lit.as_bytes())
}

/// Builds a `regex` pattern matching `lit` ASCII-case-insensitively, spelled as explicit classes
/// (the `regex` crate's `(?i)` uses Unicode simple folding, which would also match e.g. U+212A for `k`).
pub(crate) fn ci_pattern(lit: &str) -> String {
    let mut out = String::with_capacity(lit.len() * 4);
    for c in lit.chars() {
        if c.is_ascii_alphabetic() {
            out.push('[');
            out.push(c.to_ascii_lowercase());
            out.push(c.to_ascii_uppercase());
            out.push(']');
        } else {
            out.push_str(&regex::escape(c.encode_utf8(&mut [0u8; 4])));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/// `obj.key` for a parsed JSON value: only objects have own properties that matter here; for every
/// other value the legacy code reads `undefined`.
pub(crate) fn prop<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_object().and_then(|o| o.get(key))
}

/// `prop(v, key)` as a string when it is one (`typeof x === 'string'`).
pub(crate) fn prop_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    prop(v, key).and_then(Value::as_str)
}

/// ECMAScript `ToBoolean` for a value that may be `undefined` (`None`).
pub(crate) fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => true,
    }
}

/// `a || b`.
pub(crate) fn or<'a>(a: Option<&'a Value>, b: Option<&'a Value>) -> Option<&'a Value> {
    if truthy(a) {
        a
    } else {
        b
    }
}

/// `typeof v === 'object'` (true for `null`, arrays and objects).
pub(crate) fn typeof_object(v: Option<&Value>) -> bool {
    matches!(
        v,
        Some(Value::Null) | Some(Value::Array(_)) | Some(Value::Object(_))
    )
}

/// The JS number a JSON number denotes (`JSON.parse` always yields a double).
pub(crate) fn number_value(n: &serde_json::Number) -> f64 {
    if let Some(u) = n.as_u64() {
        u as f64
    } else if let Some(i) = n.as_i64() {
        i as f64
    } else {
        n.as_f64().unwrap_or(f64::NAN)
    }
}

/// ECMAScript `Number::toString(x)` (radix 10).
pub(crate) fn js_number_to_string(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x == 0.0 {
        return "0".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if x < 0.0 {
        return format!("-{}", js_number_to_string(-x));
    }
    // Shortest round-trip digits, in scientific form "d.ddde±x".
    let sci = format!("{x:e}");
    let (mantissa, exp) = match sci.split_once('e') {
        Some(parts) => parts,
        None => (sci.as_str(), "0"),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let e10: i64 = exp.parse().unwrap_or(0);
    let k = digits.len() as i64;
    let n = e10 + 1;
    if k <= n && n <= 21 {
        let mut s = digits;
        for _ in 0..(n - k) {
            s.push('0');
        }
        s
    } else if 0 < n && n <= 21 {
        let (a, b) = digits.split_at(n as usize);
        format!("{a}.{b}")
    } else if -6 < n && n <= 0 {
        let mut s = String::from("0.");
        for _ in 0..(-n) {
            s.push('0');
        }
        s.push_str(&digits);
        s
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{sign}{}", e.abs())
        } else {
            format!("{first}.{rest}e{sign}{}", e.abs())
        }
    }
}

/// ECMAScript `ToString` for a JSON value (`String(x)`, template literals, `Array.prototype.join`).
pub(crate) fn js_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => js_number_to_string(number_value(n)),
        Value::String(s) => s.clone(),
        Value::Array(a) => join_array(a, ","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// `Array.prototype.join(sep)`: `null`/`undefined` elements become empty strings.
pub(crate) fn join_array(a: &[Value], sep: &str) -> String {
    let mut out = String::new();
    for (i, e) in a.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        if !e.is_null() {
            out.push_str(&js_to_string(e));
        }
    }
    out
}

/// `JSON.stringify(v)` (no indentation), including the JS property order of objects: integer-like
/// keys first in ascending numeric order, then the other keys in insertion order.
pub(crate) fn js_json_stringify(v: &Value) -> String {
    let mut out = String::new();
    stringify_into(v, &mut out);
    out
}

fn stringify_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let f = number_value(n);
            if f.is_finite() {
                out.push_str(&js_number_to_string(f));
            } else {
                out.push_str("null");
            }
        }
        Value::String(s) => quote_into(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                stringify_into(e, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, e)) in js_property_order(o).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                quote_into(k, out);
                out.push(':');
                stringify_into(e, out);
            }
            out.push('}');
        }
    }
}

fn array_index_key(k: &str) -> Option<u32> {
    if k.is_empty() || (k.len() > 1 && k.starts_with('0')) || !k.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    k.parse::<u32>().ok().filter(|&n| n != u32::MAX)
}

/// Own-property order of an ordinary JS object built by `JSON.parse`.
pub(crate) fn js_property_order(o: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u32, &String, &Value)> = Vec::new();
    let mut named: Vec<(&String, &Value)> = Vec::new();
    for (k, v) in o {
        match array_index_key(k) {
            Some(n) => indexed.push((n, k, v)),
            None => named.push((k, v)),
        }
    }
    indexed.sort_by_key(|&(n, _, _)| n);
    indexed
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .chain(named)
        .collect()
}

fn quote_into(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

// ---------------------------------------------------------------------------------------------
// JSON.parse
// ---------------------------------------------------------------------------------------------

/// `JSON.parse(text)`, returning `None` where JS would throw.
///
/// `JSON.parse` accepts `\uD800`-style escapes that do not form a pair; `serde_json` rejects them. Such
/// escapes are rewritten to `\uFFFD` first (the crate-wide lone-surrogate policy). Known residual
/// differences, all far from real task files: numbers beyond the f64 range (JS: `Infinity`,
/// `serde_json`: error) and nesting deeper than 128 levels (`serde_json`'s recursion limit).
pub(crate) fn json_parse(text: &str) -> Option<Value> {
    let repaired = repair_lone_surrogate_escapes(text);
    serde_json::from_str(&repaired).ok()
}

fn hex4(b: &[u8]) -> Option<u16> {
    if b.len() < 4 {
        return None;
    }
    let mut v: u16 = 0;
    for &x in &b[..4] {
        let d = (x as char).to_digit(16)?;
        v = (v << 4) | d as u16;
    }
    Some(v)
}

fn repair_lone_surrogate_escapes(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    if !text.contains("\\u") {
        return Cow::Borrowed(text);
    }
    // Collect every `\uXXXX` escape (backslashes always consume the next byte, so `\\u` is skipped).
    let mut escapes: Vec<(usize, u16)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if b.get(i + 1) == Some(&b'u') {
                if let Some(u) = b.get(i + 2..).and_then(hex4) {
                    escapes.push((i, u));
                    i += 6;
                    continue;
                }
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    let mut lone: Vec<usize> = Vec::new();
    let mut j = 0;
    while j < escapes.len() {
        let (pos, u) = escapes[j];
        if (0xD800..0xDC00).contains(&u) {
            match escapes.get(j + 1) {
                Some(&(next_pos, next))
                    if next_pos == pos + 6 && (0xDC00..0xE000).contains(&next) =>
                {
                    j += 2;
                    continue;
                }
                _ => lone.push(pos),
            }
        } else if (0xDC00..0xE000).contains(&u) {
            lone.push(pos);
        }
        j += 1;
    }
    if lone.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for pos in lone {
        out.push_str(&text[last..pos]);
        out.push_str("\\uFFFD");
        last = pos + 6;
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// `content.charCodeAt(0) === 0xFEFF ? content.slice(1) : content`.
pub(crate) fn strip_bom(s: &str) -> &str {
    s.strip_prefix('\u{FEFF}').unwrap_or(s)
}

// ---------------------------------------------------------------------------------------------
// Dates
// ---------------------------------------------------------------------------------------------

const MS_PER_DAY: f64 = 86_400_000.0;

/// ECMAScript `TimeClip`.
pub(crate) fn time_clip(t: f64) -> f64 {
    if !t.is_finite() || t.abs() > 8.64e15 {
        f64::NAN
    } else {
        t.trunc() + 0.0
    }
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, n: usize) -> Option<i64> {
        let s = self.b.get(self.i..self.i + n)?;
        let mut v = 0i64;
        for &c in s {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(c - b'0');
        }
        self.i += n;
        Some(v)
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
}

/// `Date.parse(s)` for the ECMAScript date-time string format (`YYYY[-MM[-DD]][THH:mm[:ss[.sss]]][Z|±HH:mm]`,
/// plus the expanded `±YYYYYY` years). V8 falls back to a permissive legacy parser for other shapes;
/// that fallback is not reproduced (NaN), and date-times without an offset are read as UTC where V8
/// would use the host's zone (identical on a UTC host).
pub(crate) fn date_parse(s: &str) -> f64 {
    parse_iso(s).unwrap_or(f64::NAN)
}

fn parse_iso(s: &str) -> Option<f64> {
    let mut c = Cursor {
        b: s.as_bytes(),
        i: 0,
    };
    let year = match c.peek()? {
        b'+' | b'-' => {
            let neg = c.peek() == Some(b'-');
            c.i += 1;
            let y = c.digits(6)?;
            if neg && y == 0 {
                return None;
            }
            if neg {
                -y
            } else {
                y
            }
        }
        _ => c.digits(4)?,
    };
    let mut month = 1;
    let mut day = 1;
    if c.eat(b'-') {
        month = c.digits(2)?;
        if c.eat(b'-') {
            day = c.digits(2)?;
        }
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let (mut h, mut mi, mut sec, mut ms) = (0i64, 0i64, 0i64, 0i64);
    let mut offset_min = 0i64;
    if c.eat(b'T') {
        h = c.digits(2)?;
        if !c.eat(b':') {
            return None;
        }
        mi = c.digits(2)?;
        if c.eat(b':') {
            sec = c.digits(2)?;
            if c.eat(b'.') {
                let start = c.i;
                let mut frac = 0i64;
                let mut n = 0;
                while let Some(d) = c.peek().filter(u8::is_ascii_digit) {
                    if n < 3 {
                        frac = frac * 10 + i64::from(d - b'0');
                    }
                    n += 1;
                    c.i += 1;
                }
                if c.i == start {
                    return None;
                }
                for _ in n..3 {
                    frac *= 10;
                }
                ms = frac;
            }
        }
        match c.peek() {
            Some(b'Z') => c.i += 1,
            Some(sign @ (b'+' | b'-')) => {
                c.i += 1;
                let oh = c.digits(2)?;
                if !c.eat(b':') {
                    return None;
                }
                let om = c.digits(2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                offset_min = (oh * 60 + om) * if sign == b'-' { -1 } else { 1 };
            }
            _ => {}
        }
        let valid_time =
            (h < 24 && mi < 60 && sec < 60) || (h == 24 && mi == 0 && sec == 0 && ms == 0);
        if !valid_time {
            return None;
        }
    }
    if c.i != c.b.len() {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let t = days as f64 * MS_PER_DAY + (h * 3_600_000 + mi * 60_000 + sec * 1000 + ms) as f64
        - (offset_min * 60_000) as f64;
    Some(time_clip(t))
}

/// `new Date(v).getTime()` for a parsed JSON value.
pub(crate) fn js_date_value(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => time_clip(number_value(n)),
        Value::String(s) => date_parse(s),
        Value::Array(_) => date_parse(&js_to_string(v)),
        Value::Object(_) => f64::NAN,
    }
}

/// `new Date(ms).toISOString()`; `None` where JS throws (`Invalid time value`).
pub fn js_iso_string(ms: f64) -> Option<String> {
    let t = time_clip(ms);
    if t.is_nan() {
        return None;
    }
    let t = t as i64;
    let days = t.div_euclid(86_400_000);
    let rem = t.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, ms) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    Some(format!(
        "{year}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z"
    ))
}

// ---------------------------------------------------------------------------------------------
// Array.prototype.sort with a numeric comparator
// ---------------------------------------------------------------------------------------------

/// The permutation `Array.prototype.sort((a, b) => key(a) - key(b))` applies on V8.
///
/// With no NaN key the comparator is consistent and V8's stable TimSort gives the unique stable order.
/// A NaN key makes the comparator inconsistent (every comparison with it reads as "equal"), so the result
/// depends on the algorithm: for fewer than 64 elements this reproduces V8 exactly (one run detection
/// followed by binary insertion sort); for longer arrays with NaN keys the same steps are applied to
/// V8's min-run chunks and the runs are then merged stably, which may differ from V8's galloping merges.
pub(crate) fn v8_sort_order(keys: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    if !keys.iter().any(|k| k.is_nan()) {
        idx.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
        return idx;
    }
    let n = idx.len();
    if n < 2 {
        return idx;
    }
    let cmp = |a: usize, b: usize| keys[a] - keys[b];
    let min_run = {
        let mut m = n;
        let mut r = 0;
        while m >= 64 {
            r |= m & 1;
            m >>= 1;
        }
        m + r
    };
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut low = 0usize;
    let mut remaining = n;
    while remaining != 0 {
        let high = low + remaining;
        // Count (and make ascending) the natural run starting at `low`.
        let mut run_len = 1;
        if low + 1 < high {
            run_len = 2;
            let descending = cmp(idx[low + 1], idx[low]) < 0.0;
            let mut prev = idx[low + 1];
            let mut k = low + 2;
            while k < high {
                let order = cmp(idx[k], prev);
                if descending {
                    if order >= 0.0 {
                        break;
                    }
                } else if order < 0.0 {
                    break;
                }
                prev = idx[k];
                run_len += 1;
                k += 1;
            }
            if descending {
                idx[low..low + run_len].reverse();
            }
        }
        if run_len < min_run {
            let forced = min_run.min(remaining);
            let start0 = low + run_len;
            let mut start = if start0 == low { low + 1 } else { start0 };
            while start < low + forced {
                let pivot = idx[start];
                let (mut left, mut right) = (low, start);
                while left < right {
                    let mid = left + ((right - left) >> 1);
                    if cmp(pivot, idx[mid]) < 0.0 {
                        right = mid;
                    } else {
                        left = mid + 1;
                    }
                }
                idx.copy_within(left..start, left + 1);
                idx[left] = pivot;
                start += 1;
            }
            run_len = forced;
        }
        runs.push((low, low + run_len));
        low += run_len;
        remaining -= run_len;
    }
    if runs.len() > 1 {
        // Approximation for >= 64 elements with NaN keys: stable pairwise merges.
        let mut merged: Vec<usize> = idx[runs[0].0..runs[0].1].to_vec();
        for &(a, b) in &runs[1..] {
            let right = &idx[a..b];
            let mut out = Vec::with_capacity(merged.len() + right.len());
            let (mut i, mut j) = (0, 0);
            while i < merged.len() && j < right.len() {
                if cmp(right[j], merged[i]) < 0.0 {
                    out.push(right[j]);
                    j += 1;
                } else {
                    out.push(merged[i]);
                    i += 1;
                }
            }
            out.extend_from_slice(&merged[i..]);
            out.extend_from_slice(&right[j..]);
            merged = out;
        }
        return merged;
    }
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_to_string_matches_js() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (123456789.0, "123456789"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (1e20, "100000000000000000000"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (1.2345e-7, "1.2345e-7"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1758115714892.0, "1758115714892"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
        ];
        for &(x, want) in cases {
            assert_eq!(js_number_to_string(x), want, "{x}");
        }
    }

    #[test]
    fn utf16_cuts_use_replacement_for_split_pairs() {
        assert_eq!(utf16_prefix("ab😀c", 3), "ab\u{FFFD}");
        assert_eq!(utf16_prefix("ab😀c", 4), "ab😀");
        assert_eq!(utf16_prefix("ab😀c", 2), "ab");
        assert_eq!(utf16_prefix("ab", 10), "ab");
        assert_eq!(utf16_suffix_from("ab😀c", 3), "\u{FFFD}c");
        assert_eq!(utf16_suffix_from("ab😀c", 2), "😀c");
        assert_eq!(utf16_suffix_from("ab😀c", 9), "");
        assert_eq!(utf16_len("ab😀c"), 5);
    }

    #[test]
    fn json_parse_accepts_lone_surrogates() {
        assert_eq!(
            json_parse(r#"["\ud83d", "\ud83d\ude00", "\\ud83d", "\udc00x"]"#),
            Some(serde_json::json!([
                "\u{FFFD}",
                "😀",
                "\\ud83d",
                "\u{FFFD}x"
            ]))
        );
        assert_eq!(json_parse("{"), None);
    }

    #[test]
    fn stringify_uses_js_key_order_and_numbers() {
        let v = json_parse(r#"{"b":1,"2":2.0,"1":[true,null,"a\u0001\n"],"01":1e21}"#);
        assert_eq!(
            v.map(|v| js_json_stringify(&v)).as_deref(),
            Some(r#"{"1":[true,null,"a\u0001\n"],"2":2,"b":1,"01":1e+21}"#)
        );
    }

    #[test]
    fn dates_round_trip() {
        let t = date_parse("2025-09-17T13:28:34.892Z");
        assert_eq!(t, 1758115714892.0);
        assert_eq!(
            js_iso_string(t).as_deref(),
            Some("2025-09-17T13:28:34.892Z")
        );
        assert_eq!(date_parse("2025-10-17"), 1760659200000.0);
        assert_eq!(date_parse("2025-10-17T21:56:00+02:00"), 1760730960000.0);
        assert!(date_parse("17/10/2025").is_nan());
        assert!(date_parse("2025-13-01").is_nan());
        assert_eq!(
            js_iso_string(0.0).as_deref(),
            Some("1970-01-01T00:00:00.000Z")
        );
        assert_eq!(
            js_iso_string(-62198755200000.0).as_deref(),
            Some("-000001-01-01T00:00:00.000Z")
        );
        assert_eq!(js_iso_string(f64::NAN), None);
        assert!(time_clip(8.64e15 + 1.0).is_nan());
    }

    #[test]
    fn v8_sort_small_with_nan() {
        // V8: [3, NaN, 1, 2].sort((a,b)=>a-b) → [3, NaN, 1, 2]? Run detection: cmp(NaN,3)=NaN → not
        // descending; ascending run continues while order is not < 0: NaN, then cmp(1,NaN)=NaN → run
        // grows to the whole array. Result unchanged.
        let keys = [3.0, f64::NAN, 1.0, 2.0];
        assert_eq!(v8_sort_order(&keys), vec![0, 1, 2, 3]);
        let keys = [3.0, 1.0, f64::NAN, 0.0];
        // run: cmp(1,3) < 0 → descending; cmp(NaN,1)=NaN → not >= 0 → continues; cmp(0,NaN) → continues
        // → whole array reversed.
        assert_eq!(v8_sort_order(&keys), vec![3, 2, 1, 0]);
        let keys = [2.0, 1.0, 0.0];
        assert_eq!(v8_sort_order(&keys), vec![2, 1, 0]);
    }
}
