//! `ui_messages.json` (and its older name `claude_messages.json`): the `ClineMessage` records the
//! extension shows in its chat view, and the JSON payloads some of them carry in `text`.

use crate::diag::{DiagCode, Diags, Severity};
use crate::fields::{open_enum, Fields};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

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

impl MessageKind {
    /// A message that records one tool call: an approval asked (`ask:"tool"`, `"command"`,
    /// `"use_mcp_server"`, `"browser_action_launch"`) or a call made without asking (the `say`
    /// twins Cline writes for auto-approved calls, and `say:"browser_action"` steps).
    pub fn is_tool_call(&self) -> bool {
        matches!(
            self,
            MessageKind::Ask(
                Ask::Tool | Ask::Command | Ask::UseMcpServer | Ask::BrowserActionLaunch
            ) | MessageKind::Say(
                Say::Tool
                    | Say::Command
                    | Say::UseMcpServer
                    | Say::BrowserActionLaunch
                    | Say::BrowserAction
            )
        )
    }
}

/// `ContextCondense`, carried by `say:"condense_context"`.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
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

/// Strict reading of one well-formed record straight from its JSON text, without building a
/// generic value first. Anything unusual (a field of the wrong type, a missing `ask`/`say`, a
/// nested object that needs a diagnostic) makes it give up, and the caller falls back to
/// [`ClineMessage::from_object`], which yields the same message plus the diagnostics.
pub(crate) struct Strict(pub(crate) ClineMessage);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a ClineMessage object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
        use serde::de::Error;
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
        let mut kind: Option<String> = None;
        let mut ask: Option<String> = None;
        let mut say: Option<String> = None;
        let mut condense: Option<Value> = None;
        let mut truncation: Option<Value> = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "ts" => m.ts = map.next_value()?,
                "type" => kind = map.next_value()?,
                "ask" => ask = map.next_value()?,
                "say" => say = map.next_value()?,
                "text" => m.text = map.next_value()?,
                "images" => m.images = map.next_value()?,
                "partial" => m.partial = map.next_value()?,
                "reasoning" => m.reasoning = map.next_value()?,
                "conversationHistoryIndex" => m.conversation_history_index = map.next_value()?,
                "checkpoint" => {
                    m.checkpoint = map.next_value::<Option<Value>>()?.filter(|v| !v.is_null())
                }
                "progressStatus" => {
                    m.progress_status = map.next_value::<Option<Value>>()?.filter(|v| !v.is_null())
                }
                "contextCondense" => condense = map.next_value()?,
                "contextTruncation" => truncation = map.next_value()?,
                "isProtected" => m.is_protected = map.next_value()?,
                "apiProtocol" => m.api_protocol = map.next_value()?,
                "isAnswered" => m.is_answered = map.next_value()?,
                other => {
                    let value: Value = map.next_value()?;
                    m.extra.insert(other.to_owned(), value);
                }
            }
        }
        m.kind = match (kind.as_deref(), ask, say) {
            (Some("ask"), Some(a), None) => MessageKind::Ask(Ask::parse(&a)),
            (Some("say"), None, Some(v)) => MessageKind::Say(Say::parse(&v)),
            _ => return Err(A::Error::custom("not a plain ask/say record")),
        };
        let mut sink = Diags::for_file("");
        m.context_condense = match condense {
            None => None,
            Some(Value::Object(o)) => Some(condense_from(o, "", &mut sink)),
            Some(_) => return Err(A::Error::custom("contextCondense is not an object")),
        };
        m.context_truncation = match truncation {
            None => None,
            Some(Value::Object(o)) => Some(truncation_from(o, "", &mut sink)),
            Some(_) => return Err(A::Error::custom("contextTruncation is not an object")),
        };
        if !sink.is_empty() {
            return Err(A::Error::custom("a nested field needs a diagnostic"));
        }
        Ok(Strict(m))
    }
}

