//! Text readers behind three compat modules: the legacy hierarchy engine's sub-task extractor
//! (`compat/utils/hierarchy-engine-instructions.js` reads the file through the caller's `fs` and
//! applies the engine's own replaceable steps), the trace-summary exporter's tool calls
//! (`compat/services/trace-summary/JsonCsvExporter.js` keeps its replaceable method, the cuts and
//! the JSON parse of MCP arguments), and the instruction index's splitter and similarity
//! (`compat/utils/task-instruction-index.js` keeps the caller's splitter when handed over, and
//! `calculateSimilarity` as a replaceable method).

use crate::error::{CodedError, ErrorCode};
use napi::Env;
use napi_derive::napi;
use roo_legacy::{engine_candidates, EngineError};

/// The candidates of one `ui_messages.json` text, in the order the engine pushes them (see
/// `roo_legacy::engine_candidates`). `INVALID_ARGUMENT` (`details.reason`: `not_json`, or
/// `null_record` with `details.index`) where the legacy extractor throws.
#[napi(catch_unwind, ts_return_type = "EngineCandidate[]")]
pub fn compat_engine_candidates<'e>(
    env: &'e Env,
    content: String,
) -> napi::Result<napi::Unknown<'e>> {
    match engine_candidates(&content) {
        Ok(list) => crate::to_js(env, &list),
        Err(e) => {
            let (message, details) = match e {
                EngineError::NotJson => (
                    "ui_messages.json is not JSON".to_owned(),
                    serde_json::json!({ "reason": "not_json" }),
                ),
                EngineError::NullRecord(i) => (
                    format!("record {i} of ui_messages.json is null"),
                    serde_json::json!({ "reason": "null_record", "index": i }),
                ),
            };
            Err(CodedError::new(ErrorCode::InvalidArgument, message)
                .with_details(details)
                .into_napi(env))
        }
    }
}

/// The tool calls the trace-summary exporter reads from one message's text
/// (`roo_legacy::trace_tool_calls`; `fixed`: the fixed mode's name pattern, which reads the path).
#[napi(catch_unwind, ts_return_type = "TraceToolCall[]")]
pub fn compat_trace_tool_calls<'e>(
    env: &'e Env,
    text: String,
    fixed: bool,
) -> napi::Result<napi::Unknown<'e>> {
    crate::to_js(env, &roo_legacy::trace_tool_calls(&text, fixed))
}

/// The sub-instructions of a parent task's text, as the legacy index's splitter cuts them
/// (`roo_legacy::sub_instructions`).
#[napi(catch_unwind)]
pub fn compat_sub_instructions(text: String) -> Vec<String> {
    roo_legacy::sub_instructions(&text)
}

/// The legacy index's word-overlap similarity of two texts, in `[0, 1]`
/// (`roo_legacy::instruction_similarity`).
#[napi(catch_unwind)]
pub fn compat_instruction_similarity(a: String, b: String) -> f64 {
    roo_legacy::instruction_similarity(&a, &b)
}
