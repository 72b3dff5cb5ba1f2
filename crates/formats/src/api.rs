//! `api_conversation_history.json`: the messages sent to the model, in both stored shapes — the
//! Anthropic `MessageParam` array of every release so far, and the versioned
//! `{"version":2,"messages":[…]}` wrapper in AI-SDK shape (roles `user`/`assistant`/`tool`, parts
//! `tool-call`/`tool-result`).

use crate::diag::Diags;
use crate::fields::{open_enum, Fields};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

open_enum! {
    /// `role` of an API message.
    pub enum Role {
        known { User => "user", Assistant => "assistant", Tool => "tool", System => "system" }
        retired {}
    }
}

/// Which stored shape the history file had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum HistoryFormat {
    /// A plain array of Anthropic-style messages.
    AnthropicArray,
    /// `{"version": N, "messages": [...]}`.
    Versioned,
}

/// The body of a content block, by its `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text {
        text: String,
    },
    Image {
        source: Option<Value>,
    },
    /// Anthropic native tool call (≥ v3.31.1).
    ToolUse {
        id: Option<String>,
        name: String,
        input: Value,
    },
    /// Anthropic tool result; `content` is a string or an array of text/image blocks.
    ToolResult {
        tool_use_id: Option<String>,
        content: Option<Value>,
        is_error: Option<bool>,
    },
    /// AI-SDK tool call (v2 wrapper).
    ToolCall {
        tool_call_id: Option<String>,
        tool_name: String,
        input: Value,
    },
    /// AI-SDK tool result (v2 wrapper).
    ToolResultPart {
        tool_call_id: Option<String>,
        tool_name: Option<String>,
        output: Option<Value>,
    },
    Thinking {
        thinking: Option<String>,
        signature: Option<String>,
    },
    RedactedThinking,
    Reasoning {
        text: Option<String>,
    },
    ThoughtSignature,
    File,
    /// A block type this version does not know, or one without a `type`.
    Other {
        kind: Option<String>,
    },
}

/// One content block, with its unmodelled fields kept verbatim.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentBlock {
    pub block: Block,
    pub extra: Map<String, Value>,
}

impl ContentBlock {
    pub fn kind(&self) -> &str {
        match &self.block {
            Block::Text { .. } => "text",
            Block::Image { .. } => "image",
            Block::ToolUse { .. } => "tool_use",
            Block::ToolResult { .. } => "tool_result",
            Block::ToolCall { .. } => "tool-call",
            Block::ToolResultPart { .. } => "tool-result",
            Block::Thinking { .. } => "thinking",
            Block::RedactedThinking => "redacted_thinking",
            Block::Reasoning { .. } => "reasoning",
            Block::ThoughtSignature => "thoughtSignature",
            Block::File => "file",
            Block::Other { kind } => kind.as_deref().unwrap_or(""),
        }
    }

    pub fn text(&self) -> Option<&str> {
        match &self.block {
            Block::Text { text } => Some(text),
            _ => None,
        }
    }

    /// A tool call in either shape (`tool_use`, or the AI-SDK `tool-call`): its name and input.
    pub fn tool_use(&self) -> Option<(&str, &Value)> {
        match &self.block {
            Block::ToolUse { name, input, .. }
            | Block::ToolCall {
                tool_name: name,
                input,
                ..
            } => Some((name, input)),
            _ => None,
        }
    }

