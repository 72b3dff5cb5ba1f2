//! The JSON payloads some messages carry in `text`: tool calls, API requests and their usage,
//! follow-up questions, MCP server uses.

use super::*;
use std::borrow::Cow;

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
        if let Some(info) = usage_by_cursor(text) {
            return Some(info);
        }
        Self::parse_usage_by_serde(text)
    }

    /// [`ApiReqInfo::parse_usage`] of a text the reader stepped over: read where it stands in
    /// the file when the quick read takes it, else decoded first. Either way the same as
    /// `parse_usage` of the decoded text.
    pub fn usage_of_unread(text: &UnreadText<'_>) -> Option<Self> {
        if let Some(info) = usage_in_literal(text) {
            return Some(info);
        }
        Self::parse_usage(&text.decode()?)
    }

    fn parse_usage_by_serde(text: &str) -> Option<Self> {
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

/// [`ApiReqInfo::parse_usage`]'s quick read by the JSON cursor: `None` when the cursor does not
/// take the text (the serde read then decides), else exactly what the serde read gives.
fn usage_by_cursor(text: &str) -> Option<ApiReqInfo> {
    usage_from_members(crate::json_cursor::peek_members(text, USAGE_MEMBERS)?)
}

/// The usage members of an `api_req_*` object, in the order of [`usage_from_members`].
const USAGE_MEMBERS: [&str; 7] = [
    "tokensIn",
    "tokensOut",
    "cacheWrites",
    "cacheReads",
    "cost",
    "apiProtocol",
    "cancelReason",
];

/// An [`ApiReqInfo`] of usage from the JSON texts of its members (as serde reads them); `None`
/// when one is of another type.
fn usage_from_members(members: [Option<&str>; 7]) -> Option<ApiReqInfo> {
    use crate::json_cursor::{opt_f64, opt_text};
    let [tokens_in, tokens_out, cache_writes, cache_reads, cost, api_protocol, cancel_reason] =
        members;
    Some(ApiReqInfo {
        tokens_in: opt_f64(tokens_in)?,
        tokens_out: opt_f64(tokens_out)?,
        cache_writes: opt_f64(cache_writes)?,
        cache_reads: opt_f64(cache_reads)?,
        cost: opt_f64(cost)?,
        api_protocol: opt_text(api_protocol)?.map(Cow::into_owned),
        cancel_reason: opt_text(cancel_reason)?.map(Cow::into_owned),
        ..ApiReqInfo::default()
    })
}

/// [`usage_by_cursor`] on a text still escaped in its literal (`crate::escaped_json`).
fn usage_in_literal(text: &UnreadText<'_>) -> Option<ApiReqInfo> {
    let members = crate::escaped_json::peek_members(
        text.literal(),
        text.has_unicode_escape(),
        USAGE_MEMBERS,
    )?;
    usage_from_members(std::array::from_fn(|i| members[i].as_deref()))
}

/// The fields of a tool payload a summary reads, as literals or decoded names.
struct ToolFields<'a> {
    tool: Option<Cow<'a, str>>,
    path: Option<Cow<'a, str>>,
    mode: Option<Cow<'a, str>>,
    content: Option<&'a str>,
    todos: Option<&'a str>,
}

impl<'a> ToolFields<'a> {
    /// Read by the JSON cursor; `None` when it does not take the text.
    fn by_cursor(text: &'a str) -> Option<Self> {
        use crate::json_cursor::{opt_text, peek_members};
        let [tool, path, mode, content, todos] =
            peek_members(text, ["tool", "path", "mode", "content", "todos"])?;
        Some(ToolFields {
            tool: opt_text(tool)?,
            path: opt_text(path)?,
            mode: opt_text(mode)?,
            content: content.filter(|raw| *raw != "null"),
            todos: todos.filter(|raw| *raw != "null"),
        })
    }

    /// Read by serde; `None` when it refuses the text.
    fn by_serde(text: &'a str) -> Option<Self> {
        let peek = serde_json::from_str::<ToolPeek>(text).ok()?;
        Some(ToolFields {
            tool: peek.tool,
            path: peek.path,
            mode: peek.mode,
            content: peek.content.map(|raw| raw.get()),
            todos: peek.todos.map(|raw| raw.get()),
        })
    }

