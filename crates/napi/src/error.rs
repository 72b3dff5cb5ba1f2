//! The codes of the errors the binding throws or rejects with, in one enum.
//!
//! `err.code` of an asynchronous failure is [`ErrorCode::as_str`]; a synchronous function puts
//! the code in front of the message (`INVALID_ARGUMENT: …`). An error may carry `err.details`, a
//! plain value saying more (the candidates of an ambiguous task id, for one). The TypeScript union `ErrorCode` in
//! `types/00-core.d.ts` lists the same codes; a test holds the two (and the codes of the core
//! crates' errors) together.

use napi::bindgen_prelude::JsObjectValue;
use napi::{Env, JsError, JsValue, Status};

macro_rules! error_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $code:literal,)*) => {
        /// A stable error code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The code as JavaScript sees it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $code,)*
                }
            }

            /// The code a core crate's error reports (`StoreError::code` and the like); a code
            /// this enum does not know is `INTERNAL` (the tests keep that from happening).
            pub fn of(code: &str) -> Self {
                match code {
                    $($code => ErrorCode::$variant,)*
                    _ => ErrorCode::Internal,
                }
            }
        }
    };
}

error_codes! {
    /// A skeleton or export names a task that is not there.
    TaskNotFound = "TASK_NOT_FOUND",
    /// A task id prefix that several tasks of a task store handle start with (`TaskStore.get`,
    /// `TaskStore.tree`).
    TaskAmbiguous = "TASK_AMBIGUOUS",
    /// A task id prefix that several task folders start with (`findTask`); `details.candidates`
    /// lists them.
    AmbiguousTaskId = "AMBIGUOUS_TASK_ID",
    /// A path that does not exist or is not what the call needs.
    InvalidPath = "INVALID_PATH",
    /// A task directory whose files could not be read as a task.
    CorruptFile = "CORRUPT_FILE",
    /// The call's `AbortSignal` aborted.
    Aborted = "ABORTED",
    /// An argument of the wrong shape or value.
    InvalidArgument = "INVALID_ARGUMENT",
    /// A failure inside the binding (a result that could not be encoded, a poisoned handle).
    Internal = "INTERNAL",
    /// The cache directory cannot be used.
    InvalidCacheDir = "INVALID_CACHE_DIR",
    /// Reading or writing a file failed.
    IoError = "IO_ERROR",
    /// Another process holds the cache lock.
    CacheLocked = "CACHE_LOCKED",
    /// A migration target that already holds data.
    DestinationNotEmpty = "DESTINATION_NOT_EMPTY",
    /// A migrated copy differs from its source.
    VerifyFailed = "VERIFY_FAILED",
    /// The editor's `state.vscdb` could not be read.
    StateDbError = "STATE_DB_ERROR",
    /// A failure injected by a test hook.
    InjectedFailure = "INJECTED_FAILURE",
    /// An export configuration that cannot be read or applied.
    InvalidConfig = "INVALID_CONFIG",
    /// The XML of an export could not be written.
    XmlGeneration = "XML_GENERATION",
    /// The local embedding model is not installed.
    ModelMissing = "MODEL_MISSING",
    /// The local embedding model could not be loaded.
    ModelLoadFailed = "MODEL_LOAD_FAILED",
    /// Installing the local embedding model failed.
    ModelFetchFailed = "MODEL_FETCH_FAILED",
    /// The build lacks the feature the call needs.
    Unsupported = "UNSUPPORTED",
    /// The embedder failed.
    EmbeddingFailed = "EMBEDDING_FAILED",
    /// Vectors of another dimension than the index holds.
    DimensionMismatch = "DIMENSION_MISMATCH",
    /// An index built with another embedder.
    EmbedderMismatch = "EMBEDDER_MISMATCH",
    /// Semantic search was asked for and cannot run.
    SemanticUnavailable = "SEMANTIC_UNAVAILABLE",
    /// Search before any index was built.
    NotIndexed = "NOT_INDEXED",
    /// The vector store failed.
    StoreFailed = "STORE_FAILED",
    /// Another indexing run holds the index.
    IndexBusy = "INDEX_BUSY",
    /// Another process is writing the same task store (rebuild, cleanup, migrate), or holds the
    /// lock of the task file being written.
    StoreBusy = "STORE_BUSY",
    /// A task status change the task state machine does not allow.
    InvalidTransition = "INVALID_TRANSITION",
    /// A `history_item.json` change refused: the record on disk reached a status the change may
    /// not move it from; nothing was written. `details` has `taskId`, `diskStatus`,
    /// `attemptedStatus`.
    DeltaRejected = "DELTA_REJECTED",
}

