//! Building a store's cache: what changed is parsed again, the rest copied from the old file.

use super::*;

/// Progress callback: `(tasks parsed, tasks to parse)` of the store being built.
pub type ProgressFn<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Options of [`build_skeleton_cache`].
pub struct BuildOptions<'a> {
    pub cache_root: PathBuf,
    /// Only tasks of this workspace are parsed again; a changed task known to belong to another
    /// workspace keeps its old entry (counted as `skipped`). New tasks are always parsed.
    pub workspace_filter: Option<String>,
    /// Parse every task again.
    pub force_rebuild: bool,
    pub on_progress: Option<ProgressFn<'a>>,
    pub cancel: Option<&'a AtomicBool>,
    /// How long to wait for another builder of the same store.
    pub lock_wait: Duration,
    /// Stat every file of every task, even where a folder's time could stand for its files
    /// (module `stamp`).
    pub every_file: bool,
}

impl BuildOptions<'_> {
    pub fn new(cache_root: impl Into<PathBuf>) -> Self {
        BuildOptions {
            cache_root: cache_root.into(),
            workspace_filter: None,
            force_rebuild: false,
            on_progress: None,
            cancel: None,
            lock_wait: crate::lock::DEFAULT_WAIT,
            every_file: false,
        }
    }
}

/// What a build did to one store.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StoreBuild {
    pub tasks_dir: String,
    pub cache_file: String,
    /// Task folders on disk.
    pub tasks: u32,
    pub built: u32,
    pub reused: u32,
    /// Tasks parsed that yielded no skeleton (no task files).
    pub failed: u32,
    /// Entries of task folders that are gone.
    pub removed: u32,
    /// Changed tasks of other workspaces left as they were (`workspaceFilter`).
    pub skipped: u32,
    /// A new cache file was written.
    pub written: bool,
    pub hierarchy: Option<HierarchyMetrics>,
    pub elapsed_ms: f64,
    /// Ids parsed in this build.
    #[serde(skip)]
    pub parsed: Vec<String>,
    /// Cached skeletons that failed their checksum and were read again from their folders.
    pub repaired: u32,
    /// The diagnostic saying so (also in [`BuildReport::diagnostics`]).
    #[serde(skip)]
    pub damage: Option<Diagnostic>,
}

/// What [`build_skeleton_cache`] did.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "BuildCacheReport"))]
pub struct BuildReport {
    pub built: u32,
    pub reused: u32,
    pub failed: u32,
    pub removed: u32,
    pub skipped: u32,
    pub elapsed_ms: f64,
    /// Tasks without a skeleton, stores that could not be built, caches that were rebuilt.
    pub diagnostics: Vec<Diagnostic>,
    pub stores: Vec<StoreBuild>,
}