    pub fn from_value(value: Value, path: &str, diags: &mut Diags) -> Self {
        let Value::Object(map) = value else {
            // A bare string inside a content array is treated as text.
            return match value {
                Value::String(text) => ContentBlock {
                    block: Block::Text { text },
                    extra: Map::new(),
                },
                other => {
                    let mut extra = Map::new();
                    extra.insert("value".into(), other);
                    ContentBlock {
                        block: Block::Other { kind: None },
                        extra,
                    }
                }
            };
        };
        let mut f = Fields::new(map, path, diags);
        let kind = f.string("type");
        let block = match kind.as_deref() {
            Some("text") => match f.string("text") {
                Some(text) => Block::Text { text },
                None => Block::Text {
                    text: String::new(),
                },
            },
            Some("image") => Block::Image {
                source: f.value("source").or_else(|| f.value("image")),
            },
            Some("tool_use") => Block::ToolUse {
                id: f.string("id"),
                name: f.string("name").unwrap_or_default(),
                input: f.value("input").unwrap_or(Value::Null),
            },
            Some("tool_result") => Block::ToolResult {
                tool_use_id: f.string("tool_use_id"),
                content: f.value("content"),
                is_error: f.bool("is_error"),
            },
            Some("tool-call") => Block::ToolCall {
                tool_call_id: f.string("toolCallId"),
                tool_name: f.string("toolName").unwrap_or_default(),
                input: f
                    .value("input")
                    .or_else(|| f.value("args"))
                    .unwrap_or(Value::Null),
            },
            Some("tool-result") => Block::ToolResultPart {
                tool_call_id: f.string("toolCallId"),
                tool_name: f.string("toolName"),
                output: f.value("output").or_else(|| f.value("result")),
            },
            Some("thinking") => Block::Thinking {
                thinking: f.string("thinking"),
                signature: f.string("signature"),
            },
            Some("redacted_thinking") => Block::RedactedThinking,
            Some("reasoning") => Block::Reasoning {
                text: f.string("text"),
            },
            Some("thoughtSignature") => Block::ThoughtSignature,
            Some("file") => Block::File,
            _ => Block::Other { kind: kind.clone() },
        };
        ContentBlock {
            block,
            extra: f.finish(),
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if !self.kind().is_empty() {
            m.serialize_entry("type", self.kind())?;
        }
        match &self.block {
            Block::Text { text } => m.serialize_entry("text", text)?,
            Block::Image { source } => {
                if let Some(v) = source {
                    m.serialize_entry("source", v)?;
                }
            }
            Block::ToolUse { id, name, input } => {
                if let Some(id) = id {
                    m.serialize_entry("id", id)?;
                }
                m.serialize_entry("name", name)?;
                m.serialize_entry("input", input)?;
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                if let Some(v) = tool_use_id {
                    m.serialize_entry("tool_use_id", v)?;
                }
                if let Some(v) = content {
                    m.serialize_entry("content", v)?;
                }
                if let Some(v) = is_error {
                    m.serialize_entry("is_error", v)?;
                }
            }
            Block::ToolCall {
                tool_call_id,
                tool_name,
                input,
            } => {
                if let Some(v) = tool_call_id {
                    m.serialize_entry("toolCallId", v)?;
                }
                m.serialize_entry("toolName", tool_name)?;
                m.serialize_entry("input", input)?;
            }
            Block::ToolResultPart {
                tool_call_id,
                tool_name,
                output,
            } => {
                if let Some(v) = tool_call_id {
                    m.serialize_entry("toolCallId", v)?;
                }
                if let Some(v) = tool_name {
                    m.serialize_entry("toolName", v)?;
                }
                if let Some(v) = output {
                    m.serialize_entry("output", v)?;
                }
            }
            Block::Thinking {
                thinking,
                signature,
            } => {
                if let Some(v) = thinking {
                    m.serialize_entry("thinking", v)?;
                }
                if let Some(v) = signature {
                    m.serialize_entry("signature", v)?;
                }
            }
            Block::Reasoning { text } => {
                if let Some(v) = text {
                    m.serialize_entry("text", v)?;
                }
            }
            Block::RedactedThinking
            | Block::ThoughtSignature
            | Block::File
            | Block::Other { .. } => {}
        }
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// `content` of an API message: a string or a list of blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(t) => s.serialize_str(t),
            Content::Blocks(b) => b.serialize(s),
        }
    }
}

