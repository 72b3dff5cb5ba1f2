//! Extraction by types: tool calls, API requests and `newTask` instructions, from every era.
//!
//! The same `newTask` call is usually visible several times — the UI's `ask:"tool"` record, the
//! assistant's native `tool_use` (or AI-SDK `tool-call`, or XML `<new_task>` in text), and the
//! `[new_task in … mode: '…']` result header. Each kind of sighting is counted separately per
//! normalised message, and a message is a child as many times as the kind that saw it most: one
//! call seen in three places counts once, while two siblings given the same text count twice.

use crate::api::{ApiMessage, Block, Role};
use crate::api_head::{ApiHead, HeadBlock};
use crate::text;
use crate::ui::{ApiReqInfo, ClineMessage, MessageKind, Payload, Say, ToolCallKind, UnreadText};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

mod merge;
use merge::merge_sightings;

/// Where a `newTask` call was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ChildSource {
    /// `ask:"tool"` `{tool:"newTask",…}` in ui_messages.json.
    UiAsk,
    /// A streamed `newTask` ask left `partial:true`.
    UiPartialAsk,
    /// Native `tool_use` named `new_task` in the API history.
    ToolUse,
    /// AI-SDK `tool-call` named `new_task` (v2 wrapper).
    ToolCall,
    /// `<new_task>…</new_task>` in assistant text (XML-tool era).
    XmlText,
    /// `[new_task in X mode: '…']` result header in a user message.
    ResultHeader,
}

/// A subtask the task created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct NewTaskInstruction {
    /// When the call was made (ms): the UI ask's `ts`, else the API message's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
    /// Mode slug (`code`) when one was seen, else the display name (`💻 Code`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The message given to the child, as the parent wrote it.
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todos: Option<Value>,
    /// Every kind of record the call was seen in.
    pub sources: Vec<ChildSource>,
    /// The child's id when a record names it (`Delegated to child task <id>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub child_task_id: Option<String>,
    /// When the child's result came back to this task (`subtask_result`), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_ts: Option<i64>,
}

/// A tool the assistant asked to run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
    /// `readFile`, `newTask`, `execute_command`, `mcp:server/tool`, …
    pub name: String,
    /// `tool` or `command`.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `success`, `failure` or `in_progress`.
    pub status: &'static str,
}

/// One API request with its usage, after merging legacy `api_req_finished` records.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ApiRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
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
    pub protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancel_reason: Option<String>,
}

/// The most tokens of one kind one request may count: a thousand times the largest context window
/// there is. More is not a count to add up.
pub const MAX_TOKENS: f64 = 1e10;

/// The highest cost one request (or one condensation) may carry, in USD.
pub const MAX_COST: f64 = 1e6;

/// The token figures of a request, in the order [`figures_problem`] takes them.
const TOKEN_FIGURES: [&str; 4] = ["tokensIn", "tokensOut", "cacheWrites", "cacheReads"];

/// Why a request's figures cannot be believed (the first that cannot: negative, not finite, or
/// above [`MAX_TOKENS`] / [`MAX_COST`]), or `None`. `tokens`: in, out, cache writes, cache reads.
/// The one rule of the skeleton's totals and of the usage reports.
pub fn figures_problem(tokens: [f64; 4], cost: Option<f64>) -> Option<String> {
    for (name, v) in TOKEN_FIGURES.into_iter().zip(tokens) {
        if !(0.0..=MAX_TOKENS).contains(&v) {
            return Some(format!(
                "{name} is {}, not a count from 0 to {MAX_TOKENS:e}",
                figure(v)
            ));
        }
    }
    cost.and_then(cost_problem)
}

/// Why a cost cannot be believed (negative, not finite or above [`MAX_COST`]), or `None`.
pub fn cost_problem(cost: f64) -> Option<String> {
    (!(0.0..=MAX_COST).contains(&cost)).then(|| {
        format!(
            "its cost is {}, not an amount from 0 to {MAX_COST:e} USD",
            figure(cost)
        )
    })
}

