//! API cost with the extension's order of operations, and a task's totals from its UI messages.

use crate::era::Era;
use crate::js::{is_type, num_or_zero, number, str_field};
use roo_js::stringify;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Prices of a model, in USD per million tokens (the extension's `ModelInfo`, price fields only;
/// every other field is kept in `extra`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_price: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_price: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_writes_price: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_reads_price: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context_pricing: Option<LongContextPricing>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Surcharge above a number of input tokens (`ModelInfo.longContextPricing`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LongContextPricing {
    /// Missing → every request is above the threshold (a JS comparison with `undefined` is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_price_multiplier: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_price_multiplier: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_writes_price_multiplier: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_reads_price_multiplier: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applies_to_service_tiers: Option<Vec<String>>,
}

/// `{totalInputTokens, totalOutputTokens, totalCost}`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApiCostResult {
    pub total_input_tokens: f64,
    pub total_output_tokens: f64,
    pub total_cost: f64,
}

/// `x || 0` for an optional price or count.
fn or_zero(x: Option<f64>) -> f64 {
    match x {
        Some(f) if f != 0.0 && !f.is_nan() => f,
        _ => 0.0,
    }
}

fn internal(info: &ModelInfo, input: f64, output: f64, cache_writes: f64, cache_reads: f64) -> f64 {
    let cache_writes_cost = (or_zero(info.cache_writes_price) / 1_000_000.0) * cache_writes;
    let cache_reads_cost = (or_zero(info.cache_reads_price) / 1_000_000.0) * cache_reads;
    let base_input_cost = (or_zero(info.input_price) / 1_000_000.0) * input;
    let output_cost = (or_zero(info.output_price) / 1_000_000.0) * output;
    cache_writes_cost + cache_reads_cost + base_input_cost + output_cost
}

/// Anthropic protocol: `input` excludes cache tokens.
pub fn calculate_api_cost_anthropic(
    info: &ModelInfo,
    input_tokens: f64,
    output_tokens: f64,
    cache_creation_input_tokens: Option<f64>,
    cache_read_input_tokens: Option<f64>,
) -> ApiCostResult {
    let cw = or_zero(cache_creation_input_tokens);
    let cr = or_zero(cache_read_input_tokens);
    ApiCostResult {
        total_input_tokens: input_tokens + cw + cr,
        total_output_tokens: output_tokens,
        total_cost: internal(info, input_tokens, output_tokens, cw, cr),
    }
}

/// OpenAI protocol: `input` includes cache tokens; long-context pricing applies above its threshold
/// for the listed service tiers.
pub fn calculate_api_cost_openai(
    info: &ModelInfo,
    input_tokens: f64,
    output_tokens: f64,
    cache_creation_input_tokens: Option<f64>,
    cache_read_input_tokens: Option<f64>,
    service_tier: Option<&str>,
) -> ApiCostResult {
    let cw = or_zero(cache_creation_input_tokens);
    let cr = or_zero(cache_read_input_tokens);
    // `Math.max(0, x)`: a NaN count stays NaN (f64::max would give 0).
    let diff = input_tokens - cw - cr;
    let non_cached = if diff.is_nan() { diff } else { diff.max(0.0) };
    let effective = apply_long_context_pricing(info, input_tokens, service_tier);
    ApiCostResult {
        total_input_tokens: input_tokens,
        total_output_tokens: output_tokens,
        total_cost: internal(&effective, non_cached, output_tokens, cw, cr),
    }
}

/// The prices that apply to a request of `total_input_tokens` on `service_tier`.
pub fn apply_long_context_pricing(
    info: &ModelInfo,
    total_input_tokens: f64,
    service_tier: Option<&str>,
) -> ModelInfo {
    let Some(lc) = &info.long_context_pricing else {
        return info.clone();
    };
    if lc.threshold_tokens.is_some_and(|t| total_input_tokens <= t) {
        return info.clone();
    }
    if let Some(tiers) = &lc.applies_to_service_tiers {
        let tier = service_tier.unwrap_or("default");
        if !tiers.iter().any(|t| t == tier) {
            return info.clone();
        }
    }
    let scale = |price: Option<f64>, mult: Option<f64>| match (price, mult) {
        (Some(p), Some(m)) => Some(p * m),
        (p, _) => p,
    };
    ModelInfo {
        input_price: scale(info.input_price, lc.input_price_multiplier),
        output_price: scale(info.output_price, lc.output_price_multiplier),
        cache_writes_price: scale(info.cache_writes_price, lc.cache_writes_price_multiplier),
        cache_reads_price: scale(info.cache_reads_price, lc.cache_reads_price_multiplier),
        ..info.clone()
    }
}

