//! The usage records of one task folder: every API request with its tokens and cost as the
//! extension recorded them, the cost of context condensing, and the file operations of its tool
//! calls, each dated, with the model, provider and mode in force when it was made.
//!
//! Where each field comes from:
//!
//! - requests: the UI record's `api_req_started` (the legacy `api_req_finished` merged into the
//!   request before it, as the skeleton's totals merge it); `cancelReason` says whether a request
//!   was cancelled (`user_cancelled`) or failed (`streaming_failed`). Such requests are counted
//!   with the tokens and cost they recorded, as the extension's own totals count them.
//! - condensing: a `condense_context` record's `contextCondense.cost`, which the extension adds
//!   to a task's total cost.
//! - model and mode: the environment details sent with each request (`# Current Mode` with its
//!   `<slug>` and `<model>`, Cline's `PLAN MODE` / `ACT MODE`), from the request text stored in
//!   `api_req_started` (older eras) or from the API history's user messages; Cline's
//!   `task_metadata.json` `model_usage` entries (model, provider, mode with a time). A request
//!   takes the latest of these at or before its time; the task's own mode when there is none.
//! - a task with no UI record (the API history alone): one request per assistant message, with
//!   no usage recorded, or the totals of its `history_item.json` as one record when it has them.
//!
//! No figure is taken on faith: a record whose tokens or cost are negative, not finite, or past
//! any real request ([`record_problem`]) is refused ([`TaskUsage::refused`], with why) and never
//! summed; a report counts the refused records apart and says so.

use roo_formats::api::Role;
use roo_formats::extract::{Extractor, ToolCall};
use roo_formats::read;
use roo_formats::text::{environment_mode, tag_content};
use roo_formats::ui::{Ask, ClineMessage, MessageKind, Say};
use roo_state::ConversationSkeleton;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// What a request was, as the extension left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    /// `cancelReason: "user_cancelled"`.
    Cancelled,
    /// `cancelReason: "streaming_failed"` (or any other reason).
    Failed,
}

/// The kind of a usage record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// One API request.
    Request,
    /// The cost of condensing the context (no tokens recorded).
    Condense,
    /// A task's totals from its `history_item.json` (a task without a UI record).
    TaskTotals,
}

/// One usage record.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageRecord {
    /// Milliseconds since the epoch (the task's creation time when the record has none).
    pub ts: i64,
    pub kind: RecordKind,
    pub tokens_in: f64,
    pub tokens_out: f64,
    pub cache_writes: f64,
    pub cache_reads: f64,
    /// The cost the extension recorded; `None` when it recorded none.
    pub cost: Option<f64>,
    pub model: Option<Arc<str>>,
    pub provider: Option<Arc<str>>,
    pub mode: Option<Arc<str>>,
    /// `anthropic` or `openai` (`apiProtocol`), when recorded.
    pub protocol: Option<Arc<str>>,
    /// `tokens_in` counts the cache reads and writes too: the OpenAI protocol, and the Anthropic
    /// protocol since v3.29.5 (records with `apiProtocol` and without the `request` text, which
    /// v3.28.18 stopped writing). Older records and Cline's count the input alone.
    pub input_includes_cache: bool,
    pub outcome: Outcome,
}

/// A file operation of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileOpKind {
    Read,
    Write,
    Edit,
    Create,
    Delete,
}

/// One file operation.
#[derive(Debug, Clone, PartialEq)]
pub struct FileOp {
    pub ts: i64,
    pub kind: FileOpKind,
    /// Lines of the content written or of the diff applied, when the record holds them.
    pub lines: Option<u32>,
}

/// A record refused: its time, and why (a sentence naming the task folder and the figure).
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub ts: i64,
    pub why: String,
}

/// Everything a report needs of one task folder.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskUsage {
    pub records: Vec<UsageRecord>,
    pub file_ops: Vec<FileOp>,
    /// Requests whose record holds no usage at all (API history only).
    pub unrecorded: u32,
    /// What the person and the tools did besides requests (module `activity`).
    pub events: Vec<crate::activity::Event>,
    /// The totals of the task's `history_item.json` when they disagree with its request records
    /// (module `activity`).
    pub history: Option<crate::activity::HistoryTotals>,
    /// Records whose figures cannot be believed, left out of `records`.
    pub refused: Vec<Refused>,
}

pub use roo_formats::extract::{MAX_COST, MAX_TOKENS};

