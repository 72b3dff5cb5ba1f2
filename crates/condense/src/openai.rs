//! A built-in provider for OpenAI-compatible chat-completions endpoints (streaming, timeouts,
//! retries with backoff on 429 and 5xx, cancellation).

use crate::cost::{calculate_api_cost_openai, ModelInfo};
use crate::js::{is_type, str_field};
use crate::provider::{
    BoxFuture, CancelToken, ChunkSink, ProviderError, StreamChunk, SummaryProvider, SummaryRequest,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// Settings of the HTTP provider.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OpenAiCompatibleConfig {
    /// Base URL up to the API version, e.g. `http://127.0.0.1:8080/v1`; `/chat/completions` is added.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// Extra request headers.
    pub headers: BTreeMap<String, String>,
    pub connect_timeout_ms: u64,
    /// Longest wait for the response headers or for the next piece of the stream.
    pub idle_timeout_ms: u64,
    /// Longest a whole call may take, retries included.
    pub request_timeout_ms: u64,
    /// Retries after a 429, a 5xx or a failed connection (0 = none).
    pub max_retries: u32,
    pub retry_base_delay_ms: u64,
    pub retry_max_delay_ms: u64,
    pub supports_images: bool,
    /// Prices to compute a cost with when the server reports none (as `usage.cost`).
    pub model_info: Option<ModelInfo>,
}

impl Default for OpenAiCompatibleConfig {
    fn default() -> Self {
        Self {
            base_url: String::new(),
            api_key: None,
            model: String::new(),
            max_tokens: None,
            temperature: None,
            headers: BTreeMap::new(),
            connect_timeout_ms: 10_000,
            idle_timeout_ms: 60_000,
            request_timeout_ms: 600_000,
            max_retries: 3,
            retry_base_delay_ms: 500,
            retry_max_delay_ms: 10_000,
            supports_images: true,
            model_info: None,
        }
    }
}