/// `parseApiPrice`: a per-token price string (router model lists) → USD per million tokens.
pub fn parse_api_price(price: Option<&Value>) -> Option<f64> {
    let p = price?;
    let text = match p {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Number(n) if n.as_f64().is_some_and(|f| f != 0.0) => n.to_string(),
        _ => return None,
    };
    parse_float_prefix(&text).map(|f| f * 1_000_000.0)
}

/// `parseFloat`: the longest numeric prefix after leading whitespace.
fn parse_float_prefix(s: &str) -> Option<f64> {
    let t = s.trim_start();
    let mut end = 0;
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut seen_exp = false;
    let bytes = t.as_bytes();
    let mut i = 0;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        i += 1;
    }
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_digit() {
            seen_digit = true;
            end = i + 1;
        } else if c == b'.' && !seen_dot && !seen_exp {
            seen_dot = true;
        } else if (c == b'e' || c == b'E') && seen_digit && !seen_exp {
            seen_exp = true;
            if i + 1 < bytes.len() && (bytes[i + 1] == b'+' || bytes[i + 1] == b'-') {
                i += 1;
            }
        } else {
            break;
        }
        i += 1;
    }
    if !seen_digit {
        return if t.starts_with("Infinity") || t.starts_with("+Infinity") {
            Some(f64::INFINITY)
        } else if t.starts_with("-Infinity") {
            Some(f64::NEG_INFINITY)
        } else {
            None
        };
    }
    t[..end].parse().ok()
}

/// A task's totals (`TokenUsage`): what `getApiMetrics` / `consolidateTokenUsage` return.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct TokenUsage {
    pub total_tokens_in: f64,
    pub total_tokens_out: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cache_writes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cache_reads: Option<f64>,
    pub total_cost: f64,
    pub context_tokens: f64,
}

fn is_say(m: &Value, say: &str) -> bool {
    is_type(m, "say") && str_field(m, "say") == Some(say)
}

fn is_ask(m: &Value, ask: &str) -> bool {
    is_type(m, "ask") && str_field(m, "ask") == Some(ask)
}

fn nonempty_text(m: &Value) -> Option<&str> {
    str_field(m, "text").filter(|t| !t.is_empty())
}

/// `getApiMetrics(messages)`: sums over `api_req_started` records (unparsable ones are skipped),
/// condensation costs, and the context size from the last non-zero record.
pub fn get_api_metrics(messages: &[Value]) -> TokenUsage {
    get_api_metrics_era(messages, Era::HEAD)
}

/// [`get_api_metrics`] as a given release computed it: before v3.29.5 an Anthropic-protocol
/// record's `tokensIn` left out cache tokens, and the context size added them back.
pub fn get_api_metrics_era(messages: &[Value], era: Era) -> TokenUsage {
    let mut usage = TokenUsage::default();
    for m in messages {
        if is_say(m, "api_req_started") {
            let Some(text) = nonempty_text(m) else {
                continue;
            };
            let Ok(info) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if let Some(v) = number(info.get("tokensIn")) {
                usage.total_tokens_in += v;
            }
            if let Some(v) = number(info.get("tokensOut")) {
                usage.total_tokens_out += v;
            }
            if let Some(v) = number(info.get("cacheWrites")) {
                usage.total_cache_writes = Some(usage.total_cache_writes.unwrap_or(0.0) + v);
            }
            if let Some(v) = number(info.get("cacheReads")) {
                usage.total_cache_reads = Some(usage.total_cache_reads.unwrap_or(0.0) + v);
            }
            if let Some(v) = number(info.get("cost")) {
                usage.total_cost += v;
            }
        } else if is_say(m, "condense_context") {
            usage.total_cost +=
                number(m.get("contextCondense").and_then(|c| c.get("cost"))).unwrap_or(0.0);
        }
    }
    for m in messages.iter().rev() {
        let tokens = if is_say(m, "api_req_started") {
            let Some(text) = nonempty_text(m) else {
                continue;
            };
            let Ok(info) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            let base = num_or_zero(info.get("tokensIn")) + num_or_zero(info.get("tokensOut"));
            if era.context_adds_cache(str_field(&info, "apiProtocol")) {
                base + num_or_zero(info.get("cacheWrites")) + num_or_zero(info.get("cacheReads"))
            } else {
                base
            }
        } else if is_say(m, "condense_context") {
            number(
                m.get("contextCondense")
                    .and_then(|c| c.get("newContextTokens")),
            )
            .unwrap_or(0.0)
        } else {
            continue;
        };
        if tokens != 0.0 && !tokens.is_nan() {
            usage.context_tokens = tokens;
            break;
        }
    }
    usage
}

