//! `ConversationSkeleton`: one task summarised, in the field names and nesting TypeScript callers
//! of the MCP server already use, with values taken from the data (message `ts`, typed
//! extraction) rather than guessed.

use roo_formats::api::{ApiMessage, Role};
use roo_formats::diag::{DiagCode, Diagnostic, Severity};
use roo_formats::extract::{ApiTotals, Extractor, NewTaskInstruction, ToolCall};
use roo_formats::instruction_key;
use roo_formats::read::names;
use roo_formats::text;
use roo_formats::ui::{Ask, ClineMessage, MessageKind, Say};
use roo_formats::{
    for_each_api_head, for_each_api_message, for_each_ui_message, read_history_item,
    read_task_metadata,
};
use roo_formats::{HistoryItem, TaskMetadata};
use roo_js::iso_from_ms;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// Default length of a sequence item's content before it is cut in the middle.
pub const DEFAULT_MAX_CONTENT: usize = 400;

/// A conversational message in `sequence`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSkeleton {
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
    /// ISO 8601, from the message's `ts`.
    pub timestamp: String,
    pub is_truncated: bool,
}

/// A tool or command in `sequence`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionMetadata {
    /// `tool` or `command`.
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub parameters: Value,
    /// `success`, `failure` or `in_progress`.
    pub status: String,
    pub timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
}

/// One item of `sequence`: a message (has `role`) or an action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SequenceItem {
    Message(MessageSkeleton),
    Action(ActionMetadata),
}

/// Where `createdAt`/`lastActivity` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatesFrom {
    UiMessages,
    ApiHistory,
    HistoryItem,
    /// No message carries a time: Cline's task id (its creation time), up to the latest time in
    /// `task_metadata.json`.
    TaskId,
    /// No message carries a time: the times recorded in `task_metadata.json`.
    TaskMetadata,
    /// No timestamp in the data: the newest task file's modification time.
    FileTimes,
    None,
}

/// `SkeletonMetadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkeletonMetadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub created_at: String,
    pub last_activity: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    pub message_count: u32,
    pub action_count: u32,
    pub total_size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    pub data_source: String,
    /// `roo`, `zoo-code`, `cline` or `kilo-code`, from the storage path.
    pub source: String,
    pub dates_from: DatesFrom,
}

/// The links a task's own files store (before any inference).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct StoredLinks {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_item_parent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata_parent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub child_ids: Vec<String>,
    /// `history_item.json` `status` (`active`, `completed`, `delegated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Which task files exist and how they were read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct TaskFiles {
    /// `ui_messages.json`, `claude_messages.json`, or none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ui_file: Option<String>,
    pub ui_messages: u32,
    pub api_history: bool,
    pub api_messages: u32,
    /// `anthropicArray` or `versioned`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_format: Option<String>,
    pub history_item: bool,
    pub task_metadata: bool,
}

/// How a task's parent link was established (filled by the hierarchy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentEvidence {
    /// `history_item`, `child_ids`, `task_metadata` or `instruction_prefix`.
    pub source: String,
    /// 0..=1.
    pub confidence: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_task_ts: Option<i64>,
    /// `instruction_prefix` only: `exact` (the whole normalised instruction) or `prefix` (the
    /// parent's recorded message is a strict prefix of the child's instruction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_kind: Option<String>,
    /// `instruction_prefix` only: the child's creation time minus `new_task_ts`, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_ms: Option<i64>,
    /// Other sources that name a different parent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
}

/// `ConversationSkeleton` (the `SkeletonHeader` fields plus `sequence`, and what this engine adds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSkeleton {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    /// Absent in headers (scans that do not ask for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence: Option<Vec<SequenceItem>>,
    pub metadata: SkeletonMetadata,
    /// `computeInstructionPrefix(message, 192)` of each distinct child instruction.
    pub child_task_instruction_prefixes: Vec<String>,
    pub is_completed: bool,
    /// `computeInstructionPrefix(instruction, 192)`: the key a parent's prefix list is matched on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_instruction: Option<String>,
    /// The task's own instruction, as the user typed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// The subtasks this task created, once each, with when and how they were seen.
    pub child_tasks: Vec<NewTaskInstruction>,
    pub stored_links: StoredLinks,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_evidence: Option<ParentEvidence>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_task_id: Option<String>,
    pub api_totals: ApiTotalsOut,
    pub files: TaskFiles,
    /// First and last message times in ms (the same instants as `createdAt`/`lastActivity`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity_ms: Option<i64>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Token and cost totals of a task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ApiTotalsOut {
    pub requests: u32,
    pub tokens_in: f64,
    pub tokens_out: f64,
    pub cache_writes: f64,
    pub cache_reads: f64,
    pub total_cost: f64,
}

