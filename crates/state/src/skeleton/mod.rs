//! `ConversationSkeleton`: one task summarised, in the field names and nesting TypeScript callers
//! of the MCP server already use, with values taken from the data (message `ts`, typed
//! extraction) rather than guessed.

use roo_formats::diag::{DiagCode, Diagnostic, Severity};
use roo_formats::extract::{ApiTotals, Extractor, NewTaskInstruction};
use roo_formats::instruction_key;
use roo_formats::read::names;
use roo_formats::text;
use roo_formats::{read_history_item, read_task_metadata};
use roo_formats::{HistoryItem, TaskMetadata};
use roo_js::iso_from_ms;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

mod api_pass;
mod sequence;
mod ui_pass;

use api_pass::ApiPass;
use sequence::SequenceBuilder;
use ui_pass::UiPass;

/// Default length of a sequence item's content before it is cut in the middle.
pub const DEFAULT_MAX_CONTENT: usize = 400;

/// A conversational message in `sequence`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MessageSkeleton {
    /// `user` or `assistant`.
    #[cfg_attr(feature = "ts", ts(type = "\"user\" | \"assistant\""))]
    pub role: String,
    pub content: String,
    /// ISO 8601, from the message's `ts`.
    pub timestamp: String,
    pub is_truncated: bool,
}

/// A tool or command in `sequence`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ActionMetadata {
    /// `tool` or `command`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "ts", ts(type = "\"tool\" | \"command\""))]
    pub kind: String,
    pub name: String,
    #[cfg_attr(feature = "ts", ts(type = "{ [key: string]: JsonValue }"))]
    pub parameters: Value,
    /// `success`, `failure` or `in_progress`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "\"success\" | \"failure\" | \"in_progress\"")
    )]
    pub status: String,
    pub timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub file_path: Option<String>,
}

/// One item of `sequence`: a message (has `role`) or an action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum SequenceItem {
    Message(MessageSkeleton),
    Action(ActionMetadata),
}

/// Where `createdAt`/`lastActivity` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum DatesFrom {
    UiMessages,
    ApiHistory,
    HistoryItem,
    /// No message carries a time: Cline's task id (its creation time), up to the latest time in
    /// `task_metadata.json`.
    TaskId,
    /// No message carries a time: the times recorded in `task_metadata.json`.
    TaskMetadata,
    /// No timestamp in the data: the newest task file's modification time.
    FileTimes,
    #[default]
    None,
}

/// `SkeletonMetadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct SkeletonMetadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub created_at: String,
    pub last_activity: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    pub message_count: u32,
    pub action_count: u32,
    pub total_size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    pub data_source: String,
    /// The host's label (a `HostSource` of `roo_formats::host::SOURCES`), from the storage path.
    #[cfg_attr(feature = "ts", ts(type = "HostSource"))]
    pub source: String,
    pub dates_from: DatesFrom,
}

/// The links a task's own files store (before any inference).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct StoredLinks {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_item_parent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata_parent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub child_ids: Vec<String>,
    /// `history_item.json` `status`: `active`, `completed`, `delegated` (Roo 3.35+), or
    /// `interrupted` (Zoo Code 3.80+: a task cancelled or cut short by a restart; Zoo's startup
    /// repair marks such children so, and a parent whose child had finished gets
    /// `completionResultSummary: "Task completed (recovered after interruption)"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Which task files exist and how they were read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct TaskFiles {
    /// `ui_messages.json`, `claude_messages.json`, or none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "ts",
        ts(optional, type = "\"ui_messages.json\" | \"claude_messages.json\"")
    )]
    pub ui_file: Option<String>,
    pub ui_messages: u32,
    pub api_history: bool,
    pub api_messages: u32,
    /// `anthropicArray` or `versioned`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "ts",
        ts(optional, type = "\"anthropicArray\" | \"versioned\"")
    )]
    pub api_format: Option<String>,
    pub history_item: bool,
    pub task_metadata: bool,
}

/// How a task's parent link was established (filled by the hierarchy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ParentEvidence {
    /// `history_item`, `child_ids`, `task_metadata` or `instruction_prefix`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "\"history_item\" | \"child_ids\" | \"task_metadata\" | \"instruction_prefix\"")
    )]
    pub source: String,
    /// 0..=1.
    pub confidence: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_task_ts: Option<i64>,
    /// `instruction_prefix` only: `exact` (the whole normalised instruction) or `prefix` (the
    /// parent's recorded message is a strict prefix of the child's instruction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "\"exact\" | \"prefix\""))]
    pub match_kind: Option<String>,
    /// `instruction_prefix` only: the child's creation time minus `new_task_ts`, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_ms: Option<i64>,
    /// Other sources that name a different parent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub conflicts: Vec<String>,
}

