//! Skeletons, scanning, typed readers, extraction and the compatibility mode.

use crate::error::{CodedError, ErrorCode};
use crate::job::Job;
use crate::js_value::JsWriter;
use crate::{progress_fn, ProgressFn};
use napi::bindgen_prelude::{AsyncTask, Object};
use napi::{Env, JsValue, Unknown};
use napi_derive::napi;
use roo_state::scan::ScanError;
use roo_state::skeleton::{analyze_task, AnalyzeOptions};
use std::path::{Path, PathBuf};

#[napi(object)]
#[derive(Default)]
pub struct AnalyzeConversationOptions {
    /// Build `sequence` (default true).
    pub include_sequence: Option<bool>,
    /// Sequence content longer than this many UTF-16 units is cut in the middle (default 400; 0 = never).
    pub max_content_length: Option<u32>,
}

impl From<AnalyzeConversationOptions> for AnalyzeOptions {
    /// A full skeleton unless the options ask for a header.
    fn from(o: AnalyzeConversationOptions) -> Self {
        AnalyzeOptions {
            include_sequence: o.include_sequence.unwrap_or(true),
            max_content_len: max_content_len(o.max_content_length),
        }
    }
}

impl From<&ScanTasksOptions> for AnalyzeOptions {
    /// Headers unless the options ask for sequences.
    fn from(o: &ScanTasksOptions) -> Self {
        AnalyzeOptions {
            include_sequence: o.include_sequence.unwrap_or(false),
            max_content_len: max_content_len(o.max_content_length),
        }
    }
}

/// The cut of long sequence content (`maxContentLength`, default 400 UTF-16 units).
fn max_content_len(max: Option<u32>) -> usize {
    max.map_or(roo_state::skeleton::DEFAULT_MAX_CONTENT, |m| m as usize)
}

pub(crate) fn task_error(task_dir: &Path, diagnostics: Vec<roo_formats::Diagnostic>) -> CodedError {
    if let Some(out) = roo_formats::links::task_folder_out(task_dir) {
        CodedError::new(ErrorCode::InvalidPath, out.to_string())
    } else if !task_dir.exists() {
        CodedError::new(
            ErrorCode::TaskNotFound,
            format!("no task directory at {}", task_dir.display()),
        )
    } else {
        let detail = diagnostics
            .first()
            .map(|d| d.message.clone())
            .unwrap_or_else(|| "no task files".into());
        CodedError::new(
            ErrorCode::CorruptFile,
            format!("{}: {detail}", task_dir.display()),
        )
    }
}

/// Build the `ConversationSkeleton` of one task directory.
#[napi(
    catch_unwind,
    ts_args_type = "taskId: string, taskPath: string, options?: AnalyzeConversationOptions, signal?: AbortSignal",
    ts_return_type = "Promise<ConversationSkeleton>"
)]
pub fn analyze_conversation(
    task_id: String,
    task_path: String,
    options: Option<AnalyzeConversationOptions>,
    signal: Option<crate::job::Signal>,
) -> AsyncTask<Job<roo_state::ConversationSkeleton>> {
    let opts = AnalyzeOptions::from(options.unwrap_or_default());
    Job::spawn(signal, move |_| {
        let dir = task_dir_from_js(&task_path);
        analyze_task(&task_id, &dir, &opts).map_err(|d| task_error(&dir, d))
    })
}

/// A task folder's path as JavaScript holds it: a folder whose name is not UTF-8 reaches it with
/// U+FFFD in place of the other bytes, and is found again by that name
/// (`roo_store::find::task_folder`).
fn task_dir_from_js(task_path: &str) -> PathBuf {
    let given = PathBuf::from(task_path);
    if given.exists() {
        return given;
    }
    let (Some(parent), Some(name)) = (given.parent(), given.file_name()) else {
        return given;
    };
    roo_store::find::task_folder(parent, &name.to_string_lossy()).unwrap_or(given)
}

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct ScanTasksOptions {
    /// Worker threads (default: one per core).
    pub concurrency: Option<u32>,
    /// Build each skeleton's `sequence` (default false: headers only, which keeps memory flat).
    pub include_sequence: Option<bool>,
    pub max_content_length: Option<u32>,
    /// Called with `{ done, total }` as tasks complete.
    #[napi(ts_type = "(progress: Progress) => void")]
    pub on_progress: Option<ProgressFn>,
    /// Aborting stops the scan; the promise rejects with code `ABORTED`.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
    /// Link every skeleton to its parent in the same call (as `reconstructHierarchy` does, without
    /// sending the skeletons back and forth); `metrics` land in `result.hierarchy`.
    pub hierarchy: Option<crate::hierarchy::ReconstructHierarchyOptions>,
}

