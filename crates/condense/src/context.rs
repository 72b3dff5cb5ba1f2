//! Context management: the effective threshold, the trigger rule, the decision (nothing, summarise,
//! truncate) and `manageContext`, which carries the decision out with a provider.

use crate::condense::{summarize_conversation, Cancelled, CondenseErrorKey, SummarizeOptions};
use crate::era::Era;
use crate::history::{truncate_conversation, TruncationResult};
use crate::js::{content_blocks, text_block};
use crate::model::ANTHROPIC_DEFAULT_MAX_TOKENS;
use crate::provider::{CancelToken, SummaryProvider};
use crate::tokens;
use roo_js::truthy;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Share of the context window kept free.
pub const TOKEN_BUFFER_PERCENTAGE: f64 = 0.1;
/// Lowest valid per-profile threshold (percent, inclusive).
pub const MIN_CONDENSE_THRESHOLD: f64 = 5.0;
/// Highest valid per-profile threshold (percent, inclusive).
pub const MAX_CONDENSE_THRESHOLD: f64 = 100.0;
/// Threshold used when a provider reports that the context window was exceeded.
pub const FORCED_CONTEXT_REDUCTION_PERCENT: f64 = 75.0;
/// Share of the visible messages that truncation hides.
pub const TRUNCATION_FRACTION: f64 = 0.5;

/// Where the effective threshold came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ThresholdSource {
    /// No threshold for the profile: the global one.
    Global,
    /// The profile's own threshold.
    Profile,
    /// The profile says -1: inherit the global one.
    Inherited,
    /// The profile's threshold is outside 5..=100 (or not a number): the global one, with a warning.
    InvalidProfile,
}

/// The threshold that applies and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct EffectiveThreshold {
    pub threshold: f64,
    pub source: ThresholdSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// Resolve `profileThresholds[profileId]` against the global `autoCondenseContextPercent`.
pub fn effective_threshold(
    global_percent: f64,
    profile_thresholds: &Map<String, Value>,
    profile_id: &str,
) -> EffectiveThreshold {
    let global = |source, warning| EffectiveThreshold {
        threshold: global_percent,
        source,
        warning,
    };
    match profile_thresholds.get(profile_id) {
        None => global(ThresholdSource::Global, None),
        Some(v) => match v.as_f64() {
            Some(-1.0) => global(ThresholdSource::Inherited, None),
            Some(p) if (MIN_CONDENSE_THRESHOLD..=MAX_CONDENSE_THRESHOLD).contains(&p) => {
                EffectiveThreshold {
                    threshold: p,
                    source: ThresholdSource::Profile,
                    warning: None,
                }
            }
            _ => global(
                ThresholdSource::InvalidProfile,
                Some(format!(
                    "Invalid profile threshold {} for profile \"{profile_id}\" (must be -1 or between {MIN_CONDENSE_THRESHOLD} and {MAX_CONDENSE_THRESHOLD}); using the global threshold {}",
                    roo_js::to_string(v),
                    roo_js::number_to_string(global_percent)
                )),
            ),
        },
    }
}

/// `contextWindow × (1 − 0.1) − reserve`, by today's rule ([`allowed_tokens_in`]).
pub fn allowed_tokens(context_window: f64, max_tokens: Option<f64>) -> f64 {
    allowed_tokens_in(context_window, max_tokens, Era::HEAD)
}

/// `contextWindow × (1 − 0.1) − reserve`: the reserve is `maxTokens` when above zero, else 8 192
/// (3.66+); before 3.66 any non-zero `maxTokens` was reserved as it is (`maxTokens || 8192`), so
/// a reported -1 gave one token more than the window.
pub fn allowed_tokens_in(context_window: f64, max_tokens: Option<f64>, era: Era) -> f64 {
    let positive_only = era.reserves_default_for_non_positive_max_tokens();
    let reserved = match max_tokens {
        Some(m) if m > 0.0 || (!positive_only && m != 0.0 && !m.is_nan()) => m,
        _ => ANTHROPIC_DEFAULT_MAX_TOKENS,
    };
    context_window * (1.0 - TOKEN_BUFFER_PERCENTAGE) - reserved
}

/// The share of the context budget the prior context takes, in percent. By default against the
/// whole window; with `against_available_input` (the option VS Code's language-model provider
/// sets) against the window less the output reserve (`maxTokens` when above zero, else nothing),
/// and 100 when that leaves no room.
pub fn context_percent(
    prev_context_tokens: f64,
    context_window: f64,
    max_tokens: Option<f64>,
    against_available_input: bool,
) -> f64 {
    if !against_available_input {
        return (100.0 * prev_context_tokens) / context_window;
    }
    let reserved = max_tokens.filter(|m| *m > 0.0).unwrap_or(0.0);
    let available = context_window - reserved;
    if available > 0.0 {
        (100.0 * prev_context_tokens) / available
    } else {
        100.0
    }
}