/// `ConversationSkeleton` (the `SkeletonHeader` fields plus `sequence`, and what this engine adds).
// The default is an empty placeholder (no task id), for a place a header is read into.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ConversationSkeleton {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    /// Absent in headers (scans that do not ask for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequence: Option<Vec<SequenceItem>>,
    pub metadata: SkeletonMetadata,
    /// `computeInstructionPrefix(message, 192)` of each distinct child instruction.
    pub child_task_instruction_prefixes: Vec<String>,
    pub is_completed: bool,
    /// `computeInstructionPrefix(instruction, 192)`: the key a parent's prefix list is matched on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_instruction: Option<String>,
    /// The task's own instruction, as the user typed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// The subtasks this task created, once each, with when and how they were seen.
    pub child_tasks: Vec<NewTaskInstruction>,
    pub stored_links: StoredLinks,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_evidence: Option<ParentEvidence>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_task_id: Option<String>,
    pub api_totals: ApiTotalsOut,
    pub files: TaskFiles,
    /// First and last message times in ms (the same instants as `createdAt`/`lastActivity`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity_ms: Option<i64>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Token and cost totals of a task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ApiTotals"))]
pub struct ApiTotalsOut {
    pub requests: u32,
    pub tokens_in: f64,
    pub tokens_out: f64,
    pub cache_writes: f64,
    pub cache_reads: f64,
    pub total_cost: f64,
}

impl From<ApiTotals> for ApiTotalsOut {
    fn from(t: ApiTotals) -> Self {
        Self {
            requests: t.requests,
            tokens_in: t.tokens_in,
            tokens_out: t.tokens_out,
            cache_writes: t.cache_writes,
            cache_reads: t.cache_reads,
            total_cost: t.total_cost,
        }
    }
}

/// Options of [`analyze_task`].
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// Build `sequence` (the full skeleton) rather than a header.
    pub include_sequence: bool,
    /// Content longer than this (UTF-16 units) is cut in the middle: first half + `...` + last half.
    pub max_content_len: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        Self {
            include_sequence: true,
            max_content_len: DEFAULT_MAX_CONTENT,
        }
    }
}

/// The storage family a path belongs to, from the extension id in it (`roo` when it names none).
pub fn source_from_path(path: &Path) -> &'static str {
    source_in_path(path).unwrap_or("roo")
}

/// The storage family named by an extension id in the path, if any (Zoo Code's nightly build
/// and its JetBrains plugin, `wecode-ai.zoo-code`, are Zoo Code's).
pub fn source_in_path(path: &Path) -> Option<&'static str> {
    roo_formats::host::host_of_path(path).map(|h| h.source)
}

/// The task files present in a directory, with their total size and newest modification time.
struct FoundFiles {
    ui_name: Option<&'static str>,
    has_api: bool,
    has_history: bool,
    has_metadata: bool,
    total_size: u64,
    newest_mtime: Option<i64>,
}

impl FoundFiles {
    /// `None` when the directory holds none of the task files.
    fn stat(task_dir: &Path) -> Option<Self> {
        let mut found = FoundFiles {
            ui_name: None,
            has_api: false,
            has_history: false,
            has_metadata: false,
            total_size: 0,
            newest_mtime: None,
        };
        found.ui_name = if found.note(task_dir, names::UI_MESSAGES) {
            Some(names::UI_MESSAGES)
        } else if found.note(task_dir, names::CLAUDE_MESSAGES) {
            Some(names::CLAUDE_MESSAGES)
        } else {
            None
        };
        found.has_api = found.note(task_dir, names::API_HISTORY);
        found.has_history = found.note(task_dir, names::HISTORY_ITEM);
        found.has_metadata = found.note(task_dir, names::TASK_METADATA);
        let any =
            found.ui_name.is_some() || found.has_api || found.has_history || found.has_metadata;
        any.then_some(found)
    }

    /// Whether `name` exists in `task_dir`; a file's size and time are counted. A name that is
    /// there but cannot be followed (a link loop, a link to nowhere, no permission) exists too,
    /// so its reader reports it.
    fn note(&mut self, task_dir: &Path, name: &str) -> bool {
        let path = task_dir.join(name);
        let md = match std::fs::metadata(&path) {
            Ok(md) => md,
            Err(_) => return std::fs::symlink_metadata(&path).is_ok(),
        };
        if md.is_file() {
            self.total_size += md.len();
            if let Some(ms) = md
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64)
            {
                self.newest_mtime = Some(self.newest_mtime.map_or(ms, |n| n.max(ms)));
            }
        }
        true
    }
}

