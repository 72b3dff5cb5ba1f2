//! Native entries of the compat storage detector: the legacy skeleton builder and extraction chain
//! over contents the JavaScript side read (through Node's file system, so callers' mocks apply).

use crate::error::{CodedError, ErrorCode};
use crate::job::{blocking, Job, Written};
use napi::bindgen_prelude::{AsyncTask, Buffer};
use napi_derive::napi;
use roo_legacy::{LegacyFile, LegacyTaskFiles};

/// One task file as read by the caller: its size, and its bytes unless it was unreadable or skipped.
#[napi(object)]
pub struct CompatFileInput {
    pub size: f64,
    #[napi(ts_type = "Uint8Array")]
    pub bytes: Option<Buffer>,
}

/// The four files of a task folder; absent where the file does not exist.
#[napi(object)]
pub struct CompatTaskFilesInput {
    pub metadata: Option<CompatFileInput>,
    pub api_history: Option<CompatFileInput>,
    pub ui_messages: Option<CompatFileInput>,
    pub history_item: Option<CompatFileInput>,
}

impl From<CompatFileInput> for LegacyFile {
    /// A size that is not a positive number counts as 0.
    fn from(f: CompatFileInput) -> Self {
        LegacyFile {
            size: if f.size.is_finite() && f.size > 0.0 {
                f.size as u64
            } else {
                0
            },
            bytes: f.bytes.map(|b| b.to_vec()),
        }
    }
}

impl From<CompatTaskFilesInput> for LegacyTaskFiles {
    fn from(f: CompatTaskFilesInput) -> Self {
        LegacyTaskFiles {
            metadata: f.metadata.map(LegacyFile::from),
            api_history: f.api_history.map(LegacyFile::from),
            ui_messages: f.ui_messages.map(LegacyFile::from),
            history_item: f.history_item.map(LegacyFile::from),
        }
    }
}

/// The legacy skeleton builder over files read by the caller; null where it would skip the task.
#[napi(catch_unwind, ts_return_type = "Promise<LegacyAnalysis | null>")]
pub fn compat_analyze_legacy_files(
    task_id: String,
    files: CompatTaskFilesInput,
) -> AsyncTask<Job<Option<roo_legacy::LegacyAnalysis>>> {
    let files = LegacyTaskFiles::from(files);
    Job::spawn(None, move |_| {
        Ok(roo_legacy::analyze_task_legacy_files(task_id, files, true))
    })
}

/// Milliseconds since the epoch with their fraction, as Node's `mtimeMs` (its `mtime` rounds them).
fn millis(t: std::time::SystemTime) -> f64 {
    let ms =
        |d: std::time::Duration| d.as_secs() as f64 * 1000.0 + f64::from(d.subsec_nanos()) / 1e6;
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => ms(d),
        Err(e) => -ms(e.duration()),
    }
}

