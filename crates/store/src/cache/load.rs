//! Reading caches without writing: skeleton headers, status against the disk, snapshots.

use super::*;
use crate::task_store::TextHashes;

/// One store served by [`load_skeletons`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LoadedStore {
    pub tasks_dir: String,
    pub cache_file: String,
    /// ms since the epoch.
    pub built_at: i64,
    /// Tasks in the cache.
    pub tasks: u32,
    /// Skeletons returned from it (after the workspace filter).
    pub served: u32,
}

/// What [`load_skeletons`] returns.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "LoadedSkeletons"))]
pub struct Loaded {
    pub skeletons: Vec<ConversationSkeleton>,
    pub stores: Vec<LoadedStore>,
    /// Caches missing, damaged or of another version.
    pub diagnostics: Vec<Diagnostic>,
}

/// Skeleton headers from the cache, with the parents the hierarchy gave them. `tasks_dirs`: the
/// stores to serve (`None`: every store cached under `cache_root`). `workspace`: only tasks of this
/// workspace (compared after normalisation). No task file is read.
pub fn load_skeletons(
    cache_root: &Path,
    tasks_dirs: Option<&[PathBuf]>,
    workspace: Option<&str>,
) -> Loaded {
    let files: Vec<PathBuf> = match tasks_dirs {
        Some(dirs) => dirs.iter().map(|d| cache_file_for(cache_root, d)).collect(),
        None => {
            let mut v: Vec<PathBuf> = fs::read_dir(cache_root.join("stores"))
                .map(|rd| {
                    rd.flatten()
                        .map(|e| e.path().join(CACHE_FILE))
                        .filter(|p| p.is_file())
                        .collect()
                })
                .unwrap_or_default();
            v.sort();
            v
        }
    };
    let filter = workspace.map(normalize_workspace);
    let mut out = Loaded::default();
    for (i, file) in files.iter().enumerate() {
        let index = match read_index(file) {
            ReadOutcome::Ok(ix) => ix,
            ReadOutcome::Missing => {
                let dir = tasks_dirs
                    .and_then(|d| d.get(i))
                    .map_or_else(|| file.display().to_string(), |d| d.display().to_string());
                out.diagnostics.push(Diagnostic::new(
                    dir,
                    "",
                    DiagCode::Missing,
                    Severity::Warning,
                    "this store has no skeleton cache yet; run buildSkeletonCache first",
                ));
                continue;
            }
            ReadOutcome::Invalid(reason) => {
                out.diagnostics.push(Diagnostic::new(
                    file.display().to_string(),
                    "",
                    DiagCode::UnexpectedShape,
                    Severity::Warning,
                    format!("{reason}; run buildSkeletonCache to refresh it"),
                ));
                continue;
            }
        };
        let data = match read_data(file, index.data_start) {
            Ok(d) => d,
            Err(e) => {
                out.diagnostics.push(Diagnostic::new(
                    file.display().to_string(),
                    "",
                    DiagCode::Unreadable,
                    Severity::Warning,
                    format!("the cache data could not be read: {e}"),
                ));
                continue;
            }
        };
        let wanted: Vec<&Entry> = index
            .entries
            .iter()
            .filter(|e| e.len > 0)
            .filter(|e| filter.is_none() || e.ws.as_deref() == filter.as_deref())
            .collect();
        let skeletons: Vec<Option<ConversationSkeleton>> = wanted
            .par_iter()
            .map(|e| {
                let mut s = skeleton_of(&data, e)?;
                s.parent_task_id = e.parent.clone();
                s.root_task_id = e.root.clone();
                s.parent_evidence = e.evidence.clone();
                Some(s)
            })
            .collect();
        let damaged = skeletons.iter().filter(|s| s.is_none()).count();
        if damaged > 0 {
            out.diagnostics.push(Diagnostic::new(
                file.display().to_string(),
                "",
                DiagCode::Truncated,
                Severity::Warning,
                format!("{damaged} cached skeleton(s) failed their checksum or could not be read; run buildSkeletonCache to read those tasks again"),
            ));
        }
        let served: Vec<ConversationSkeleton> = skeletons.into_iter().flatten().collect();
        out.stores.push(LoadedStore {
            tasks_dir: index.header.tasks_dir.clone(),
            cache_file: file.display().to_string(),
            built_at: index.header.built_at,
            tasks: index.entries.len() as u32,
            served: served.len() as u32,
        });
        out.skeletons.extend(served);
    }
    out
}

