//! Condensation, context management, cost and tokens, under the extension's names and argument
//! shapes. Messages pass through as JSON values; the rules live in `roo-condense`.
//!
//! `manageContext` and `summarizeConversation` accept the extension's own API handler
//! (`options.apiHandler`, an object with `createMessage(systemPrompt, messages, metadata)` that
//! returns an async iterable of chunks, and optionally `countTokens(content)` and `getModel()`), or
//! `options.httpProvider` for the built-in OpenAI-compatible client. `options.signal` cancels.

use crate::error::{CodedError, ErrorCode};
use crate::job::{Job, Written};
use napi::bindgen_prelude::{
    AsyncTask, Either, FnArgs, Function, JsObjectValue, Object, ObjectRef, Promise, PromiseRaw,
    Undefined, Unknown,
};
use napi::threadsafe_function::ThreadsafeFunction;
use napi::{Env, Status};
use napi_derive::napi;
use roo_condense::provider::{BoxFuture, ChunkSink};
use roo_condense::{CancelToken, Era, ProviderError, StreamChunk, SummaryProvider, SummaryRequest};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

pub(crate) fn invalid(what: &str, e: impl std::fmt::Display) -> napi::Error {
    CodedError::new(ErrorCode::InvalidArgument, format!("{what}: {e}")).into_sync()
}

pub(crate) fn parse<T: DeserializeOwned>(what: &str, v: Value) -> napi::Result<T> {
    serde_json::from_value(v).map_err(|e| invalid(what, e))
}

pub(crate) fn messages(what: &str, v: Value) -> napi::Result<Vec<Value>> {
    match v {
        Value::Array(items) => Ok(items),
        Value::Null => Ok(Vec::new()),
        other => Err(invalid(
            what,
            format!(
                "expected an array of messages, got {}",
                roo_js::kind_of(&other)
            ),
        )),
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct EraOption {
    era: Option<Era>,
}

pub(crate) fn era_of(options: Option<Value>) -> napi::Result<Era> {
    match options {
        None | Some(Value::Null) => Ok(Era::HEAD),
        Some(v) => Ok(parse::<EraOption>("options", v)?.era.unwrap_or(Era::HEAD)),
    }
}

// ------------------------------------------------------------------ tokens

/// `tiktoken(content)`: o200k_base estimate of content blocks, ×1.5 once.
#[napi(
    catch_unwind,
    ts_args_type = "content: ContentBlock[]",
    ts_return_type = "Promise<number>"
)]
pub fn tiktoken(content: Value) -> napi::Result<AsyncTask<Job<f64>>> {
    let blocks = messages("content", content)?;
    Ok(Job::spawn(None, move |_| {
        Ok(roo_condense::tiktoken(&blocks))
    }))
}

/// `countTokens(content)`: what every provider's `countTokens` returns (0 for no blocks).
#[napi(
    catch_unwind,
    ts_args_type = "content: ContentBlock[]",
    ts_return_type = "Promise<number>"
)]
pub fn count_tokens(content: Value) -> napi::Result<AsyncTask<Job<f64>>> {
    let blocks = messages("content", content)?;
    Ok(Job::spawn(None, move |_| {
        Ok(roo_condense::count_tokens(&blocks))
    }))
}

/// `countTokens` on the calling thread.
#[napi(catch_unwind, ts_args_type = "content: ContentBlock[]")]
pub fn count_tokens_sync(content: Value) -> napi::Result<f64> {
    Ok(roo_condense::count_tokens(&messages("content", content)?))
}

// ------------------------------------------------------------------ cost

