//! The API history's part of [`super::analyze_task`]: one fold over
//! `api_conversation_history.json`. With a UI record and no sequence wanted, only the heads of the
//! messages are read (times, texts kept raw until a marker may be in them, subtask calls).

use roo_formats::api::{ApiMessage, Role};
use roo_formats::diag::Diagnostic;
use roo_formats::extract::Extractor;
use roo_formats::text;
use roo_formats::{for_each_api_head, for_each_api_message, ApiHead, HistoryFormat};
use std::path::Path;

use super::sequence::{api_sequence, api_user_words, calls_attempt_completion, SequenceBuilder};
use super::{AnalyzeOptions, TaskFiles};

/// What the API history says of the task.
pub(super) struct ApiPass {
    /// Earliest and latest message time.
    pub(super) min: Option<i64>,
    pub(super) max: Option<i64>,
    /// The first text the user wrote (wrapper removed).
    pub(super) first_user_text: Option<String>,
    /// The first user text holding environment details (mode, workspace).
    pub(super) env_text: Option<String>,
    /// The last assistant turn called `attempt_completion` and the user did not speak after it.
    pub(super) completed: bool,
    /// The sequence built from the API history (used when there is no UI record).
    pub(super) seq: SequenceBuilder,
    /// True when there is a UI record: the API history then adds no sequence and no completion.
    ui_has_conversation: bool,
}

impl ApiPass {
    /// The empty pass (no API history file, or before it is read).
    pub(super) fn new(opts: &AnalyzeOptions, ui_has_conversation: bool) -> Self {
        ApiPass {
            min: None,
            max: None,
            first_user_text: None,
            env_text: None,
            completed: false,
            seq: SequenceBuilder {
                include: opts.include_sequence && !ui_has_conversation,
                max: opts.max_content_len,
                items: Vec::new(),
                messages: 0,
                actions: 0,
            },
            ui_has_conversation,
        }
    }

    /// Fold the API history at `path` into the extractor; its problems go to `diagnostics`, its
    /// counts and format to `files`.
    pub(super) fn read(
        mut self,
        path: &Path,
        opts: &AnalyzeOptions,
        extractor: &mut Extractor,
        files: &mut TaskFiles,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Self {
        let (summary, format) = if !opts.include_sequence && self.ui_has_conversation {
            // A header whose counts come from the UI record: only the heads of the messages are
            // needed (the extraction's tool calls and the API sequence go unused).
            for_each_api_head(path, |_, head| self.head(&head, extractor))
        } else {
            for_each_api_message(path, |_, msg| self.message(&msg, extractor))
        };
        files.api_history = summary.exists();
        files.api_messages = summary.kept as u32;
        files.api_format = format.map(|(f, _)| match f {
            HistoryFormat::AnthropicArray => "anthropicArray".to_owned(),
            HistoryFormat::Versioned => "versioned".to_owned(),
        });
        diagnostics.extend(summary.diagnostics);
        self
    }

    fn see_time(&mut self, ts: Option<i64>) {
        if let Some(ts) = ts {
            self.min = Some(self.min.map_or(ts, |m| m.min(ts)));
            self.max = Some(self.max.map_or(ts, |m| m.max(ts)));
        }
    }

    fn head(&mut self, head: &ApiHead<'_>, extractor: &mut Extractor) {
        self.see_time(head.ts);
        extractor.api_head(head);
        if head.role == Some(Role::User) {
            for t in &head.texts {
                // Once the first text is known, only environment details still count.
                if self.first_user_text.is_none()
                    || (self.env_text.is_none() && t.may_contain("<environment_details>"))
                {
                    self.user_text(&t.get());
                }
            }
        }
    }

    fn message(&mut self, msg: &ApiMessage, extractor: &mut Extractor) {
        self.see_time(msg.ts);
        extractor.api(msg);
        if msg.is_role(&Role::User) {
            for t in msg.texts() {
                self.user_text(t);
            }
        }
        if !self.ui_has_conversation {
            let words = api_user_words(msg);
            if msg.is_role(&Role::Assistant) && calls_attempt_completion(msg) {
                self.completed = true;
            } else if !words.is_empty() {
                // The user spoke after the completion: the task went on.
                self.completed = false;
            }
            api_sequence(&mut self.seq, msg, &words);
        }
    }

    /// What a user text says of the task: the environment details (older tasks hold them in the
    /// same string as the task) and the first text the user wrote.
    fn user_text(&mut self, t: &str) {
        if self.env_text.is_none() && t.contains("<environment_details>") {
            self.env_text = Some(t.to_owned());
        }
        if text::is_environment_details(t) {
            return;
        }
        if self.first_user_text.is_none() && !t.trim().is_empty() {
            self.first_user_text = Some(text::unwrap_user_text(t).to_owned());
        }
    }
}