/// The tasks of a store's cache that have no header, with why (read, never written).
pub fn failed_tasks(cache_root: &Path, tasks_dir: &Path) -> Vec<(String, Vec<Diagnostic>)> {
    match read_index(&cache_file_for(cache_root, tasks_dir)) {
        ReadOutcome::Ok(index) => (index.entries.into_iter())
            .filter(|e| e.len == 0)
            .map(|e| (e.id, e.diagnostics))
            .collect(),
        _ => Vec::new(),
    }
}

/// The state of one store's cache, without writing anything.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CacheStatus {
    pub cache_file: String,
    pub exists: bool,
    /// Why an existing file cannot be used (other version, damage).
    pub unusable: Option<String>,
    pub built_at: Option<i64>,
    pub entries: u32,
    /// Cached tasks whose source files changed.
    pub stale: u32,
    /// Tasks on disk that are not cached.
    pub missing: u32,
    /// Cached tasks whose folder is gone.
    pub removed: u32,
    /// Cached skeletons that fail their checksum (cut off, altered); the next build reads those
    /// tasks again.
    pub damaged: u32,
    /// A journal line that failed its checksum.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub journal_damage: Option<String>,
}

/// Compare a store's cache with the disk (stats only).
pub fn cache_status(cache_root: &Path, tasks_dir: &Path) -> CacheStatus {
    let file = cache_file_for(cache_root, tasks_dir);
    let mut st = CacheStatus {
        cache_file: file.display().to_string(),
        ..CacheStatus::default()
    };
    let index = match read_index(&file) {
        ReadOutcome::Missing => return st,
        ReadOutcome::Invalid(r) => {
            st.exists = true;
            st.unusable = Some(r);
            return st;
        }
        ReadOutcome::Ok(i) => i,
    };
    st.exists = true;
    st.built_at = Some(index.header.built_at);
    st.entries = index.entries.len() as u32;
    let data = read_data(&file, index.data_start).unwrap_or_default();
    st.damaged = damaged_entries(&data, index.entries.iter()).len() as u32;
    st.journal_damage = index.journal_damage.clone();
    let dirs = list_tasks(tasks_dir).unwrap_or_default();
    let sigs = task_sigs(tasks_dir, &dirs);
    let map: HashMap<&str, &Entry> = index.entries.iter().map(|e| (e.id.as_str(), e)).collect();
    for ((id, _), sig) in dirs.iter().zip(&sigs) {
        match map.get(id.as_str()) {
            Some(e) if &e.sig == sig => {}
            Some(_) => st.stale += 1,
            None => st.missing += 1,
        }
    }
    let on_disk: HashSet<&str> = dirs.iter().map(|(id, _)| id.as_str()).collect();
    st.removed = index
        .entries
        .iter()
        .filter(|e| !on_disk.contains(e.id.as_str()))
        .count() as u32;
    st
}

/// Remove a store's cache (used by the rebuild tool). Returns whether a file was removed.
pub fn wipe_store_cache(
    cache_root: &Path,
    tasks_dir: &Path,
    cancel: Option<&AtomicBool>,
) -> Result<bool> {
    let dir = store_cache_dir(cache_root, tasks_dir);
    if !dir.exists() {
        return Ok(false);
    }
    let _lock = DirLock::acquire(&dir, crate::lock::DEFAULT_WAIT, cancel)?;
    let file = dir.join(CACHE_FILE);
    match fs::remove_file(&file) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::io("removing", &file, e)),
    }
}