/// `calculateApiCostAnthropic(modelInfo, inputTokens, outputTokens, cacheWrites?, cacheReads?)`:
/// `inputTokens` excludes cache tokens.
#[napi(
    catch_unwind,
    ts_args_type = "modelInfo: ModelPricing, inputTokens: number, outputTokens: number, cacheCreationInputTokens?: number | null, cacheReadInputTokens?: number | null",
    ts_return_type = "ApiCostResult"
)]
pub fn calculate_api_cost_anthropic<'env>(
    env: &'env Env,
    model_info: Value,
    input_tokens: f64,
    output_tokens: f64,
    cache_creation_input_tokens: Option<f64>,
    cache_read_input_tokens: Option<f64>,
) -> napi::Result<Object<'env>> {
    let info: roo_condense::ModelInfo = parse("modelInfo", model_info)?;
    cost_object(
        env,
        &roo_condense::calculate_api_cost_anthropic(
            &info,
            input_tokens,
            output_tokens,
            cache_creation_input_tokens,
            cache_read_input_tokens,
        ),
    )
}

/// `calculateApiCostOpenAI(modelInfo, inputTokens, outputTokens, cacheWrites?, cacheReads?,
/// serviceTier?)`: `inputTokens` includes cache tokens; long-context pricing applies.
#[napi(
    catch_unwind,
    js_name = "calculateApiCostOpenAI",
    ts_args_type = "modelInfo: ModelPricing, inputTokens: number, outputTokens: number, cacheCreationInputTokens?: number | null, cacheReadInputTokens?: number | null, serviceTier?: 'default' | 'flex' | 'priority' | string | null",
    ts_return_type = "ApiCostResult"
)]
pub fn calculate_api_cost_openai<'env>(
    env: &'env Env,
    model_info: Value,
    input_tokens: f64,
    output_tokens: f64,
    cache_creation_input_tokens: Option<f64>,
    cache_read_input_tokens: Option<f64>,
    service_tier: Option<String>,
) -> napi::Result<Object<'env>> {
    let info: roo_condense::ModelInfo = parse("modelInfo", model_info)?;
    cost_object(
        env,
        &roo_condense::calculate_api_cost_openai(
            &info,
            input_tokens,
            output_tokens,
            cache_creation_input_tokens,
            cache_read_input_tokens,
            service_tier.as_deref(),
        ),
    )
}

/// `calculateApiCostOpenAI` for the `openai` protocol, `calculateApiCostAnthropic` for any other
/// (the protocol a task's records name: `apiProtocolOfRecords`).
#[napi(
    catch_unwind,
    ts_args_type = "protocol: string, modelInfo: ModelPricing, inputTokens: number, outputTokens: number, cacheCreationInputTokens?: number | null, cacheReadInputTokens?: number | null",
    ts_return_type = "ApiCostResult"
)]
pub fn calculate_api_cost_for_protocol<'env>(
    env: &'env Env,
    protocol: String,
    model_info: Value,
    input_tokens: f64,
    output_tokens: f64,
    cache_creation_input_tokens: Option<f64>,
    cache_read_input_tokens: Option<f64>,
) -> napi::Result<Object<'env>> {
    let info: roo_condense::ModelInfo = parse("modelInfo", model_info)?;
    cost_object(
        env,
        &roo_condense::calculate_api_cost_for_protocol(
            &protocol,
            &info,
            input_tokens,
            output_tokens,
            cache_creation_input_tokens,
            cache_read_input_tokens,
        ),
    )
}

/// The cost as a plain JS object whose numbers are set directly, so `NaN` and `Infinity` (a `NaN`
/// token count, as JavaScript arithmetic would give) stay numbers instead of becoming `null`.
fn cost_object<'env>(
    env: &'env Env,
    r: &roo_condense::ApiCostResult,
) -> napi::Result<Object<'env>> {
    let mut o = Object::new(env)?;
    o.set("totalInputTokens", r.total_input_tokens)?;
    o.set("totalOutputTokens", r.total_output_tokens)?;
    o.set("totalCost", r.total_cost)?;
    Ok(o)
}

/// `parseApiPrice(price)`: a per-token price string → USD per million tokens.
#[napi(
    catch_unwind,
    ts_args_type = "price: string | number | null | undefined"
)]
pub fn parse_api_price(price: Option<Value>) -> Either<f64, Undefined> {
    or_undefined(roo_condense::cost::parse_api_price(price.as_ref()))
}

fn or_undefined(v: Option<f64>) -> Either<f64, Undefined> {
    match v {
        Some(f) => Either::A(f),
        None => Either::B(()),
    }
}

