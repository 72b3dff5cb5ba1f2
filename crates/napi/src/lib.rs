//! Node-API binding of roo-state-core.
//!
//! Each exported function converts its arguments, schedules one core call off the JavaScript
//! thread and converts the result. Roo semantics live in the core crates, never here. One file per
//! area; the public TypeScript types of each area are in `types/<area>.d.ts`.

#![deny(clippy::all)]

/// Every allocation of the addon goes through mimalloc (see `Cargo.toml`); memory is never handed
/// to or freed by JavaScript's allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Freed memory goes back to the system at once rather than after mimalloc's default delay: a
/// store opened or refreshed frees large buffers (cache data, parsed files) just before it builds
/// what it keeps, and returning them first keeps the peak resident size below the system
/// allocator's. `MIMALLOC_PURGE_DELAY` in the environment still decides when it is set. The
/// thread loading the addon runs JavaScript (see [`progress_fn`]).
#[napi_derive::module_init]
fn init_allocator() {
    mark_js_thread();
    panics::install();
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        sys::purge_at_once();
    }
}

/// A serialisable value as JavaScript, built value by value, with every number a `number`
/// ([`js_value::JsWriter`]; a result converted in parts can share one writer, and with it the
/// property names it has created).
pub(crate) fn to_js<'e, T: serde::Serialize + ?Sized>(
    env: &'e napi::Env,
    value: &T,
) -> napi::Result<napi::Unknown<'e>> {
    js_value::JsWriter::new(env).write(value)
}

/// A value handed to JavaScript as one JSON text parsed by V8: for results of thousands of
/// objects (trees, pages, headers) far faster than [`to_js`], at the cost of a larger heap (at
/// 20 000 skeletons, 95 MiB against 60). The text is written as Latin-1 ([`roo_js::latin1`]), so
/// V8 copies it into a string without decoding UTF-8.
pub(crate) fn to_js_parsed<'e, T: serde::Serialize + ?Sized>(
    env: &'e napi::Env,
    value: &T,
) -> napi::Result<napi::Unknown<'e>> {
    let text = roo_js::to_latin1_json(value).map_err(|e| {
        error::CodedError::new(
            error::ErrorCode::Internal,
            format!("a result could not be encoded: {e}"),
        )
        .into_sync()
    })?;
    parse_latin1(env, &text)
}

/// `JSON.parse` of a JSON text written as Latin-1 bytes ([`roo_js::to_latin1_json`]).
pub(crate) fn parse_latin1<'e>(env: &'e napi::Env, text: &[u8]) -> napi::Result<napi::Unknown<'e>> {
    let raw = sys::RawEnv::new(env);
    json_parse(env, raw.latin1(text)?)
}

/// [`parse_latin1`] of a text the caller keeps anyway (a tree the handle holds): V8 reads it in
/// place where it can ([`sys::RawEnv::latin1_shared`]), without a copy.
pub(crate) fn parse_latin1_shared<'e>(
    env: &'e napi::Env,
    text: &std::sync::Arc<Vec<u8>>,
) -> napi::Result<napi::Unknown<'e>> {
    let raw = sys::RawEnv::new(env);
    json_parse(env, raw.latin1_shared(text)?)
}

fn json_parse<'e>(
    env: &'e napi::Env,
    text: napi::sys::napi_value,
) -> napi::Result<napi::Unknown<'e>> {
    let parse: napi::bindgen_prelude::Function<'_, napi::Unknown<'_>, napi::Unknown<'_>> =
        env.run_script("JSON.parse")?;
    parse.call(sys::RawEnv::new(env).unknown(text))
}

/// Hand what the calling thread allocated and freed back to the system now, not when it next
/// allocates: for a call that frees much on a libuv thread (a scan's hierarchy pass frees its
/// index there) before its result is converted on the JavaScript thread, where the peak is. Not
/// for every call: it costs about 14 µs.
pub(crate) fn return_own_freed_memory() {
    sys::collect_own_heap()
}

/// Hand the memory freed from other threads back to the system: each thread of the global worker
/// pool collects what was freed in its own pages (an idle thread never would).
pub(crate) fn return_freed_memory() {
    rayon::broadcast(|_| sys::collect_own_heap());
}

pub mod compat_detector;
pub mod compat_engine;
pub mod compat_hierarchy;
pub mod compat_index;
pub mod condense;
pub mod condense_history;
pub mod error;
pub mod export;
pub mod grep;
pub mod hierarchy;
pub mod history_file;
pub mod job;
mod js_value;
mod panics;
pub mod rules;
pub mod search;
pub mod skeleton;
pub mod store;
mod sys;
pub mod task_store;
pub mod usage;

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;

/// Progress of a long operation.
#[napi(object)]
#[derive(Clone, Default)]
pub struct Progress {
    /// Units done so far (tasks, for a scan).
    pub done: u32,
    /// Units in all.
    pub total: u32,
    /// Search indexing only: `distilling` (making the static model once: `done`/`total` are
    /// vocabulary tokens), `scanning`, `indexing` or `finishing`.
    pub phase: Option<String>,
    /// Search indexing only: chunks embedded so far.
    pub chunks_embedded: Option<u32>,
    /// Search indexing only: ms since the phase started.
    pub elapsed_ms: Option<f64>,
    /// Search indexing only: estimated ms left in the phase, once something is done.
    pub eta_ms: Option<f64>,
}

/// Progress callback, called on the JS thread as work advances.
pub type ProgressFn = ThreadsafeFunction<Progress, (), Progress, Status, false>;

thread_local! {
    /// Set on the threads that run JavaScript (where the addon was loaded, where a job was
    /// started): a progress report made there must not wait for its own delivery.
    static JS_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the current thread as one that runs JavaScript.
pub(crate) fn mark_js_thread() {
    JS_THREAD.with(|t| t.set(true));
}

/// How long a worker waits for JavaScript to take its last progress report (a JavaScript thread
/// kept busy longer than this gets the report after the call's promise settles).
const LAST_REPORT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The core's `(done, total)` callback for an optional JS progress function: each call is queued
/// to the JS thread without blocking the worker (a count past `u32::MAX` is sent as `u32::MAX`).
/// The report that completes a count (`done >= total`) waits until JavaScript has had it, and with
/// it every report before it (they are delivered in order): the call's promise, which settles on
/// another queue, therefore settles after the callback has seen the whole count.
pub(crate) fn progress_fn<N: TryInto<u32>>(progress: Option<ProgressFn>) -> impl Fn(N, N) + Sync {
    move |done: N, total: N| {
        let Some(p) = &progress else {
            return;
        };
        let value = Progress {
            done: done.try_into().unwrap_or(u32::MAX),
            total: total.try_into().unwrap_or(u32::MAX),
            ..Progress::default()
        };
        let completes = value.total > 0 && value.done >= value.total;
        if !completes || JS_THREAD.with(std::cell::Cell::get) {
            p.call(value, ThreadsafeFunctionCallMode::NonBlocking);
            return;
        }
        let (taken, wait) = std::sync::mpsc::sync_channel::<()>(1);
        let status = p.call_with_return_value(
            value,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |_, _| {
                // The worker may have stopped waiting: nobody to tell then.
                let _ = taken.send(());
                Ok(())
            },
        );
        if status == Status::Ok {
            let _ = wait.recv_timeout(LAST_REPORT_WAIT);
        }
    }
}

/// The package version.
#[napi(catch_unwind)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
