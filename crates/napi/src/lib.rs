//! Node-API binding of roo-state-core.
//!
//! Each exported function converts its arguments, schedules one core call off the JavaScript
//! thread and converts the result. Roo semantics live in the core crates, never here. One file per
//! area; the public TypeScript types of each area are in `types/<area>.d.ts`.

#![deny(clippy::all)]

pub mod compat_detector;
pub mod compat_export;
pub mod compat_hierarchy;
pub mod compat_index;
pub mod condense;
pub mod export;
pub mod hierarchy;
pub mod job;
pub mod search;
pub mod skeleton;
pub mod store;
pub mod task_store;

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;

/// Progress of a long operation.
#[napi(object)]
#[derive(Clone, Copy)]
pub struct Progress {
    /// Units done so far (tasks, for a scan).
    pub done: u32,
    /// Units in all.
    pub total: u32,
}

/// Progress callback, called on the JS thread as work advances.
pub type ProgressFn = ThreadsafeFunction<Progress, (), Progress, Status, false>;

/// The core's `(done, total)` callback for an optional JS progress function: each call is queued
/// to the JS thread without blocking the worker (a count past `u32::MAX` is sent as `u32::MAX`).
pub(crate) fn progress_fn<N: TryInto<u32>>(progress: Option<ProgressFn>) -> impl Fn(N, N) + Sync {
    move |done: N, total: N| {
        if let Some(p) = &progress {
            p.call(
                Progress {
                    done: done.try_into().unwrap_or(u32::MAX),
                    total: total.try_into().unwrap_or(u32::MAX),
                },
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        }
    }
}

/// The package version.
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
