//! Native entries of the compat storage detector: the legacy skeleton builder and extraction chain
//! over contents the JavaScript side read (through Node's file system, so callers' mocks apply).

use crate::job::Job;
use napi::bindgen_prelude::{AsyncTask, Buffer};
use napi_derive::napi;
use roo_legacy::{LegacyFile, LegacyTaskFiles};

/// One task file as read by the caller: its size, and its bytes unless it was unreadable or skipped.
#[napi(object)]
pub struct CompatFileInput {
    pub size: f64,
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

fn file(input: Option<CompatFileInput>) -> Option<LegacyFile> {
    input.map(|f| LegacyFile {
        size: if f.size.is_finite() && f.size > 0.0 {
            f.size as u64
        } else {
            0
        },
        bytes: f.bytes.map(|b| b.to_vec()),
    })
}

/// The legacy skeleton builder over files read by the caller; null where it would skip the task.
#[napi(ts_return_type = "Promise<LegacyAnalysis | null>")]
pub fn compat_analyze_legacy_files(
    task_id: String,
    files: CompatTaskFilesInput,
) -> AsyncTask<Job<Option<roo_legacy::LegacyAnalysis>>> {
    let files = LegacyTaskFiles {
        metadata: file(files.metadata),
        api_history: file(files.api_history),
        ui_messages: file(files.ui_messages),
        history_item: file(files.history_item),
    };
    Job::spawn(None, move |_| {
        Ok(roo_legacy::analyze_task_legacy_files(task_id, files, true))
    })
}

/// The legacy extraction chain over the text of a `ui_messages.json` (as given: no BOM strip, no
/// size cap), in the order the chain finds the instructions.
#[napi(ts_return_type = "LegacyInstruction[]")]
pub fn compat_extract_legacy_from_text(content: String) -> Vec<serde_json::Value> {
    roo_legacy::extract_from_messages(&roo_legacy::parse_ui_for_instructions(&content))
        .into_iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .collect()
}

/// The legacy main instruction of a `ui_messages.json` text (`undefined` where there is none).
#[napi]
pub fn compat_main_instruction_legacy(content: String) -> Option<String> {
    roo_legacy::main_instruction(&content)
}
