//! Typed, tolerant readers for the task files of Roo Code, Zoo Code, Cline and legacy Kilo Code.
//!
//! Every reader returns the typed value *and* diagnostics (file, JSON path, problem). Unknown
//! fields and enum values are kept, damaged files yield what can be recovered, and nothing here
//! panics on bytes read from disk. No regular expression is used on this path.

pub mod api;
pub mod api_head;
pub mod decode;
pub mod diag;
mod escaped_json;
pub mod extract;
pub mod fast_hash;
mod fields;
pub mod history;
pub mod host;
pub mod instruction_key;
pub mod json;
mod json_cursor;
mod kept;
pub mod read;
mod string_scan;
pub mod text;
pub mod ui;

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
pub use ui::{Ask, ClineMessage, MessageKind, Payload, Say, SayTool, WantedTexts};