/// What a long-lived handle keeps beside a cached task's header.
#[derive(Debug, Clone, Default)]
pub struct CachedTask {
    pub sig: TaskSig,
    /// The header's child calls' todos, taken out as JSON text as the header was read (the task
    /// store handle keeps them so); `None`: none, or still in the header.
    pub todos: Option<Box<str>>,
    /// The folder's mark from the pass that took `sig` (module `stamp`).
    pub folder: Option<FolderMark>,
    /// The header's texts hashed as it was read (an open's); `None`: not yet.
    pub(crate) texts: Option<TextHashes>,
}

/// A task of a store that has no header.
#[derive(Debug, Clone, Default)]
pub struct FailedTask {
    pub id: String,
    pub sig: TaskSig,
    /// Why it has none.
    pub diagnostics: Vec<Diagnostic>,
}

impl FailedTask {
    /// The task of an entry that got no header, its id and diagnostics taken: an entry without a
    /// line keeps its signature; one whose line was not read keeps a signature that matches
    /// nothing, so the task is parsed again.
    pub(super) fn of_entry(e: &mut Entry) -> FailedTask {
        FailedTask {
            id: std::mem::take(&mut e.id),
            sig: if e.len > 0 { [None; 5] } else { e.sig },
            diagnostics: std::mem::take(&mut e.diagnostics),
        }
    }
}

/// A task as a scan read it: its id, signature, and lean header and todos
/// ([`crate::task_store::lean_out`], done where it was parsed) or why it has none.
pub type ScannedTask = (
    String,
    TaskSig,
    std::result::Result<(ConversationSkeleton, Option<Box<str>>), Vec<Diagnostic>>,
);

/// A store's tasks as a long-lived handle takes them. The headers are one vector, the one the
/// handle keeps: a header is most of a kilobyte, and a vector of tasks each holding its header,
/// moved into the handle's afterwards, would be as many fresh pages again (faulted in and zeroed:
/// 50 MB at 50 000 tasks).
#[derive(Debug, Clone, Default)]
pub struct CachedTasks {
    /// The headers with the links the hierarchy gave them, in the cache's entry order (task id
    /// order, save for changes recorded since).
    pub skeletons: Vec<ConversationSkeleton>,
    /// What the handle keeps beside each header, at the same positions.
    pub kept: Vec<CachedTask>,
    /// The tasks that got no header.
    pub failed: Vec<FailedTask>,
}

impl CachedTasks {
    /// Tasks as a scan reads them: each header with its todos taken out ([`ScannedTask`]).
    pub fn from_scan(scanned: Vec<ScannedTask>) -> CachedTasks {
        let mut out = CachedTasks::default();
        for (id, sig, parsed) in scanned {
            match parsed {
                Ok((s, todos)) => {
                    out.skeletons.push(s);
                    out.kept.push(CachedTask {
                        sig,
                        todos,
                        ..CachedTask::default()
                    });
                }
                Err(diagnostics) => out.failed.push(FailedTask {
                    id,
                    sig,
                    diagnostics,
                }),
            }
        }
        out
    }

