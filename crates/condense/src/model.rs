//! `getModelMaxOutputTokens`: the output reservation that the context rules subtract.

use crate::js::num_or_zero;
use roo_js::truthy;
use serde_json::Value;

/// `ANTHROPIC_DEFAULT_MAX_TOKENS`.
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: f64 = 8192.0;
/// Reservation for models that require a reasoning budget and have no `modelMaxTokens` setting.
pub const DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS: f64 = 16384.0;

/// Inputs of `getModelMaxOutputTokens({modelId, model, settings, format})`; `model` and `settings`
/// are the extension's `ModelInfo` and provider settings as JSON.
#[derive(Debug, Clone, Default)]
pub struct MaxOutputArgs<'a> {
    pub model_id: &'a str,
    pub model: &'a Value,
    pub settings: Option<&'a Value>,
    pub format: Option<&'a str>,
}

/// The output reservation, or `None` where the extension returns `undefined` (a `format` was given
/// and the model states no `maxTokens`).
pub fn get_model_max_output_tokens(args: &MaxOutputArgs<'_>) -> Option<f64> {
    let model = args.model;
    let setting = |k: &str| args.settings.and_then(|s| s.get(k));
    if truthy(model.get("requiredReasoningBudget"))
        || (truthy(model.get("supportsReasoningBudget"))
            && truthy(setting("enableReasoningEffort")))
    {
        let configured = num_or_zero(setting("modelMaxTokens"));
        return Some(if configured != 0.0 {
            configured
        } else {
            DEFAULT_HYBRID_REASONING_MODEL_MAX_TOKENS
        });
    }
    let anthropic = args.model_id.contains("claude")
        || args.format == Some("anthropic")
        || (args.format == Some("openrouter") && args.model_id.starts_with("anthropic/"));
    let max_tokens = num_or_zero(model.get("maxTokens"));
    if anthropic && truthy(model.get("supportsReasoningBudget")) {
        return Some(ANTHROPIC_DEFAULT_MAX_TOKENS);
    }
    if anthropic && max_tokens == 0.0 {
        return Some(ANTHROPIC_DEFAULT_MAX_TOKENS);
    }
    if max_tokens != 0.0 {
        if args.model_id.to_lowercase().contains("gpt-5") {
            return Some(max_tokens);
        }
        let window = num_or_zero(model.get("contextWindow"));
        return Some(max_tokens.min((window * 0.2).ceil()));
    }
    if args.format.is_some() {
        None
    } else {
        Some(ANTHROPIC_DEFAULT_MAX_TOKENS)
    }
}
