//! What a skeleton header needs of one API history message, read without building it.
//!
//! A header uses the API history for the message times, the first user text and environment
//! details, and the subtasks seen only there (`new_task` tool calls, XML `<new_task>` in assistant
//! text, `[new_task in …]` result headers, `Delegated to child task` results). [`ApiHead`] holds
//! exactly that: the texts stay as their JSON literals until a caller needs one (a byte pre-check
//! tells whether a marker can be in them), tool results are kept only when they may name a
//! delegated child, and nothing else is copied.
//!
//! [`ApiHead::from_json`] is a strict reader: it gives up on anything the tolerant reader
//! ([`ApiMessage::from_object`]) would report (a field of the wrong type, a fractional `ts`, …) or
//! might not read at all (nesting deep enough to reach `serde_json`'s recursion limit), and the
//! caller then builds the head from the tolerant message with [`ApiHead::from_message`]. Both give
//! the same head for every message the strict reader accepts.

use crate::api::{ApiMessage, Block, Content, Role};
use crate::extract::ChildSource;
use crate::json_cursor::{decode_literal, with_decoded_literal, Cursor, MAX_NESTING};
use serde_json::Value;
use std::borrow::Cow;

/// A text of a message: its JSON string literal (decoded on demand) or the text itself.
#[derive(Debug, Clone, PartialEq)]
pub enum LazyText<'a> {
    /// A JSON string literal, quotes included.
    Json(&'a str),
    Text(Cow<'a, str>),
}

impl<'a> LazyText<'a> {
    /// The text.
    pub fn get(&self) -> Cow<'a, str> {
        match self {
            LazyText::Json(raw) => decode_str(raw),
            LazyText::Text(t) => t.clone(),
        }
    }

    /// `use_text` on the text, decoded (when it has escapes) into a buffer the thread reuses: for
    /// a text only looked at, not kept. A literal that cannot be decoded is the empty text, as
    /// with [`LazyText::get`].
    pub fn with<R>(&self, use_text: impl FnOnce(&str) -> R) -> R {
        match self {
            LazyText::Json(raw) => match with_decoded_literal(raw, use_text) {
                Ok(out) => out,
                Err(use_text) => use_text(""),
            },
            LazyText::Text(t) => use_text(t),
        }
    }

    /// False only when the text certainly does not contain `marker`. `marker` must not hold a
    /// character JSON may write as a short escape (`"`, `\`, `/`, control characters): then it
    /// can only be in the text if it is in the literal, or if the literal holds a `\u` escape.
    pub fn may_contain(&self, marker: &str) -> bool {
        debug_assert!(!marker
            .chars()
            .any(|c| matches!(c, '"' | '\\' | '/') || c.is_control()));
        match self {
            LazyText::Json(raw) => {
                crate::text::find(raw, marker).is_some() || crate::text::find(raw, "\\u").is_some()
            }
            LazyText::Text(t) => t.contains(marker),
        }
    }
}

/// A JSON value kept raw until needed.
#[derive(Debug, Clone, PartialEq)]
pub enum LazyValue<'a> {
    Json(&'a str),
    Value(Value),
}

impl LazyValue<'_> {
    /// The value (`Null` if the literal cannot be read, which a validated literal always can).
    pub fn get(&self) -> Cow<'_, Value> {
        match self {
            LazyValue::Json(raw) => Cow::Owned(serde_json::from_str(raw).unwrap_or(Value::Null)),
            LazyValue::Value(v) => Cow::Borrowed(v),
        }
    }

    /// As [`LazyText::may_contain`], over every string of the value.
    pub fn may_contain(&self, marker: &str) -> bool {
        match self {
            LazyValue::Json(raw) => LazyText::Json(raw).may_contain(marker),
            LazyValue::Value(_) => true,
        }
    }
}

/// A block of a message that a header may use.
#[derive(Debug, Clone, PartialEq)]
pub enum HeadBlock<'a> {
    /// A `tool_use` / `tool-call` named `new_task` or `newTask`.
    NewTask {
        id: Option<String>,
        input: Value,
        source: ChildSource,
    },
    /// A `tool_result` / `tool-result` whose content may name a delegated child.
    Result {
        id: Option<String>,
        content: LazyValue<'a>,
    },
}

