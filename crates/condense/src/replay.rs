//! What a task's own UI records tell about replaying it: the release whose context rules wrote
//! them (as far as the records show), the protocol its provider spoke, and so which cost
//! function prices its requests.

use crate::cost::{calculate_api_cost_anthropic, calculate_api_cost_openai, ApiCostResult};
use crate::js::str_field;
use crate::{Era, ModelInfo};
use serde_json::Value;

/// The era of records whose `api_req_started` carries the request itself: releases up to
/// 3.28.17 wrote them and counted the context differently, by the rules of 3.28.0.
pub const REQUEST_IN_RECORD_ERA: Era = Era(3, 28, 0);

/// The protocol assumed when no request record names one.
pub const DEFAULT_PROTOCOL: &str = "anthropic";

/// The protocol whose prices count cache tokens inside the input tokens.
pub const OPENAI_PROTOCOL: &str = "openai";

/// The text of an `api_req_started` record, when it has one.
fn request_record_text(m: &Value) -> Option<&str> {
    (str_field(m, "say") == Some("api_req_started"))
        .then(|| str_field(m, "text"))
        .flatten()
}

/// The era the UI records were written in, when they show it: records that carry `request`
/// inside `api_req_started` (a text starting with `{"request"`) mean [`REQUEST_IN_RECORD_ERA`];
/// otherwise `None` (today's rules apply).
pub fn era_of_records(ui_messages: &[Value]) -> Option<Era> {
    ui_messages
        .iter()
        .filter_map(request_record_text)
        .any(|text| text.starts_with("{\"request\""))
        .then_some(REQUEST_IN_RECORD_ERA)
}

/// The protocol the provider spoke: the `apiProtocol` of the last `api_req_started` record with a
/// text, else [`DEFAULT_PROTOCOL`] (also when that record cannot be read or names none).
pub fn api_protocol(ui_messages: &[Value]) -> String {
    let named = ui_messages
        .iter()
        .rev()
        .find_map(request_record_text)
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .and_then(|info| str_field(&info, "apiProtocol").map(str::to_owned))
        .filter(|p| !p.is_empty());
    named.unwrap_or_else(|| DEFAULT_PROTOCOL.to_owned())
}

/// The cost of a request at `info`'s prices by the rules of `protocol`: OpenAI's (input tokens
/// include the cache tokens) for `openai`, Anthropic's (they do not) for any other.
pub fn calculate_api_cost_for_protocol(
    protocol: &str,
    info: &ModelInfo,
    input_tokens: f64,
    output_tokens: f64,
    cache_creation_input_tokens: Option<f64>,
    cache_read_input_tokens: Option<f64>,
) -> ApiCostResult {
    if protocol == OPENAI_PROTOCOL {
        calculate_api_cost_openai(
            info,
            input_tokens,
            output_tokens,
            cache_creation_input_tokens,
            cache_read_input_tokens,
            None,
        )
    } else {
        calculate_api_cost_anthropic(
            info,
            input_tokens,
            output_tokens,
            cache_creation_input_tokens,
            cache_read_input_tokens,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(text: &str) -> Value {
        json!({ "ts": 1, "type": "say", "say": "api_req_started", "text": text })
    }

    #[test]
    fn records_carrying_the_request_are_of_the_3_28_era() {
        let old = vec![
            json!({ "ts": 0, "type": "say", "say": "text", "text": "{\"request\": \"no\"}" }),
            request("{\"request\":\"<task>do it</task>\",\"tokensIn\":10}"),
        ];
        assert_eq!(era_of_records(&old), Some(Era(3, 28, 0)));
        let today = vec![request("{\"apiProtocol\":\"anthropic\",\"tokensIn\":10}")];
        assert_eq!(era_of_records(&today), None);
        // Only an api_req_started record counts, and only a text that starts with the key.
        let other = vec![
            json!({ "ts": 0, "type": "say", "say": "text", "text": "{\"request\":1}" }),
            request(" {\"request\":1}"),
            json!({ "ts": 2, "type": "say", "say": "api_req_started", "text": 5 }),
        ];
        assert_eq!(era_of_records(&other), None);
        assert_eq!(era_of_records(&[]), None);
    }

    #[test]
    fn the_last_request_record_names_the_protocol() {
        let ui = vec![
            request("{\"apiProtocol\":\"anthropic\"}"),
            json!({ "ts": 3, "type": "say", "say": "text", "text": "hello" }),
            request("{\"apiProtocol\":\"openai\",\"tokensIn\":3}"),
            json!({ "ts": 4, "type": "say", "say": "api_req_started" }),
        ];
        assert_eq!(api_protocol(&ui), "openai");
        assert_eq!(api_protocol(&[]), "anthropic");
        // The last record decides, even when it tells nothing.
        for last in [
            "{\"tokensIn\":3}",
            "not json",
            "null",
            "{\"apiProtocol\":\"\"}",
        ] {
            let ui = vec![request("{\"apiProtocol\":\"openai\"}"), request(last)];
            assert_eq!(api_protocol(&ui), "anthropic", "{last}");
        }
    }

    #[test]
    fn the_protocol_chooses_the_cost_function() {
        let info: ModelInfo =
            serde_json::from_value(json!({ "inputPrice": 3.0, "outputPrice": 15.0 }))
                .unwrap_or_else(|e| panic!("prices: {e}"));
        let openai =
            calculate_api_cost_for_protocol("openai", &info, 1_000.0, 100.0, None, Some(400.0));
        let expected = calculate_api_cost_openai(&info, 1_000.0, 100.0, None, Some(400.0), None);
        assert_eq!(openai, expected);
        for protocol in ["anthropic", "bedrock", ""] {
            let r =
                calculate_api_cost_for_protocol(protocol, &info, 1_000.0, 100.0, None, Some(400.0));
            assert_eq!(
                r,
                calculate_api_cost_anthropic(&info, 1_000.0, 100.0, None, Some(400.0))
            );
        }
        assert_ne!(openai.total_input_tokens, 1_400.0);
    }
}
