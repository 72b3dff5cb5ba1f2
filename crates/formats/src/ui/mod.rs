//! `ui_messages.json` (and its older name `claude_messages.json`): the `ClineMessage` records the
//! extension shows in its chat view, and the JSON payloads some of them carry in `text`.

use crate::diag::{DiagCode, Diags, Severity};
use crate::fields::{open_enum, Fields};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

mod payload;
mod strict;
#[cfg(test)]
mod strict_tests;

pub use payload::*;
pub use strict::{literal_is_blank, UnreadText, WantedTexts};
pub(crate) use strict::{read_record, StrictRecord};

open_enum! {
    /// `ClineMessage.ask`: the values of every host family (Roo Code / Zoo Code, Cline, Kilo Code);
    /// [`crate::host`] says which family writes which.
    pub enum Ask {
        known {
            Followup => "followup",
            Command => "command",
            CommandOutput => "command_output",
            CompletionResult => "completion_result",
            Tool => "tool",
            ApiReqFailed => "api_req_failed",
            ResumeTask => "resume_task",
            ResumeCompletedTask => "resume_completed_task",
            MistakeLimitReached => "mistake_limit_reached",
            UseMcpServer => "use_mcp_server",
            AutoApprovalMaxReqReached => "auto_approval_max_req_reached",
            BrowserActionLaunch => "browser_action_launch",
            PlanModeRespond => "plan_mode_respond",
            ActModeRespond => "act_mode_respond",
            NewTask => "new_task",
            Condense => "condense",
            SummarizeTask => "summarize_task",
            ReportBug => "report_bug",
            UseSubagents => "use_subagents",
            PaymentRequiredPrompt => "payment_required_prompt",
            InvalidModel => "invalid_model",
            CheckpointRestore => "checkpoint_restore",
        }
        retired {
            RequestLimitReached => "request_limit_reached",
        }
    }
}

open_enum! {
    /// `ClineMessage.say`: the values of every host family; [`crate::host`] says which family
    /// writes which.
    pub enum Say {
        known {
            Error => "error",
            ApiReqStarted => "api_req_started",
            ApiReqFinished => "api_req_finished",
            ApiReqRetried => "api_req_retried",
            ApiReqRetryDelayed => "api_req_retry_delayed",
            ApiReqRateLimitWait => "api_req_rate_limit_wait",
            ApiReqDeleted => "api_req_deleted",
            Text => "text",
            Image => "image",
            Reasoning => "reasoning",
            CompletionResult => "completion_result",
            UserFeedback => "user_feedback",
            UserFeedbackDiff => "user_feedback_diff",
            CommandOutput => "command_output",
            ShellIntegrationWarning => "shell_integration_warning",
            McpServerRequestStarted => "mcp_server_request_started",
            McpServerResponse => "mcp_server_response",
            SubtaskResult => "subtask_result",
            CheckpointSaved => "checkpoint_saved",
            RooignoreError => "rooignore_error",
            DiffError => "diff_error",
            CondenseContext => "condense_context",
            CondenseContextError => "condense_context_error",
            SlidingWindowTruncation => "sliding_window_truncation",
            CodebaseSearchResult => "codebase_search_result",
            UserEditTodos => "user_edit_todos",
            TooManyToolsWarning => "too_many_tools_warning",
            Tool => "tool",
            BrowserAction => "browser_action",
            BrowserActionResult => "browser_action_result",
            BrowserSessionStatus => "browser_session_status",
            /// Cline's first message: the task as the user wrote it.
            Task => "task",
            /// Cline: a command run without asking (auto-approved).
            Command => "command",
            ErrorRetry => "error_retry",
            ShellIntegrationWarningWithSuggestion => "shell_integration_warning_with_suggestion",
            BrowserActionLaunch => "browser_action_launch",
            McpNotification => "mcp_notification",
            /// Cline: an MCP tool used without asking.
            UseMcpServer => "use_mcp_server",
            DeletedApiReqs => "deleted_api_reqs",
            ClineignoreError => "clineignore_error",
            CommandPermissionDenied => "command_permission_denied",
            CheckpointCreated => "checkpoint_created",
            LoadMcpDocumentation => "load_mcp_documentation",
            GenerateExplanation => "generate_explanation",
            Info => "info",
            TaskProgress => "task_progress",
            HookStatus => "hook_status",
            HookOutputStream => "hook_output_stream",
            Subagent => "subagent",
            UseSubagents => "use_subagents",
            SubagentUsage => "subagent_usage",
            ConditionalRulesApplied => "conditional_rules_applied",
        }
        retired {
            InspectSiteResult => "inspect_site_result",
            NewTaskStarted => "new_task_started",
            NewTask => "new_task",
            ApiCost => "api_cost",
            TaskCompleted => "task_completed",
        }
    }
}

