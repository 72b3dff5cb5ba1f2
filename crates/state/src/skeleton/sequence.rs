//! The `sequence` of a full skeleton (messages and actions, content cut in the middle) and its
//! counts, which a header keeps without the items.

use roo_formats::api::{ApiMessage, Role};
use roo_formats::extract::ToolCall;
use roo_formats::text;
use roo_formats::ui::{Ask, ClineMessage, MessageKind, Say};
use roo_js::iso_from_ms;
use serde_json::Value;

use super::{ActionMetadata, MessageSkeleton, SequenceItem};

pub(super) fn cut_middle(text: &str, max: usize) -> (String, bool) {
    if max == 0 || roo_js::utf16_len(text) <= max {
        return (text.to_owned(), false);
    }
    let half = max / 2;
    let head = roo_js::truncate_utf16(text, half);
    // The tail: walk back from the end until `half` units are taken.
    let mut units = 0usize;
    let mut start = text.len();
    for (i, c) in text.char_indices().rev() {
        units += c.len_utf16();
        if units > half {
            break;
        }
        start = i;
    }
    (format!("{head}...{}", &text[start..]), true)
}

pub(super) struct SequenceBuilder {
    pub(super) include: bool,
    pub(super) max: usize,
    pub(super) items: Vec<SequenceItem>,
    pub(super) messages: u32,
    pub(super) actions: u32,
}

impl SequenceBuilder {
    pub(super) fn message(&mut self, role: &str, content: &str, ts: Option<i64>) {
        if content.trim().is_empty() {
            return;
        }
        self.messages += 1;
        if self.include {
            let (content, is_truncated) = cut_middle(content, self.max);
            self.items.push(SequenceItem::Message(MessageSkeleton {
                role: role.to_owned(),
                content,
                timestamp: iso_from_ms(ts.unwrap_or(0)),
                is_truncated,
            }));
        }
    }

    /// Count a message whose content is not blank, without its content (a header).
    pub(super) fn count_message(&mut self) {
        debug_assert!(!self.include, "a sequence needs the content");
        self.messages += 1;
    }

    /// Name, kind, status and path of each action from the extractor's tool calls, in order (the
    /// UI record's calls get their status from the messages that follow them).
    pub(super) fn with_tool_calls(mut self, calls: &[ToolCall]) -> Self {
        if self.include {
            let mut calls = calls.iter();
            for item in &mut self.items {
                if let SequenceItem::Action(a) = item {
                    if let Some(call) = calls.next() {
                        a.name = call.name.clone();
                        a.kind = call.kind.to_owned();
                        a.status = call.status.to_owned();
                        a.file_path = call.path.clone();
                    }
                }
            }
        }
        self
    }

    pub(super) fn action(&mut self, call: &ToolCall, parameters: Value) {
        self.actions += 1;
        if self.include {
            self.items.push(SequenceItem::Action(ActionMetadata {
                kind: call.kind.to_owned(),
                name: call.name.clone(),
                parameters,
                status: call.status.to_owned(),
                timestamp: iso_from_ms(call.ts.unwrap_or(0)),
                file_path: call.path.clone(),
            }));
        }
    }
}

/// The role a UI message plays in the conversation, if it is conversational.
pub(super) fn ui_role(msg: &ClineMessage, is_first_text: bool) -> Option<&'static str> {
    match &msg.kind {
        MessageKind::Say(Say::Text | Say::Task) if is_first_text => Some("user"),
        MessageKind::Say(Say::Text | Say::CompletionResult) => Some("assistant"),
        MessageKind::Say(Say::UserFeedback | Say::SubtaskResult) => Some("user"),
        MessageKind::Ask(Ask::Followup | Ask::PlanModeRespond | Ask::ActModeRespond) => {
            Some("assistant")
        }
        _ => None,
    }
}

pub(super) fn ui_action_parameters(msg: &ClineMessage) -> Value {
    match msg.payload() {
        roo_formats::Payload::Tool(t) => {
            let mut m = serde_json::Map::new();
            if let Some(p) = t.path {
                m.insert("path".into(), Value::String(p));
            }
            if let Some(mode) = t.mode {
                m.insert("mode".into(), Value::String(mode));
            }
            if let Some(c) = t.command {
                m.insert("command".into(), Value::String(c));
            }
            Value::Object(m)
        }
        _ => match (&msg.kind, &msg.text) {
            (MessageKind::Ask(Ask::Command) | MessageKind::Say(Say::Command), Some(cmd)) => {
                serde_json::json!({ "command": cmd })
            }
            _ => Value::Object(serde_json::Map::new()),
        },
    }
}

/// Sequence items from an API message (used when there is no UI record). A user turn counts as
/// a message only for what the user wrote in it (`user_words`): tool results, environment details
/// and the extension's notes are not messages.
pub(super) fn api_sequence(seq: &mut SequenceBuilder, msg: &ApiMessage, user_words: &[&str]) {
    match &msg.role {
        Some(Role::User) => {
            if !user_words.is_empty() {
                seq.message("user", &user_words.join("\n\n"), msg.ts);
            }
        }
        Some(Role::Assistant) => {
            let texts: Vec<&str> = msg
                .texts()
                .filter(|t| !text::is_environment_details(t))
                .collect();
            if !texts.is_empty() {
                seq.message("assistant", &texts.join("\n\n"), msg.ts);
            }
        }
        _ => return,
    }
    for block in msg.blocks() {
        if let Some((name, input)) = block.tool_use() {
            let call = ToolCall {
                ts: msg.ts,
                name: name.to_owned(),
                kind: if name == "execute_command" {
                    "command"
                } else {
                    "tool"
                },
                path: input.get("path").and_then(Value::as_str).map(str::to_owned),
                status: "success",
            };
            seq.action(&call, input.clone());
        }
    }
}

/// What the user wrote in a user turn of the API history: the task or an answer, with the
/// `<task>` / `<user_message>` wrapper removed, and the `<feedback>` / `<answer>` inside tool
/// results and notes; never the tool results, environment details or the extension's notes.
pub(super) fn api_user_words(msg: &ApiMessage) -> Vec<&str> {
    if !msg.is_role(&Role::User) {
        return Vec::new();
    }
    let mut words = Vec::new();
    let mut in_result = false;
    for t in msg.texts() {
        match text::user_text_kind(t) {
            text::UserTextKind::Environment => {}
            text::UserTextKind::ToolResultHeader | text::UserTextKind::ExtensionNote => {
                in_result = true;
                words.extend(text::user_words_in(t));
            }
            text::UserTextKind::User if in_result => {
                // The result's body, or feedback given with it.
                words.extend(text::user_words_in(t));
            }
            text::UserTextKind::User => {
                let w = text::unwrap_user_text(t);
                if !w.trim().is_empty() {
                    words.push(w);
                }
            }
        }
    }
    words
}

/// An assistant turn that calls `attempt_completion` (a `tool_use` block or an XML call in text).
pub(super) fn calls_attempt_completion(msg: &ApiMessage) -> bool {
    msg.blocks().iter().any(|b| {
        b.tool_use()
            .is_some_and(|(name, _)| name == "attempt_completion")
    }) || msg.texts().any(|t| t.contains("<attempt_completion>"))
}

/// The text of Cline's plan-mode answer (`{"response": …, "options": […]}`), else the raw text.
pub(super) fn plan_response(t: &str) -> String {
    match serde_json::from_str::<Value>(t) {
        Ok(Value::Object(m)) => m
            .get("response")
            .and_then(Value::as_str)
            .map_or_else(|| t.to_owned(), str::to_owned),
        _ => t.to_owned(),
    }
}
