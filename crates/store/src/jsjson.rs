//! JSON written byte for byte as JavaScript's `JSON.stringify(value)` writes it, which is how the
//! extension writes its files: compact, keys in insertion order, strings escaped the JS way, and
//! numbers in `Number.prototype.toString` form (`0` not `0.0`, `1e-7`, `1e+21`).
//!
//! serde_json already escapes strings as JS does (`\"`, `\\`, `\b \f \n \r \t`, other C0 controls as
//! lower-case `\u00xx`, everything else raw); only its float output differs, so the formatter below
//! replaces it with ryu-js, which implements the ECMAScript number-to-string algorithm.

use serde::Serialize;
use std::io;

/// A compact formatter whose floats follow JavaScript.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsFormatter;

impl serde_json::ser::Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        let mut buf = ryu_js::Buffer::new();
        writer.write_all(buf.format(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }

    fn write_u64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: u64) -> io::Result<()> {
        // JS numbers are doubles: integers past 2^53 print as the double nearest to them.
        if value > (1u64 << 53) {
            return self.write_f64(writer, value as f64);
        }
        writer.write_all(value.to_string().as_bytes())
    }

    fn write_i64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: i64) -> io::Result<()> {
        if value.unsigned_abs() > (1u64 << 53) {
            return self.write_f64(writer, value as f64);
        }
        writer.write_all(value.to_string().as_bytes())
    }
}

/// Serialise `value` exactly as `JSON.stringify(value)` would (no indentation, no newline).
pub fn to_js_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, JsFormatter);
    value.serialize(&mut ser)?;
    Ok(out)
}

/// [`to_js_vec`] as a string.
pub fn to_js_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let bytes = to_js_vec(value)?;
    // The serializer only writes UTF-8.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_follow_javascript() {
        let cases: [(f64, &str); 12] = [
            (0.0, "0"),
            (-0.0, "0"),
            (100.0, "100"),
            (1.5, "1.5"),
            (0.0000015, "0.0000015"),
            (1e-7, "1e-7"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123456.789, "123456.789"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
        ];
        for (v, want) in cases {
            assert_eq!(to_js_string(&v).expect("serialises"), want, "{v:e}");
        }
    }

    #[test]
    fn objects_are_compact_and_ordered() {
        let v = json!({"b": 1, "a": [1.0, "x\u{1}\n\"/é"], "c": null});
        assert_eq!(
            to_js_string(&v).expect("serialises"),
            r#"{"b":1,"a":[1,"x\u0001\n\"/é"],"c":null}"#
        );
    }

    #[test]
    fn big_integers_print_as_doubles() {
        assert_eq!(to_js_string(&(1u64 << 53)).expect("ok"), "9007199254740992");
        assert_eq!(to_js_string(&u64::MAX).expect("ok"), "18446744073709552000");
    }
}
