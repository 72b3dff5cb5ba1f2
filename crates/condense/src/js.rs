//! JavaScript semantics needed for identical results: truthiness, `String(v)`, `Number#toString`,
//! `JSON.stringify` (compact and indented), and a few accessors over JSON messages.

use serde_json::{Map, Value};
use std::fmt::Write as _;

/// JS truthiness of a JSON value (`undefined` is `None`).
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => true,
    }
}

/// `typeof v === "number"` then the value.
pub fn number(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

/// `x || 0` for a JSON value that should be a number (non-numbers count as 0).
pub fn num_or_zero(v: Option<&Value>) -> f64 {
    match number(v) {
        Some(f) if !f.is_nan() => f,
        _ => 0.0,
    }
}

/// A JSON number from an f64, written as an integer when it is one (as JS prints it).
pub fn num_value(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        Value::Number((f as i64).into())
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// Milliseconds since the epoch, as `Date.now()`.
pub fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64)
}

/// `Number.prototype.toString()` for a double.
pub fn number_to_string(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if f == 0.0 {
        return "0".into();
    }
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    // Shortest round-trip digits and exponent, e.g. "1.5e-6" → digits "15", point at -5.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp + 1;
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    out
}

fn json_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        if i.unsigned_abs() <= 9_007_199_254_740_992 {
            return i.to_string();
        }
    }
    match n.as_f64() {
        Some(f) if f.is_finite() => number_to_string(f),
        _ => "null".into(),
    }
}

/// `String(v)`; `None` is `undefined`.
pub fn js_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => json_number(n),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::Null => String::new(),
                other => js_string(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_json(out: &mut String, v: &Value, indent: Option<&str>, depth: usize) {
    let newline = |out: &mut String, d: usize| {
        if let Some(ind) = indent {
            out.push('\n');
            for _ in 0..d {
                out.push_str(ind);
            }
        }
    };
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&json_number(n)),
        Value::String(s) => quote(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_json(out, item, indent, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                quote(out, k);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_json(out, item, indent, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
    }
}

/// `JSON.stringify(v)`.
pub fn stringify(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v, None, 0);
    out
}

/// `JSON.stringify(v, null, 2)`.
pub fn stringify_pretty(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v, Some("  "), 0);
    out
}

/// Length in UTF-16 code units, as `s.length`.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// `{...obj, key: value}`: an existing key keeps its place, a new one goes at the end.
pub fn with_key(obj: &Value, key: &str, value: Value) -> Value {
    let mut map = obj.as_object().cloned().unwrap_or_default();
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

/// A text block `{type:"text", text}`.
pub fn text_block(text: &str) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::String("text".into()));
    m.insert("text".into(), Value::String(text.to_owned()));
    Value::Object(m)
}

/// The string value of `obj[key]`, if it is a string.
pub fn str_field<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// `obj.type === name`.
pub fn is_type(obj: &Value, name: &str) -> bool {
    str_field(obj, "type") == Some(name)
}

/// Content as blocks: an array as is, a string as one text block, anything else as no blocks.
pub fn content_blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(s)) => vec![text_block(s)],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_print_as_in_js() {
        for (f, s) in [
            (0.0, "0"),
            (100.0, "100"),
            (0.0000015, "0.0000015"),
            (1e-7, "1e-7"),
            (1e21, "1e+21"),
            (123.456, "123.456"),
            (-2.5, "-2.5"),
            (1.2345e25, "1.2345e+25"),
            (0.1 + 0.2, "0.30000000000000004"),
        ] {
            assert_eq!(number_to_string(f), s, "{f}");
        }
    }

    #[test]
    fn stringify_matches_js() {
        let v = json!({"a": [1, 2.5, {"b": null}], "c": "x\u{1}\"", "d": {}, "e": []});
        assert_eq!(
            stringify(&v),
            r#"{"a":[1,2.5,{"b":null}],"c":"x\u0001\"","d":{},"e":[]}"#
        );
        assert_eq!(
            stringify_pretty(&json!({"a": [1], "b": {}})),
            "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}"
        );
    }
}