/// What a header needs of one API message (see the module documentation).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ApiHead<'a> {
    pub ts: Option<i64>,
    pub role: Option<Role>,
    /// Every text of the message, in order (as [`ApiMessage::texts`]).
    pub texts: Vec<LazyText<'a>>,
    /// `new_task` calls and possible delegation results, in block order.
    pub blocks: Vec<HeadBlock<'a>>,
}

/// The marker a delegation result starts with ([`crate::text::delegated_child_id`]).
pub const DELEGATION_MARKER: &str = "Delegated to child task ";

/// The text of a checked JSON string literal (empty if it cannot be decoded).
fn decode_str(raw: &str) -> Cow<'_, str> {
    decode_literal(raw).unwrap_or_default()
}

fn is_new_task_name(name: &str) -> bool {
    name == "new_task" || name == "newTask"
}

impl<'a> ApiHead<'a> {
    /// The head of a message read by the tolerant reader.
    pub fn from_message(msg: ApiMessage) -> ApiHead<'static> {
        let mut head = ApiHead {
            ts: msg.ts,
            role: msg.role,
            texts: Vec::new(),
            blocks: Vec::new(),
        };
        match msg.content {
            Some(Content::Text(t)) => head.texts.push(LazyText::Text(Cow::Owned(t))),
            Some(Content::Blocks(blocks)) => {
                for b in blocks {
                    match b.block {
                        Block::Text { text } => head.texts.push(LazyText::Text(Cow::Owned(text))),
                        Block::ToolUse { id, name, input } if is_new_task_name(&name) => {
                            head.blocks.push(HeadBlock::NewTask {
                                id,
                                input,
                                source: ChildSource::ToolUse,
                            })
                        }
                        Block::ToolCall {
                            tool_call_id,
                            tool_name,
                            input,
                        } if is_new_task_name(&tool_name) => head.blocks.push(HeadBlock::NewTask {
                            id: tool_call_id,
                            input,
                            source: ChildSource::ToolCall,
                        }),
                        Block::ToolResult {
                            tool_use_id: id,
                            content: Some(content),
                            ..
                        }
                        | Block::ToolResultPart {
                            tool_call_id: id,
                            output: Some(content),
                            ..
                        } => head.blocks.push(HeadBlock::Result {
                            id,
                            content: LazyValue::Value(content),
                        }),
                        _ => {}
                    }
                }
            }
            None => {}
        }
        head
    }

    /// The strict read of one message from its JSON text; `None` whenever the tolerant reader
    /// has to be used (see the module documentation).
    pub fn from_json(raw: &'a str) -> Option<ApiHead<'a>> {
        let mut cursor = Cursor::new(raw);
        let head = read_head(&mut cursor)?;
        cursor.at_end().then_some(head)
    }
}

/// The strict one-pass read of a well-formed array of messages, by the contract of
/// [`crate::json::read_strict_in`]'s reader: `Ok(n)` when `text` is exactly an array whose `n`
/// elements all read as heads, `Err(k)` after `k` heads were handed over.
pub(crate) fn read_heads_strict<'a>(
    text: &'a str,
    each: impl FnMut(ApiHead<'a>),
) -> Result<usize, usize> {
    crate::json_cursor::read_array_with(text, read_head, each)
}

fn is_null(raw: &str) -> bool {
    raw == "null"
}

/// Absent, a string or `null` (the checks below look at a literal's first byte).
fn is_str_or_null(raw: Option<&str>) -> bool {
    raw.is_none_or(|r| r.starts_with('"') || is_null(r))
}

fn is_bool_or_null(raw: Option<&str>) -> bool {
    raw.is_none_or(|r| matches!(r.as_bytes().first(), Some(b't' | b'f' | b'n')))
}

/// Any value, as long as it nests no deeper than the tolerant reader can read.
fn raw_value<'a>(cursor: &mut Cursor<'a>) -> Option<&'a str> {
    cursor.value(MAX_NESTING)
}