/// Inputs of `willManageContext`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WillManageContextOptions {
    pub total_tokens: f64,
    pub context_window: f64,
    pub max_tokens: Option<f64>,
    #[serde(default = "yes")]
    pub auto_condense_context: bool,
    #[serde(default = "hundred")]
    pub auto_condense_context_percent: f64,
    pub profile_thresholds: Map<String, Value>,
    #[serde(default = "default_profile")]
    pub current_profile_id: String,
    pub last_message_tokens: f64,
    /// Measure the percentage against the window less the output reserve ([`context_percent`]).
    pub use_available_input_for_context_percent: bool,
    /// Whose rules decide (default: today's).
    pub era: Era,
}

fn yes() -> bool {
    true
}
fn hundred() -> f64 {
    100.0
}
fn default_profile() -> String {
    "default".into()
}

/// `willManageContext`: whether `manageContext` would condense or truncate.
pub fn will_manage_context(o: &WillManageContextOptions) -> bool {
    let prev = o.total_tokens + o.last_message_tokens;
    let allowed = allowed_tokens_in(o.context_window, o.max_tokens, o.era);
    if !o.auto_condense_context {
        return prev > allowed;
    }
    let thr = effective_threshold(
        o.auto_condense_context_percent,
        &o.profile_thresholds,
        &o.current_profile_id,
    );
    let pct = context_percent(
        prev,
        o.context_window,
        o.max_tokens,
        o.use_available_input_for_context_percent,
    );
    pct >= thr.threshold || prev > allowed
}

/// Inputs of `manageContext(options)` (the API handler is passed separately).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ManageContextOptions {
    pub messages: Vec<Value>,
    /// `contextTokens` of the task so far (without the newest message).
    pub total_tokens: f64,
    pub context_window: f64,
    pub max_tokens: Option<f64>,
    pub auto_condense_context: bool,
    pub auto_condense_context_percent: f64,
    pub profile_thresholds: Map<String, Value>,
    pub current_profile_id: String,
    pub system_prompt: String,
    pub task_id: String,
    pub custom_condensing_prompt: Option<String>,
    pub metadata: Option<Value>,
    pub environment_details: Option<String>,
    pub folded_file_context: Vec<String>,
    /// Replaces the built-in summary system prompt.
    pub summary_prompt: Option<String>,
    /// Tokens of the newest message when already known (otherwise the provider counts them).
    pub last_message_tokens: Option<f64>,
    /// Measure the percentage against the window less the output reserve ([`context_percent`]).
    pub use_available_input_for_context_percent: bool,
    pub era: Era,
}

impl Default for ManageContextOptions {
    fn default() -> Self {
        Self {
            messages: Vec::new(),
            total_tokens: 0.0,
            context_window: 0.0,
            max_tokens: None,
            auto_condense_context: true,
            auto_condense_context_percent: 100.0,
            profile_thresholds: Map::new(),
            current_profile_id: default_profile(),
            system_prompt: String::new(),
            task_id: String::new(),
            custom_condensing_prompt: None,
            metadata: None,
            environment_details: None,
            folded_file_context: Vec::new(),
            summary_prompt: None,
            last_message_tokens: None,
            use_available_input_for_context_percent: false,
            era: Era::HEAD,
        }
    }
}

/// What to do with the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ContextAction {
    None,
    Summarize,
    Truncate,
}

/// The truncation that applies (the action itself, or the fallback when summarising fails).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TruncationPlan {
    #[serde(flatten)]
    pub result: TruncationResult,
    pub new_context_tokens_after_truncation: f64,
}

/// The decision of `manageContext`, without calling a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ContextDecision {
    pub action: ContextAction,
    pub prev_context_tokens: f64,
    pub last_message_tokens: f64,
    pub allowed_tokens: f64,
    pub context_percent: f64,
    pub effective_threshold: EffectiveThreshold,
    /// When summarising fails, truncation follows (the context is over `allowedTokens`).
    pub truncate_on_failure: bool,
    /// The resulting messages when truncation is the action or the fallback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<TruncationPlan>,
}

/// What `manageContext` returns (`ContextManagementResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ContextManagementResult {
    #[cfg_attr(feature = "ts", ts(type = "Array<ApiMessage>"))]
    pub messages: Vec<Value>,
    pub summary: String,
    pub cost: f64,
    pub prev_context_tokens: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_context_tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condense_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_key: Option<CondenseErrorKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_details: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages_removed: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_context_tokens_after_truncation: Option<f64>,
    /// Set when the profile's threshold was invalid and the global one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_warning: Option<String>,
}

/// Blocks of the newest message as the extension counts them.
pub fn last_message_blocks(messages: &[Value]) -> Vec<Value> {
    match messages.last().and_then(|m| m.get("content")) {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(s)) => vec![text_block(s)],
        _ => Vec::new(),
    }
}

struct Numbers {
    prev: f64,
    last: f64,
    allowed: f64,
    pct: f64,
    threshold: EffectiveThreshold,
}

