//! Context management, condensation orchestration, cost and token accounting, with the rules of
//! the extension (Zoo Code 3.80 by default, Roo Code 3.52.1 and older releases through [`Era`]).
//!
//! Messages are JSON objects (`serde_json::Value`, key order kept) in the shapes the extension
//! stores; every function takes and returns them as they are, so results can be written back or
//! compared with the extension's own. Arithmetic is done in `f64` in the extension's order.
//!
//! The split follows the design note on condensation: [`CondensationManager`] holds configuration,
//! decides and falls back to truncation; a [`SummaryProvider`] only streams a summary (built in:
//! [`OpenAiCompatibleProvider`] over HTTP, [`ScriptedProvider`] for replays and tests; the N-API
//! binding adds one that calls a JavaScript API handler).

pub mod condense;
pub mod context;
pub mod cost;
pub mod era;
pub mod history;
pub mod js;
pub mod manager;
pub mod model;
pub mod openai;
pub mod provider;
pub mod replay;
pub mod store;
pub mod tokens;

pub use condense::{
    summarize_conversation, Cancelled, CondenseErrorKey, SummarizeOptions, SummarizeResponse,
};
pub use context::{
    allowed_tokens, allowed_tokens_in, context_percent, decide_context, effective_threshold,
    manage_context, will_manage_context, ContextAction, ContextDecision, ContextManagementResult,
    EffectiveThreshold, ManageContextOptions, WillManageContextOptions,
};
pub use cost::{
    calculate_api_cost_anthropic, calculate_api_cost_openai, get_api_metrics, ApiCostResult,
    ModelInfo, TokenUsage,
};
pub use era::Era;
pub use history::{
    cleanup_after_truncation, get_effective_api_history, get_messages_since_last_summary,
    truncate_conversation, TruncationResult,
};
pub use manager::{CondensationManager, CondenseSettings, ContextInput};
pub use openai::{OpenAiCompatibleConfig, OpenAiCompatibleProvider};
pub use provider::{
    CancelToken, NoProvider, ProviderError, ScriptedProvider, StreamChunk, SummaryProvider,
    SummaryRequest,
};
pub use replay::{api_protocol, calculate_api_cost_for_protocol, era_of_records};
pub use tokens::{count_tokens, tiktoken};
