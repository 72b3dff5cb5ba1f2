//! Typed, tolerant readers for the task files of Roo Code, Zoo Code, Cline and legacy Kilo Code.
//!
//! Every reader returns the typed value *and* diagnostics (file, JSON path, problem). Unknown
//! fields and enum values are kept, damaged files yield what can be recovered, and nothing here
//! panics on bytes read from disk. No regular expression is used on this path.

pub mod api;
pub mod api_head;
pub mod extract;
mod fields;
pub mod history;
pub mod host;
pub mod instruction_key;
pub mod links;
pub mod read;
pub mod text;
#[cfg(feature = "ts")]
mod ts;
pub mod ui;

// The JSON steps live in `roo-json` (docs/json.md); the modules the other crates import from here
// are re-exported under their old paths, the rest for this crate's own `crate::` paths.
#[cfg(test)]
use roo_json::string_scan;
pub use roo_json::{decode, diag, json};
use roo_json::{escaped_json, json_cursor, kept};

pub use api::{ApiHistory, ApiMessage, Block, Content, ContentBlock, HistoryFormat, Role};
pub use api_head::{ApiHead, HeadBlock, LazyText, LazyValue};
pub use diag::{DiagCode, Diagnostic, Diags, Read, Severity};
pub use history::{FileInContext, HistoryIndex, HistoryItem, TaskMetadata};
pub use host::{HostEvidence, HostFamily};
pub use read::{
    for_each_api_head, for_each_api_message, for_each_ui_message, for_each_ui_message_with_texts,
    read_api_history, read_history_index, read_history_item, read_task_metadata, read_ui_messages,
    StreamSummary,
};
pub use ui::{Ask, ClineMessage, MessageKind, Payload, Say, SayTool, ToolCallKind, WantedTexts};