impl ClineMessage {
    /// Read one record from its JSON text: the fast strict path when the record is well formed,
    /// else the tolerant path with diagnostics at `path`. `None` for `null` and non-objects
    /// (reported).
    pub fn from_json(raw: &str, path: &str, diags: &mut Diags) -> Option<Self> {
        if let Ok(Strict(m)) = serde_json::from_str::<Strict>(raw) {
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

// ---------------------------------------------------------------------------------------------
// Payloads carried in `text`
// ---------------------------------------------------------------------------------------------

/// `ClineSayTool`: the JSON of `ask:"tool"` / `say:"tool"` (and `user_feedback_diff`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SayTool {
    /// `newTask`, `readFile`, `appliedDiff`, … (kept as written; old files have retired names).
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// For `newTask` the raw message; for file tools the content, a diff or a path; an object for
    /// `codebaseSearch` results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
    /// For `newTask` the mode display name (final) or slug (partial); for `switchMode` the slug.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// `newTask` / `updateTodoList`: an array of TodoItem, or raw markdown in partial records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todos: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SayTool {
    pub fn content_str(&self) -> Option<&str> {
        self.content.as_ref().and_then(Value::as_str)
    }

    pub fn is_new_task(&self) -> bool {
        matches!(self.tool.as_str(), "newTask" | "new_task")
    }
}

/// `ClineApiReqInfo`: the JSON of `say:"api_req_started"` (and legacy `api_req_finished`,
/// `api_req_deleted`).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ApiReqInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_in: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_out: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_writes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_reads: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming_failed_message: Option<String>,
    /// `anthropic` or `openai`; absent before v3.23.7.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_protocol: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a summary needs of a tool payload: read without copying the rest of it (file contents,
/// diffs), falling back to the full tolerant parse when the quick read does not fit.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSummary {
    pub tool: String,
    pub path: Option<String>,
    pub mode: Option<String>,
    /// The message of a `newTask` call (only read for that tool).
    pub new_task_content: Option<String>,
    /// `todos` of a `newTask` call.
    pub todos: Option<Value>,
}

#[derive(serde::Deserialize)]
struct ToolPeek<'a> {
    #[serde(borrow)]
    tool: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    path: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    mode: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    content: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    todos: Option<&'a serde_json::value::RawValue>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsagePeek<'a> {
    tokens_in: Option<f64>,
    tokens_out: Option<f64>,
    cache_writes: Option<f64>,
    cache_reads: Option<f64>,
    cost: Option<f64>,
    #[serde(borrow)]
    api_protocol: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    cancel_reason: Option<std::borrow::Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct RequestPeek<'a> {
    #[serde(borrow)]
    request: Option<std::borrow::Cow<'a, str>>,
}

impl ApiReqInfo {
    /// `request` of an `api_req_*` text, without building the rest: the same as
    /// `ApiReqInfo::parse(text).and_then(|r| r.request)`.
    pub fn parse_request(text: &str) -> Option<String> {
        match serde_json::from_str::<RequestPeek>(text) {
            // Skipped fields are not depth-limited as a `Value` is: deep texts take the full path.
            Ok(p)
                if text.trim_start().starts_with('{') && crate::json::max_nesting(text) <= 100 =>
            {
                p.request.map(|c| c.into_owned())
            }
            _ => ApiReqInfo::parse(text).and_then(|r| r.request),
        }
    }

