//! `summarizeConversation`: the request sent for a summary, the summary message and the tags it
//! leaves, the error keys, and the rules of older releases behind [`Era`].

use crate::era::{Era, SummaryShape};
use crate::history::{
    blocks_of, extract_command_blocks, get_messages_since_last_summary,
    inject_synthetic_tool_results, maybe_remove_image_blocks, transform_messages_for_condensing,
};
use crate::js::{
    content_blocks, is_type, now_ms, num_value, number, str_field, text_block, with_key,
};
use crate::provider::{CancelToken, ProviderError, StreamChunk, SummaryProvider, SummaryRequest};
use roo_js::{stringify, truthy};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// System prompt of the summary request. The extension's own wording is not reproduced; this one
/// keeps the statements its tests look for (the opening sentence and the two `CRITICAL:` lines).
/// Callers that need the extension's exact text pass it as `summaryPrompt`.
pub const SUMMARY_PROMPT: &str = "You are a helpful AI assistant tasked with summarizing conversations.

CRITICAL: This is a summarization-only request. Reply with the summary as plain text and call no tool, whatever tools are listed.
CRITICAL: This summarization request is a SYSTEM OPERATION started by the agent, not a message from the user. Do not continue the work or answer questions from the conversation; only describe it.";

/// Default user instruction of the summary request (the `CONDENSE` support prompt).
pub const CONDENSE_PROMPT: &str = "Your task is to create a detailed summary of the conversation so far, so that the work can go on from the summary alone.

Write these sections:
1. Request and intent: what the user asked for, in full, including every explicit requirement.
2. Technical context: languages, frameworks, tools, conventions and decisions that matter.
3. Files and code: every file read, created or changed, why it matters, and the key snippets.
4. Problems and fixes: errors met, how they were solved, and what is still failing.
5. Work in progress: exactly what was being done when the summary was requested.
6. Pending tasks: what remains, in order.
7. Next step: the immediate next action, quoting the latest instructions verbatim where it helps.

Be precise and complete; the original messages will not be available.";

/// The user message of the summary request before v3.43 (the instructions were the system prompt).
pub const LEGACY_FINAL_REQUEST: &str =
    "Summarize the conversation so far, as described in the prompt instructions.";

/// Heading of the summary text block (v3.43+).
pub const SUMMARY_HEADING: &str = "## Conversation Summary\n";

/// Text of the synthetic reasoning block of v3.37 – v3.42 summaries.
pub const CONDENSE_REASONING_TEXT: &str =
    "Condensing conversation context. The summary below captures the key information from the prior conversation.";

/// Number of trailing messages kept out of the summary before v3.43.
pub const N_MESSAGES_TO_KEEP: usize = 3;

/// The extension's condensing errors (`common:errors.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum CondenseErrorKey {
    CondenseNotEnoughMessages,
    CondensedRecently,
    CondenseHandlerInvalid,
    CondenseApiFailed,
    CondenseFailed,
    CondenseContextGrew,
}

impl CondenseErrorKey {
    /// The i18n key, e.g. `condensed_recently`.
    pub fn key(self) -> &'static str {
        match self {
            Self::CondenseNotEnoughMessages => "condense_not_enough_messages",
            Self::CondensedRecently => "condensed_recently",
            Self::CondenseHandlerInvalid => "condense_handler_invalid",
            Self::CondenseApiFailed => "condense_api_failed",
            Self::CondenseFailed => "condense_failed",
            Self::CondenseContextGrew => "condense_context_grew",
        }
    }

    /// The English text the extension stores (`detail` fills `{{message}}`).
    pub fn message(self, detail: &str) -> String {
        match self {
            Self::CondenseNotEnoughMessages => "Not enough messages to condense context".into(),
            Self::CondensedRecently => {
                "Context was condensed recently; skipping this attempt".into()
            }
            Self::CondenseHandlerInvalid => "API handler for condensing context is invalid".into(),
            Self::CondenseApiFailed => format!("Condensing API call failed: {detail}"),
            Self::CondenseFailed => "Failed to condense context".into(),
            Self::CondenseContextGrew => {
                "Context size increased during condensing; skipping this attempt".into()
            }
        }
    }
}

