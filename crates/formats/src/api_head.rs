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
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// Raw values nested deeper than this make the strict reader give up (the tolerant reader builds
/// values with `serde_json`'s limit of 128 levels; with the enclosing message, content array and
/// block this stays far below it).
const MAX_RAW_NESTING: usize = 64;

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

    /// False only when the text certainly does not contain `marker`. `marker` must not hold a
    /// character JSON may write as a short escape (`"`, `\`, `/`, control characters): then it
    /// can only be in the text if it is in the literal, or if the literal holds a `\u` escape.
    pub fn may_contain(&self, marker: &str) -> bool {
        debug_assert!(!marker
            .chars()
            .any(|c| matches!(c, '"' | '\\' | '/') || c.is_control()));
        match self {
            LazyText::Json(raw) => {
                with_finder(marker, |f| f.find(raw.as_bytes()).is_some())
                    || with_finder("\\u", |f| f.find(raw.as_bytes()).is_some())
            }
            LazyText::Text(t) => t.contains(marker),
        }
    }
}

thread_local! {
    /// The substring searchers of the few markers the readers look for, built once per thread
    /// (building one costs more than searching a short text).
    static FINDERS: std::cell::RefCell<Vec<memchr::memmem::Finder<'static>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

const MAX_KEPT_FINDERS: usize = 16;

fn with_finder<R>(needle: &str, f: impl FnOnce(&memchr::memmem::Finder<'static>) -> R) -> R {
    FINDERS.with(|cell| {
        let mut finders = cell.borrow_mut();
        match finders.iter().position(|x| x.needle() == needle.as_bytes()) {
            Some(at) => f(&finders[at]),
            // Any other needle is searched for without being kept.
            None if finders.len() >= MAX_KEPT_FINDERS => {
                f(&memchr::memmem::Finder::new(needle.as_bytes()).into_owned())
            }
            None => {
                finders.push(memchr::memmem::Finder::new(needle.as_bytes()).into_owned());
                f(&finders[finders.len() - 1])
            }
        }
    })
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

/// The text of a validated JSON string literal: the literal's inside when it holds no escape (a
/// borrowed `&str` read would fail there, at the cost of an error built with the whole text),
/// else the decoded text (empty if it cannot be decoded).
fn decode_str(raw: &str) -> Cow<'_, str> {
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) if memchr::memchr(b'\\', inner.as_bytes()).is_none() => Cow::Borrowed(inner),
        _ => Cow::Owned(serde_json::from_str::<String>(raw).unwrap_or_default()),
    }
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
        let mut de = serde_json::Deserializer::from_str(raw);
        let head = (&mut de).deserialize_map(HeadVisitor).ok()?;
        de.end().ok()?;
        Some(head)
    }
}

/// [`ApiHead::from_json`] as a `Deserialize`, to read the elements of an array in one pass.
pub(crate) struct StrictHead<'a>(pub(crate) ApiHead<'a>);

impl<'de> serde::Deserialize<'de> for StrictHead<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(HeadVisitor).map(StrictHead)
    }
}

/// The kind of a raw JSON literal, from its first byte.
fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

fn is_str_or_null(raw: Option<&RawValue>) -> bool {
    raw.is_none_or(|r| r.get().starts_with('"') || is_null(r))
}

fn is_bool_or_null(raw: Option<&RawValue>) -> bool {
    raw.is_none_or(|r| matches!(r.get().as_bytes().first(), Some(b't' | b'f' | b'n')))
}

fn shallow(raw: &RawValue) -> bool {
    // Each level takes at least two bytes, so a short literal cannot nest too deep.
    raw.get().len() <= 2 * MAX_RAW_NESTING
        || !matches!(raw.get().as_bytes().first(), Some(b'[' | b'{'))
        || crate::json::max_nesting(raw.get()) <= MAX_RAW_NESTING
}

fn raw_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<&'de RawValue, A::Error> {
    let raw: &'de RawValue = map.next_value()?;
    if shallow(raw) {
        Ok(raw)
    } else {
        Err(A::Error::custom("nested too deep"))
    }
}

struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = ApiHead<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an API message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ApiHead<'de>, A::Error> {
        let mut head = ApiHead::default();
        let mut role: Option<&'de RawValue> = None;
        let mut kind: Option<&'de RawValue> = None;
        let mut seen_content = false;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "ts" => head.ts = map.next_value()?,
                "role" => role = Some(raw_value(&mut map)?),
                "type" => kind = Some(raw_value(&mut map)?),
                "content" => {
                    if seen_content {
                        return Err(A::Error::custom("content twice"));
                    }
                    seen_content = true;
                    map.next_value_seed(ContentSeed(&mut head))?;
                }
                "id" | "condenseId" | "condenseParent" | "truncationId" | "truncationParent" => {
                    if !is_str_or_null(Some(raw_value(&mut map)?)) {
                        return Err(A::Error::custom("not a string"));
                    }
                }
                "isSummary" | "isTruncationMarker" => {
                    if !is_bool_or_null(Some(raw_value(&mut map)?)) {
                        return Err(A::Error::custom("not a boolean"));
                    }
                }
                _ => {
                    raw_value(&mut map)?;
                }
            }
        }
        head.role = match role.filter(|r| !is_null(r)) {
            None => None,
            Some(r) if r.get().starts_with('"') => Some(Role::parse(&decode_str(r.get()))),
            Some(_) => return Err(A::Error::custom("role is not a string")),
        };
        // `type` is only read (and checked) on role-less items.
        if head.role.is_none() && !is_str_or_null(kind) {
            return Err(A::Error::custom("type is not a string"));
        }
        Ok(head)
    }
}

