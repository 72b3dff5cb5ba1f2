//! Running core work off the JavaScript thread, with cancellation and coded errors.

use napi::bindgen_prelude::{AbortSignal, AsyncTask};
use napi::ScopedTask;
use napi::{Env, JsError, Status, Unknown};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// An error for JavaScript: `err.code` is one of the stable codes below, `err.message` says what
/// to do about it.
#[derive(Debug, Clone)]
pub struct CodedError {
    pub code: &'static str,
    pub message: String,
}

impl CodedError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// Turn into a napi error whose JS object carries `code`.
    pub fn into_napi(self, env: &Env) -> napi::Error {
        let js = JsError::from(napi::Error::new(self.code, self.message)).into_unknown(*env);
        napi::Error::from(js)
    }

    /// For synchronous functions, where no `Env` is at hand: the code is put in front of the message.
    pub fn into_sync(self) -> napi::Error {
        napi::Error::new(
            Status::InvalidArg,
            format!("{}: {}", self.code, self.message),
        )
    }
}

pub const TASK_NOT_FOUND: &str = "TASK_NOT_FOUND";
pub const INVALID_PATH: &str = "INVALID_PATH";
pub const CORRUPT_FILE: &str = "CORRUPT_FILE";
pub const ABORTED: &str = "ABORTED";
pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";

type Work<T> = Box<dyn FnOnce(&AtomicBool) -> Result<T, CodedError> + Send>;

/// A unit of core work: runs on the libuv pool, resolves to the serialised result.
pub struct Job<T: Serialize + Send + 'static> {
    work: Option<Work<T>>,
    cancel: Arc<AtomicBool>,
}

impl<T: Serialize + Send + 'static> Job<T> {
    /// Schedule `work`; when `signal` aborts, the flag passed to `work` is set and the promise
    /// rejects with code `ABORTED`.
    pub fn spawn(
        signal: Option<AbortSignal>,
        work: impl FnOnce(&AtomicBool) -> Result<T, CodedError> + Send + 'static,
    ) -> AsyncTask<Job<T>> {
        let cancel = Arc::new(AtomicBool::new(false));
        if let Some(signal) = &signal {
            let flag = cancel.clone();
            signal.on_abort(move || flag.store(true, Ordering::SeqCst));
        }
        // The signal is not handed to napi's own cancellation: a job that has not started yet
        // still runs, sees the flag at once and rejects with `ABORTED`, so every abort looks alike.
        drop(signal);
        AsyncTask::new(Job {
            work: Some(Box::new(work)),
            cancel,
        })
    }
}

impl<'task, T: Serialize + Send + 'static> ScopedTask<'task> for Job<T> {
    type Output = Result<T, CodedError>;
    type JsValue = Unknown<'task>;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let work = self
            .work
            .take()
            .ok_or_else(|| napi::Error::new(Status::GenericFailure, "the job already ran"))?;
        if self.cancel.load(Ordering::SeqCst) {
            return Ok(Err(CodedError::new(ABORTED, "the operation was aborted")));
        }
        Ok(work(&self.cancel))
    }

    fn resolve(&mut self, env: &'task Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        if self.cancel.load(Ordering::SeqCst) {
            return Err(CodedError::new(ABORTED, "the operation was aborted").into_napi(env));
        }
        match output {
            Ok(value) => env.to_js_value(&value),
            Err(err) => Err(err.into_napi(env)),
        }
    }
}