/// `combineApiRequests`: each legacy `api_req_finished` is merged into the closest open
/// `api_req_started` as `{...start, ...finish}` and dropped; invalid JSON counts as `{}`.
pub fn combine_api_requests(messages: &[Value]) -> Vec<Value> {
    if !messages.iter().any(|m| is_say(m, "api_req_finished")) {
        return messages.to_vec();
    }
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut open: Vec<usize> = Vec::new();
    let parse = |m: &Value| -> Map<String, Value> {
        nonempty_text(m)
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    };
    for m in messages {
        if is_say(m, "api_req_started") {
            out.push(m.clone());
            open.push(out.len() - 1);
        } else if is_say(m, "api_req_finished") {
            if let Some(i) = open.pop() {
                let mut merged = parse(&out[i]);
                for (k, v) in parse(m) {
                    merged.insert(k, v);
                }
                let text = stringify(&Value::Object(merged));
                out[i] = crate::js::with_key(&out[i], "text", Value::String(text));
            }
        } else {
            out.push(m.clone());
        }
    }
    out
}

/// `combineCommandSequences`: an `ask:"command"` absorbs the `command_output` messages that follow
/// it (up to the next command); `use_mcp_server` asks gain the following `mcp_server_response`
/// texts as `response`; leftover outputs and responses are dropped.
pub fn combine_command_sequences(messages: &[Value]) -> Vec<Value> {
    let is_output = |m: &Value| is_ask(m, "command_output") || is_say(m, "command_output");
    let mut out = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        if is_ask(m, "command") {
            let mut text = str_field(m, "text").unwrap_or("").to_owned();
            let mut has_output = false;
            let mut previous: Option<(&str, &str)> = None;
            for next in &messages[i + 1..] {
                if is_ask(next, "command") {
                    break;
                }
                if !is_output(next) {
                    continue;
                }
                let kind = str_field(next, "type").unwrap_or("");
                let body = str_field(next, "text").unwrap_or("");
                if body.is_empty() {
                    continue;
                }
                if let Some((pkind, pbody)) = previous {
                    if pkind != kind && pbody == body {
                        continue;
                    }
                }
                previous = Some((kind, body));
                if !has_output {
                    text.push_str("\nOutput:");
                    has_output = true;
                } else {
                    text.push('\n');
                }
                text.push_str(body);
            }
            out.push(crate::js::with_key(m, "text", Value::String(text)));
        } else if is_ask(m, "use_mcp_server") {
            let responses: Vec<&str> = messages[i + 1..]
                .iter()
                .take_while(|n| !is_ask(n, "use_mcp_server"))
                .filter(|n| is_say(n, "mcp_server_response"))
                .map(|n| str_field(n, "text").unwrap_or(""))
                .collect();
            let parsed = nonempty_text(m).and_then(|t| serde_json::from_str::<Value>(t).ok());
            match parsed {
                Some(Value::Object(mut data)) if !responses.is_empty() => {
                    data.insert("response".into(), Value::String(responses.join("\n")));
                    let text = stringify(&Value::Object(data));
                    out.push(crate::js::with_key(m, "text", Value::String(text)));
                }
                _ => out.push(m.clone()),
            }
        } else if is_output(m) || is_say(m, "mcp_server_response") {
            continue;
        } else {
            out.push(m.clone());
        }
    }
    out
}

/// A task's usage as the HistoryItem and `getTokenUsage()` compute it: the first message is left
/// out, command sequences and legacy request pairs are combined, then `getApiMetrics`.
pub fn task_token_usage(ui_messages: &[Value], era: Era) -> TokenUsage {
    let rest = ui_messages.get(1..).unwrap_or(&[]);
    get_api_metrics_era(&combine_api_requests(&combine_command_sequences(rest)), era)
}

/// `CONTEXT_MANAGEMENT_EVENTS`.
pub const CONTEXT_MANAGEMENT_EVENTS: [&str; 3] = [
    "condense_context",
    "condense_context_error",
    "sliding_window_truncation",
];

/// `isContextManagementEvent(value)`: true only for the strings of the list.
pub fn is_context_management_event(value: Option<&Value>) -> bool {
    value
        .and_then(Value::as_str)
        .is_some_and(|s| CONTEXT_MANAGEMENT_EVENTS.contains(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prices() -> ModelInfo {
        serde_json::from_value(serde_json::json!({
            "inputPrice": 3, "outputPrice": 15, "cacheWritesPrice": 3.75, "cacheReadsPrice": 0.3
        }))
        .unwrap_or_default()
    }

    #[test]
    fn a_nan_input_count_gives_a_nan_cost_as_math_max_does() {
        let r = calculate_api_cost_openai(&prices(), f64::NAN, 500.0, None, None, None);
        assert!(r.total_input_tokens.is_nan());
        assert!(r.total_cost.is_nan());
        // Cache larger than the input still clamps the uncached part to 0.
        let clamped = calculate_api_cost_openai(&prices(), 10.0, 0.0, Some(100.0), None, None);
        assert_eq!(clamped.total_cost, (3.75 / 1_000_000.0) * 100.0);
    }
}