/// One message of the API history.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiMessage {
    /// Absent for the stand-alone `{type:"reasoning"}` items of v3.31.2–v3.32.
    pub role: Option<Role>,
    pub content: Option<Content>,
    pub ts: Option<i64>,
    pub id: Option<String>,
    pub is_summary: Option<bool>,
    pub condense_id: Option<String>,
    pub condense_parent: Option<String>,
    pub is_truncation_marker: Option<bool>,
    pub truncation_id: Option<String>,
    pub truncation_parent: Option<String>,
    /// `type` of a role-less item (`reasoning`).
    pub item_type: Option<String>,
    pub extra: Map<String, Value>,
}

impl ApiMessage {
    pub fn from_object(map: Map<String, Value>, path: &str, diags: &mut Diags) -> Self {
        let mut f = Fields::new(map, path, diags);
        let role = f.string("role").map(|r| Role::parse(&r));
        let content = match f.value("content") {
            None => None,
            Some(Value::String(s)) => Some(Content::Text(s)),
            Some(Value::Array(items)) => {
                let base = f.path().to_owned();
                let blocks = items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| {
                        ContentBlock::from_value(v, &format!("{base}.content[{i}]"), f.diags())
                    })
                    .collect();
                Some(Content::Blocks(blocks))
            }
            Some(Value::Object(o)) => {
                // Hand-made files sometimes hold a single block object.
                let base = f.path().to_owned();
                Some(Content::Blocks(vec![ContentBlock::from_value(
                    Value::Object(o),
                    &format!("{base}.content"),
                    f.diags(),
                )]))
            }
            Some(other) => {
                let at = format!("{}.content", f.path());
                f.diags().push(
                    at,
                    crate::diag::DiagCode::InvalidField,
                    crate::diag::Severity::Warning,
                    format!(
                        "expected a string or an array, found {}",
                        crate::json::kind_of(&other)
                    ),
                );
                None
            }
        };
        let ts = f.i64("ts");
        let id = f.string("id");
        let is_summary = f.bool("isSummary");
        let condense_id = f.string("condenseId");
        let condense_parent = f.string("condenseParent");
        let is_truncation_marker = f.bool("isTruncationMarker");
        let truncation_id = f.string("truncationId");
        let truncation_parent = f.string("truncationParent");
        let item_type = if role.is_none() {
            f.string("type")
        } else {
            None
        };
        ApiMessage {
            role,
            content,
            ts,
            id,
            is_summary,
            condense_id,
            condense_parent,
            is_truncation_marker,
            truncation_id,
            truncation_parent,
            item_type,
            extra: f.finish(),
        }
    }

    pub fn blocks(&self) -> &[ContentBlock] {
        match &self.content {
            Some(Content::Blocks(b)) => b,
            _ => &[],
        }
    }

    /// Every text of the message: the string content, or each text block in order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        let (single, blocks) = match &self.content {
            Some(Content::Text(t)) => (Some(t.as_str()), &[][..]),
            Some(Content::Blocks(b)) => (None, &b[..]),
            None => (None, &[][..]),
        };
        single
            .into_iter()
            .chain(blocks.iter().filter_map(ContentBlock::text))
    }

    pub fn is_role(&self, role: &Role) -> bool {
        self.role.as_ref() == Some(role)
    }
}

impl Serialize for ApiMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        macro_rules! opt {
            ($key:literal, $field:expr) => {
                if let Some(v) = &$field {
                    m.serialize_entry($key, v)?;
                }
            };
        }
        opt!("role", self.role);
        opt!("type", self.item_type);
        opt!("content", self.content);
        opt!("id", self.id);
        opt!("ts", self.ts);
        opt!("isSummary", self.is_summary);
        opt!("condenseId", self.condense_id);
        opt!("isTruncationMarker", self.is_truncation_marker);
        opt!("truncationId", self.truncation_id);
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        opt!("condenseParent", self.condense_parent);
        opt!("truncationParent", self.truncation_parent);
        m.end()
    }
}

/// The whole history file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ApiHistory {
    pub format: HistoryFormat,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    pub messages: Vec<ApiMessage>,
}
