//! The texts of a task that a grep searches, one message at a time, each with its kind: what the
//! user wrote, what the assistant wrote, tool inputs, tool results.
//!
//! The UI record (`ui_messages.json`, `claude_messages.json`) is read when the task has one: it
//! holds every message with its time, tool calls as the user approved them, command output, MCP
//! responses and errors. A task without one is read from its API history (texts, `tool_use`
//! inputs as JSON, `tool_result` contents).

use crate::chunk::{API_FILE, UI_FILES};
use roo_formats::ui::{literal_is_blank, ForeignMessage};
use roo_formats::{
    for_each_api_message, for_each_ui_message_with_texts, Ask, Block, ClineMessage, MessageKind,
    Role, Say,
};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What a searched text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "GrepKind"))]
pub enum Kind {
    User,
    Assistant,
    ToolInput,
    ToolResult,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::User,
        Kind::Assistant,
        Kind::ToolInput,
        Kind::ToolResult,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Assistant => "assistant",
            Kind::ToolInput => "toolInput",
            Kind::ToolResult => "toolResult",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Which kinds a grep searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds {
    pub user: bool,
    pub assistant: bool,
    pub tool_input: bool,
    pub tool_result: bool,
}

impl Default for Kinds {
    fn default() -> Self {
        Kinds {
            user: true,
            assistant: true,
            tool_input: true,
            tool_result: true,
        }
    }
}

impl Kinds {
    pub fn none() -> Self {
        Kinds {
            user: false,
            assistant: false,
            tool_input: false,
            tool_result: false,
        }
    }

    pub fn with(mut self, k: Kind) -> Self {
        match k {
            Kind::User => self.user = true,
            Kind::Assistant => self.assistant = true,
            Kind::ToolInput => self.tool_input = true,
            Kind::ToolResult => self.tool_result = true,
        }
        self
    }

    pub fn has(&self, k: Kind) -> bool {
        match k {
            Kind::User => self.user,
            Kind::Assistant => self.assistant,
            Kind::ToolInput => self.tool_input,
            Kind::ToolResult => self.tool_result,
        }
    }
}

/// The kind of a UI record, when it is one a grep reads. `first_text_seen`: whether the task's
/// first `say:"text"` (what the user asked) has gone by.
pub fn ui_kind(kind: &MessageKind, first_text_seen: bool) -> Option<Kind> {
    Some(match kind {
        MessageKind::Say(Say::Text) if !first_text_seen => Kind::User,
        MessageKind::Say(
            Say::Task | Say::UserFeedback | Say::UserFeedbackDiff | Say::SubtaskResult,
        ) => Kind::User,
        MessageKind::Say(Say::Text | Say::Reasoning | Say::CompletionResult)
        | MessageKind::Ask(
            Ask::Followup | Ask::CompletionResult | Ask::PlanModeRespond | Ask::ActModeRespond,
        ) => Kind::Assistant,
        MessageKind::Ask(
            Ask::Tool | Ask::Command | Ask::UseMcpServer | Ask::BrowserActionLaunch | Ask::NewTask,
        )
        | MessageKind::Say(Say::Tool | Say::Command | Say::BrowserAction) => Kind::ToolInput,
        MessageKind::Ask(Ask::CommandOutput)
        | MessageKind::Say(
            Say::CommandOutput
            | Say::McpServerResponse
            | Say::CodebaseSearchResult
            | Say::BrowserActionResult
            | Say::Error
            | Say::DiffError,
        ) => Kind::ToolResult,
        _ => return None,
    })
}

/// The task's dialogue files in the order they are read: its UI record (either name), then its
/// API history; only those that are there (a name taken by a FIFO, a link or anything else is
/// there too, and refused when read, so that the refusal is said).
pub fn source_files(task_dir: &Path) -> Vec<PathBuf> {
    UI_FILES
        .iter()
        .chain([&API_FILE])
        .map(|name| task_dir.join(name))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect()
}

/// The first of [`source_files`].
pub fn source_file(task_dir: &Path) -> Option<PathBuf> {
    source_files(task_dir).into_iter().next()
}

/// Why bytes that begin so cannot be a dialogue file, or `None`: after a byte-order mark and
/// white space a task file's JSON begins with `[` or `{` (a UTF-16 file without a mark, with
/// one of them beside a NUL). A file of NULs or of any other binary is refused by its first
/// bytes, before it is read whole.
pub fn json_start_problem(head: &[u8]) -> Option<String> {
    let opens = |b: u8| b == b'[' || b == b'{';
    match head {
        [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..] => return None,
        [a, 0, ..] | [0, a, ..] if opens(*a) => return None,
        _ => {}
    }
    let body = head.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(head);
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        None => None,
        Some(&b) if opens(b) => None,
        Some(&b) => Some(format!(
            "it is not JSON (its first byte is 0x{b:02X}, where `[` or `{{` should be); it was not read"
        )),
    }
}