/// `getApiMetrics(messages)`: a task's totals from its UI messages. `options.era` below 3.29.5
/// adds cache tokens to an Anthropic-protocol record's context size, as those releases did.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ClineMessage[], options?: EraOptions",
    ts_return_type = "TokenUsage"
)]
pub fn get_api_metrics<'env>(
    env: &'env Env,
    messages_in: Value,
    options: Option<Value>,
) -> napi::Result<Unknown<'env>> {
    let era = era_of(options)?;
    crate::to_js(
        env,
        &roo_condense::cost::get_api_metrics_era(&messages("messages", messages_in)?, era),
    )
}

/// `consolidateTokenUsage(messages)`: the same function under its package name.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ClineMessage[], options?: EraOptions",
    ts_return_type = "TokenUsage"
)]
pub fn consolidate_token_usage<'env>(
    env: &'env Env,
    messages_in: Value,
    options: Option<Value>,
) -> napi::Result<Unknown<'env>> {
    get_api_metrics(env, messages_in, options)
}

/// A task's usage as HistoryItem and `getTokenUsage()` compute it (first message left out,
/// commands and legacy request pairs combined).
#[napi(
    catch_unwind,
    ts_args_type = "messages: ClineMessage[], options?: EraOptions",
    ts_return_type = "TokenUsage"
)]
pub fn get_task_token_usage<'env>(
    env: &'env Env,
    messages_in: Value,
    options: Option<Value>,
) -> napi::Result<Unknown<'env>> {
    let era = era_of(options)?;
    crate::to_js(
        env,
        &roo_condense::cost::task_token_usage(&messages("messages", messages_in)?, era),
    )
}

/// The release whose context rules wrote a task's UI records, when they show it: `3.28.0` for
/// records that carry the request inside `api_req_started` (a text starting with `{"request"`);
/// `undefined` otherwise (today's rules).
#[napi(
    catch_unwind,
    ts_args_type = "messages: ClineMessage[]",
    ts_return_type = "string | undefined"
)]
pub fn era_of_records(messages_in: Value) -> napi::Result<Either<String, Undefined>> {
    let ui = messages("messages", messages_in)?;
    Ok(match roo_condense::era_of_records(&ui) {
        Some(era) => Either::A(era.to_string()),
        None => Either::B(()),
    })
}

/// The protocol a task's provider spoke: the `apiProtocol` of its last `api_req_started` record,
/// else `anthropic`.
#[napi(catch_unwind, ts_args_type = "messages: ClineMessage[]")]
pub fn api_protocol_of_records(messages_in: Value) -> napi::Result<String> {
    Ok(roo_condense::api_protocol(&messages(
        "messages",
        messages_in,
    )?))
}

/// `combineApiRequests(messages)`.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ClineMessage[]",
    ts_return_type = "ClineMessage[]"
)]
pub fn combine_api_requests(messages_in: Value) -> napi::Result<Vec<Value>> {
    Ok(roo_condense::cost::combine_api_requests(&messages(
        "messages",
        messages_in,
    )?))
}

/// `combineCommandSequences(messages)`.
#[napi(
    catch_unwind,
    ts_args_type = "messages: ClineMessage[]",
    ts_return_type = "ClineMessage[]"
)]
pub fn combine_command_sequences(messages_in: Value) -> napi::Result<Vec<Value>> {
    Ok(roo_condense::cost::combine_command_sequences(&messages(
        "messages",
        messages_in,
    )?))
}

/// `isContextManagementEvent(value)`.
#[napi(catch_unwind, ts_args_type = "value: unknown")]
pub fn is_context_management_event(value: Option<Value>) -> bool {
    roo_condense::cost::is_context_management_event(value.as_ref())
}

