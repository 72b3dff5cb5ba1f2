//! `grep_tasks`: every occurrence of a literal or a regular expression in the dialogue of every
//! task (what the user and the assistant wrote, tool inputs, tool results; each kind optional),
//! with the task, the message's time and kind, the line and its context lines.
//!
//! Tasks are chosen through the task store (the skeleton cache when it can be used) by the filters
//! search has: workspace, host family, dates (a message counts when its time is within them) and a
//! task's subtree. Each task's source file (its UI record, else its API history) is read whole and
//! checked by the pattern's byte pre-check ([`matcher`]); only a file that may hold a match is
//! parsed, and the pattern runs on each message's text on its own: a match never spans two
//! messages.
//!
//! Everything a grep holds is bounded, whatever the tasks hold: a line is cut around its match
//! ([`MAX_LINE_BYTES`]), a match's context lines share [`MAX_CONTEXT_BYTES`] (the rest is one
//! marker line), its title and workspace are cut ([`MAX_LABEL_CHARS`]), the matches of one
//! line keep the spans shown, lines are found without a table of the text's lines, and the
//! matches of a whole grep hold at most [`MAX_ANSWER_BYTES`] of text (further matches are left
//! out, whole, and a note says so). Every dialogue file a grep could not read (refused by the
//! readers' limits or the rule for links, not JSON from its first bytes, or refused whole by the
//! reader) is counted in `filesSkipped` and named in `skipped`; the task's next file (its API
//! history after its UI record) is searched instead.

pub mod dialogue;
pub mod matcher;
pub mod texts;
pub mod with_texts;

use crate::error::{Error, Result};
use crate::search::date_bounds;
pub use dialogue::{Kind, Kinds};
pub use matcher::Matcher;
use rayon::prelude::*;
use roo_store::task_store::{ListQuery, TaskStore};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Options of [`grep_tasks`].
#[derive(Debug, Clone, Default)]
pub struct GrepOptions {
    pub pattern: String,
    /// A regular expression (the `regex` crate's syntax); otherwise a literal.
    pub regex: bool,
    pub ignore_case: bool,
    /// Which texts (default: all four kinds).
    pub kinds: Kinds,
    /// Lines of the same message shown before and after a matching line (at most 20).
    pub context: usize,
    /// Matches returned at most (default 1 000, at most 100 000); `truncated` says when more were
    /// left.
    pub max_matches: Option<usize>,
    /// `tasks/` folders; empty: every store found on this machine.
    pub tasks_dirs: Vec<PathBuf>,
    pub workspace: Option<String>,
    /// Host (a label of `roo_formats::host::SOURCES`).
    pub host: Option<String>,
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    /// Only this task (an id or unique prefix) and its descendants.
    pub task: Option<String>,
    /// Read every task from its folder, not through the text store of our cache.
    pub no_text_store: bool,
}