/// Build the skeleton of every task under a `tasks/` directory, in parallel. One bad task never
/// fails the scan: it gets a skeleton with diagnostics, or a diagnostic in the result.
#[napi(catch_unwind, ts_return_type = "Promise<ScanResult>")]
pub fn scan_tasks(
    tasks_dir: String,
    options: Option<ScanTasksOptions>,
) -> AsyncTask<Job<roo_state::ScanResult>> {
    let o = options.unwrap_or_default();
    let analyze = AnalyzeOptions::from(&o);
    let hierarchy = o
        .hierarchy
        .map(roo_state::hierarchy::HierarchyOptions::from);
    Job::spawn_with(
        o.signal,
        move |cancel| {
            let report = progress_fn::<usize>(o.on_progress);
            let opts = roo_state::ScanOptions {
                concurrency: o.concurrency.unwrap_or(0) as usize,
                analyze,
                on_progress: Some(&report),
                cancel: Some(cancel),
                hierarchy,
            };
            let result = roo_state::scan_tasks(Path::new(&tasks_dir), &opts);
            crate::return_own_freed_memory();
            result.map_err(|e| match e {
                ScanError::Empty => CodedError::new(ErrorCode::InvalidArgument, e.to_string()),
                ScanError::NotFound(_) | ScanError::NotADirectory(_) => {
                    CodedError::new(ErrorCode::InvalidPath, e.to_string())
                }
                ScanError::Unreadable { .. } => {
                    CodedError::new(ErrorCode::InvalidPath, e.to_string())
                }
            })
        },
        scan_result_to_js,
    )
}

/// Skeletons converted between two returns of memory to the system.
const SKELETONS_PER_RETURN: usize = 1024;

/// The scan's result as JavaScript, in the shape its serialisation has, with each skeleton
/// dropped once converted: the Rust copy of the result shrinks as the JavaScript one grows, so a
/// scan of many tasks does not hold both at once. The skeletons were allocated by the scan's
/// worker threads, and memory freed from another thread only goes back to the system once its
/// thread collects it: the workers are asked to every [`SKELETONS_PER_RETURN`] skeletons. One
/// writer converts it all, so each property name is created once for the whole result.
fn scan_result_to_js<'e>(env: &'e Env, result: roo_state::ScanResult) -> napi::Result<Unknown<'e>> {
    let roo_state::ScanResult {
        mut skeletons,
        diagnostics,
        total,
        cancelled,
        hierarchy,
    } = result;
    let mut writer = JsWriter::new(env);
    let mut array = env.create_array(skeletons.len() as u32)?;
    // From the last, so the list itself shrinks too.
    while let Some(skeleton) = skeletons.pop() {
        array.set(skeletons.len() as u32, writer.write(&skeleton)?)?;
        drop(skeleton);
        if skeletons.len() % SKELETONS_PER_RETURN == 0 {
            skeletons.shrink_to_fit();
            crate::return_freed_memory();
        }
    }
    let mut out = Object::new(env)?;
    out.set("skeletons", array)?;
    out.set("diagnostics", writer.write(&diagnostics)?)?;
    out.set("total", total as u32)?;
    out.set("cancelled", cancelled)?;
    if let Some(h) = hierarchy {
        out.set("hierarchy", writer.write(&h)?)?;
    }
    Ok(out.to_unknown())
}

/// Read `ui_messages.json` (or `claude_messages.json`): typed messages and diagnostics.
#[napi(catch_unwind, ts_return_type = "Promise<ReadResult<ClineMessage[]>>")]
pub fn read_ui_messages(
    path: String,
) -> AsyncTask<Job<roo_formats::Read<Vec<roo_formats::ClineMessage>>>> {
    Job::spawn(None, move |_| {
        Ok(roo_formats::read_ui_messages(Path::new(&path)))
    })
}

