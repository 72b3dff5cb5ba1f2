//! `TaskStore`: the native task store handle. Skeleton headers stay in Rust; a long-lived server
//! or extension keeps one handle, refreshes it, and pulls only what it shows (a page, a subtree, a
//! task). `headers()` hands every header over in one step: one JSON text parsed by V8.

use crate::error::{CodedError, ErrorCode};
use crate::hierarchy::DEFAULT_TREE_DEPTH;
use crate::job::{cancel_flag, Job, Signal};
use crate::{progress_fn, ProgressFn};
use napi::bindgen_prelude::{AsyncTask, ClassInstance, Unknown};
use napi::{Env, ScopedTask};
use napi_derive::napi;
use roo_state::hierarchy::TreeOptions;
use roo_store::task_store::{Fields, ListQuery, Lookup, OpenOptions, RefreshReport, Watch};
use roo_store::HostEnv;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};

type Shared = Arc<RwLock<roo_store::task_store::TaskStore>>;

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct OpenTaskStoreOptions {
    /// The tasks folders (`…/tasks`) to open. Default: every store found on this machine.
    pub tasks_dirs: Option<Vec<String>>,
    /// One tasks folder (instead of `tasksDirs`).
    pub tasks_dir: Option<String>,
    /// Our skeleton cache directory (default: `ROO_STATE_CACHE_DIR`, else the platform cache dir).
    pub cache_dir: Option<String>,
    /// Read every task instead of using the skeleton cache (and write no cache).
    pub no_cache: Option<bool>,
    /// Honour stored links (history_item, childIds, task_metadata); default true.
    pub use_stored_links: Option<bool>,
    /// Stat every file of every task on each refresh (default false: in a store whose host
    /// replaces its files by rename, Roo, Zoo or Kilo Code, a task folder whose modification time
    /// has not moved is taken as unchanged, and one folder in 16 is checked in full each time).
    pub every_file: Option<bool>,
    /// Tasks parsed so far of the store being read (a first open of a large store parses every
    /// task).
    #[napi(ts_type = "(progress: Progress) => void")]
    pub on_progress: Option<ProgressFn>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Signal>,
}

#[napi(object)]
#[derive(Default)]
pub struct TaskListQuery {
    /// Only tasks of this workspace (compared after normalisation).
    pub workspace: Option<String>,
    /// Only tasks of this host family.
    #[napi(ts_type = "HostSource")]
    pub host: Option<String>,
    /// Only tasks of this mode (`code`, `orchestrator`, …; compared without case).
    pub mode: Option<String>,
    /// Last activity at or after this time (ms since the epoch).
    pub since: Option<f64>,
    /// Last activity before this time (ms since the epoch).
    pub until: Option<f64>,
    /// Only tasks without a parent.
    pub roots_only: Option<bool>,
    /// Only the top tasks of the forest (a tree's top nodes): without a parent, or whose parent
    /// is not among the handle's tasks.
    pub top_only: Option<bool>,
    pub offset: Option<u32>,
    pub limit: Option<u32>,
    /// The order (default `lastActivity`): dates newest first, counts, size and cost largest
    /// first, titles A to Z; ties by task id.
    #[napi(
        ts_type = "'lastActivity' | 'createdAt' | 'title' | 'messageCount' | 'actionCount' | 'totalSize' | 'totalCost'"
    )]
    pub sort: Option<String>,
    /// `asc` or `desc` instead of the key's own order.
    #[napi(ts_type = "'asc' | 'desc'")]
    pub order: Option<String>,
    /// Only these top-level fields of each item (`taskId` always): what a list view shows,
    /// without every instruction and child message. Default: every field.
    #[napi(ts_type = "Array<keyof ConversationSkeleton>")]
    pub fields: Option<Vec<String>>,
}

#[napi(object)]
#[derive(Default)]
pub struct TaskHeadersOptions {
    /// Only these top-level fields of each header (`taskId` always). Default: every field.
    #[napi(ts_type = "Array<keyof ConversationSkeleton>")]
    pub fields: Option<Vec<String>>,
}

/// The fields asked for, checked.
fn fields_of(names: Option<Vec<String>>) -> Result<Fields, CodedError> {
    match names {
        None => Ok(Fields::default()),
        Some(n) => Fields::parse(&n).map_err(|e| CodedError::new(ErrorCode::InvalidArgument, e)),
    }
}