/// An error for JavaScript: `err.code` is its [`ErrorCode`], `err.message` says what to do about
/// it.
#[derive(Debug, Clone)]
pub struct CodedError {
    pub code: ErrorCode,
    pub message: String,
    /// `err.details` (asynchronous failures and errors thrown through [`CodedError::into_napi`]).
    pub details: Option<serde_json::Value>,
}

impl CodedError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// The same error carrying `details`.
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// A core crate's error, by the code it reports.
    pub fn core(code: &str, message: impl ToString) -> Self {
        Self::new(ErrorCode::of(code), message.to_string())
    }

    /// The rejection of an aborted call.
    pub fn aborted() -> Self {
        Self::new(ErrorCode::Aborted, "the operation was aborted")
    }

    /// Turn into a napi error whose JS object carries `code` (and `details`, when there are).
    pub fn into_napi(self, env: &Env) -> napi::Error {
        let js =
            JsError::from(napi::Error::new(self.code.as_str(), self.message)).into_unknown(*env);
        if let Some(details) = self.details {
            // Best effort: an error that cannot take its details still carries its code.
            let with_details = js.coerce_to_object().and_then(|mut o| {
                o.set_named_property("details", crate::to_js(env, &details)?)?;
                Ok(o)
            });
            if let Ok(o) = with_details {
                return napi::Error::from(o.to_unknown());
            }
        }
        napi::Error::from(js)
    }

    /// For synchronous functions, where no `Env` is at hand: the code is put in front of the
    /// message.
    pub fn into_sync(self) -> napi::Error {
        napi::Error::new(
            Status::InvalidArg,
            format!("{}: {}", self.code.as_str(), self.message),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The string literals in upper snake case inside each `fn code` of a source file.
    fn codes_in(source: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut rest = source;
        while let Some(at) = rest.find("fn code(") {
            let body = &rest[at..];
            let end = body.find("\n    }\n").unwrap_or(body.len());
            for piece in body[..end].split('"').skip(1).step_by(2) {
                if !piece.is_empty() && piece.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
                    out.insert(piece.to_owned());
                }
            }
            rest = &body[end..];
        }
        out
    }

    #[test]
    fn every_core_code_has_a_variant() {
        let sources = [
            include_str!("../../store/src/lib.rs"),
            include_str!("../../export/src/error.rs"),
            include_str!("../../search/src/error.rs"),
            include_str!("../../store/src/find.rs"),
        ];
        let mut seen = 0;
        for source in sources {
            for code in codes_in(source) {
                seen += 1;
                let known = ErrorCode::of(&code);
                assert_eq!(known.as_str(), code, "core code {code} has no ErrorCode");
            }
        }
        assert!(
            seen >= 20,
            "only {seen} core codes found: the scan lost them"
        );
    }

    #[test]
    fn the_typescript_union_lists_every_code() {
        let header = include_str!("../../../types/00-core.d.ts");
        let line = header
            .lines()
            .find(|l| l.starts_with("export type ErrorCode ="))
            .expect("types/00-core.d.ts declares ErrorCode");
        let declared: BTreeSet<&str> = line.split('\'').skip(1).step_by(2).collect();
        let ours: BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(declared, ours);
        assert!(
            !line.contains("string"),
            "ErrorCode must be a closed union of literals"
        );
    }

    #[test]
    fn codes_round_trip() {
        for &code in ErrorCode::ALL {
            assert_eq!(ErrorCode::of(code.as_str()), code);
        }
        assert_eq!(ErrorCode::of("NO_SUCH_CODE"), ErrorCode::Internal);
    }
}
