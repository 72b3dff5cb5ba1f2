//! XML exports (task, conversation, project), streamed with quick-xml: each task is analysed,
//! written and dropped before the next one, so memory stays flat whatever the tree's size.
//!
//! The documents validate against `schemas/task.xsd`, `schemas/conversation.xsd` and
//! `schemas/project.xsd`. Text is escaped here: `& < >` (and `"` in attributes) become entities,
//! characters XML 1.0 cannot carry become U+FFFD, carriage returns (and in attributes tabs and
//! line feeds) become character references so that reading the document back gives the same
//! text.

use crate::dates::xsd_datetime;
use crate::error::{ExportError, Result};
use crate::source::SkeletonSource;
use crate::tree::{Conversation, ProjectConversation, Visit};
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::name::QName;
use roo_js::{iso_from_ms, now_ms, truncate_utf16, utf16_len};
use roo_state::skeleton::{AnalyzeOptions, ConversationSkeleton, SequenceItem};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::io::Write;
use std::sync::atomic::AtomicBool;

/// Titles longer than this (UTF-16 units) are cut.
const MAX_TITLE: usize = 500;

/// Which schemas the XML is written for.
///
/// - `Seed` (the default): exactly what the design document's schemas accept (`schemas/*.xsd`:
///   the seed documents with only the fixes that make them usable: empty sequences, the
///   conversation types completed as the document's TODO says, the `comment` attribute turned into
///   documentation). A consumer validating against the seed contract accepts every export.
/// - `Extended`: the seed plus optional additions (`schemas/extended/*.xsd`): `metadata/workspace`,
///   `isTruncated` on `<parameters>`, `omittedChildren` on conversation tasks, `createdAt`,
///   `totalSize` and `mode` on a project's `<conversation>`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchemaProfile {
    #[default]
    Seed,
    Extended,
}

impl SchemaProfile {
    /// `seed` or `extended`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "seed" => Some(SchemaProfile::Seed),
            "extended" => Some(SchemaProfile::Extended),
            _ => None,
        }
    }

    fn extended(self) -> bool {
        self == SchemaProfile::Extended
    }
}

/// How message content is written.
#[derive(Debug, Clone, Copy)]
pub struct ContentOptions {
    /// Full content (cut only past `max_content_len`); otherwise a preview.
    pub include_content: bool,
    /// Preview length (UTF-16 units) when `include_content` is false.
    pub preview_len: usize,
    /// Longest content when `include_content` is true (0 = no limit).
    pub max_content_len: usize,
    /// The schemas written for.
    pub profile: SchemaProfile,
}

impl ContentOptions {
    /// What to ask the skeleton builder for: never more than the export will write.
    pub fn analyze(&self) -> AnalyzeOptions {
        AnalyzeOptions {
            include_sequence: true,
            max_content_len: if self.include_content {
                self.max_content_len
            } else {
                // The builder cuts in the middle; its head is still the text's own first
                // `preview_len` units.
                self.preview_len.saturating_mul(2).saturating_add(2)
            },
        }
    }

    /// The text to write and whether it was cut.
    pub fn cut<'t>(&self, text: &'t str, already_cut: bool) -> (Cow<'t, str>, bool) {
        if !self.include_content && (already_cut || utf16_len(text) > self.preview_len) {
            let head = truncate_utf16(text, self.preview_len);
            return (Cow::Owned(format!("{head}...")), true);
        }
        // Text the skeleton builder already cut (in the middle, at the same limit) stays as it is.
        if self.include_content
            && !already_cut
            && self.max_content_len > 0
            && utf16_len(text) > self.max_content_len
        {
            let head = truncate_utf16(text, self.max_content_len);
            return (Cow::Owned(format!("{head}...")), true);
        }
        (Cow::Borrowed(text), already_cut)
    }
}

/// Counts of what an export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ExportCounts"))]
pub struct Written {
    pub tasks: u32,
    pub conversations: u32,
    pub messages: u32,
    pub actions: u32,
    /// Messages and parameters cut (`isTruncated="true"`).
    pub truncated: u32,
}

fn valid_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