impl From<ApiTotals> for ApiTotalsOut {
    fn from(t: ApiTotals) -> Self {
        Self {
            requests: t.requests,
            tokens_in: t.tokens_in,
            tokens_out: t.tokens_out,
            cache_writes: t.cache_writes,
            cache_reads: t.cache_reads,
            total_cost: t.total_cost,
        }
    }
}

/// Options of [`analyze_task`].
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// Build `sequence` (the full skeleton) rather than a header.
    pub include_sequence: bool,
    /// Content longer than this (UTF-16 units) is cut in the middle: first half + `...` + last half.
    pub max_content_len: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        Self {
            include_sequence: true,
            max_content_len: DEFAULT_MAX_CONTENT,
        }
    }
}

/// The storage family a path belongs to, from the extension id in it (`roo` when it names none).
pub fn source_from_path(path: &Path) -> &'static str {
    source_in_path(path).unwrap_or("roo")
}

/// The storage family named by an extension id in the path, if any.
pub fn source_in_path(path: &Path) -> Option<&'static str> {
    let p = path.to_string_lossy().to_lowercase().replace('\\', "/");
    if p.contains("zoocodeorganization.zoo-code") {
        Some("zoo-code")
    } else if p.contains("saoudrizwan.claude-dev") {
        Some("cline")
    } else if p.contains("kilocode.kilo-code") {
        Some("kilo-code")
    } else if p.contains("rooveterinaryinc.roo-cline") {
        Some("roo")
    } else {
        None
    }
}