/// The call was cancelled before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the operation was cancelled")]
pub struct Cancelled;

/// Inputs of `summarizeConversation(options)`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SummarizeOptions {
    /// The full stored history.
    pub messages: Vec<Value>,
    /// The task's system prompt (only counted).
    pub system_prompt: String,
    pub task_id: String,
    pub is_automatic_trigger: bool,
    pub custom_condensing_prompt: Option<String>,
    /// `{tools, tool_choice, parallelToolCalls}`, passed to the provider and counted.
    pub metadata: Option<Value>,
    pub environment_details: Option<String>,
    /// Folded file context, already rendered, one `<system-reminder>` section per entry.
    pub folded_file_context: Vec<String>,
    /// Context size before condensing (the "context grew" check of v3.19 – v3.42).
    pub prev_context_tokens: Option<f64>,
    /// Replaces [`SUMMARY_PROMPT`] as the system prompt of the request (v3.43+).
    pub summary_prompt: Option<String>,
    /// Whose rules to follow (default: today's).
    pub era: Era,
}

/// `SummarizeResponse`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct SummarizeResponse {
    #[cfg_attr(feature = "ts", ts(type = "Array<ApiMessage>"))]
    pub messages: Vec<Value>,
    pub summary: String,
    pub cost: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_context_tokens: Option<f64>,
    /// The English error text, as the extension shows and stores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_key: Option<CondenseErrorKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_details: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condense_id: Option<String>,
}

impl SummarizeResponse {
    fn unchanged(messages: &[Value]) -> Self {
        Self {
            messages: messages.to_vec(),
            ..Self::default()
        }
    }

    fn fail(mut self, key: CondenseErrorKey, detail: &str) -> Self {
        self.error = Some(key.message(detail));
        self.error_key = Some(key);
        self
    }
}

fn is_summary(m: &Value) -> bool {
    truthy(m.get("isSummary"))
}

fn request_message(m: &Value) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), m.get("role").cloned().unwrap_or(Value::Null));
    out.insert(
        "content".into(),
        m.get("content").cloned().unwrap_or(Value::Null),
    );
    Value::Object(out)
}

fn user_text(text: &str) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), Value::String("user".into()));
    m.insert("content".into(), Value::String(text.into()));
    Value::Object(m)
}

fn custom_prompt(opts: &SummarizeOptions) -> Option<&str> {
    opts.custom_condensing_prompt
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

struct Streamed {
    summary: String,
    cost: f64,
    output_tokens: f64,
    error: Option<ProviderError>,
}

async fn stream(
    provider: &dyn SummaryProvider,
    request: &SummaryRequest,
    cancel: &CancelToken,
) -> Result<Streamed, Cancelled> {
    let mut summary = String::new();
    let mut cost = 0.0;
    let mut output_tokens = 0.0;
    let result = {
        let mut sink = |chunk: StreamChunk| match chunk {
            StreamChunk::Text { text } => summary.push_str(&text),
            StreamChunk::Usage {
                total_cost,
                output_tokens: out,
                ..
            } => {
                cost = total_cost.unwrap_or(0.0);
                output_tokens = out;
            }
        };
        tokio::select! {
            r = provider.create_message(request, &mut sink, cancel) => r,
            _ = cancel.cancelled() => Err(ProviderError::Cancelled),
        }
    };
    if cancel.is_cancelled() || result == Err(ProviderError::Cancelled) {
        return Err(Cancelled);
    }
    Ok(Streamed {
        summary,
        cost,
        output_tokens,
        error: result.err(),
    })
}

fn tools_of(metadata: Option<&Value>) -> Option<&Vec<Value>> {
    metadata
        .and_then(|m| m.get("tools"))
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty())
}

