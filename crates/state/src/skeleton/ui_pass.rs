//! The UI record's part of [`super::analyze_task`]: one fold over `ui_messages.json` (or Claude
//! Dev's `claude_messages.json`), the chronological record of the task.

use roo_formats::diag::{DiagCode, Diagnostic, Severity};
use roo_formats::extract::Extractor;
use roo_formats::ui::{Ask, ClineMessage, MessageKind, Say, UnreadText};
use roo_formats::{for_each_ui_message, for_each_ui_message_with_texts};
use roo_formats::{HostEvidence, Payload};
use roo_js::iso_from_ms;
use std::borrow::Cow;
use std::cell::Cell;
use std::path::Path;

use super::sequence::{plan_response, ui_action_parameters, ui_role, SequenceBuilder};
use super::{ActionMetadata, SequenceItem, TaskFiles};

/// What the UI record says of the task.
#[derive(Default)]
pub(super) struct UiPass {
    /// Earliest and latest message time.
    pub(super) min: Option<i64>,
    pub(super) max: Option<i64>,
    /// The task as the user wrote it: Cline's `say:"task"`, else the first `say:"text"`.
    pub(super) first_say_text: Option<String>,
    saw_task_say: bool,
    pub(super) host_evidence: HostEvidence,
    /// The first API request's text (its environment details give mode and workspace).
    pub(super) first_request: Option<String>,
    pub(super) last_completion: Option<usize>,
    pub(super) last_user: Option<usize>,
    /// Records read (in either shape).
    pub(super) count: usize,
    /// Records in a shape the extension never wrote, read as plain messages.
    foreign_records: usize,
    pub(super) first_foreign_user: Option<String>,
}

impl UiPass {
    /// Fold the UI file at `path` into the extractor and the sequence; its problems go to
    /// `diagnostics` and the count of messages kept to `files`.
    pub(super) fn read(
        path: &Path,
        extractor: &mut Extractor,
        seq: &mut SequenceBuilder,
        files: &mut TaskFiles,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let mut pass = UiPass::default();
        let summary = if seq.include {
            for_each_ui_message(path, |i, msg| pass.message(i, &msg, None, extractor, seq))
        } else {
            // A header decodes only the texts it uses: the task's own words and the first API
            // request until they are found.
            let looking = Cell::new(Looking {
                task: true,
                request: true,
            });
            let wanted = |kind: &MessageKind| header_reads_text(kind, looking.get());
            for_each_ui_message_with_texts(path, &wanted, |i, msg, unread| {
                pass.message(i, &msg, unread, extractor, seq);
                looking.set(Looking {
                    task: pass.first_say_text.is_none() && !pass.saw_task_say,
                    request: pass.first_request.is_none(),
                });
            })
        };
        files.ui_messages = summary.kept as u32;
        diagnostics.extend(summary.diagnostics);
        if pass.foreign_records > 0 {
            diagnostics.push(Diagnostic::new(
                path.display().to_string(),
                "",
                DiagCode::UnexpectedShape,
                Severity::Info,
                format!(
                    "{} record(s) are not in the extension's message shape \
                     (role/type user|assistant with content); they were read as plain messages",
                    pass.foreign_records
                ),
            ));
        }
        pass
    }

    fn see_time(&mut self, ts: Option<i64>) {
        if let Some(ts) = ts {
            self.min = Some(self.min.map_or(ts, |m| m.min(ts)));
            self.max = Some(self.max.map_or(ts, |m| m.max(ts)));
        }
    }