/// Why a record's figures cannot be believed (`roo_formats::extract::figures_problem`, the rule
/// the skeleton's totals follow too), or `None`.
pub fn record_problem(r: &UsageRecord) -> Option<String> {
    let tokens = [r.tokens_in, r.tokens_out, r.cache_writes, r.cache_reads];
    roo_formats::extract::figures_problem(tokens, r.cost)
}

/// The model, provider and mode in force from a time (or, undated, from a position).
#[derive(Debug, Clone, Default)]
struct Sighting {
    ts: Option<i64>,
    model: Option<Arc<str>>,
    provider: Option<Arc<str>>,
    mode: Option<Arc<str>>,
}

fn arc(s: &str) -> Option<Arc<str>> {
    let t = s.trim();
    (!t.is_empty()).then(|| Arc::from(t))
}

/// The model and mode of environment details, if the text holds any.
fn sighting_in(text: &str, ts: Option<i64>) -> Option<Sighting> {
    if !text.contains("# Current Mode") && !text.contains("<model>") {
        return None;
    }
    let s = Sighting {
        ts,
        model: tag_content(text, "model").and_then(arc),
        provider: None,
        mode: environment_mode(text).and_then(arc),
    };
    (s.model.is_some() || s.mode.is_some()).then_some(s)
}

/// The file operation a tool name stands for (UI names of every era and the API's tool names).
pub fn file_op_kind(tool: &str) -> Option<FileOpKind> {
    Some(match tool {
        "readFile" | "read_file" | "fetchInstructions" => FileOpKind::Read,
        "newFileCreated" | "new_file_created" => FileOpKind::Create,
        "write_to_file" | "writeToFile" | "write_file" => FileOpKind::Write,
        "editedExistingFile" | "appliedDiff" | "apply_diff" | "insertContent"
        | "insert_content" | "searchAndReplace" | "search_and_replace" | "replace_in_file"
        | "edit_file" | "apply_patch" | "applyPatch" | "multiApplyDiff" | "search_replace" => {
            FileOpKind::Edit
        }
        "deleteFile" | "delete_file" | "fileDeleted" => FileOpKind::Delete,
        _ => return None,
    })
}

/// Lines of what a tool call writes: a new file's content, or the changed lines of a diff
/// (`+`/`-` lines of a unified diff, the replacement side of search/replace blocks).
fn lines_of(payload: &Value) -> Option<u32> {
    if let Some(content) = payload.get("content").and_then(Value::as_str) {
        return Some(content.lines().count() as u32);
    }
    let diff = payload.get("diff").and_then(Value::as_str)?;
    let mut changed = 0u32;
    let mut in_replace = false;
    for line in diff.lines() {
        if line.starts_with("=======") {
            in_replace = true;
        } else if line.starts_with(">>>>>>>") || line.starts_with("<<<<<<<") {
            in_replace = false;
        } else if in_replace
            || (line.starts_with('+') && !line.starts_with("+++"))
            || (line.starts_with('-') && !line.starts_with("---"))
        {
            changed += 1;
        }
    }
    Some(changed)
}

/// The UI record of a task, read once: the extractor's requests and tool calls, plus what the
/// extractor does not keep (condense costs with their time, request texts, written lines).
#[derive(Default)]
struct UiRead {
    /// Per `api_req_started`, in order: whether it holds the `request` text.
    with_request: Vec<bool>,
    condense: Vec<(i64, f64)>,
    /// Times of the person's answers and feedback (`user_feedback`, `user_feedback_diff`).
    user: Vec<i64>,
    sightings: Vec<Sighting>,
    file_ops: Vec<FileOp>,
}

fn read_ui(path: &Path, x: &mut Extractor, out: &mut UiRead) {
    read::for_each_ui_message(path, |_, msg: ClineMessage| {
        let ts = msg.ts.unwrap_or(0);
        match &msg.kind {
            MessageKind::Say(Say::ApiReqStarted) => {
                let request = msg
                    .text
                    .as_deref()
                    .filter(|t| t.contains("\"request\""))
                    .and_then(|t| serde_json::from_str::<Value>(t).ok());
                let request = request.as_ref().and_then(|o| o.get("request")?.as_str());
                if let Some(req) = request {
                    out.sightings.extend(sighting_in(req, msg.ts));
                }
                out.with_request.push(request.is_some());
            }
            MessageKind::Say(Say::UserFeedback | Say::UserFeedbackDiff) => out.user.push(ts),
            MessageKind::Say(Say::CondenseContext) => {
                if let Some(cost) = msg.context_condense.as_ref().and_then(|c| c.cost) {
                    out.condense.push((ts, cost));
                }
            }
            MessageKind::Ask(Ask::Tool) | MessageKind::Say(Say::Tool)
                if msg.partial != Some(true) =>
            {
                if let Some(kind) = msg.tool_summary().and_then(|t| file_op_kind(&t.tool)) {
                    let lines = match kind {
                        FileOpKind::Read | FileOpKind::Delete => None,
                        _ => msg
                            .text
                            .as_deref()
                            .and_then(|t| serde_json::from_str::<Value>(t).ok())
                            .and_then(|v| lines_of(&v)),
                    };
                    out.file_ops.push(FileOp { ts, kind, lines });
                }
            }
            _ => {}
        }
        x.ui(&msg);
    });
}

