//! Token estimates as the extension makes them: o200k_base over the text of each block, a square
//! root for images, tool blocks written out as text, and one ×1.5 factor with a single `ceil`.

use crate::js::{is_type, str_field};
use roo_js::{string_of, stringify, truthy, utf16_len};
use serde_json::Value;
use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

/// The safety factor applied once per call.
pub const TOKEN_FUDGE_FACTOR: f64 = 1.5;
/// What an image without `source.data` counts for, before the factor.
pub const IMAGE_TOKENS_WITHOUT_DATA: f64 = 300.0;

fn encoder() -> Option<&'static CoreBPE> {
    static ENCODER: OnceLock<Option<CoreBPE>> = OnceLock::new();
    // The ranks are compiled into tiktoken-rs; building the encoder reads no file and no network.
    ENCODER
        .get_or_init(|| tiktoken_rs::o200k_base().ok())
        .as_ref()
}

/// Builds the encoder now, so that the first count is not the slow one.
pub fn warm_up() -> bool {
    encoder().is_some()
}

/// o200k_base tokens of `text`, with special-token text (`<|endoftext|>`) encoded as ordinary text.
pub fn encode_len(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    match encoder() {
        Some(bpe) => bpe.encode_ordinary(text).len(),
        // Unreachable with the bundled ranks; a rough estimate keeps callers going.
        None => text.len().div_ceil(4),
    }
}

/// The text a `tool_use` block is counted as.
pub fn tool_use_count_text(block: &Value) -> String {
    let mut s = format!("Tool: {}", string_of(block.get("name")));
    if let Some(input) = block.get("input") {
        s.push_str("\nArguments: ");
        s.push_str(&stringify(input));
    }
    s
}

/// The text a `tool_result` block is counted as.
pub fn tool_result_count_text(block: &Value) -> String {
    let mut parts = vec![format!(
        "Tool Result ({})",
        string_of(block.get("tool_use_id"))
    )];
    if truthy(block.get("is_error")) {
        parts.push("[Error]".into());
    }
    match block.get("content") {
        Some(Value::String(s)) => parts.push(s.clone()),
        Some(Value::Array(items)) => {
            for item in items {
                if is_type(item, "text") {
                    parts.push(str_field(item, "text").unwrap_or("").to_owned());
                } else if is_type(item, "image") {
                    parts.push("[Image content]".into());
                } else {
                    parts.push(format!(
                        "[Unsupported content block: {}]",
                        string_of(item.get("type"))
                    ));
                }
            }
        }
        _ => {}
    }
    parts.join("\n")
}

/// Raw count of one block, before the factor.
fn block_tokens(block: &Value) -> f64 {
    match str_field(block, "type") {
        Some("text") => encode_len(str_field(block, "text").unwrap_or("")) as f64,
        Some("image") => match block.get("source") {
            Some(Value::Object(source)) if source.contains_key("data") => {
                // `data.length` in UTF-16 units; a non-string `data` counts as empty.
                let len = source
                    .get("data")
                    .and_then(Value::as_str)
                    .map_or(0, utf16_len);
                (len as f64).sqrt().ceil()
            }
            _ => IMAGE_TOKENS_WITHOUT_DATA,
        },
        Some("tool_use") => encode_len(&tool_use_count_text(block)) as f64,
        Some("tool_result") => encode_len(&tool_result_count_text(block)) as f64,
        _ => 0.0,
    }
}

/// `tiktoken(content)`: the estimate for a list of content blocks.
pub fn tiktoken(content: &[Value]) -> f64 {
    if content.is_empty() {
        return 0.0;
    }
    let total: f64 = content.iter().map(block_tokens).fold(0.0, |a, b| a + b);
    (total * TOKEN_FUDGE_FACTOR).ceil()
}

/// `countTokens(content)`: what every provider's `countTokens` returns (0 for no blocks).
pub fn count_tokens(content: &[Value]) -> f64 {
    if content.is_empty() {
        0.0
    } else {
        tiktoken(content)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_texts() {
        let b = json!({"type":"tool_use","id":"t","name":"read_file","input":{"path":"a.ts"}});
        assert_eq!(
            tool_use_count_text(&b),
            "Tool: read_file\nArguments: {\"path\":\"a.ts\"}"
        );
        let r = json!({"type":"tool_result","tool_use_id":"t","is_error":true,
            "content":[{"type":"text","text":"x"},{"type":"image"},{"type":"doc"}]});
        assert_eq!(
            tool_result_count_text(&r),
            "Tool Result (t)\n[Error]\nx\n[Image content]\n[Unsupported content block: doc]"
        );
    }
}
