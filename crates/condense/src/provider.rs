//! The provider side of condensation: whatever streams a summary from a model. The manager decides;
//! a provider only answers a request (and counts tokens, when it counts differently).

use crate::tokens;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// A boxed future, as providers return them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One request to the model: a system prompt and `{role, content}` messages.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRequest {
    pub system_prompt: String,
    pub messages: Vec<Value>,
    /// Tools and tool choice, passed through untouched (`metadata` of `createMessage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// A chunk of the model's stream, as the extension's `ApiStream` yields them (the kinds that
/// matter for a summary).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum StreamChunk {
    Text {
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    Usage {
        #[serde(default)]
        input_tokens: f64,
        #[serde(default)]
        output_tokens: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_write_tokens: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_read_tokens: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total_cost: Option<f64>,
    },
}

/// Why a provider call failed. `message` is what goes into `condense_api_failed`.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ProviderError {
    #[error("{0}")]
    Api(String),
    #[error("request timed out after {0} ms")]
    Timeout(u64),
    #[error("the request was cancelled")]
    Cancelled,
}

/// A cancel flag that can also be awaited.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<CancelInner>,
}

#[derive(Debug, Default)]
struct CancelInner {
    flag: AtomicBool,
    notify: Notify,
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.inner.flag.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.flag.load(Ordering::SeqCst)
    }

    /// Resolves once `cancel` has been called (at once if it already was).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
            if self.is_cancelled() {
                return;
            }
        }
    }
}

/// Receives the stream's chunks as they arrive.
pub type ChunkSink<'a> = &'a mut (dyn FnMut(StreamChunk) + Send);

/// A model that can write a summary.
pub trait SummaryProvider: Send + Sync {
    /// False for an unusable handler (the extension's `condense_handler_invalid`).
    fn is_valid(&self) -> bool {
        true
    }

    /// Whether the model takes image input (otherwise images become a text placeholder).
    fn supports_images(&self) -> bool {
        true
    }

    /// Stream a response, feeding chunks to `sink`. An error after some chunks keeps those chunks.
    fn create_message<'a>(
        &'a self,
        request: &'a SummaryRequest,
        sink: ChunkSink<'a>,
        cancel: &'a CancelToken,
    ) -> BoxFuture<'a, Result<(), ProviderError>>;

    /// `countTokens(content)`; the default is this crate's estimate, as every provider of the
    /// extension but the VS Code LM one uses.
    fn count_tokens<'a>(&'a self, content: &'a [Value]) -> BoxFuture<'a, f64> {
        Box::pin(std::future::ready(tokens::count_tokens(content)))
    }

    /// The folded file context of the files read in the task (the extension's
    /// `generateFoldedFileContext`), asked for once a summary has come back non-empty, as the
    /// extension asks; `None` (the default) keeps the sections given in the options.
    fn folded_file_context(&self) -> BoxFuture<'_, Option<Vec<String>>> {
        Box::pin(std::future::ready(None))
    }
}

/// A provider that is not there: every request fails as an invalid handler.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProvider;

impl SummaryProvider for NoProvider {
    fn is_valid(&self) -> bool {
        false
    }

    fn create_message<'a>(
        &'a self,
        _request: &'a SummaryRequest,
        _sink: ChunkSink<'a>,
        _cancel: &'a CancelToken,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(std::future::ready(Err(ProviderError::Api(
            "no API handler".into(),
        ))))
    }
}

/// A provider that replays fixed chunks (tests, dry runs, replaying a stored summary).
#[derive(Debug, Clone, Default)]
pub struct ScriptedProvider {
    pub chunks: Vec<StreamChunk>,
    /// Fail with this message after the chunks.
    pub error: Option<String>,
    /// Fixed answer of `count_tokens` (the estimate when `None`).
    pub token_count: Option<f64>,
    pub supports_images: bool,
    /// Every request received, for inspection.
    pub requests: Arc<std::sync::Mutex<Vec<SummaryRequest>>>,
}

impl ScriptedProvider {
    pub fn new(chunks: Vec<StreamChunk>) -> Self {
        Self {
            chunks,
            supports_images: true,
            ..Self::default()
        }
    }

    /// Requests received so far.
    pub fn requests(&self) -> Vec<SummaryRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl SummaryProvider for ScriptedProvider {
    fn supports_images(&self) -> bool {
        self.supports_images
    }

    fn create_message<'a>(
        &'a self,
        request: &'a SummaryRequest,
        sink: ChunkSink<'a>,
        cancel: &'a CancelToken,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            if let Ok(mut r) = self.requests.lock() {
                r.push(request.clone());
            }
            for c in &self.chunks {
                if cancel.is_cancelled() {
                    return Err(ProviderError::Cancelled);
                }
                sink(c.clone());
            }
            match &self.error {
                Some(e) => Err(ProviderError::Api(e.clone())),
                None => Ok(()),
            }
        })
    }

    fn count_tokens<'a>(&'a self, content: &'a [Value]) -> BoxFuture<'a, f64> {
        let n = self
            .token_count
            .unwrap_or_else(|| tokens::count_tokens(content));
        Box::pin(std::future::ready(n))
    }
}
