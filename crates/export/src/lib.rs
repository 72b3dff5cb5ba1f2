//! Exports of Roo Code task stores.
//!
//! - XML: one task ([`export_task_xml`]), a conversation tree ([`export_conversation_xml`]) and a
//!   project summary ([`export_project_xml`]), valid against `schemas/*.xsd`, streamed with
//!   quick-xml one task at a time.
//! - Markdown of a conversation in the layout of the extension's own task export
//!   ([`export_conversation_markdown`]), JSON (light tree or full skeletons,
//!   [`export_conversation_json`]) and CSV of the task list ([`export_task_list_csv`]).
//! - The export configuration ([`config`]) whose defaults feed every call.
//! - Safe output paths ([`paths`]): every `filePath` is checked against the output root before any
//!   work starts, and written atomically.
//!
//! Without `file_path` the export is returned as a string; with it, it is written.

pub mod config;
pub mod csv;
pub mod dates;
pub mod error;
pub mod json;
pub mod markdown;
pub mod paths;
pub mod source;
pub mod tree;
pub mod xml;

pub use error::{ExportError, Result};
pub use source::{open_source, SkeletonSource, StoreSource, TasksDirSource};
pub use xml::Written;

use config::{ExportDefaults, ExportFilter};
use paths::{OutputPolicy, Produced, Sink};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use tree::{Conversation, ProjectFilter};
use xml::ContentOptions;

/// Where and how an export is written. Unset fields take the configuration's defaults.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// Write here (inside the output root); `None` returns the export.
    pub file_path: Option<String>,
    pub overwrite: Option<bool>,
    /// The output root (for the embedding program; tool arguments should not set it).
    pub output_root: Option<String>,
    pub pretty_print: Option<bool>,
    /// XML: the schemas written for (default: the seed schemas).
    pub schema_profile: Option<xml::SchemaProfile>,
}

/// `exportTaskXml`.
#[derive(Debug, Clone, Default)]
pub struct TaskXmlRequest {
    pub task_id: String,
    pub tasks_dir: Option<String>,
    pub include_content: Option<bool>,
    pub output: Output,
}

/// `exportConversationXml` (and the Markdown and JSON exports of a conversation).
#[derive(Debug, Clone, Default)]
pub struct ConversationRequest {
    pub conversation_id: String,
    pub tasks_dir: Option<String>,
    /// Levels of tasks, the root being level 1 (`None`: the configured default, else all).
    pub max_depth: Option<u32>,
    pub include_content: Option<bool>,
    pub output: Output,
}

/// `exportProjectXml` and the task list.
#[derive(Debug, Clone, Default)]
pub struct ProjectRequest {
    /// The workspace; `None` (task list only) keeps every task.
    pub project_path: Option<String>,
    pub tasks_dir: Option<String>,
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    /// A filter of the configuration (`filters.<name>`); explicit dates override its dates.
    pub filter: Option<String>,
    pub output: Output,
}

/// What an export produced.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "ExportResult"),
    ts(optional_fields)
)]
pub struct ExportOutcome {
    /// `xml`, `markdown`, `json` or `csv`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "\"xml\" | \"markdown\" | \"json\" | \"csv\"")
    )]
    pub format: &'static str,
    /// The export itself, when no `filePath` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The file written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    /// Size of the export in bytes.
    pub bytes: u64,
    #[serde(flatten)]
    pub written: Written,
    pub warnings: Vec<String>,
}

/// The configuration's defaults, and any problem met reading it.
struct Settings {
    defaults: ExportDefaults,
    filters: std::collections::BTreeMap<String, ExportFilter>,
    warnings: Vec<String>,
}

fn settings() -> Settings {
    match config::load() {
        Ok(l) => Settings {
            defaults: l.config.defaults,
            filters: l.config.filters,
            warnings: l.warnings,
        },
        Err(e) => Settings {
            defaults: ExportDefaults::default(),
            filters: Default::default(),
            warnings: vec![format!("{e}; the default export settings were used")],
        },
    }
}

impl Settings {
    fn content(&self, include: Option<bool>, o: &Output) -> ContentOptions {
        ContentOptions {
            include_content: include.unwrap_or(self.defaults.include_content),
            preview_len: self.defaults.content_preview_length as usize,
            max_content_len: self.defaults.max_content_length as usize,
            profile: o.schema_profile.unwrap_or_default(),
        }
    }

    fn pretty(&self, o: &Output) -> bool {
        o.pretty_print.unwrap_or(self.defaults.pretty_print)
    }

