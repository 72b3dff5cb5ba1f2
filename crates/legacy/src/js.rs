//! JavaScript semantics that the compatibility target depends on.
//!
//! The legacy server runs on V8, so its strings are sequences of UTF-16 code units, its `\s` class is
//! the ECMAScript white-space set, its `toLowerCase()` is full Unicode, `JSON.parse` accepts lone
//! surrogate escapes, and `JSON.stringify`/`String(x)`/truthiness follow ECMAScript rules. This module
//! gives the Rust side the same answers where only the legacy reader needs them; numbers,
//! `JSON.stringify`, `String(x)`, truthiness, UTF-16 cuts and dates come from `roo-js`.
//!
//! **Lone surrogates.** A Rust `String` cannot hold an unpaired UTF-16 surrogate, while a JS string can
//! (a `substring` that splits a pair, `String.fromCharCode(0xD83D)`, a `"\ud83d"` JSON escape). Every
//! place where the legacy computation would produce one, this crate produces U+FFFD REPLACEMENT
//! CHARACTER instead — exactly what ECMAScript's `String.prototype.toWellFormed()` does. U+FFFD is one
//! UTF-16 unit like the surrogate it replaces, is not white space, is not a word character, has no case
//! and is not case-ignorable, so lengths, truncation points, trimming, tag scanning and lowercasing
//! downstream are unchanged. The contract is therefore: our string == `legacyString.toWellFormed()`.

use roo_js::{date_parse, number_value, time_clip, to_string, truthy};
pub(crate) use roo_js::{is_js_space, is_js_word, js_trim};
use serde_json::Value;
use std::borrow::Cow;

/// The same set as a `regex` crate character class (for the regex-based matchers).
pub(crate) const JS_SPACE_CLASS: &str = r"[\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";

/// A `.` of JavaScript (no `s` flag): any code unit but a line terminator.
pub(crate) const JS_DOT: &str = r"[^\n\r\x{2028}\x{2029}]";

/// A JavaScript line terminator, what `^` and `$` of a multiline (`m`) pattern stand next to.
pub(crate) const JS_LINE_END: &str = r"[\n\r\x{2028}\x{2029}]";

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

/// A pattern of this crate, compiled; `None` if it does not compile (a unit test per module checks
/// that every pattern does).
pub(crate) fn compile(p: &str) -> Option<regex::Regex> {
    regex::Regex::new(p).ok()
}

/// [`compile`] for the patterns that need a back-reference or a look-around.
pub(crate) fn compile_fancy(p: &str) -> Option<fancy_regex::Regex> {
    fancy_regex::Regex::new(p).ok()
}

/// `text.match(re)?.[group]`: the group of the first match.
pub(crate) fn first_capture<'t>(
    re: &Option<regex::Regex>,
    text: &'t str,
    group: usize,
) -> Option<&'t str> {
    re.as_ref()?.captures(text)?.get(group).map(|m| m.as_str())
}

/// `text.matchAll(re)` for a fancy pattern. A match that gives up on the backtracking limit ends
/// the list, where JavaScript would keep searching: only texts built to defeat it get there.
pub(crate) fn fancy_captures<'t>(
    re: &Option<fancy_regex::Regex>,
    text: &'t str,
) -> Vec<fancy_regex::Captures<'t, str>> {
    re.as_ref()
        .map(|re| re.captures_iter(text).map_while(Result::ok).collect())
        .unwrap_or_default()
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

// ---------------------------------------------------------------------------------------------
// JSON.parse
// ---------------------------------------------------------------------------------------------

/// `JSON.parse(text)`, returning `None` where JS would throw.
///
/// `JSON.parse` accepts `\uD800`-style escapes that do not form a pair; `serde_json` rejects them. Such
/// escapes are rewritten to `\uFFFD` first (the crate-wide lone-surrogate policy). Known residual
/// differences, all far from real task files: numbers beyond the f64 range (JS: `Infinity`,
/// `serde_json`: error) and nesting deeper than 128 levels (`serde_json`'s recursion limit).
pub fn json_parse(text: &str) -> Option<Value> {
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
    while let Some(off) = b.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        i += off;
        if b.get(i + 1) == Some(&b'u') {
            if let Some(u) = b.get(i + 2..).and_then(hex4) {
                escapes.push((i, u));
                i += 6;
                continue;
            }
        }
        i += 2;
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

/// `new Date(v).getTime()` for a parsed JSON value.
pub(crate) fn js_date_value(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => time_clip(number_value(n)),
        Value::String(s) => date_parse(s),
        Value::Array(_) => date_parse(&to_string(v)),
        Value::Object(_) => f64::NAN,
    }
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
        // A text that holds a `\u` and ends on a backslash: the escape walk steps past its end.
        assert_eq!(json_parse("\"\\u0041\"\\"), None);
        assert_eq!(repair_lone_surrogate_escapes("\\u0041\\"), "\\u0041\\");
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