/// `summarizeConversation(options)` with `provider` as the API handler.
pub async fn summarize_conversation(
    opts: &SummarizeOptions,
    provider: &dyn SummaryProvider,
    cancel: &CancelToken,
) -> Result<SummarizeResponse, Cancelled> {
    if !opts.era.fresh_start() {
        return summarize_keep_last(opts, provider, cancel).await;
    }
    let messages = &opts.messages;
    let resp = SummarizeResponse::unchanged(messages);
    let to_sum = get_messages_since_last_summary(messages, opts.era);
    if to_sum.len() <= 1 {
        let key = if messages.len() <= 1 {
            CondenseErrorKey::CondenseNotEnoughMessages
        } else {
            CondenseErrorKey::CondensedRecently
        };
        return Ok(resp.fail(key, ""));
    }
    if to_sum.len() <= 2 && to_sum.iter().any(is_summary) {
        return Ok(resp.fail(CondenseErrorKey::CondensedRecently, ""));
    }
    let instructions = custom_prompt(opts).unwrap_or(CONDENSE_PROMPT);
    let mut req = inject_synthetic_tool_results(&to_sum);
    req.push(user_text(instructions));
    let req = maybe_remove_image_blocks(&req, provider.supports_images());
    let req = transform_messages_for_condensing(&req);
    let request = SummaryRequest {
        system_prompt: opts
            .summary_prompt
            .clone()
            .unwrap_or_else(|| SUMMARY_PROMPT.into()),
        messages: req.iter().map(request_message).collect(),
        metadata: opts.metadata.clone(),
    };
    if !provider.is_valid() {
        return Ok(resp.fail(CondenseErrorKey::CondenseHandlerInvalid, ""));
    }
    let streamed = stream(provider, &request, cancel).await?;
    if let Some(failed) = stream_failure(resp, &streamed) {
        return Ok(failed);
    }
    let summary = streamed.summary.trim().to_owned();

    let mut content = vec![text_block(&format!("{SUMMARY_HEADING}{summary}"))];
    let commands = extract_command_blocks(messages.first());
    if !commands.is_empty() {
        content.push(text_block(&format!(
            "<system-reminder>\n## Active Workflows\nThe following directives must be maintained across all future condensings:\n{commands}\n</system-reminder>"
        )));
    }
    let asked = provider.folded_file_context().await;
    for section in asked.as_ref().unwrap_or(&opts.folded_file_context) {
        content.push(text_block(section));
    }
    if opts.is_automatic_trigger {
        if let Some(env) = opts
            .environment_details
            .as_deref()
            .filter(|e| !e.trim().is_empty())
        {
            content.push(text_block(env));
        }
    }
    let condense_id = uuid::Uuid::new_v4().to_string();
    let last_ts = messages
        .last()
        .and_then(|m| number(m.get("ts")))
        .unwrap_or_else(now_ms);
    let mut summary_msg = Map::new();
    summary_msg.insert("role".into(), Value::String("user".into()));
    summary_msg.insert("content".into(), Value::Array(content.clone()));
    summary_msg.insert("ts".into(), num_value(last_ts + 1.0));
    summary_msg.insert("isSummary".into(), Value::Bool(true));
    summary_msg.insert("condenseId".into(), Value::String(condense_id.clone()));
    let mut new_messages: Vec<Value> = messages
        .iter()
        .map(|m| tag_condensed(m, &condense_id))
        .collect();
    new_messages.push(Value::Object(summary_msg));

    let mut counted = vec![text_block(&opts.system_prompt)];
    counted.extend(content);
    let mut new_tokens = provider.count_tokens(&counted).await;
    if let Some(tools) = tools_of(opts.metadata.as_ref()) {
        let tools_text = stringify(&Value::Array(tools.clone()));
        new_tokens += provider.count_tokens(&[text_block(&tools_text)]).await;
    }
    Ok(SummarizeResponse {
        messages: new_messages,
        summary,
        cost: streamed.cost,
        new_context_tokens: Some(new_tokens),
        condense_id: Some(condense_id),
        ..SummarizeResponse::default()
    })
}

fn tag_condensed(m: &Value, id: &str) -> Value {
    if truthy(m.get("condenseParent")) {
        m.clone()
    } else {
        with_key(m, "condenseParent", Value::String(id.to_owned()))
    }
}

fn has_tool_results(m: &Value) -> bool {
    str_field(m, "role") == Some("user")
        && m.get("content")
            .and_then(Value::as_array)
            .is_some_and(|b| b.iter().any(|b| is_type(b, "tool_result")))
}