/// `type` plus `ask`/`say` of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageKind {
    Ask(Ask),
    Say(Say),
    /// `type` missing or not `ask`/`say` (hand-made or foreign files); the raw `type` is kept.
    Other(Option<String>),
}

/// The kinds of tool call a UI record can hold (what the extractor reads of each differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallKind {
    /// `ask:"tool"` / `say:"tool"`: a named tool with its parameters in the text.
    Tool,
    /// `ask:"command"` / `say:"command"`: a shell command.
    Command,
    /// `ask:"use_mcp_server"` / `say:"use_mcp_server"`: an MCP server's tool or resource.
    Mcp,
    /// `ask:"browser_action_launch"`, `say:"browser_action_launch"`, `say:"browser_action"`.
    Browser,
}

impl MessageKind {
    /// The tool call this message records, if it records one: an approval asked or a call made
    /// without asking (the `say` twins Cline writes for auto-approved calls, and
    /// `say:"browser_action"` steps). The one list of tool-call kinds: the skeleton's action count
    /// and the extractor's calls both come from it, and are paired by position.
    pub fn tool_call_kind(&self) -> Option<ToolCallKind> {
        match self {
            MessageKind::Ask(a) => ask_call(a),
            MessageKind::Say(s) => say_call(s),
            MessageKind::Other(_) => None,
        }
    }

    /// A message that records one tool call ([`MessageKind::tool_call_kind`]).
    pub fn is_tool_call(&self) -> bool {
        self.tool_call_kind().is_some()
    }
}

/// The tool call an ask records, decided for every value (no catch-all: a new value does not
/// compile until it is placed here).
fn ask_call(a: &Ask) -> Option<ToolCallKind> {
    match a {
        Ask::Tool => Some(ToolCallKind::Tool),
        Ask::Command => Some(ToolCallKind::Command),
        Ask::UseMcpServer => Some(ToolCallKind::Mcp),
        Ask::BrowserActionLaunch => Some(ToolCallKind::Browser),
        Ask::Followup
        | Ask::CommandOutput
        | Ask::CompletionResult
        | Ask::ApiReqFailed
        | Ask::ResumeTask
        | Ask::ResumeCompletedTask
        | Ask::MistakeLimitReached
        | Ask::AutoApprovalMaxReqReached
        | Ask::PlanModeRespond
        | Ask::ActModeRespond
        | Ask::NewTask
        | Ask::Condense
        | Ask::SummarizeTask
        | Ask::ReportBug
        | Ask::UseSubagents
        | Ask::PaymentRequiredPrompt
        | Ask::InvalidModel
        | Ask::CheckpointRestore
        | Ask::RequestLimitReached
        | Ask::Other(_) => None,
    }
}

/// The tool call a say records, decided for every value as [`ask_call`] (the `say` twins Cline
/// writes for auto-approved calls, and `say:"browser_action"` steps).
fn say_call(s: &Say) -> Option<ToolCallKind> {
    match s {
        Say::Tool => Some(ToolCallKind::Tool),
        Say::Command => Some(ToolCallKind::Command),
        Say::UseMcpServer => Some(ToolCallKind::Mcp),
        Say::BrowserAction | Say::BrowserActionLaunch => Some(ToolCallKind::Browser),
        Say::Error
        | Say::ApiReqStarted
        | Say::ApiReqFinished
        | Say::ApiReqRetried
        | Say::ApiReqRetryDelayed
        | Say::ApiReqRateLimitWait
        | Say::ApiReqDeleted
        | Say::Text
        | Say::Image
        | Say::Reasoning
        | Say::CompletionResult
        | Say::UserFeedback
        | Say::UserFeedbackDiff
        | Say::CommandOutput
        | Say::ShellIntegrationWarning
        | Say::McpServerRequestStarted
        | Say::McpServerResponse
        | Say::SubtaskResult
        | Say::CheckpointSaved
        | Say::RooignoreError
        | Say::DiffError
        | Say::CondenseContext
        | Say::CondenseContextError
        | Say::SlidingWindowTruncation
        | Say::CodebaseSearchResult
        | Say::UserEditTodos
        | Say::TooManyToolsWarning
        | Say::BrowserActionResult
        | Say::BrowserSessionStatus
        | Say::Task
        | Say::ErrorRetry
        | Say::ShellIntegrationWarningWithSuggestion
        | Say::McpNotification
        | Say::DeletedApiReqs
        | Say::ClineignoreError
        | Say::CommandPermissionDenied
        | Say::CheckpointCreated
        | Say::LoadMcpDocumentation
        | Say::GenerateExplanation
        | Say::Info
        | Say::TaskProgress
        | Say::HookStatus
        | Say::HookOutputStream
        | Say::Subagent
        | Say::UseSubagents
        | Say::SubagentUsage
        | Say::ConditionalRulesApplied
        | Say::InspectSiteResult
        | Say::NewTaskStarted
        | Say::NewTask
        | Say::ApiCost
        | Say::TaskCompleted
        | Say::Other(_) => None,
    }
}

