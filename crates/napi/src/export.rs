//! Exports (XML, Markdown, JSON, CSV) and the export configuration.

use crate::error::CodedError;
use crate::job::Job;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use roo_export::config::{configure, ConfigAction, ConfigOutcome};
use roo_export::{
    ConversationRequest, ExportError, ExportOutcome, JsonVariant, Output, ProjectRequest,
    TaskXmlRequest,
};

fn coded(e: ExportError) -> CodedError {
    CodedError::core(e.code(), e)
}

/// Where and how an export is written, as every export's options give it.
struct OutputOptions {
    file_path: Option<String>,
    overwrite: Option<bool>,
    output_root: Option<String>,
    pretty_print: Option<bool>,
    schema_profile: Option<String>,
}

impl TryFrom<OutputOptions> for Output {
    type Error = CodedError;

    /// The output, its schema profile checked.
    fn try_from(o: OutputOptions) -> Result<Self, CodedError> {
        let schema_profile = match o.schema_profile.as_deref() {
            None => None,
            Some(p) => Some(roo_export::xml::SchemaProfile::parse(p).ok_or_else(|| {
                CodedError::new(
                    crate::error::ErrorCode::InvalidArgument,
                    format!("schemaProfile must be 'seed' or 'extended', not '{p}'"),
                )
            })?),
        };
        Ok(Output {
            file_path: o.file_path,
            overwrite: o.overwrite,
            output_root: o.output_root,
            pretty_print: o.pretty_print,
            schema_profile,
        })
    }
}

#[napi(object, object_to_js = false)]
pub struct ExportTaskXmlOptions {
    pub task_id: String,
    /// The `tasks/` directory to read (default: `$ROO_STATE_STORAGE`'s first directory + `/tasks`).
    pub tasks_dir: Option<String>,
    /// Write here (inside the output root) instead of returning the XML.
    pub file_path: Option<String>,
    /// Full message content (default from the configuration: false, a preview).
    pub include_content: Option<bool>,
    pub pretty_print: Option<bool>,
    /// XML: `seed` (default) writes what the design document's schemas accept (schemas/*.xsd);
    /// `extended` adds the optional fields of schemas/extended/*.xsd.
    #[napi(ts_type = "'seed' | 'extended'")]
    pub schema_profile: Option<String>,
    /// Replace an existing file (default false).
    pub overwrite: Option<bool>,
    /// Directory `filePath` must lie in (default: the configured root, else the current directory).
    pub output_root: Option<String>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

impl TryFrom<ExportTaskXmlOptions> for TaskXmlRequest {
    type Error = CodedError;

    fn try_from(o: ExportTaskXmlOptions) -> Result<Self, CodedError> {
        Ok(TaskXmlRequest {
            output: Output::try_from(OutputOptions {
                file_path: o.file_path,
                overwrite: o.overwrite,
                output_root: o.output_root,
                pretty_print: o.pretty_print,
                schema_profile: o.schema_profile,
            })?,
            task_id: o.task_id,
            tasks_dir: o.tasks_dir,
            include_content: o.include_content,
        })
    }
}

/// One task as XML (schemas/task.xsd).
#[napi(catch_unwind, ts_return_type = "Promise<ExportResult>")]
pub fn export_task_xml(mut options: ExportTaskXmlOptions) -> AsyncTask<Job<ExportOutcome>> {
    let signal = options.signal.take();
    // Refused options are reported when the job runs, as every export failure is.
    let req = TaskXmlRequest::try_from(options);
    Job::spawn(signal, move |cancel| {
        roo_export::export_task_xml(&req?, cancel).map_err(coded)
    })
}

#[napi(object, object_to_js = false)]
pub struct ExportConversationOptions {
    /// The root task of the conversation.
    pub conversation_id: String,
    pub tasks_dir: Option<String>,
    pub file_path: Option<String>,
    /// Levels of tasks, the root being level 1 (default: the whole tree).
    pub max_depth: Option<u32>,
    pub include_content: Option<bool>,
    pub pretty_print: Option<bool>,
    /// XML: `seed` (default) writes what the design document's schemas accept (schemas/*.xsd);
    /// `extended` adds the optional fields of schemas/extended/*.xsd.
    #[napi(ts_type = "'seed' | 'extended'")]
    pub schema_profile: Option<String>,
    pub overwrite: Option<bool>,
    pub output_root: Option<String>,
    /// JSON only: `light` (default) or `skeletons`.
    #[napi(ts_type = "'light' | 'skeletons'")]
    pub variant: Option<String>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

impl TryFrom<ExportConversationOptions> for ConversationRequest {
    type Error = CodedError;