    /// Fold one record; `unread` is its text as it stands in the file when the reader stepped
    /// over it.
    fn message(
        &mut self,
        i: usize,
        msg: &ClineMessage,
        unread: Option<UnreadText<'_>>,
        extractor: &mut Extractor,
        seq: &mut SequenceBuilder,
    ) {
        self.count += 1;
        if let Some(foreign) = msg.foreign_message() {
            // A record in a shape the extension never wrote: kept as a plain message.
            self.see_time(foreign.ts);
            if foreign.role == "user" && self.first_foreign_user.is_none() {
                self.first_foreign_user = Some(foreign.text.trim().to_owned());
            }
            self.foreign_records += 1;
            seq.message(foreign.role, &foreign.text, foreign.ts);
            return;
        }
        self.see_time(msg.ts);
        extractor.ui_with_unread(msg, unread);
        self.host_evidence.see(msg);
        let is_task = msg.is_say(&Say::Task);
        let is_first_text = self.first_say_text.is_none()
            && !self.saw_task_say
            && (is_task || msg.is_say(&Say::Text))
            && msg.text_nonblank().is_some();
        self.saw_task_say |= is_task;
        if is_first_text {
            self.first_say_text = msg.text.as_deref().map(|t| t.trim().to_owned());
        }
        if self.first_request.is_none() && msg.is_say(&Say::ApiReqStarted) {
            self.first_request = msg
                .text
                .as_deref()
                .and_then(roo_formats::ui::ApiReqInfo::parse_request);
        }
        match &msg.kind {
            MessageKind::Say(Say::CompletionResult) => self.last_completion = Some(i),
            MessageKind::Say(Say::UserFeedback | Say::SubtaskResult) => self.last_user = Some(i),
            _ => {}
        }
        if msg.kind.is_tool_call() {
            // Name, kind, path and status are filled from the extractor afterwards, since the
            // status depends on the messages that follow the call.
            seq.actions += 1;
            if seq.include {
                seq.items.push(SequenceItem::Action(ActionMetadata {
                    kind: "tool".to_owned(),
                    name: String::new(),
                    parameters: ui_action_parameters(msg),
                    status: "success".to_owned(),
                    timestamp: iso_from_ms(msg.ts.unwrap_or(0)),
                    file_path: None,
                }));
            }
        } else if let Some(role) = ui_role(msg, is_first_text) {
            if let Some(t) = msg.text.as_deref() {
                let content: Cow<str> = match &msg.kind {
                    MessageKind::Ask(Ask::Followup) => match msg.payload() {
                        Payload::FollowUp(f) => Cow::Owned(f.question),
                        _ => Cow::Borrowed(t),
                    },
                    MessageKind::Ask(Ask::PlanModeRespond | Ask::ActModeRespond) => {
                        Cow::Owned(plan_response(t))
                    }
                    _ => Cow::Borrowed(t),
                };
                seq.message(role, &content, msg.ts);
            } else if unread.is_some_and(|text| !text.is_blank()) {
                // A header only counts the message: its content is its text as written.
                seq.count_message();
            }
        }
    }
}

/// What a header still looks for in the UI record's texts.
#[derive(Clone, Copy)]
struct Looking {
    /// The task as the user wrote it.
    task: bool,
    /// The first API request's text (its environment details).
    request: bool,
}

/// Whether a header (no sequence) decodes the text of a record of `kind`: the task as the user
/// wrote it and the first API request while it looks for them, the tool calls (names, paths,
/// subtask instructions), and the messages whose counted content is drawn from their text
/// (follow-up questions, plan responses). The usage of the other API requests is read from their
/// text as it stands in the file; command output, reasoning, replies and the like are stepped
/// over, a header only asks whether they are blank.
fn header_reads_text(kind: &MessageKind, looking: Looking) -> bool {
    match kind {
        MessageKind::Say(Say::Task | Say::Text) => looking.task,
        MessageKind::Say(Say::ApiReqStarted) => looking.request,
        MessageKind::Say(Say::ApiReqFinished) => true,
        MessageKind::Ask(Ask::Tool | Ask::UseMcpServer)
        | MessageKind::Say(Say::Tool | Say::UseMcpServer) => true,
        MessageKind::Ask(Ask::Followup | Ask::PlanModeRespond | Ask::ActModeRespond) => true,
        _ => false,
    }
}
