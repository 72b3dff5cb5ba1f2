//! The JSON reading steps under the task-file readers of `roo-formats` (docs/json.md).
//!
//! - [`json`]: tolerant readers of the JSON arrays and objects the extension writes, one element
//!   at a time, keeping what precedes a break;
//! - [`json_cursor`]: a forward-only reader that hands out the raw literal of every value it
//!   passes, checked as `serde_json` checks a value it ignores;
//! - [`string_scan`]: where a JSON string literal ends, 64 bytes at a time;
//! - [`escaped_json`]: members of a JSON object written inside a JSON string, read without
//!   decoding the string;
//! - [`decode`]: task-file bytes (BOM, UTF-16, invalid UTF-8, lone surrogate escapes) to JSON text;
//! - [`diag`]: the diagnostics every step reports its repairs and refusals with;
//! - [`kept`]: buffers a thread keeps from one use to the next.
//!
//! Every step refuses (`None`) what it is unsure of rather than guessing, and nothing here panics
//! on bytes read from disk; the fuzz targets in `fuzz/` check both against `serde_json`.

pub mod decode;
pub mod diag;
pub mod escaped_json;
pub mod json;
pub mod json_cursor;
pub mod kept;
pub mod string_scan;