/// Cline's `model_usage` entries of `task_metadata.json`.
fn model_usage(dir: &Path) -> Vec<Sighting> {
    let read = read::read_task_metadata(&dir.join("task_metadata.json"));
    let Some(meta) = read.value else {
        return Vec::new();
    };
    let Some(Value::Array(items)) = meta.extra.get("model_usage") else {
        return Vec::new();
    };
    items
        .iter()
        .map(|i| Sighting {
            ts: i.get("ts").and_then(Value::as_f64).map(|t| t as i64),
            model: i.get("model_id").and_then(Value::as_str).and_then(arc),
            provider: i
                .get("model_provider_id")
                .and_then(Value::as_str)
                .and_then(arc),
            mode: i.get("mode").and_then(Value::as_str).and_then(arc),
        })
        .collect()
}

/// The API history's environment details (and, for a task without a UI record, its assistant
/// messages and tool calls).
fn read_api(path: &Path, x: Option<&mut Extractor>) -> (Vec<Sighting>, Vec<Option<i64>>) {
    let mut sightings = Vec::new();
    let mut replies = Vec::new();
    let mut x = x;
    read::for_each_api_message(path, |_, msg| {
        if msg.is_role(&Role::User) {
            if let Some(s) = msg.texts().find_map(|t| sighting_in(t, msg.ts)) {
                sightings.push(s);
            }
        } else if msg.is_role(&Role::Assistant) {
            replies.push(msg.ts);
        }
        if let Some(x) = x.as_deref_mut() {
            x.api(&msg);
        }
    });
    (sightings, replies)
}

/// The model, provider and mode in force for the `n`-th request at `ts`, each the latest one
/// recorded at or before it (dated sightings), or among the first `n + 1` (undated ones), else
/// the first recorded at all.
fn context_for(sightings: &[Sighting], n: usize, ts: i64) -> Sighting {
    let dated = sightings.iter().all(|s| s.ts.is_some());
    let upto = if dated {
        sightings.partition_point(|s| s.ts.is_some_and(|t| t <= ts))
    } else {
        (n + 1).min(sightings.len())
    };
    let pick = |f: fn(&Sighting) -> &Option<Arc<str>>| {
        sightings[..upto]
            .iter()
            .rev()
            .find_map(|s| f(s).clone())
            .or_else(|| sightings.iter().find_map(|s| f(s).clone()))
    };
    Sighting {
        ts: Some(ts),
        model: pick(|s| &s.model),
        provider: pick(|s| &s.provider),
        mode: pick(|s| &s.mode),
    }
}

fn outcome_of(reason: Option<&str>) -> Outcome {
    match reason {
        None => Outcome::Completed,
        Some("user_cancelled") => Outcome::Cancelled,
        Some(_) => Outcome::Failed,
    }
}

fn file_ops_of_calls(calls: &[ToolCall], default_ts: i64) -> Vec<FileOp> {
    calls
        .iter()
        .filter(|c| c.status != "in_progress")
        .filter_map(|c| {
            file_op_kind(&c.name).map(|kind| FileOp {
                ts: c.ts.unwrap_or(default_ts),
                kind,
                lines: None,
            })
        })
        .collect()
}