/// `CONTEXT_MANAGEMENT_EVENTS`.
#[napi(
    catch_unwind,
    ts_return_type = "Array<'condense_context' | 'condense_context_error' | 'sliding_window_truncation'>"
)]
pub fn context_management_events() -> Vec<String> {
    roo_condense::cost::CONTEXT_MANAGEMENT_EVENTS
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MaxOutputIn {
    #[serde(default)]
    model_id: String,
    #[serde(default)]
    model: Value,
    #[serde(default)]
    settings: Option<Value>,
    #[serde(default)]
    format: Option<String>,
}

/// `getModelMaxOutputTokens({modelId, model, settings, format})`.
#[napi(
    catch_unwind,
    ts_args_type = "options: { modelId: string; model: ModelPricing & { maxTokens?: number | null; contextWindow?: number; supportsReasoningBudget?: boolean; requiredReasoningBudget?: boolean }; settings?: { enableReasoningEffort?: boolean; modelMaxTokens?: number; [key: string]: JsonValue | undefined }; format?: string }",
    ts_return_type = "number | undefined"
)]
pub fn get_model_max_output_tokens(options: Value) -> napi::Result<Either<f64, Undefined>> {
    let o: MaxOutputIn = parse("options", options)?;
    Ok(or_undefined(
        roo_condense::model::get_model_max_output_tokens(&roo_condense::model::MaxOutputArgs {
            model_id: &o.model_id,
            model: &o.model,
            settings: o.settings.as_ref(),
            format: o.format.as_deref(),
        }),
    ))
}

// ------------------------------------------------------------------ decisions

/// The threshold that applies to a profile, with a warning when the profile's is invalid.
#[napi(
    catch_unwind,
    ts_args_type = "autoCondenseContextPercent: number, profileThresholds: Record<string, number>, currentProfileId: string",
    ts_return_type = "EffectiveThreshold"
)]
pub fn get_effective_threshold<'env>(
    env: &'env Env,
    auto_condense_context_percent: f64,
    profile_thresholds: Value,
    current_profile_id: String,
) -> napi::Result<Unknown<'env>> {
    let map = match profile_thresholds {
        Value::Object(m) => m,
        Value::Null => serde_json::Map::new(),
        other => {
            return Err(invalid(
                "profileThresholds",
                format!("expected an object, got {}", roo_js::kind_of(&other)),
            ))
        }
    };
    crate::to_js(
        env,
        &roo_condense::effective_threshold(
            auto_condense_context_percent,
            &map,
            &current_profile_id,
        ),
    )
}

/// `allowedTokens = contextWindow × (1 − 0.1) − reserve`: `maxTokens` when above zero, else 8 192
/// (`options.era` below 3.66: any non-zero `maxTokens`, as `maxTokens || 8192`).
#[napi(
    catch_unwind,
    ts_args_type = "contextWindow: number, maxTokens?: number | null, options?: EraOptions"
)]
pub fn get_allowed_tokens(
    context_window: f64,
    max_tokens: Option<f64>,
    options: Option<Value>,
) -> napi::Result<f64> {
    Ok(roo_condense::allowed_tokens_in(
        context_window,
        max_tokens,
        era_of(options)?,
    ))
}

/// `willManageContext(options)`.
#[napi(catch_unwind, ts_args_type = "options: WillManageContextOptions")]
pub fn will_manage_context(options: Value) -> napi::Result<bool> {
    let o: roo_condense::WillManageContextOptions = parse("options", options)?;
    Ok(roo_condense::will_manage_context(&o))
}

// The JavaScript half of the handler bridge (`js/condense-bridge.js`): strips the options to plain
// data, listens to the signal, and wraps the handler so each call resolves (never rejects) with
// plain data.
const BRIDGE: &str = include_str!("../js/condense-bridge.js");

/// What the binding keeps per JavaScript environment: the bridge function, evaluated once.
#[derive(Default)]
struct EnvData {
    /// `{ bridge }`, the object holding the function (a reference that lives as long as the
    /// environment).
    bridge: Option<ObjectRef<false>>,
}

