//! Objects of structs made by one call of a JavaScript function each.
//!
//! Setting the fields of a fresh object one by one is most of a conversion's time: each
//! `napi_set_property` goes through V8's generic property store. A struct is made instead by a
//! function compiled for its shape (its field names, in the order they are written: a field
//! skipped when empty makes another shape), `(function(a0,a1){return {"taskId":a0,"files":a1}})`,
//! called with the field values, from whose object literal V8 makes the object at once. A shape
//! is compiled once it has been written [`USES_BEFORE_COMPILING`] times by the same writer, so a
//! small result pays no compilation; until then, for a shape with a `__proto__` field (which a
//! literal would take for the prototype) or very many fields, and should compiling fail, the
//! object is filled field by field. (`napi_run_script` compiles a script as `vm.Script` does, so
//! `--disallow-code-generation-from-strings`, which stops `eval` and `new Function`, allows it.)

use super::{ByAddress, JsWriter, Result};
use napi::sys::napi_value;
use std::fmt::Write;

/// How many objects of one shape a writer fills field by field before it compiles the shape.
const USES_BEFORE_COMPILING: u32 = 8;

/// Shapes with more fields than this are always filled field by field.
const MAX_FIELDS: usize = 256;

/// The fields of the structs being written and the functions that make them.
#[derive(Default)]
pub(super) struct Shapes {
    /// The name of each field written and not yet made into its object, with its value: a
    /// struct's fields sit above those of the struct that holds it, and leave when it is made.
    ids: Vec<(usize, usize)>,
    names: Vec<&'static str>,
    values: Vec<napi_value>,
    /// What each shape met so far is made by, by the addresses and lengths of its field names.
    makers: ByAddress<Box<[(usize, usize)]>, Maker>,
}

#[derive(Clone, Copy)]
enum Maker {
    /// Filled field by field so far, this many times.
    Seen(u32),
    /// Made by this function of the field values.
    Function(napi_value),
    /// Always filled field by field.
    Fields,
}

impl JsWriter<'_> {
    /// Where the fields of a struct about to be written start.
    pub(super) fn begin_struct(&self) -> usize {
        self.shapes.values.len()
    }

    /// One field of the struct being written.
    pub(super) fn push_field(&mut self, name: &'static str, value: napi_value) {
        self.shapes.ids.push((name.as_ptr() as usize, name.len()));
        self.shapes.names.push(name);
        self.shapes.values.push(value);
    }

    /// The object of the struct whose fields start at `start`.
    pub(super) fn end_struct(&mut self, start: usize) -> Result<napi_value> {
        let object = match self.maker(start)? {
            Some(function) => self.env.call(function, &self.shapes.values[start..])?,
            None => {
                let object = self.object()?;
                for i in start..self.shapes.values.len() {
                    let key = self.name(self.shapes.names[i])?;
                    self.set(object, key, self.shapes.values[i])?;
                }
                object
            }
        };
        self.shapes.ids.truncate(start);
        self.shapes.names.truncate(start);
        self.shapes.values.truncate(start);
        Ok(object)
    }

    /// The function that makes the struct whose fields start at `start`, if it has one by now.
    fn maker(&mut self, start: usize) -> Result<Option<napi_value>> {
        let shape = &self.shapes.ids[start..];
        let next = match self.shapes.makers.get(shape).copied() {
            Some(Maker::Function(function)) => return Ok(Some(function)),
            Some(Maker::Fields) => return Ok(None),
            Some(Maker::Seen(n)) if n < USES_BEFORE_COMPILING => Maker::Seen(n + 1),
            Some(Maker::Seen(_)) => self.compile(&self.shapes.names[start..])?,
            None => Maker::Seen(1),
        };
        let shape = &self.shapes.ids[start..];
        match self.shapes.makers.get_mut(shape) {
            Some(maker) => *maker = next,
            None => {
                self.shapes.makers.insert(shape.into(), next);
            }
        }
        Ok(match next {
            Maker::Function(function) => Some(function),
            Maker::Seen(_) | Maker::Fields => None,
        })
    }

    /// The function that makes an object with these fields from their values, in this order.
    fn compile(&self, names: &[&'static str]) -> Result<Maker> {
        let Some(source) = shape_source(names) else {
            return Ok(Maker::Fields);
        };
        // Should the engine refuse to compile it, the exception is cleared and the shape is
        // filled field by field from then on: the result is the same, only slower.
        Ok(match self.env.run_script(&source)? {
            Some(function) => Maker::Function(function),
            None => Maker::Fields,
        })
    }
}

/// The source of the function making an object with fields `names` from their values,
/// `(function(a0,a1){return {"taskId":a0,"files":a1}})`; `None` for a shape filled field by field.
fn shape_source(names: &[&str]) -> Option<String> {
    if names.len() > MAX_FIELDS || names.contains(&"__proto__") {
        return None;
    }
    let params = (0..names.len())
        .map(|i| format!("a{i}"))
        .collect::<Vec<_>>();
    let mut source = format!("(function({}){{return {{", params.join(","));
    for (i, name) in names.iter().enumerate() {
        // A JSON string is a JavaScript string literal of the same text.
        let key = serde_json::Value::from(*name).to_string();
        let sep = if i == 0 { "" } else { "," };
        // Writing to a String cannot fail.
        let _ = write!(source, "{sep}{key}:a{i}");
    }
    source.push_str("}})");
    Some(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shape_source_names_each_field_once_as_a_string_literal() {
        let names = ["taskId", "a\"b", "line\nbreak", "\u{2028}", "é😀", ""];
        let source = shape_source(&names).unwrap_or_default();
        let body = source
            .strip_prefix("(function(a0,a1,a2,a3,a4,a5){return {")
            .and_then(|s| s.strip_suffix("}})"))
            .unwrap_or_default();
        // Each `"key":aN` member, its key read back as JSON (which JavaScript reads alike).
        let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&format!(
            "{{{}}}",
            (0..names.len()).fold(body.to_owned(), |b, i| b.replacen(
                &format!(":a{i}"),
                &format!(":{i}"),
                1
            ))
        ))
        .unwrap_or_default();
        let keys: Vec<&str> = object.keys().map(String::as_str).collect();
        assert_eq!(keys, names);
        for (i, v) in object.values().enumerate() {
            assert_eq!(v.as_u64(), Some(i as u64));
        }
    }

    #[test]
    fn shapes_a_literal_cannot_make_are_filled_field_by_field() {
        assert_eq!(shape_source(&["a", "__proto__"]), None);
        let many: Vec<String> = (0..=MAX_FIELDS).map(|i| format!("f{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(shape_source(&many), None);
        assert!(shape_source(&many[..MAX_FIELDS]).is_some());
    }
}