fn numbers(o: &ManageContextOptions, last: f64) -> Numbers {
    let prev = o.total_tokens + last;
    Numbers {
        prev,
        last,
        allowed: allowed_tokens_in(o.context_window, o.max_tokens, o.era),
        pct: context_percent(
            prev,
            o.context_window,
            o.max_tokens,
            o.use_available_input_for_context_percent,
        ),
        threshold: effective_threshold(
            o.auto_condense_context_percent,
            &o.profile_thresholds,
            &o.current_profile_id,
        ),
    }
}

fn action_of(o: &ManageContextOptions, n: &Numbers) -> ContextAction {
    let condensing = o.auto_condense_context && o.era.has_condensing();
    if condensing && (n.pct >= n.threshold.threshold || n.prev > n.allowed) {
        ContextAction::Summarize
    } else if n.prev > n.allowed {
        ContextAction::Truncate
    } else {
        ContextAction::None
    }
}

fn visible_after_truncation(m: &Value) -> bool {
    !truthy(m.get("truncationParent")) && !truthy(m.get("isTruncationMarker"))
}

/// The decision of `manageContext`, counted with this crate's estimate; no model is called.
pub fn decide_context(o: &ManageContextOptions) -> ContextDecision {
    let last = o
        .last_message_tokens
        .unwrap_or_else(|| tokens::count_tokens(&last_message_blocks(&o.messages)));
    let n = numbers(o, last);
    let action = action_of(o, &n);
    let truncate_on_failure = n.prev > n.allowed;
    let truncation = truncate_on_failure.then(|| {
        let result = truncate_conversation(&o.messages, TRUNCATION_FRACTION, o.era);
        let mut tokens_after = tokens::count_tokens(&[text_block(&o.system_prompt)]);
        for m in result
            .messages
            .iter()
            .filter(|m| visible_after_truncation(m))
        {
            tokens_after += tokens::count_tokens(&content_blocks(m.get("content")));
        }
        TruncationPlan {
            result,
            new_context_tokens_after_truncation: tokens_after,
        }
    });
    ContextDecision {
        action,
        prev_context_tokens: n.prev,
        last_message_tokens: n.last,
        allowed_tokens: n.allowed,
        context_percent: n.pct,
        effective_threshold: n.threshold,
        truncate_on_failure,
        truncation,
    }
}

/// `manageContext(options)`: summarise when the threshold is reached (falling back to truncation
/// when that fails and the context is over the limit), truncate when over the limit, else nothing.
pub async fn manage_context(
    o: &ManageContextOptions,
    provider: &dyn SummaryProvider,
    cancel: &CancelToken,
) -> Result<ContextManagementResult, Cancelled> {
    let last = match o.last_message_tokens {
        Some(t) => t,
        None => {
            provider
                .count_tokens(&last_message_blocks(&o.messages))
                .await
        }
    };
    let n = numbers(o, last);
    let warning = n.threshold.warning.clone();
    let mut result = ContextManagementResult {
        messages: o.messages.clone(),
        prev_context_tokens: n.prev,
        threshold_warning: warning.clone(),
        ..ContextManagementResult::default()
    };
    if action_of(o, &n) == ContextAction::Summarize {
        let summarize = SummarizeOptions {
            messages: o.messages.clone(),
            system_prompt: o.system_prompt.clone(),
            task_id: o.task_id.clone(),
            is_automatic_trigger: true,
            custom_condensing_prompt: o.custom_condensing_prompt.clone(),
            metadata: o.metadata.clone(),
            environment_details: o.environment_details.clone(),
            folded_file_context: o.folded_file_context.clone(),
            prev_context_tokens: Some(n.prev),
            summary_prompt: o.summary_prompt.clone(),
            era: o.era,
        };
        let r = summarize_conversation(&summarize, provider, cancel).await?;
        if r.error.is_none() {
            return Ok(ContextManagementResult {
                messages: r.messages,
                summary: r.summary,
                cost: r.cost,
                prev_context_tokens: n.prev,
                new_context_tokens: r.new_context_tokens,
                condense_id: r.condense_id,
                threshold_warning: warning,
                ..ContextManagementResult::default()
            });
        }
        result.error = r.error;
        result.error_key = r.error_key;
        result.error_details = r.error_details;
        result.cost = r.cost;
    }
    if n.prev > n.allowed {
        let t = truncate_conversation(&o.messages, TRUNCATION_FRACTION, o.era);
        let mut tokens_after = provider.count_tokens(&[text_block(&o.system_prompt)]).await;
        for m in t.messages.iter().filter(|m| visible_after_truncation(m)) {
            tokens_after += provider
                .count_tokens(&content_blocks(m.get("content")))
                .await;
        }
        result.messages = t.messages;
        result.truncation_id = t.truncation_id;
        result.messages_removed = Some(t.messages_removed);
        result.new_context_tokens_after_truncation = Some(tokens_after);
    }
    Ok(result)
}