/// Read the usage of the task in `dir` whose linked header is `skeleton`.
pub fn read_task_usage(dir: &Path, skeleton: &ConversationSkeleton) -> TaskUsage {
    let created = skeleton.created_at_ms.unwrap_or(0);
    let task_mode = skeleton.metadata.mode.as_deref().and_then(arc);
    let mut x = Extractor::new();
    let mut ui = UiRead::default();
    let ui_file = skeleton.files.ui_file.as_deref();
    if let Some(name) = ui_file {
        read_ui(&dir.join(name), &mut x, &mut ui);
    }
    let mut sightings = model_usage(dir);
    let api_path = dir.join("api_conversation_history.json");
    let mut replies = Vec::new();
    if ui_file.is_none() {
        let (s, r) = read_api(&api_path, Some(&mut x));
        sightings.extend(s);
        replies = r;
    } else if ui.sightings.is_empty() && sightings.is_empty() && skeleton.files.api_history {
        sightings = read_api(&api_path, None).0;
    } else {
        sightings.extend(ui.sightings);
    }
    sightings.sort_by_key(|s| s.ts.unwrap_or(i64::MIN));
    let extraction = x.finish(None);
    let mut usage = TaskUsage::default();
    let with_context = |ts: i64, n: usize, kind: RecordKind| {
        let s = context_for(&sightings, n, ts);
        UsageRecord {
            ts,
            kind,
            tokens_in: 0.0,
            tokens_out: 0.0,
            cache_writes: 0.0,
            cache_reads: 0.0,
            cost: None,
            model: s.model,
            provider: s.provider,
            mode: s.mode.or_else(|| task_mode.clone()),
            protocol: None,
            input_includes_cache: false,
            outcome: Outcome::Completed,
        }
    };
    if ui_file.is_some() {
        for (n, r) in extraction.requests.iter().enumerate() {
            let ts = r.ts.unwrap_or(created);
            let with_request = ui.with_request.get(n).copied().unwrap_or(false);
            usage.records.push(UsageRecord {
                input_includes_cache: match r.protocol.as_deref() {
                    Some("anthropic") => !with_request,
                    Some(_) => true,
                    None => false,
                },
                tokens_in: r.tokens_in.unwrap_or(0.0),
                tokens_out: r.tokens_out.unwrap_or(0.0),
                cache_writes: r.cache_writes.unwrap_or(0.0),
                cache_reads: r.cache_reads.unwrap_or(0.0),
                cost: r.cost,
                protocol: r.protocol.as_deref().and_then(arc),
                outcome: outcome_of(r.cancel_reason.as_deref()),
                ..with_context(ts, n, RecordKind::Request)
            });
        }
        let n = extraction.requests.len();
        for &(ts, cost) in &ui.condense {
            usage.records.push(UsageRecord {
                cost: Some(cost),
                ..with_context(ts, n, RecordKind::Condense)
            });
        }
        usage.file_ops = ui.file_ops;
        usage.events = crate::activity::events(&ui.user, &extraction.tool_calls, created);
        if skeleton.files.history_item {
            usage.history = crate::activity::history_disagreement(dir, &usage.records);
        }
    } else {
        usage.events = crate::activity::events(&[], &extraction.tool_calls, created);
        usage.file_ops = file_ops_of_calls(&extraction.tool_calls, created);
        let item = read::read_history_item(&dir.join("history_item.json")).value;
        let totals = item.filter(|h| h.tokens_in.is_some() || h.total_cost.is_some());
        match totals {
            Some(h) => {
                let ts = skeleton.last_activity_ms.unwrap_or(created);
                usage.records.push(UsageRecord {
                    tokens_in: h.tokens_in.unwrap_or(0.0),
                    tokens_out: h.tokens_out.unwrap_or(0.0),
                    cache_writes: h.cache_writes.unwrap_or(0.0),
                    cache_reads: h.cache_reads.unwrap_or(0.0),
                    cost: h.total_cost,
                    ..with_context(ts, 0, RecordKind::TaskTotals)
                });
            }
            None => {
                for (n, ts) in replies.iter().enumerate() {
                    usage
                        .records
                        .push(with_context(ts.unwrap_or(created), n, RecordKind::Request));
                }
                usage.unrecorded = replies.len() as u32;
            }
        }
    }
    // Records past belief are set apart, each with why.
    let (kept, refused): (Vec<UsageRecord>, Vec<UsageRecord>) = std::mem::take(&mut usage.records)
        .into_iter()
        .partition(|r| record_problem(r).is_none());
    usage.records = kept;
    usage.refused = refused
        .iter()
        .map(|r| Refused {
            ts: r.ts,
            why: format!(
                "a usage record of {} was refused: {}",
                dir.display(),
                record_problem(r).unwrap_or_default()
            ),
        })
        .collect();
    usage.records.sort_by_key(|r| r.ts);
    usage
}
