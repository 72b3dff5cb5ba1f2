//! Serialising straight to JavaScript values, with every number a `number`.
//!
//! [`JsWriter`] is a serde serialiser that builds N-API values directly. It writes a result in
//! the shape N-API's own serde serialiser gives, with two differences:
//!
//! - Every number is a JavaScript `number`, never a `BigInt`: an integer that fits 32 bits is
//!   written as one, any other (64- and 128-bit integers, unsigned ones above 2³² included) as
//!   the double `JSON.parse` gives for the same JSON text (exact up to 2⁵³). Floats are written
//!   as they are: NaN and the infinities stay NaN and infinities (JSON would make them `null`).
//!   N-API's serialiser makes an unsigned integer above 2³² a `BigInt`, which `JSON.stringify`
//!   refuses and arithmetic with numbers throws on.
//! - Each struct field name and enum variant name becomes a JavaScript string once per writer,
//!   and that string is the key of every object that has the field: N-API's serialiser builds a
//!   C string and has V8 look the name up again for each field of each object.
//! - A struct whose shape the writer has met often is made by one call of a function compiled
//!   for that shape rather than field by field ([`shapes`]).
//! - A short string met again under the same field (a host name, a mode, a workspace, the id of
//!   a child listed by many parents) is created once and the same JavaScript string given each
//!   time, which no program can tell from a fresh copy ([`FieldTexts`]). A long string met again
//!   under any field (a subtask's instruction is also its parent's `childTasks` message, its
//!   prefix also the parent's `childTaskInstructionPrefixes` entry) is shared too ([`LongTexts`]).
//!
//! The rest is the usual serde data model in JavaScript: structs and maps are objects (a map key
//! that is not a string becomes a property name as JavaScript converts it), sequences and tuples
//! are arrays, `None`, `()` and unit structs are `null`, a unit variant is its name, a newtype
//! struct is its value, a newtype, tuple or struct variant is `{ Variant: value }` (as
//! `serde_json` writes them; no result of ours has a tuple or struct variant), bytes are a
//! `Buffer` and a `char` is a string.

use napi::sys::{self, napi_env, napi_status, napi_value};
use napi::{Env, Unknown};
use rustc_hash::{FxHashMap, FxHasher};
use serde::ser::{self, Serialize};
use std::collections::hash_map::Entry;
use std::hash::Hasher;
use std::marker::PhantomData;
use std::ptr;

mod shapes;

type Result<T> = napi::Result<T>;

/// A map keyed by the addresses (and lengths) of `&'static str` names.
type ByAddress<K, V> = FxHashMap<K, V>;

/// Writes serialisable values as JavaScript values, creating each property name once.
///
/// The values it writes, and the names it keeps, are handles of the N-API handle scope that is
/// current when it is made: a writer lives inside one callback (all of a result is converted in
/// the callback that returns it) and must not be used across handle scopes.
pub(crate) struct JsWriter<'e> {
    env: napi_env,
    /// The JavaScript string of each field and variant name written so far, by the address and
    /// length of the name (names are `&'static str`, so an address never names another text).
    names: ByAddress<(usize, usize), napi_value>,
    shapes: shapes::Shapes,
    /// The field whose value is being written (its name's address and length), if any.
    field: Option<(usize, usize)>,
    /// The strings written under each field, while they repeat.
    texts: ByAddress<(usize, usize), FieldTexts>,
    long: LongTexts,
    _env: PhantomData<&'e Env>,
}

/// Strings up to this length (in bytes) are shared by field ([`FieldTexts`]), longer ones by
/// content across fields ([`LongTexts`]).
const MAX_SHARED_TEXT: usize = 96;

/// Lookups a field gets before its strings are judged: when fewer than one in four found a
/// string already written, the field's strings are taken to be unique and no longer kept.
const TEXT_TRIAL: u32 = 256;

/// The strings one field has written, by their text.
#[derive(Default)]
struct FieldTexts {
    known: FxHashMap<Box<str>, napi_value>,
    lookups: u32,
    hits: u32,
    /// Set once the field's strings proved unique.
    off: bool,
}