fn escape(text: &str, attribute: bool) -> Cow<'_, str> {
    let needs = text.chars().any(|c| {
        matches!(c, '&' | '<' | '>' | '\r')
            || (attribute && matches!(c, '"' | '\n' | '\t'))
            || !valid_xml_char(c)
    });
    if !needs {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\t' if attribute => out.push_str("&#9;"),
            c if !valid_xml_char(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Escape text content.
pub fn escape_text(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// Escape an attribute value.
pub fn escape_attr(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn gen_err(e: std::io::Error) -> ExportError {
    ExportError::Generation(format!("the XML could not be written: {e}"))
}

/// A quick-xml writer with this module's escaping.
pub struct XmlOut<W: Write> {
    w: quick_xml::Writer<W>,
}

impl<W: Write> XmlOut<W> {
    pub fn new(inner: W, pretty: bool) -> Result<Self> {
        let w = if pretty {
            quick_xml::Writer::new_with_indent(inner, b' ', 2)
        } else {
            quick_xml::Writer::new(inner)
        };
        let mut out = Self { w };
        out.event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
        Ok(out)
    }

    fn event(&mut self, e: Event<'_>) -> Result<()> {
        self.w.write_event(e).map_err(gen_err)
    }

    fn tag<'a>(name: &'a str, attrs: &[(&'a str, &str)]) -> BytesStart<'a> {
        let mut start = BytesStart::new(name);
        for (k, v) in attrs {
            start.push_attribute(Attribute {
                key: QName(k.as_bytes()),
                value: Cow::Owned(escape_attr(v).into_owned().into_bytes()),
            });
        }
        start
    }

    pub fn start(&mut self, name: &str, attrs: &[(&str, &str)]) -> Result<()> {
        self.event(Event::Start(Self::tag(name, attrs)))
    }

    pub fn empty(&mut self, name: &str, attrs: &[(&str, &str)]) -> Result<()> {
        self.event(Event::Empty(Self::tag(name, attrs)))
    }

    pub fn end(&mut self, name: &str) -> Result<()> {
        self.event(Event::End(BytesEnd::new(name)))
    }

    /// `<name attrs>text</name>` (or `<name attrs/>` for empty text).
    pub fn text_element(&mut self, name: &str, attrs: &[(&str, &str)], text: &str) -> Result<()> {
        if text.is_empty() {
            return self.empty(name, attrs);
        }
        self.start(name, attrs)?;
        self.event(Event::Text(BytesText::from_escaped(escape_text(text))))?;
        self.end(name)
    }

    pub fn finish(mut self) -> Result<W> {
        self.w.get_mut().write_all(b"\n").map_err(gen_err)?;
        Ok(self.w.into_inner())
    }
}

fn title_of(s: &ConversationSkeleton) -> Option<Cow<'_, str>> {
    let t = s.metadata.title.as_deref()?.trim();
    if t.is_empty() {
        return None;
    }
    Some(if utf16_len(t) > MAX_TITLE {
        Cow::Owned(format!("{}...", truncate_utf16(t, MAX_TITLE)))
    } else {
        Cow::Borrowed(t)
    })
}

/// Opening tag, `<metadata>` and `<sequence>` of one task; the element is left open.
fn task_open<W: Write>(
    out: &mut XmlOut<W>,
    element: &str,
    skel: &ConversationSkeleton,
    parent: Option<&str>,
    omitted_children: usize,
    content: &ContentOptions,
    written: &mut Written,
) -> Result<()> {
    let omitted = omitted_children.to_string();
    let mut attrs: Vec<(&str, &str)> = vec![("taskId", skel.task_id.as_str())];
    if let Some(p) = parent {
        attrs.push(("parentTaskId", p));
    }
    if omitted_children > 0 && content.profile.extended() {
        attrs.push(("omittedChildren", &omitted));
    }
    out.start(element, &attrs)?;
    write_metadata(out, skel, content.profile)?;
    write_sequence(out, skel, content, written)?;
    written.tasks += 1;
    Ok(())
}

fn write_metadata<W: Write>(
    out: &mut XmlOut<W>,
    s: &ConversationSkeleton,
    profile: SchemaProfile,
) -> Result<()> {
    let m = &s.metadata;
    out.start("metadata", &[])?;
    if let Some(t) = title_of(s) {
        out.text_element("title", &[], &t)?;
    }
    out.text_element("lastActivity", &[], &xsd_datetime(&m.last_activity))?;
    out.text_element("createdAt", &[], &xsd_datetime(&m.created_at))?;
    if let Some(mode) = m.mode.as_deref().filter(|x| !x.trim().is_empty()) {
        out.text_element("mode", &[], mode)?;
    }
    out.text_element("messageCount", &[], &m.message_count.to_string())?;
    out.text_element("actionCount", &[], &m.action_count.to_string())?;
    out.text_element("totalSize", &[], &m.total_size.to_string())?;
    if let Some(ws) = m
        .workspace
        .as_deref()
        .filter(|x| profile.extended() && !x.trim().is_empty())
    {
        out.text_element("workspace", &[], ws)?;
    }
    out.end("metadata")
}

fn is_empty_params(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

fn write_sequence<W: Write>(
    out: &mut XmlOut<W>,
    s: &ConversationSkeleton,
    content: &ContentOptions,
    written: &mut Written,
) -> Result<()> {
    let items = s.sequence.as_deref().unwrap_or_default();
    if items.is_empty() {
        return out.empty("sequence", &[]);
    }
    out.start("sequence", &[])?;
    for item in items {
        match item {
            SequenceItem::Message(m) => {
                let role = if m.role == "user" {
                    "user"
                } else {
                    "assistant"
                };
                let ts = xsd_datetime(&m.timestamp);
                let (text, cut) = content.cut(&m.content, m.is_truncated);
                let mut attrs = vec![("role", role), ("timestamp", ts.as_str())];
                if cut {
                    attrs.push(("isTruncated", "true"));
                    written.truncated += 1;
                }
                out.text_element("message", &attrs, &text)?;
                written.messages += 1;
            }
            SequenceItem::Action(a) => {
                let kind = if a.kind == "command" {
                    "command"
                } else {
                    "tool"
                };
                let status = match a.status.as_str() {
                    "success" | "failure" | "in_progress" => a.status.as_str(),
                    _ => "in_progress",
                };
                let ts = xsd_datetime(&a.timestamp);
                let name = if a.name.is_empty() {
                    "unknown"
                } else {
                    a.name.as_str()
                };
                let mut attrs: Vec<(&str, &str)> = vec![
                    ("type", kind),
                    ("name", name),
                    ("status", status),
                    ("timestamp", ts.as_str()),
                ];
                let (line_count, content_size);
                if let Some(p) = a.file_path.as_deref().filter(|p| !p.is_empty()) {
                    attrs.push(("filePath", p));
                }
                if let Some(body) = a.parameters.get("content").and_then(Value::as_str) {
                    line_count = body.lines().count().to_string();
                    content_size = utf16_len(body).to_string();
                    attrs.push(("lineCount", &line_count));
                    attrs.push(("contentSize", &content_size));
                }
                if is_empty_params(&a.parameters) {
                    out.empty("action", &attrs)?;
                } else {
                    out.start("action", &attrs)?;
                    let json = a.parameters.to_string();
                    let (text, cut) = content.cut(&json, false);
                    if cut {
                        written.truncated += 1;
                    }
                    let pattrs: &[(&str, &str)] = if cut && content.profile.extended() {
                        &[("isTruncated", "true")]
                    } else {
                        &[]
                    };
                    out.text_element("parameters", pattrs, &text)?;
                    out.end("action")?;
                }
                written.actions += 1;
            }
        }
    }
    out.end("sequence")
}

/// One task as `<task>` (schemas/task.xsd).
pub fn write_task<W: Write>(
    sink: W,
    skel: &ConversationSkeleton,
    parent: Option<&str>,
    pretty: bool,
    content: &ContentOptions,
) -> Result<(W, Written)> {
    let mut written = Written::default();
    let mut out = XmlOut::new(sink, pretty)?;
    task_open(&mut out, "task", skel, parent, 0, content, &mut written)?;
    out.end("task")?;
    Ok((out.finish()?, written))
}

/// A conversation as `<conversation>` (schemas/conversation.xsd): the root as `<rootTask>`, its
/// descendants nested in `<children>`, each task analysed with its sequence as it is written.
pub fn write_conversation<W: Write>(
    sink: W,
    source: &dyn SkeletonSource,
    conversation: &Conversation<'_>,
    pretty: bool,
    content: &ContentOptions,
    cancel: &AtomicBool,
) -> Result<(W, Written)> {
    let mut written = Written {
        conversations: 1,
        ..Written::default()
    };
    let mut out = XmlOut::new(sink, pretty)?;
    let stamp = iso_from_ms(now_ms());
    out.start(
        "conversation",
        &[
            ("conversationId", conversation.root.task_id.as_str()),
            ("exportTimestamp", &xsd_datetime(&stamp)),
        ],
    )?;
    let root_id = conversation.root.task_id.clone();
    let analyze = content.analyze();
    conversation.walk(cancel, |visit| match visit {
        Visit::Enter {
            node,
            header,
            omitted,
            has_children,
            ..
        } => {
            let mut skel = source.full(&node.task_id, &analyze)?;
            let parent = header.and_then(|h| h.parent_task_id.as_deref());
            if let Some(h) = header {
                // The header carries the reconstructed links.
                skel.parent_task_id = h.parent_task_id.clone();
            }
            let element = if node.task_id == root_id {
                "rootTask"
            } else {
                "task"
            };
            task_open(
                &mut out,
                element,
                &skel,
                parent,
                omitted,
                content,
                &mut written,
            )?;
            if has_children {
                out.start("children", &[])?;
            }
            Ok(())
        }
        Visit::Leave { node, has_children } => {
            if has_children {
                out.end("children")?;
            }
            out.end(if node.task_id == root_id {
                "rootTask"
            } else {
                "task"
            })
        }
    })?;
    out.end("conversation")?;
    Ok((out.finish()?, written))
}

/// A project as `<projectExport>` (schemas/project.xsd): the summary, then one `<conversation>`
/// per root task.
pub fn write_project<W: Write>(
    sink: W,
    project_path: &str,
    conversations: &[ProjectConversation<'_>],
    pretty: bool,
    profile: SchemaProfile,
) -> Result<(W, Written)> {
    let mut out = XmlOut::new(sink, pretty)?;
    let total_tasks: usize = conversations.iter().map(|c| c.task_count).sum();
    let total_size: u64 = conversations.iter().map(|c| c.total_size).sum();
    out.start("projectExport", &[])?;
    out.start("summary", &[])?;
    out.text_element("projectPath", &[], project_path)?;
    out.text_element(
        "exportTimestamp",
        &[],
        &xsd_datetime(&iso_from_ms(now_ms())),
    )?;
    out.text_element("conversationCount", &[], &conversations.len().to_string())?;
    out.text_element("totalTasks", &[], &total_tasks.to_string())?;
    out.text_element("totalSize", &[], &total_size.to_string())?;
    let start = conversations.iter().map(|c| c.created_ms).min();
    let end = conversations.iter().map(|c| c.last_ms).max();
    match (start, end) {
        (Some(s), Some(e)) => {
            let (s, e) = (xsd_datetime(&iso_from_ms(s)), xsd_datetime(&iso_from_ms(e)));
            out.empty("dateRange", &[("start", &s), ("end", &e)])?;
        }
        _ => out.empty("dateRange", &[])?,
    }
    out.end("summary")?;
    if conversations.is_empty() {
        out.empty("conversations", &[])?;
    } else {
        out.start("conversations", &[])?;
        for c in conversations {
            let r = c.root;
            let title = title_of(r);
            let task_count = c.task_count.to_string();
            let last = xsd_datetime(&iso_from_ms(c.last_ms));
            let created = xsd_datetime(&iso_from_ms(c.created_ms));
            let size = c.total_size.to_string();
            let mut attrs: Vec<(&str, &str)> = vec![("rootTaskId", r.task_id.as_str())];
            if let Some(t) = title.as_deref() {
                attrs.push(("title", t));
            }
            attrs.push(("taskCount", &task_count));
            attrs.push(("lastActivity", &last));
            if profile.extended() {
                attrs.push(("createdAt", &created));
                attrs.push(("totalSize", &size));
                if let Some(m) = r.metadata.mode.as_deref().filter(|m| !m.trim().is_empty()) {
                    attrs.push(("mode", m));
                }
            }
            out.empty("conversation", &attrs)?;
        }
        out.end("conversations")?;
    }
    out.end("projectExport")?;
    let written = Written {
        tasks: u32::try_from(total_tasks).unwrap_or(u32::MAX),
        conversations: u32::try_from(conversations.len()).unwrap_or(u32::MAX),
        ..Written::default()
    };
    Ok((out.finish()?, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_text("a<b>&c"), "a&lt;b&gt;&amp;c");
        assert_eq!(escape_text("x\u{1}y\u{FFFF}"), "x\u{FFFD}y\u{FFFD}");
        assert_eq!(escape_text("l1\r\nl2"), "l1&#13;\nl2");
        assert_eq!(escape_attr("\"q\"\n\t"), "&quot;q&quot;&#10;&#9;");
        assert!(matches!(escape_text("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn cutting() {
        let c = ContentOptions {
            include_content: false,
            preview_len: 5,
            max_content_len: 0,
            profile: SchemaProfile::Seed,
        };
        assert_eq!(
            c.cut("hello world", false),
            (Cow::Owned("hello...".into()), true)
        );
        assert_eq!(c.cut("hi", false), (Cow::Borrowed("hi"), false));
        let full = ContentOptions {
            include_content: true,
            ..c
        };
        // Already cut in the middle by the skeleton builder: kept, still marked.
        let limited = ContentOptions {
            include_content: true,
            preview_len: 5,
            max_content_len: 4,
            profile: SchemaProfile::Seed,
        };
        assert_eq!(
            limited.cut("ab...yz", true),
            (Cow::Borrowed("ab...yz"), true)
        );
        assert_eq!(
            limited.cut("abcdefgh", false),
            (Cow::Owned("abcd...".into()), true)
        );
        assert_eq!(
            full.cut("hello world", false),
            (Cow::Borrowed("hello world"), false)
        );
    }
}
