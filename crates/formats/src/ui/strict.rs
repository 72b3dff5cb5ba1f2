//! The strict reading of UI records straight from their JSON text (the one-pass read of a
//! well-formed file), with the JSON cursor: strings are stepped over by the block scanner and
//! decoded only where they are kept. Anything unusual (a field of the wrong type, a missing
//! `ask`/`say` or both, a nested object that needs a diagnostic, nesting deeper than the tolerant
//! reader reads) makes it give up, and the caller falls back to [`ClineMessage::from_object`],
//! which yields the same message plus the diagnostics.

use super::{condense_from, truncation_from, Ask, ClineMessage, MessageKind, Say};
use crate::diag::Diags;
use crate::json_cursor::{Cursor, MAX_NESTING};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Which records' texts a reader decodes: the others' are checked as JSON strings and stepped
/// over, and the record is handed over with `text: None` (and the text's literal beside it).
pub type WantedTexts<'p> = &'p dyn Fn(&MessageKind) -> bool;

/// A record read strictly: the message, and its text when that text was stepped over rather than
/// decoded (`message.text` is then `None`).
pub(crate) struct StrictRecord<'a> {
    pub(crate) message: ClineMessage,
    pub(crate) unread_text: Option<UnreadText<'a>>,
}

/// A text stepped over: its JSON literal, checked, and what the scan found of its escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnreadText<'a> {
    literal: &'a str,
    has_unicode_escape: bool,
}

impl<'a> UnreadText<'a> {
    /// A checked literal, as the block scanner found it.
    #[cfg(test)]
    pub(crate) fn scanned(literal: &'a str) -> Option<Self> {
        let scanned = crate::string_scan::scan_string(literal.as_bytes(), 1)?;
        (scanned.end == literal.len()).then_some(UnreadText {
            literal,
            has_unicode_escape: scanned.unicode,
        })
    }

    /// The JSON string literal, quotes included.
    pub fn literal(&self) -> &'a str {
        self.literal
    }

    /// Whether the literal holds a `\u` escape.
    pub fn has_unicode_escape(&self) -> bool {
        self.has_unicode_escape
    }

    /// The text, decoded.
    pub fn decode(&self) -> Option<Cow<'a, str>> {
        crate::json_cursor::decode_literal(self.literal)
    }

    /// Whether the text is blank (see [`literal_is_blank`]).
    pub fn is_blank(&self) -> bool {
        literal_is_blank(self.literal)
    }
}

/// `null` or a string, decoded.
fn opt_str<'a>(c: &mut Cursor<'a>) -> Option<Option<Cow<'a, str>>> {
    if c.peek()? == b'n' {
        c.value(0)?;
        return Some(None);
    }
    c.string_text().map(Some)
}

fn opt_string(c: &mut Cursor<'_>) -> Option<Option<String>> {
    opt_str(c).map(|s| s.map(Cow::into_owned))
}

/// `null`, `true` or `false`.
fn opt_bool(c: &mut Cursor<'_>) -> Option<Option<bool>> {
    match c.value(0)? {
        "null" => Some(None),
        "true" => Some(Some(true)),
        "false" => Some(Some(false)),
        _ => None,
    }
}

/// Any value, built; `null` as `None`.
fn opt_value(c: &mut Cursor<'_>) -> Option<Option<Value>> {
    let raw = c.value(MAX_NESTING)?;
    match serde_json::from_str::<Value>(raw).ok()? {
        Value::Null => Some(None),
        v => Some(Some(v)),
    }
}

/// `null` or an array of strings.
fn opt_strings(c: &mut Cursor<'_>) -> Option<Option<Vec<String>>> {
    if c.peek()? == b'n' {
        c.value(0)?;
        return Some(None);
    }
    let mut out = Vec::new();
    c.array(|c| {
        out.push(c.string_text()?.into_owned());
        Some(())
    })?;
    Some(Some(out))
}

/// The kind of an ask/say record from its `type` and `ask`/`say` fields, or `None` when they do
/// not make a plain one. `ask`/`say` are `Some(None)` when present as `null`: the tolerant reader
/// keeps the field of the other kind among the unknown ones, so a record with both is not plain.
fn plain_kind(
    kind: Option<&str>,
    ask: Option<&Option<Cow<'_, str>>>,
    say: Option<&Option<Cow<'_, str>>>,
) -> Option<MessageKind> {
    match (kind, ask, say) {
        (Some("ask"), Some(Some(a)), None) => Some(MessageKind::Ask(Ask::parse(a))),
        (Some("say"), None, Some(Some(v))) => Some(MessageKind::Say(Say::parse(v))),
        _ => None,
    }
}