/// What a task's history_item / task_metadata say, read once.
struct StoredFiles {
    history: Option<HistoryItem>,
    metadata: Option<TaskMetadata>,
}

impl StoredFiles {
    fn read(task_dir: &Path, found: &FoundFiles, diagnostics: &mut Vec<Diagnostic>) -> Self {
        let history = found.has_history.then(|| {
            let r = read_history_item(&task_dir.join(names::HISTORY_ITEM));
            diagnostics.extend(r.diagnostics);
            r.value
        });
        let metadata = found.has_metadata.then(|| {
            let r = read_task_metadata(&task_dir.join(names::TASK_METADATA));
            diagnostics.extend(r.diagnostics);
            r.value
        });
        StoredFiles {
            history: history.flatten(),
            metadata: metadata.flatten(),
        }
    }

    /// The links the files record: the child's own parent fields, and the children a parent names.
    fn links(&self) -> StoredLinks {
        let (history, metadata) = (self.history.as_ref(), self.metadata.as_ref());
        StoredLinks {
            history_item_parent: history
                .and_then(|h| h.parent_task_id.clone())
                .filter(|p| !p.is_empty()),
            metadata_parent: metadata.and_then(|m| m.parent_task_id.clone()),
            root_task_id: history
                .and_then(|h| h.root_task_id.clone())
                .or_else(|| metadata.and_then(|m| m.root_task_id.clone())),
            child_ids: history
                .and_then(|h| h.child_ids.clone())
                .unwrap_or_default(),
            status: history.and_then(|h| h.status.clone()),
        }
    }
}

/// Title, mode and workspace, by precedence: title from metadata title → history item `task` →
/// instruction; mode and workspace from history item → metadata → the first request's environment
/// details (mode last from the metadata's model usage).
fn describe(
    stored: &StoredFiles,
    instruction: Option<&str>,
    env_source: Option<&str>,
) -> (Option<String>, Option<String>, Option<String>) {
    let (history, metadata) = (stored.history.as_ref(), stored.metadata.as_ref());
    let title = metadata
        .and_then(|m| m.title.clone())
        .filter(|t| !t.trim().is_empty())
        .or_else(|| history.and_then(|h| h.task.as_deref()).and_then(title_from))
        .or_else(|| instruction.and_then(title_from));
    let mode = history
        .and_then(|h| h.mode.clone())
        .or_else(|| metadata.and_then(|m| m.mode.clone()))
        .or_else(|| {
            env_source
                .and_then(text::environment_mode)
                .map(str::to_owned)
        })
        .or_else(|| {
            metadata
                .and_then(TaskMetadata::last_model_usage_mode)
                .map(str::to_owned)
        });
    let workspace = history
        .and_then(|h| h.workspace.clone())
        .filter(|w| !w.trim().is_empty())
        .or_else(|| metadata.and_then(|m| m.workspace.clone()))
        .or_else(|| {
            env_source
                .and_then(text::environment_workspace)
                .map(str::to_owned)
        });
    (title, mode, workspace)
}

/// Creation and last-activity times with where they came from: the UI record, else the API
/// history, else the history item, else the task id or metadata, else the files' modification
/// time (reported).
fn dates(
    task_id: &str,
    task_dir: &Path,
    (ui, api): (&UiPass, &ApiPass),
    stored: &StoredFiles,
    newest_mtime: Option<i64>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Option<i64>, Option<i64>, DatesFrom) {
    match (ui.min, ui.max, api.min, api.max) {
        (Some(a), Some(b), _, _) => return (Some(a), Some(b), DatesFrom::UiMessages),
        (_, _, Some(a), Some(b)) => return (Some(a), Some(b), DatesFrom::ApiHistory),
        _ => {}
    }
    if let Some(ts) = stored.history.as_ref().and_then(|h| h.ts) {
        return (Some(ts), Some(ts), DatesFrom::HistoryItem);
    }
    if let Some((a, b, from)) = stored_times(task_id, stored.metadata.as_ref()) {
        return (Some(a), Some(b), from);
    }
    let Some(ms) = newest_mtime else {
        return (None, None, DatesFrom::None);
    };
    diagnostics.push(Diagnostic::new(
        task_dir.display().to_string(),
        "",
        DiagCode::InvalidValue,
        Severity::Warning,
        "no message carries a timestamp; the dates are the newest task file's modification time",
    ));
    (Some(ms), Some(ms), DatesFrom::FileTimes)
}