/// Build or refresh the cache of every store in `tasks_dirs`. With a single store its errors are
/// returned; with several, a store that fails becomes a diagnostic and the others go on.
pub fn build_skeleton_cache(tasks_dirs: &[PathBuf], opts: &BuildOptions) -> Result<BuildReport> {
    let start = Instant::now();
    let mut report = BuildReport::default();
    for dir in tasks_dirs {
        match build_store(dir, opts, &mut report.diagnostics) {
            Ok(s) => {
                report.built += s.built;
                report.reused += s.reused;
                report.failed += s.failed;
                report.removed += s.removed;
                report.skipped += s.skipped;
                report.stores.push(s);
            }
            Err(e @ StoreError::Aborted) => return Err(e),
            Err(e) if tasks_dirs.len() == 1 => return Err(e),
            Err(e) => report.diagnostics.push(Diagnostic::new(
                dir.display().to_string(),
                "",
                DiagCode::Unreadable,
                Severity::Error,
                format!("this store was not cached: {e}"),
            )),
        }
    }
    report.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

fn cancelled(opts: &BuildOptions) -> bool {
    opts.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
}

enum Plan<'e> {
    Reuse(&'e Entry),
    Skip(&'e Entry),
    Parse,
}

/// Parent, root and evidence the hierarchy gave a task.
pub type Link = (Option<String>, Option<String>, Option<ParentEvidence>);

/// A task's slot in the new file.
enum EntryDraft {
    Old(Box<Entry>),
    /// A parsed task: its header (taken by the hierarchy pass, not copied), where its line went
    /// in the new data section, and its normalised workspace.
    New(Option<Box<ConversationSkeleton>>, Line, Option<String>),
    Failed(Vec<Diagnostic>),
}

/// A skeleton line of the new data section: offset, length, checksum.
#[derive(Clone, Copy)]
struct Line {
    off: u64,
    len: u64,
    h: u64,
}

/// The data section of the generation being built, written to a temporary file beside the cache
/// as its lines come (parsed in parallel, or copied from the old file), so that a build never
/// holds every line in memory; the new cache file is its header, its entries, then these bytes.
/// The file is unlinked at once where the system allows it (it lives on through its handle),
/// else when the build ends; the build runs under the store's lock.
struct Spill {
    /// The writer (taken when the build ends) and the length written.
    out: std::sync::Mutex<(Option<std::io::BufWriter<fs::File>>, u64)>,
    error: std::sync::Mutex<Option<std::io::Error>>,
    /// The file's path while it still has one.
    path: Option<PathBuf>,
}

impl Spill {
    fn create(store_dir: &Path) -> Result<Spill> {
        let path = store_dir.join(format!(".data-{}.tmp", std::process::id()));
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| StoreError::io("creating", &path, e))?;
        let path = fs::remove_file(&path).err().map(|_| path);
        Ok(Spill {
            out: std::sync::Mutex::new((Some(std::io::BufWriter::with_capacity(1 << 20, file)), 0)),
            error: std::sync::Mutex::new(None),
            path,
        })
    }

    /// Append a line: where it went. A write error is kept for [`Spill::finish`].
    fn put(&self, line: &[u8]) -> Line {
        use std::io::Write;
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let off = out.1;
        let written = match out.0.as_mut() {
            Some(w) => w.write_all(line),
            None => Err(std::io::Error::other(
                "the data section was already finished",
            )),
        };
        if let Err(e) = written {
            self.error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(e);
        }
        out.1 += line.len() as u64;
        Line {
            off,
            len: line.len() as u64,
            h: line_hash(line),
        }
    }

    /// The data section, read from its start, and its length; or the first write error.
    fn finish(&self) -> std::io::Result<(fs::File, u64)> {
        use std::io::Seek;
        if let Some(e) = self.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(e);
        }
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let writer = out
            .0
            .take()
            .ok_or_else(|| std::io::Error::other("the data section was already finished"))?;
        let mut file = writer.into_inner().map_err(|e| e.into_error())?;
        file.seek(std::io::SeekFrom::Start(0))?;
        Ok((file, out.1))
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        // The writer first: a file still open cannot be removed everywhere.
        drop(self.out.get_mut().map(|o| o.0.take()));
        if let Some(path) = &self.path {
            let _ = fs::remove_file(path);
        }
    }
}

/// What a build that wrote a new generation hands to a handle's open, so that the handle does
/// not read back the file just written: the linked headers and the new file's numbers.
pub(super) struct Kept {
    pub generation: u64,
    pub data_bytes: u64,
    pub hierarchy: HierarchyMetrics,
    pub tasks: CachedTasks,
}

