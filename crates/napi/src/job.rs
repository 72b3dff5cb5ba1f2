//! Running core work off the JavaScript thread, with cancellation and coded errors.

use crate::error::CodedError;
use napi::bindgen_prelude::{AbortSignal, AsyncTask};
use napi::ScopedTask;
use napi::{Env, Status, Unknown};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// An `AbortSignal` argument together with whether it was already aborted when the call was made
/// (napi's `AbortSignal` only reports aborts that happen later). Declare fields and parameters of
/// this type with `ts_type = "AbortSignal"`.
pub struct Signal {
    inner: AbortSignal,
    aborted: bool,
}

impl napi::bindgen_prelude::TypeName for Signal {
    fn type_name() -> &'static str {
        "AbortSignal"
    }

    fn value_type() -> napi::ValueType {
        napi::ValueType::Object
    }
}

impl napi::bindgen_prelude::ValidateNapiValue for Signal {}

impl Signal {
    /// The signal `inner`, already aborted or not (its conversion is in [`crate::sys`]).
    pub(crate) fn new(inner: AbortSignal, aborted: bool) -> Self {
        Signal { inner, aborted }
    }
}

type Work<T> = Box<dyn FnOnce(&AtomicBool) -> Result<T, CodedError> + Send>;

/// A flag set when `signal` aborts (set at once when it had already aborted).
pub(crate) fn cancel_flag(signal: Option<Signal>) -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    if let Some(signal) = signal {
        if signal.aborted {
            cancel.store(true, Ordering::SeqCst);
        }
        let flag = cancel.clone();
        signal
            .inner
            .on_abort(move || flag.store(true, Ordering::SeqCst));
    }
    cancel
}

/// A unit of core work: runs on the libuv pool, resolves to the result converted by its
/// [`ToJs`] ([`crate::to_js`] by default).
pub struct Job<T: Send + 'static> {
    work: Option<Work<T>>,
    cancel: Arc<AtomicBool>,
    to_js: ToJs<T>,
}

/// How a job's result becomes a JavaScript value, on the JavaScript thread.
pub type ToJs<T> = for<'e> fn(&'e Env, T) -> napi::Result<Unknown<'e>>;

fn serialized<'e, T: Serialize>(env: &'e Env, value: T) -> napi::Result<Unknown<'e>> {
    crate::to_js(env, &value)
}

impl<T: Serialize + Send + 'static> Job<T> {
    /// Schedule `work`; when `signal` aborts, or had aborted before the call, the flag passed to
    /// `work` is set and the promise rejects with code `ABORTED`.
    pub fn spawn(
        signal: Option<Signal>,
        work: impl FnOnce(&AtomicBool) -> Result<T, CodedError> + Send + 'static,
    ) -> AsyncTask<Job<T>> {
        Job::spawn_with(signal, work, serialized::<T>)
    }
}

impl<T: Send + 'static> Job<T> {
    /// [`Job::spawn`] with the result converted by `to_js` instead of serialised as a whole.
    pub fn spawn_with(
        signal: Option<Signal>,
        work: impl FnOnce(&AtomicBool) -> Result<T, CodedError> + Send + 'static,
        to_js: ToJs<T>,
    ) -> AsyncTask<Job<T>> {
        crate::mark_js_thread();
        let cancel = cancel_flag(signal);
        // The signal is not handed to napi's own cancellation: a job that has not started yet
        // still runs, sees the flag at once and rejects with `ABORTED`, so every abort looks alike.
        AsyncTask::new(Job {
            work: Some(Box::new(work)),
            cancel,
            to_js,
        })
    }
}

impl<'task, T: Send + 'static> ScopedTask<'task> for Job<T> {
    type Output = Result<T, CodedError>;
    type JsValue = Unknown<'task>;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let work = self
            .work
            .take()
            .ok_or_else(|| napi::Error::new(Status::GenericFailure, "the job already ran"))?;
        if self.cancel.load(Ordering::SeqCst) {
            return Ok(Err(CodedError::aborted()));
        }
        let cancel = &self.cancel;
        Ok(crate::panics::caught(|| work(cancel)))
    }

    fn resolve(&mut self, env: &'task Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        if self.cancel.load(Ordering::SeqCst) {
            return Err(CodedError::aborted().into_napi(env));
        }
        match output {
            Ok(value) => (self.to_js)(env, value),
            Err(err) => Err(err.into_napi(env)),
        }
    }
}

/// A result an `async fn` of the binding resolves to, converted by [`crate::to_js`] (the writer the
/// jobs use) when napi hands it to JavaScript. Such functions run their work on the tokio runtime's
/// blocking threads, not on the libuv pool, which stays free for the caller's own file requests.
/// (Its conversion is in [`crate::sys`].)
pub struct Written<T>(pub T);

/// Runs `work` on the tokio runtime's blocking threads and resolves to its result, written to
/// JavaScript by [`crate::to_js`]; a failure rejects with its code in front of the message.
pub async fn blocking<T, F>(work: F) -> napi::Result<Written<T>>
where
    T: Serialize + Send + 'static,
    F: FnOnce() -> Result<T, CodedError> + Send + 'static,
{
    match napi::bindgen_prelude::spawn_blocking(|| crate::panics::caught(work)).await {
        Ok(Ok(value)) => Ok(Written(value)),
        // No `Env` here to hang the code on the error object: it leads the message instead.
        Ok(Err(err)) => Err(err.into_sync()),
        Err(join) => Err(napi::Error::new(Status::GenericFailure, join.to_string())),
    }
}