/// A figure as a sentence says it: in full up to 15 digits, else in exponent form (`1e308`, not
/// 309 digits).
fn figure(v: f64) -> String {
    if v.is_finite() && v.abs() < 1e15 {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

impl ApiRequest {
    /// [`figures_problem`] of this request (a figure it does not give is 0).
    pub fn problem(&self) -> Option<String> {
        let tokens = [
            self.tokens_in,
            self.tokens_out,
            self.cache_writes,
            self.cache_reads,
        ];
        figures_problem(tokens.map(|t| t.unwrap_or(0.0)), self.cost)
    }
}

/// Sums over a task's API requests (and condense costs), in JS double arithmetic. A request or a
/// condensation whose figures cannot be believed ([`figures_problem`]) is counted as a request but
/// adds nothing; [`Extraction::refused`] says why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ApiTotals {
    pub requests: u32,
    pub tokens_in: f64,
    pub tokens_out: f64,
    pub cache_writes: f64,
    pub cache_reads: f64,
    pub total_cost: f64,
}

impl ApiTotals {
    fn add(&mut self, r: &ApiRequest) {
        self.requests += 1;
        self.tokens_in += r.tokens_in.unwrap_or(0.0);
        self.tokens_out += r.tokens_out.unwrap_or(0.0);
        self.cache_writes += r.cache_writes.unwrap_or(0.0);
        self.cache_reads += r.cache_reads.unwrap_or(0.0);
        self.total_cost += r.cost.unwrap_or(0.0);
    }
}

enum CostEntry {
    Request(usize),
    Condense(f64),
}

struct Sighting {
    ts: Option<i64>,
    mode: Option<String>,
    mode_is_slug: bool,
    message: String,
    todos: Option<Value>,
    source: ChildSource,
    child_task_id: Option<String>,
}

/// Incremental extractor: feed it UI messages and API messages (each in file order), then finish.
#[derive(Default)]
pub struct Extractor {
    sightings: Vec<Sighting>,
    tool_calls: Vec<ToolCall>,
    ui_tool_calls: usize,
    api_tool_calls: Vec<ToolCall>,
    requests: Vec<ApiRequest>,
    /// Costs in record order (requests and condense operations), summed in that order as the
    /// extension does, so the float total is the same to the last bit.
    cost_order: Vec<CostEntry>,
    subtask_results: Vec<i64>,
    last_ui_was_tool: Option<usize>,
    /// Child ids named by `Delegated to child task <id>` results, with the tool_use id they answer.
    delegations: Vec<(Option<String>, String)>,
    tool_use_ids: HashMap<String, usize>,
}

impl Extractor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed one UI message.
    pub fn ui(&mut self, msg: &ClineMessage) {
        self.ui_with_unread(msg, None)
    }

    /// [`Extractor::ui`] for a record whose text the reader stepped over (`msg.text` is `None`
    /// and `unread` holds it as it stands in the file): an API request's usage is read from it.
    pub fn ui_with_unread(&mut self, msg: &ClineMessage, unread: Option<UnreadText<'_>>) {
        let ts = msg.ts;
        if let Some(kind) = msg.kind.tool_call_kind() {
            self.ui_tool_call(msg, kind);
            return;
        }
        match &msg.kind {
            MessageKind::Say(Say::Error | Say::DiffError | Say::RooignoreError) => {
                // The tool call just before failed.
                if let Some(i) = self.last_ui_was_tool.take() {
                    if let Some(call) = self.tool_calls.get_mut(i) {
                        call.status = "failure";
                    }
                }
                return;
            }
            MessageKind::Say(Say::ApiReqStarted) => {
                let info = match (msg.text.as_deref(), unread) {
                    (Some(text), _) => ApiReqInfo::parse_usage(text),
                    (None, Some(unread)) => ApiReqInfo::usage_of_unread(&unread),
                    (None, None) => None,
                }
                .unwrap_or_default();
                self.cost_order
                    .push(CostEntry::Request(self.requests.len()));
                self.requests.push(request_from(ts, &info));
                return;
            }
            MessageKind::Say(Say::ApiReqFinished) => {
                self.api_req_finished(msg);
                return;
            }
            MessageKind::Say(Say::CondenseContext) => {
                if let Some(cost) = msg.context_condense.as_ref().and_then(|c| c.cost) {
                    self.cost_order.push(CostEntry::Condense(cost));
                }
            }
            MessageKind::Say(Say::SubtaskResult) => {
                if let Some(ts) = ts {
                    self.subtask_results.push(ts);
                }
            }
            _ => {}
        }
        if !msg.kind.is_tool_call()
            && !matches!(
                msg.kind,
                MessageKind::Say(Say::Reasoning | Say::ApiReqStarted | Say::CheckpointSaved)
            )
        {
            self.last_ui_was_tool = None;
        }
    }

    /// The call a UI record of tool-call kind `kind` holds.
    fn ui_tool_call(&mut self, msg: &ClineMessage, kind: ToolCallKind) {
        let ts = msg.ts;
        match kind {
            ToolCallKind::Tool => self.ui_tool(msg),
            ToolCallKind::Command => self.push_ui_tool(ToolCall {
                ts,
                name: "execute_command".into(),
                kind: "command",
                path: None,
                status: if msg.partial == Some(true) {
                    "in_progress"
                } else {
                    "success"
                },
            }),
            ToolCallKind::Mcp => self.push_ui_tool(ToolCall {
                ts,
                name: mcp_tool_name(msg),
                kind: "tool",
                path: None,
                status: "success",
            }),
            ToolCallKind::Browser => self.push_ui_tool(ToolCall {
                ts,
                name: "browser_action".into(),
                kind: "tool",
                path: None,
                status: "success",
            }),
        }
    }

    /// A tool call of the UI record: the call, and the subtask it starts when it is `newTask`.
    fn ui_tool(&mut self, msg: &ClineMessage) {
        let ts = msg.ts;
        let partial = msg.partial == Some(true);
        let Some(tool) = msg.tool_summary() else {
            self.push_ui_tool(ToolCall {
                ts,
                name: "unknown_tool".into(),
                kind: "tool",
                path: None,
                status: "in_progress",
            });
            return;
        };
        if let Some(content) = tool
            .new_task_content
            .as_deref()
            .filter(|c| !c.trim().is_empty())
        {
            self.sightings.push(Sighting {
                ts,
                mode_is_slug: partial,
                mode: tool.mode.clone(),
                message: content.to_owned(),
                todos: tool.todos.clone(),
                source: if partial {
                    ChildSource::UiPartialAsk
                } else {
                    ChildSource::UiAsk
                },
                child_task_id: None,
            });
        }
        self.push_ui_tool(ToolCall {
            ts,
            name: tool.tool,
            kind: "tool",
            path: tool.path,
            status: if partial { "in_progress" } else { "success" },
        });
    }

    /// The legacy `api_req_finished`: merged into the closest open request
    /// (`{...start, ...finish}`), or a request of its own when none is open.
    fn api_req_finished(&mut self, msg: &ClineMessage) {
        if let Some(info) = msg.text.as_deref().and_then(ApiReqInfo::parse_usage) {
            let finish = request_from(msg.ts, &info);
            match self.requests.last_mut() {
                Some(start) => merge_request(start, &finish),
                None => {
                    self.cost_order
                        .push(CostEntry::Request(self.requests.len()));
                    self.requests.push(finish);
                }
            }
        }
    }

    fn push_ui_tool(&mut self, call: ToolCall) {
        self.ui_tool_calls += 1;
        self.last_ui_was_tool = Some(self.tool_calls.len());
        self.tool_calls.push(call);
    }

    /// Feed one API history message.
    pub fn api(&mut self, msg: &ApiMessage) {
        let ts = msg.ts;
        let assistant = msg.is_role(&Role::Assistant);
        let user_like = msg.is_role(&Role::User) || msg.is_role(&Role::Tool);
        if assistant {
            for t in msg.texts() {
                self.xml_text(ts, t);
            }
        }
        for block in msg.blocks() {
            match &block.block {
                Block::ToolUse { id, name, input }
                | Block::ToolCall {
                    tool_call_id: id,
                    tool_name: name,
                    input,
                } => {
                    let source = if matches!(block.block, Block::ToolUse { .. }) {
                        ChildSource::ToolUse
                    } else {
                        ChildSource::ToolCall
                    };
                    if name == "new_task" || name == "newTask" {
                        self.new_task_call(ts, id.as_ref(), input, source);
                    }
                    self.api_tool_calls.push(ToolCall {
                        ts,
                        name: name.clone(),
                        kind: if name == "execute_command" {
                            "command"
                        } else {
                            "tool"
                        },
                        path: input.get("path").and_then(Value::as_str).map(str::to_owned),
                        status: "success",
                    });
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } if user_like => self.delegation(tool_use_id.as_ref(), content.as_ref()),
                Block::ToolResultPart {
                    tool_call_id,
                    output,
                    ..
                } if user_like => self.delegation(tool_call_id.as_ref(), output.as_ref()),
                _ => {}
            }
        }
        if user_like {
            for t in msg.texts() {
                self.result_header(ts, t);
            }
        }
    }

    /// Feed the head of one API history message ([`ApiHead`]): the same subtasks and delegations
    /// as [`Extractor::api`] on the whole message, texts decoded only when a marker may be in
    /// them. Tool calls are not recorded (a head has no sequence to show them in).
    pub fn api_head(&mut self, head: &ApiHead) {
        let ts = head.ts;
        let assistant = head.role == Some(Role::Assistant);
        let user_like = matches!(head.role, Some(Role::User | Role::Tool));
        if assistant {
            for t in &head.texts {
                if t.may_contain("<new_task>") {
                    t.with(|t| self.xml_text(ts, t));
                }
            }
        }
        for block in &head.blocks {
            match block {
                HeadBlock::NewTask { id, input, source } => {
                    self.new_task_call(ts, id.as_ref(), input, *source)
                }
                HeadBlock::Result { id, content } if user_like => {
                    self.delegation(id.as_ref(), Some(&content.get()))
                }
                HeadBlock::Result { .. } => {}
            }
        }
        if user_like {
            for t in &head.texts {
                if t.may_contain("[new_task in ") {
                    t.with(|t| self.result_header(ts, t));
                }
            }
        }
    }

    fn xml_text(&mut self, ts: Option<i64>, t: &str) {
        for call in text::xml_new_tasks(t) {
            self.sightings.push(Sighting {
                ts,
                mode: call.mode,
                mode_is_slug: true,
                message: call.message,
                todos: call.todos.map(Value::String),
                source: ChildSource::XmlText,
                child_task_id: None,
            });
        }
    }

    fn new_task_call(
        &mut self,
        ts: Option<i64>,
        id: Option<&String>,
        input: &Value,
        source: ChildSource,
    ) {
        let message = input
            .get("message")
            .or_else(|| input.get("content"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !message.trim().is_empty() {
            if let Some(id) = id {
                self.tool_use_ids.insert(id.clone(), self.sightings.len());
            }
            self.sightings.push(Sighting {
                ts,
                mode: input.get("mode").and_then(Value::as_str).map(str::to_owned),
                mode_is_slug: true,
                message: message.to_owned(),
                todos: input.get("todos").cloned(),
                source,
                child_task_id: None,
            });
        }
    }

    fn delegation(&mut self, id: Option<&String>, content: Option<&Value>) {
        if let Some(child) = delegated_in(content) {
            self.delegations.push((id.cloned(), child));
        }
    }

    fn result_header(&mut self, ts: Option<i64>, t: &str) {
        if let Some((mode, message)) = text::new_task_result_header(t) {
            if !message.trim().is_empty() {
                self.sightings.push(Sighting {
                    ts,
                    mode: Some(mode.to_owned()),
                    mode_is_slug: false,
                    message: message.to_owned(),
                    todos: None,
                    source: ChildSource::ResultHeader,
                    child_task_id: None,
                });
            }
        }
    }

    /// Finish: the distinct child instructions (never the task's own), tool calls, requests.
    pub fn finish(mut self, own_instruction: Option<&str>) -> Extraction {
        for (tool_use_id, child) in std::mem::take(&mut self.delegations) {
            let target = tool_use_id
                .as_ref()
                .and_then(|id| self.tool_use_ids.get(id).copied())
                .or_else(|| {
                    self.sightings.iter().rposition(|s| {
                        matches!(s.source, ChildSource::ToolUse | ChildSource::ToolCall)
                            && s.child_task_id.is_none()
                    })
                });
            if let Some(s) = target.and_then(|i| self.sightings.get_mut(i)) {
                s.child_task_id = Some(child);
            }
        }
        let own_key = own_instruction.map(text::normalize_instruction);
        let children = merge_sightings(self.sightings, own_key.as_deref(), &self.subtask_results);
        let tool_calls = if self.ui_tool_calls > 0 || self.api_tool_calls.is_empty() {
            self.tool_calls
        } else {
            self.api_tool_calls
        };
        let mut totals = ApiTotals::default();
        let mut refused = Vec::new();
        for entry in &self.cost_order {
            match entry {
                CostEntry::Request(i) => {
                    let Some(r) = self.requests.get(*i) else {
                        continue;
                    };
                    match r.problem() {
                        None => totals.add(r),
                        Some(why) => {
                            totals.requests += 1;
                            refused.push(format!(
                                "the request at {} was left out of the totals: {why}",
                                when(r.ts)
                            ));
                        }
                    }
                }
                CostEntry::Condense(cost) => match cost_problem(*cost) {
                    None => totals.total_cost += cost,
                    Some(why) => {
                        refused.push(format!("a condensation was left out of the totals: {why}"))
                    }
                },
            }
        }
        Extraction {
            children,
            tool_calls,
            requests: self.requests,
            totals,
            refused,
        }
    }
}

/// The child id of a `Delegated to child task <id>` result, without copying the result text
/// (tool results are often whole files).
/// The name an MCP call is listed under: `mcp:<server>/<tool>`, `mcp:<server>:<uri>`,
/// `mcp:<server>`, or `use_mcp_server` when the payload names no server.
fn mcp_tool_name(msg: &ClineMessage) -> String {
    match msg.payload() {
        Payload::McpServer(m) => match (m.server_name, m.tool_name, m.uri) {
            (Some(s), Some(t), _) => format!("mcp:{s}/{t}"),
            (Some(s), None, Some(u)) => format!("mcp:{s}:{u}"),
            (Some(s), None, None) => format!("mcp:{s}"),
            _ => "use_mcp_server".into(),
        },
        _ => "use_mcp_server".into(),
    }
}

fn delegated_in(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => text::delegated_child_id(s).map(str::to_owned),
        Value::Array(items) => items
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .find_map(text::delegated_child_id)
            .map(str::to_owned),
        Value::Object(o) => o
            .get("value")
            .and_then(Value::as_str)
            .and_then(text::delegated_child_id)
            .map(str::to_owned),
        _ => None,
    }
}

fn request_from(ts: Option<i64>, info: &ApiReqInfo) -> ApiRequest {
    ApiRequest {
        ts,
        tokens_in: info.tokens_in,
        tokens_out: info.tokens_out,
        cache_writes: info.cache_writes,
        cache_reads: info.cache_reads,
        cost: info.cost,
        protocol: info.api_protocol.clone(),
        cancel_reason: info.cancel_reason.clone(),
    }
}

fn merge_request(start: &mut ApiRequest, finish: &ApiRequest) {
    macro_rules! over {
        ($f:ident) => {
            if finish.$f.is_some() {
                start.$f = finish.$f.clone();
            }
        };
    }
    over!(tokens_in);
    over!(tokens_out);
    over!(cache_writes);
    over!(cache_reads);
    over!(cost);
    over!(protocol);
    over!(cancel_reason);
}

/// The slug of one of the extension's default modes from its display name (`💻 Code` → `code`);
/// other names (custom modes) are returned unchanged.
pub fn mode_slug(display: &str) -> String {
    let name = display
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim();
    let lower = name.to_lowercase();
    let lower = lower.strip_suffix(" mode").unwrap_or(&lower);
    match lower {
        "code" | "architect" | "ask" | "debug" | "orchestrator" => lower.to_owned(),
        _ => display.to_owned(),
    }
}

/// What [`Extractor::finish`] returns.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Extraction {
    pub children: Vec<NewTaskInstruction>,
    pub tool_calls: Vec<ToolCall>,
    pub requests: Vec<ApiRequest>,
    pub totals: ApiTotals,
    /// Why each request or condensation left out of `totals` was.
    pub refused: Vec<String>,
}