/// The task as the user gave it: the UI record's first text, else the history item's `task`, else
/// the API history's first user text, else a foreign record's.
fn own_instruction(ui: &UiPass, api: &ApiPass, stored: &StoredFiles) -> Option<String> {
    ui.first_say_text
        .clone()
        .or_else(|| {
            stored
                .history
                .as_ref()
                .and_then(|h| h.task.clone())
                .filter(|t| !t.trim().is_empty())
        })
        .or_else(|| api.first_user_text.clone())
        .or_else(|| ui.first_foreign_user.clone())
}

/// Completed: the history item says so, or the last completion result came after the user's last
/// words (the UI record), or, without a UI record, the API history ends on a completion.
fn completed(ui: &UiPass, api: &ApiPass, stored: &StoredFiles) -> bool {
    stored.history.as_ref().and_then(|h| h.status.as_deref()) == Some("completed")
        || match (ui.last_completion, ui.last_user) {
            (Some(c), Some(u)) => c > u,
            (Some(_), None) => true,
            _ => false,
        }
        || (ui.count == 0 && api.completed)
}

/// A header's two match keys, from its instruction and its child calls: `truncatedInstruction`
/// and `childTaskInstructionPrefixes` (a long-lived handle drops them and derives them again here
/// when a header is shown whole).
pub fn instruction_keys(
    instruction: Option<&str>,
    children: &[NewTaskInstruction],
) -> (Option<String>, Vec<String>) {
    let truncated = instruction
        .map(|i| {
            instruction_key::compute_instruction_prefix(i, instruction_key::DEFAULT_PREFIX_LEN)
        })
        .filter(|p| !p.is_empty());
    (truncated, child_prefixes(children))
}

/// The legacy keys of the children's instructions, distinct, in order.
fn child_prefixes(children: &[NewTaskInstruction]) -> Vec<String> {
    let mut prefixes: Vec<String> = Vec::new();
    for child in children {
        let p = instruction_key::compute_instruction_prefix(
            &child.message,
            instruction_key::DEFAULT_PREFIX_LEN,
        );
        if !p.is_empty() && !prefixes.contains(&p) {
            prefixes.push(p);
        }
    }
    prefixes
}