fn build_store(
    tasks_dir: &Path,
    opts: &BuildOptions,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<StoreBuild> {
    build_store_keeping(tasks_dir, opts, diagnostics, false).map(|(b, _)| b)
}

/// [`build_store`]; `keep`: a build that writes a new generation also returns its linked headers
/// ([`Kept`]).
pub(super) fn build_store_keeping(
    tasks_dir: &Path,
    opts: &BuildOptions,
    diagnostics: &mut Vec<Diagnostic>,
    keep: bool,
) -> Result<(StoreBuild, Option<Kept>)> {
    let start = Instant::now();
    let tasks_dir = checked_tasks_dir(tasks_dir)?;
    check_cache_root(&opts.cache_root, &tasks_dir)?;
    let store_dir = store_cache_dir(&opts.cache_root, &tasks_dir);
    let cache_file = store_dir.join(CACHE_FILE);
    let _lock = DirLock::acquire(&store_dir, opts.lock_wait, opts.cancel)?;

    let old = old_index(&cache_file, diagnostics);
    let dirs = list_tasks(&tasks_dir)?;
    let stamps = task_stamps(
        &tasks_dir,
        &dirs,
        &Folders::marking(&tasks_dir, opts.every_file),
    );
    if cancelled(opts) {
        return Err(StoreError::Aborted);
    }
    let mut plans = plan(&dirs, &stamps, old.as_ref(), opts);
    // The old data section, checked line by line: a task whose line does not check out is parsed
    // again, and the damage is reported.
    let old_data = match &old {
        Some(o)
            if plans
                .iter()
                .any(|p| matches!(p, Plan::Reuse(_) | Plan::Skip(_))) =>
        {
            read_data(&cache_file, o.data_start).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let damaged = parse_damaged(&mut plans, &old_data);
    let damage = old
        .as_ref()
        .and_then(|o| damage_diagnostic(&cache_file, &damaged, o.journal_damage.as_deref()));
    let repaired = damaged.len() as u32;
    if let Some(d) = &damage {
        diagnostics.push(d.clone());
    }
    let on_disk: HashSet<&str> = dirs.iter().map(|(id, _)| id.as_str()).collect();
    let removed = old.as_ref().map_or(0, |o| {
        o.entries
            .iter()
            .filter(|e| !on_disk.contains(e.id.as_str()))
            .count()
    });
    let to_parse = plans.iter().filter(|p| matches!(p, Plan::Parse)).count();
    let reused = plans.iter().filter(|p| matches!(p, Plan::Reuse(_))).count();
    let skipped = plans.iter().filter(|p| matches!(p, Plan::Skip(_))).count();
    let mut out = StoreBuild {
        tasks_dir: tasks_dir.display().to_string(),
        cache_file: cache_file.display().to_string(),
        tasks: dirs.len() as u32,
        reused: reused as u32,
        removed: removed as u32,
        skipped: skipped as u32,
        repaired,
        damage,
        ..StoreBuild::default()
    };
    let journal_damaged = old.as_ref().is_some_and(|o| o.journal_damage.is_some());
    if let (Some(o), 0, 0, false) = (&old, to_parse, removed, journal_damaged) {
        // Nothing changed: the file on disk is already this generation.
        out.hierarchy = o.header.hierarchy.clone();
        out.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
        return Ok((out, None));
    }

    let spill = Spill::create(&store_dir)?;
    let parsed = parse_changed(&dirs, &plans, to_parse, opts, &spill);
    if cancelled(opts) {
        return Err(StoreError::Aborted);
    }
    let mut slots = fill_slots(&dirs, &plans, parsed, &old_data, &spill)?;
    let (links, metrics, linked) = link_slots(&mut slots, &dirs, &old_data, &spill);
    let entries = new_entries(
        slots,
        &dirs,
        &stamps,
        &old_data,
        &links,
        &mut out,
        diagnostics,
        &spill,
    );
    drop((old_data, links));
    let data = spill
        .finish()
        .map_err(|e| StoreError::io("writing the data section beside", &cache_file, e))?;
    // Reused entries parsed again above are counted as built.
    out.reused = entries.len() as u32 - out.built - out.failed - out.skipped;
    let header = new_header(&tasks_dir, start, entries.len(), &metrics);
    let (generation, data_bytes) = (header.generation, data.1);
    write_generation(&cache_file, &header, &entries, data)?;
    out.written = true;
    out.hierarchy = Some(metrics.clone());
    out.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
    let kept = keep.then(|| Kept {
        generation,
        data_bytes,
        hierarchy: metrics,
        tasks: handed_over(entries, linked),
    });
    Ok((out, kept))
}

/// The tasks whose old line does not check out: planned to be parsed again.
fn parse_damaged<'e>(plans: &mut [Plan<'e>], old_data: &[u8]) -> Vec<&'e str> {
    let kept = plans.iter().filter_map(|p| match p {
        Plan::Reuse(e) | Plan::Skip(e) => Some(*e),
        Plan::Parse => None,
    });
    let damaged: Vec<&'e str> = damaged_entries(old_data, kept);
    if !damaged.is_empty() {
        let ids: HashSet<&str> = damaged.iter().copied().collect();
        for p in plans.iter_mut() {
            if matches!(p, Plan::Reuse(e) | Plan::Skip(e) if ids.contains(e.id.as_str())) {
                *p = Plan::Parse;
            }
        }
    }
    damaged
}