/// One matching line (or lines, for a match that runs over several).
impl GrepOptions {
    /// The matches a grep returns at most: `max_matches`, 1 000 by default, within 1..=100 000.
    fn max(&self) -> usize {
        self.max_matches.unwrap_or(1000).clamp(1, 100_000)
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct GrepMatch {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// ISO 8601 time of the message, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    pub kind: Kind,
    /// Position of the message in its file, from 0.
    pub message_index: u32,
    /// Line of the match in its message, from 1.
    pub line_number: u32,
    /// The line (long lines are cut around the match, with `…`).
    pub line: String,
    /// Where the matches stand in `line`: `[start, end)` in UTF-16 code units.
    pub ranges: Vec<[u32; 2]>,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// A dialogue file a grep could not read.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "GrepSkippedFile"))]
pub struct GrepSkipped {
    pub task_id: String,
    pub file: String,
    pub reason: String,
}

/// What a grep found.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "GrepTasksResult"))]
pub struct GrepReport {
    pub matches: Vec<GrepMatch>,
    /// Whether matches were left out (`maxMatches`, or the bound on the answer's text: a note
    /// then says so).
    pub truncated: bool,
    /// Dialogue files not searched: not read (not a regular file, over the size cap, a link out
    /// of the store), not JSON, or refused whole by the reader.
    pub files_skipped: usize,
    /// The first of them ([`MAX_SKIPPED_LISTED`]), with why.
    pub skipped: Vec<GrepSkipped>,
    pub tasks_searched: usize,
    pub tasks_matched: usize,
    /// Files parsed after their bytes passed the pre-check (or, with the text store, because the
    /// store did not hold the task's current texts).
    pub files_parsed: usize,
    /// Tasks whose texts came from the text store.
    pub tasks_from_text_store: usize,
    pub bytes_read: u64,
    pub elapsed_ms: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub notes: Vec<String>,
    /// Bytes of text the matches hold (against [`MAX_ANSWER_BYTES`]), and whether matches were
    /// left out for it.
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub held_bytes: usize,
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub cut_by_size: bool,
}

/// A task to search: its header facts and folder.
#[derive(Debug, Clone)]
pub struct GrepTask {
    pub task_id: String,
    pub title: Option<String>,
    pub workspace: Option<String>,
    pub dir: PathBuf,
}

/// Longest line returned, in bytes; a longer one is cut around its first match.
pub const MAX_LINE_BYTES: usize = 600;

/// Bytes of context lines one match holds at most (before and after, half each); the lines past
/// it are one marker line.
pub const MAX_CONTEXT_BYTES: usize = 4096;

/// Characters of a task's title and workspace a match repeats.
pub const MAX_LABEL_CHARS: usize = 200;

/// Bytes of text (lines, context, labels) the matches of one grep hold at most: matches past it
/// are left out whole, and a note says so.
pub const MAX_ANSWER_BYTES: usize = 16 << 20;

/// Skipped files named in a report (all are counted).
pub const MAX_SKIPPED_LISTED: usize = 50;

/// Match spans of one line kept (a line shows [`MAX_LINE_BYTES`]; spans past what it can show
/// are not kept).
const MAX_SPANS: usize = MAX_LINE_BYTES;

/// `s` cut to [`MAX_LABEL_CHARS`] characters, with `…` when cut.
fn label(s: &str) -> String {
    match s.char_indices().nth(MAX_LABEL_CHARS) {
        None => s.to_owned(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// Bytes of text a match holds.
fn held(m: &GrepMatch) -> usize {
    m.line.len()
        + m.before
            .iter()
            .chain(&m.after)
            .map(String::len)
            .sum::<usize>()
        + m.title.as_ref().map_or(0, String::len)
        + m.workspace.as_ref().map_or(0, String::len)
        + 16 * m.ranges.len()
        + 64
}

/// Grep the dialogue of the tasks `opts` selects.
pub fn grep_tasks(opts: &GrepOptions, cancel: Option<&AtomicBool>) -> Result<GrepReport> {
    let started = std::time::Instant::now();
    let matcher = Matcher::new(&opts.pattern, opts.regex, opts.ignore_case)?;
    let (from_ms, to_ms) = date_bounds(opts.start_date.as_deref(), opts.end_date.as_deref())?;
    let dirs = crate::index::tasks_dirs_or_found(&opts.tasks_dirs)?;
    let (store, note) = crate::index::open_task_store(&dirs, cancel)?;
    let store = store.ok_or(Error::Aborted)?;
    let tasks = select_tasks(&store, opts, from_ms, to_ms)?;
    let range = (from_ms, to_ms);
    let mut report = if opts.no_text_store || note.is_some() {
        grep_selected(&tasks, &matcher, opts, range, cancel)?
    } else {
        let root = roo_store::HostEnv::current().cache_root(None);
        grep_through_texts(&store, tasks, &root, &matcher, opts, range, cancel)?
    };
    // Task folders that are links out of their store have no header: each is said too.
    for d in store.diagnostics() {
        let folder = std::path::Path::new(&d.file);
        if d.code == roo_formats::DiagCode::Unreadable
            && roo_store::confine::task_folder_out(folder).is_some()
        {
            let id = folder.file_name().map(|n| n.to_string_lossy().into_owned());
            skip(
                &mut report,
                id.unwrap_or_default(),
                d.file.clone(),
                d.message.clone(),
            );
        }
    }
    if report.cut_by_size {
        report.notes.push(format!(
            "matches past {} MiB of text were left out (whole); narrow the pattern, or ask for fewer context lines or matches",
            MAX_ANSWER_BYTES >> 20
        ));
    }
    report.notes.extend(note);
    report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// [`grep_selected`] through the text store of each store of the handle, under cache root `root`.
pub fn grep_through_texts(
    store: &TaskStore,
    tasks: Vec<GrepTask>,
    root: &std::path::Path,
    matcher: &Matcher,
    opts: &GrepOptions,
    range: (Option<i64>, Option<i64>),
    cancel: Option<&AtomicBool>,
) -> Result<GrepReport> {
    let n = store.stores().len();
    let mut current: Vec<std::collections::HashMap<String, u64>> = vec![Default::default(); n];
    for (i, s) in store.skeletons().iter().enumerate() {
        if let (Some(k), Some(sig)) = (store.store_of(i), store.signature(i)) {
            current[k].insert(s.task_id.clone(), texts::sig_hash(&sig));
        }
    }
    // The selected tasks of each store, in the order selected.
    let mut by_store: Vec<Vec<(GrepTask, u64)>> = vec![Vec::new(); n];
    for t in tasks {
        if let roo_store::task_store::Lookup::Found(i) = store.lookup(&t.task_id) {
            if let (Some(k), Some(sig)) = (store.store_of(i), store.signature(i)) {
                by_store[k].push((t, texts::sig_hash(&sig)));
            }
        }
    }
    let mut report = GrepReport::default();
    for (k, info) in store.stores().iter().enumerate() {
        if report.matches.len() >= opts.max() {
            report.truncated |= !by_store[k].is_empty();
            continue;
        }
        let file = texts::store_file(root, std::path::Path::new(&info.tasks_dir));
        let texts = with_texts::Texts {
            file: &file,
            current: &current[k],
        };
        with_texts::grep_into(
            &mut report,
            &by_store[k],
            &texts,
            matcher,
            opts,
            range,
            cancel,
        )?;
    }
    Ok(report)
}

/// The tasks of `store` that the filters of `opts` keep, newest activity first.
pub fn select_tasks(
    store: &TaskStore,
    opts: &GrepOptions,
    from_ms: Option<i64>,
    to_ms: Option<i64>,
) -> Result<Vec<GrepTask>> {
    let subtree: Option<std::collections::HashSet<String>> = match opts.task.as_deref() {
        None => None,
        Some(id) => {
            let root = store.get(id.trim()).map_err(|l| {
                Error::InvalidArgument(match l {
                    roo_store::task_store::Lookup::Ambiguous(c) => {
                        format!("task `{id}` is ambiguous: {}", c.join(", "))
                    }
                    _ => format!("no task `{id}` in the stores searched"),
                })
            })?;
            let mut set: std::collections::HashSet<String> =
                store.descendants(&root.task_id).into_iter().collect();
            set.insert(root.task_id.clone());
            Some(set)
        }
    };
    let page = store.list(&ListQuery {
        workspace: opts.workspace.clone().filter(|w| !w.trim().is_empty()),
        host: opts.host.clone().filter(|h| !h.trim().is_empty()),
        // A task whose last activity is before the range has no message in it.
        since_ms: from_ms,
        ..ListQuery::default()
    });
    Ok(page
        .items
        .into_iter()
        .filter(|s| subtree.as_ref().is_none_or(|set| set.contains(&s.task_id)))
        .filter(|s| to_ms.is_none_or(|t| s.created_at_ms.is_none_or(|c| c <= t)))
        .filter_map(|s| {
            Some(GrepTask {
                task_id: s.task_id.clone(),
                title: s.metadata.title.as_deref().map(label),
                workspace: s.metadata.workspace.as_deref().map(label),
                dir: store.task_dir(&s.task_id)?,
            })
        })
        .collect())
}

/// Count a skipped file in `report` (and name it, among the first).
fn skip(report: &mut GrepReport, task_id: String, file: String, reason: String) {
    report.files_skipped += 1;
    if report.skipped.len() < MAX_SKIPPED_LISTED {
        report.skipped.push(GrepSkipped {
            task_id,
            file,
            reason,
        });
    }
}

/// Tasks searched between two looks at the match count (in parallel within a batch).
const BATCH: usize = 256;

/// Grep `tasks` in order (their order is the order of the matches).
pub fn grep_selected(
    tasks: &[GrepTask],
    matcher: &Matcher,
    opts: &GrepOptions,
    (from_ms, to_ms): (Option<i64>, Option<i64>),
    cancel: Option<&AtomicBool>,
) -> Result<GrepReport> {
    let max = opts.max();
    let context = opts.context.min(20);
    let mut report = GrepReport::default();
    for batch in tasks.chunks(BATCH) {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Aborted);
        }
        let found: Vec<TaskFound> = batch
            .par_iter()
            .map_init(Vec::new, |buf, t| {
                grep_task(t, matcher, opts.kinds, context, (from_ms, to_ms), max, buf)
            })
            .collect();
        for f in found {
            take_found(&mut report, f, max);
        }
        if report.matches.len() >= max {
            report.truncated |= report.tasks_searched < tasks.len();
            break;
        }
    }
    Ok(report)
}

/// Count one task's search in `report` and take its matches, up to `max` in all and
/// [`MAX_ANSWER_BYTES`] of text.
fn take_found(report: &mut GrepReport, f: TaskFound, max: usize) {
    report.tasks_searched += 1;
    report.bytes_read += f.bytes;
    report.files_parsed += usize::from(f.parsed);
    for (task_id, file, reason) in f.skipped {
        skip(report, task_id, file, reason);
    }
    if f.matches.is_empty() {
        return;
    }
    report.tasks_matched += 1;
    let room = max.saturating_sub(report.matches.len());
    if f.matches.len() > room || f.more {
        report.truncated = true;
    }
    report.cut_by_size |= f.cut_by_size;
    for m in f.matches.into_iter().take(room) {
        if report.held_bytes > MAX_ANSWER_BYTES {
            report.truncated = true;
            report.cut_by_size = true;
            break;
        }
        report.held_bytes += held(&m);
        report.matches.push(m);
    }
}

#[derive(Default)]
struct TaskFound {
    bytes: u64,
    parsed: bool,
    matches: Vec<GrepMatch>,
    more: bool,
    /// Bytes of text `matches` hold, and whether matches were left out for it.
    held: usize,
    cut_by_size: bool,
    /// Dialogue files skipped: task id, file, why.
    skipped: Vec<(String, String, String)>,
}

impl TaskFound {
    fn skipped(&mut self, t: &GrepTask, file: &std::path::Path, why: String) {
        self.skipped
            .push((t.task_id.clone(), file.display().to_string(), why));
    }
}

fn grep_task(
    t: &GrepTask,
    matcher: &Matcher,
    kinds: Kinds,
    context: usize,
    range: (Option<i64>, Option<i64>),
    max: usize,
    buf: &mut Vec<u8>,
) -> TaskFound {
    let mut found = TaskFound::default();
    // The UI record, else (missing or skipped) the API history.
    for file in dialogue::source_files(&t.dir) {
        match roo_formats::read::read_task_file_into(&file, buf) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(d) => {
                found.skipped(t, &file, d.message);
                continue;
            }
        }
        if let Some(why) = dialogue::json_start_problem(&buf[..buf.len().min(4096)]) {
            found.skipped(t, &file, why);
            continue;
        }
        found.bytes = buf.len() as u64;
        if !matcher.may_match(buf) {
            return found;
        }
        found.parsed = true;
        let may_hold = |bytes: &[u8]| matcher.may_match(bytes);
        let refused = dialogue::for_each_text(&file, kinds, &may_hold, |kind, ts, index, text| {
            grep_text(
                &mut found, t, matcher, context, range, max, kind, ts, index, text,
            );
        });
        match refused {
            Some(why) => found.skipped(t, &file, why),
            None => break,
        }
    }
    if found.matches.len() > max {
        found.matches.truncate(max);
        found.more = true;
    }
    found
}

/// The matches of one text of task `t` (in the date range), into `found` (up to `max` and one).
#[expect(clippy::too_many_arguments)]
fn grep_text(
    found: &mut TaskFound,
    t: &GrepTask,
    matcher: &Matcher,
    context: usize,
    (from_ms, to_ms): (Option<i64>, Option<i64>),
    max: usize,
    kind: Kind,
    ts: Option<i64>,
    index: usize,
    text: &str,
) {
    if found.matches.len() > max || found.held > MAX_ANSWER_BYTES {
        found.more = true;
        found.cut_by_size |= found.held > MAX_ANSWER_BYTES;
        return;
    }
    let in_range = from_ms.is_none_or(|f| ts.is_some_and(|ts| ts >= f))
        && to_ms.is_none_or(|to| ts.is_some_and(|ts| ts <= to));
    if !in_range {
        return;
    }
    for_each_match_line_while(&matcher.regex, text, context, |m| {
        if found.matches.len() > max || found.held > MAX_ANSWER_BYTES {
            found.more = true;
            found.cut_by_size |= found.held > MAX_ANSWER_BYTES;
            return false;
        }
        found.held += m.held();
        found.matches.push(GrepMatch {
            task_id: t.task_id.clone(),
            title: t.title.clone(),
            workspace: t.workspace.clone(),
            timestamp: ts.map(roo_js::iso_from_ms),
            kind,
            message_index: index as u32,
            line_number: m.line_number,
            line: m.line,
            ranges: m.ranges,
            before: m.before,
            after: m.after,
        });
        true
    });
}

#[derive(Debug, Clone, PartialEq)]
pub struct LineMatch {
    pub line_number: u32,
    pub line: String,
    pub ranges: Vec<[u32; 2]>,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

impl LineMatch {
    /// Bytes of text it holds, with its labels' share (see [`held`]).
    fn held(&self) -> usize {
        self.line.len()
            + self
                .before
                .iter()
                .chain(&self.after)
                .map(String::len)
                .sum::<usize>()
            + 16 * self.ranges.len()
            + 2 * MAX_LABEL_CHARS
            + 64
    }
}

/// Where the search stands in a text: a position, its line (from 0) and that line's start, moved
/// forward only, counting the line breaks passed (no table of the text's lines is kept).
struct LineCursor<'t> {
    text: &'t [u8],
    pos: usize,
    line: usize,
    start: usize,
}

impl LineCursor<'_> {
    /// The line (from 0) of byte `at` and that line's start; `at` never before the last asked.
    fn at(&mut self, at: usize) -> (usize, usize) {
        let at = at.max(self.pos);
        for nl in memchr::memchr_iter(b'\n', &self.text[self.pos..at]) {
            self.line += 1;
            self.start = self.pos + nl + 1;
        }
        self.pos = at;
        (self.line, self.start)
    }
}

/// The end of the line starting at `start` (its `\n`, or the end of the text).
fn line_end(text: &[u8], start: usize) -> usize {
    memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i)
}

/// Up to `n` lines before the line starting at `start`, nearest last, within `budget` bytes:
/// each line cut to [`MAX_LINE_BYTES`]; lines past the budget become one marker line first.
fn lines_before(text: &str, start: usize, n: usize, budget: usize) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut spent = 0;
    let mut end = start;
    let mut left = 0;
    for taken in 0..n {
        if end == 0 {
            break;
        }
        // `end - 1` is the break ending the line before.
        let from = memchr::memrchr(b'\n', &bytes[..end - 1]).map_or(0, |i| i + 1);
        let line = cut_line(text[from..end - 1].trim_end_matches('\r'), &[]).0;
        if spent + line.len() > budget {
            left = n - taken;
            break;
        }
        spent += line.len();
        out.push(line);
        end = from;
    }
    if left > 0 && end > 0 {
        out.push(format!("… {left} more context line(s) cut"));
    }
    out.reverse();
    out
}

/// Up to `n` lines after the line ending at `end` (its break), within `budget` bytes, as
/// [`lines_before`] (the marker line last).
fn lines_after(text: &str, end: usize, n: usize, budget: usize) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut spent = 0;
    let mut start = end + 1;
    for taken in 0..n {
        if start > bytes.len() || end >= bytes.len() {
            break;
        }
        let stop = line_end(bytes, start);
        let line = cut_line(text[start..stop].trim_end_matches('\r'), &[]).0;
        if spent + line.len() > budget {
            out.push(format!("… {} more context line(s) cut", n - taken));
            break;
        }
        spent += line.len();
        out.push(line);
        if stop >= bytes.len() {
            break;
        }
        start = stop + 1;
    }
    out
}