/// Read `api_conversation_history.json` in either stored shape; `value` is null when the file is missing.
#[napi(
    catch_unwind,
    ts_return_type = "Promise<ReadResult<ApiHistory | null>>"
)]
pub fn read_api_history(
    path: String,
) -> AsyncTask<Job<roo_formats::Read<Option<roo_formats::ApiHistory>>>> {
    Job::spawn(None, move |_| {
        Ok(roo_formats::read_api_history(Path::new(&path)))
    })
}

/// Read `history_item.json`.
#[napi(
    catch_unwind,
    ts_return_type = "Promise<ReadResult<HistoryItem | null>>"
)]
pub fn read_history_item(
    path: String,
) -> AsyncTask<Job<roo_formats::Read<Option<roo_formats::HistoryItem>>>> {
    Job::spawn(None, move |_| {
        Ok(roo_formats::read_history_item(Path::new(&path)))
    })
}

/// Read `task_metadata.json`.
#[napi(
    catch_unwind,
    ts_return_type = "Promise<ReadResult<TaskMetadata | null>>"
)]
pub fn read_task_metadata(
    path: String,
) -> AsyncTask<Job<roo_formats::Read<Option<roo_formats::TaskMetadata>>>> {
    Job::spawn(None, move |_| {
        Ok(roo_formats::read_task_metadata(Path::new(&path)))
    })
}

/// Read `tasks/_index.json`.
#[napi(
    catch_unwind,
    ts_return_type = "Promise<ReadResult<HistoryIndex | null>>"
)]
pub fn read_history_index(
    path: String,
) -> AsyncTask<Job<roo_formats::Read<Option<roo_formats::HistoryIndex>>>> {
    Job::spawn(None, move |_| {
        Ok(roo_formats::read_history_index(Path::new(&path)))
    })
}

/// The subtasks a task created, from every era's records, each once; never the task itself.
#[napi(catch_unwind, ts_return_type = "Promise<NewTaskInstruction[]>")]
pub fn extract_new_tasks(
    task_dir: String,
) -> AsyncTask<Job<Vec<roo_formats::extract::NewTaskInstruction>>> {
    Job::spawn(None, move |_| {
        let dir = PathBuf::from(&task_dir);
        let opts = AnalyzeOptions {
            include_sequence: false,
            ..AnalyzeOptions::default()
        };
        analyze_task("", &dir, &opts)
            .map(|s| s.child_tasks)
            .map_err(|d| task_error(&dir, d))
    })
}

/// `computeInstructionPrefix(text, k = 192)`, bit-identical to the legacy server's normalisation
/// (compatibility mode: keeps old cache keys valid).
#[napi(catch_unwind)]
pub fn compute_instruction_prefix(text: String, k: Option<u32>) -> String {
    roo_legacy::compute_instruction_prefix(
        &text,
        k.map_or(roo_legacy::DEFAULT_PREFIX_LEN, |k| k as usize),
    )
}

/// The legacy server's regex extraction of child instructions from `ui_messages.json`,
/// reproduced with its quirks (compatibility mode).
#[napi(catch_unwind, ts_return_type = "Promise<LegacyInstruction[]>")]
pub fn extract_new_task_instructions_legacy(
    task_dir: String,
) -> AsyncTask<Job<Vec<roo_legacy::LegacyInstruction>>> {
    Job::spawn(None, move |_| {
        Ok(roo_legacy::extract_new_task_instructions_legacy(Path::new(
            &task_dir,
        )))
    })
}

/// What the legacy server's skeleton builder yields for a task directory (compatibility mode);
/// null where it would skip the task.
#[napi(catch_unwind, ts_return_type = "Promise<LegacyAnalysis | null>")]
pub fn analyze_conversation_legacy(
    task_dir: String,
) -> AsyncTask<Job<Option<roo_legacy::LegacyAnalysis>>> {
    Job::spawn(None, move |_| {
        Ok(roo_legacy::analyze_task_legacy(Path::new(&task_dir)))
    })
}