/// The header of a new generation (its entry list's checksum is set when written).
fn new_header(
    tasks_dir: &Path,
    start: Instant,
    tasks: usize,
    metrics: &HierarchyMetrics,
) -> Header {
    Header {
        magic: MAGIC.to_owned(),
        format_version: CACHE_FORMAT_VERSION,
        engine_version: ENGINE_VERSION.to_owned(),
        tasks_dir: tasks_dir.display().to_string(),
        built_at: roo_js::now_ms(),
        build_ms: start.elapsed().as_secs_f64() * 1000.0,
        tasks,
        hierarchy: Some(metrics.clone()),
        generation: new_generation(),
        entries_hash: 0,
    }
}

/// The tasks of the entries with their linked headers, for a handle: the headers stay in the
/// vector the hierarchy returned (each entry found by id), not moved one by one.
fn handed_over(mut entries: Vec<Entry>, mut linked: Vec<ConversationSkeleton>) -> CachedTasks {
    let at: HashMap<&str, usize> = (entries.iter().enumerate())
        .filter(|(_, e)| e.len > 0)
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    // The entry of each header kept, in the headers' order.
    let mut of: Vec<usize> = Vec::with_capacity(linked.len());
    let mut taken = vec![false; entries.len()];
    linked.retain(|s| match at.get(s.task_id.as_str()) {
        Some(&i) if !taken[i] => {
            taken[i] = true;
            of.push(i);
            true
        }
        _ => false,
    });
    drop(at);
    let kept = (of.iter())
        .map(|&i| CachedTask {
            sig: entries[i].sig,
            folder: entries[i].folder,
            ..CachedTask::default()
        })
        .collect();
    // An entry without a line, or whose line did not come back.
    let failed = (entries.iter_mut().zip(taken))
        .filter(|(_, taken)| !taken)
        .map(|(e, _)| FailedTask::of_entry(e))
        .collect();
    CachedTasks {
        skeletons: linked,
        kept,
        failed,
    }
}

/// The index of the cache file on disk, if it is one this engine can use (why not is reported).
fn old_index(cache_file: &Path, diagnostics: &mut Vec<Diagnostic>) -> Option<Index> {
    match read_index(cache_file) {
        ReadOutcome::Ok(i) => Some(*i),
        ReadOutcome::Missing => None,
        ReadOutcome::Invalid(reason) => {
            diagnostics.push(Diagnostic::new(
                cache_file.display().to_string(),
                "",
                DiagCode::UnexpectedShape,
                Severity::Info,
                reason,
            ));
            None
        }
    }
}

/// What to do with each task: reuse its entry (same signature), skip it (another workspace than
/// the filter's), or parse it.
fn plan<'e>(
    dirs: &[(String, PathBuf)],
    stamps: &[Stamp],
    old: Option<&'e Index>,
    opts: &BuildOptions,
) -> Vec<Plan<'e>> {
    let old_map: HashMap<&str, &Entry> = old
        .map(|o| o.entries.iter().map(|e| (e.id.as_str(), e)).collect())
        .unwrap_or_default();
    // The one workspace rule: a path, or a bare folder name.
    let filter = (opts.workspace_filter.as_deref()).map(roo_state::hierarchy::WorkspaceQuery::new);
    dirs.iter()
        .zip(stamps)
        .map(|((id, _), stamp)| match old_map.get(id.as_str()) {
            Some(e) if !opts.force_rebuild && e.sig == stamp.sig => Plan::Reuse(e),
            Some(e)
                if (filter.as_ref())
                    .is_some_and(|q| e.ws.as_deref().is_some_and(|w| !q.matches(w))) =>
            {
                Plan::Skip(e)
            }
            _ => Plan::Parse,
        })
        .collect()
}

