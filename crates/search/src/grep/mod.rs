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
    /// Host family (`roo`, `zoo-code`, `cline`, `kilo-code`).
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

/// What a grep found.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "GrepTasksResult"))]
pub struct GrepReport {
    pub matches: Vec<GrepMatch>,
    /// Whether matches were left out (`maxMatches`).
    pub truncated: bool,
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
const MAX_LINE_BYTES: usize = 600;

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
                title: s.metadata.title.clone(),
                workspace: s.metadata.workspace.clone(),
                dir: store.task_dir(&s.task_id)?,
            })
        })
        .collect())
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

/// Count one task's search in `report` and take its matches, up to `max` in all.
fn take_found(report: &mut GrepReport, f: TaskFound, max: usize) {
    report.tasks_searched += 1;
    report.bytes_read += f.bytes;
    report.files_parsed += usize::from(f.parsed);
    if f.matches.is_empty() {
        return;
    }
    report.tasks_matched += 1;
    let room = max.saturating_sub(report.matches.len());
    if f.matches.len() > room || f.more {
        report.truncated = true;
    }
    report.matches.extend(f.matches.into_iter().take(room));
}

#[derive(Default)]
struct TaskFound {
    bytes: u64,
    parsed: bool,
    matches: Vec<GrepMatch>,
    more: bool,
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
    let Some(file) = dialogue::source_file(&t.dir) else {
        return found;
    };
    if !matches!(roo_formats::read::read_task_file_into(&file, buf), Ok(true)) {
        return found;
    }
    found.bytes = buf.len() as u64;
    if !matcher.may_match(buf) {
        return found;
    }
    found.parsed = true;
    let may_hold = |bytes: &[u8]| matcher.may_match(bytes);
    dialogue::for_each_text(&file, kinds, &may_hold, |kind, ts, index, text| {
        grep_text(
            &mut found, t, matcher, context, range, max, kind, ts, index, text,
        );
    });
    if found.matches.len() > max {
        found.matches.truncate(max);
        found.more = true;
    }
    found
}

/// The matches of one text of task `t` (in the date range), into `found` (up to `max` and one).
#[allow(clippy::too_many_arguments)]
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
    if found.matches.len() > max {
        found.more = true;
        return;
    }
    let in_range = from_ms.is_none_or(|f| ts.is_some_and(|ts| ts >= f))
        && to_ms.is_none_or(|to| ts.is_some_and(|ts| ts <= to));
    if !in_range {
        return;
    }
    for_each_match_line(&matcher.regex, text, context, |m| {
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

/// Matches gathered for output: first and last line, and the byte spans of the matches.
type Pending = (usize, usize, Vec<(usize, usize)>);

/// Every line of `text` holding a match of `re` (a match running over several lines gives them
/// as one), with `context` lines of the same text on each side.
pub fn for_each_match_line(
    re: &regex::Regex,
    text: &str,
    context: usize,
    mut f: impl FnMut(LineMatch),
) {
    let mut it = re.find_iter(text).filter(|m| !m.is_empty()).peekable();
    if it.peek().is_none() {
        return;
    }
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
        .collect();
    let line_of = |at: usize| line_starts.partition_point(|&s| s <= at) - 1;
    let line_end = |l: usize| {
        line_starts
            .get(l + 1)
            .map_or(text.len(), |&s| s - 1)
            .max(line_starts[l])
    };
    let mut pending: Option<Pending> = None;
    let flush = |(l0, l1, spans): Pending, f: &mut dyn FnMut(LineMatch)| {
        let (start, end) = (line_starts[l0], line_end(l1));
        let raw = text[start..end].trim_end_matches('\r');
        let spans: Vec<(usize, usize)> = spans
            .into_iter()
            .map(|(a, b)| (a - start, (b - start).min(raw.len())))
            .collect();
        let (line, ranges) = cut_line(raw, &spans);
        let ctx = |l: usize| text[line_starts[l]..line_end(l)].trim_end_matches('\r');
        let before = (l0.saturating_sub(context)..l0)
            .map(|l| cut_line(ctx(l), &[]).0)
            .collect();
        let after = (l1 + 1..(l1 + 1 + context).min(line_starts.len()))
            .map(|l| cut_line(ctx(l), &[]).0)
            .collect();
        f(LineMatch {
            line_number: l0 as u32 + 1,
            line,
            ranges,
            before,
            after,
        });
    };
    for m in it {
        let (l0, l1) = (
            line_of(m.start()),
            line_of(m.end().saturating_sub(1).max(m.start())),
        );
        pending = match pending.take() {
            Some((p0, p1, mut spans)) if l0 <= p1 => {
                spans.push((m.start(), m.end()));
                Some((p0, p1.max(l1), spans))
            }
            Some(done) => {
                flush(done, &mut f);
                Some((l0, l1, vec![(m.start(), m.end())]))
            }
            None => Some((l0, l1, vec![(m.start(), m.end())])),
        };
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
mod texts_tests;
