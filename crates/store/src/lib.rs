//! Task stores on this machine and what is kept beside them.
//!
//! - [`discover`]: every task store of Roo Code, Zoo Code, Cline and Kilo Code for every editor
//!   build, desktop or server side, custom storage paths and the `ROO_STATE_STORAGE` override.
//! - [`cache`]: the incremental skeleton cache, in our own cache directory. A task is parsed again
//!   only when the size or modification time of one of its source files changed.
//! - [`find`]: where a task lives, from its id or the start of it, across several stores.
//! - [`diagnose`], [`rebuild`], [`cleanup`], [`migrate`]: the maintenance tools. Every one that
//!   writes into an extension's folder has a dry run, backs up what it replaces and renames
//!   atomically; conversation files are never removed.
//!
//! Functions take the home directory, platform and environment as a [`HostEnv`] value so that
//! tests can run them against a fake home of any operating system.

pub mod cache;
pub mod cleanup;
pub mod confine;
pub mod diagnose;
pub mod discover;
pub mod env;
pub mod find;
pub mod fsutil;
pub mod history_file;
pub mod history_gen;
pub mod lock;
pub mod migrate;
pub mod rebuild;
pub mod task_store;
pub mod vscdb;

pub use env::{HostEnv, Platform};

use std::path::PathBuf;

/// Errors of this crate. [`StoreError::code`] gives the stable code the binding hands to JS.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path} does not exist")]
    NotFound { path: PathBuf },
    #[error("{0}")]
    InvalidPath(String),
    #[error("{0}")]
    InvalidArgument(String),
    /// A cache directory that would lie in the extension's own folders.
    #[error("{0}")]
    InvalidCacheDir(String),
    #[error("{action} {path} failed: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the cache at {path} is locked by another process and was not released within {waited_ms} ms; try again when the other build has finished")]
    Locked { path: PathBuf, waited_ms: u64 },
    #[error("the operation was aborted")]
    Aborted,
    /// Another process is writing the same task store.
    #[error("{0}")]
    Busy(String),
    #[error("the destination {path} already holds files that are not a finished migration of this source; choose an empty or new folder")]
    DestinationNotEmpty { path: PathBuf },
    #[error(
        "the copy of {path} does not match its source ({detail}); the source was left untouched"
    )]
    VerifyFailed { path: PathBuf, detail: String },
    #[error("{0}")]
    Sqlite(String),
    /// A failure injected by a test at a named step of a maintenance operation.
    #[error("failure injected at step {0}")]
    Injected(String),
    /// A task status change the task state machine does not allow.
    #[error("Invalid task status transition: {from} → {to}")]
    InvalidTransition { from: String, to: String },
    /// A change refused because the record on disk has moved to a status it cannot leave that way
    /// (another writer got there first); nothing was written.
    #[error("Delta rejected for task {task_id}: disk status {disk_status} rejects transition to {attempted_status}")]
    DeltaRejected {
        task_id: String,
        disk_status: String,
        attempted_status: String,
    },
}

impl StoreError {
    /// Stable code for JavaScript callers.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::NotFound { .. } | StoreError::InvalidPath(_) => "INVALID_PATH",
            StoreError::InvalidArgument(_) => "INVALID_ARGUMENT",
            StoreError::InvalidCacheDir(_) => "INVALID_CACHE_DIR",
            StoreError::Io { .. } => "IO_ERROR",
            StoreError::Locked { .. } => "CACHE_LOCKED",
            StoreError::Aborted => "ABORTED",
            StoreError::Busy(_) => "STORE_BUSY",
            StoreError::DestinationNotEmpty { .. } => "DESTINATION_NOT_EMPTY",
            StoreError::VerifyFailed { .. } => "VERIFY_FAILED",
            StoreError::Sqlite(_) => "STATE_DB_ERROR",
            StoreError::Injected(_) => "INJECTED_FAILURE",
            StoreError::InvalidTransition { .. } => "INVALID_TRANSITION",
            StoreError::DeltaRejected { .. } => "DELTA_REJECTED",
        }
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        StoreError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// The version written into our cache and markers: a cache written by another version is rebuilt.
/// The suffix counts changes to what a skeleton holds between releases (bump it with any change
/// of a skeleton value, so caches written before are rebuilt): 2 = host kinds (Cline's
/// `say:"task"`/`"command"`), API-only counts and completion, dates from task ids and metadata;
/// 3 = a subtask abandoned in Zoo Code keeps no parent (the cached links and metrics);
/// 4 = a task folder linked out of its store has no skeleton, a task file linked out is unread.
pub const ENGINE_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+skeleton.5");
