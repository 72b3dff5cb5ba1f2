//! Errors of the search crate. Each variant maps to one stable code (see [`Error::code`]) and its
//! message says what to do about it.

use std::path::PathBuf;

/// Everything that can stop indexing or a search.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the tasks directory {0} does not exist or is not a directory")]
    TasksDirNotFound(PathBuf),
    #[error(
        "no tasks directory was given and none was found in the usual places of Roo Code, Zoo \
         Code, Cline or Kilo Code; pass tasksDir"
    )]
    NoTasksDir,
    #[error("{0}")]
    InvalidArgument(String),
    #[error(
        "the local embedding model is not installed: {dir} has no {missing}. Run `roo-state \
         models fetch` (or fetchModel(), or scripts/fetch-model.sh), or set \
         ROO_SEARCH_MODEL_DIR to a directory holding config.json, tokenizer.json and \
         model.safetensors of all-MiniLM-L6-v2"
    )]
    ModelMissing { dir: PathBuf, missing: String },
    #[error("the local embedding model in {dir} could not be loaded: {message}")]
    ModelLoad { dir: PathBuf, message: String },
    #[error("installing the local embedding model into {dir} from {from} failed: {message}")]
    ModelFetch {
        dir: PathBuf,
        from: String,
        message: String,
    },
    #[error("this build has no {feature} support (cargo feature `{feature}` of roo-search)")]
    FeatureMissing { feature: &'static str },
    #[error("the embedding service at {url} failed: {message}")]
    Embedding { url: String, message: String },
    #[error(
        "the embedder returned vectors of {got} dimensions where {expected} were expected \
         ({context}); use the same model and dimensions as the index, or rebuild the index"
    )]
    DimensionMismatch {
        expected: usize,
        got: usize,
        context: String,
    },
    #[error("the index was built with {index}, but this search uses {query}; {hint}")]
    EmbedderMismatch {
        index: String,
        query: String,
        hint: &'static str,
    },
    #[error("semantic search needs an embedding model, but {0}")]
    SemanticUnavailable(String),
    #[error("the index in {0} has not been built yet: run indexTasks first")]
    NotIndexed(PathBuf),
    #[error("the vector store ({store}) failed: {message}")]
    Store { store: String, message: String },
    #[error(
        "the index in {0} is being written by another indexing run (in this process or \
         another); wait for it to finish"
    )]
    Busy(PathBuf),
    #[error(
        "the index at {0} is open in another process (a running `roo-state mcp`, for one); stop \
         it, wait, or use another index directory"
    )]
    HeldOpen(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the operation was aborted")]
    Aborted,
}

impl Error {
    /// The stable code JavaScript sees as `err.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::TasksDirNotFound(_) | Error::NoTasksDir => "INVALID_PATH",
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::ModelMissing { .. } => "MODEL_MISSING",
            Error::ModelLoad { .. } => "MODEL_LOAD_FAILED",
            Error::ModelFetch { .. } => "MODEL_FETCH_FAILED",
            Error::FeatureMissing { .. } => "UNSUPPORTED",
            Error::Embedding { .. } => "EMBEDDING_FAILED",
            Error::DimensionMismatch { .. } => "DIMENSION_MISMATCH",
            Error::EmbedderMismatch { .. } => "EMBEDDER_MISMATCH",
            Error::SemanticUnavailable(_) => "SEMANTIC_UNAVAILABLE",
            Error::NotIndexed(_) => "NOT_INDEXED",
            Error::Store { .. } => "STORE_FAILED",
            Error::Busy(_) | Error::HeldOpen(_) => "INDEX_BUSY",
            Error::Io { .. } => "IO_ERROR",
            Error::Aborted => "ABORTED",
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn store(store: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Error::Store {
            store: store.into(),
            message: message.to_string(),
        }
    }
}

impl From<roo_model::Error> for Error {
    fn from(e: roo_model::Error) -> Self {
        match e {
            roo_model::Error::InvalidArgument(m) => Error::InvalidArgument(m),
            roo_model::Error::ModelFetch { dir, from, message } => {
                Error::ModelFetch { dir, from, message }
            }
            roo_model::Error::Aborted => Error::Aborted,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
