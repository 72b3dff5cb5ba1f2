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

use crate::sys::RawEnv;
use napi::sys::napi_value;
use napi::{Env, Unknown};
use rustc_hash::{FxHashMap, FxHasher};
use serde::ser::{self, Serialize};
use std::collections::hash_map::Entry;
use std::hash::Hasher;
use std::ptr;

mod sample;
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
    env: RawEnv<'e>,
    /// The JavaScript string of each field and variant name written so far, by the address and
    /// length of the name (names are `&'static str`, so an address never names another text).
    names: ByAddress<(usize, usize), napi_value>,
    shapes: shapes::Shapes,
    /// The field whose value is being written (its name's address and length), if any.
    field: Option<(usize, usize)>,
    /// The strings written under each field, while they repeat.
    texts: ByAddress<(usize, usize), FieldTexts>,
    long: LongTexts,
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
    fn text(&mut self, env: RawEnv<'_>, text: &str) -> Result<napi_value> {
        let key = long_key(text);
        match self.known.entry(key) {
            Entry::Occupied(found) => {
                let value = *found.get();
                if same_text(env, value, text, &mut self.back)? {
                    Ok(value)
                } else {
                    env.string(text)
                }
            }
            Entry::Vacant(slot) => Ok(*slot.insert(env.string(text)?)),
        }
    }
}

/// The key a long text is found by: its length and its bytes' hash, fed to `FxHasher` a
/// little-endian word at a time (the last one padded with zeros). Word by word rather than
/// `Hasher::write`, so that a test can make two texts with one key and check that each still
/// gets its own string (`__tests__/golden/word-hash-collision.json`).
fn long_key(text: &str) -> (usize, u64) {
    let mut hasher = FxHasher::default();
    let (words, rest) = text.as_bytes().as_chunks::<8>();
    for word in words {
        hasher.write_u64(u64::from_le_bytes(*word));
    }
    let mut last = [0u8; 8];
    last[..rest.len()].copy_from_slice(rest);
    hasher.write_u64(u64::from_le_bytes(last));
    (text.len(), hasher.finish())
}

/// Whether the JavaScript string `value` is `text`, read back as UTF-8 into `back`.
fn same_text(env: RawEnv<'_>, value: napi_value, text: &str, back: &mut Vec<u8>) -> Result<bool> {
    back.clear();
    back.resize(text.len() + 1, 0);
    let written = env.read_string(value, back)?;
    // Every string kept was made from a text of `text.len()` bytes, so a full-length read is all
    // of it.
    Ok(back.get(..written) == Some(text.as_bytes()))
}

impl<'e> JsWriter<'e> {
    pub(crate) fn new(env: &'e Env) -> Self {
        JsWriter {
            env: RawEnv::new(env),
            names: FxHashMap::default(),
            shapes: shapes::Shapes::default(),
            field: None,
            texts: FxHashMap::default(),
            long: LongTexts::default(),
        }
    }

    /// `value` as a JavaScript value.
    pub(crate) fn write<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<Unknown<'e>> {
        let raw = value.serialize(&mut *self)?;
        Ok(self.env.unknown(raw))
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
        self.env.string(text)
    }

    /// A string value: the one written before under the same field when there is one.
    fn text(&mut self, text: &str) -> Result<napi_value> {
        if text.len() > MAX_SHARED_TEXT {
            return self.long.text(self.env, text);
        }
        let Some(field) = self.field else {
            return self.string(text);
        };
        let env = self.env;
        let texts = self.texts.entry(field).or_default();
        if texts.off {
            return env.string(text);
        }
        texts.lookups += 1;
        if let Some(&value) = texts.known.get(text) {
            texts.hits += 1;
            return Ok(value);
        }
        if texts.lookups >= TEXT_TRIAL && texts.hits * 4 < texts.lookups {
            texts.off = true;
            texts.known = FxHashMap::default();
            return env.string(text);
        }
        let value = env.string(text)?;
        texts.known.insert(text.into(), value);
        Ok(value)
    }

    fn double(&self, v: impl Into<f64>) -> Result<napi_value> {
        self.env.double(v.into())
    }

    fn int32(&self, v: impl Into<i32>) -> Result<napi_value> {
        self.env.int32(v.into())
    }

    fn uint32(&self, v: impl Into<u32>) -> Result<napi_value> {
        self.env.uint32(v.into())
    }

    /// A signed integer: an int32 when it fits, else the nearest double.
    fn signed(&self, v: impl Into<i128>) -> Result<napi_value> {
        self.number(Number::signed(v.into()))
    }

    /// An unsigned integer: a uint32 when it fits, else the nearest double.
    fn unsigned(&self, v: impl Into<u128>) -> Result<napi_value> {
        self.number(Number::unsigned(v.into()))
    }

    fn number(&self, n: Number) -> Result<napi_value> {
        match n {
            Number::Int32(v) => self.int32(v),
            Number::Uint32(v) => self.uint32(v),
            Number::Double(v) => self.double(v),
        }
    }

    fn null(&self) -> Result<napi_value> {
        self.env.null()
    }

    fn object(&self) -> Result<napi_value> {
        self.env.object()
    }

    fn array(&self, len: usize) -> Result<napi_value> {
        self.env.array(len)
    }

    fn set(&self, object: napi_value, key: napi_value, value: napi_value) -> Result<()> {
        self.env.set(object, key, value)
    }

    fn set_element(&self, array: napi_value, index: u32, value: napi_value) -> Result<()> {
        self.env.set_element(array, index, value)
    }

    /// `{ [variant]: value }`.
    fn variant(&mut self, variant: &'static str, value: napi_value) -> Result<napi_value> {
        let object = self.object()?;
        let key = self.name(variant)?;
        self.set(object, key, value)?;
        Ok(object)
    }
}

