//! A changed task read from disk: its dialogue cut into chunk points (not yet embedded) and the
//! record the index state keeps of it.

use crate::chunk::{self, ChunkOptions};
use crate::lexical;
use crate::state::{self, TaskRecord};
use crate::store::{ChunkPayload, Point};
use roo_formats::diag::Diagnostic;
use roo_state::skeleton::{analyze_task, AnalyzeOptions, ConversationSkeleton};
use std::path::PathBuf;

/// A task's linked header as the task store gives it: the skeleton, or why there is none.
pub(super) type LinkedHeader<'a> = std::result::Result<&'a ConversationSkeleton, &'a [Diagnostic]>;

/// A task to read again: its folder changed, is new, or its parent changed.
pub(super) struct PendingTask {
    pub(super) id: String,
    pub(super) dir: PathBuf,
    /// The `tasks/` folder it was found in.
    pub(super) tasks_dir: String,
    /// The size and modification time of its source files now.
    pub(super) files: Vec<state::FileSig>,
}

/// What every chunk of a run carries besides the task's own facts, and how chunks are cut.
pub(super) struct ChunkContext {
    pub(super) host: String,
    pub(super) user: Option<String>,
    pub(super) chunking: ChunkOptions,
}

/// A task read from disk, ready to be embedded.
pub(super) struct Prepared {
    pub(super) task_id: String,
    pub(super) record: TaskRecord,
    pub(super) points: Vec<Point>,
    pub(super) failure: Option<String>,
}

/// Task-level payload fields, hashed to notice a change of title, workspace or parent.
fn meta_hash(p: &ChunkPayloadMeta) -> u64 {
    let s = format!(
        "{:?}\u{1}{:?}\u{1}{:?}\u{1}{:?}\u{1}{}\u{1}{:?}",
        p.title, p.workspace, p.parent, p.source, p.host, p.user
    );
    xxhash_rust::xxh3::xxh3_64(s.as_bytes())
}

/// The task-level fields every chunk payload of a task repeats.
struct ChunkPayloadMeta {
    title: Option<String>,
    workspace: Option<String>,
    parent: Option<String>,
    source: Option<String>,
    host: String,
    user: Option<String>,
}

/// The parent a task's chunks name: the hierarchy's, else what its files store.
pub(super) fn meta_parent(s: &ConversationSkeleton) -> Option<String> {
    s.parent_task_id
        .clone()
        .or_else(|| s.stored_links.history_item_parent.clone())
        .or_else(|| s.stored_links.metadata_parent.clone())
}

/// The last folder of a workspace path, as the workspace filter matches a bare name.
fn workspace_name(ws: &str) -> Option<String> {
    let key = roo_state::hierarchy::normalize_workspace(ws);
    roo_state::hierarchy::workspace_folder(&key).map(str::to_owned)
}

/// What a task's header gives its chunks and its record; without a header, only the host and
/// user, and why the task could not be read.
struct HeaderFacts {
    meta: ChunkPayloadMeta,
    created_ms: Option<i64>,
    last_ms: Option<i64>,
    created_at: Option<String>,
    last_activity: Option<String>,
    failure: Option<String>,
}

impl HeaderFacts {
    /// The facts of `header`, with the run's host and user.
    fn of(header: LinkedHeader<'_>, ctx: &ChunkContext) -> Self {
        match header {
            Ok(s) => HeaderFacts {
                meta: ChunkPayloadMeta {
                    title: s.metadata.title.clone(),
                    workspace: s.metadata.workspace.clone(),
                    parent: meta_parent(s),
                    source: Some(s.metadata.source.clone()),
                    host: ctx.host.clone(),
                    user: ctx.user.clone(),
                },
                created_ms: s.created_at_ms,
                last_ms: s.last_activity_ms,
                created_at: Some(s.metadata.created_at.clone()),
                last_activity: Some(s.metadata.last_activity.clone()),
                failure: None,
            },
            Err(diags) => HeaderFacts {
                meta: ChunkPayloadMeta {
                    title: None,
                    workspace: None,
                    parent: None,
                    source: None,
                    host: ctx.host.clone(),
                    user: ctx.user.clone(),
                },
                created_ms: None,
                last_ms: None,
                created_at: None,
                last_activity: None,
                failure: Some(
                    diags
                        .first()
                        .map(|d| d.message.clone())
                        .unwrap_or_else(|| "the folder holds no task files".to_owned()),
                ),
            },
        }
    }
}

/// Read `task` into points and a record. `header` is the task store's; without one (a folder the
/// store does not hold: gone or renamed between the listing and the store's open) the folder is
/// read here, which reports why it has no header.
pub(super) fn chunk_task(
    task: &PendingTask,
    header: Option<LinkedHeader<'_>>,
    ctx: &ChunkContext,
) -> Prepared {
    let read;
    let header = match header {
        Some(h) => h,
        None => {
            read = analyze_task(
                &task.id,
                &task.dir,
                &AnalyzeOptions {
                    include_sequence: false,
                    ..AnalyzeOptions::default()
                },
            );
            read.as_ref().map_err(Vec::as_slice)
        }
    };
    let facts = HeaderFacts::of(header, ctx);
    let points = chunk_points(task, &facts, &ctx.chunking);
    let meta = &facts.meta;
    let record = TaskRecord {
        tasks_dir: task.tasks_dir.clone(),
        files: task.files.clone(),
        meta_hash: meta_hash(meta),
        chunk_ids: points.iter().map(|p| p.id).collect(),
        title: meta.title.clone(),
        workspace: meta.workspace.clone(),
        parent_task_id: meta.parent.clone(),
        created_at: facts.created_at,
        last_activity: facts.last_activity,
        source: meta.source.clone(),
        indexed_at_ms: state::now_ms(),
        also_in: Vec::new(),
    };
    Prepared {
        task_id: task.id.clone(),
        record,
        points,
        failure: facts.failure,
    }
}

/// The task's dialogue cut into chunks, each a point with its lexical vector and payload. A chunk
/// without a time of its own takes the task's creation (else last activity) time.
fn chunk_points(task: &PendingTask, facts: &HeaderFacts, chunking: &ChunkOptions) -> Vec<Point> {
    let meta = &facts.meta;
    let dialogue = chunk::extract_dialogue(&task.dir);
    let texts = chunk::chunk_dialogue(&dialogue.messages, chunking);
    let fallback_ts = facts.created_ms.or(facts.last_ms).unwrap_or(0);
    let ws_key = meta
        .workspace
        .as_deref()
        .map(roo_state::hierarchy::normalize_workspace);
    let ws_name = meta.workspace.as_deref().and_then(workspace_name);
    texts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let first = c.first_ts.unwrap_or(fallback_ts);
            let last = c.last_ts.unwrap_or(first);
            Point {
                id: chunk::chunk_id(&task.id, i, &c.text),
                dense: None,
                sparse: lexical::document_vector(&c.text),
                payload: ChunkPayload {
                    task_id: task.id.clone(),
                    source_file: dialogue.source_file.clone(),
                    timestamp: first.div_euclid(1000),
                    timestamp_ms: first,
                    end_timestamp_ms: last,
                    dialogue_snippet: c.text.clone(),
                    user: meta.user.clone(),
                    workspace: meta.workspace.clone(),
                    workspace_key: ws_key.clone(),
                    workspace_name: ws_name.clone(),
                    role: c.role.to_owned(),
                    host: meta.host.clone(),
                    chunk_index: i as u32,
                    task_title: meta.title.clone(),
                    parent_task_id: meta.parent.clone(),
                    source: meta.source.clone(),
                },
            }
        })
        .collect()
}