    /// Every task, with a header or not.
    pub fn len(&self) -> usize {
        self.skeletons.len() + self.failed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A store's cache read whole: what [`build_skeleton_cache`] left, journal applied.
#[derive(Debug, Clone)]
pub struct StoreSnapshot {
    pub tasks_dir: PathBuf,
    pub cache_file: PathBuf,
    pub generation: u64,
    pub tasks: CachedTasks,
    /// Size of the journal, to decide when a full rewrite pays off.
    pub journal_bytes: u64,
    /// Size of the data section.
    pub data_bytes: u64,
    /// What the last hierarchy pass over this store did: the full build's, or, once a journal has
    /// lines, the one kept beside it by the last append; `None` when neither is current (the links
    /// are, the counts would not be).
    pub hierarchy: Option<HierarchyMetrics>,
    /// Some task folders changed, appeared or went since the cache was written: the handle
    /// refreshes what it took ([`open_snapshot`]).
    pub stale: bool,
}

/// Read a store's cache whole (entries, journal and skeletons). `None` when the file is missing,
/// unusable or of another version; a skeleton line that cannot be read is `None` with a
/// diagnostic, so the handle parses that task again.
pub fn read_snapshot(cache_root: &Path, tasks_dir: &Path) -> Option<StoreSnapshot> {
    let tasks_dir = fsutil::canonical(tasks_dir);
    let file = cache_file_for(cache_root, &tasks_dir);
    let ReadOutcome::Ok(index) = read_index(&file) else {
        return None;
    };
    snapshot_of(*index, tasks_dir, file)
}

/// A store's snapshot for a handle's open, and the diagnostic of a damaged cache it repaired.
/// When every task folder on disk has an entry of the same signature, or at most one in
/// [`STALE_SHARE`] differs (the snapshot is then `stale`, and the handle refreshes those tasks as
/// any refresh does, appending to the cache), the cache is read once: its index is not read
/// twice and its data section is not read whole for a checksum pass first; each line is checked
/// as it is parsed, and a line that does not check out sends the open through the build after
/// all. So does a larger change: the build writes its data section to a file as it goes, where a
/// refresh would hold every task it parses. A build that writes a new generation hands over its
/// linked headers rather than reading back the file it wrote. `None` for the snapshot: the cache
/// could not be read back.
pub fn open_snapshot(
    tasks_dir: &Path,
    opts: &BuildOptions,
) -> Result<(Option<Diagnostic>, Option<StoreSnapshot>)> {
    let tasks_dir = checked_tasks_dir(tasks_dir)?;
    check_cache_root(&opts.cache_root, &tasks_dir)?;
    let file = cache_file_for(&opts.cache_root, &tasks_dir);
    // The folders are listed while the index is read: neither needs the other, and each mostly
    // keeps one thread busy.
    let (index, dirs) = rayon::join(|| read_index(&file), || list_tasks(&tasks_dir));
    if let ReadOutcome::Ok(index) = index {
        let differ = if index.journal_damage.is_none() && !opts.force_rebuild {
            differing(&tasks_dir, dirs?, &index.entries, opts.every_file)
        } else {
            usize::MAX
        };
        if differ <= index.entries.len() / STALE_SHARE {
            let lines = index.entries.iter().filter(|e| e.len > 0).count();
            if let Some(mut snap) = snapshot_of(*index, tasks_dir.clone(), file.clone()) {
                snap.stale = differ > 0;
                if snap.tasks.skeletons.len() == lines {
                    return Ok((None, Some(snap)));
                }
            }
        }
    }
    let (built, kept) = build_store_keeping(&tasks_dir, opts, &mut Vec::new(), true)?;
    let snap = match kept {
        Some(k) => Some(StoreSnapshot {
            tasks_dir,
            cache_file: file,
            generation: k.generation,
            tasks: k.tasks,
            journal_bytes: 0,
            data_bytes: k.data_bytes,
            hierarchy: Some(k.hierarchy),
            stale: false,
        }),
        None => read_snapshot(&opts.cache_root, &tasks_dir),
    };
    Ok((built.damage, snap))
}

/// The generation of a store's cache file and the length of its data section, from its header
/// line alone (the entry list is skipped, not parsed).
pub fn cache_generation(cache_root: &Path, tasks_dir: &Path) -> Option<(u64, u64)> {
    let file = fs::File::open(cache_file_for(cache_root, tasks_dir)).ok()?;
    let len = file.metadata().ok()?.len();
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let header: Header = serde_json::from_str(&line).ok()?;
    let mut skipped = Vec::new();
    reader.read_until(b'\n', &mut skipped).ok()?;
    let data_start = (line.len() + skipped.len()) as u64;
    Some((header.generation, len.saturating_sub(data_start)))
}

/// An open takes a cache whose tasks differ from the disk by at most one in this many, and
/// refreshes them.
pub const STALE_SHARE: usize = 8;

/// How many task folders of `tasks_dir` have no entry of their signature, plus the entries
/// without a folder. Where the store allows it, a folder's time stands for its files (module
/// `stamp`).
fn differing(
    tasks_dir: &Path,
    dirs: Vec<(String, PathBuf)>,
    entries: &[Entry],
    every_file: bool,
) -> usize {
    let entry_of = entry_of_folders(&dirs, entries);
    let prior = |i: usize, _: &str| {
        let e = entries.get((*entry_of.get(i)?)?)?;
        Some((e.sig, e.folder?))
    };
    // Untrusted, the folders are not stat'ed: the snapshot takes its marks from the entries.
    let marks = entries.iter().map(|e| (&e.sig, e.folder));
    let folders = Folders::trusting(tasks_dir, every_file, marks, &prior, clock_slice())
        .unwrap_or(Folders::Ignore);
    let stamps = task_stamps(tasks_dir, &dirs, &folders);
    let kept = (entry_of.iter().zip(&stamps))
        .filter(|(e, st)| e.and_then(|i| entries.get(i)).map(|e| e.sig) == Some(st.sig))
        .count();
    // Folders not matched, and entries without a folder.
    let differ = dirs.len() - kept + (entries.len() - kept);
    free_aside((dirs, stamps, entry_of));
    differ
}

/// The position in `entries` of each folder of `dirs` (`None`: it has no entry). The entries
/// are in the listing's order save for changes (a journal appends new tasks), so each folder is
/// looked for first just after the last one found; the entries are mapped by id only when one
/// is not there.
fn entry_of_folders(dirs: &[(String, PathBuf)], entries: &[Entry]) -> Vec<Option<usize>> {
    let mut by_id: Option<HashMap<&str, usize>> = None;
    let mut next = 0;
    (dirs.iter())
        .map(|(id, _)| {
            let at = match entries.get(next) {
                Some(e) if e.id == *id => Some(next),
                _ => {
                    let map = by_id.get_or_insert_with(|| {
                        let ids = entries.iter().enumerate().map(|(i, e)| (e.id.as_str(), i));
                        ids.collect()
                    });
                    map.get(id.as_str()).copied()
                }
            };
            next = at.map_or(next, |i| i + 1);
            at
        })
        .collect()
}

/// [`read_snapshot`] of an index already read.
fn snapshot_of(mut index: Index, tasks_dir: PathBuf, file: PathBuf) -> Option<StoreSnapshot> {
    let mut f = fs::File::open(&file).ok()?;
    let data_bytes = f.metadata().ok()?.len().saturating_sub(index.data_start);
    let windows = windows(&index.entries);
    let lines = index.entries.iter().filter(|e| e.len > 0).count();
    // Each header is read into its place in the vector the handle keeps: placeholders first
    // (written in parallel; the pages are the headers' own), each overwritten by its header.
    let mut skeletons: Vec<ConversationSkeleton> = Vec::with_capacity(lines);
    skeletons.par_extend((0..lines).into_par_iter().map(|_| Default::default()));
    // An entry whose line is unreadable keeps a signature that matches nothing (the default).
    let mut kept = Vec::with_capacity(lines);
    kept.par_extend((0..lines).into_par_iter().map(|_| CachedTask::default()));
    // The data section a window at a time (lines in file order), not whole: the section is most
    // of the file, and a handle's open would otherwise hold it beside every parsed header.
    // Two buffers for every window, one read while the other's lines are parsed: a new one for
    // each would be fresh pages each time (freed memory goes back to the system at once), all
    // 124 MB of a 50 000-task section faulted in and zeroed.
    let (mut data, mut next) = (Vec::new(), Vec::new());
    // Each entry's slot (header and what is kept beside it), taken by the window that holds its
    // line: a header is parsed straight into its place, not collected into a vector per window
    // first (fresh pages for every window: 40 MB over a 50 000-task section) and moved.
    let mut places = skeletons.iter_mut().zip(kept.iter_mut());
    let mut slots: Vec<Option<Slot<'_>>> = (index.entries.iter_mut())
        .map(|e| match e.len {
            0 => None,
            _ => places.next().map(|(s, k)| (s, k, e)),
        })
        .collect();
    let data_start = index.data_start;
    let read = |f: &mut fs::File, w: Option<&(u64, u64, Vec<usize>)>, buf: &mut Vec<u8>| {
        if let Some((window, start, _)) = w {
            if read_span(f, data_start + start, *window, buf).is_err() {
                buf.clear();
            }
        }
    };
    read(&mut f, windows.first(), &mut data);
    let mut parsed = 0;
    for (k, (_, start, members)) in windows.iter().enumerate() {
        let window: Vec<Slot<'_>> = (members.iter())
            .filter_map(|&i| slots.get_mut(i)?.take())
            .collect();
        let start = *start;
        parsed += rayon::join(
            || read(&mut f, windows.get(k + 1), &mut next),
            || {
                (window.into_par_iter())
                    .map(|(s, t, e)| usize::from(parse_into(s, t, &data, start, e)))
                    .sum::<usize>()
            },
        )
        .1;
        std::mem::swap(&mut data, &mut next);
    }
    drop(slots);
    let failed = unread_tasks(&mut index.entries, &mut skeletons, &mut kept, parsed);
    free_aside(index.entries);
    let journal_bytes = fs::metadata(journal_path(&file)).map_or(0, |m| m.len());
    Some(StoreSnapshot {
        hierarchy: if journal_bytes == 0 {
            index.header.hierarchy.clone()
        } else {
            read_hierarchy_note(&file, index.header.generation, journal_bytes)
        },
        journal_bytes,
        data_bytes,
        tasks_dir,
        cache_file: file,
        generation: index.header.generation,
        tasks: CachedTasks {
            skeletons,
            kept,
            failed,
        },
        stale: false,
    })
}

/// Drop `what` on the thread pool while the caller goes on: 50 000 folder names, paths or
/// entries are as many small allocations, freed in several ms, while the open's next steps keep
/// at most one thread busy at first.
pub(crate) fn free_aside<T: Send + 'static>(what: T) {
    rayon::spawn(move || drop(what));
}

/// The tasks of `entries` without a header: those without a line, and those whose line
/// [`parse_into`] left unread (their placeholders, the headers with another id than their
/// entry's, are taken out of `skeletons` and `kept`). `parsed`: how many lines were read; when
/// that is every one, no header is looked at.
fn unread_tasks(
    entries: &mut [Entry],
    skeletons: &mut Vec<ConversationSkeleton>,
    kept: &mut Vec<CachedTask>,
    parsed: usize,
) -> Vec<FailedTask> {
    if parsed == skeletons.len() {
        let none = entries.iter_mut().filter(|e| e.len == 0);
        return none.map(FailedTask::of_entry).collect();
    }
    let mut failed = Vec::new();
    let mut read = Vec::with_capacity(skeletons.len());
    let mut at = skeletons.iter();
    for e in entries {
        let was_read = match e.len {
            0 => None,
            _ => Some(at.next().is_some_and(|s| s.task_id == e.id)),
        };
        read.extend(was_read);
        if was_read != Some(true) {
            failed.push(FailedTask::of_entry(e));
        }
    }
    if read.contains(&false) {
        let mut it = read.iter();
        skeletons.retain(|_| it.next() == Some(&true));
        let mut it = read.iter();
        kept.retain(|_| it.next() == Some(&true));
    }
    failed
}

/// A line still to be parsed: the place of its header, what is kept beside it, and its entry.
type Slot<'a> = (
    &'a mut ConversationSkeleton,
    &'a mut CachedTask,
    &'a mut Entry,
);

