//! Errors of installing the model. Each variant maps to one stable code (see [`Error::code`]),
//! the same codes roo-search and the binding use.

use std::path::PathBuf;

/// What can stop an install.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("installing the local embedding model into {dir} from {from} failed: {message}")]
    ModelFetch {
        dir: PathBuf,
        from: String,
        message: String,
    },
    #[error("the operation was aborted")]
    Aborted,
}

impl Error {
    /// The stable code JavaScript sees as `err.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::ModelFetch { .. } => "MODEL_FETCH_FAILED",
            Error::Aborted => "ABORTED",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