/// `ContextCondense`, carried by `say:"condense_context"`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ContextCondense {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_context_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prev_context_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condense_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `ContextTruncation`, carried by `say:"sliding_window_truncation"`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ContextTruncation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_removed: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prev_context_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_context_tokens: Option<f64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One record of `ui_messages.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClineMessage {
    /// Milliseconds since the epoch; the message's identity.
    pub ts: Option<i64>,
    pub kind: MessageKind,
    pub text: Option<String>,
    pub images: Option<Vec<String>>,
    pub partial: Option<bool>,
    pub reasoning: Option<String>,
    pub conversation_history_index: Option<i64>,
    pub checkpoint: Option<Value>,
    pub progress_status: Option<Value>,
    pub context_condense: Option<ContextCondense>,
    pub context_truncation: Option<ContextTruncation>,
    pub is_protected: Option<bool>,
    pub api_protocol: Option<String>,
    pub is_answered: Option<bool>,
    /// Fields this version does not model (Cline's `modelInfo`, old `metadata.gpt5`, …), verbatim.
    pub extra: Map<String, Value>,
}

impl ClineMessage {
    pub fn ask(&self) -> Option<&Ask> {
        match &self.kind {
            MessageKind::Ask(a) => Some(a),
            _ => None,
        }
    }

