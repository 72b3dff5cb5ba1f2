//! Storage discovery, the skeleton cache and the maintenance tools.

use crate::error::{CodedError, ErrorCode};
use crate::job::Job;
use crate::{progress_fn, ProgressFn};
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use roo_store::cleanup::CleanupOptions;
use roo_store::discover::{discover_storage, DiscoverOptions};
use roo_store::find::{find_task as find_task_folder, FindTaskError, TaskLocation};
use roo_store::migrate::MigrateOptions;
use roo_store::{HostEnv, StoreError};
use std::path::PathBuf;

fn coded(e: StoreError) -> CodedError {
    CodedError::core(e.code(), e)
}

fn env() -> HostEnv {
    HostEnv::current()
}

/// The tasks folders to work on: `tasksDir`, else `locations`, else every store found.
fn tasks_dirs(
    env: &HostEnv,
    tasks_dir: Option<String>,
    locations: Option<Vec<serde_json::Value>>,
) -> Result<Vec<PathBuf>, CodedError> {
    if let Some(t) = tasks_dir {
        return Ok(vec![PathBuf::from(t)]);
    }
    if let Some(locs) = locations {
        return locs
            .into_iter()
            .map(|l| match l {
                serde_json::Value::String(s) => Ok(PathBuf::from(s)),
                serde_json::Value::Object(o) => o
                    .get("tasksDir")
                    .and_then(|v| v.as_str())
                    .map(PathBuf::from)
                    .ok_or_else(|| {
                        CodedError::new(
                            ErrorCode::InvalidArgument,
                            "a location must be a tasks folder path or an object with tasksDir (as discoverStorage returns)",
                        )
                    }),
                _ => Err(CodedError::new(
                    ErrorCode::InvalidArgument,
                    "a location must be a tasks folder path or an object with tasksDir",
                )),
            })
            .collect();
    }
    Ok(discover_storage(env, &DiscoverOptions::default())
        .locations
        .into_iter()
        .map(|l| PathBuf::from(l.tasks_dir))
        .collect())
}

#[napi(object)]
#[derive(Default)]
pub struct DiscoverStorageOptions {
    /// More roots to look at: storage folders, tasks folders or globalStorage folders.
    pub extra_roots: Option<Vec<String>>,
    /// Measure each location's size (walks every file; default true).
    pub measure_size: Option<bool>,
}

impl From<DiscoverStorageOptions> for DiscoverOptions {
    fn from(o: DiscoverStorageOptions) -> Self {
        DiscoverOptions {
            extra_roots: o
                .extra_roots
                .unwrap_or_default()
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            measure_size: o.measure_size.unwrap_or(true),
        }
    }
}

