//! `history_item.json` (one per task, v3.49+), `tasks/_index.json` and `task_metadata.json`.

use crate::diag::{DiagCode, Diags, Severity};
use crate::fields::Fields;
use garde::Validate;
use serde::Serialize;
use serde_json::{Map, Value};

fn non_negative(value: &Option<f64>, _ctx: &()) -> garde::Result {
    match value {
        Some(v) if !v.is_finite() || *v < 0.0 => {
            Err(garde::Error::new("must be a finite number ≥ 0"))
        }
        _ => Ok(()),
    }
}

fn plausible_ts(value: &Option<i64>, _ctx: &()) -> garde::Result {
    // 2000-01-01 .. 2100-01-01 in ms: anything else is not a JS Date.now() value.
    match value {
        Some(v) if !(946_684_800_000..=4_102_444_800_000).contains(v) => Err(garde::Error::new(
            "is not a plausible millisecond timestamp",
        )),
        _ => Ok(()),
    }
}

fn opt_nonempty(value: &Option<String>, _ctx: &()) -> garde::Result {
    match value {
        Some(v) if v.trim().is_empty() => Err(garde::Error::new("must not be empty when present")),
        _ => Ok(()),
    }
}

/// `HistoryItem`: the extension's summary of a task. Field order is the order a freshly built
/// item is written in.
#[derive(Debug, Clone, PartialEq, Serialize, Validate, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct HistoryItem {
    #[garde(length(min = 1))]
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(custom(opt_nonempty))]
    pub root_task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(custom(opt_nonempty))]
    pub parent_task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub number: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(custom(plausible_ts))]
    pub ts: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub task: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(custom(non_negative))]
    pub tokens_in: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(custom(non_negative))]
    pub tokens_out: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(custom(non_negative))]
    pub cache_writes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(custom(non_negative))]
    pub cache_reads: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(custom(non_negative))]
    pub total_cost: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(custom(non_negative))]
    pub size: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub workspace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub api_config_name: Option<String>,
    /// `active`, `completed` or `delegated` (v3.35+), or `interrupted` (Zoo Code 3.80+).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub delegated_to_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub awaiting_child_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub completed_by_child_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub completion_result_summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[garde(skip)]
    pub child_ids: Option<Vec<String>>,
    /// Fields this version does not model (`toolProtocol`, newer ones), verbatim.
    #[serde(flatten)]
    #[garde(skip)]
    pub extra: Map<String, Value>,
}

/// Run garde validation and turn its errors into diagnostics at `path`.
pub(crate) fn validate_into<T: Validate<Context = ()>>(value: &T, path: &str, diags: &mut Diags) {
    if let Err(report) = value.validate() {
        for (field, err) in report.iter() {
            let field = field.to_string();
            let full = match (path.is_empty(), field.is_empty()) {
                (true, _) => field,
                (false, true) => path.to_owned(),
                (false, false) => format!("{path}.{field}"),
            };
            diags.push(
                full,
                DiagCode::InvalidValue,
                Severity::Warning,
                err.to_string(),
            );
        }
    }
}

impl HistoryItem {
    pub fn from_object(map: Map<String, Value>, path: &str, diags: &mut Diags) -> Self {
        let mut f = Fields::new(map, path, diags);
        let item = HistoryItem {
            id: f.string("id").unwrap_or_default(),
            root_task_id: f.string("rootTaskId"),
            parent_task_id: f.string("parentTaskId"),
            number: f.f64("number"),
            ts: f.i64("ts"),
            task: f.string("task"),
            tokens_in: f.f64("tokensIn"),
            tokens_out: f.f64("tokensOut"),
            cache_writes: f.f64("cacheWrites"),
            cache_reads: f.f64("cacheReads"),
            total_cost: f.f64("totalCost"),
            size: f.f64("size"),
            workspace: f.string("workspace"),
            mode: f.string("mode"),
            api_config_name: f.string("apiConfigName"),
            status: f.string("status"),
            delegated_to_id: f.string("delegatedToId"),
            awaiting_child_id: f.string("awaitingChildId"),
            completed_by_child_id: f.string("completedByChildId"),
            completion_result_summary: f.string("completionResultSummary"),
            child_ids: f.strings("childIds"),
            extra: f.finish(),
        };
        validate_into(&item, path, diags);
        item
    }
}