/// One message object: the fields a header uses, each other field checked as the tolerant reader
/// would check it.
fn read_head<'a>(cursor: &mut Cursor<'a>) -> Option<ApiHead<'a>> {
    let mut head = ApiHead::default();
    let mut role: Option<&'a str> = None;
    let mut kind: Option<&'a str> = None;
    let mut seen_content = false;
    cursor.object(|c, key| {
        match key.as_ref() {
            "ts" => head.ts = c.opt_i64()?,
            "role" => role = Some(raw_value(c)?),
            "type" => kind = Some(raw_value(c)?),
            "content" => {
                if seen_content {
                    return None;
                }
                seen_content = true;
                read_content(c, &mut head)?;
            }
            "id" | "condenseId" | "condenseParent" | "truncationId" | "truncationParent" => {
                is_str_or_null(Some(raw_value(c)?)).then_some(())?
            }
            "isSummary" | "isTruncationMarker" => {
                is_bool_or_null(Some(raw_value(c)?)).then_some(())?
            }
            _ => {
                raw_value(c)?;
            }
        }
        Some(())
    })?;
    head.role = match role.filter(|r| !is_null(r)) {
        None => None,
        Some(r) if r.starts_with('"') => Some(Role::parse(&decode_str(r))),
        Some(_) => return None,
    };
    // `type` is only read (and checked) on role-less items.
    if head.role.is_none() && !is_str_or_null(kind) {
        return None;
    }
    Some(head)
}

/// `content`: a string, an array of blocks, a single block object, or null.
fn read_content<'a>(cursor: &mut Cursor<'a>, head: &mut ApiHead<'a>) -> Option<()> {
    match cursor.peek()? {
        b'n' => {
            cursor.value(0)?;
        }
        b'"' => head.texts.push(LazyText::Json(cursor.string()?)),
        b'{' => read_block(cursor, head)?,
        // Items: a block object, a bare string (a text), a scalar (a block of no kind, which no
        // header uses); a nested array is left to the tolerant reader (rare, and its depth is
        // unchecked here).
        b'[' => cursor.array(|c| match c.peek()? {
            b'{' => read_block(c, head),
            b'"' => {
                head.texts.push(LazyText::Json(c.string()?));
                Some(())
            }
            b'[' => None,
            _ => c.value(0).map(|_| ()),
        })?,
        _ => return None,
    }
    Some(())
}

/// The fields of a block a header may use, as raw literals.
#[derive(Default)]
struct BlockFields<'a> {
    kind: Option<&'a str>,
    text: Option<&'a str>,
    id: Option<&'a str>,
    name: Option<&'a str>,
    input: Option<&'a str>,
    args: Option<&'a str>,
    tool_use_id: Option<&'a str>,
    content: Option<&'a str>,
    is_error: Option<&'a str>,
    tool_call_id: Option<&'a str>,
    tool_name: Option<&'a str>,
    output: Option<&'a str>,
    result: Option<&'a str>,
    thinking: Option<&'a str>,
    signature: Option<&'a str>,
}

/// A field as `Fields::value` gives it: absent and `null` are both none.
fn present(raw: Option<&str>) -> Option<&str> {
    raw.filter(|r| !is_null(r))
}

fn opt_string(raw: Option<&str>) -> Option<String> {
    present(raw).map(|r| decode_str(r).into_owned())
}

