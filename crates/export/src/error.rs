//! Export errors, each with a stable code for JavaScript callers.

use std::path::PathBuf;

/// Why an export (or a configuration call) failed. [`ExportError::code`] gives the stable code.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The task (or conversation root) is not in the store.
    #[error("no task {task_id} in {tasks_dir}")]
    TaskNotFound { task_id: String, tasks_dir: PathBuf },
    /// An output path, a tasks directory or a task id that cannot be used.
    #[error("{0}")]
    InvalidPath(String),
    /// An argument of the wrong shape (a date that cannot be read, an unknown filter name, …).
    #[error("{0}")]
    InvalidArgument(String),
    /// The export configuration (or a change to it) is not valid; nothing was written.
    #[error("{0}")]
    InvalidConfig(String),
    /// The XML (or another format) could not be produced or written.
    #[error("{0}")]
    Generation(String),
    /// The caller aborted the export; nothing was written.
    #[error("the export was aborted; nothing was written")]
    Aborted,
}

impl ExportError {
    /// `TASK_NOT_FOUND`, `INVALID_PATH`, `INVALID_ARGUMENT`, `INVALID_CONFIG`, `XML_GENERATION` or
    /// `ABORTED`.
    pub fn code(&self) -> &'static str {
        match self {
            ExportError::TaskNotFound { .. } => "TASK_NOT_FOUND",
            ExportError::InvalidPath(_) => "INVALID_PATH",
            ExportError::InvalidArgument(_) => "INVALID_ARGUMENT",
            ExportError::InvalidConfig(_) => "INVALID_CONFIG",
            ExportError::Generation(_) => "XML_GENERATION",
            ExportError::Aborted => "ABORTED",
        }
    }

    pub(crate) fn io(what: &str, err: std::io::Error) -> Self {
        ExportError::Generation(format!("{what}: {err}"))
    }
}

pub type Result<T> = std::result::Result<T, ExportError>;