/// The strings longer than [`MAX_SHARED_TEXT`] written so far, under any field, by their length
/// and a hash of their bytes. The texts themselves are not kept in Rust: a string found by its
/// key is read back from JavaScript and compared byte for byte before it is given again, so two
/// texts with the same key are never confused (the second is then created afresh).
#[derive(Default)]
struct LongTexts {
    known: FxHashMap<(usize, u64), napi_value>,
    /// Where a candidate is read back into (its length plus the terminator N-API writes).
    back: Vec<u8>,
}

impl LongTexts {
    fn text(&mut self, env: napi_env, text: &str) -> Result<napi_value> {
        let mut hasher = FxHasher::default();
        hasher.write(text.as_bytes());
        let key = (text.len(), hasher.finish());
        match self.known.entry(key) {
            Entry::Occupied(found) => {
                let value = *found.get();
                if same_text(env, value, text, &mut self.back)? {
                    Ok(value)
                } else {
                    new_string(env, text)
                }
            }
            Entry::Vacant(slot) => Ok(*slot.insert(new_string(env, text)?)),
        }
    }
}

/// Whether the JavaScript string `value` is `text`, read back as UTF-8 into `back`.
fn same_text(env: napi_env, value: napi_value, text: &str, back: &mut Vec<u8>) -> Result<bool> {
    back.clear();
    back.resize(text.len() + 1, 0);
    let mut written = 0usize;
    // SAFETY: `back` holds `back.len()` writable bytes; N-API writes at most that many (the text,
    // cut to fit, and a terminator) and the count of text bytes to `written`.
    check(unsafe {
        sys::napi_get_value_string_utf8(
            env,
            value,
            back.as_mut_ptr().cast(),
            back.len(),
            &mut written,
        )
    })?;
    // Every string kept was made from a text of `text.len()` bytes, so a full-length read is all
    // of it.
    Ok(back.get(..written) == Some(text.as_bytes()))
}

impl<'e> JsWriter<'e> {
    pub(crate) fn new(env: &'e Env) -> Self {
        JsWriter {
            env: env.raw(),
            names: FxHashMap::default(),
            shapes: shapes::Shapes::default(),
            field: None,
            texts: FxHashMap::default(),
            long: LongTexts::default(),
            _env: PhantomData,
        }
    }

    /// `value` as a JavaScript value.
    pub(crate) fn write<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<Unknown<'e>> {
        let raw = value.serialize(&mut *self)?;
        // SAFETY: `raw` was just created in this writer's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(self.env, raw) })
    }

    /// The JavaScript string of a field or variant name, created on its first use.
    fn name(&mut self, name: &'static str) -> Result<napi_value> {
        let id = (name.as_ptr() as usize, name.len());
        if let Some(&value) = self.names.get(&id) {
            return Ok(value);
        }
        let value = self.string(name)?;
        self.names.insert(id, value);
        Ok(value)
    }

    fn string(&self, text: &str) -> Result<napi_value> {
        new_string(self.env, text)
    }

    /// A string value: the one written before under the same field when there is one.
    fn text(&mut self, text: &str) -> Result<napi_value> {
        if text.len() > MAX_SHARED_TEXT {
            return self.long.text(self.env, text);
        }
        let Some(field) = self.field else {
            return self.string(text);
        };
        let texts = self.texts.entry(field).or_default();
        if texts.off {
            return new_string(self.env, text);
        }
        texts.lookups += 1;
        if let Some(&value) = texts.known.get(text) {
            texts.hits += 1;
            return Ok(value);
        }
        if texts.lookups >= TEXT_TRIAL && texts.hits * 4 < texts.lookups {
            texts.off = true;
            texts.known = FxHashMap::default();
            return new_string(self.env, text);
        }
        let value = new_string(self.env, text)?;
        texts.known.insert(text.into(), value);
        Ok(value)
    }

    fn double(&self, v: impl Into<f64>) -> Result<napi_value> {
        let v = v.into();
        create(|out| unsafe { sys::napi_create_double(self.env, v, out) })
    }

    fn int32(&self, v: impl Into<i32>) -> Result<napi_value> {
        let v = v.into();
        create(|out| unsafe { sys::napi_create_int32(self.env, v, out) })
    }

    fn uint32(&self, v: impl Into<u32>) -> Result<napi_value> {
        let v = v.into();
        create(|out| unsafe { sys::napi_create_uint32(self.env, v, out) })
    }

    /// A signed integer: an int32 when it fits, else the nearest double.
    fn signed(&self, v: impl Into<i128>) -> Result<napi_value> {
        let v = v.into();
        match i32::try_from(v) {
            Ok(small) => self.int32(small),
            Err(_) => self.double(v as f64),
        }
    }

    /// An unsigned integer: a uint32 when it fits, else the nearest double.
    fn unsigned(&self, v: impl Into<u128>) -> Result<napi_value> {
        let v = v.into();
        match u32::try_from(v) {
            Ok(small) => self.uint32(small),
            Err(_) => self.double(v as f64),
        }
    }

    fn null(&self) -> Result<napi_value> {
        create(|out| unsafe { sys::napi_get_null(self.env, out) })
    }

    fn object(&self) -> Result<napi_value> {
        create(|out| unsafe { sys::napi_create_object(self.env, out) })
    }

    fn array(&self, len: usize) -> Result<napi_value> {
        create(|out| unsafe { sys::napi_create_array_with_length(self.env, len, out) })
    }

    fn set(&self, object: napi_value, key: napi_value, value: napi_value) -> Result<()> {
        check(unsafe { sys::napi_set_property(self.env, object, key, value) })
    }

    fn set_element(&self, array: napi_value, index: u32, value: napi_value) -> Result<()> {
        check(unsafe { sys::napi_set_element(self.env, array, index, value) })
    }

    /// `{ [variant]: value }`.
    fn variant(&mut self, variant: &'static str, value: napi_value) -> Result<napi_value> {
        let object = self.object()?;
        let key = self.name(variant)?;
        self.set(object, key, value)?;
        Ok(object)
    }
}