/// v3.17 – v3.42: keep the last three messages, summarise what is before them.
async fn summarize_keep_last(
    opts: &SummarizeOptions,
    provider: &dyn SummaryProvider,
    cancel: &CancelToken,
) -> Result<SummarizeResponse, Cancelled> {
    let messages = &opts.messages;
    let era = opts.era;
    let resp = SummarizeResponse::unchanged(messages);
    let keep_start = messages.len().saturating_sub(N_MESSAGES_TO_KEEP);
    let keep = &messages[keep_start..];
    let to_sum = keep_last_to_summarize(messages, keep_start, era);
    if to_sum.len() <= 1 {
        let key = if messages.len() <= N_MESSAGES_TO_KEEP + 1 {
            CondenseErrorKey::CondenseNotEnoughMessages
        } else {
            CondenseErrorKey::CondensedRecently
        };
        return Ok(resp.fail(key, ""));
    }
    if keep.iter().any(is_summary) {
        return Ok(resp.fail(CondenseErrorKey::CondensedRecently, ""));
    }
    let request = keep_last_request(opts, &to_sum, provider);
    if !provider.is_valid() {
        return Ok(resp.fail(CondenseErrorKey::CondenseHandlerInvalid, ""));
    }
    let streamed = stream(provider, &request, cancel).await?;
    if let Some(failed) = stream_failure(resp, &streamed) {
        return Ok(failed);
    }
    let summary = streamed.summary.trim().to_owned();
    let first_kept_ts = keep.first().and_then(|m| number(m.get("ts")));
    let (summary_msg, condense_id) = keep_last_summary_message(era, &summary, first_kept_ts);
    let new_messages = keep_last_history(
        messages,
        keep_start,
        era.summary_shape(),
        condense_id.as_deref(),
        &summary_msg,
    );
    let new_tokens =
        keep_last_context_tokens(opts, provider, streamed.output_tokens, &summary_msg, keep).await;
    if era.context_grew_check() {
        if let Some(prev) = opts.prev_context_tokens {
            if new_tokens >= prev {
                let mut r = SummarizeResponse::unchanged(messages)
                    .fail(CondenseErrorKey::CondenseContextGrew, "");
                r.cost = streamed.cost;
                return Ok(r);
            }
        }
    }
    Ok(SummarizeResponse {
        messages: new_messages,
        summary,
        cost: streamed.cost,
        new_context_tokens: Some(new_tokens),
        condense_id,
        ..SummarizeResponse::default()
    })
}

/// The response of a summary call that failed, or whose summary is empty (with the call's cost);
/// `None` when there is a summary.
fn stream_failure(resp: SummarizeResponse, streamed: &Streamed) -> Option<SummarizeResponse> {
    if let Some(err) = &streamed.error {
        let detail = err.to_string();
        let mut r = resp.fail(CondenseErrorKey::CondenseApiFailed, &detail);
        r.cost = streamed.cost;
        r.error_details = Some(detail);
        return Some(r);
    }
    if streamed.summary.trim().is_empty() {
        let mut r = resp.fail(CondenseErrorKey::CondenseFailed, "");
        r.cost = streamed.cost;
        return Some(r);
    }
    None
}

/// The messages v3.17 – v3.42 summarise: those since the last summary before the kept ones, and
/// in the eras that keep tool results with their calls, the first kept message when it holds
/// tool results.
fn keep_last_to_summarize(messages: &[Value], keep_start: usize, era: Era) -> Vec<Value> {
    let keep = &messages[keep_start..];
    let mut to_sum = get_messages_since_last_summary(&messages[..keep_start], era);
    if era.keeps_tool_results_with_their_calls() {
        if let Some(first_kept) = keep.first().filter(|m| has_tool_results(m)) {
            to_sum.push(first_kept.clone());
        }
    }
    to_sum
}

/// The summary request of v3.17 – v3.42: the messages to summarise (role and content) and the
/// final request as the last user message; the custom prompt (else `summaryPrompt`, else the
/// condense prompt) as the system prompt.
fn keep_last_request(
    opts: &SummarizeOptions,
    to_sum: &[Value],
    provider: &dyn SummaryProvider,
) -> SummaryRequest {
    let mut req: Vec<Value> = to_sum.iter().map(request_message).collect();
    req.push(user_text(LEGACY_FINAL_REQUEST));
    let req = maybe_remove_image_blocks(&req, provider.supports_images());
    SummaryRequest {
        system_prompt: custom_prompt(opts)
            .map(str::to_owned)
            .or_else(|| opts.summary_prompt.clone())
            .unwrap_or_else(|| CONDENSE_PROMPT.into()),
        messages: req,
        metadata: None,
    }
}