/// A request's time as a sentence says it (`ts 1749549600000`, or `an unknown time`).
fn when(ts: Option<i64>) -> String {
    match ts {
        Some(t) => format!("ts {t}"),
        None => "an unknown time".into(),
    }
}

/// Convenience over whole lists.
pub fn extract(
    ui: &[ClineMessage],
    api: &[ApiMessage],
    own_instruction: Option<&str>,
) -> Extraction {
    let mut x = Extractor::new();
    for m in ui {
        x.ui(m);
    }
    for m in api {
        x.api(m);
    }
    x.finish(own_instruction)
}

#[cfg(test)]
mod tool_call_tests {
    use super::*;
    use crate::diag::Diags;
    use crate::ui::Ask;
    use serde_json::{json, Value};

    fn message(kind: &str, value: &str) -> ClineMessage {
        let record = json!({"ts": 1, "type": kind, kind: value, "text": "{\"tool\":\"readFile\",\"path\":\"a.txt\"}"});
        let Value::Object(map) = record else {
            return ClineMessage::from_object(serde_json::Map::new(), "", &mut Diags::for_file(""));
        };
        ClineMessage::from_object(map, "", &mut Diags::for_file(""))
    }

    /// The skeleton counts a record as an action when `is_tool_call` says so, and takes the
    /// action's name from the extractor's calls by position: for every kind either both see a
    /// call or neither does.
    #[test]
    fn every_tool_call_kind_gives_the_extractor_one_call() {
        let kinds = Ask::ALL_TEXTS
            .iter()
            .map(|a| ("ask", *a))
            .chain(Say::ALL_TEXTS.iter().map(|s| ("say", *s)));
        let mut seen = 0;
        for (kind, value) in kinds {
            let msg = message(kind, value);
            let mut ex = Extractor::new();
            ex.ui(&msg);
            let calls = ex.finish(None).tool_calls.len();
            let expected = usize::from(msg.kind.is_tool_call());
            assert_eq!(calls, expected, "{kind}:{value}");
            seen += expected;
        }
        assert_eq!(seen, 9, "the tool-call kinds of asks and says");
    }
}
