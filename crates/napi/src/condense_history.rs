//! The conversation-history functions of the extension (truncation, the effective history,
//! summaries, merges, synthetic tool results, text of tool blocks) under its names; the rules live
//! in `roo-condense`'s `history` module. Beside `condense.rs`, which has the helpers they share.

use crate::condense::{era_of, messages, parse};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde::Deserialize;
use serde_json::Value;

/// `truncateConversation(messages, fracToRemove, taskId)`: hides messages behind a marker.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ApiMessage[], fracToRemove: number, taskId?: string, options?: EraOptions",
    ts_return_type = "TruncationResult"
)]
pub fn truncate_conversation<'env>(
    env: &'env Env,
    messages_in: Value,
    frac_to_remove: f64,
    task_id: Option<String>,
    options: Option<Value>,
) -> napi::Result<Unknown<'env>> {
    let _ = task_id;
    let era = era_of(options)?;
    crate::to_js(
        env,
        &roo_condense::truncate_conversation(
            &messages("messages", messages_in)?,
            frac_to_remove,
            era,
        ),
    )
}

/// `getEffectiveApiHistory(messages)`: what the model is sent.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ApiMessage[], options?: EraOptions",
    ts_return_type = "ApiMessage[]"
)]
pub fn get_effective_api_history(
    messages_in: Value,
    options: Option<Value>,
) -> napi::Result<Vec<Value>> {
    let era = era_of(options)?;
    Ok(roo_condense::get_effective_api_history(
        &messages("messages", messages_in)?,
        era,
    ))
}

/// `cleanupAfterTruncation(messages)`: drops tags whose summary or marker is gone.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ApiMessage[]",
    ts_return_type = "ApiMessage[]"
)]
pub fn cleanup_after_truncation(messages_in: Value) -> napi::Result<Vec<Value>> {
    Ok(roo_condense::cleanup_after_truncation(&messages(
        "messages",
        messages_in,
    )?))
}

/// `getMessagesSinceLastSummary(messages)`.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ApiMessage[], options?: EraOptions",
    ts_return_type = "ApiMessage[]"
)]
pub fn get_messages_since_last_summary(
    messages_in: Value,
    options: Option<Value>,
) -> napi::Result<Vec<Value>> {
    let era = era_of(options)?;
    Ok(roo_condense::get_messages_since_last_summary(
        &messages("messages", messages_in)?,
        era,
    ))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MergeOptions {
    roles: Option<Vec<String>>,
}

/// `mergeConsecutiveApiMessages(messages, {roles})` (default roles: `["user"]`).
#[napi(
    catch_unwind,
    ts_args_type = "messages: ApiMessage[], options?: { roles?: Array<'user' | 'assistant'> }",
    ts_return_type = "ApiMessage[]"
)]
pub fn merge_consecutive_api_messages(
    messages_in: Value,
    options: Option<Value>,
) -> napi::Result<Vec<Value>> {
    let o: MergeOptions = match options {
        Some(v) if !v.is_null() => parse("options", v)?,
        _ => MergeOptions::default(),
    };
    let roles = o.roles.unwrap_or_else(|| vec!["user".into()]);
    let roles: Vec<&str> = roles.iter().map(String::as_str).collect();
    Ok(roo_condense::history::merge_consecutive_api_messages(
        &messages("messages", messages_in)?,
        &roles,
    ))
}

/// `injectSyntheticToolResults(messages)`.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ApiMessage[]",
    ts_return_type = "ApiMessage[]"
)]
pub fn inject_synthetic_tool_results(messages_in: Value) -> napi::Result<Vec<Value>> {
    Ok(roo_condense::history::inject_synthetic_tool_results(
        &messages("messages", messages_in)?,
    ))
}

/// `transformMessagesForCondensing(messages)`: tool blocks as text.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ApiMessage[]",
    ts_return_type = "ApiMessage[]"
)]
pub fn transform_messages_for_condensing(messages_in: Value) -> napi::Result<Vec<Value>> {
    Ok(roo_condense::history::transform_messages_for_condensing(
        &messages("messages", messages_in)?,
    ))
}

/// `toolUseToText(block)`.
#[napi(catch_unwind, ts_args_type = "block: ContentBlock")]
pub fn tool_use_to_text(block: Value) -> String {
    roo_condense::history::tool_use_to_text(&block)
}

/// `toolResultToText(block)`.
#[napi(catch_unwind, ts_args_type = "block: ContentBlock")]
pub fn tool_result_to_text(block: Value) -> String {
    roo_condense::history::tool_result_to_text(&block)
}

/// `extractCommandBlocks(message)`.
#[napi(catch_unwind, ts_args_type = "message: ApiMessage | undefined")]
pub fn extract_command_blocks(message: Option<Value>) -> String {
    roo_condense::history::extract_command_blocks(message.as_ref())
}
