//! Typed access to the fields of a JSON object, tolerant of wrong types.
//!
//! Each getter removes the field from the object. A field of the wrong type is reported and put
//! back, so whatever is left at the end is the element's unknown (or unusable) data and is kept
//! verbatim in the typed value's `extra` map: nothing read from disk is dropped.

use crate::diag::{DiagCode, Diags, Severity};
use crate::json::kind_of;
use serde_json::{Map, Value};

pub(crate) struct Fields<'d> {
    map: Map<String, Value>,
    path: String,
    diags: &'d mut Diags,
}

impl<'d> Fields<'d> {
    pub(crate) fn new(
        map: Map<String, Value>,
        path: impl Into<String>,
        diags: &'d mut Diags,
    ) -> Self {
        Self {
            map,
            path: path.into(),
            diags,
        }
    }

    fn field_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    fn reject(&mut self, key: &str, value: Value, expected: &str) {
        let path = self.field_path(key);
        self.diags.push(
            path,
            DiagCode::InvalidField,
            Severity::Warning,
            format!(
                "expected {expected}, found {}; the value was kept as is and not used",
                kind_of(&value)
            ),
        );
        self.map.insert(key.to_owned(), value);
    }

    /// Removes `key`; `None` when absent or `null`.
    fn take(&mut self, key: &str) -> Option<Value> {
        match self.map.shift_remove(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    pub(crate) fn string(&mut self, key: &str) -> Option<String> {
        match self.take(key)? {
            Value::String(s) => Some(s),
            other => {
                self.reject(key, other, "a string");
                None
            }
        }
    }

    pub(crate) fn f64(&mut self, key: &str) -> Option<f64> {
        match self.take(key)? {
            Value::Number(n) => n.as_f64(),
            other => {
                self.reject(key, other, "a number");
                None
            }
        }
    }

    /// An integer; a number with a fractional part is truncated towards zero and reported.
    pub(crate) fn i64(&mut self, key: &str) -> Option<i64> {
        match self.take(key)? {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(i)
                } else {
                    let f = n.as_f64()?;
                    let path = self.field_path(key);
                    self.diags.push(
                        path,
                        DiagCode::InvalidValue,
                        Severity::Info,
                        format!("expected an integer, found {f}; it was truncated"),
                    );
                    if f.is_finite() {
                        Some(f.trunc() as i64)
                    } else {
                        None
                    }
                }
            }
            other => {
                self.reject(key, other, "a number");
                None
            }
        }
    }

    pub(crate) fn bool(&mut self, key: &str) -> Option<bool> {
        match self.take(key)? {
            Value::Bool(b) => Some(b),
            other => {
                self.reject(key, other, "a boolean");
                None
            }
        }
    }

    /// An array of strings; non-string items are dropped from the typed list and reported.
    pub(crate) fn strings(&mut self, key: &str) -> Option<Vec<String>> {
        match self.take(key)? {
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut bad = 0usize;
                for item in items {
                    match item {
                        Value::String(s) => out.push(s),
                        _ => bad += 1,
                    }
                }
                if bad > 0 {
                    let path = self.field_path(key);
                    self.diags.push(
                        path,
                        DiagCode::InvalidField,
                        Severity::Warning,
                        format!("{bad} item(s) that are not strings were ignored"),
                    );
                }
                Some(out)
            }
            other => {
                self.reject(key, other, "an array of strings");
                None
            }
        }
    }

    pub(crate) fn object(&mut self, key: &str) -> Option<Map<String, Value>> {
        match self.take(key)? {
            Value::Object(m) => Some(m),
            other => {
                self.reject(key, other, "an object");
                None
            }
        }
    }

    /// Any non-null value.
    pub(crate) fn value(&mut self, key: &str) -> Option<Value> {
        self.take(key)
    }

    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    pub(crate) fn diags(&mut self) -> &mut Diags {
        self.diags
    }

    /// What is left: unknown fields and rejected values, in their original order.
    pub(crate) fn finish(self) -> Map<String, Value> {
        self.map
    }
}

/// Declares a string enum that keeps values it does not know as `Other(String)`.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            known { $($(#[$vmeta:meta])* $variant:ident => $text:literal),* $(,)? }
            retired { $($(#[$rmeta:meta])* $rvariant:ident => $rtext:literal),* $(,)? }
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            $($(#[$rmeta])* $rvariant,)*
            /// A value this version does not know (newer extension, another fork).
            Other(String),
        }

        impl $name {
            /// The text of every value this version knows, current and retired.
            pub const ALL_TEXTS: &'static [&'static str] = &[$($text,)* $($rtext,)*];

            pub fn parse(s: &str) -> Self {
                match s {
                    $($text => Self::$variant,)*
                    $($rtext => Self::$rvariant,)*
                    other => Self::Other(other.to_owned()),
                }
            }

            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $text,)*
                    $(Self::$rvariant => $rtext,)*
                    Self::Other(s) => s,
                }
            }

            /// True for values that current releases no longer write.
            pub fn is_retired(&self) -> bool {
                false $(|| matches!(self, Self::$rvariant))*
            }

            /// True for values outside the known and retired lists.
            pub fn is_unknown(&self) -> bool {
                matches!(self, Self::Other(_))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub(crate) use open_enum;