/// Parse the line of `e` (in the window `data` that starts at `start`) into `s` and `t`, in the
/// handle's lean form ([`crate::task_store::lean_header`]: what the handle does not keep out of
/// the header is never built), the entry's link moved into it, its texts hashed while the header
/// is hot. A line that does not check out or names another task leaves both as they were.
/// Whether the line was read.
fn parse_into(
    s: &mut ConversationSkeleton,
    t: &mut CachedTask,
    data: &[u8],
    start: u64,
    e: &mut Entry,
) -> bool {
    let line = e
        .off
        .checked_sub(start)
        .and_then(|off| line_at(data, off, e));
    let text = line.and_then(|l| std::str::from_utf8(l).ok());
    let parsed = text.and_then(|l| crate::task_store::lean_header(l).ok());
    let Some((mut header, todos)) = parsed.filter(|(h, _)| h.task_id == e.id) else {
        return false;
    };
    // The links move from the entry to the header (not copied: an inferred link's evidence holds
    // an instruction prefix).
    header.parent_task_id = e.parent.take();
    header.root_task_id = e.root.take();
    header.parent_evidence = e.evidence.take();
    *t = CachedTask {
        sig: e.sig,
        todos,
        folder: e.folder,
        texts: Some(TextHashes::of(&header)),
    };
    *s = header;
    true
}

