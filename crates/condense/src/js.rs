//! Accessors over JSON messages with the extension's JavaScript semantics (numbers read as
//! `typeof x === "number"`, `{...obj, key}`, content as blocks); truthiness, `String(v)`,
//! `Number#toString`, `JSON.stringify` and UTF-16 lengths come from `roo-js`.

use serde_json::{Map, Value};

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

/// `Date.now()` as the double JavaScript holds it.
pub fn now_ms() -> f64 {
    roo_js::now_ms() as f64
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