    /// The usage fields of an `api_req_*` text, without copying the (often large) `request`.
    /// `request`, `streamingFailedMessage` and unknown fields are left empty.
    pub fn parse_usage(text: &str) -> Option<Self> {
        match serde_json::from_str::<UsagePeek>(text) {
            Ok(p) => Some(ApiReqInfo {
                tokens_in: p.tokens_in,
                tokens_out: p.tokens_out,
                cache_writes: p.cache_writes,
                cache_reads: p.cache_reads,
                cost: p.cost,
                api_protocol: p.api_protocol.map(|c| c.into_owned()),
                cancel_reason: p.cancel_reason.map(|c| c.into_owned()),
                ..ApiReqInfo::default()
            }),
            Err(_) => ApiReqInfo::parse(text).map(|mut full| {
                full.request = None;
                full
            }),
        }
    }
}

impl ClineMessage {
    /// The tool summary of an `ask:"tool"` / `say:"tool"` message.
    pub fn tool_summary(&self) -> Option<ToolSummary> {
        let text = self.text.as_deref()?;
        if let Ok(peek) = serde_json::from_str::<ToolPeek>(text) {
            let tool = peek.tool?.into_owned();
            let is_new_task = tool == "newTask" || tool == "new_task";
            let new_task_content = if is_new_task {
                peek.content
                    .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
            } else {
                None
            };
            let todos = if is_new_task {
                peek.todos
                    .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
            } else {
                None
            };
            return Some(ToolSummary {
                tool,
                path: peek.path.map(|c| c.into_owned()),
                mode: peek.mode.map(|c| c.into_owned()),
                new_task_content,
                todos,
            });
        }
        match self.payload() {
            Payload::Tool(t) => {
                let is_new_task = t.is_new_task();
                Some(ToolSummary {
                    new_task_content: if is_new_task {
                        t.content_str().map(str::to_owned)
                    } else {
                        None
                    },
                    todos: if is_new_task { t.todos.clone() } else { None },
                    tool: t.tool,
                    path: t.path,
                    mode: t.mode,
                })
            }
            _ => None,
        }
    }
}

/// One suggested answer of a follow-up question.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    pub answer: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// `ask:"followup"`: `{question, suggest}` (≥ ~v3.10) or the bare question.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FollowUp {
    pub question: String,
    pub suggest: Vec<Suggestion>,
}

/// `ask:"use_mcp_server"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerUse {
    /// `use_mcp_tool` or `access_mcp_resource`.
    #[serde(rename = "type")]
    pub kind: String,
    pub server_name: Option<String>,
    pub tool_name: Option<String>,
    /// A JSON string of the arguments (or the arguments as the model gave them, in partials).
    pub arguments: Option<Value>,
    pub uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
}

/// What a message's `text` carries, by `ask`/`say`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Payload {
    /// No text, or a kind whose text is plain.
    None,
    Tool(SayTool),
    ApiRequest(ApiReqInfo),
    FollowUp(FollowUp),
    McpServer(McpServerUse),
    /// The text should hold JSON but does not (streaming partials, aborted writes).
    Invalid {
        error: String,
    },
}

fn parse_object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Err(_) if text.contains("\\u") => {
            // JSON nested in `text` can carry the same unpaired surrogate escapes as the file.
            let mut bytes = text.as_bytes().to_vec();
            let mut sink = Diags::for_file("");
            crate::decode::sanitize_surrogate_escapes(&mut bytes, &mut sink);
            match String::from_utf8(bytes) {
                Ok(repaired) => parse_object_once(&repaired),
                Err(e) => Err(e.to_string()),
            }
        }
        other => object_of(other),
    }
}

fn parse_object_once(text: &str) -> Result<Map<String, Value>, String> {
    object_of(serde_json::from_str::<Value>(text))
}

fn object_of(parsed: serde_json::Result<Value>) -> Result<Map<String, Value>, String> {
    match parsed {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(format!(
            "expected a JSON object, found {}",
            crate::json::kind_of(&other)
        )),
        Err(e) => Err(e.to_string()),
    }
}

impl SayTool {
    pub fn from_object(map: Map<String, Value>, path: &str, diags: &mut Diags) -> Option<Self> {
        let mut f = Fields::new(map, path, diags);
        let tool = f.string("tool")?;
        Some(SayTool {
            tool,
            path: f.string("path"),
            content: f.value("content"),
            mode: f.string("mode"),
            todos: f.value("todos"),
            reason: f.string("reason"),
            diff: f.string("diff"),
            command: f.string("command"),
            extra: f.finish(),
        })
    }
}

