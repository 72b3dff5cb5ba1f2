//! An OpenAI-compatible embeddings service (`POST <base>/embeddings`): OpenAI itself, and the
//! servers that speak the same wire format (Ollama, vLLM, text-embeddings-inference, LM Studio).
//!
//! Texts go in batches; 429 and 5xx answers, timeouts and refused connections are retried with
//! exponential backoff (honouring `Retry-After`); every vector is checked against the expected
//! dimension, so a service that changed models is caught instead of corrupting the index.

use super::{Embedder, EmbedderId, Purpose};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use std::time::Duration;

/// Settings of the HTTP embedder. Unset fields come from the environment, then the defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpConfig {
    /// `EMBEDDING_API_BASE_URL`, `OPENAI_BASE_URL`, else `https://api.openai.com/v1`. A URL that
    /// ends in `/embeddings` is used as is; one ending in `/v1` gets `/embeddings`; any other gets
    /// `/v1/embeddings`.
    pub base_url: Option<String>,
    /// `EMBEDDING_MODEL`, else `text-embedding-3-small`.
    pub model: Option<String>,
    /// `EMBEDDING_DIMENSIONS`; when set, it is sent as `dimensions` and enforced on answers.
    /// Unset: the service's own dimension, learnt from its first answer.
    pub dimensions: Option<usize>,
    /// `EMBEDDING_API_KEY`, else `OPENAI_API_KEY` (never saved with the index).
    #[serde(skip)]
    pub api_key: Option<String>,
    /// Texts per request (default 64).
    pub batch_size: Option<usize>,
    /// Per-request timeout in ms (default 30 000).
    pub timeout_ms: Option<u64>,
    /// Retries after a 429/5xx/timeout (default 5).
    pub max_retries: Option<u32>,
    /// First backoff delay in ms, doubled on each retry (default 500).
    pub retry_base_ms: Option<u64>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl HttpConfig {
    /// Everything from the environment.
    pub fn from_env() -> Self {
        Self::default().with_env()
    }

    /// Fill unset fields from the environment.
    pub fn with_env(mut self) -> Self {
        if self.base_url.is_none() {
            self.base_url = env("EMBEDDING_API_BASE_URL").or_else(|| env("OPENAI_BASE_URL"));
        }
        if self.model.is_none() {
            self.model = env("EMBEDDING_MODEL");
        }
        if self.dimensions.is_none() {
            self.dimensions = env("EMBEDDING_DIMENSIONS").and_then(|d| d.trim().parse().ok());
        }
        if self.api_key.is_none() {
            self.api_key = env("EMBEDDING_API_KEY").or_else(|| env("OPENAI_API_KEY"));
        }
        self
    }

    /// The endpoint URL.
    pub fn endpoint(&self) -> String {
        let base = self
            .base_url
            .clone()
            .unwrap_or_else(|| "https://api.openai.com/v1".to_owned());
        let base = base.trim().trim_end_matches('/');
        if base.ends_with("/embeddings") {
            base.to_owned()
        } else if base.ends_with("/v1") {
            format!("{base}/embeddings")
        } else {
            format!("{base}/v1/embeddings")
        }
    }

    pub fn model_name(&self) -> String {
        self.model
            .clone()
            .unwrap_or_else(|| "text-embedding-3-small".to_owned())
    }
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    input: &'a [&'a str],
    encoding_format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    dimensions: Option<usize>,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

/// The HTTP embedder.
pub struct HttpEmbedder {
    config: HttpConfig,
    endpoint: String,
    model: String,
    client: reqwest::blocking::Client,
    dimension: OnceLock<usize>,
}

