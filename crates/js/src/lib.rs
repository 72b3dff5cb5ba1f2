//! JavaScript semantics, written once for every crate that must give the answers V8 gives: the
//! extension and the legacy server are JavaScript programs, and their files, keys and counts are
//! compared byte for byte with ours.
//!
//! - [`number`]: `Number.prototype.toString` (ryu-js: the ECMAScript shortest round-trip digits and
//!   exponent rules) and the double a JSON number denotes.
//! - [`json`]: `JSON.stringify`, compact and indented, with JavaScript's property order for parsed
//!   objects, and a serde formatter for typed values.
//! - [`latin1`]: JSON text as Latin-1 bytes, for a one-byte JavaScript string.
//! - [`utf16`]: `length`, `substring` and cuts counted in UTF-16 code units.
//! - [`date`]: `Date#toISOString`, `Date.parse` of the ECMAScript date-time format, `TimeClip`, and
//!   the civil-date arithmetic under them.
//! - here: truthiness, `String(v)`, and the name of a JSON type for messages.
//!
//! A Rust string cannot hold a lone UTF-16 surrogate where a JavaScript string can; wherever the
//! JavaScript computation would produce one, these functions produce U+FFFD instead (what
//! `String.prototype.toWellFormed()` does), which has the same UTF-16 length.

pub mod date;
pub mod json;
pub mod latin1;
pub mod number;
pub mod text;
pub mod utf16;

pub use date::{
    civil_from_days, date_parse, days_from_civil, iso_from_ms, now_ms, time_clip, to_iso_string,
};
pub use json::{
    property_order, stringify, stringify_pretty, to_json_string, to_json_vec, JsFormatter,
};
pub use latin1::to_latin1_json;
pub use number::{number_to_string, number_value};
pub use text::{
    collapse_js_space, is_js_space, is_js_word, js_trim, js_trim_end, starts_with_ascii_ci,
};
pub use utf16::{
    truncate_utf16, utf16_len, utf16_len_upto, utf16_prefix, utf16_suffix_from, utf16_suffix_last,
};

use serde_json::Value;

/// ECMAScript `ToBoolean` of a JSON value; `None` is `undefined`.
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => {
            let f = number_value(n);
            f != 0.0 && !f.is_nan()
        }
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => true,
    }
}

/// ECMAScript `ToString` of a JSON value (`String(x)`, template literals): arrays are joined with
/// `,` (see [`join`]), objects are `[object Object]`.
pub fn to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_to_string(number_value(n)),
        Value::String(s) => s.clone(),
        Value::Array(a) => join(a, ","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// `String(v)` where `None` is `undefined`.
pub fn string_of(v: Option<&Value>) -> String {
    v.map_or_else(|| "undefined".to_owned(), to_string)
}

/// `Array.prototype.join(sep)`: `null` elements become empty strings.
pub fn join(a: &[Value], sep: &str) -> String {
    let mut out = String::new();
    for (i, e) in a.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        if !e.is_null() {
            out.push_str(&to_string(e));
        }
    }
    out
}

/// The JSON type of a value with its article, for messages: `null`, `a boolean`, `a number`,
/// `a string`, `an array`, `an object`.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn truthiness_follows_to_boolean() {
        let falsy = [
            json!(null),
            json!(false),
            json!(0),
            json!(-0.0),
            json!(0.0),
            json!(""),
        ];
        for v in &falsy {
            assert!(!truthy(Some(v)), "{v}");
        }
        assert!(!truthy(None));
        let truthy_values = [
            json!(true),
            json!(1),
            json!(-1),
            json!(0.5),
            json!("0"),
            json!([]),
            json!({}),
        ];
        for v in &truthy_values {
            assert!(truthy(Some(v)), "{v}");
        }
    }

    #[test]
    fn to_string_follows_javascript() {
        assert_eq!(to_string(&json!(null)), "null");
        assert_eq!(to_string(&json!(true)), "true");
        assert_eq!(to_string(&json!(1.0)), "1");
        assert_eq!(to_string(&json!(1e21)), "1e+21");
        assert_eq!(to_string(&json!([1, null, "a", [2, 3]])), "1,,a,2,3");
        assert_eq!(to_string(&json!({"a": 1})), "[object Object]");
        assert_eq!(string_of(None), "undefined");
        assert_eq!(string_of(Some(&json!("x"))), "x");
        assert_eq!(join(&[json!(1), json!(null), json!(2)], " | "), "1 |  | 2");
    }

    #[test]
    fn kinds_name_every_type() {
        let kinds: Vec<_> = [
            json!(null),
            json!(true),
            json!(1),
            json!("s"),
            json!([]),
            json!({}),
        ]
        .iter()
        .map(kind_of)
        .collect();
        assert_eq!(
            kinds,
            [
                "null",
                "a boolean",
                "a number",
                "a string",
                "an array",
                "an object"
            ]
        );
    }
}