/// `tasks/_index.json`: `{"version":1,"updatedAt":…,"entries":[HistoryItem…]}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HistoryIndex {
    pub version: Option<i64>,
    pub updated_at: Option<i64>,
    pub entries: Vec<HistoryItem>,
}

/// One entry of `task_metadata.json` `files_in_context`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FileInContext {
    pub path: Option<String>,
    pub record_state: Option<String>,
    pub record_source: Option<String>,
    pub roo_read_date: Option<f64>,
    pub roo_edit_date: Option<f64>,
    pub user_edit_date: Option<f64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `task_metadata.json`. The extension writes only `files_in_context`; tools and hand-made files
/// add `parentTaskId`, `title`, `mode`, `workspace`, … which are read when present.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct TaskMetadata {
    pub files_in_context: Vec<FileInContext>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TaskMetadata {
    pub fn from_object(map: Map<String, Value>, path: &str, diags: &mut Diags) -> Self {
        let mut f = Fields::new(map, path, diags);
        let files = match f.value("files_in_context") {
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .filter_map(|(i, item)| match item {
                    Value::Object(o) => {
                        let p = format!("files_in_context[{i}]");
                        let mut g = Fields::new(o, p, f.diags());
                        Some(FileInContext {
                            path: g.string("path"),
                            record_state: g.string("record_state"),
                            record_source: g.string("record_source"),
                            roo_read_date: g.f64("roo_read_date"),
                            roo_edit_date: g.f64("roo_edit_date"),
                            user_edit_date: g.f64("user_edit_date"),
                            extra: g.finish(),
                        })
                    }
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        // `parentTaskId` and the snake_case spelling some tools write; empty strings mean "none".
        let parent = f
            .string("parentTaskId")
            .filter(|s| !s.is_empty())
            .or_else(|| f.string("parent_task_id").filter(|s| !s.is_empty()));
        TaskMetadata {
            files_in_context: files,
            parent_task_id: parent,
            root_task_id: f.string("rootTaskId").filter(|s| !s.is_empty()),
            title: f.string("title"),
            mode: f.string("mode"),
            workspace: f.string("workspace").filter(|s| !s.trim().is_empty()),
            extra: f.finish(),
        }
    }

    /// The earliest and latest times the file records (milliseconds): the read/edit dates of
    /// `files_in_context` (Roo Code's `roo_*`, Cline's `cline_*`, `user_edit_date`) and the `ts` of
    /// Cline's `model_usage` and `environment_history` entries. Values that are not plausible
    /// epoch milliseconds (before 2000, after 2100) are ignored.
    pub fn time_range(&self) -> Option<(i64, i64)> {
        const PLAUSIBLE: std::ops::Range<f64> = 946_684_800_000.0..4_102_444_800_000.0;
        let mut range: Option<(i64, i64)> = None;
        let mut see = |v: Option<f64>| {
            if let Some(ms) = v.filter(|v| PLAUSIBLE.contains(v)) {
                let ms = ms as i64;
                range = Some(range.map_or((ms, ms), |(a, b)| (a.min(ms), b.max(ms))));
            }
        };
        for file in &self.files_in_context {
            see(file.roo_read_date);
            see(file.roo_edit_date);
            see(file.user_edit_date);
            see(file.extra.get("cline_read_date").and_then(Value::as_f64));
            see(file.extra.get("cline_edit_date").and_then(Value::as_f64));
        }
        for key in ["model_usage", "environment_history"] {
            if let Some(Value::Array(items)) = self.extra.get(key) {
                for item in items {
                    see(item.get("ts").and_then(Value::as_f64));
                }
            }
        }
        range
    }

    /// The mode of the latest `model_usage` entry (Cline: `plan` or `act`).
    pub fn last_model_usage_mode(&self) -> Option<&str> {
        match self.extra.get("model_usage") {
            Some(Value::Array(items)) => items
                .iter()
                .rev()
                .find_map(|i| i.get("mode").and_then(Value::as_str))
                .filter(|m| !m.trim().is_empty()),
            _ => None,
        }
    }
}