/// Install the process-wide TLS provider (ring) once; reqwest is built without its own.
pub(crate) fn ensure_tls_provider() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // Fails only when a provider is already installed, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl HttpEmbedder {
    pub fn new(config: HttpConfig) -> Result<Self> {
        let config = config.with_env();
        let endpoint = config.endpoint();
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(Error::InvalidArgument(format!(
                "the embeddings base URL must start with http:// or https://, not `{endpoint}`"
            )));
        }
        if config.dimensions == Some(0) {
            return Err(Error::InvalidArgument(
                "embedding dimensions must be at least 1".to_owned(),
            ));
        }
        ensure_tls_provider();
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_millis(config.timeout_ms.unwrap_or(30_000)))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::Embedding {
                url: endpoint.clone(),
                message: format!("the HTTP client could not be built: {e}"),
            })?;
        let dimension = OnceLock::new();
        if let Some(d) = config.dimensions {
            let _ = dimension.set(d);
        }
        Ok(Self {
            model: config.model_name(),
            endpoint,
            config,
            client,
            dimension,
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn fail(&self, message: impl Into<String>) -> Error {
        Error::Embedding {
            url: self.endpoint.clone(),
            message: message.into(),
        }
    }

    /// One request, retried on 429/5xx/timeouts.
    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let body = Request {
            model: &self.model,
            input: texts,
            encoding_format: "float",
            dimensions: self.config.dimensions,
        };
        let max_retries = self.config.max_retries.unwrap_or(5);
        let base = self.config.retry_base_ms.unwrap_or(500);
        let mut attempt = 0u32;
        loop {
            let mut req = self.client.post(&self.endpoint).json(&body);
            if let Some(key) = &self.config.api_key {
                req = req.bearer_auth(key);
            }
            let outcome = req.send();
            let (retry, message, wait_hint) = match outcome {
                Ok(resp) => {
                    let status = resp.status();
                    if status.is_success() {
                        let text = resp
                            .text()
                            .map_err(|e| self.fail(format!("the answer could not be read: {e}")))?;
                        return self.parse(&text, texts.len());
                    }
                    let retry_after = resp
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(|s| Duration::from_secs(s.min(30)));
                    let body = resp.text().unwrap_or_default();
                    let excerpt: String = body.chars().take(300).collect();
                    let retry = status.as_u16() == 429 || status.is_server_error();
                    let hint = match status.as_u16() {
                        401 | 403 => " (check EMBEDDING_API_KEY / OPENAI_API_KEY)",
                        404 => " (check the base URL and the model name)",
                        _ => "",
                    };
                    (
                        retry,
                        format!("HTTP {status}{hint}: {excerpt}"),
                        retry_after,
                    )
                }
                Err(e) => {
                    let retry = e.is_timeout() || e.is_connect();
                    (retry, format!("{e}"), None)
                }
            };
            if !retry || attempt >= max_retries {
                let tries = if attempt > 0 {
                    format!(" (after {} attempts)", attempt + 1)
                } else {
                    String::new()
                };
                return Err(self.fail(format!("{message}{tries}")));
            }
            let backoff = Duration::from_millis(base.saturating_mul(1u64 << attempt.min(6)))
                .min(Duration::from_secs(20));
            std::thread::sleep(wait_hint.unwrap_or(backoff));
            attempt += 1;
        }
    }

    fn parse(&self, text: &str, expected: usize) -> Result<Vec<Vec<f32>>> {
        let resp: Response = serde_json::from_str(text).map_err(|e| {
            let excerpt: String = text.chars().take(200).collect();
            self.fail(format!(
                "the answer is not an embeddings response ({e}): {excerpt}"
            ))
        })?;
        if resp.data.len() != expected {
            return Err(self.fail(format!(
                "{expected} texts were sent but {} vectors came back",
                resp.data.len()
            )));
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
        for (pos, item) in resp.data.into_iter().enumerate() {
            let at = item.index.unwrap_or(pos);
            match slots.get_mut(at) {
                Some(slot @ None) => *slot = Some(item.embedding),
                _ => {
                    return Err(
                        self.fail(format!("the answer holds a wrong or repeated index {at}"))
                    )
                }
            }
        }
        let mut out = Vec::with_capacity(expected);
        for v in slots.into_iter().flatten() {
            let want = *self.dimension.get_or_init(|| v.len());
            if v.len() != want || v.is_empty() {
                return Err(Error::DimensionMismatch {
                    expected: want,
                    got: v.len(),
                    context: format!("model {} at {}", self.model, self.endpoint),
                });
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(self.fail("the answer holds a vector with NaN or infinite values"));
            }
            let mut v = v;
            super::normalize(&mut v);
            out.push(v);
        }
        Ok(out)
    }
}

impl Embedder for HttpEmbedder {
    fn id(&self) -> Result<EmbedderId> {
        let dimension = match self.dimension.get() {
            Some(d) => *d,
            None => {
                // Learn the dimension from one short request.
                let v = self.request(&["dimension probe"])?;
                v.first().map_or(0, Vec::len)
            }
        };
        Ok(EmbedderId {
            kind: "http".to_owned(),
            model: self.model.clone(),
            dimension,
        })
    }

    fn embed(&self, texts: &[&str], _purpose: Purpose) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch_size()) {
            out.extend(self.request(batch)?);
        }
        Ok(out)
    }

    fn batch_size(&self) -> usize {
        self.config.batch_size.unwrap_or(64).clamp(1, 2048)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_follow_the_openai_base_url_rule() {
        let mk = |b: &str| HttpConfig {
            base_url: Some(b.to_owned()),
            ..HttpConfig::default()
        };
        assert_eq!(
            mk("http://h:11434/v1").endpoint(),
            "http://h:11434/v1/embeddings"
        );
        assert_eq!(
            mk("http://h:8080/").endpoint(),
            "http://h:8080/v1/embeddings"
        );
        assert_eq!(
            mk("http://h/x/embeddings").endpoint(),
            "http://h/x/embeddings"
        );
    }
}