/// The bridge function of this environment, evaluating `js/condense-bridge.js` on first use.
fn bridge_fn<'e>(env: &'e Env) -> napi::Result<BridgeFn<'e>> {
    if env.get_instance_data::<EnvData>()?.is_none() {
        env.set_instance_data(EnvData::default(), (), |_| {})?;
    }
    let data = env
        .get_instance_data::<EnvData>()?
        .ok_or_else(|| napi::Error::from_reason("the binding's environment data is missing"))?;
    let holder = match &data.bridge {
        Some(holder) => holder.get_value(env)?,
        None => {
            let function: Unknown = env.run_script(BRIDGE)?;
            let mut holder = Object::new(env)?;
            holder.set_named_property("bridge", function)?;
            data.bridge = Some(holder.create_ref::<false>()?);
            holder
        }
    };
    holder.get_named_property("bridge")
}

type BridgeFn<'a> = Function<'a, FnArgs<(Object<'a>, Function<'a, (), ()>)>, Object<'a>>;
type StreamFn = ThreadsafeFunction<Value, Promise<Value>, Value, Status, false>;
type CountFn = ThreadsafeFunction<Value, Promise<f64>, Value, Status, false>;

/// A provider that calls the extension's API handler on the JavaScript thread.
struct JsHandlerProvider {
    stream: StreamFn,
    count: Option<CountFn>,
    /// `options.foldFileContext`, asked once a summary has come back.
    fold: Option<StreamFn>,
    supports_images: bool,
}

#[derive(Deserialize)]
struct StreamOutcome {
    #[serde(default)]
    chunks: Vec<StreamChunk>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    aborted: bool,
}

impl SummaryProvider for JsHandlerProvider {
    fn supports_images(&self) -> bool {
        self.supports_images
    }

    fn create_message<'a>(
        &'a self,
        request: &'a SummaryRequest,
        sink: ChunkSink<'a>,
        _cancel: &'a CancelToken,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            let req =
                serde_json::to_value(request).map_err(|e| ProviderError::Api(e.to_string()))?;
            let promise = self
                .stream
                .call_async_catch(req)
                .await
                .map_err(|e| ProviderError::Api(e.reason.clone()))?;
            let value = promise
                .await
                .map_err(|e| ProviderError::Api(e.reason.clone()))?;
            let outcome: StreamOutcome = serde_json::from_value(value)
                .map_err(|e| ProviderError::Api(format!("unexpected stream chunk: {e}")))?;
            for chunk in outcome.chunks {
                sink(chunk);
            }
            if outcome.aborted {
                return Err(ProviderError::Cancelled);
            }
            match outcome.error {
                Some(e) => Err(ProviderError::Api(e)),
                None => Ok(()),
            }
        })
    }

    fn count_tokens<'a>(&'a self, content: &'a [Value]) -> BoxFuture<'a, f64> {
        Box::pin(async move {
            let Some(count) = &self.count else {
                return roo_condense::count_tokens(content);
            };
            if content.is_empty() {
                return 0.0;
            }
            let counted = async {
                let p = count
                    .call_async_catch(Value::Array(content.to_vec()))
                    .await
                    .ok()?;
                p.await.ok()
            };
            match counted.await {
                Some(n) if n >= 0.0 => n,
                _ => roo_condense::count_tokens(content),
            }
        })
    }

    fn folded_file_context(&self) -> BoxFuture<'_, Option<Vec<String>>> {
        Box::pin(async move {
            let fold = self.fold.as_ref()?;
            let promise = fold.call_async_catch(Value::Null).await.ok()?;
            let sections = promise.await.ok()?;
            serde_json::from_value(sections).ok()
        })
    }
}

struct Bridged {
    data: Value,
    provider: Box<dyn SummaryProvider>,
    cancel: CancelToken,
}