/// Parse the tasks planned for it, in parallel, with progress; `None` where not parsed.
fn parse_changed(
    dirs: &[(String, PathBuf)],
    plans: &[Plan],
    to_parse: usize,
    opts: &BuildOptions,
    spill: &Spill,
) -> Vec<Option<EntryDraft>> {
    let done = AtomicUsize::new(0);
    let aopts = header_options();
    dirs.par_iter()
        .zip(plans)
        .map(|((id, dir), plan)| {
            if !matches!(plan, Plan::Parse) || cancelled(opts) {
                return None;
            }
            let slot = parse_slot(id, dir, &aopts, spill);
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = opts.on_progress {
                p(n, to_parse);
            }
            Some(slot)
        })
        .collect()
}

/// One slot per task: the old entry where its line is in the old data section, else the task
/// parsed (again).
fn fill_slots(
    dirs: &[(String, PathBuf)],
    plans: &[Plan],
    parsed: Vec<Option<EntryDraft>>,
    old_data: &[u8],
    spill: &Spill,
) -> Result<Vec<EntryDraft>> {
    let aopts = header_options();
    let mut slots: Vec<EntryDraft> = Vec::with_capacity(dirs.len());
    for (i, (plan, fresh)) in plans.iter().zip(parsed).enumerate() {
        match (plan, fresh) {
            (Plan::Reuse(e) | Plan::Skip(e), _) => {
                let ok = e.len == 0 || line_of(old_data, e).is_some_and(|b| b.ends_with(b"\n"));
                if ok {
                    slots.push(EntryDraft::Old(Box::new((*e).clone())));
                } else {
                    // The data section does not hold this line: parse the task again.
                    let (id, dir) = &dirs[i];
                    slots.push(parse_slot(id, dir, &aopts, spill));
                }
            }
            (Plan::Parse, Some(slot)) => slots.push(slot),
            (Plan::Parse, None) => return Err(StoreError::Aborted),
        }
    }
    Ok(slots)
}

/// The hierarchy over every skeleton (old ones deserialised in parallel; a line that no longer
/// reads makes its task parsed again): each task's link, the pass's metrics and the linked
/// headers.
fn link_slots(
    slots: &mut [EntryDraft],
    dirs: &[(String, PathBuf)],
    old_data: &[u8],
    spill: &Spill,
) -> (
    HashMap<String, Link>,
    HierarchyMetrics,
    Vec<ConversationSkeleton>,
) {
    let aopts = header_options();
    let old_skeletons: Vec<Option<ConversationSkeleton>> = slots
        .par_iter()
        .map(|s| match s {
            EntryDraft::Old(e) if e.len > 0 => skeleton_of(old_data, e),
            _ => None,
        })
        .collect();
    let mut skeletons: Vec<ConversationSkeleton> = Vec::with_capacity(slots.len());
    for (i, (slot, old_s)) in slots.iter_mut().zip(old_skeletons).enumerate() {
        match slot {
            EntryDraft::Old(e) if e.len > 0 => match old_s {
                Some(s) => skeletons.push(s),
                None => {
                    let (id, dir) = &dirs[i];
                    *slot = parse_slot(id, dir, &aopts, spill);
                    if let EntryDraft::New(s, _, _) = slot {
                        skeletons.extend(s.take().map(|s| *s));
                    }
                }
            },
            EntryDraft::New(s, _, _) => skeletons.extend(s.take().map(|s| *s)),
            _ => {}
        }
    }
    let (linked, metrics) =
        roo_state::hierarchy::reconstruct_hierarchy(skeletons, &HierarchyOptions::default());
    let links = linked
        .iter()
        .map(|s| {
            (
                s.task_id.clone(),
                (
                    s.parent_task_id.clone(),
                    s.root_task_id.clone(),
                    s.parent_evidence.clone(),
                ),
            )
        })
        .collect();
    (links, metrics, linked)
}

