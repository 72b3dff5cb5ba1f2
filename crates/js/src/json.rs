//! `JSON.stringify` byte for byte.
//!
//! serde_json already escapes strings as JavaScript does (`\"`, `\\`, `\b \f \n \r \t`, the other
//! C0 controls as lower-case `\u00xx`, everything else raw, `/` included); [`JsFormatter`] gives it
//! JavaScript's numbers (`0` not `0.0`, `1e-7`, `1e+21`, integers past 2^53 as the nearest double)
//! and JavaScript's indentation (`JSON.stringify(v, null, indent)`: empty containers stay `[]` and
//! `{}`, a space after each `:`). Non-finite doubles are written `null` by serde_json, as by
//! JavaScript.
//!
//! Objects that `JSON.parse` built list integer-like keys first in ascending order, then the others
//! in insertion order; [`stringify`] and [`stringify_pretty`] follow that order for a
//! [`serde_json::Value`]. Typed values ([`to_json_vec`]) keep their serialisation order, as
//! JavaScript keeps the order in which an object literal was written.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::io;

/// A serde_json formatter writing what `JSON.stringify` writes: compact when the indent is empty.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsFormatter<'a> {
    indent: &'a [u8],
    depth: usize,
    has_value: bool,
}

impl<'a> JsFormatter<'a> {
    /// `JSON.stringify(v)`.
    pub fn compact() -> Self {
        Self::default()
    }

    /// `JSON.stringify(v, null, indent)`, `indent` being the string repeated per level.
    pub fn indented(indent: &'a str) -> Self {
        JsFormatter {
            indent: indent.as_bytes(),
            ..Self::default()
        }
    }

    fn newline<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        if self.indent.is_empty() {
            return Ok(());
        }
        w.write_all(b"\n")?;
        for _ in 0..self.depth {
            w.write_all(self.indent)?;
        }
        Ok(())
    }

    fn open<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.newline(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w)
    }
}

/// 2^53: integers up to it are exact doubles and print as themselves.
const EXACT: u64 = 1 << 53;

impl serde_json::ser::Formatter for JsFormatter<'_> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(ryu_js::Buffer::new().format(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }

    fn write_u64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: u64) -> io::Result<()> {
        if value > EXACT {
            return self.write_f64(w, value as f64);
        }
        w.write_all(value.to_string().as_bytes())
    }

    fn write_i64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: i64) -> io::Result<()> {
        if value.unsigned_abs() > EXACT {
            return self.write_f64(w, value as f64);
        }
        w.write_all(value.to_string().as_bytes())
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(if self.indent.is_empty() { b":" } else { b": " })
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Serialise a typed value as `JSON.stringify(value)` would (compact, fields in serialisation
/// order).
pub fn to_json_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    write(value, JsFormatter::compact())
}

/// [`to_json_vec`] as a string.
pub fn to_json_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    to_json_vec(value).map(into_string)
}

/// `JSON.stringify(v)` of a parsed value.
pub fn stringify(v: &Value) -> String {
    write(&JsOrder(v), JsFormatter::compact()).map_or_else(|_| String::new(), into_string)
}

/// `JSON.stringify(v, null, 2)` of a parsed value.
pub fn stringify_pretty(v: &Value) -> String {
    write(&JsOrder(v), JsFormatter::indented("  ")).map_or_else(|_| String::new(), into_string)
}

fn write<T: Serialize + ?Sized>(value: &T, f: JsFormatter<'_>) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, f))?;
    Ok(out)
}

fn into_string(bytes: Vec<u8>) -> String {
    // serde_json writes UTF-8 only.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A parsed value serialised with JavaScript's property order.
struct JsOrder<'a>(&'a Value);

impl Serialize for JsOrder<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&JsOrder(item))?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut out = s.serialize_map(Some(map.len()))?;
                if map.keys().any(|k| array_index(k).is_some()) {
                    for (k, v) in property_order(map) {
                        out.serialize_entry(k, &JsOrder(v))?;
                    }
                } else {
                    for (k, v) in map {
                        out.serialize_entry(k, &JsOrder(v))?;
                    }
                }
                out.end()
            }
            other => other.serialize(s),
        }
    }
}

/// An array index (`"0"` … `"4294967294"`, no leading zero): such keys come first in an object.
fn array_index(k: &str) -> Option<u32> {
    let canonical = !k.is_empty() && (k.len() == 1 || !k.starts_with('0'));
    if !canonical || !k.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    k.parse::<u32>().ok().filter(|&n| n != u32::MAX)
}

/// The own-property order of an object built by `JSON.parse`: array indices ascending, then the
/// other keys in insertion order.
pub fn property_order(o: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u32, &String, &Value)> = Vec::new();
    let mut named: Vec<(&String, &Value)> = Vec::new();
    for (k, v) in o {
        match array_index(k) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("JSON")
    }

    #[test]
    fn compact_matches_javascript() {
        let v = json!({"a": [1, 2.5, {"b": null}], "c": "x\u{1}\"\\/é\u{7f}\u{2028}", "d": {}, "e": []});
        assert_eq!(
            stringify(&v),
            "{\"a\":[1,2.5,{\"b\":null}],\"c\":\"x\\u0001\\\"\\\\/é\u{7f}\u{2028}\",\"d\":{},\"e\":[]}"
        );
        assert_eq!(
            stringify(&json!("\u{8}\u{c}\n\r\t\u{1f}")),
            r#""\b\f\n\r\t\u001f""#
        );
    }

    #[test]
    fn keys_follow_javascript_property_order() {
        let v = parse(
            r#"{"b":1,"2":2.0,"1":[true,null,"a\u0001\n"],"01":1e21,"4294967295":0,"4294967294":0}"#,
        );
        assert_eq!(
            stringify(&v),
            r#"{"1":[true,null,"a\u0001\n"],"2":2,"4294967294":0,"b":1,"01":1e+21,"4294967295":0}"#
        );
    }

    #[test]
    fn indented_matches_javascript() {
        assert_eq!(
            stringify_pretty(&json!({"a": [1], "b": {}, "c": [[], {"d": -0.0}]})),
            "{\n  \"a\": [\n    1\n  ],\n  \"b\": {},\n  \"c\": [\n    [],\n    {\n      \"d\": 0\n    }\n  ]\n}"
        );
        assert_eq!(stringify_pretty(&json!([])), "[]");
        assert_eq!(stringify_pretty(&json!("x")), "\"x\"");
    }

    #[test]
    fn numbers_are_javascript_numbers() {
        let cases: [(f64, &str); 8] = [
            (0.0, "0"),
            (-0.0, "0"),
            (1e-7, "1e-7"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "null"),
        ];
        for (v, want) in cases {
            assert_eq!(to_json_string(&v).expect("serialises"), want, "{v:e}");
        }
        assert_eq!(
            to_json_string(&(1u64 << 53)).expect("ok"),
            "9007199254740992"
        );
        assert_eq!(
            to_json_string(&u64::MAX).expect("ok"),
            "18446744073709552000"
        );
        assert_eq!(
            to_json_string(&i64::MIN).expect("ok"),
            "-9223372036854776000"
        );
        assert_eq!(
            stringify(&parse("[18446744073709551615, -12, 1.0]")),
            "[18446744073709552000,-12,1]"
        );
    }

    #[test]
    fn typed_values_keep_their_field_order() {
        let v = json!({"b": 1, "1": 2});
        assert_eq!(to_json_string(&v).expect("ok"), r#"{"b":1,"1":2}"#);
    }
}