/// Install the process-wide rustls provider (ring) once; reqwest is built without its own.
fn ensure_tls_provider() {
    static ONCE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        // Fails only when another part of the process installed one first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The HTTP provider.
#[derive(Debug, Clone)]
pub struct OpenAiCompatibleProvider {
    config: OpenAiCompatibleConfig,
    client: Option<reqwest::Client>,
    problem: Option<String>,
}

impl OpenAiCompatibleProvider {
    pub fn new(config: OpenAiCompatibleConfig) -> Self {
        let mut problem = None;
        if config.base_url.trim().is_empty() || config.model.trim().is_empty() {
            problem = Some("the provider needs a baseUrl and a model".to_owned());
        } else if !(config.base_url.starts_with("http://")
            || config.base_url.starts_with("https://"))
        {
            problem = Some(format!(
                "the provider baseUrl must start with http:// or https://, not `{}`",
                config.base_url
            ));
        }
        ensure_tls_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_millis(config.connect_timeout_ms.max(1)))
            .build()
            .map_err(|e| {
                problem
                    .get_or_insert(format!("cannot build the HTTP client: {e}"))
                    .clone()
            })
            .ok();
        Self {
            config,
            client,
            problem,
        }
    }

    pub fn config(&self) -> &OpenAiCompatibleConfig {
        &self.config
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        )
    }

    fn body(&self, request: &SummaryRequest) -> Value {
        let mut messages = vec![json!({"role": "system", "content": request.system_prompt})];
        messages.extend(request.messages.iter().map(to_openai_message));
        let mut body = Map::new();
        body.insert("model".into(), Value::String(self.config.model.clone()));
        body.insert("messages".into(), Value::Array(messages));
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
        if let Some(m) = self.config.max_tokens {
            body.insert("max_tokens".into(), json!(m));
        }
        if let Some(t) = self.config.temperature {
            body.insert("temperature".into(), json!(t));
        }
        Value::Object(body)
    }

    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let cap = Duration::from_millis(self.config.retry_max_delay_ms);
        if let Some(d) = retry_after {
            return d.min(cap);
        }
        let base = self
            .config
            .retry_base_delay_ms
            .saturating_mul(1u64 << attempt.min(16));
        Duration::from_millis(base).min(cap)
    }

    async fn call(
        &self,
        request: &SummaryRequest,
        sink: ChunkSink<'_>,
        cancel: &CancelToken,
    ) -> Result<(), ProviderError> {
        let client = match (&self.client, &self.problem) {
            (_, Some(p)) => return Err(ProviderError::Api(p.clone())),
            (Some(c), None) => c,
            (None, None) => return Err(ProviderError::Api("no HTTP client".into())),
        };
        let body = roo_js::stringify(&self.body(request));
        let idle = Duration::from_millis(self.config.idle_timeout_ms.max(1));
        let mut attempt = 0u32;
        let response = loop {
            let mut builder = client
                .post(self.url())
                .header("content-type", "application/json")
                .header("accept", "text/event-stream")
                .body(body.clone());
            if let Some(key) = self.config.api_key.as_deref().filter(|k| !k.is_empty()) {
                builder = builder.header("authorization", format!("Bearer {key}"));
            }
            for (k, v) in &self.config.headers {
                builder = builder.header(k.as_str(), v.as_str());
            }
            let sent = tokio::select! {
                r = tokio::time::timeout(idle, builder.send()) => r,
                _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
            };
            let retry_after;
            match sent {
                Err(_) => return Err(ProviderError::Timeout(self.config.idle_timeout_ms)),
                Ok(Err(e)) => {
                    if attempt < self.config.max_retries && (e.is_connect() || e.is_request()) {
                        retry_after = None;
                    } else {
                        return Err(ProviderError::Api(format!("request failed: {e}")));
                    }
                }
                Ok(Ok(resp)) => {
                    let status = resp.status();
                    if status.is_success() {
                        break resp;
                    }
                    let retryable = status.as_u16() == 429 || status.is_server_error();
                    if !retryable || attempt >= self.config.max_retries {
                        let text = tokio::time::timeout(idle, resp.text())
                            .await
                            .ok()
                            .and_then(Result::ok)
                            .unwrap_or_default();
                        return Err(ProviderError::Api(error_message(status.as_u16(), &text)));
                    }
                    retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .filter(|s| s.is_finite() && *s >= 0.0)
                        .map(Duration::from_secs_f64);
                }
            }
            let delay = self.backoff(attempt, retry_after);
            attempt += 1;
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
            }
        };

        let mut response = response;
        let mut buffer: Vec<u8> = Vec::new();
        loop {
            let next = tokio::select! {
                r = tokio::time::timeout(idle, response.chunk()) => r,
                _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
            };
            let bytes = match next {
                Err(_) => return Err(ProviderError::Timeout(self.config.idle_timeout_ms)),
                Ok(Err(e)) => return Err(ProviderError::Api(format!("stream failed: {e}"))),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(b))) => b,
            };
            buffer.extend_from_slice(&bytes);
            while let Some(pos) = buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buffer.drain(..=pos).collect();
                let line = String::from_utf8_lossy(&line);
                if sse_line(
                    line.trim_end_matches(['\n', '\r']),
                    sink,
                    self.config.model_info.as_ref(),
                )? {
                    return Ok(());
                }
            }
        }
        if !buffer.is_empty() {
            let line = String::from_utf8_lossy(&buffer).into_owned();
            sse_line(
                line.trim_end_matches('\r'),
                sink,
                self.config.model_info.as_ref(),
            )?;
        }
        Ok(())
    }
}

fn error_message(status: u16, body: &str) -> String {
    let detail = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error")
                .and_then(|e| e.get("message").and_then(Value::as_str).map(str::to_owned))
        })
        .unwrap_or_else(|| body.chars().take(300).collect());
    if detail.trim().is_empty() {
        format!("{status} status code (no body)")
    } else {
        format!("{status} {}", detail.trim())
    }
}