    fn try_from(o: ExportConversationOptions) -> Result<Self, CodedError> {
        Ok(ConversationRequest {
            output: Output::try_from(OutputOptions {
                file_path: o.file_path,
                overwrite: o.overwrite,
                output_root: o.output_root,
                pretty_print: o.pretty_print,
                schema_profile: o.schema_profile,
            })?,
            conversation_id: o.conversation_id,
            tasks_dir: o.tasks_dir,
            max_depth: o.max_depth,
            include_content: o.include_content,
        })
    }
}

/// The signal of a conversation export and its request (or why its options are refused,
/// reported when the job runs).
fn conversation_request(
    mut o: ExportConversationOptions,
) -> (
    Option<crate::job::Signal>,
    Result<ConversationRequest, CodedError>,
) {
    (o.signal.take(), ConversationRequest::try_from(o))
}

/// A conversation (root task and descendants, nested) as XML (schemas/conversation.xsd).
#[napi(catch_unwind, ts_return_type = "Promise<ExportResult>")]
pub fn export_conversation_xml(
    options: ExportConversationOptions,
) -> AsyncTask<Job<ExportOutcome>> {
    let (signal, req) = conversation_request(options);
    Job::spawn(signal, move |cancel| {
        roo_export::export_conversation_xml(&req?, cancel).map_err(coded)
    })
}

/// A conversation as Markdown, in the layout of the extension's own task export.
#[napi(catch_unwind, ts_return_type = "Promise<ExportResult>")]
pub fn export_conversation_markdown(
    options: ExportConversationOptions,
) -> AsyncTask<Job<ExportOutcome>> {
    let (signal, req) = conversation_request(options);
    Job::spawn(signal, move |cancel| {
        roo_export::export_conversation_markdown(&req?, cancel).map_err(coded)
    })
}

/// A conversation as JSON: `light` (the tree with each task's summary) or `skeletons`.
#[napi(catch_unwind, ts_return_type = "Promise<ExportResult>")]
pub fn export_conversation_json(
    options: ExportConversationOptions,
) -> AsyncTask<Job<ExportOutcome>> {
    let variant = options.variant.clone();
    let (signal, req) = conversation_request(options);
    Job::spawn(signal, move |cancel| {
        let variant = match variant.as_deref() {
            None | Some("light") => JsonVariant::Light,
            Some("skeletons") => JsonVariant::Skeletons,
            Some(other) => {
                return Err(CodedError::new(
                    crate::error::ErrorCode::InvalidArgument,
                    format!("variant {other:?} is not known; use 'light' or 'skeletons'"),
                ))
            }
        };
        roo_export::export_conversation_json(&req?, variant, cancel).map_err(coded)
    })
}

#[napi(object, object_to_js = false)]
pub struct ExportProjectOptions {
    /// The workspace directory (compared after normalisation: separators, case, trailing `/`).
    /// Required for XML; for the CSV task list, absent means every task.
    pub project_path: Option<String>,
    pub tasks_dir: Option<String>,
    pub file_path: Option<String>,
    /// ISO 8601 date or date-time, or `now-7d`.
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    /// A named filter of the export configuration.
    pub filter: Option<String>,
    pub pretty_print: Option<bool>,
    /// XML: `seed` (default) writes what the design document's schemas accept (schemas/*.xsd);
    /// `extended` adds the optional fields of schemas/extended/*.xsd.
    #[napi(ts_type = "'seed' | 'extended'")]
    pub schema_profile: Option<String>,
    pub overwrite: Option<bool>,
    pub output_root: Option<String>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

impl TryFrom<ExportProjectOptions> for ProjectRequest {
    type Error = CodedError;

    fn try_from(o: ExportProjectOptions) -> Result<Self, CodedError> {
        Ok(ProjectRequest {
            output: Output::try_from(OutputOptions {
                file_path: o.file_path,
                overwrite: o.overwrite,
                output_root: o.output_root,
                pretty_print: o.pretty_print,
                schema_profile: o.schema_profile,
            })?,
            project_path: o.project_path,
            tasks_dir: o.tasks_dir,
            start_date: o.start_date,
            end_date: o.end_date,
            filter: o.filter,
        })
    }
}

/// The signal of a project export and its request (or why its options are refused, reported
/// when the job runs).
fn project_request(
    mut o: ExportProjectOptions,
) -> (
    Option<crate::job::Signal>,
    Result<ProjectRequest, CodedError>,
) {
    (o.signal.take(), ProjectRequest::try_from(o))
}

/// A project's summary and one entry per conversation as XML (schemas/project.xsd).
#[napi(catch_unwind, ts_return_type = "Promise<ExportResult>")]
pub fn export_project_xml(options: ExportProjectOptions) -> AsyncTask<Job<ExportOutcome>> {
    let (signal, req) = project_request(options);
    Job::spawn(signal, move |cancel| {
        roo_export::export_project_xml(&req?, cancel).map_err(coded)
    })
}

/// The task list (of a project, within dates) as CSV.
#[napi(catch_unwind, ts_return_type = "Promise<ExportResult>")]
pub fn export_task_list_csv(options: ExportProjectOptions) -> AsyncTask<Job<ExportOutcome>> {
    let (signal, req) = project_request(options);
    Job::spawn(signal, move |cancel| {
        roo_export::export_task_list_csv(&req?, cancel).map_err(coded)
    })
}

#[napi(object, object_to_js = false)]
pub struct ConfigureXmlExportOptions {
    #[napi(ts_type = "'get' | 'set' | 'reset'")]
    pub action: String,
    /// For `set`: a partial configuration, merged into the current one.
    #[napi(ts_type = "PartialExportConfig")]
    pub config: Option<serde_json::Value>,
}

/// Read, change (deep merge, validated) or reset `xml_export_config.json`.
#[napi(catch_unwind, ts_return_type = "Promise<ConfigureXmlExportResult>")]
pub fn configure_xml_export(options: ConfigureXmlExportOptions) -> AsyncTask<Job<ConfigOutcome>> {
    Job::spawn(None, move |_| {
        let action = ConfigAction::parse(&options.action, options.config).map_err(coded)?;
        configure(action).map_err(coded)
    })
}
