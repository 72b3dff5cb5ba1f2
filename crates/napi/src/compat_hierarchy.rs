//! Hierarchy reconstruction for legacy-shaped skeletons (the `compat` layer's `fixed` mode): the
//! tasks come as one JSON string and the answer goes back as one (no per-value conversion at the
//! boundary, so there is no limit on the number of tasks); the rules are roo-legacy's
//! `reconstruct_shaped`.

use crate::error::{CodedError, ErrorCode};
use crate::job::Job;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use serde_json::Value;

/// The core reconstruction over legacy-shaped tasks. `tasksJson` is a JSON array of
/// `{ taskId, parentTaskId?, truncatedInstruction?, createdAt?, createdAtMs?, lastActivity?,
/// lastActivityMs?, workspace?, dataSource?, childTaskInstructionPrefixes?,
/// instructions?: [{ message, timestamp? }] }`; the answer is a JSON string
/// `{ links: [{ taskId, parentTaskId?, source?, confidence?, matchKind?, rootTaskId? }], metrics, skipped }`.
#[napi(catch_unwind, ts_return_type = "Promise<string>")]
pub fn compat_reconstruct_legacy(
    tasks_json: String,
    workspace_filter: Option<String>,
) -> AsyncTask<Job<String>> {
    Job::spawn(None, move |_| {
        let tasks: Vec<Value> = serde_json::from_str(&tasks_json).map_err(|e| {
            CodedError::new(
                ErrorCode::InvalidArgument,
                format!("the tasks are not a JSON array: {e}"),
            )
        })?;
        let out = roo_legacy::reconstruct_shaped(&tasks, workspace_filter);
        serde_json::to_string(&out)
            .map_err(|e| CodedError::new(ErrorCode::InvalidArgument, e.to_string()))
    })
}