/// Run the bridge on the JS thread: plain options, the provider, and a cancel token tied to
/// `options.signal`.
fn bridge(env: &Env, options: Object) -> napi::Result<Bridged> {
    let cancel = CancelToken::new();
    let token = cancel.clone();
    let on_abort = env.create_function_from_closure::<(), (), _>("onAbort", move |_| {
        token.cancel();
        Ok(())
    })?;
    let factory = bridge_fn(env)?;
    let out = factory.call((options, on_abort).into())?;
    let data: Value = out.get("data")?.unwrap_or(Value::Null);
    let stream: Option<Function<Value, Promise<Value>>> = out.get("stream")?;
    let provider: Box<dyn SummaryProvider> = match stream {
        Some(stream) => {
            let count: Option<Function<Value, Promise<f64>>> = out.get("count")?;
            let count = match count {
                Some(f) => Some(f.build_threadsafe_function::<Value>().build()?),
                None => None,
            };
            let fold: Option<Function<Value, Promise<Value>>> = out.get("fold")?;
            let fold = match fold {
                Some(f) => Some(f.build_threadsafe_function::<Value>().build()?),
                None => None,
            };
            Box::new(JsHandlerProvider {
                stream: stream.build_threadsafe_function::<Value>().build()?,
                count,
                fold,
                supports_images: out.get::<bool>("supportsImages")?.unwrap_or(true),
            })
        }
        None => match data.get("httpProvider").filter(|v| !v.is_null()) {
            Some(cfg) => {
                let cfg: roo_condense::OpenAiCompatibleConfig =
                    parse("options.httpProvider", cfg.clone())?;
                Box::new(roo_condense::OpenAiCompatibleProvider::new(cfg))
            }
            None => Box::new(roo_condense::NoProvider),
        },
    };
    Ok(Bridged {
        data,
        provider,
        cancel,
    })
}

/// `fut` run on the tokio runtime, its result written to JavaScript by [`crate::to_js`].
fn spawn<'env, T, F>(env: &'env Env, fut: F) -> napi::Result<PromiseRaw<'env, Written<T>>>
where
    T: serde::Serialize + Send + 'static,
    F: std::future::Future<Output = Result<T, roo_condense::Cancelled>> + Send + 'static,
{
    env.spawn_future_with_callback(async move { Ok(fut.await) }, |env, out| match out {
        Ok(v) => Ok(Written(v)),
        Err(_) => Err(CodedError::aborted().into_napi(env)),
    })
}

/// The decision of `manageContext` (nothing, summarise or truncate), without calling a model;
/// counts with this package's estimate.
#[napi(
    catch_unwind,
    ts_args_type = "options: ManageContextOptions",
    ts_return_type = "ContextDecision"
)]
pub fn decide_context<'env>(env: &'env Env, options: Object) -> napi::Result<Unknown<'env>> {
    let b = bridge(env, options)?;
    let o: roo_condense::ManageContextOptions = parse("options", b.data)?;
    crate::to_js(env, &roo_condense::decide_context(&o))
}

/// `manageContext(options)`: summarise at the threshold (falling back to truncation when that
/// fails and the context is over the limit), truncate over the limit, else nothing.
#[napi(
    catch_unwind,
    ts_args_type = "options: ManageContextOptions",
    ts_return_type = "Promise<ContextManagementResult>"
)]
pub fn manage_context<'env>(
    env: &'env Env,
    options: Object,
) -> napi::Result<PromiseRaw<'env, Written<roo_condense::ContextManagementResult>>> {
    let b = bridge(env, options)?;
    let o: roo_condense::ManageContextOptions = parse("options", b.data)?;
    let (provider, cancel) = (b.provider, b.cancel);
    spawn(env, async move {
        roo_condense::manage_context(&o, provider.as_ref(), &cancel).await
    })
}

/// `summarizeConversation(options)`: a fresh-start summary appended to the history (or the
/// older eras' shapes), with the extension's error keys.
#[napi(
    catch_unwind,
    ts_args_type = "options: SummarizeConversationOptions",
    ts_return_type = "Promise<SummarizeResponse>"
)]
pub fn summarize_conversation<'env>(
    env: &'env Env,
    options: Object,
) -> napi::Result<PromiseRaw<'env, Written<roo_condense::SummarizeResponse>>> {
    let b = bridge(env, options)?;
    let o: roo_condense::SummarizeOptions = parse("options", b.data)?;
    let (provider, cancel) = (b.provider, b.cancel);
    spawn(env, async move {
        roo_condense::summarize_conversation(&o, provider.as_ref(), &cancel).await
    })
}