#[napi(object)]
#[derive(Default)]
pub struct TaskStoreTreeOptions {
    /// Only the subtree of this task (id or unique prefix).
    pub root_id: Option<String>,
    pub workspace: Option<String>,
    /// Deepest level returned (0: the top nodes only); default 256.
    pub max_depth: Option<u32>,
}

impl TryFrom<TaskListQuery> for ListQuery {
    type Error = CodedError;

    /// The query, its sort key and order checked.
    fn try_from(q: TaskListQuery) -> Result<Self, CodedError> {
        let (sort, ascending) = crate::rules::list_sort(q.sort.as_deref(), q.order.as_deref())?;
        Ok(ListQuery {
            workspace: q.workspace,
            host: q.host,
            mode: q.mode,
            since_ms: q.since.map(|t| t as i64),
            until_ms: q.until.map(|t| t as i64),
            roots_only: q.roots_only.unwrap_or(false),
            top_only: q.top_only.unwrap_or(false),
            offset: q.offset.unwrap_or(0) as usize,
            limit: q.limit.map(|l| l as usize),
            sort,
            ascending,
            fields: fields_of(q.fields)?,
        })
    }
}

/// Opens the handle off the JavaScript thread.
pub struct OpenTask {
    opts: Option<OpenOptions>,
    progress: Option<ProgressFn>,
    cancel: Arc<AtomicBool>,
}

impl From<OpenTaskStoreOptions> for OpenTask {
    /// The open the options ask for: `tasksDir` first, then `tasksDirs`; our cache in its place
    /// (`cacheDir`, else the host's default) unless `noCache`.
    fn from(o: OpenTaskStoreOptions) -> Self {
        let mut dirs: Vec<PathBuf> = o
            .tasks_dirs
            .unwrap_or_default()
            .into_iter()
            .map(PathBuf::from)
            .collect();
        if let Some(d) = o.tasks_dir {
            dirs.insert(0, PathBuf::from(d));
        }
        let cache_root = (!o.no_cache.unwrap_or(false)).then(|| {
            HostEnv::current().cache_root(o.cache_dir.as_deref().map(std::path::Path::new))
        });
        OpenTask {
            opts: Some(OpenOptions {
                tasks_dirs: dirs,
                cache_root,
                ignore_stored_links: !o.use_stored_links.unwrap_or(true),
                every_file: o.every_file.unwrap_or(false),
            }),
            progress: o.on_progress,
            cancel: cancel_flag(o.signal),
        }
    }
}

impl<'t> ScopedTask<'t> for OpenTask {
    type Output = Result<roo_store::task_store::TaskStore, CodedError>;
    type JsValue = TaskStore;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let opts = self.opts.take().unwrap_or_default();
        let report = progress_fn::<usize>(self.progress.take());
        let watch = Watch {
            on_progress: Some(&report),
            cancel: Some(&self.cancel),
        };
        Ok(
            roo_store::task_store::TaskStore::open_quick(&HostEnv::current(), &opts, watch)
                .map_err(|e| CodedError::core(e.code(), e)),
        )
    }

    fn resolve(&mut self, env: &'t Env, output: Self::Output) -> napi::Result<TaskStore> {
        match output {
            Ok(store) => Ok(TaskStore {
                inner: Arc::new(RwLock::new(store)),
                usage: Arc::default(),
            }),
            Err(e) => Err(e.into_napi(env)),
        }
    }
}

/// One handle over one or more task stores (see the module documentation).
#[napi]
pub struct TaskStore {
    pub(crate) inner: Shared,
    /// The usage records of the handle's tasks (`usageReport`, crates/napi/src/usage.rs).
    pub(crate) usage: Arc<std::sync::Mutex<roo_usage::UsageIndex>>,
}

/// Make a handle opened from its headers' summary whole before a call that reads what the
/// summary leaves out (instructions, child calls' messages and todos), when `need`.
fn filled(inner: &Shared, need: bool) -> napi::Result<()> {
    if !need || !inner.read().map_err(|_| poisoned())?.is_partial() {
        return Ok(());
    }
    let mut store = inner.write().map_err(|_| poisoned())?;
    store
        .fill()
        .map_err(|e| CodedError::core(e.code(), e).into_sync())
}

pub(crate) fn poisoned() -> napi::Error {
    CodedError::new(
        ErrorCode::Internal,
        "the task store handle was left inconsistent by a failed call",
    )
    .into_sync()
}

