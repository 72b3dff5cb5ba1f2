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

use super::{create, ByAddress, JsWriter, Result};
use napi::sys::{self, napi_value};
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
            Some(function) => {
                let this = create(|out| unsafe { sys::napi_get_undefined(self.env, out) })?;
                let args = &self.shapes.values[start..];
                // SAFETY: `function` and `args` are values of this writer's environment.
                create(|out| unsafe {
                    sys::napi_call_function(
                        self.env,
                        this,
                        function,
                        args.len(),
                        args.as_ptr(),
                        out,
                    )
                })?
            }
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
        if names.len() > MAX_FIELDS || names.contains(&"__proto__") {
            return Ok(Maker::Fields);
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
        let script = self.string(&source)?;
        // SAFETY: `script` is a string of this writer's environment.
        match create(|out| unsafe { sys::napi_run_script(self.env, script, out) }) {
            Ok(function) => Ok(Maker::Function(function)),
            // Should the engine refuse to compile it, the exception is cleared and the shape is
            // filled field by field from then on: the result is the same, only slower.
            Err(_) => {
                let mut exception = std::ptr::null_mut();
                // SAFETY: clears this environment's pending exception, if any.
                unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exception) };
                Ok(Maker::Fields)
            }
        }
    }
}