impl ApiReqInfo {
    pub fn from_object(map: Map<String, Value>, path: &str, diags: &mut Diags) -> Self {
        let mut f = Fields::new(map, path, diags);
        ApiReqInfo {
            request: f.string("request"),
            tokens_in: f.f64("tokensIn"),
            tokens_out: f.f64("tokensOut"),
            cache_writes: f.f64("cacheWrites"),
            cache_reads: f.f64("cacheReads"),
            cost: f.f64("cost"),
            cancel_reason: f.string("cancelReason"),
            streaming_failed_message: f.string("streamingFailedMessage"),
            api_protocol: f.string("apiProtocol"),
            extra: f.finish(),
        }
    }

    /// Parse an `api_req_*` text; `None` when it is not a JSON object.
    pub fn parse(text: &str) -> Option<Self> {
        let map = parse_object(text).ok()?;
        let mut sink = Diags::for_file("");
        Some(Self::from_object(map, "", &mut sink))
    }
}

impl ClineMessage {
    /// Parse the JSON carried in `text`, by kind. Never panics; bad JSON gives `Payload::Invalid`.
    pub fn payload(&self) -> Payload {
        let mut sink = Diags::for_file("");
        self.payload_with(&mut sink)
    }

    /// As [`ClineMessage::payload`], reporting field problems into `diags`.
    pub fn payload_with(&self, diags: &mut Diags) -> Payload {
        let Some(text) = self.text.as_deref() else {
            return Payload::None;
        };
        let json_kind = match &self.kind {
            MessageKind::Ask(Ask::Tool)
            | MessageKind::Say(Say::Tool)
            | MessageKind::Say(Say::UserFeedbackDiff) => 1,
            MessageKind::Say(Say::ApiReqStarted | Say::ApiReqFinished | Say::ApiReqDeleted) => 2,
            MessageKind::Ask(Ask::Followup) => 3,
            MessageKind::Ask(Ask::UseMcpServer) => 4,
            _ => 0,
        };
        if json_kind == 0 || text.is_empty() {
            return Payload::None;
        }
        if json_kind == 3 && !text.trim_start().starts_with('{') {
            // Old follow-ups (and streaming partials) hold the bare question.
            return Payload::FollowUp(FollowUp {
                question: text.to_owned(),
                suggest: Vec::new(),
            });
        }
        let map = match parse_object(text) {
            Ok(m) => m,
            Err(error) => return Payload::Invalid { error },
        };
        match json_kind {
            1 => match SayTool::from_object(map, "text", diags) {
                Some(t) => Payload::Tool(t),
                None => Payload::Invalid {
                    error: "the tool payload has no `tool` name".into(),
                },
            },
            2 => Payload::ApiRequest(ApiReqInfo::from_object(map, "text", diags)),
            3 => {
                let mut f = Fields::new(map, "text", diags);
                let question = f.string("question").unwrap_or_default();
                let suggest = match f.value("suggest") {
                    Some(Value::Array(items)) => items
                        .into_iter()
                        .filter_map(|item| match item {
                            Value::String(answer) => Some(Suggestion { answer, mode: None }),
                            Value::Object(mut o) => {
                                let answer = o.shift_remove("answer")?.as_str()?.to_owned();
                                let mode = o
                                    .shift_remove("mode")
                                    .and_then(|m| m.as_str().map(str::to_owned));
                                Some(Suggestion { answer, mode })
                            }
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                Payload::FollowUp(FollowUp { question, suggest })
            }
            _ => {
                let mut f = Fields::new(map, "text", diags);
                Payload::McpServer(McpServerUse {
                    kind: f.string("type").unwrap_or_default(),
                    server_name: f.string("serverName"),
                    tool_name: f.string("toolName"),
                    arguments: f.value("arguments"),
                    uri: f.string("uri"),
                    response: f.string("response"),
                })
            }
        }
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