/// The JavaScript number an integer is written as: an int32 or uint32 when it fits (V8 keeps
/// those as small integers), else the double nearest to it, which is what `JSON.parse` gives for
/// its decimal text (Rust's `as f64` rounds to nearest, ties to even, as JavaScript does).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    Int32(i32),
    Uint32(u32),
    Double(f64),
}

impl Number {
    fn signed(v: i128) -> Self {
        match i32::try_from(v) {
            Ok(small) => Number::Int32(small),
            Err(_) => Number::Double(v as f64),
        }
    }

    fn unsigned(v: u128) -> Self {
        match u32::try_from(v) {
            Ok(small) => Number::Uint32(small),
            Err(_) => Number::Double(v as f64),
        }
    }
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
        self.env.boolean(v)
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
        self.env.buffer(v)
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

#[cfg(test)]
mod tests {
    use super::{long_key, Number, MAX_SHARED_TEXT};
    use proptest::prelude::*;

    /// Two texts of one length with one key, made by choosing the second's first two words so
    /// that the hasher's state after them is the first's. `__tests__/conversion.test.ts` scans
    /// tasks holding both, to check that the writer, which shares long strings found by their
    /// key, still gives each its own text: if the key changes, make a new pair.
    #[test]
    fn the_collision_pair_of_the_conversion_test_collides() {
        let pair: Vec<String> = serde_json::from_str(include_str!(
            "../../../__tests__/golden/word-hash-collision.json"
        ))
        .unwrap_or_default();
        assert_eq!(pair.len(), 2);
        assert_ne!(pair[0], pair[1]);
        assert!(
            pair[0].len() > MAX_SHARED_TEXT,
            "long enough to be shared by content"
        );
        assert_eq!(long_key(&pair[0]), long_key(&pair[1]));
        // Texts that differ only in their tail, or by trailing NULs, have keys apart.
        assert_ne!(
            long_key(&pair[0]),
            long_key(&format!("{}x", &pair[0][..pair[0].len() - 1]))
        );
        assert_ne!(long_key("abc"), long_key("abc\0"));
    }

    /// The value a JavaScript program reads: the number as a double.
    fn read(n: Number) -> f64 {
        match n {
            Number::Int32(v) => f64::from(v),
            Number::Uint32(v) => f64::from(v),
            Number::Double(v) => v,
        }
    }

    /// What `JSON.parse` gives for the decimal text of an integer: the correctly rounded double,
    /// as serde_json's float parsing gives it (the workspace enables `float_roundtrip`).
    fn json_parse(text: &str) -> f64 {
        match serde_json::from_str::<serde_json::Value>(&format!("{text}.0")) {
            Ok(serde_json::Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            _ => f64::NAN,
        }
    }

    #[test]
    fn integers_at_the_edges_are_the_doubles_json_parse_gives() {
        let unsigned: [u128; 10] = [
            0,
            u128::from(u32::MAX),
            u128::from(u32::MAX) + 1,
            (1 << 53) - 1,
            1 << 53,
            (1 << 53) + 1,
            (1 << 53) + 3,
            u128::from(u64::MAX),
            u128::from(u64::MAX) + 1,
            u128::MAX,
        ];
        for v in unsigned {
            assert_eq!(read(Number::unsigned(v)), json_parse(&v.to_string()), "{v}");
        }
        let signed: [i128; 8] = [
            i128::from(i32::MIN),
            i128::from(i32::MIN) - 1,
            i128::from(i32::MAX) + 1,
            -(1 << 53) - 1,
            i128::from(i64::MIN),
            i128::from(i64::MAX),
            i128::MIN,
            i128::MAX,
        ];
        for v in signed {
            assert_eq!(read(Number::signed(v)), json_parse(&v.to_string()), "{v}");
        }
        // 2^53 + 1 has no double: it is written as its even neighbour 2^53, as JSON.parse reads it.
        assert_eq!(
            Number::unsigned((1 << 53) + 1),
            Number::Double(9007199254740992.0)
        );
        assert_eq!(
            Number::unsigned(u128::from(u32::MAX)),
            Number::Uint32(u32::MAX)
        );
        assert_eq!(Number::signed(-1), Number::Int32(-1));
        assert_eq!(
            Number::signed(i128::from(u32::MAX)),
            Number::Double(4294967295.0)
        );
    }

    proptest! {
        #[test]
        fn every_u64_is_the_double_json_parse_gives(v in any::<u64>()) {
            let n = Number::unsigned(u128::from(v));
            prop_assert_eq!(matches!(n, Number::Uint32(_)), v <= u64::from(u32::MAX));
            prop_assert_eq!(read(n), json_parse(&v.to_string()));
        }

        #[test]
        fn every_i64_is_the_double_json_parse_gives(v in any::<i64>()) {
            let n = Number::signed(i128::from(v));
            prop_assert_eq!(matches!(n, Number::Int32(_)), i32::try_from(v).is_ok());
            prop_assert_eq!(read(n), json_parse(&v.to_string()));
        }

        #[test]
        fn every_u128_is_the_double_json_parse_gives(v in any::<u128>()) {
            prop_assert_eq!(read(Number::unsigned(v)), json_parse(&v.to_string()));
        }
    }
}