/// The birth time of `meta`, else (as Node does where the file system has none) its change time.
fn birth_millis(meta: &std::fs::Metadata) -> Option<f64> {
    if let Ok(created) = meta.created() {
        return Some(millis(created));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(meta.ctime() as f64 * 1000.0 + meta.ctime_nsec() as f64 / 1e6)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// For each of `prefixes`, the entries under `base` whose name starts with it, at any depth (what
/// `glob('**/<prefix>*', { cwd: base, absolute: true })` gives on Linux), found in one walk.
#[napi(catch_unwind, ts_return_type = "Promise<string[][]>")]
pub async fn compat_entries_named_with_prefixes(
    base: String,
    prefixes: Vec<String>,
) -> napi::Result<Written<Vec<Vec<String>>>> {
    blocking(move || {
        Ok(
            roo_legacy::entries_named_with_prefixes(std::path::Path::new(&base), &prefixes)
                .into_iter()
                .map(|list| {
                    list.into_iter()
                        .map(|p| p.to_string_lossy().into_owned())
                        .collect()
                })
                .collect(),
        )
    })
    .await
}

/// The legacy builder over a task folder it reads itself (the four files as
/// `analyzeWithOldSystem` reads them: conversation files over 10 MiB only stat'ed).
/// Runs on the tokio runtime's blocking threads (not the libuv pool): a caller's own file requests
/// are not queued behind the tasks read ahead of it.
#[napi(catch_unwind, ts_return_type = "Promise<CompatLegacyFolder>")]
pub async fn compat_analyze_legacy_folder(
    task_id: String,
    task_path: String,
) -> napi::Result<Written<roo_legacy::LegacyFolder>> {
    blocking(move || {
        let dir = std::path::Path::new(&task_path);
        let meta = std::fs::metadata(dir).ok();
        let analysis = roo_legacy::analyze_task_legacy_files(
            task_id,
            roo_legacy::read_legacy_task_files(dir),
            true,
        );
        Ok(roo_legacy::LegacyFolder {
            analysis,
            dir_mtime_ms: meta.as_ref().and_then(|m| m.modified().ok()).map(millis),
            dir_birthtime_ms: meta.as_ref().and_then(birth_millis),
        })
    })
    .await
}

/// A task file's JSON as `JSON.parse(stripBom(await readFile(p, 'utf8')))` gives it; `None` where
/// the read or the parse fails.
fn json_file(path: &std::path::Path) -> Option<serde_json::Value> {
    let bytes = roo_legacy::read_regular_file(path, roo_legacy::MAX_SIDE_FILE_SIZE)?.bytes?;
    let text = String::from_utf8_lossy(&bytes);
    roo_legacy::json_parse(text.strip_prefix('\u{FEFF}').unwrap_or(&text))
}

/// The fixed-mode analysis of a task folder (`analyzeWithNewSystem`'s native part and its parent
/// rule), for the compat detector's read-ahead.
/// Runs on the tokio runtime's blocking threads, as the legacy-mode read-ahead does.
#[napi(catch_unwind, ts_return_type = "Promise<CompatFixedFolder>")]
pub async fn compat_analyze_fixed_folder(
    task_id: String,
    task_path: String,
) -> napi::Result<Written<roo_legacy::FixedFolder>> {
    blocking(move || {
        let dir = std::path::PathBuf::from(&task_path);
        let none = roo_legacy::FixedFolder {
            skeleton: None,
            parent_task_id: None,
        };
        if !std::fs::metadata(&dir).is_ok_and(|m| m.is_dir()) {
            return Ok(none);
        }
        let task_files = [
            "task_metadata.json",
            "api_conversation_history.json",
            "ui_messages.json",
        ];
        if task_files
            .iter()
            .all(|f| std::fs::metadata(dir.join(f)).is_err())
        {
            return Ok(none);
        }
        let meta = json_file(&dir.join("task_metadata.json"));
        let hist = json_file(&dir.join("history_item.json"));
        let field = |v: &Option<serde_json::Value>, key: &str| {
            v.as_ref()
                .and_then(|v| v.as_object())
                .and_then(|o| o.get(key))
                .cloned()
        };
        let parent_task_id = [
            field(&meta, "parentTaskId"),
            field(&meta, "parent_task_id"),
            field(&hist, "parentTaskId"),
        ]
        .into_iter()
        .flatten()
        .find(|v| roo_js::truthy(Some(v)))
        .map(|v| roo_js::to_string(&v));
        let opts = roo_state::skeleton::AnalyzeOptions::from(
            crate::skeleton::AnalyzeConversationOptions {
                include_sequence: Some(true),
                max_content_length: None,
            },
        );
        match roo_state::skeleton::analyze_task(&task_id, &dir, &opts) {
            Ok(skeleton) => Ok(roo_legacy::FixedFolder {
                skeleton: Some(skeleton),
                parent_task_id,
            }),
            Err(d) => {
                let err = crate::skeleton::task_error(&dir, d);
                if matches!(err.code, ErrorCode::TaskNotFound | ErrorCode::InvalidPath) {
                    Ok(none)
                } else {
                    Err(err)
                }
            }
        }
    })
    .await
}

/// The legacy main instruction of a `ui_messages.json` text (`undefined` where there is none).
#[napi(catch_unwind)]
pub fn compat_main_instruction_legacy(content: String) -> Option<String> {
    roo_legacy::main_instruction(&content)
}

/// What the legacy extraction chain found over a message array.
#[napi(object)]
pub struct CompatChainResult {
    #[napi(ts_type = "LegacyInstruction[]")]
    pub instructions: Vec<serde_json::Value>,
    /// For each message that gave instructions, the name of the extractor that did.
    pub matched_patterns: Vec<String>,
}

/// The legacy extraction chain over a message array given as one JSON text (a non-array gives
/// nothing; `INVALID_ARGUMENT` when the text is not JSON).
#[napi(catch_unwind)]
pub fn compat_extraction_chain(messages_json: String) -> napi::Result<CompatChainResult> {
    let value: serde_json::Value = serde_json::from_str(&messages_json).map_err(|e| {
        CodedError::new(
            ErrorCode::InvalidArgument,
            format!("messages are not JSON: {e}"),
        )
        .into_sync()
    })?;
    let messages = match value {
        serde_json::Value::Array(a) => a,
        _ => Vec::new(),
    };
    let found = roo_legacy::run_chain(&messages);
    Ok(CompatChainResult {
        instructions: found
            .instructions
            .into_iter()
            .filter_map(|i| serde_json::to_value(i).ok())
            .collect(),
        matched_patterns: found
            .matched
            .into_iter()
            .filter_map(|i| roo_legacy::PATTERN_NAMES.get(i).map(|s| (*s).to_owned()))
            .collect(),
    })
}