    fn summary(self) -> Option<ToolSummary> {
        let tool = self.tool?.into_owned();
        let is_new_task = tool == "newTask" || tool == "new_task";
        let new_task_content = if is_new_task {
            self.content
                .and_then(|raw| serde_json::from_str::<String>(raw).ok())
        } else {
            None
        };
        let todos = if is_new_task {
            self.todos
                .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
        } else {
            None
        };
        Some(ToolSummary {
            tool,
            path: self.path.map(Cow::into_owned),
            mode: self.mode.map(Cow::into_owned),
            new_task_content,
            todos,
        })
    }
}

impl ClineMessage {
    /// The tool summary of an `ask:"tool"` / `say:"tool"` message.
    pub fn tool_summary(&self) -> Option<ToolSummary> {
        let text = self.text.as_deref()?;
        if let Some(fields) = ToolFields::by_cursor(text).or_else(|| ToolFields::by_serde(text)) {
            return fields.summary();
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

#[cfg(test)]
mod peek_tests {
    use super::*;
    use proptest::prelude::*;

    /// A member value of any kind, with the numbers and strings serde reads in its own way.
    fn arb_value() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("0".to_owned()),
            Just("-0".to_owned()),
            Just("-0.0".to_owned()),
            Just("12".to_owned()),
            Just("-7".to_owned()),
            Just("18446744073709551616".to_owned()),
            Just("-9223372036854775809".to_owned()),
            Just("9007199254740993".to_owned()),
            Just("0.1".to_owned()),
            Just("2.5e-3".to_owned()),
            Just("1E400".to_owned()),
            Just("\"newTask\"".to_owned()),
            Just("\"new_task\"".to_owned()),
            Just("\"readFile\"".to_owned()),
            Just("\"anthropic\"".to_owned()),
            Just(r#""a\"b\\c\n\u00e9""#.to_owned()),
            Just(r#""\ud83d\ude00""#.to_owned()),
            Just(r#""\ud800""#.to_owned()),
            Just("[1,{\"a\":[null]}]".to_owned()),
            Just("{\"content\":\"x\"}".to_owned()),
            Just("[[[[[[[[[[]]]]]]]]]]".to_owned()),
            "[a-z ]{0,12}".prop_map(|s| format!("\"{s}\"")),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| format!("{f:e}")),
            any::<i64>().prop_map(|i| i.to_string()),
        ]
    }

    fn arb_name() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("tokensIn"),
            Just("tokensOut"),
            Just("cacheWrites"),
            Just("cacheReads"),
            Just("cost"),
            Just("apiProtocol"),
            Just("cancelReason"),
            Just("request"),
            Just("tool"),
            Just("path"),
            Just("mode"),
            Just("content"),
            Just("todos"),
            Just("other"),
            Just("tokens\\u0049n"),
        ]
        .prop_map(str::to_owned)
    }

    /// Objects of such members (names may repeat), sometimes damaged or not objects at all.
    fn arb_payload() -> impl Strategy<Value = String> {
        let object = proptest::collection::vec((arb_name(), arb_value()), 0..8).prop_map(|m| {
            let members: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", members.join(","))
        });
        (object, 0u8..8).prop_map(|(o, damage)| match damage {
            0 => format!("{o} x"),
            1 => format!("[{o}]"),
            2 => o[..o.len() / 2].to_owned(),
            3 => format!(" {o}\n"),
            _ => o,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// What the cursor reads of a usage payload is what serde reads, to the sign of a zero.
        #[test]
        fn usage_by_cursor_is_serdes(text in arb_payload()) {
            if let Some(ours) = usage_by_cursor(&text) {
                let theirs = ApiReqInfo::parse_usage_by_serde(&text);
                prop_assert_eq!(format!("{:?}", Some(ours)), format!("{theirs:?}"), "{}", text);
            }
        }

        /// What the cursor reads of a tool payload makes the summary serde's reading makes.
        #[test]
        fn tool_fields_by_cursor_are_serdes(text in arb_payload()) {
            if let Some(ours) = ToolFields::by_cursor(&text) {
                let theirs = ToolFields::by_serde(&text);
                prop_assert!(theirs.is_some(), "serde refused what the cursor took: {}", text);
                let theirs = theirs.and_then(ToolFields::summary);
                prop_assert_eq!(format!("{:?}", ours.summary()), format!("{theirs:?}"), "{}", text);
            }
        }
    }

    /// A member value for an inner usage object, as JSON text: with quotes, backslashes, control
    /// characters and non-ASCII in strings, numbers of every form, nested values.
    fn arb_inner_value() -> impl Strategy<Value = String> {
        prop_oneof![
            arb_value(),
            "[a-z\"\\\\/\n\t\u{1}\u{1b}é€😀<> ]{0,40}"
                .prop_map(|s| serde_json::to_string(&s).expect("serialise")),
            Just(r#""\u00e9\ud83d\ude00 \/ \b\f""#.to_owned()),
            // Runs of backslashes before quotes and letters, of every length.
            proptest::collection::vec(
                prop_oneof![Just("\\"), Just("\""), Just("n"), Just("/"), Just("\n")],
                0..12
            )
            .prop_map(|p| serde_json::to_string(&p.concat()).expect("serialise")),
            Just(r#"{"a":["\"x\\",{"b":null}],"c":-1.5e3}"#.to_owned()),
        ]
    }

    /// Inner usage texts: objects of such members, sometimes pretty-printed or damaged (a raw
    /// control character in a string, a bad escape, cut short, not an object).
    fn arb_inner_text() -> impl Strategy<Value = String> {
        let object =
            proptest::collection::vec((arb_name(), arb_inner_value()), 0..7).prop_map(|m| {
                let members: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", members.join(","))
            });
        (object, 0u8..12).prop_map(|(o, damage)| match damage {
            0 => o.replacen("\\n", "\n", 1),
            1 => o.replacen("\\\"", "\\x", 1),
            2 => o.chars().take(o.chars().count() / 2).collect(),
            3 => format!("[{o}]"),
            4 => format!(" {o} \n"),
            5 => o.replace(',', ",\n  ").replace(':', ": "),
            6 => o.replacen("\\u00e9", "\\u00g9", 1),
            7 => o.replacen("\\", "\\\\\\", 1),
            _ => o,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// Usage read from a text still escaped in its literal is usage read from the decoded
        /// text, to the sign of a zero, whatever the inner text holds.
        #[test]
        fn usage_in_the_literal_is_usage_of_the_text(inner in arb_inner_text()) {
            let literal = serde_json::to_string(&inner).expect("serialise");
            let unread = UnreadText::scanned(&literal).expect("a literal");
            let want = format!("{:?}", ApiReqInfo::parse_usage(&inner));
            prop_assert_eq!(format!("{:?}", ApiReqInfo::usage_of_unread(&unread)), want.clone(), "{}", literal);
            let quick = usage_in_literal(&unread);
            if let Some(quick) = &quick {
                prop_assert_eq!(format!("{:?}", Some(quick)), want, "{}", literal);
            }
            // And it reads in place every text the cursor reads once decoded, but those with a
            // `\u` escape in the literal or an escaped member name, which it leaves to decoding.
            if usage_by_cursor(&inner).is_some()
                && !unread.has_unicode_escape()
                && !inner.contains("\\u0049")
            {
                prop_assert!(quick.is_some(), "refused {}", literal);
            }
        }
    }

    /// The payloads the extension writes are taken by the cursor (else the quick read would
    /// silently never run).
    #[test]
    fn the_usual_payloads_are_read_by_the_cursor() {
        let usage = r#"{"request":"<task>\nfix it\n</task>","tokensIn":12,"tokensOut":340,"cacheWrites":0,"cacheReads":9012,"cost":0.0123,"apiProtocol":"anthropic"}"#;
        let info = usage_by_cursor(usage).expect("usage read by the cursor");
        let literal = serde_json::to_string(usage).expect("serialise");
        let unread = UnreadText::scanned(&literal).expect("a literal");
        let in_literal = usage_in_literal(&unread).expect("usage read in the literal");
        assert_eq!(format!("{in_literal:?}"), format!("{info:?}"));
        assert_eq!(info.tokens_out, Some(340.0));
        assert_eq!(info.api_protocol.as_deref(), Some("anthropic"));
        let tool =
            r#"{"tool":"newTask","mode":"💻 Code","content":"Implement \"x\"\n","todos":[]}"#;
        let summary = ToolFields::by_cursor(tool)
            .expect("tool read by the cursor")
            .summary()
            .expect("summary");
        assert_eq!(
            summary.new_task_content.as_deref(),
            Some("Implement \"x\"\n")
        );
        assert_eq!(summary.mode.as_deref(), Some("💻 Code"));
    }
}
