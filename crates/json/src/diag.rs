//! Diagnostics: every reader returns its value together with a list of problems it met.
//!
//! A diagnostic names the file, the JSON path inside it (when there is one) and the problem, with a
//! stable machine-readable `code` so callers can group or filter them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How bad a problem is for the task it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Severity {
    /// Something unusual that was handled without losing anything (a BOM, a retired enum value).
    Info,
    /// Data was repaired or part of it could not be used (a truncated array, a field of the wrong type).
    Warning,
    /// A whole file could not be used.
    Error,
}

/// Stable identifiers of the problems the readers report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum DiagCode {
    /// The file does not exist.
    Missing,
    /// The file could not be read (permissions, a directory in its place, I/O error).
    Unreadable,
    /// The file is empty (0 bytes or only whitespace).
    Empty,
    /// A UTF-8 byte-order mark was stripped.
    Utf8Bom,
    /// The file was UTF-16 and has been transcoded.
    Utf16,
    /// Bytes that are not valid UTF-8 were replaced by U+FFFD.
    InvalidUtf8,
    /// `\udXXX` escapes that do not form a pair were replaced by U+FFFD.
    LoneSurrogate,
    /// The JSON ended or broke before the array was closed; complete elements were kept.
    Truncated,
    /// The file is not JSON at all.
    InvalidJson,
    /// The file holds one JSON value per line instead of an array.
    Jsonl,
    /// The top-level value is not of the expected shape (e.g. an object where an array was expected).
    UnexpectedShape,
    /// An array element is `null`.
    NullEntry,
    /// An array element is not an object.
    NotAnObject,
    /// A field has a value of the wrong type; the value is kept under `extra` and ignored.
    InvalidField,
    /// A value failed validation (negative token count, empty id, …).
    InvalidValue,
    /// A JSON payload carried in a message's `text` could not be parsed.
    InvalidPayload,
    /// A retired or unknown enum value was kept as is.
    UnknownValue,
    /// The directory holds none of the task files.
    NoTaskFiles,
    /// Two sources disagree.
    Conflict,
}

/// One problem found while reading a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Diagnostic {
    /// The file (or directory) the problem was found in, as given to the reader.
    pub file: String,
    /// JSON path inside the file, like `[12].text` or `entries[3].ts`; empty for the whole file.
    pub path: String,
    pub code: DiagCode,
    pub severity: Severity,
    /// A sentence a person can act on.
    pub message: String,
}

impl Diagnostic {
    pub fn new(
        file: impl Into<String>,
        path: impl Into<String>,
        code: DiagCode,
        severity: Severity,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.into(),
            path: path.into(),
            code,
            severity,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{} at {}: {}", self.file, self.path, self.message)
        }
    }
}

/// Collects diagnostics for one file, so helpers need not repeat the file name.
#[derive(Debug, Default)]
pub struct Diags {
    file: String,
    items: Vec<Diagnostic>,
}

impl Diags {
    pub fn for_file(file: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            items: Vec::new(),
        }
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn push(
        &mut self,
        path: impl Into<String>,
        code: DiagCode,
        severity: Severity,
        message: impl Into<String>,
    ) {
        self.items.push(Diagnostic::new(
            self.file.clone(),
            path,
            code,
            severity,
            message,
        ));
    }

    pub fn extend(&mut self, other: impl IntoIterator<Item = Diagnostic>) {
        self.items.extend(other);
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.items
    }

    pub fn as_slice(&self) -> &[Diagnostic] {
        &self.items
    }
}

/// A value read from disk together with what was noticed while reading it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ReadResult"))]
pub struct Read<T> {
    pub value: T,
    pub diagnostics: Vec<Diagnostic>,
}

impl<T> Read<T> {
    pub fn new(value: T, diagnostics: Vec<Diagnostic>) -> Self {
        Self { value, diagnostics }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Read<U> {
        Read {
            value: f(self.value),
            diagnostics: self.diagnostics,
        }
    }
}