/// The most of the data section each of [`snapshot_of`]'s two buffers holds (a longer line is read
/// alone): one window is read while the one before it is parsed, together what one window of
/// 8 MiB was when reading and parsing took turns.
const WINDOW: u64 = 4 << 20;

/// The entries with a line, in windows of the data section of at most `WINDOW` bytes (or one
/// longer line): each window's length, start, and the positions of the entries it holds.
fn windows(entries: &[Entry]) -> Vec<(u64, u64, Vec<usize>)> {
    windows_of(entries, WINDOW)
}

fn windows_of(entries: &[Entry], most: u64) -> Vec<(u64, u64, Vec<usize>)> {
    let mut by_offset: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].len > 0).collect();
    by_offset.sort_by_key(|&i| entries[i].off);
    let mut out: Vec<(u64, u64, Vec<usize>)> = Vec::new();
    for i in by_offset {
        let (off, end) = (
            entries[i].off,
            entries[i].off.saturating_add(entries[i].len),
        );
        match out.last_mut() {
            Some((len, start, members)) if end.saturating_sub(*start) <= most => {
                *len = (*len).max(end - *start);
                members.push(i);
            }
            _ => out.push((end - off, off, vec![i])),
        }
    }
    out
}

/// `len` bytes of `f` from `at` (fewer where the file ends first), in place of what `data` held.
fn read_span(f: &mut fs::File, at: u64, len: u64, data: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(at))?;
    data.clear();
    data.reserve(usize::try_from(len).unwrap_or(0));
    f.take(len).read_to_end(data)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(off: u64, len: u64) -> Entry {
        Entry {
            off,
            len,
            ..Entry::default()
        }
    }

    #[test]
    fn windows_follow_the_file_and_hold_a_long_line_alone() {
        // Entries in id order; their lines out of file order, one without a line, one long.
        let entries = [
            entry(30, 10),
            entry(0, 10),
            entry(0, 0),
            entry(10, 20),
            entry(40, 100),
            entry(140, 5),
        ];
        let w = windows_of(&entries, 40);
        assert_eq!(
            w,
            vec![
                (40, 0, vec![1, 3, 0]),
                (100, 40, vec![4]),
                (5, 140, vec![5])
            ]
        );
    }
}