    fn policy(&self, o: &Output, source: &dyn SkeletonSource) -> Result<OutputPolicy> {
        let root = match o
            .output_root
            .as_deref()
            .or(self.defaults.output_root.as_deref())
        {
            Some(r) if !r.trim().is_empty() => PathBuf::from(r),
            _ => std::env::current_dir().map_err(|e| {
                ExportError::InvalidPath(format!(
                    "the current directory (the default output root) cannot be read: {e}; \
                     configure defaults.outputRoot"
                ))
            })?,
        };
        Ok(OutputPolicy {
            root,
            overwrite: o.overwrite.unwrap_or(self.defaults.overwrite),
            forbidden: source.stores(),
        })
    }

    fn project_filter(&self, req: &ProjectRequest) -> Result<ProjectFilter> {
        let named = match req.filter.as_deref() {
            Some(name) => Some(self.filters.get(name).ok_or_else(|| {
                let known: Vec<&str> = self.filters.keys().map(String::as_str).collect();
                ExportError::InvalidArgument(format!(
                    "no filter named {name:?} in the export configuration (known: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ))
            })?),
            None => None,
        };
        let now = roo_js::now_ms();
        let bound =
            |given: Option<&str>, from_filter: Option<&str>, is_end: bool, what: &str| match given
                .or(from_filter)
            {
                None => Ok(None),
                Some(s) => dates::parse_date_bound(s, is_end, now)
                    .map(Some)
                    .ok_or_else(|| {
                        ExportError::InvalidArgument(format!(
                            "{what} {s:?} is not a date: give ISO 8601 (2025-09-01 or \
                         2025-09-01T10:00:00Z) or a relative date such as now-7d"
                        ))
                    }),
            };
        let start = bound(
            req.start_date.as_deref(),
            named.and_then(|f| f.start_date.as_deref()),
            false,
            "startDate",
        )?;
        let end = bound(
            req.end_date.as_deref(),
            named.and_then(|f| f.end_date.as_deref()),
            true,
            "endDate",
        )?;
        if let (Some(s), Some(e)) = (start, end) {
            if s > e {
                return Err(ExportError::InvalidArgument(
                    "startDate is after endDate".into(),
                ));
            }
        }
        Ok(ProjectFilter {
            start_ms: start,
            end_ms: end,
            mode: named.and_then(|f| f.mode.clone()),
        })
    }
}

fn tasks_dir_shown(req_dir: Option<&str>) -> String {
    req_dir.unwrap_or("the task store").to_owned()
}

/// One task as `<task>` XML. Its `parentTaskId` is the stored link, else the one the hierarchy
/// reconstructs over the store.
pub fn export_task_xml(req: &TaskXmlRequest, cancel: &AtomicBool) -> Result<ExportOutcome> {
    let source = open_source(req.tasks_dir.as_deref())?;
    source.task_dir(&req.task_id)?;
    let settings = settings();
    let content = settings.content(req.include_content, &req.output);
    let pretty = settings.pretty(&req.output);
    let sink = open_sink(&settings, &req.output, source.as_ref())?;
    let skel = source.full(&req.task_id, &content.analyze())?;
    let stored = skel.parent_task_id.clone().filter(|p| *p != req.task_id);
    let parent = match stored {
        Some(p) => Some(p),
        None => source
            .headers(cancel)?
            .into_iter()
            .find(|h| h.task_id == req.task_id)
            .and_then(|h| h.parent_task_id),
    };
    let (sink, written) = xml::write_task(sink, &skel, parent.as_deref(), pretty, &content)?;
    finish_sink("xml", sink, written, settings.warnings, cancel)
}

fn open_sink(settings: &Settings, output: &Output, source: &dyn SkeletonSource) -> Result<Sink> {
    let policy = settings.policy(output, source)?;
    Sink::open(output.file_path.as_deref(), &policy)
}

struct ConversationParts {
    source: Box<dyn SkeletonSource>,
    headers: Vec<roo_state::ConversationSkeleton>,
    settings: Settings,
    sink: Sink,
}

/// Source, output (checked before the store is scanned), headers.
fn conversation_parts(req: &ConversationRequest, cancel: &AtomicBool) -> Result<ConversationParts> {
    let source = open_source(req.tasks_dir.as_deref())?;
    source.task_dir(&req.conversation_id)?;
    let settings = settings();
    let sink = open_sink(&settings, &req.output, source.as_ref())?;
    let headers = source.headers(cancel)?;
    Ok(ConversationParts {
        source,
        headers,
        settings,
        sink,
    })
}

fn conversation<'h>(
    headers: &'h [roo_state::ConversationSkeleton],
    settings: &Settings,
    req: &ConversationRequest,
) -> Result<Conversation<'h>> {
    Conversation::new(
        headers,
        &req.conversation_id,
        req.max_depth.or(settings.defaults.max_depth),
        &tasks_dir_shown(req.tasks_dir.as_deref()),
    )
}

