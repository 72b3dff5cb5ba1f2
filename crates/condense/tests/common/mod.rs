//! Helpers shared by the acceptance suites.
#![allow(dead_code, clippy::unwrap_used)]

use roo_condense::*;
use serde_json::{json, Value};

pub const HEAD: Era = Era::HEAD;

pub fn prices() -> ModelInfo {
    serde_json::from_value(
        json!({"inputPrice": 3.0, "outputPrice": 15.0, "cacheWritesPrice": 3.75, "cacheReadsPrice": 0.3}),
    )
    .unwrap()
}

pub fn msg(role: &str, content: Value, ts: f64) -> Value {
    json!({"role": role, "content": content, "ts": ts})
}

pub fn u(text: &str, ts: f64) -> Value {
    msg("user", json!(text), ts)
}

pub fn a(text: &str, ts: f64) -> Value {
    msg("assistant", json!(text), ts)
}

pub fn texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

pub fn conversation(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                u(&format!("Message {}", i + 1), (i + 1) as f64)
            } else {
                a(&format!("Message {}", i + 1), (i + 1) as f64)
            }
        })
        .collect()
}

pub fn summary_provider() -> ScriptedProvider {
    let mut p = ScriptedProvider::new(vec![
        StreamChunk::Text {
            text: "This is ".into(),
        },
        StreamChunk::Text {
            text: "a summary".into(),
        },
        StreamChunk::Usage {
            input_tokens: 0.0,
            output_tokens: 150.0,
            cache_write_tokens: None,
            cache_read_tokens: None,
            total_cost: Some(0.05),
        },
    ]);
    p.token_count = Some(100.0);
    p
}

pub fn five_with_empty_last() -> Vec<Value> {
    vec![
        u("First message", 1.0),
        a("Second message", 2.0),
        u("Third message", 3.0),
        a("Fourth message", 4.0),
        u("", 5.0),
    ]
}

/// Options of a summary of `messages` with the suites' system prompt and task.
pub fn sum_opts(messages: Vec<Value>) -> SummarizeOptions {
    SummarizeOptions {
        messages,
        system_prompt: "System prompt".into(),
        task_id: "task".into(),
        ..SummarizeOptions::default()
    }
}

/// `summarize_conversation` with a fresh cancel token.
pub async fn summarize(o: &SummarizeOptions, p: &dyn SummaryProvider) -> SummarizeResponse {
    summarize_conversation(o, p, &CancelToken::new())
        .await
        .unwrap()
}