/// The new generation's entries: old lines copied as they are to the data section, new ones
/// already there, each entry given its link; counts of built and failed tasks go to `out`.
#[expect(clippy::too_many_arguments)]
fn new_entries(
    slots: Vec<EntryDraft>,
    dirs: &[(String, PathBuf)],
    stamps: &[Stamp],
    old_data: &[u8],
    links: &HashMap<String, Link>,
    out: &mut StoreBuild,
    diagnostics: &mut Vec<Diagnostic>,
    spill: &Spill,
) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::with_capacity(slots.len());
    for (i, slot) in slots.into_iter().enumerate() {
        let (id, _) = &dirs[i];
        let fresh = |ws: Option<String>, line: Option<Line>, diagnostics| Entry {
            id: id.clone(),
            sig: stamps[i].sig,
            off: line.map_or(0, |l| l.off),
            len: line.map_or(0, |l| l.len),
            h: line.map(|l| l.h),
            ws,
            parent: None,
            root: None,
            evidence: None,
            diagnostics,
            folder: stamps[i].folder,
        };
        let mut entry = match slot {
            EntryDraft::Old(e) => {
                let mut e = *e;
                match line_of(old_data, &e) {
                    Some(bytes) if e.len > 0 => e.off = spill.put(bytes).off,
                    // Checked above; an entry without its line keeps no skeleton.
                    _ => {
                        e.off = 0;
                        e.len = 0;
                        e.h = None;
                    }
                }
                // A skipped entry keeps its old signature, so it stays stale until parsed; its
                // folder's time must not stand for that signature.
                e.folder = stamps[i].folder.filter(|_| e.sig == stamps[i].sig);
                e
            }
            EntryDraft::New(_, line, ws) => {
                out.built += 1;
                out.parsed.push(id.clone());
                fresh(ws, Some(line), Vec::new())
            }
            EntryDraft::Failed(d) => {
                out.failed += 1;
                out.parsed.push(id.clone());
                diagnostics.extend(d.iter().cloned());
                fresh(None, None, d)
            }
        };
        if let Some((parent, root, evidence)) = links.get(id) {
            entry.parent = parent.clone();
            entry.root = root.clone();
            entry.evidence = evidence.clone();
        }
        entries.push(entry);
    }
    entries
}

/// Write a generation: header line, entries line, data section, by one atomic rename; the journal
/// of the previous generation goes (its lines would be ignored anyway).
fn write_generation(
    cache_file: &Path,
    header: &Header,
    entries: &[Entry],
    data: (fs::File, u64),
) -> Result<()> {
    let entries_line =
        serde_json::to_vec(entries).map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
    let header = Header {
        entries_hash: line_hash(&entries_line),
        ..header.clone()
    };
    let mut head =
        serde_json::to_vec(&header).map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
    head.push(b'\n');
    let (mut data, data_len) = data;
    fsutil::write_atomic_by(cache_file, false, |f| {
        use std::io::Write;
        f.write_all(&head)?;
        f.write_all(&entries_line)?;
        f.write_all(b"\n")?;
        let copied = std::io::copy(&mut data, f)?;
        if copied == data_len {
            Ok(())
        } else {
            Err(std::io::Error::other("the data section was cut short"))
        }
    })
    .map_err(|e| StoreError::io("writing", cache_file, e))?;
    let _ = fs::remove_file(journal_path(cache_file));
    Ok(())
}

fn parse_slot(id: &str, dir: &Path, aopts: &AnalyzeOptions, spill: &Spill) -> EntryDraft {
    match analyze_task(id, dir, aopts) {
        Ok(s) => match serde_json::to_vec(&s) {
            Ok(mut bytes) => {
                bytes.push(b'\n');
                let ws = s.metadata.workspace.as_deref().map(normalize_workspace);
                EntryDraft::New(Some(Box::new(s)), spill.put(&bytes), ws)
            }
            Err(e) => EntryDraft::Failed(vec![Diagnostic::new(
                dir.display().to_string(),
                "",
                DiagCode::InvalidValue,
                Severity::Error,
                format!("the skeleton could not be serialised: {e}"),
            )]),
        },
        Err(d) => EntryDraft::Failed(d),
    }
}