fn cut_middle(text: &str, max: usize) -> (String, bool) {
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

/// Title: the first non-empty line of the task text, trimmed (display code shortens it as it needs).
pub fn title_from(text_in: &str) -> Option<String> {
    text::unwrap_user_text(text_in)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

struct SequenceBuilder {
    include: bool,
    max: usize,
    items: Vec<SequenceItem>,
    messages: u32,
    actions: u32,
}

impl SequenceBuilder {
    fn message(&mut self, role: &str, content: &str, ts: Option<i64>) {
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

    fn action(&mut self, call: &ToolCall, parameters: Value) {
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
fn ui_role(msg: &ClineMessage, is_first_text: bool) -> Option<&'static str> {
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

fn ui_action_parameters(msg: &ClineMessage) -> Value {
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

/// What a task's history_item / task_metadata say, read once.
struct StoredFiles {
    history: Option<HistoryItem>,
    metadata: Option<TaskMetadata>,
}

/// Build the skeleton of one task directory. Returns `None` (with a diagnostic) only when the
/// directory holds none of the task files; every other task gets a skeleton, with the problems met
/// listed in its `diagnostics`.
pub fn analyze_task(
    task_id: &str,
    task_dir: &Path,
    opts: &AnalyzeOptions,
) -> Result<ConversationSkeleton, Vec<Diagnostic>> {
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut total_size = 0u64;
    let mut newest_mtime: Option<i64> = None;
    let mut any_file = false;
    let note_file = |name: &str, size: &mut u64, newest: &mut Option<i64>| -> bool {
        match std::fs::metadata(task_dir.join(name)) {
            Ok(md) => {
                if md.is_file() {
                    *size += md.len();
                    if let Some(ms) = md
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_millis() as i64)
                    {
                        *newest = Some(newest.map_or(ms, |n: i64| n.max(ms)));
                    }
                }
                true
            }
            Err(_) => false,
        }
    };
    let ui_name = if note_file(names::UI_MESSAGES, &mut total_size, &mut newest_mtime) {
        Some(names::UI_MESSAGES)
    } else if note_file(names::CLAUDE_MESSAGES, &mut total_size, &mut newest_mtime) {
        Some(names::CLAUDE_MESSAGES)
    } else {
        None
    };
    any_file |= ui_name.is_some();
    let has_api = note_file(names::API_HISTORY, &mut total_size, &mut newest_mtime);
    let has_history = note_file(names::HISTORY_ITEM, &mut total_size, &mut newest_mtime);
    let has_metadata = note_file(names::TASK_METADATA, &mut total_size, &mut newest_mtime);
    any_file |= has_api || has_history || has_metadata;
    if !any_file {
        return Err(vec![Diagnostic::new(
            task_dir.display().to_string(),
            "",
            DiagCode::NoTaskFiles,
            Severity::Error,
            "the task directory holds none of ui_messages.json, claude_messages.json, \
             api_conversation_history.json, history_item.json, task_metadata.json",
        )]);
    }

    let stored = StoredFiles {
        history: if has_history {
            let r = read_history_item(&task_dir.join(names::HISTORY_ITEM));
            diagnostics.extend(r.diagnostics);
            r.value
        } else {
            None
        },
        metadata: if has_metadata {
            let r = read_task_metadata(&task_dir.join(names::TASK_METADATA));
            diagnostics.extend(r.diagnostics);
            r.value
        } else {
            None
        },
    };

    let mut extractor = Extractor::new();
    let mut seq = SequenceBuilder {
        include: opts.include_sequence,
        max: opts.max_content_len,
        items: Vec::new(),
        messages: 0,
        actions: 0,
    };
    let mut files = TaskFiles {
        ui_file: ui_name.map(str::to_owned),
        history_item: stored.history.is_some(),
        task_metadata: stored.metadata.is_some(),
        ..TaskFiles::default()
    };

    // --- UI messages: the chronological record ---
    let mut ui_min: Option<i64> = None;
    let mut ui_max: Option<i64> = None;
    let mut first_say_text: Option<String> = None;
    let mut saw_task_say = false;
    let mut host_evidence = roo_formats::HostEvidence::default();
    let mut first_request: Option<String> = None;
    let mut last_completion: Option<usize> = None;
    let mut last_user: Option<usize> = None;
    let mut ui_count = 0usize;
    let mut foreign_records = 0usize;
    let mut first_foreign_user: Option<String> = None;
    if let Some(name) = ui_name {
        let summary = for_each_ui_message(&task_dir.join(name), |i, msg| {
            ui_count += 1;
            if let Some(foreign) = msg.foreign_message() {
                // A record in a shape the extension never wrote: kept as a plain message.
                if let Some(ts) = foreign.ts {
                    ui_min = Some(ui_min.map_or(ts, |m| m.min(ts)));
                    ui_max = Some(ui_max.map_or(ts, |m| m.max(ts)));
                }
                if foreign.role == "user" && first_foreign_user.is_none() {
                    first_foreign_user = Some(foreign.text.trim().to_owned());
                }
                foreign_records += 1;
                seq.message(foreign.role, &foreign.text, foreign.ts);
                return;
            }
            if let Some(ts) = msg.ts {
                ui_min = Some(ui_min.map_or(ts, |m| m.min(ts)));
                ui_max = Some(ui_max.map_or(ts, |m| m.max(ts)));
            }
            extractor.ui(&msg);
            host_evidence.see(&msg);
            // The task as the user wrote it: Cline's `say:"task"`, else the first `say:"text"`.
            let is_task = msg.is_say(&Say::Task);
            let is_first_text = first_say_text.is_none()
                && !saw_task_say
                && (is_task || msg.is_say(&Say::Text))
                && msg.text_nonblank().is_some();
            saw_task_say |= is_task;
            if is_first_text {
                first_say_text = msg.text.as_deref().map(|t| t.trim().to_owned());
            }
            if first_request.is_none() && msg.is_say(&Say::ApiReqStarted) {
                if let Some(req) = msg
                    .text
                    .as_deref()
                    .and_then(roo_formats::ui::ApiReqInfo::parse_request)
                {
                    first_request = Some(req);
                }
            }
            match &msg.kind {
                MessageKind::Say(Say::CompletionResult) => last_completion = Some(i),
                MessageKind::Say(Say::UserFeedback | Say::SubtaskResult) => last_user = Some(i),
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
                        parameters: ui_action_parameters(&msg),
                        status: "success".to_owned(),
                        timestamp: iso_from_ms(msg.ts.unwrap_or(0)),
                        file_path: None,
                    }));
                }
            } else if let Some(role) = ui_role(&msg, is_first_text) {
                if let Some(t) = msg.text.as_deref() {
                    let content = match (&msg.kind, msg.payload()) {
                        (MessageKind::Ask(Ask::Followup), roo_formats::Payload::FollowUp(f)) => {
                            f.question
                        }
                        (MessageKind::Ask(Ask::PlanModeRespond | Ask::ActModeRespond), _) => {
                            plan_response(t)
                        }
                        _ => t.to_owned(),
                    };
                    seq.message(role, &content, msg.ts);
                }
            }
        });
        files.ui_messages = summary.kept as u32;
        diagnostics.extend(summary.diagnostics);
        if foreign_records > 0 {
            diagnostics.push(Diagnostic::new(
                task_dir.join(name).display().to_string(),
                "",
                DiagCode::UnexpectedShape,
                Severity::Info,
                format!(
                    "{foreign_records} record(s) are not in the extension's message shape \
                     (role/type user|assistant with content); they were read as plain messages"
                ),
            ));
        }
    }

    // --- API history ---
    let mut api_min: Option<i64> = None;
    let mut api_max: Option<i64> = None;
    let mut first_user_text: Option<String> = None;
    let mut env_text: Option<String> = None;
    let ui_has_conversation = ui_count > 0;
    let mut api_completed = false;
    let mut api_seq = SequenceBuilder {
        include: opts.include_sequence && !ui_has_conversation,
        max: opts.max_content_len,
        items: Vec::new(),
        messages: 0,
        actions: 0,
    };
    if has_api {
        let api_path = task_dir.join(names::API_HISTORY);
        let (summary, format) = if !opts.include_sequence && ui_has_conversation {
            // A header whose counts come from the UI record: only the heads of the messages are
            // needed (the extraction's tool calls and the API sequence go unused).
            for_each_api_head(&api_path, |_, head| {
                if let Some(ts) = head.ts {
                    api_min = Some(api_min.map_or(ts, |m| m.min(ts)));
                    api_max = Some(api_max.map_or(ts, |m| m.max(ts)));
                }
                extractor.api_head(&head);
                if head.role == Some(Role::User) {
                    for t in &head.texts {
                        // Once the first text is known, only environment details still count.
                        if first_user_text.is_none()
                            || (env_text.is_none() && t.may_contain("<environment_details>"))
                        {
                            user_text(&t.get(), &mut env_text, &mut first_user_text);
                        }
                    }
                }
            })
        } else {
            for_each_api_message(&api_path, |_, msg| {
                if let Some(ts) = msg.ts {
                    api_min = Some(api_min.map_or(ts, |m| m.min(ts)));
                    api_max = Some(api_max.map_or(ts, |m| m.max(ts)));
                }
                extractor.api(&msg);
                if msg.is_role(&Role::User) {
                    for t in msg.texts() {
                        user_text(t, &mut env_text, &mut first_user_text);
                    }
                }
                if !ui_has_conversation {
                    let words = api_user_words(&msg);
                    if msg.is_role(&Role::Assistant) && calls_attempt_completion(&msg) {
                        api_completed = true;
                    } else if !words.is_empty() {
                        // The user spoke after the completion: the task went on.
                        api_completed = false;
                    }
                    api_sequence(&mut api_seq, &msg, &words);
                }
            })
        };
        files.api_history = summary.exists();
        files.api_messages = summary.kept as u32;
        files.api_format = format.map(|(f, _)| match f {
            roo_formats::HistoryFormat::AnthropicArray => "anthropicArray".to_owned(),
            roo_formats::HistoryFormat::Versioned => "versioned".to_owned(),
        });
        diagnostics.extend(summary.diagnostics);
    }

    // --- the task's own instruction, title, mode, workspace ---
    let history = stored.history.as_ref();
    let metadata = stored.metadata.as_ref();
    let instruction = first_say_text
        .or_else(|| {
            history
                .and_then(|h| h.task.clone())
                .filter(|t| !t.trim().is_empty())
        })
        .or(first_user_text)
        .or(first_foreign_user);
    let extraction = extractor.finish(instruction.as_deref());
    let env_source = env_text.as_deref().or(first_request.as_deref());
    let title = metadata
        .and_then(|m| m.title.clone())
        .filter(|t| !t.trim().is_empty())
        .or_else(|| history.and_then(|h| h.task.as_deref()).and_then(title_from))
        .or_else(|| instruction.as_deref().and_then(title_from));
    let mode = history
        .and_then(|h| h.mode.clone())
        .or_else(|| metadata.and_then(|m| m.mode.clone()))
        .or_else(|| {
            env_source
                .and_then(text::environment_mode)
                .map(str::to_owned)
        })
        .or_else(|| {
            metadata
                .and_then(TaskMetadata::last_model_usage_mode)
                .map(str::to_owned)
        });
    let workspace = history
        .and_then(|h| h.workspace.clone())
        .filter(|w| !w.trim().is_empty())
        .or_else(|| metadata.and_then(|m| m.workspace.clone()))
        .or_else(|| {
            env_source
                .and_then(text::environment_workspace)
                .map(str::to_owned)
        });

    // --- dates ---
    let (created, last, dates_from) = match (ui_min, ui_max, api_min, api_max) {
        (Some(a), Some(b), _, _) => (Some(a), Some(b), DatesFrom::UiMessages),
        (_, _, Some(a), Some(b)) => (Some(a), Some(b), DatesFrom::ApiHistory),
        _ => match history.and_then(|h| h.ts) {
            Some(ts) => (Some(ts), Some(ts), DatesFrom::HistoryItem),
            None => match stored_times(task_id, metadata) {
                Some((a, b, from)) => (Some(a), Some(b), from),
                None => match newest_mtime {
                    Some(ms) => {
                        diagnostics.push(Diagnostic::new(
                        task_dir.display().to_string(),
                        "",
                        DiagCode::InvalidValue,
                        Severity::Warning,
                        "no message carries a timestamp; the dates are the newest task file's modification time",
                    ));
                        (Some(ms), Some(ms), DatesFrom::FileTimes)
                    }
                    None => (None, None, DatesFrom::None),
                },
            },
        },
    };

    let stored_links = StoredLinks {
        history_item_parent: history
            .and_then(|h| h.parent_task_id.clone())
            .filter(|p| !p.is_empty()),
        metadata_parent: metadata.and_then(|m| m.parent_task_id.clone()),
        root_task_id: history
            .and_then(|h| h.root_task_id.clone())
            .or_else(|| metadata.and_then(|m| m.root_task_id.clone())),
        child_ids: history
            .and_then(|h| h.child_ids.clone())
            .unwrap_or_default(),
        status: history.and_then(|h| h.status.clone()),
    };
    let parent_task_id = stored_links
        .history_item_parent
        .clone()
        .or_else(|| stored_links.metadata_parent.clone());

    let is_completed = history.and_then(|h| h.status.as_deref()) == Some("completed")
        || match (last_completion, last_user) {
            (Some(c), Some(u)) => c > u,
            (Some(_), None) => true,
            _ => false,
        }
        || (!ui_has_conversation && api_completed);

    let mut prefixes: Vec<String> = Vec::new();
    for child in &extraction.children {
        let p = instruction_key::compute_instruction_prefix(
            &child.message,
            instruction_key::DEFAULT_PREFIX_LEN,
        );
        if !p.is_empty() && !prefixes.contains(&p) {
            prefixes.push(p);
        }
    }
    let truncated_instruction = instruction
        .as_deref()
        .map(|i| {
            instruction_key::compute_instruction_prefix(i, instruction_key::DEFAULT_PREFIX_LEN)
        })
        .filter(|p| !p.is_empty());

    // Sequence: the UI record when there is one; else the API history.
    let (sequence, message_count, action_count) = if ui_has_conversation {
        let mut seq = seq;
        // Tool statuses and names come from the extractor, which saw what followed each call.
        if seq.include {
            let mut calls = extraction.tool_calls.iter();
            for item in &mut seq.items {
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
        (seq.include.then_some(seq.items), seq.messages, seq.actions)
    } else {
        let include = opts.include_sequence;
        (
            include.then_some(api_seq.items),
            api_seq.messages,
            api_seq.actions,
        )
    };

    Ok(ConversationSkeleton {
        task_id: task_id.to_owned(),
        parent_task_id,
        sequence,
        metadata: SkeletonMetadata {
            title,
            created_at: iso_from_ms(created.unwrap_or(0)),
            last_activity: iso_from_ms(last.unwrap_or(0)),
            mode,
            message_count,
            action_count,
            total_size,
            workspace,
            data_source: task_dir.display().to_string(),
            source: source_of(task_id, task_dir, ui_name, &host_evidence).to_owned(),
            dates_from,
        },
        child_task_instruction_prefixes: prefixes,
        is_completed,
        truncated_instruction,
        instruction,
        child_tasks: extraction.children,
        root_task_id: stored_links.root_task_id.clone(),
        stored_links,
        parent_evidence: None,
        api_totals: extraction.totals.into(),
        files,
        created_at_ms: created,
        last_activity_ms: last,
        diagnostics,
    })
}

/// What a user text of the API history says of the task: the environment details (older tasks
/// hold them in the same string as the task) and the first text the user wrote.
fn user_text(t: &str, env_text: &mut Option<String>, first_user_text: &mut Option<String>) {
    if env_text.is_none() && t.contains("<environment_details>") {
        *env_text = Some(t.to_owned());
    }
    if text::is_environment_details(t) {
        return;
    }
    if first_user_text.is_none() && !t.trim().is_empty() {
        *first_user_text = Some(text::unwrap_user_text(t).to_owned());
    }
}

/// Sequence items from an API message (used when there is no UI record). A user turn counts as
/// a message only for what the user wrote in it (`user_words`): tool results, environment details
/// and the extension's notes are not messages.
fn api_sequence(seq: &mut SequenceBuilder, msg: &ApiMessage, user_words: &[&str]) {
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
fn api_user_words(msg: &ApiMessage) -> Vec<&str> {
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
fn calls_attempt_completion(msg: &ApiMessage) -> bool {
    msg.blocks().iter().any(|b| {
        b.tool_use()
            .is_some_and(|(name, _)| name == "attempt_completion")
    }) || msg.texts().any(|t| t.contains("<attempt_completion>"))
}

/// The text of Cline's plan-mode answer (`{"response": …, "options": […]}`), else the raw text.
fn plan_response(t: &str) -> String {
    match serde_json::from_str::<Value>(t) {
        Ok(Value::Object(m)) => m
            .get("response")
            .and_then(Value::as_str)
            .map_or_else(|| t.to_owned(), str::to_owned),
        _ => t.to_owned(),
    }
}

/// Dates when no message carries a time: Cline's task id (its creation time in milliseconds) and
/// the times `task_metadata.json` records.
fn stored_times(task_id: &str, metadata: Option<&TaskMetadata>) -> Option<(i64, i64, DatesFrom)> {
    let range = metadata.and_then(TaskMetadata::time_range);
    match (roo_formats::host::ms_from_task_id(task_id), range) {
        (Some(created), Some((_, last))) => Some((created, last.max(created), DatesFrom::TaskId)),
        (Some(created), None) => Some((created, created, DatesFrom::TaskId)),
        (None, Some((a, b))) => Some((a, b, DatesFrom::TaskMetadata)),
        (None, None) => None,
    }
}

/// The host family of a task: from the extension id in its path; else from its content (kinds
/// or fields only one family writes); else from a Cline-style task id or Claude Dev's
/// `claude_messages.json`; else Roo Code.
fn source_of(
    task_id: &str,
    task_dir: &Path,
    ui_name: Option<&str>,
    evidence: &roo_formats::HostEvidence,
) -> &'static str {
    if let Some(s) = source_in_path(task_dir) {
        return s;
    }
    if let Some(family) = evidence.family() {
        return family.source();
    }
    if roo_formats::host::is_millisecond_task_id(task_id) || ui_name == Some(names::CLAUDE_MESSAGES)
    {
        return roo_formats::HostFamily::Cline.source();
    }
    "roo"
}