/// `content`: a string, an array of blocks, a single block object, or null.
struct ContentSeed<'h, 'de>(&'h mut ApiHead<'de>);

impl<'de> DeserializeSeed<'de> for ContentSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ContentSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, an array or an object")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<(), E> {
        self.0.texts.push(LazyText::Text(Cow::Borrowed(v)));
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        self.0.texts.push(LazyText::Text(Cow::Owned(v.to_owned())));
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(ItemSeed(self.0))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        BlockVisitor(self.0).visit_map(map)
    }
}

/// One item of a content array: a block object, a bare string (a text), or anything else (a
/// block of no kind, which no header uses).
struct ItemSeed<'h, 'de>(&'h mut ApiHead<'de>);

impl<'de> DeserializeSeed<'de> for ItemSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a content block")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<(), E> {
        self.0.texts.push(LazyText::Text(Cow::Borrowed(v)));
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        self.0.texts.push(LazyText::Text(Cow::Owned(v.to_owned())));
        Ok(())
    }

    // A nested array is left to the tolerant reader (rare, and its depth is unchecked here).

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        BlockVisitor(self.0).visit_map(map)
    }
}

struct BlockVisitor<'h, 'de>(&'h mut ApiHead<'de>);

#[derive(Default)]
struct BlockFields<'de> {
    kind: Option<&'de RawValue>,
    text: Option<&'de RawValue>,
    id: Option<&'de RawValue>,
    name: Option<&'de RawValue>,
    input: Option<&'de RawValue>,
    args: Option<&'de RawValue>,
    tool_use_id: Option<&'de RawValue>,
    content: Option<&'de RawValue>,
    is_error: Option<&'de RawValue>,
    tool_call_id: Option<&'de RawValue>,
    tool_name: Option<&'de RawValue>,
    output: Option<&'de RawValue>,
    result: Option<&'de RawValue>,
    thinking: Option<&'de RawValue>,
    signature: Option<&'de RawValue>,
}

/// A field as `Fields::value` gives it: absent and `null` are both none.
fn present(raw: Option<&RawValue>) -> Option<&RawValue> {
    raw.filter(|r| !is_null(r))
}

fn opt_string(raw: Option<&RawValue>) -> Option<String> {
    present(raw).map(|r| decode_str(r.get()).into_owned())
}

impl<'de> BlockVisitor<'_, 'de> {
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut f = BlockFields::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
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
                _ => {
                    raw_value(&mut map)?;
                    continue;
                }
            };
            *slot = Some(raw_value(&mut map)?);
        }
        let bad = || A::Error::custom("a block field of the wrong type");
        if !is_str_or_null(f.kind) {
            return Err(bad());
        }
        let kind = present(f.kind).map(|r| decode_str(r.get()));
        let head = self.0;
        match kind.as_deref() {
            Some("text") => {
                if !is_str_or_null(f.text) {
                    return Err(bad());
                }
                head.texts.push(match present(f.text) {
                    Some(r) => LazyText::Json(r.get()),
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
                if !is_str_or_null(id) || !is_str_or_null(name) {
                    return Err(bad());
                }
                let name = present(name).map(|r| decode_str(r.get()));
                if name.as_deref().is_some_and(is_new_task_name) {
                    let input = if tool_use {
                        present(f.input)
                    } else {
                        present(f.input).or(present(f.args))
                    };
                    let input = match input {
                        Some(r) => serde_json::from_str(r.get()).map_err(|_| bad())?,
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
                if !is_str_or_null(f.tool_use_id) || !is_bool_or_null(f.is_error) {
                    return Err(bad());
                }
                if let Some(content) = present(f.content) {
                    let content = LazyValue::Json(content.get());
                    if content.may_contain(DELEGATION_MARKER) {
                        head.blocks.push(HeadBlock::Result {
                            id: opt_string(f.tool_use_id),
                            content,
                        });
                    }
                }
            }
            Some("tool-result") => {
                if !is_str_or_null(f.tool_call_id) || !is_str_or_null(f.tool_name) {
                    return Err(bad());
                }
                if let Some(output) = present(f.output).or(present(f.result)) {
                    let content = LazyValue::Json(output.get());
                    if content.may_contain(DELEGATION_MARKER) {
                        head.blocks.push(HeadBlock::Result {
                            id: opt_string(f.tool_call_id),
                            content,
                        });
                    }
                }
            }
            Some("thinking") if !is_str_or_null(f.thinking) || !is_str_or_null(f.signature) => {
                return Err(bad())
            }
            Some("reasoning") if !is_str_or_null(f.text) => return Err(bad()),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::decode_str;
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
    fn decode_str_decodes_escapes() {
        assert_eq!(decode_str(r#""a\"b\nc\u0041\\""#), "a\"b\ncA\\");
        assert_eq!(decode_str(r#""\ud83d\ude00""#), "😀");
        // Not a literal, or one that cannot be decoded: empty.
        assert_eq!(decode_str(r#""\ud800""#), "");
        assert_eq!(decode_str("42"), "");
    }
}