/// Build the skeleton of one task directory: the UI record, then the API history (the sequence
/// only when there is no UI record; children seen only there), then the history item and metadata.
/// `Err` (one diagnostic) only when the directory holds none of the task files, or is a link
/// out of its store ([`roo_formats::links`]: nothing in it is read); every other task gets a
/// skeleton, with the problems met listed in its `diagnostics`.
pub fn analyze_task(
    task_id: &str,
    task_dir: &Path,
    opts: &AnalyzeOptions,
) -> Result<ConversationSkeleton, Vec<Diagnostic>> {
    if let Some(out) = roo_formats::links::task_folder_out(task_dir) {
        return Err(vec![out.diagnostic()]);
    }
    let Some(found) = FoundFiles::stat(task_dir) else {
        return Err(vec![Diagnostic::new(
            task_dir.display().to_string(),
            "",
            DiagCode::NoTaskFiles,
            Severity::Error,
            "the task directory holds none of ui_messages.json, claude_messages.json, \
             api_conversation_history.json, history_item.json, task_metadata.json",
        )]);
    };
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let stored = StoredFiles::read(task_dir, &found, &mut diagnostics);
    let mut extractor = Extractor::new();
    let mut seq = SequenceBuilder {
        include: opts.include_sequence,
        max: opts.max_content_len,
        items: Vec::new(),
        messages: 0,
        actions: 0,
    };
    let mut files = TaskFiles {
        ui_file: found.ui_name.map(str::to_owned),
        history_item: stored.history.is_some(),
        task_metadata: stored.metadata.is_some(),
        ..TaskFiles::default()
    };
    let ui = match found.ui_name {
        Some(name) => UiPass::read(
            &task_dir.join(name),
            &mut extractor,
            &mut seq,
            &mut files,
            &mut diagnostics,
        ),
        None => UiPass::default(),
    };
    let ui_has_conversation = ui.count > 0;
    let mut api = ApiPass::new(opts, ui_has_conversation);
    if found.has_api {
        let path = task_dir.join(names::API_HISTORY);
        api = api.read(&path, opts, &mut extractor, &mut files, &mut diagnostics);
    }

    // The task's own instruction, title, mode, workspace.
    let instruction = own_instruction(&ui, &api, &stored);
    let extraction = extractor.finish(instruction.as_deref());
    left_out_of_totals(
        task_dir,
        found.ui_name,
        &extraction.refused,
        &mut diagnostics,
    );
    let env_source = api.env_text.as_deref().or(ui.first_request.as_deref());
    let (title, mode, workspace) = describe(&stored, instruction.as_deref(), env_source);
    let (created, last, dates_from) = dates(
        task_id,
        task_dir,
        (&ui, &api),
        &stored,
        found.newest_mtime,
        &mut diagnostics,
    );
    let stored_links = stored.links();
    let parent_task_id = stored_links
        .history_item_parent
        .clone()
        .or_else(|| stored_links.metadata_parent.clone());
    let is_completed = completed(&ui, &api, &stored);
    let (truncated_instruction, child_prefixes) =
        instruction_keys(instruction.as_deref(), &extraction.children);
    // Sequence: the UI record when there is one; else the API history.
    let seq = if ui_has_conversation {
        seq.with_tool_calls(&extraction.tool_calls)
    } else {
        api.seq
    };
    Ok(ConversationSkeleton {
        task_id: task_id.to_owned(),
        parent_task_id,
        metadata: SkeletonMetadata {
            title,
            created_at: iso_from_ms(created.unwrap_or(0)),
            last_activity: iso_from_ms(last.unwrap_or(0)),
            mode,
            message_count: seq.messages,
            action_count: seq.actions,
            total_size: found.total_size,
            workspace,
            data_source: task_dir.display().to_string(),
            source: source_of(task_id, task_dir, found.ui_name, &ui.host_evidence).to_owned(),
            dates_from,
        },
        sequence: seq.include.then_some(seq.items),
        child_task_instruction_prefixes: child_prefixes,
        is_completed,
        truncated_instruction,
        instruction,
        child_tasks: extraction.children,
        root_task_id: stored_links.root_task_id.clone(),
        stored_links,
        parent_evidence: None,
        api_totals: extraction.totals.into(),
        files,
        created_at_ms: created,
        last_activity_ms: last,
        diagnostics,
    })
}

/// A warning for each request or condensation the totals left out (`refused`: why each was),
/// against the UI file, whose records they are.
fn left_out_of_totals(
    task_dir: &Path,
    ui_name: Option<&str>,
    refused: &[String],
    diagnostics: &mut Vec<Diagnostic>,
) {
    if refused.is_empty() {
        return;
    }
    let file = (task_dir.join(ui_name.unwrap_or(names::UI_MESSAGES)))
        .display()
        .to_string();
    diagnostics.extend(refused.iter().map(|why| {
        Diagnostic::new(
            file.clone(),
            "",
            DiagCode::InvalidValue,
            Severity::Warning,
            why.clone(),
        )
    }));
}

/// Title: the first non-empty line of the task text, trimmed (display code shortens it as it needs).
pub fn title_from(text_in: &str) -> Option<String> {
    text::unwrap_user_text(text_in)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

/// Dates when no message carries a time: Cline's task id (its creation time in milliseconds) and
/// the times `task_metadata.json` records.
fn stored_times(task_id: &str, metadata: Option<&TaskMetadata>) -> Option<(i64, i64, DatesFrom)> {
    let range = metadata.and_then(TaskMetadata::time_range);
    match (roo_formats::host::ms_from_task_id(task_id), range) {
        (Some(created), Some((_, last))) => Some((created, last.max(created), DatesFrom::TaskId)),
        (Some(created), None) => Some((created, created, DatesFrom::TaskId)),
        (None, Some((a, b))) => Some((a, b, DatesFrom::TaskMetadata)),
        (None, None) => None,
    }
}

/// The host family of a task: from the extension id in its path; else from its content (kinds
/// or fields only one family writes); else from a Cline-style task id or Claude Dev's
/// `claude_messages.json`; else Roo Code.
fn source_of(
    task_id: &str,
    task_dir: &Path,
    ui_name: Option<&str>,
    evidence: &roo_formats::HostEvidence,
) -> &'static str {
    if let Some(s) = source_in_path(task_dir) {
        return s;
    }
    if let Some(family) = evidence.family() {
        return family.source();
    }
    if roo_formats::host::is_millisecond_task_id(task_id) || ui_name == Some(names::CLAUDE_MESSAGES)
    {
        return roo_formats::HostFamily::Cline.source();
    }
    "roo"
}