#[napi]
impl TaskStore {
    /// Open the stores: from the skeleton cache (built or refreshed first), else by reading every
    /// task.
    #[napi(catch_unwind, ts_return_type = "Promise<TaskStore>")]
    pub fn open(options: Option<OpenTaskStoreOptions>) -> napi::Result<AsyncTask<OpenTask>> {
        Ok(AsyncTask::new(OpenTask::from(options.unwrap_or_default())))
    }

    /// Stat every task folder, parse again only what changed, relink, and record the change in
    /// the cache (appended, not rewritten).
    #[napi(
        catch_unwind,
        ts_args_type = "signal?: AbortSignal",
        ts_return_type = "Promise<TaskStoreRefresh>"
    )]
    pub fn refresh(&self, signal: Option<Signal>) -> AsyncTask<Job<RefreshReport>> {
        let inner = self.inner.clone();
        Job::spawn(signal, move |_| {
            let mut store = inner.write().map_err(|_| {
                CodedError::new(ErrorCode::Internal, "the task store handle is unusable")
            })?;
            store.refresh().map_err(|e| CodedError::core(e.code(), e))
        })
    }

    /// Watch the handle's folders from now on: a refresh with nothing changed since the last one
    /// then stats nothing (`watched` in its report). The first refresh after this still makes its
    /// full pass. For a process that keeps the handle (a server, the daemon); at 50 000 tasks,
    /// starting the watch takes about a second (a watch per task folder on Linux).
    #[napi(catch_unwind, ts_return_type = "Promise<TaskStoreWatch>")]
    pub fn watch(&self) -> AsyncTask<Job<roo_store::task_store::WatchStatus>> {
        let inner = self.inner.clone();
        Job::spawn(None, move |_| {
            let mut store = inner.write().map_err(|_| {
                CodedError::new(ErrorCode::Internal, "the task store handle is unusable")
            })?;
            Ok(store.watch())
        })
    }

    /// Whether the handle is watched, how many folders, or why not.
    #[napi(catch_unwind, ts_return_type = "TaskStoreWatch")]
    pub fn watch_status<'e>(&self, env: &'e Env) -> napi::Result<Unknown<'e>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        crate::to_js(env, &store.watch_status())
    }

    /// Number of tasks with a skeleton.
    #[napi(catch_unwind, getter)]
    pub fn size(&self) -> napi::Result<u32> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        Ok(store.skeletons().len() as u32)
    }

    /// The tasks folders of the handle.
    #[napi(catch_unwind, ts_return_type = "TaskStoreInfo[]")]
    pub fn stores<'e>(&self, env: &'e Env) -> napi::Result<Unknown<'e>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        crate::to_js(env, &store.stores())
    }

    /// Tasks without a skeleton and stores that could not be read.
    #[napi(catch_unwind, ts_return_type = "Diagnostic[]")]
    pub fn diagnostics<'e>(&self, env: &'e Env) -> napi::Result<Unknown<'e>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        crate::to_js(env, &store.diagnostics())
    }

    /// What the last hierarchy pass did.
    #[napi(catch_unwind, ts_return_type = "HierarchyMetrics")]
    pub fn metrics<'e>(&self, env: &'e Env) -> napi::Result<Unknown<'e>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        crate::to_js(env, store.metrics())
    }

    /// A task's header by id or unique prefix; `null` when no id matches. A prefix several ids
    /// start with throws `TASK_AMBIGUOUS`, naming some of them.
    #[napi(catch_unwind, ts_return_type = "ConversationSkeleton | null")]
    pub fn get<'e>(&self, env: &'e Env, id_or_prefix: String) -> napi::Result<Unknown<'e>> {
        filled(&self.inner, true)?;
        let store = self.inner.read().map_err(|_| poisoned())?;
        match store.lookup(&id_or_prefix) {
            Lookup::Found(i) => crate::to_js(env, &store.whole(i)),
            Lookup::Ambiguous(ids) => Err(CodedError::new(
                ErrorCode::TaskAmbiguous,
                format!(
                    "several tasks start with {id_or_prefix}: {}…; give more of the id",
                    ids.join(", ")
                ),
            )
            .into_napi(env)),
            Lookup::NotFound => crate::to_js(env, &()),
        }
    }

    /// The folder of a task (by full id).
    #[napi(catch_unwind)]
    pub fn task_dir(&self, task_id: String) -> napi::Result<Option<String>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        Ok(store.task_dir(&task_id).map(|p| p.display().to_string()))
    }

    /// One page of tasks matching the query, sorted (newest activity first by default).
    #[napi(
        catch_unwind,
        ts_args_type = "query?: TaskListQuery",
        ts_return_type = "{ total: number; offset: number; items: ConversationSkeleton[] }"
    )]
    pub fn list<'e>(
        &self,
        env: &'e Env,
        query: Option<TaskListQuery>,
    ) -> napi::Result<Unknown<'e>> {
        let q = ListQuery::try_from(query.unwrap_or_default()).map_err(|e| e.into_napi(env))?;
        filled(&self.inner, q.fields.need_fill())?;
        let store = self.inner.read().map_err(|_| poisoned())?;
        crate::to_js_parsed(env, &store.list(&q))
    }

    /// The task forest, or the subtree of `rootId` (id or unique prefix), children in creation
    /// order; each node carries the task's dates, counts, completion and parent, and a top node
    /// whose parent is not in the handle says so (`parentMissing`).
    #[napi(
        catch_unwind,
        ts_args_type = "options?: TaskStoreTreeOptions",
        ts_return_type = "TaskTreeNode[]"
    )]
    pub fn tree<'e>(
        &self,
        env: &'e Env,
        options: Option<TaskStoreTreeOptions>,
    ) -> napi::Result<Unknown<'e>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        let o = options.unwrap_or_default();
        let root_id = match o.root_id {
            Some(r) => match store.get(&r) {
                Ok(s) => Some(s.task_id.clone()),
                Err(Lookup::Ambiguous(ids)) => {
                    return Err(CodedError::new(
                        ErrorCode::TaskAmbiguous,
                        format!("several tasks start with {r}: {}…", ids.join(", ")),
                    )
                    .into_napi(env))
                }
                Err(_) => {
                    return Err(
                        CodedError::new(ErrorCode::TaskNotFound, format!("no task {r}"))
                            .into_napi(env),
                    )
                }
            },
            None => None,
        };
        let opts = TreeOptions {
            root_id,
            workspace: o.workspace,
            max_depth: Some(o.max_depth.unwrap_or(DEFAULT_TREE_DEPTH)),
        };
        // A forest written anew comes in parts, each parsed here as it arrives while the rest
        // is still being written; a kept one, whole.
        let raw = crate::sys::RawEnv::new(env);
        let parse = raw.run_script("JSON.parse")?;
        let mut parts = Vec::new();
        let mut failed = None;
        let json = store.tree_json_fed(&opts, &mut |part| {
            if failed.is_none() {
                match (parse, raw.latin1_shared(part)) {
                    (Some(parse), Ok(text)) => match raw.call(parse, &[text]) {
                        Ok(array) => parts.push(array),
                        Err(e) => failed = Some(e),
                    },
                    (_, Err(e)) => failed = Some(e),
                    (None, _) => failed = Some(napi::Error::from_reason("no JSON.parse")),
                }
            }
        });
        let json = json.map_err(|e| CodedError::core(e.code(), e).into_napi(env))?;
        if let Some(e) = failed {
            return Err(e);
        }
        match parts.as_slice() {
            [] => crate::parse_latin1_shared(env, &json),
            [one] => Ok(raw.unknown(*one)),
            _ => {
                let concat = raw.run_script("(...parts) => [].concat(...parts)")?;
                let concat = concat.ok_or_else(|| napi::Error::from_reason("no concat"))?;
                Ok(raw.unknown(raw.call(concat, &parts)?))
            }
        }
    }

    /// The trees of several tasks (full ids) in one pass, in the order given: each as
    /// `tree({ rootId, maxDepth })` gives it; an unknown id is left out.
    #[napi(catch_unwind, ts_return_type = "TaskTreeNode[]")]
    pub fn trees<'e>(
        &self,
        env: &'e Env,
        root_ids: Vec<String>,
        max_depth: Option<u32>,
    ) -> napi::Result<Unknown<'e>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        crate::to_js_parsed(
            env,
            &store.trees_view(&root_ids, Some(max_depth.unwrap_or(DEFAULT_TREE_DEPTH))),
        )
    }

    /// The tasks that two or more of the handle's stores hold (Zoo Code's import of Roo Code's
    /// history copies each task folder): the copy shown (the newer) and the others, in id order.
    #[napi(catch_unwind, ts_return_type = "SharedTask[]")]
    pub fn shared_tasks<'e>(&self, env: &'e Env) -> napi::Result<Unknown<'e>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        crate::to_js(env, &store.shared_tasks())
    }

    /// The other copies of a task (full id): none unless two of the handle's stores hold it.
    #[napi(catch_unwind, ts_return_type = "AlsoIn[]")]
    pub fn also_in<'e>(&self, env: &'e Env, task_id: String) -> napi::Result<Unknown<'e>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        crate::to_js(env, &store.also_in(&task_id))
    }

    /// The tasks that several handles hold (each over its own stores): for each, the handle
    /// whose copy is shown (the newer: later last activity, then later files, then the handle
    /// given first) and the other copies, in id order.
    #[napi(catch_unwind, ts_return_type = "SharedTask[]")]
    pub fn shared_across<'e>(
        env: &'e Env,
        #[napi(ts_arg_type = "TaskStore[]")] handles: Vec<ClassInstance<'e, TaskStore>>,
    ) -> napi::Result<Unknown<'e>> {
        // A handle given twice is read once (one read lock per handle).
        let mut shared: Vec<&Shared> = Vec::with_capacity(handles.len());
        for h in &handles {
            if !shared.iter().any(|s| Arc::ptr_eq(s, &h.inner)) {
                shared.push(&h.inner);
            }
        }
        let guards = shared
            .iter()
            .map(|h| h.read().map_err(|_| poisoned()))
            .collect::<napi::Result<Vec<_>>>()?;
        let stores: Vec<&roo_store::task_store::TaskStore> = guards.iter().map(|g| &**g).collect();
        crate::to_js(
            env,
            &roo_store::task_store::TaskStore::shared_across(&stores),
        )
    }

    /// The shortest prefix, at least `min` characters (default 8), that names each of `ids`
    /// alone among the handle's tasks, as a lookup by prefix takes it (in any case).
    #[napi(catch_unwind)]
    pub fn short_ids(&self, ids: Vec<String>, min: Option<u32>) -> napi::Result<Vec<String>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        let min = min.map_or(roo_store::find::SHORT_ID_MIN, |m| m as usize);
        Ok(store.short_ids(&ids, min))
    }

    /// Ancestors of a task, nearest first.
    #[napi(catch_unwind)]
    pub fn ancestors(&self, task_id: String) -> napi::Result<Vec<String>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        Ok(store.ancestors(&task_id))
    }

    /// Descendants of a task, breadth-first.
    #[napi(catch_unwind)]
    pub fn descendants(&self, task_id: String) -> napi::Result<Vec<String>> {
        let store = self.inner.read().map_err(|_| poisoned())?;
        Ok(store.descendants(&task_id))
    }

    /// Every header as one JSON text (for callers that keep or send it as is); `fields`: only
    /// those of each header.
    #[napi(catch_unwind)]
    pub fn headers_json(&self, options: Option<TaskHeadersOptions>) -> napi::Result<String> {
        let fields = fields_of(options.unwrap_or_default().fields).map_err(|e| e.into_sync())?;
        filled(&self.inner, fields.need_fill())?;
        let store = self.inner.read().map_err(|_| poisoned())?;
        let bytes = store
            .headers_json(fields)
            .map_err(|e| CodedError::core(e.code(), e).into_sync())?;
        String::from_utf8(bytes).map_err(|e| napi::Error::from_reason(e.to_string()))
    }

    /// Every header, in task id order: one JSON text parsed by V8 (far faster than converting
    /// value by value). A list view asks for its `fields` only (`taskId`, `metadata`, …): the
    /// instructions and child messages are most of a header.
    #[napi(catch_unwind, ts_return_type = "ConversationSkeleton[]")]
    pub fn headers<'e>(
        &self,
        env: &'e Env,
        options: Option<TaskHeadersOptions>,
    ) -> napi::Result<Unknown<'e>> {
        let fields = fields_of(options.unwrap_or_default().fields).map_err(|e| e.into_napi(env))?;
        filled(&self.inner, fields.need_fill())?;
        let store = self.inner.read().map_err(|_| poisoned())?;
        let text = store
            .headers_latin1(fields)
            .map_err(|e| CodedError::core(e.code(), e).into_napi(env))?;
        crate::parse_latin1(env, &text)
    }
}