/// Matches gathered for output: first line and its start, last line and its start, and the byte
/// spans of the matches (the first [`MAX_SPANS`]).
type Pending = (usize, usize, usize, usize, Vec<(usize, usize)>);

/// Every line of `text` holding a match of `re` (a match running over several lines gives them
/// as one), with `context` lines of the same text on each side.
pub fn for_each_match_line(
    re: &regex::Regex,
    text: &str,
    context: usize,
    mut f: impl FnMut(LineMatch),
) {
    for_each_match_line_while(re, text, context, |m| {
        f(m);
        true
    });
}

/// [`for_each_match_line`] until `f` returns `false`. Neither memory nor time grows with what a
/// line holds past what it can show: lines are found by scanning from the last match (no table of
/// the text's lines), one line's spans are kept up to [`MAX_SPANS`], and once they are the search
/// goes on from the end of that line (one 100 MB line matched by `.` costs some 600 matches).
pub fn for_each_match_line_while(
    re: &regex::Regex,
    text: &str,
    context: usize,
    mut f: impl FnMut(LineMatch) -> bool,
) {
    let bytes = text.as_bytes();
    let mut cursor = LineCursor {
        text: bytes,
        pos: 0,
        line: 0,
        start: 0,
    };
    let flush = |(l0, s0, _l1, s1, spans): Pending, f: &mut dyn FnMut(LineMatch) -> bool| {
        let end = line_end(bytes, s1);
        let raw = text[s0..end].trim_end_matches('\r');
        let spans: Vec<(usize, usize)> = spans
            .into_iter()
            .map(|(a, b)| (a - s0, (b - s0).min(raw.len())))
            .collect();
        let (line, ranges) = cut_line(raw, &spans);
        f(LineMatch {
            line_number: l0 as u32 + 1,
            line,
            ranges,
            before: lines_before(text, s0, context, MAX_CONTEXT_BYTES / 2),
            after: lines_after(text, end, context, MAX_CONTEXT_BYTES / 2),
        })
    };
    let mut pending: Option<Pending> = None;
    let mut at = 0;
    while at <= text.len() {
        let Some(m) = re.find_at(text, at) else {
            break;
        };
        if m.is_empty() {
            // An empty match is no match; the search goes on past it, on a character boundary.
            at = m.end() + text[m.end()..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        at = m.end();
        let (l0, s0) = cursor.at(m.start());
        let (l1, s1) = cursor.at(m.end().saturating_sub(1).max(m.start()));
        pending = match pending.take() {
            Some((p0, ps0, p1, ps1, mut spans)) if l0 <= p1 => {
                spans.push((m.start(), m.end()));
                let (last, last_start) = if l1 > p1 { (l1, s1) } else { (p1, ps1) };
                Some((p0, ps0, last, last_start, spans))
            }
            Some(done) => {
                if !flush(done, &mut f) {
                    return;
                }
                Some((l0, s0, l1, s1, vec![(m.start(), m.end())]))
            }
            None => Some((l0, s0, l1, s1, vec![(m.start(), m.end())])),
        };
        // A line holding more matches than it can show: on from its end.
        if let Some((_, _, _, last_start, spans)) = &pending {
            if spans.len() >= MAX_SPANS {
                at = at.max(line_end(bytes, *last_start));
            }
        }
    }
    if let Some(done) = pending {
        flush(done, &mut f);
    }
}

/// A line cut to [`MAX_LINE_BYTES`] around its first span, and the spans as UTF-16 ranges of
/// what is kept.
fn cut_line(line: &str, spans: &[(usize, usize)]) -> (String, Vec<[u32; 2]>) {
    let (from, to) = if line.len() <= MAX_LINE_BYTES {
        (0, line.len())
    } else {
        let anchor = spans.first().map_or(0, |s| s.0);
        let mut from = anchor.saturating_sub(MAX_LINE_BYTES / 3);
        while !line.is_char_boundary(from) {
            from -= 1;
        }
        let mut to = (from + MAX_LINE_BYTES).min(line.len());
        while !line.is_char_boundary(to) {
            to -= 1;
        }
        (from, to)
    };
    let prefix = if from > 0 { "…" } else { "" };
    let suffix = if to < line.len() { "…" } else { "" };
    let kept = &line[from..to];
    let shift = roo_js::utf16::utf16_len(prefix) as u32;
    let ranges = spans
        .iter()
        .filter(|(a, _)| *a >= from && *a < to.max(from + 1))
        .map(|&(a, b)| {
            let s = roo_js::utf16::utf16_len(&line[from..a]) as u32 + shift;
            let e = s + roo_js::utf16::utf16_len(&line[a..b.min(to)]) as u32;
            [s, e]
        })
        .collect();
    (format!("{prefix}{kept}{suffix}"), ranges)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod bounds_tests;

#[cfg(test)]
mod tests_support {
    pub(super) use super::tests::run;

    /// A grep of `tasks` through the text store under the cache root `root`.
    pub(super) fn run_through_texts(
        tasks: &std::path::Path,
        root: &std::path::Path,
        pattern: &str,
    ) -> super::GrepReport {
        let o = super::GrepOptions {
            pattern: pattern.to_owned(),
            tasks_dirs: vec![tasks.to_path_buf()],
            ..Default::default()
        };
        let store = super::TaskStore::open(
            &roo_store::HostEnv::current(),
            &roo_store::task_store::OpenOptions {
                tasks_dirs: vec![tasks.to_path_buf()],
                ..Default::default()
            },
        )
        .expect("store");
        let m = super::Matcher::new(pattern, false, false).expect("pattern");
        let sel = super::select_tasks(&store, &o, None, None).expect("select");
        super::grep_through_texts(&store, sel, root, &m, &o, (None, None), None).expect("grep")
    }
}

#[cfg(test)]
mod texts_tests;