fn read_block<'a>(cursor: &mut Cursor<'a>, head: &mut ApiHead<'a>) -> Option<()> {
    let mut f = BlockFields::default();
    cursor.object(|c, key| {
        let slot = match key.as_ref() {
            "type" => &mut f.kind,
            "text" => &mut f.text,
            "id" => &mut f.id,
            "name" => &mut f.name,
            "input" => &mut f.input,
            "args" => &mut f.args,
            "tool_use_id" => &mut f.tool_use_id,
            "content" => &mut f.content,
            "is_error" => &mut f.is_error,
            "toolCallId" => &mut f.tool_call_id,
            "toolName" => &mut f.tool_name,
            "output" => &mut f.output,
            "result" => &mut f.result,
            "thinking" => &mut f.thinking,
            "signature" => &mut f.signature,
            _ => return raw_value(c).map(|_| ()),
        };
        *slot = Some(raw_value(c)?);
        Some(())
    })?;
    is_str_or_null(f.kind).then_some(())?;
    let kind = present(f.kind).map(decode_str);
    match kind.as_deref() {
        Some("text") => {
            is_str_or_null(f.text).then_some(())?;
            head.texts.push(match present(f.text) {
                Some(r) => LazyText::Json(r),
                None => LazyText::Text(Cow::Borrowed("")),
            });
        }
        Some("tool_use") | Some("tool-call") => {
            let tool_use = kind.as_deref() == Some("tool_use");
            let (id, name) = if tool_use {
                (f.id, f.name)
            } else {
                (f.tool_call_id, f.tool_name)
            };
            (is_str_or_null(id) && is_str_or_null(name)).then_some(())?;
            let name = present(name).map(decode_str);
            if name.as_deref().is_some_and(is_new_task_name) {
                let input = if tool_use {
                    present(f.input)
                } else {
                    present(f.input).or(present(f.args))
                };
                let input = match input {
                    Some(r) => serde_json::from_str(r).ok()?,
                    None => Value::Null,
                };
                head.blocks.push(HeadBlock::NewTask {
                    id: opt_string(id),
                    input,
                    source: if tool_use {
                        ChildSource::ToolUse
                    } else {
                        ChildSource::ToolCall
                    },
                });
            }
        }
        Some("tool_result") => {
            (is_str_or_null(f.tool_use_id) && is_bool_or_null(f.is_error)).then_some(())?;
            if let Some(content) = present(f.content) {
                push_result(head, f.tool_use_id, content);
            }
        }
        Some("tool-result") => {
            (is_str_or_null(f.tool_call_id) && is_str_or_null(f.tool_name)).then_some(())?;
            if let Some(output) = present(f.output).or(present(f.result)) {
                push_result(head, f.tool_call_id, output);
            }
        }
        Some("thinking") if !is_str_or_null(f.thinking) || !is_str_or_null(f.signature) => {
            return None
        }
        Some("reasoning") if !is_str_or_null(f.text) => return None,
        _ => {}
    }
    Some(())
}

/// A tool result, kept when it may name a delegated child.
fn push_result<'a>(head: &mut ApiHead<'a>, id: Option<&str>, raw: &'a str) {
    let content = LazyValue::Json(raw);
    if content.may_contain(DELEGATION_MARKER) {
        head.blocks.push(HeadBlock::Result {
            id: opt_string(id),
            content,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{decode_str, LazyText};
    use std::borrow::Cow;

    #[test]
    fn decode_str_borrows_a_literal_without_escapes() {
        assert!(matches!(
            decode_str(r#""plain é text""#),
            Cow::Borrowed("plain é text")
        ));
        assert!(matches!(decode_str(r#""""#), Cow::Borrowed("")));
    }

    #[test]
    fn a_text_looked_at_in_place_is_the_text_decoded() {
        // Decoded into the thread's buffer or borrowed: what `with` shows is what `get` returns,
        // for a longer text after a shorter one and back (the buffer is reused), and for literals
        // that cannot be decoded.
        let long = format!(r#""{}\n<new_task>\u00e9""#, "x".repeat(5000));
        for raw in [
            r#""plain""#,
            &long,
            r#""a\"b\nc\u0041\\""#,
            r#""\ud83d\ude00""#,
            r#""\ud800""#,
            "42",
            r#""""#,
        ] {
            let text = LazyText::Json(raw);
            assert_eq!(text.with(str::to_owned), text.get(), "{raw}");
        }
        let owned = LazyText::Text(Cow::Owned("owned text".to_owned()));
        assert_eq!(owned.with(str::to_owned), "owned text");
    }

    #[test]
    fn decode_str_decodes_escapes() {
        assert_eq!(decode_str(r#""a\"b\nc\u0041\\""#), "a\"b\ncA\\");
        assert_eq!(decode_str(r#""\ud83d\ude00""#), "😀");
        // Not a literal, or one that cannot be decoded: empty.
        assert_eq!(decode_str(r#""\ud800""#), "");
        assert_eq!(decode_str("42"), "");
    }
}