fn new_string(env: napi_env, text: &str) -> Result<napi_value> {
    // SAFETY (for this and the other calls in this module): `env` is the environment of the
    // callback the writer lives in; every pointer passed points to live data of the length given,
    // and `out` to a local slot.
    create(|out| unsafe {
        sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, out)
    })
}

/// The value an N-API call writes to its out-parameter, or the call's error.
fn create(call: impl FnOnce(*mut napi_value) -> napi_status) -> Result<napi_value> {
    let mut out = ptr::null_mut();
    check(call(&mut out))?;
    Ok(out)
}

fn check(status: napi_status) -> Result<()> {
    napi::check_status!(status, "a result could not be converted to JavaScript")
}

/// A value in the making: an array filled element by element, an object field by field, or the
/// fields of a struct gathered until it is made.
pub(crate) struct Compound<'w, 'e> {
    writer: &'w mut JsWriter<'e>,
    /// The array or object being filled.
    target: napi_value,
    /// The next element's index (arrays).
    next: u32,
    /// The key whose value comes next (maps).
    key: napi_value,
    /// What the compound is once filled: `target`, or `{ Variant: target }`.
    result: napi_value,
    /// A struct's: where its fields start among those the writer holds ([`JsWriter::end_struct`]
    /// makes it).
    start: Option<usize>,
}

impl<'w, 'e> Compound<'w, 'e> {
    fn new(writer: &'w mut JsWriter<'e>, target: napi_value) -> Self {
        Compound {
            writer,
            target,
            next: 0,
            key: ptr::null_mut(),
            result: target,
            start: None,
        }
    }

    /// The compound of a tuple or struct variant: `target` inside `{ [variant]: target }`.
    fn variant(
        writer: &'w mut JsWriter<'e>,
        variant: &'static str,
        target: napi_value,
    ) -> Result<Self> {
        let result = writer.variant(variant, target)?;
        Ok(Compound {
            result,
            ..Compound::new(writer, target)
        })
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let value = value.serialize(&mut *self.writer)?;
        self.writer.set_element(self.target, self.next, value)?;
        self.next += 1;
        Ok(())
    }

    fn field<T: Serialize + ?Sized>(&mut self, name: &'static str, value: &T) -> Result<()> {
        self.writer.field = Some((name.as_ptr() as usize, name.len()));
        if self.start.is_some() {
            let value = value.serialize(&mut *self.writer)?;
            self.writer.push_field(name, value);
            return Ok(());
        }
        let key = self.writer.name(name)?;
        let value = value.serialize(&mut *self.writer)?;
        self.writer.set(self.target, key, value)
    }