/// A conversation (the root and its descendants, nested) as `<conversation>` XML.
pub fn export_conversation_xml(
    req: &ConversationRequest,
    cancel: &AtomicBool,
) -> Result<ExportOutcome> {
    let ConversationParts {
        source,
        headers,
        settings,
        sink,
    } = conversation_parts(req, cancel)?;
    let conv = conversation(&headers, &settings, req)?;
    let content = settings.content(req.include_content, &req.output);
    let pretty = settings.pretty(&req.output);
    let (sink, written) =
        xml::write_conversation(sink, source.as_ref(), &conv, pretty, &content, cancel)?;
    finish_sink("xml", sink, written, settings.warnings, cancel)
}

/// A project (the tasks of one workspace) as `<projectExport>` XML: a summary and one
/// `<conversation>` per root task.
pub fn export_project_xml(req: &ProjectRequest, cancel: &AtomicBool) -> Result<ExportOutcome> {
    let project = req
        .project_path
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| {
            ExportError::InvalidArgument(
                "projectPath is required: the workspace directory whose tasks are exported".into(),
            )
        })?;
    let source = open_source(req.tasks_dir.as_deref())?;
    let settings = settings();
    let filter = settings.project_filter(req)?;
    let pretty = settings.pretty(&req.output);
    let sink = open_sink(&settings, &req.output, source.as_ref())?;
    let headers = source.headers(cancel)?;
    let conversations = tree::project_conversations(&headers, project, &filter);
    let profile = req.output.schema_profile.unwrap_or_default();
    let (sink, written) = xml::write_project(sink, project, &conversations, pretty, profile)?;
    finish_sink("xml", sink, written, settings.warnings, cancel)
}

fn finish_sink(
    format: &'static str,
    sink: Sink,
    written: Written,
    warnings: Vec<String>,
    cancel: &AtomicBool,
) -> Result<ExportOutcome> {
    if cancel.load(Ordering::Relaxed) {
        return Err(ExportError::Aborted);
    }
    let (content, file_path, bytes) = match sink.finish()? {
        Produced::Content(c) => {
            let n = c.len() as u64;
            (Some(c), None, n)
        }
        Produced::File { path, bytes } => (None, Some(path.display().to_string()), bytes),
    };
    Ok(ExportOutcome {
        format,
        content,
        file_path,
        bytes,
        written,
        warnings,
    })
}

/// A conversation as Markdown, in the layout of the extension's own task export.
pub fn export_conversation_markdown(
    req: &ConversationRequest,
    cancel: &AtomicBool,
) -> Result<ExportOutcome> {
    let ConversationParts {
        source,
        headers,
        settings,
        sink,
    } = conversation_parts(req, cancel)?;
    let conv = conversation(&headers, &settings, req)?;
    // Markdown is read by people: full content unless asked otherwise.
    let content = settings.content(Some(req.include_content.unwrap_or(true)), &req.output);
    let (sink, written) =
        markdown::write_conversation(sink, source.as_ref(), &conv, &content, cancel)?;
    finish_sink("markdown", sink, written, settings.warnings, cancel)
}

/// JSON variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonVariant {
    /// The tree with each task's summary.
    #[default]
    Light,
    /// Every task's full skeleton (with its sequence).
    Skeletons,
}

/// A conversation as JSON.
pub fn export_conversation_json(
    req: &ConversationRequest,
    variant: JsonVariant,
    cancel: &AtomicBool,
) -> Result<ExportOutcome> {
    let ConversationParts {
        source,
        headers,
        settings,
        sink,
    } = conversation_parts(req, cancel)?;
    let conv = conversation(&headers, &settings, req)?;
    let content = settings.content(req.include_content, &req.output);
    let pretty = settings.pretty(&req.output);
    let (sink, written) = match variant {
        JsonVariant::Light => json::write_light(sink, &conv, pretty)?,
        JsonVariant::Skeletons => {
            json::write_skeletons(sink, source.as_ref(), &conv, pretty, &content, cancel)?
        }
    };
    finish_sink("json", sink, written, settings.warnings, cancel)
}

/// The task list (optionally one project's, within dates) as CSV, one row per task.
pub fn export_task_list_csv(req: &ProjectRequest, cancel: &AtomicBool) -> Result<ExportOutcome> {
    let source = open_source(req.tasks_dir.as_deref())?;
    let settings = settings();
    let filter = settings.project_filter(req)?;
    let sink = open_sink(&settings, &req.output, source.as_ref())?;
    let headers = source.headers(cancel)?;
    let (sink, written) =
        csv::write_task_list(sink, &headers, req.project_path.as_deref(), &filter)?;
    finish_sink("csv", sink, written, settings.warnings, cancel)
}
