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
    /// A parsed task: its header (taken by the hierarchy pass, not copied), its line and its
    /// normalised workspace.
    New(Option<Box<ConversationSkeleton>>, Vec<u8>, Option<String>),
    Failed(Vec<Diagnostic>),
}

fn build_store(
    tasks_dir: &Path,
    opts: &BuildOptions,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<StoreBuild> {
    let start = Instant::now();
    let tasks_dir = check_tasks_dir(tasks_dir)?;
    check_cache_root(&opts.cache_root, &tasks_dir)?;
    let store_dir = store_cache_dir(&opts.cache_root, &tasks_dir);
    let cache_file = store_dir.join(CACHE_FILE);
    let _lock = DirLock::acquire(&store_dir, opts.lock_wait, opts.cancel)?;

    let old = old_index(&cache_file, diagnostics);
    let dirs = list_tasks(&tasks_dir)?;
    let sigs: Vec<TaskSig> = dirs.par_iter().map(|(_, d)| task_sig(d)).collect();
    if cancelled(opts) {
        return Err(StoreError::Aborted);
    }
    let mut plans = plan(&dirs, &sigs, old.as_ref(), opts);
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
    let damaged: Vec<&str> = damaged_entries(
        &old_data,
        plans.iter().filter_map(|p| match p {
            Plan::Reuse(e) | Plan::Skip(e) => Some(*e),
            Plan::Parse => None,
        }),
    );
    if !damaged.is_empty() {
        let ids: HashSet<&str> = damaged.iter().copied().collect();
        for p in plans.iter_mut() {
            if matches!(p, Plan::Reuse(e) | Plan::Skip(e) if ids.contains(e.id.as_str())) {
                *p = Plan::Parse;
            }
        }
    }
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
        return Ok(out);
    }

    let parsed = parse_changed(&dirs, &plans, to_parse, opts);
    if cancelled(opts) {
        return Err(StoreError::Aborted);
    }
    let mut slots = fill_slots(&dirs, &plans, parsed, &old_data)?;
    let (links, metrics) = link_slots(&mut slots, &dirs, &old_data);
    let (entries, data) = new_entries(
        slots,
        &dirs,
        &sigs,
        &old_data,
        &links,
        &mut out,
        diagnostics,
    );
    // Reused entries parsed again above are counted as built.
    out.reused = entries.len() as u32 - out.built - out.failed - out.skipped;
    let header = Header {
        magic: MAGIC.to_owned(),
        format_version: CACHE_FORMAT_VERSION,
        engine_version: ENGINE_VERSION.to_owned(),
        tasks_dir: tasks_dir.display().to_string(),
        built_at: roo_js::now_ms(),
        build_ms: start.elapsed().as_secs_f64() * 1000.0,
        tasks: entries.len(),
        hierarchy: Some(metrics.clone()),
        generation: new_generation(),
        entries_hash: 0,
    };
    write_generation(&cache_file, &header, &entries, &data)?;
    out.written = true;
    out.hierarchy = Some(metrics);
    out.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
    Ok(out)
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
    sigs: &[TaskSig],
    old: Option<&'e Index>,
    opts: &BuildOptions,
) -> Vec<Plan<'e>> {
    let old_map: HashMap<&str, &Entry> = old
        .map(|o| o.entries.iter().map(|e| (e.id.as_str(), e)).collect())
        .unwrap_or_default();
    let filter = opts.workspace_filter.as_deref().map(normalize_workspace);
    dirs.iter()
        .zip(sigs)
        .map(|((id, _), sig)| match old_map.get(id.as_str()) {
            Some(e) if !opts.force_rebuild && &e.sig == sig => Plan::Reuse(e),
            Some(e)
                if filter.is_some() && e.ws.is_some() && e.ws.as_deref() != filter.as_deref() =>
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
) -> Vec<Option<EntryDraft>> {
    let done = AtomicUsize::new(0);
    let aopts = header_options();
    dirs.par_iter()
        .zip(plans)
        .map(|((id, dir), plan)| {
            if !matches!(plan, Plan::Parse) || cancelled(opts) {
                return None;
            }
            let slot = parse_slot(id, dir, &aopts);
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
                    slots.push(parse_slot(id, dir, &aopts));
                }
            }
            (Plan::Parse, Some(slot)) => slots.push(slot),
            (Plan::Parse, None) => return Err(StoreError::Aborted),
        }
    }
    Ok(slots)
}