    fn end(self) -> Result<napi_value> {
        match self.start {
            Some(start) => self.writer.end_struct(start),
            None => Ok(self.result),
        }
    }
}

/// The serialiser's methods for numbers, each handing its value to one of the writer's makers.
macro_rules! scalars {
    ($($method:ident($ty:ty) => $maker:ident;)*) => {
        $(fn $method(self, v: $ty) -> Result<napi_value> {
            self.$maker(v)
        })*
    };
}

impl<'w, 'e> ser::Serializer for &'w mut JsWriter<'e> {
    type Ok = napi_value;
    type Error = napi::Error;
    type SerializeSeq = Compound<'w, 'e>;
    type SerializeTuple = Compound<'w, 'e>;
    type SerializeTupleStruct = Compound<'w, 'e>;
    type SerializeTupleVariant = Compound<'w, 'e>;
    type SerializeMap = Compound<'w, 'e>;
    type SerializeStruct = Compound<'w, 'e>;
    type SerializeStructVariant = Compound<'w, 'e>;

    fn serialize_bool(self, v: bool) -> Result<napi_value> {
        create(|out| unsafe { sys::napi_get_boolean(self.env, v, out) })
    }

    scalars! {
        serialize_i8(i8) => int32;
        serialize_i16(i16) => int32;
        serialize_i32(i32) => int32;
        serialize_i64(i64) => signed;
        serialize_i128(i128) => signed;
        serialize_u8(u8) => uint32;
        serialize_u16(u16) => uint32;
        serialize_u32(u32) => uint32;
        serialize_u64(u64) => unsigned;
        serialize_u128(u128) => unsigned;
        serialize_f32(f32) => double;
        serialize_f64(f64) => double;
    }

    fn serialize_char(self, v: char) -> Result<napi_value> {
        self.string(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<napi_value> {
        self.text(v)
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<napi_value> {
        create(|out| unsafe {
            sys::napi_create_buffer_copy(self.env, v.len(), v.as_ptr().cast(), ptr::null_mut(), out)
        })
    }

    fn serialize_none(self) -> Result<napi_value> {
        self.null()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<napi_value> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<napi_value> {
        self.null()
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<napi_value> {
        self.null()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<napi_value> {
        self.name(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<napi_value> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<napi_value> {
        let value = value.serialize(&mut *self)?;
        self.variant(variant, value)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'w, 'e>> {
        let array = self.array(len.unwrap_or(0))?;
        Ok(Compound::new(self, array))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'w, 'e>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'w, 'e>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'w, 'e>> {
        let array = self.array(len)?;
        Compound::variant(self, variant, array)
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'w, 'e>> {
        let object = self.object()?;
        Ok(Compound::new(self, object))
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'w, 'e>> {
        let start = Some(self.begin_struct());
        Ok(Compound {
            start,
            ..Compound::new(self, ptr::null_mut())
        })
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'w, 'e>> {
        let object = self.object()?;
        Compound::variant(self, variant, object)
    }
}

/// The compound serialisers whose parts are elements of an array.
macro_rules! elements {
    ($($trait:ident::$method:ident;)*) => {
        $(impl ser::$trait for Compound<'_, '_> {
            type Ok = napi_value;
            type Error = napi::Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                self.element(value)
            }

            fn end(self) -> Result<napi_value> {
                Compound::end(self)
            }
        })*
    };
}

elements! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

/// The compound serialisers whose parts are named fields of an object.
macro_rules! fields {
    ($($trait:ident;)*) => {
        $(impl ser::$trait for Compound<'_, '_> {
            type Ok = napi_value;
            type Error = napi::Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                name: &'static str,
                value: &T,
            ) -> Result<()> {
                self.field(name, value)
            }

            fn end(self) -> Result<napi_value> {
                Compound::end(self)
            }
        })*
    };
}

fields! {
    SerializeStruct;
    SerializeStructVariant;
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = napi_value;
    type Error = napi::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key = key.serialize(&mut *self.writer)?;
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let value = value.serialize(&mut *self.writer)?;
        self.writer.set(self.target, self.key, value)
    }

    fn end(self) -> Result<napi_value> {
        Compound::end(self)
    }
}