    pub fn say(&self) -> Option<&Say> {
        match &self.kind {
            MessageKind::Say(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_ask(&self, ask: &Ask) -> bool {
        self.ask() == Some(ask)
    }

    pub fn is_say(&self, say: &Say) -> bool {
        self.say() == Some(say)
    }

    /// The message's text if it is non-blank.
    pub fn text_nonblank(&self) -> Option<&str> {
        self.text.as_deref().filter(|t| !t.trim().is_empty())
    }

    /// Build from one array element, reporting problems at `path`.
    pub fn from_object(map: Map<String, Value>, path: &str, diags: &mut Diags) -> Self {
        let mut f = Fields::new(map, path, diags);
        let ts = f.i64("ts");
        let kind_raw = f.string("type");
        let kind = match kind_raw.as_deref() {
            Some("ask") => match f.string("ask") {
                Some(a) => MessageKind::Ask(Ask::parse(&a)),
                None => MessageKind::Other(kind_raw.clone()),
            },
            Some("say") => match f.string("say") {
                Some(s) => MessageKind::Say(Say::parse(&s)),
                None => MessageKind::Other(kind_raw.clone()),
            },
            _ => MessageKind::Other(kind_raw.clone()),
        };
        let text = f.string("text");
        let images = f.strings("images");
        let partial = f.bool("partial");
        let reasoning = f.string("reasoning");
        let conversation_history_index = f.i64("conversationHistoryIndex");
        let checkpoint = f.value("checkpoint");
        let progress_status = f.value("progressStatus");
        let context_condense = f.object("contextCondense").map(|m| {
            let p = format!("{}.contextCondense", f.path());
            condense_from(m, &p, f.diags())
        });
        let context_truncation = f.object("contextTruncation").map(|m| {
            let p = format!("{}.contextTruncation", f.path());
            truncation_from(m, &p, f.diags())
        });
        let is_protected = f.bool("isProtected");
        let api_protocol = f.string("apiProtocol");
        let is_answered = f.bool("isAnswered");
        let path_owned = f.path().to_owned();
        match &kind {
            MessageKind::Other(None) if ts.is_some() => f.diags().push(
                format!("{path_owned}.type"),
                DiagCode::InvalidField,
                Severity::Warning,
                "the message has no `type` (expected \"ask\" or \"say\")",
            ),
            MessageKind::Other(Some(t)) if t == "ask" || t == "say" => f.diags().push(
                format!("{path_owned}.{t}"),
                DiagCode::InvalidField,
                Severity::Warning,
                format!("a `{t}` message has no `{t}` value"),
            ),
            _ => {}
        }
        let extra = f.finish();
        ClineMessage {
            ts,
            kind,
            text,
            images,
            partial,
            reasoning,
            conversation_history_index,
            checkpoint,
            progress_status,
            context_condense,
            context_truncation,
            is_protected,
            api_protocol,
            is_answered,
            extra,
        }
    }
}

impl ClineMessage {
    /// Read one record from its JSON text: the fast strict path when the record is well formed,
    /// else the tolerant path with diagnostics at `path`. `None` for `null` and non-objects
    /// (reported).
    pub fn from_json(raw: &str, path: &str, diags: &mut Diags) -> Option<Self> {
        if let Some(m) = strict::read_whole(raw) {
            return Some(m);
        }
        match crate::json::value_from_text(raw, path, diags) {
            Some(Value::Object(map)) => Some(Self::from_object(map, path, diags)),
            _ => None,
        }
    }
}

fn condense_from(map: Map<String, Value>, path: &str, diags: &mut Diags) -> ContextCondense {
    let mut f = Fields::new(map, path, diags);
    ContextCondense {
        summary: f.string("summary"),
        cost: f.f64("cost"),
        new_context_tokens: f.f64("newContextTokens"),
        prev_context_tokens: f.f64("prevContextTokens"),
        condense_id: f.string("condenseId"),
        extra: f.finish(),
    }
}

fn truncation_from(map: Map<String, Value>, path: &str, diags: &mut Diags) -> ContextTruncation {
    let mut f = Fields::new(map, path, diags);
    ContextTruncation {
        truncation_id: f.string("truncationId"),
        messages_removed: f.f64("messagesRemoved"),
        prev_context_tokens: f.f64("prevContextTokens"),
        new_context_tokens: f.f64("newContextTokens"),
        extra: f.finish(),
    }
}

/// Serialises in the extension's key order (`ts,type,ask|say,text,…`), unknown fields last.
impl Serialize for ClineMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(ts) = self.ts {
            m.serialize_entry("ts", &ts)?;
        }
        match &self.kind {
            MessageKind::Ask(a) => {
                m.serialize_entry("type", "ask")?;
                m.serialize_entry("ask", a)?;
            }
            MessageKind::Say(v) => {
                m.serialize_entry("type", "say")?;
                m.serialize_entry("say", v)?;
            }
            MessageKind::Other(Some(t)) => m.serialize_entry("type", t)?,
            MessageKind::Other(None) => {}
        }
        macro_rules! opt {
            ($key:literal, $field:expr) => {
                if let Some(v) = &$field {
                    m.serialize_entry($key, v)?;
                }
            };
        }
        opt!("text", self.text);
        opt!("images", self.images);
        opt!("partial", self.partial);
        opt!("reasoning", self.reasoning);
        opt!("conversationHistoryIndex", self.conversation_history_index);
        opt!("checkpoint", self.checkpoint);
        opt!("contextCondense", self.context_condense);
        opt!("contextTruncation", self.context_truncation);
        opt!("isProtected", self.is_protected);
        opt!("apiProtocol", self.api_protocol);
        opt!("progressStatus", self.progress_status);
        opt!("isAnswered", self.is_answered);
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// A record in a shape the extension never wrote (`{type:"user", content}`, `{role, content}`,
/// `{author, text}`), as hand-made or converted files hold them, read as a plain message.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignMessage {
    /// `user` or `assistant`.
    pub role: &'static str,
    pub text: String,
    pub ts: Option<i64>,
}

fn foreign_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("text").and_then(Value::as_str).map(str::to_owned),
        Value::Array(items) => {
            let parts: Vec<&str> = items
                .iter()
                .filter_map(|b| b.as_str().or_else(|| b.get("text").and_then(Value::as_str)))
                .collect();
            (!parts.is_empty()).then(|| parts.join("\n\n"))
        }
        _ => None,
    }
}

impl ClineMessage {
    /// This record read as a plain message when it is not in the extension's shape.
    pub fn foreign_message(&self) -> Option<ForeignMessage> {
        let MessageKind::Other(kind) = &self.kind else {
            return None;
        };
        let who = kind
            .as_deref()
            .or_else(|| self.extra.get("role").and_then(Value::as_str))
            .or_else(|| self.extra.get("author").and_then(Value::as_str))?;
        let role = match who {
            "user" | "human" => "user",
            "assistant" | "agent" | "ai" => "assistant",
            _ => return None,
        };
        let text = self
            .text
            .clone()
            .or_else(|| self.extra.get("content").and_then(foreign_text))?;
        let ts = self.ts.or_else(|| match self.extra.get("timestamp") {
            Some(Value::Number(n)) => n.as_i64(),
            Some(Value::String(s)) => crate::text::parse_iso_ms(s),
            _ => None,
        });
        Some(ForeignMessage { role, text, ts })
    }
}

/// A retired or unknown `ask`/`say` value of a message: `(field, value, retired)`.
pub(crate) fn unusual_kind(msg: &ClineMessage) -> Option<(&'static str, &str, bool)> {
    match &msg.kind {
        MessageKind::Ask(a) if a.is_retired() || a.is_unknown() => {
            Some(("ask", a.as_str(), a.is_retired()))
        }
        MessageKind::Say(s) if s.is_retired() || s.is_unknown() => {
            Some(("say", s.as_str(), s.is_retired()))
        }
        _ => None,
    }
}