/// Why the dialogue file `file` cannot be read at all, judged before it is read whole: refused
/// by the reader's limits ([`roo_formats::read::peek_task_file`]), or by its first bytes.
pub fn file_problem(file: &Path) -> Option<String> {
    match roo_formats::read::peek_task_file(file, 4096) {
        Err(d) => Some(d.message),
        Ok(None) => None,
        Ok(Some(head)) => json_start_problem(&head),
    }
}

/// Hand every wanted text of `file` to `f` as `(kind, ts, message index, text)`, in order.
/// `may_hold` says whether the bytes of a text, as the file holds them, may hold a match; the
/// others are not decoded.
pub fn for_each_text(
    file: &Path,
    kinds: Kinds,
    may_hold: &dyn Fn(&[u8]) -> bool,
    mut f: impl FnMut(Kind, Option<i64>, usize, &str),
) -> Option<String> {
    let is_api = file.file_name().is_some_and(|n| n == API_FILE);
    if is_api {
        let (summary, _) = for_each_api_message(file, |i, msg| {
            let role = match &msg.role {
                Some(Role::User) => Kind::User,
                Some(Role::Assistant) => Kind::Assistant,
                _ => Kind::ToolResult,
            };
            if msg.blocks().is_empty() {
                for t in msg.texts() {
                    if kinds.has(role) {
                        f(role, msg.ts, i, t);
                    }
                }
            }
            for b in msg.blocks() {
                let (kind, text) = match &b.block {
                    Block::Text { text } => (role, std::borrow::Cow::Borrowed(text.as_str())),
                    Block::ToolResult {
                        content: Some(c), ..
                    }
                    | Block::ToolResultPart {
                        output: Some(c), ..
                    } => (Kind::ToolResult, value_text(c)),
                    _ => match b.tool_use() {
                        Some((name, input)) => (
                            Kind::ToolInput,
                            std::borrow::Cow::Owned(format!("{name} {input}")),
                        ),
                        None => continue,
                    },
                };
                if kinds.has(kind) {
                    f(kind, msg.ts, i, &text);
                }
            }
        });
        return refusal(&summary);
    }
    // No text is decoded by the reader: each comes as its JSON literal, and only a literal whose
    // bytes may hold a match (`may_hold`, the pattern's pre-check) is decoded.
    let mut first_text_seen = false;
    let none = |_: &MessageKind| false;
    let summary = for_each_ui_message_with_texts(file, &none, |i, msg: ClineMessage, unread| {
        if let Some(ForeignMessage { role, text, ts }) = msg.foreign_message() {
            let k = if role == "user" {
                Kind::User
            } else {
                Kind::Assistant
            };
            if kinds.has(k) && may_hold(text.as_bytes()) {
                f(k, ts, i, &text);
            }
            return;
        }
        let blank = match (&msg.text, &unread) {
            (Some(t), _) => t.trim().is_empty(),
            (None, Some(u)) => literal_is_blank(u.literal()),
            (None, None) => true,
        };
        let kind = ui_kind(&msg.kind, first_text_seen);
        if matches!(msg.kind, MessageKind::Say(Say::Text | Say::Task)) && !blank {
            first_text_seen = true;
        }
        let Some(k) = kind.filter(|k| kinds.has(*k)) else {
            return;
        };
        match (&msg.text, unread) {
            (Some(t), _) => f(k, msg.ts, i, t),
            (None, Some(u)) if may_hold(u.literal().as_bytes()) => {
                if let Some(t) = u.decode() {
                    f(k, msg.ts, i, &t);
                }
            }
            _ => {}
        }
    });
    refusal(&summary)
}

/// Why a file the reader kept nothing of was refused, or `None`: a file with a message kept, or
/// an empty one, was read. Refused: a file the reader stopped on (its first error), or whose
/// elements were all unreadable (the first problem said of them).
fn refusal(summary: &roo_formats::StreamSummary) -> Option<String> {
    if summary.kept > 0 {
        return None;
    }
    let errors = summary
        .diagnostics
        .iter()
        .find(|d| d.severity == roo_formats::Severity::Error);
    let elements = summary.stats.as_ref().is_some_and(|s| s.elements > 0);
    errors
        .or_else(|| summary.diagnostics.first().filter(|_| elements))
        .map(|d| format!("no message of it could be read ({})", d.message))
}

/// The text of a tool result's content: a string, or the texts of its blocks, one per line.
fn value_text(v: &serde_json::Value) -> std::borrow::Cow<'_, str> {
    use serde_json::Value;
    match v {
        Value::String(s) => std::borrow::Cow::Borrowed(s.as_str()),
        Value::Array(items) => std::borrow::Cow::Owned(
            items
                .iter()
                .filter_map(|b| match b {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}
