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

/// The file a task's texts are read from: its UI record, else its API history.
pub fn source_file(task_dir: &Path) -> Option<PathBuf> {
    UI_FILES
        .iter()
        .chain([&API_FILE])
        .map(|name| task_dir.join(name))
        .find(|p| p.is_file())
}

/// Hand every wanted text of `file` to `f` as `(kind, ts, message index, text)`, in order.
/// `may_hold` says whether the bytes of a text, as the file holds them, may hold a match; the
/// others are not decoded.
pub fn for_each_text(
    file: &Path,
    kinds: Kinds,
    may_hold: &dyn Fn(&[u8]) -> bool,
    mut f: impl FnMut(Kind, Option<i64>, usize, &str),
) {
    let is_api = file.file_name().is_some_and(|n| n == API_FILE);
    if is_api {
        let _ = for_each_api_message(file, |i, msg| {
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
        return;
    }
    // No text is decoded by the reader: each comes as its JSON literal, and only a literal whose
    // bytes may hold a match (`may_hold`, the pattern's pre-check) is decoded.
    let mut first_text_seen = false;
    let none = |_: &MessageKind| false;
    for_each_ui_message_with_texts(file, &none, |i, msg: ClineMessage, unread| {
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