/// Every task store on this machine: Roo Code, Zoo Code, Cline and Kilo Code under every editor
/// build, server installs, custom storage paths, `ROO_STATE_STORAGE` and `extraRoots`.
#[napi(
    catch_unwind,
    js_name = "discoverStorage",
    ts_return_type = "Promise<StorageDiscovery>"
)]
pub fn discover_storage_locations(
    options: Option<DiscoverStorageOptions>,
) -> AsyncTask<Job<roo_store::discover::Discovery>> {
    let opts = DiscoverOptions::from(options.unwrap_or_default());
    Job::spawn(None, move |_| Ok(discover_storage(&env(), &opts)))
}

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct BuildSkeletonCacheOptions {
    /// Stores to cache: tasks folder paths or locations from discoverStorage (default: every store found).
    #[napi(ts_type = "Array<string | { tasksDir: string }>")]
    pub locations: Option<Vec<serde_json::Value>>,
    /// One tasks folder (instead of `locations`).
    pub tasks_dir: Option<String>,
    /// Our cache directory (default: `ROO_STATE_CACHE_DIR`, else the platform cache dir + `roo-state-core`).
    pub cache_dir: Option<String>,
    /// Only tasks of this workspace are parsed again (new tasks always are).
    pub workspace_filter: Option<String>,
    /// Parse every task again.
    pub force_rebuild: Option<bool>,
    /// How long to wait for another builder of the same store, in ms (default 600 000; 0: give
    /// up at once with `CACHE_LOCKED`, the busy answer of `roo-state cache build`).
    pub wait_ms: Option<u32>,
    #[napi(ts_type = "(progress: Progress) => void")]
    pub on_progress: Option<ProgressFn>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

/// Build or refresh the skeleton cache: only tasks whose files changed are parsed, entries of
/// deleted tasks are dropped, the hierarchy runs over each store.
#[napi(catch_unwind, ts_return_type = "Promise<BuildCacheReport>")]
pub fn build_skeleton_cache(
    options: Option<BuildSkeletonCacheOptions>,
) -> AsyncTask<Job<roo_store::cache::BuildReport>> {
    let o = options.unwrap_or_default();
    Job::spawn(o.signal, move |cancel| {
        let env = env();
        let dirs = tasks_dirs(&env, o.tasks_dir, o.locations)?;
        let report = progress_fn::<usize>(o.on_progress);
        let opts = roo_store::cache::BuildOptions {
            workspace_filter: o.workspace_filter,
            force_rebuild: o.force_rebuild.unwrap_or(false),
            on_progress: Some(&report),
            cancel: Some(cancel),
            lock_wait: o.wait_ms.map_or(roo_store::lock::DEFAULT_WAIT, |ms| {
                std::time::Duration::from_millis(u64::from(ms))
            }),
            ..roo_store::cache::BuildOptions::new(
                env.cache_root(o.cache_dir.as_deref().map(std::path::Path::new)),
            )
        };
        roo_store::cache::build_skeleton_cache(&dirs, &opts).map_err(coded)
    })
}

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct LoadSkeletonsOptions {
    /// Only tasks of this workspace (compared after normalisation).
    pub workspace: Option<String>,
    /// Serve this store only.
    pub tasks_dir: Option<String>,
    #[napi(ts_type = "Array<string | { tasksDir: string }>")]
    pub locations: Option<Vec<serde_json::Value>>,
    pub cache_dir: Option<String>,
}

/// Skeleton headers served from the cache (every cached store unless `tasksDir`/`locations`),
/// with the parents the hierarchy gave them. Reads no task file.
#[napi(catch_unwind, ts_return_type = "Promise<LoadedSkeletons>")]
pub fn load_skeletons(
    options: Option<LoadSkeletonsOptions>,
) -> AsyncTask<Job<roo_store::cache::Loaded>> {
    let o = options.unwrap_or_default();
    Job::spawn(None, move |_| {
        let env = env();
        let root = env.cache_root(o.cache_dir.as_deref().map(std::path::Path::new));
        let dirs = if o.tasks_dir.is_some() || o.locations.is_some() {
            Some(tasks_dirs(&env, o.tasks_dir, o.locations)?)
        } else {
            None
        };
        Ok(roo_store::cache::load_skeletons(
            &root,
            dirs.as_deref(),
            o.workspace.as_deref(),
        ))
    })
}

#[napi(object)]
#[derive(Default)]
pub struct DiagnoseRooStateOptions {
    /// Diagnose this tasks folder (default: every store found).
    pub tasks_dir: Option<String>,
    pub cache_dir: Option<String>,
    /// How many recent tasks to check (default 10).
    pub recent: Option<u32>,
}

/// A health report per store: files, sizes (conversations, checkpoints, other), the editor's
/// state.vscdb (read-only), our cache, and an overall OK | WARNING | ERROR with reasons.
#[napi(catch_unwind, ts_return_type = "Promise<DiagnoseReport>")]
pub fn diagnose_roo_state(
    options: Option<DiagnoseRooStateOptions>,
) -> AsyncTask<Job<roo_store::diagnose::DiagnoseReport>> {
    let o = options.unwrap_or_default();
    Job::spawn(None, move |_| {
        let env = env();
        let root = env.cache_root(o.cache_dir.as_deref().map(std::path::Path::new));
        let targets: Vec<roo_store::diagnose::Target> = match &o.tasks_dir {
            Some(t) => vec![roo_store::diagnose::Target::from_tasks_dir(
                std::path::Path::new(t),
            )],
            None => discover_storage(&env, &DiscoverOptions::default())
                .locations
                .into_iter()
                .map(|l| roo_store::diagnose::Target {
                    tasks_dir: PathBuf::from(&l.tasks_dir),
                    host: l
                        .host
                        .as_deref()
                        .and_then(roo_store::discover::host_by_name),
                    editor: l.editor,
                    state_db: l.state_db.map(PathBuf::from),
                })
                .collect(),
        };
        let mut opts = roo_store::diagnose::DiagnoseOptions::new(root);
        if let Some(n) = o.recent {
            opts.recent = n as usize;
        }
        Ok(roo_store::diagnose::diagnose(&targets, &opts))
    })
}

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct RebuildRooStateOptions {
    /// A tasks folder to scan instead of the store's own (e.g. a backup put back in place).
    pub source: Option<String>,
    /// The store's tasks folder (default: the only store found).
    pub tasks_dir: Option<String>,
    pub cache_dir: Option<String>,
    /// Also write the extension's tasks/_index.json and missing history_item.json files.
    pub regenerate_extension_index: Option<bool>,
    /// Default true: report only.
    pub dry_run: Option<bool>,
    #[napi(ts_type = "(progress: Progress) => void")]
    pub on_progress: Option<ProgressFn>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

/// Scan the task folders, wipe and rebuild our cache, and report tasks, workspaces, roots and
/// orphans; with `regenerateExtensionIndex`, also write the extension's own history index so it
/// lists the tasks again after a state.vscdb loss (every replaced file is backed up).
#[napi(catch_unwind, ts_return_type = "Promise<RebuildReport>")]
pub fn rebuild_roo_state_from_tasks(
    options: Option<RebuildRooStateOptions>,
) -> AsyncTask<Job<roo_store::rebuild::RebuildReport>> {
    let o = options.unwrap_or_default();
    Job::spawn(o.signal, move |cancel| {
        let env = env();
        let dir = match o.source.or(o.tasks_dir) {
            Some(d) => PathBuf::from(d),
            None => {
                let found = discover_storage(&env, &DiscoverOptions::default()).locations;
                match found.as_slice() {
                    [one] => PathBuf::from(&one.tasks_dir),
                    [] => {
                        return Err(CodedError::new(
                            ErrorCode::InvalidPath,
                            "no task store was found; pass tasksDir or source",
                        ))
                    }
                    many => {
                        return Err(CodedError::new(
                            ErrorCode::InvalidArgument,
                            format!(
                                "{} task stores were found ({}); pass tasksDir to choose one",
                                many.len(),
                                many.iter()
                                    .map(|l| l.tasks_dir.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ))
                    }
                }
            }
        };
        let report = progress_fn::<usize>(o.on_progress);
        let opts = roo_store::rebuild::RebuildOptions {
            tasks_dir: dir,
            cache_root: env.cache_root(o.cache_dir.as_deref().map(std::path::Path::new)),
            regenerate_extension_index: o.regenerate_extension_index.unwrap_or(false),
            dry_run: o.dry_run.unwrap_or(true),
            on_progress: Some(&report),
            cancel: Some(cancel),
            now_ms: roo_js::now_ms(),
        };
        roo_store::rebuild::rebuild_from_tasks(&opts).map_err(coded)
    })
}

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct CleanupCheckpointsOptions {
    /// Default: every store found.
    pub tasks_dir: Option<String>,
    /// Only tasks inactive for longer than this (default 30; 0 = any age).
    pub older_than_days: Option<f64>,
    /// Never touch the N most recently active tasks (default 10).
    pub keep_last: Option<u32>,
    /// Only tasks that finished.
    pub completed_only: Option<bool>,
    /// Also remove files that are neither conversation nor checkpoint data (default false).
    pub include_other: Option<bool>,
    /// Default true: report what would be freed.
    pub dry_run: Option<bool>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

impl From<&CleanupCheckpointsOptions> for CleanupOptions {
    /// Inactive for 30 days, the 10 latest kept, checkpoints only, a dry run, unless the options
    /// say otherwise ("now" is the time of the call).
    fn from(o: &CleanupCheckpointsOptions) -> Self {
        CleanupOptions {
            older_than_days: match o.older_than_days {
                Some(d) if d <= 0.0 => None,
                Some(d) => Some(d),
                None => Some(30.0),
            },
            keep_last: o.keep_last.map_or(10, |k| k as usize),
            completed_only: o.completed_only.unwrap_or(false),
            include_other: o.include_other.unwrap_or(false),
            dry_run: o.dry_run.unwrap_or(true),
            now_ms: roo_js::now_ms(),
        }
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupSummary {
    dry_run: bool,
    tasks_affected: u32,
    files: u64,
    bytes: u64,
    stores: Vec<roo_store::cleanup::CleanupReport>,
}

/// Remove obsolete checkpoint data (the checkpoints/ shadow repositories). Conversation files
/// are never touched. Dry run by default.
#[napi(catch_unwind, ts_return_type = "Promise<CleanupSummary>")]
pub fn cleanup_obsolete_checkpoints(
    options: Option<CleanupCheckpointsOptions>,
) -> AsyncTask<Job<CleanupSummary>> {
    let o = options.unwrap_or_default();
    let opts = CleanupOptions::from(&o);
    Job::spawn(o.signal, move |cancel| {
        let env = env();
        let dirs = tasks_dirs(&env, o.tasks_dir, None)?;
        let mut summary = CleanupSummary {
            dry_run: opts.dry_run,
            tasks_affected: 0,
            files: 0,
            bytes: 0,
            stores: Vec::new(),
        };
        for d in &dirs {
            let r = roo_store::cleanup::cleanup_obsolete_checkpoints(d, &opts, Some(cancel))
                .map_err(coded)?;
            summary.tasks_affected += r.tasks_affected;
            summary.files += r.files;
            summary.bytes += r.bytes;
            summary.stores.push(r);
        }
        Ok(summary)
    })
}

#[napi(object)]
#[derive(Default)]
pub struct MigrateTasksDirOptions {
    /// Report what would happen; write nothing (default false).
    pub dry_run: Option<bool>,
    /// Copy and verify even when a rename would do.
    pub force_copy: Option<bool>,
}

impl From<MigrateTasksDirOptions> for MigrateOptions {
    fn from(o: MigrateTasksDirOptions) -> Self {
        MigrateOptions {
            dry_run: o.dry_run.unwrap_or(false),
            force_copy: o.force_copy.unwrap_or(false),
            fail_at: None,
        }
    }
}

/// Move a tasks folder: rename on the same device, else copy, verify (size + hash), swap, remove.
/// Idempotent; a marker is written when done; an interruption at any step leaves a complete copy.
#[napi(catch_unwind, ts_return_type = "Promise<MigrateReport>")]
pub fn migrate_tasks_dir(
    from: String,
    to: String,
    options: Option<MigrateTasksDirOptions>,
) -> AsyncTask<Job<roo_store::migrate::MigrateReport>> {
    let opts = MigrateOptions::from(options.unwrap_or_default());
    Job::spawn(None, move |_| {
        roo_store::migrate::migrate_tasks_dir(
            std::path::Path::new(&from),
            std::path::Path::new(&to),
            &opts,
        )
        .map_err(coded)
    })
}

/// `isTaskName(name)`: whether an entry of a `tasks/` folder can be a task (names starting with
/// `_` or `.` are the extension's index and leftovers). The one rule every listing follows.
#[napi(catch_unwind)]
pub fn is_task_name(name: String) -> bool {
    roo_state::scan::is_task_name(&name)
}

/// A lookup that named no task, with the candidates of an ambiguous prefix as `details`.
fn find_error(e: FindTaskError) -> CodedError {
    let candidates: Vec<&str> = e.candidates().iter().map(|c| c.task_id.as_str()).collect();
    let details = (!candidates.is_empty()).then(|| serde_json::json!({ "candidates": candidates }));
    let err = CodedError::core(e.code(), &e);
    match details {
        Some(d) => err.with_details(d),
        None => err,
    }
}

/// Where a task lives among the tasks folders `tasksDirs` (searched in order): the first folder
/// named exactly `idOrPrefix`, else the one task folder whose name starts with it in any case.
/// Rejects with `AMBIGUOUS_TASK_ID` (`details.candidates`: every id starting so) or
/// `TASK_NOT_FOUND`; a tasks folder that cannot be listed is passed over.
#[napi(catch_unwind, ts_return_type = "Promise<TaskLocation>")]
pub fn find_task(tasks_dirs: Vec<String>, id_or_prefix: String) -> AsyncTask<Job<TaskLocation>> {
    Job::spawn(None, move |_| {
        let dirs: Vec<PathBuf> = tasks_dirs.into_iter().map(PathBuf::from).collect();
        find_task_folder(&dirs, &id_or_prefix).map_err(find_error)
    })
}

/// The shortest prefix, at least `min` characters (default 8), that names each of `ids` alone
/// among the task folders of `tasksDirs`, as `findTask` takes a prefix (in any case): what a
/// person is shown of an id.
#[napi(catch_unwind)]
pub fn short_task_ids(tasks_dirs: Vec<String>, ids: Vec<String>, min: Option<u32>) -> Vec<String> {
    let dirs: Vec<PathBuf> = tasks_dirs.into_iter().map(PathBuf::from).collect();
    let folded = roo_store::find::folded_task_names(&dirs);
    let min = min.map_or(roo_store::find::SHORT_ID_MIN, |m| m as usize);
    (ids.iter())
        .map(|id| roo_store::find::short_id(&folded, id, min))
        .collect()
}

/// The entry of `allowed` that `requested` names, compared by canonical paths (the storage folder
/// holding a `tasks/` standing for it): the one rule by which the MCP server accepts a tasks
/// folder an argument names (`roo_store::confine`). Throws `INVALID_PATH` for any other folder.
#[napi(catch_unwind)]
pub fn confine_tasks_dir(requested: String, allowed: Vec<String>) -> napi::Result<String> {
    let allowed: Vec<PathBuf> = allowed.into_iter().map(PathBuf::from).collect();
    roo_store::confine::confine_tasks_dir(std::path::Path::new(&requested), &allowed)
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| coded(e).into_sync())
}

/// Where a migration of the store `from` may go when an MCP tool call names the destination `to`
/// (`roo_store::confine::confine_destination`): beside the store, or under one of `roots` (the
/// folders the user named when the server was started), links resolved. Returns the resolved
/// destination; throws `INVALID_PATH` for any other place.
#[napi(catch_unwind)]
pub fn confine_destination(to: String, from: String, roots: Vec<String>) -> napi::Result<String> {
    let roots: Vec<PathBuf> = roots.into_iter().map(PathBuf::from).collect();
    roo_store::confine::confine_destination(
        std::path::Path::new(&to),
        std::path::Path::new(&from),
        &roots,
    )
    .map(|p| p.to_string_lossy().into_owned())
    .map_err(|e| coded(e).into_sync())
}