/// The hierarchy over every skeleton (old ones deserialised in parallel; a line that no longer
/// reads makes its task parsed again): each task's link, and the pass's metrics.
fn link_slots(
    slots: &mut [EntryDraft],
    dirs: &[(String, PathBuf)],
    old_data: &[u8],
) -> (HashMap<String, Link>, HierarchyMetrics) {
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
                    *slot = parse_slot(id, dir, &aopts);
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
        .into_iter()
        .map(|s| {
            (
                s.task_id,
                (s.parent_task_id, s.root_task_id, s.parent_evidence),
            )
        })
        .collect();
    (links, metrics)
}

/// The new generation's entries and data section: old lines copied as they are, new ones
/// appended, each entry given its link; counts of built and failed tasks go to `out`.
fn new_entries(
    slots: Vec<EntryDraft>,
    dirs: &[(String, PathBuf)],
    sigs: &[TaskSig],
    old_data: &[u8],
    links: &HashMap<String, Link>,
    out: &mut StoreBuild,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<Entry>, Vec<u8>) {
    let mut data: Vec<u8> = Vec::with_capacity(old_data.len() + slots.len() * 64);
    let mut entries: Vec<Entry> = Vec::with_capacity(slots.len());
    for (i, slot) in slots.into_iter().enumerate() {
        let (id, _) = &dirs[i];
        let fresh = |ws: Option<String>, line: Option<(u64, &[u8])>, diagnostics| Entry {
            id: id.clone(),
            sig: sigs[i],
            off: line.map_or(0, |l| l.0),
            len: line.map_or(0, |l| l.1.len() as u64),
            h: line.map(|l| line_hash(l.1)),
            ws,
            parent: None,
            root: None,
            evidence: None,
            diagnostics,
        };
        let mut entry = match slot {
            EntryDraft::Old(e) => {
                let mut e = *e;
                match line_of(old_data, &e) {
                    Some(bytes) if e.len > 0 => {
                        e.off = data.len() as u64;
                        data.extend_from_slice(bytes);
                    }
                    // Checked above; an entry without its line keeps no skeleton.
                    _ => {
                        e.off = 0;
                        e.len = 0;
                        e.h = None;
                    }
                }
                // A skipped entry keeps its old signature, so it stays stale until parsed.
                e
            }
            EntryDraft::New(_, bytes, ws) => {
                out.built += 1;
                out.parsed.push(id.clone());
                let off = data.len() as u64;
                data.extend_from_slice(&bytes);
                fresh(ws, Some((off, &bytes)), Vec::new())
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
    (entries, data)
}

/// Write a generation: header line, entries line, data section, by one atomic rename; the journal
/// of the previous generation goes (its lines would be ignored anyway).
fn write_generation(
    cache_file: &Path,
    header: &Header,
    entries: &[Entry],
    data: &[u8],
) -> Result<()> {
    let entries_line =
        serde_json::to_vec(entries).map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
    let header = Header {
        entries_hash: line_hash(&entries_line),
        ..header.clone()
    };
    let mut file =
        serde_json::to_vec(&header).map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
    file.push(b'\n');
    file.extend_from_slice(&entries_line);
    file.push(b'\n');
    file.extend_from_slice(data);
    fsutil::write_atomic_with(cache_file, &file, false)
        .map_err(|e| StoreError::io("writing", cache_file, e))?;
    let _ = fs::remove_file(journal_path(cache_file));
    Ok(())
}

fn parse_slot(id: &str, dir: &Path, aopts: &AnalyzeOptions) -> EntryDraft {
    match analyze_task(id, dir, aopts) {
        Ok(s) => match serde_json::to_vec(&s) {
            Ok(mut bytes) => {
                bytes.push(b'\n');
                let ws = s.metadata.workspace.as_deref().map(normalize_workspace);
                EntryDraft::New(Some(Box::new(s)), bytes, ws)
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