/// The assistant's summary message in the era's shape, and its condense id when the shape tags
/// messages. Tagged summaries are content blocks (after a reasoning block in the eras that add
/// one) dated 1 ms before the first kept message; the others are plain text dated at it (now,
/// without one).
fn keep_last_summary_message(
    era: Era,
    summary: &str,
    first_kept_ts: Option<f64>,
) -> (Value, Option<String>) {
    let shape = era.summary_shape();
    let mut summary_msg = Map::new();
    summary_msg.insert("role".into(), Value::String("assistant".into()));
    let mut condense_id = None;
    match shape {
        SummaryShape::Tagged => {
            let mut content = Vec::new();
            if era.summary_reasoning_block() {
                let mut r = Map::new();
                r.insert("type".into(), Value::String("reasoning".into()));
                r.insert("text".into(), Value::String(CONDENSE_REASONING_TEXT.into()));
                content.push(Value::Object(r));
            }
            content.push(text_block(summary));
            summary_msg.insert("content".into(), Value::Array(content));
            let ts = first_kept_ts.unwrap_or_else(now_ms) - 1.0;
            summary_msg.insert("ts".into(), num_value(ts));
        }
        _ => {
            summary_msg.insert("content".into(), Value::String(summary.to_owned()));
            let ts = first_kept_ts.unwrap_or_else(now_ms);
            summary_msg.insert("ts".into(), num_value(ts));
        }
    }
    summary_msg.insert("isSummary".into(), Value::Bool(true));
    if shape == SummaryShape::Tagged {
        let id = uuid::Uuid::new_v4().to_string();
        summary_msg.insert("condenseId".into(), Value::String(id.clone()));
        condense_id = Some(id);
    }
    (Value::Object(summary_msg), condense_id)
}

/// The history after a v3.17 – v3.42 condense: what the shape keeps of the messages before the
/// kept ones (all; the first; or the first and the rest tagged with `condense_id`), the summary,
/// then the kept messages.
fn keep_last_history(
    messages: &[Value],
    keep_start: usize,
    shape: SummaryShape,
    condense_id: Option<&str>,
    summary_msg: &Value,
) -> Vec<Value> {
    let mut new_messages = Vec::with_capacity(messages.len() + 1);
    match shape {
        SummaryShape::Inserted => {
            new_messages.extend_from_slice(&messages[..keep_start]);
        }
        SummaryShape::Destructive => {
            new_messages.extend(messages.first().cloned());
        }
        SummaryShape::Tagged | SummaryShape::FreshStart => {
            new_messages.extend(messages.first().cloned());
            let id = condense_id.unwrap_or_default();
            new_messages.extend(
                messages[1.min(keep_start)..keep_start]
                    .iter()
                    .map(|m| tag_condensed(m, id)),
            );
        }
    }
    new_messages.push(summary_msg.clone());
    new_messages.extend_from_slice(&messages[keep_start..]);
    new_messages
}

/// The context size after a v3.17 – v3.42 condense: the summary's output tokens plus the system
/// prompt and kept messages counted, when the provider reported output tokens; else the system
/// prompt, the summary and the kept messages counted.
async fn keep_last_context_tokens(
    opts: &SummarizeOptions,
    provider: &dyn SummaryProvider,
    output_tokens: f64,
    summary_msg: &Value,
    keep: &[Value],
) -> f64 {
    let system = text_block(&opts.system_prompt);
    if output_tokens > 0.0 {
        let mut counted = vec![system];
        counted.extend(blocks_of(keep));
        output_tokens + provider.count_tokens(&counted).await
    } else {
        let mut counted = vec![system];
        counted.extend(content_blocks(summary_msg.get("content")));
        counted.extend(blocks_of(keep));
        provider.count_tokens(&counted).await
    }
}