/// One line of the event stream: each `data:` line carries one JSON chunk; true at `[DONE]`.
fn sse_line(
    line: &str,
    sink: &mut (dyn FnMut(StreamChunk) + Send),
    prices: Option<&ModelInfo>,
) -> Result<bool, ProviderError> {
    match line.strip_prefix("data:") {
        Some(rest) => dispatch(rest, sink, prices),
        None => Ok(false),
    }
}

fn dispatch(
    data: &str,
    sink: &mut (dyn FnMut(StreamChunk) + Send),
    prices: Option<&ModelInfo>,
) -> Result<bool, ProviderError> {
    let data = data.trim();
    if data.is_empty() {
        return Ok(false);
    }
    if data == "[DONE]" {
        return Ok(true);
    }
    let Ok(v) = serde_json::from_str::<Value>(data) else {
        return Ok(false);
    };
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| roo_js::stringify(err));
        return Err(ProviderError::Api(msg));
    }
    if let Some(text) = v
        .get("choices")
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("delta"))
        .and_then(|d| d.get("content"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        sink(StreamChunk::Text {
            text: text.to_owned(),
        });
    }
    if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
        let input = usage
            .get("prompt_tokens")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let output = usage
            .get("completion_tokens")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let cached = usage
            .get("prompt_tokens_details")
            .and_then(|d| d.get("cached_tokens"))
            .and_then(Value::as_f64);
        let total_cost = usage.get("cost").and_then(Value::as_f64).or_else(|| {
            prices
                .map(|p| calculate_api_cost_openai(p, input, output, None, cached, None).total_cost)
        });
        sink(StreamChunk::Usage {
            input_tokens: input,
            output_tokens: output,
            cache_write_tokens: None,
            cache_read_tokens: cached,
            total_cost,
        });
    }
    Ok(false)
}

/// An Anthropic-shaped message as an OpenAI chat message: text and base64 images are kept
/// (images only for user messages); other blocks are left out.
fn to_openai_message(m: &Value) -> Value {
    let role = str_field(m, "role").unwrap_or("user");
    let content = match m.get("content") {
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(Value::Array(blocks)) => {
            if role == "user" {
                let parts: Vec<Value> = blocks
                    .iter()
                    .filter_map(|b| {
                        if is_type(b, "text") {
                            Some(json!({"type": "text", "text": str_field(b, "text").unwrap_or("")}))
                        } else if is_type(b, "image") {
                            let src = b.get("source")?;
                            let media = str_field(src, "media_type").unwrap_or("image/png");
                            let data = str_field(src, "data")?;
                            Some(json!({"type": "image_url", "image_url": {"url": format!("data:{media};base64,{data}")}}))
                        } else {
                            None
                        }
                    })
                    .collect();
                Value::Array(parts)
            } else {
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter(|b| is_type(b, "text"))
                    .filter_map(|b| str_field(b, "text"))
                    .collect();
                Value::String(texts.join("\n"))
            }
        }
        _ => Value::String(String::new()),
    };
    json!({"role": role, "content": content})
}

impl SummaryProvider for OpenAiCompatibleProvider {
    fn is_valid(&self) -> bool {
        !self.config.base_url.trim().is_empty() && !self.config.model.trim().is_empty()
    }

    fn supports_images(&self) -> bool {
        self.config.supports_images
    }

    fn create_message<'a>(
        &'a self,
        request: &'a SummaryRequest,
        sink: ChunkSink<'a>,
        cancel: &'a CancelToken,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            let total = Duration::from_millis(self.config.request_timeout_ms.max(1));
            match tokio::time::timeout(total, self.call(request, sink, cancel)).await {
                Ok(r) => r,
                Err(_) => Err(ProviderError::Timeout(self.config.request_timeout_ms)),
            }
        })
    }
}
