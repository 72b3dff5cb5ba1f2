//! What compat's read-ahead gets for one task folder. The binding reads the folder and answers
//! with these shapes (their TypeScript names are the binding's: `CompatLegacyFolder`,
//! `CompatFixedFolder`).

use crate::LegacyAnalysis;
use serde::Serialize;

/// A task folder read and analysed by the legacy builder, for the compat detector's read-ahead
/// (used only when nothing replaced Node's file functions, so reading natively gives what Node's
/// reads would): the analysis, and the folder's dates that stand in for a task without dated
/// records.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "CompatLegacyFolder"))]
pub struct LegacyFolder {
    /// `null` where the legacy builder skips the task (or the folder cannot be read).
    pub analysis: Option<LegacyAnalysis>,
    /// The folder's modification time, in milliseconds since the epoch with their fraction
    /// (`fs.stat(dir).mtimeMs`).
    pub dir_mtime_ms: Option<f64>,
    /// The folder's creation time where the file system records it, else its change time, as
    /// Node's `birthtime` falls back.
    pub dir_birthtime_ms: Option<f64>,
}

/// What the compat detector's fixed mode needs of a task folder, for its read-ahead: the engine's
/// skeleton (with its sequence), and the parent in the legacy priority
/// (`task_metadata.parentTaskId || task_metadata.parent_task_id || history_item.parentTaskId`,
/// as `String(value)`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "CompatFixedFolder"))]
pub struct FixedFolder {
    /// `null` where the detector answers `null`: no folder, or none of the three task files.
    pub skeleton: Option<roo_state::ConversationSkeleton>,
    pub parent_task_id: Option<String>,
}
