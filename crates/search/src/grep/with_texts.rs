//! A grep through the text store ([`super::texts`]) of one store: each selected task's texts come
//! from the store when it holds them at the task's current signature and they check out, else
//! from the task's folder; when anything was read from a folder (a new or changed task, a body
//! that did not check out) or the store holds tasks the handle no longer has, a new store file is
//! written beside the old one and put in its place.

use super::texts::{self, TextStore, Writer};
use super::{dialogue, grep_text, GrepOptions, GrepReport, GrepTask, Matcher, TaskFound, BATCH};
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The text store of one store, and every task that store has now, with its signature hash.
pub struct Texts<'a> {
    pub file: &'a Path,
    pub current: &'a HashMap<String, u64>,
}

/// The file is written again once more than one task in this many is missing or out of date.
const RENEW_AT: usize = 50;

/// What one task gave: its matches, and the body read from its folder when no new store file is
/// being written (a repair, written after the run).
struct Read {
    found: TaskFound,
    body: Option<Vec<u8>>,
    write_error: Option<std::io::Error>,
    from_store: bool,
    damaged: Option<String>,
}

/// Grep `tasks` (each with `sig`: its signature hash) into `report`, through `texts`.
pub(super) fn grep_into(
    report: &mut GrepReport,
    tasks: &[(GrepTask, u64)],
    texts: &Texts<'_>,
    matcher: &Matcher,
    opts: &GrepOptions,
    range: (Option<i64>, Option<i64>),
    cancel: Option<&AtomicBool>,
) -> Result<()> {
    let max = opts.max();
    let context = opts.context.min(20);
    let store = TextStore::open(texts.file);
    if let Some(p) = &store.problem {
        report.notes.push(format!(
            "the text store {} could not be used ({p}); its tasks were read from their folders",
            texts.file.display()
        ));
    }
    // The file is written again when it cannot be read, or once more than one task in fifty is
    // missing from it or out of date; until then such tasks are read from their folders (a run
    // after one task changed reads one folder, not a whole new file).
    let stale = tasks
        .iter()
        .filter(|(t, sig)| !store.holds(&t.task_id, *sig))
        .count()
        + store.outdated(texts.current);
    let outdated = !store.is_open() || stale * RENEW_AT > texts.current.len();
    let mut writer = if outdated && !(tasks.is_empty() && texts.current.is_empty()) {
        match Writer::create(texts.file) {
            Ok(w) => Some(w),
            Err(e) => {
                report
                    .notes
                    .push(format!("the text store could not be written ({e})"));
                None
            }
        }
    } else {
        None
    };
    // A store that could not be written is not tried again with the bodies of this run.
    let writable = !outdated || writer.is_some();
    // Each body goes to the new file as soon as it is read (in no particular order: the table at
    // the end says where each is), so a run holds no more than one body per thread.
    let shared = writer.take().map(Mutex::new);
    let mut repairs: Vec<(String, u64, Vec<u8>)> = Vec::new();
    let mut damaged: Vec<String> = Vec::new();
    let mut write_error: Option<std::io::Error> = None;
    for batch in tasks.chunks(BATCH) {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            if let Some(w) = shared.and_then(|m| m.into_inner().ok()) {
                w.abandon();
            }
            return Err(Error::Aborted);
        }
        let read: Vec<Read> = batch
            .par_iter()
            .map_init(Vec::new, |buf, (t, sig)| {
                read_task(
                    t,
                    *sig,
                    &store,
                    shared.as_ref(),
                    matcher,
                    opts,
                    context,
                    range,
                    max,
                    buf,
                )
            })
            .collect();
        for (r, (t, sig)) in read.into_iter().zip(batch) {
            let was_damaged = r.damaged.is_some();
            if let Some(why) = r.damaged {
                damaged.push(why);
            }
            if let Some(e) = r.write_error {
                write_error.get_or_insert(e);
            }
            if let Some(body) = r.body.filter(|_| writable && was_damaged) {
                repairs.push((t.task_id.clone(), *sig, body));
            }
            report.tasks_from_text_store += usize::from(r.from_store);
            super::take_found(report, r.found, max);
        }
        if report.matches.len() >= max {
            report.truncated |= report.tasks_searched < tasks.len();
            break;
        }
    }
    if !damaged.is_empty() {
        report.notes.push(format!(
            "the text store was damaged for {} task(s) ({}); they were read from their folders",
            damaged.len(),
            damaged
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    let writer = shared.and_then(|m| match m.into_inner() {
        Ok(w) => Some(w),
        Err(poisoned) => {
            poisoned.into_inner().abandon();
            None
        }
    });
    finish(report, writer, &repairs, write_error, &store, texts);
    Ok(())
}

/// One task: its texts from the store, else from its folder (then as a body to keep).
#[expect(clippy::too_many_arguments)]
fn read_task(
    t: &GrepTask,
    sig: u64,
    store: &TextStore,
    writer: Option<&Mutex<Writer>>,
    matcher: &Matcher,
    opts: &GrepOptions,
    context: usize,
    range: (Option<i64>, Option<i64>),
    max: usize,
    buf: &mut Vec<u8>,
) -> Read {
    let search = |found: &mut TaskFound, kind, ts, index, text: &str| {
        grep_text(
            found, t, matcher, context, range, max, kind, ts, index, text,
        );
    };
    let mut read = Read {
        found: TaskFound::default(),
        body: None,
        write_error: None,
        from_store: false,
        damaged: None,
    };
    match store.body(&t.task_id, sig, buf) {
        Ok(true) => match texts::texts(buf) {
            Some((list, skipped)) => {
                read.from_store = true;
                for (file, why) in skipped {
                    read.found.skipped.push((t.task_id.clone(), file, why));
                }
                read.found.bytes = buf.len() as u64;
                // One pass of the pre-check over the whole body; the pattern then runs only on
                // the texts where one of its literals starts.
                let starts = matcher.precheck_starts(buf);
                let mut next = 0usize;
                for (kind, ts, index, text) in list {
                    let from = text.as_ptr() as usize - buf.as_ptr() as usize;
                    let candidate = match &starts {
                        None => true,
                        Some(s) => {
                            while s.get(next).is_some_and(|&p| p < from) {
                                next += 1;
                            }
                            s.get(next).is_some_and(|&p| p < from + text.len())
                        }
                    };
                    if !(candidate && opts.kinds.has(kind)) {
                        continue;
                    }
                    let Some(text) = texts::text_str(text) else {
                        // Not what was written: the task is read from its folder.
                        read.damaged = Some(format!("{}: a text is not UTF-8", t.task_id));
                        break;
                    };
                    search(&mut read.found, kind, ts, index, text);
                }
                if read.damaged.is_none() {
                    if let Some(w) = writer {
                        read.write_error = add(w, &t.task_id, sig, buf);
                    }
                    return read;
                }
                read.from_store = false;
                read.found = TaskFound::default();
            }
            None => read.damaged = Some(format!("{}: its texts do not read", t.task_id)),
        },
        Ok(false) => {}
        Err(why) => read.damaged = Some(why),
    }
    // From the folder: every text, decoded, kept as the task's new body (with the files skipped:
    // the UI record, else, missing or skipped, the API history).
    let mut body = Vec::new();
    for file in dialogue::source_files(&t.dir) {
        let shown = file.display().to_string();
        if let Some(why) = dialogue::file_problem(&file) {
            texts::push_skipped(&mut body, &shown, &why);
            read.found.skipped(t, &file, why);
            continue;
        }
        let before = body.len();
        let refused = dialogue::for_each_text(
            &file,
            dialogue::Kinds::default(),
            &|_| true,
            |kind, ts, index, text| {
                texts::push_text(&mut body, kind, ts, index, text);
                if opts.kinds.has(kind) {
                    search(&mut read.found, kind, ts, index, text);
                }
            },
        );
        read.found.parsed = true;
        read.found.bytes += std::fs::metadata(&file).map_or(0, |m| m.len());
        match refused {
            Some(why) => {
                body.truncate(before);
                texts::push_skipped(&mut body, &shown, &why);
                read.found.skipped(t, &file, why);
            }
            None => break,
        }
    }
    match writer {
        Some(w) => read.write_error = add(w, &t.task_id, sig, &body),
        None => read.body = Some(body),
    }
    read
}

/// Add a body to the new store file; the error, if any.
fn add(w: &Mutex<Writer>, task_id: &str, sig: u64, body: &[u8]) -> Option<std::io::Error> {
    match w.lock() {
        Ok(mut w) => w.add(task_id, sig, body).err(),
        Err(_) => Some(std::io::Error::other("a writer thread failed")),
    }
}

/// Put the new store file in place: the repaired bodies, then every task this grep did not read
/// whose body still checks out (a repair alone starts a new file).
fn finish(
    report: &mut GrepReport,
    mut writer: Option<Writer>,
    repairs: &[(String, u64, Vec<u8>)],
    write_error: Option<std::io::Error>,
    store: &TextStore,
    texts: &Texts<'_>,
) {
    if writer.is_none() && !repairs.is_empty() {
        writer = Writer::create(texts.file).ok();
    }
    if let Some(mut w) = writer {
        let mut result = match write_error {
            Some(e) => Err(e),
            None => Ok(()),
        };
        for (id, sig, body) in repairs {
            if result.is_ok() {
                result = w.add(id, *sig, body);
            }
        }
        // The tasks this grep did not read keep their bodies, when they still check out.
        let mut buf = Vec::new();
        for (id, &sig) in texts.current {
            if result.is_err() {
                break;
            }
            if !w.has(id) && matches!(store.body(id, sig, &mut buf), Ok(true)) {
                result = w.add(id, sig, &buf);
            }
        }
        match result {
            Ok(()) => {
                if let Err(e) = w.finish() {
                    report
                        .notes
                        .push(format!("the text store could not be written ({e})"));
                }
            }
            Err(e) => {
                w.abandon();
                report
                    .notes
                    .push(format!("the text store could not be written ({e})"));
            }
        }
    }
}