/// One record, read strictly; the texts of kinds `wanted` refuses are stepped over (all are
/// decoded when it is `None`).
pub(crate) fn read_record<'a>(
    c: &mut Cursor<'a>,
    wanted: Option<WantedTexts<'_>>,
) -> Option<StrictRecord<'a>> {
    let mut m = ClineMessage {
        ts: None,
        kind: MessageKind::Other(None),
        text: None,
        images: None,
        partial: None,
        reasoning: None,
        conversation_history_index: None,
        checkpoint: None,
        progress_status: None,
        context_condense: None,
        context_truncation: None,
        is_protected: None,
        api_protocol: None,
        is_answered: None,
        extra: Map::new(),
    };
    let (mut kind, mut ask, mut say) = (None, None, None);
    let (mut condense, mut truncation) = (None, None);
    // A text stepped over because its kind was not yet known or not wanted: its literal.
    // (One holding a `\u` escape, which decoding may refuse, a surrogate outside a pair, though
    // stepping over it does not, is decoded to find out.)
    let mut unread: Option<UnreadText<'a>> = None;
    c.object(|c, key| {
        match key.as_ref() {
            "ts" => m.ts = c.opt_i64()?,
            "type" => kind = opt_str(c)?,
            "ask" => ask = Some(opt_str(c)?),
            "say" => say = Some(opt_str(c)?),
            "text" => {
                let decode = wanted.is_none_or(|wanted| {
                    plain_kind(kind.as_deref(), ask.as_ref(), say.as_ref())
                        .is_some_and(|k| wanted(&k))
                });
                unread = None;
                if decode {
                    m.text = opt_string(c)?;
                } else {
                    m.text = None;
                    if c.peek()? == b'n' {
                        c.value(0)?;
                    } else {
                        let (literal, scanned) = c.string_scanned()?;
                        unread = Some(UnreadText {
                            literal,
                            has_unicode_escape: scanned.unicode,
                        });
                    }
                }
            }
            "images" => m.images = opt_strings(c)?,
            "partial" => m.partial = opt_bool(c)?,
            "reasoning" => m.reasoning = opt_string(c)?,
            "conversationHistoryIndex" => m.conversation_history_index = c.opt_i64()?,
            "checkpoint" => m.checkpoint = opt_value(c)?,
            "progressStatus" => m.progress_status = opt_value(c)?,
            "contextCondense" => condense = opt_value(c)?,
            "contextTruncation" => truncation = opt_value(c)?,
            "isProtected" => m.is_protected = opt_bool(c)?,
            "apiProtocol" => m.api_protocol = opt_string(c)?,
            "isAnswered" => m.is_answered = opt_bool(c)?,
            other => {
                let raw = c.value(MAX_NESTING)?;
                let value = serde_json::from_str::<Value>(raw).ok()?;
                m.extra.insert(other.to_owned(), value);
            }
        }
        Some(())
    })?;
    m.kind = plain_kind(kind.as_deref(), ask.as_ref(), say.as_ref())?;
    if let Some(UnreadText {
        literal: raw,
        has_unicode_escape,
    }) = unread
    {
        // Decoded after all when the kind, now known, wants it, or to check its escapes.
        let wanted = wanted.is_none_or(|wanted| wanted(&m.kind));
        if wanted || has_unicode_escape {
            let text = crate::json_cursor::decode_literal(raw)?.into_owned();
            if wanted {
                m.text = Some(text);
                unread = None;
            }
        }
    }
    let mut sink = Diags::for_file("");
    m.context_condense = match condense {
        None => None,
        Some(Value::Object(o)) => Some(condense_from(o, "", &mut sink)),
        Some(_) => return None,
    };
    m.context_truncation = match truncation {
        None => None,
        Some(Value::Object(o)) => Some(truncation_from(o, "", &mut sink)),
        Some(_) => return None,
    };
    sink.is_empty().then_some(StrictRecord {
        message: m,
        unread_text: unread,
    })
}

/// One record that is the whole of `raw`, read strictly with every text decoded.
pub(crate) fn read_whole(raw: &str) -> Option<ClineMessage> {
    let mut c = Cursor::new(raw);
    let record = read_record(&mut c, None)?;
    c.at_end().then_some(record.message)
}

/// Whether the text a JSON string literal holds is blank (only whitespace, as `str::trim` takes
/// it), read from the literal: decoded only when it opens with an escape or a non-ASCII
/// character that could be whitespace.
pub fn literal_is_blank(raw: &str) -> bool {
    let inner = raw.strip_prefix('"').unwrap_or(raw).as_bytes();
    let mut i = 0;
    while let Some(&b) = inner.get(i) {
        match b {
            b' ' => i += 1,
            b'\\' => match inner.get(i + 1) {
                Some(b'n' | b't' | b'r' | b'f') => i += 2,
                Some(b'u') => break,
                _ => return false,
            },
            b'"' => return true,
            0x80.. => break,
            _ => return false,
        }
    }
    crate::json_cursor::decode_literal(raw).is_none_or(|t| t.trim().is_empty())
}
