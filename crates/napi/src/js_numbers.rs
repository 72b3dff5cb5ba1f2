//! Serialising straight to JavaScript values with every number a `number`.
//!
//! N-API's serde serialiser makes an unsigned integer above 2³² a `BigInt`, which `JSON.stringify`
//! refuses and arithmetic with numbers throws on. [`JsNumbers`] wraps a value so that such an
//! integer is written as a double instead: the number `JSON.parse` gives for the same JSON (exact
//! up to 2⁵³). Everything else is handed to the serialiser as it is.

use serde::ser::{
    Serialize, SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant, Serializer,
};

/// `value`, serialised with every integer a JavaScript number.
pub(crate) struct JsNumbers<'a, T: ?Sized>(pub(crate) &'a T);

impl<T: Serialize + ?Sized> Serialize for JsNumbers<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Numbers(s))
    }
}

/// The serialiser (or one of its compound serialisers) being wrapped.
struct Numbers<S>(S);

macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $name(self, $($arg: $ty),*) -> Result<S::Ok, S::Error> {
            self.0.$name($($arg),*)
        })*
    };
}

impl<S: Serializer> Serializer for Numbers<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Numbers<S::SerializeSeq>;
    type SerializeTuple = Numbers<S::SerializeTuple>;
    type SerializeTupleStruct = Numbers<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Numbers<S::SerializeTupleVariant>;
    type SerializeMap = Numbers<S::SerializeMap>;
    type SerializeStruct = Numbers<S::SerializeStruct>;
    type SerializeStructVariant = Numbers<S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_f32(v: f32);
        serialize_f64(v: f64);
        serialize_char(v: char);
        serialize_str(v: &str);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    fn serialize_u64(self, v: u64) -> Result<S::Ok, S::Error> {
        match u32::try_from(v) {
            Ok(small) => self.0.serialize_u32(small),
            Err(_) => self.0.serialize_f64(v as f64),
        }
    }

    fn serialize_i128(self, v: i128) -> Result<S::Ok, S::Error> {
        self.0.serialize_f64(v as f64)
    }

    fn serialize_u128(self, v: u128) -> Result<S::Ok, S::Error> {
        self.0.serialize_f64(v as f64)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&JsNumbers(value))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &JsNumbers(value))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &JsNumbers(value))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.0.serialize_seq(len).map(Numbers)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len).map(Numbers)
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len).map(Numbers)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.0
            .serialize_tuple_variant(name, index, variant, len)
            .map(Numbers)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.0.serialize_map(len).map(Numbers)
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        self.0.serialize_struct(name, len).map(Numbers)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.0
            .serialize_struct_variant(name, index, variant, len)
            .map(Numbers)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// The compound serialisers whose parts are values: each value is wrapped in turn.
macro_rules! wrap_values {
    ($($trait:ident::$method:ident;)*) => {
        $(impl<S: $trait> $trait for Numbers<S> {
            type Ok = S::Ok;
            type Error = S::Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
                self.0.$method(&JsNumbers(value))
            }

            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        })*
    };
}

wrap_values! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

/// The compound serialisers whose parts are named fields.
macro_rules! wrap_fields {
    ($($trait:ident;)*) => {
        $(impl<S: $trait> $trait for Numbers<S> {
            type Ok = S::Ok;
            type Error = S::Error;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), S::Error> {
                self.0.serialize_field(key, &JsNumbers(value))
            }

            fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
                self.0.skip_field(key)
            }

            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        })*
    };
}

wrap_fields! {
    SerializeStruct;
    SerializeStructVariant;
}

impl<S: SerializeMap> SerializeMap for Numbers<S> {
    type Ok = S::Ok;
    type Error = S::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), S::Error> {
        self.0.serialize_key(&JsNumbers(key))
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
        self.0.serialize_value(&JsNumbers(value))
    }

    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Through `serde_json`, the wrapper must change nothing but large unsigned integers.
    #[test]
    fn only_large_unsigned_integers_change() {
        let value = json!({
            "small": 7, "negative": -3, "float": 1.5, "text": "a", "none": null,
            "nested": [{"big": 5_000_000_000u64, "list": [1, 2_u64.pow(40)]}],
        });
        let out = serde_json::to_value(JsNumbers(&value)).expect("serialises");
        let mut want = value.clone();
        want["nested"][0]["big"] = json!(5_000_000_000.0);
        want["nested"][0]["list"][1] = json!(2f64.powi(40));
        assert_eq!(out, want);
        assert_eq!(out["small"], json!(7));
    }
}
