//! File-level readers: each returns the typed value and what was noticed while reading.
//!
//! The streaming variants (`for_each_*`) hand over one element at a time and keep nothing, so a
//! caller that only needs a summary of a file of hundreds of megabytes holds its text once and a
//! single element besides.

use crate::api::{ApiHistory, ApiMessage, HistoryFormat};
use crate::api_head::{read_heads_strict, ApiHead};
use crate::decode::decode_json_in_place;
use crate::diag::{DiagCode, Diagnostic, Diags, Read, Severity};
use crate::history::{HistoryIndex, HistoryItem, TaskMetadata};
use crate::json::{read_array, read_object, read_strict_in, ArrayStats, Shape};
use crate::json_cursor::read_array_with;
use crate::ui::{read_record, unusual_kind, ClineMessage, StrictRecord, UnreadText, WantedTexts};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::Path;

/// File names inside a task directory.
pub mod names {
    pub const UI_MESSAGES: &str = "ui_messages.json";
    /// The UI file's name before 2024-10 (claude-dev / early Cline).
    pub const CLAUDE_MESSAGES: &str = "claude_messages.json";
    pub const API_HISTORY: &str = "api_conversation_history.json";
    pub const HISTORY_ITEM: &str = "history_item.json";
    pub const TASK_METADATA: &str = "task_metadata.json";
    pub const HISTORY_INDEX: &str = "_index.json";
}

/// Read and decode a file into JSON text and hand it to `use_text`; `None` when the file is
/// missing or unreadable (reported).
///
/// The bytes are read into a buffer this thread keeps between files (up to
/// [`MAX_KEPT_BUFFER`] bytes), so a scan of thousands of files neither allocates nor faults in
/// fresh pages for each one: its memory is that of the largest files in flight.
fn with_text<R>(
    path: &Path,
    diags: &mut Diags,
    use_text: impl FnOnce(&str, &mut Diags) -> R,
) -> Option<R> {
    crate::kept::with_kept(&READ_BUFFER, MAX_KEPT_BUFFER, |buffer| {
        match read_into(path, buffer) {
            Ok(true) => {
                let mut local = Diags::for_file(diags.file());
                let text = decode_json_in_place(buffer, &mut local);
                diags.extend(local.into_vec());
                Some(use_text(&text, diags))
            }
            Ok(false) => None,
            Err(d) => {
                diags.extend([d]);
                None
            }
        }
    })
}

/// The largest read buffer a thread keeps for its next file; a larger file's buffer is freed
/// after use.
const MAX_KEPT_BUFFER: usize = 16 << 20;

thread_local! {
    static READ_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The default of [`max_file_bytes`]: 1 GiB, far above any task file seen (the largest real
/// ones are tens of megabytes).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1 << 30;

/// The environment variable that sets [`max_file_bytes`] (a number of bytes).
pub const MAX_FILE_BYTES_ENV: &str = "ROO_STATE_MAX_FILE_BYTES";

/// The largest task file a reader reads: `ROO_STATE_MAX_FILE_BYTES`, else
/// [`DEFAULT_MAX_FILE_BYTES`] (read once per process). A larger file is not read; its task gets a
/// diagnostic naming the size and the cap.
pub fn max_file_bytes() -> u64 {
    static CAP: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        std::env::var(MAX_FILE_BYTES_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(DEFAULT_MAX_FILE_BYTES)
    })
}

/// Open `path` for reading without ever blocking on it: on Unix with `O_NONBLOCK`, so a FIFO
/// or a device put where a task file should be is opened at once (and then refused by
/// [`read_task_file_into`], which reads regular files only).
pub fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    o.open(path)
}

/// Open a task file as [`open_nonblocking`] does, under the rule for links
/// ([`crate::links`]): a file that is a link, or whose task folder is one, is opened only when it
/// resolves inside its store. On Unix the file is opened with `O_NOFOLLOW` first, so a file that
/// is no link costs nothing more than its task folder's `lstat`.
fn open_task_file(path: &Path) -> Result<std::io::Result<std::fs::File>, Diagnostic> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let first = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
            .open(path);
        match first {
            // A link (or a loop of them): followed only when it stays in the store.
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                if let Some(out) = crate::links::task_file_out(path, Some(true)) {
                    return Err(out.diagnostic());
                }
                Ok(open_nonblocking(path))
            }
            other => {
                if let Some(out) = crate::links::task_file_out(path, Some(false)) {
                    return Err(out.diagnostic());
                }
                Ok(other)
            }
        }
    }
    #[cfg(not(unix))]
    {
        if let Some(out) = crate::links::task_file_out(path, None) {
            return Err(out.diagnostic());
        }
        Ok(open_nonblocking(path))
    }
}

/// Read a task file into `buffer` (replacing what it held), within the limits every reader keeps:
/// a regular file only (a link is followed while it stays in its store, see [`crate::links`]; a
/// FIFO, device, socket or directory is refused without reading a byte), of at most
/// [`max_file_bytes`]. `Ok(false)` when the file is missing; anything else that stops the read is
/// a diagnostic for the task.
pub fn read_task_file_into(path: &Path, buffer: &mut Vec<u8>) -> Result<bool, Diagnostic> {
    use std::io::Read as _;
    buffer.clear();
    let Some((file, len)) = open_checked(path)? else {
        return Ok(false);
    };
    let cap = max_file_bytes();
    let read = buffer
        .try_reserve_exact(len as usize)
        .map_err(std::io::Error::other)
        .and_then(|()| file.take(cap + 1).read_to_end(buffer));
    match read {
        // The file grew past the cap while it was read.
        Ok(_) if buffer.len() as u64 > cap => {
            let n = buffer.len() as u64;
            buffer.clear();
            Err(too_big(path, n))
        }
        Ok(_) => Ok(true),
        Err(err) => Err(unreadable(path, &err)),
    }
}

/// The first `n` bytes (at most) of a task file, under the limits of [`read_task_file_into`]
/// (the rule for links, a regular file only, the size cap): what a reader that must not read a
/// whole file to judge it looks at. `Ok(None)` when the file is missing.
pub fn peek_task_file(path: &Path, n: usize) -> Result<Option<Vec<u8>>, Diagnostic> {
    use std::io::Read as _;
    let Some((file, _)) = open_checked(path)? else {
        return Ok(None);
    };
    let mut head = Vec::with_capacity(n.min(1 << 16));
    file.take(n as u64)
        .read_to_end(&mut head)
        .map_err(|e| unreadable(path, &e))?;
    Ok(Some(head))
}

/// A task file opened for reading with its length, once every check before the first byte has
/// passed; `None` when it is missing.
fn open_checked(path: &Path) -> Result<Option<(std::fs::File, u64)>, Diagnostic> {
    let file = match open_task_file(path)? {
        Ok(f) => f,
        // A link to nowhere is there, and says so; a missing file is not a problem.
        Err(err)
            if err.kind() == ErrorKind::NotFound && std::fs::symlink_metadata(path).is_ok() =>
        {
            return Err(unreadable(path, &err))
        }
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(unreadable(path, &err)),
    };
    let md = file.metadata().map_err(|e| unreadable(path, &e))?;
    if md.is_dir() {
        return Err(skipped(
            path,
            "a directory stands where this file should be".into(),
        ));
    }
    if !md.is_file() {
        return Err(skipped(
            path,
            "it is not a regular file (a FIFO, device or socket) and was not read".into(),
        ));
    }
    if md.len() > max_file_bytes() {
        return Err(too_big(path, md.len()));
    }
    Ok(Some((file, md.len())))
}

fn too_big(path: &Path, size: u64) -> Diagnostic {
    skipped(
        path,
        format!(
            "the file is {size} bytes, more than the {} bytes a task file may hold \
             ({MAX_FILE_BYTES_ENV}); it was not read",
            max_file_bytes()
        ),
    )
}

/// [`read_task_file_into`] into a new buffer.
pub fn read_task_file(path: &Path) -> Result<Option<Vec<u8>>, Diagnostic> {
    let mut buffer = Vec::new();
    Ok(read_task_file_into(path, &mut buffer)?.then_some(buffer))
}

fn read_into(path: &Path, buffer: &mut Vec<u8>) -> Result<bool, Diagnostic> {
    read_task_file_into(path, buffer)
}

fn skipped(path: &Path, message: String) -> Diagnostic {
    Diagnostic::new(
        path.display().to_string(),
        "",
        DiagCode::Unreadable,
        Severity::Error,
        message,
    )
}

fn unreadable(path: &Path, err: &std::io::Error) -> Diagnostic {
    skipped(path, format!("the file could not be read: {err}"))
}

/// Summary of a streamed array file.
#[derive(Debug, Clone)]
pub struct StreamSummary {
    /// `None` when the file does not exist.
    pub stats: Option<ArrayStats>,
    /// Elements that became typed values.
    pub kept: usize,
    pub diagnostics: Vec<Diagnostic>,
}

impl StreamSummary {
    pub fn exists(&self) -> bool {
        self.stats.is_some()
    }
}

fn element_object(
    index: usize,
    value: Value,
    diags: &mut Diags,
    nulls: &mut usize,
) -> Option<serde_json::Map<String, Value>> {
    match value {
        Value::Object(m) => Some(m),
        Value::Null => {
            *nulls += 1;
            None
        }
        other => {
            diags.push(
                format!("[{index}]"),
                DiagCode::NotAnObject,
                Severity::Warning,
                format!(
                    "expected an object, found {}; the element was skipped",
                    crate::json::kind_of(&other)
                ),
            );
            None
        }
    }
}

fn report_nulls(nulls: usize, diags: &mut Diags) {
    if nulls > 0 {
        diags.push(
            "",
            DiagCode::NullEntry,
            Severity::Info,
            format!("{nulls} null element(s) were skipped"),
        );
    }
}

/// Stream the messages of a UI file (`ui_messages.json` or `claude_messages.json`).
pub fn for_each_ui_message(path: &Path, mut f: impl FnMut(usize, ClineMessage)) -> StreamSummary {
    stream_ui(path, None, |i, m, _| f(i, m))
}

/// As [`for_each_ui_message`], decoding only the texts of the records whose kind `wanted` accepts
/// (asked as each record is read, so it may follow what the records before it held). The other
/// texts are still checked as JSON strings, so the messages, counts and diagnostics are those of
/// the full read, but such a record is handed over with `text: None` and the text as it stands in
/// the file beside it ([`UnreadText`]). A record the one-pass reader leaves to the tolerant one
/// keeps its text.
pub fn for_each_ui_message_with_texts(
    path: &Path,
    wanted: WantedTexts<'_>,
    f: impl FnMut(usize, ClineMessage, Option<UnreadText<'_>>),
) -> StreamSummary {
    stream_ui(path, Some(wanted), f)
}

fn stream_ui(
    path: &Path,
    wanted: Option<WantedTexts<'_>>,
    mut f: impl FnMut(usize, ClineMessage, Option<UnreadText<'_>>),
) -> StreamSummary {
    let mut diags = Diags::for_file(path.display().to_string());
    let mut kept = 0usize;
    let mut nulls = 0usize;
    let mut unusual: BTreeMap<(&'static str, String, bool), usize> = BTreeMap::new();
    let mut element_diags = Diags::for_file(diags.file());
    let stats = with_text(path, &mut diags, |text, diags| {
        // One pass when the file is a well-formed array of well-formed records (the usual case).
        let fast = read_strict_in(text, &["messages"], |array| {
            read_array_with(
                array,
                |c| read_record(c, wanted),
                |record: StrictRecord<'_>| {
                    let msg = record.message;
                    if let Some((field, value, retired)) = unusual_kind(&msg) {
                        *unusual
                            .entry((field, value.to_owned(), retired))
                            .or_default() += 1;
                    }
                    f(kept, msg, record.unread_text);
                    kept += 1;
                },
            )
        });
        let (stats, skip) = match fast {
            Ok((elements, shape)) => (
                Some(ArrayStats {
                    shape,
                    elements,
                    incomplete: false,
                }),
                elements,
            ),
            Err(done) => (None, done),
        };
        stats.unwrap_or_else(|| {
            read_array(text, &["messages"], diags, |index, raw| {
                if index < skip {
                    // Handed over by the one-pass read already.
                    return;
                }
                let msg = match ClineMessage::from_json(
                    raw.get(),
                    &format!("[{index}]"),
                    &mut element_diags,
                ) {
                    Some(m) => m,
                    None => {
                        // null or not an object: counted and reported like any other element.
                        let value = crate::json::value_from_text(
                            raw.get(),
                            &format!("[{index}]"),
                            &mut element_diags,
                        )
                        .unwrap_or(Value::Null);
                        let _ = element_object(index, value, &mut element_diags, &mut nulls);
                        return;
                    }
                };
                if let Some((field, value, retired)) = unusual_kind(&msg) {
                    *unusual
                        .entry((field, value.to_owned(), retired))
                        .or_default() += 1;
                }
                f(kept, msg, None);
                kept += 1;
            })
        })
    });
    let Some(stats) = stats else {
        return StreamSummary {
            stats: None,
            kept: 0,
            diagnostics: diags.into_vec(),
        };
    };
    diags.extend(element_diags.into_vec());
    report_nulls(nulls, &mut diags);
    for ((field, value, retired), count) in unusual {
        diags.push(
            "",
            DiagCode::UnknownValue,
            Severity::Info,
            format!(
                "{count} message(s) with {} {field} value \"{value}\" were kept as is",
                if retired {
                    "the retired"
                } else {
                    "the unknown"
                }
            ),
        );
    }
    StreamSummary {
        stats: Some(stats),
        kept,
        diagnostics: diags.into_vec(),
    }
}

/// Read a whole UI file. A missing file gives an empty list and a `missing` diagnostic.
pub fn read_ui_messages(path: &Path) -> Read<Vec<ClineMessage>> {
    let mut out = Vec::new();
    let summary = for_each_ui_message(path, |_, m| out.push(m));
    let mut diagnostics = summary.diagnostics;
    if summary.stats.is_none() && diagnostics.is_empty() {
        diagnostics.push(missing(path));
    }
    Read::new(out, diagnostics)
}

fn missing(path: &Path) -> Diagnostic {
    Diagnostic::new(
        path.display().to_string(),
        "",
        DiagCode::Missing,
        Severity::Info,
        "the file does not exist",
    )
}

/// Stream the messages of `api_conversation_history.json`; returns the file's format too.
pub fn for_each_api_message(
    path: &Path,
    mut f: impl FnMut(usize, ApiMessage),
) -> (StreamSummary, Option<(HistoryFormat, Option<i64>)>) {
    stream_api(path, false, |element, kept, diags, nulls| {
        let ApiElement::Raw(index, raw) = element else {
            return None;
        };
        let value =
            crate::json::value_from_text(raw, &format!("[{index}]"), diags).unwrap_or(Value::Null);
        let map = element_object(index, value, diags, nulls)?;
        f(
            kept,
            ApiMessage::from_object(map, &format!("[{index}]"), diags),
        );
        Some(())
    })
}

/// As [`for_each_api_message`], handing over only what a skeleton header uses of each message
/// ([`ApiHead`]): read by the strict fast path when the message is well formed, else built from
/// the tolerant reading, so the heads, counts and diagnostics are those of the full reader.
pub fn for_each_api_head(
    path: &Path,
    mut f: impl FnMut(usize, ApiHead<'_>),
) -> (StreamSummary, Option<(HistoryFormat, Option<i64>)>) {
    stream_api(path, true, |element, kept, diags, nulls| {
        let (index, raw) = match element {
            ApiElement::Head(head) => {
                f(kept, head);
                return Some(());
            }
            ApiElement::Raw(index, raw) => (index, raw),
        };
        if let Some(head) = ApiHead::from_json(raw) {
            f(kept, head);
            return Some(());
        }
        let value =
            crate::json::value_from_text(raw, &format!("[{index}]"), diags).unwrap_or(Value::Null);
        let map = element_object(index, value, diags, nulls)?;
        let msg = ApiMessage::from_object(map, &format!("[{index}]"), diags);
        f(kept, ApiHead::from_message(msg));
        Some(())
    })
}

/// An element of the API history: read as a head by the one-pass read, or its raw text.
enum ApiElement<'t> {
    Head(ApiHead<'t>),
    Raw(usize, &'t str),
}

/// The shared streaming of the API history: `element(element, kept, diags, nulls)` returns `Some`
/// when the element was kept. With `heads`, a well-formed array of well-formed messages is read in
/// one pass, straight into heads.
fn stream_api(
    path: &Path,
    heads: bool,
    mut element: impl FnMut(ApiElement<'_>, usize, &mut Diags, &mut usize) -> Option<()>,
) -> (StreamSummary, Option<(HistoryFormat, Option<i64>)>) {
    let mut diags = Diags::for_file(path.display().to_string());
    let mut kept = 0usize;
    let mut nulls = 0usize;
    let mut element_diags = Diags::for_file(diags.file());
    let stats = with_text(path, &mut diags, |text, diags| {
        let fast = if heads {
            read_strict_in(text, &["messages"], |array| {
                read_heads_strict(array, |head| {
                    if element(ApiElement::Head(head), kept, &mut element_diags, &mut nulls)
                        .is_some()
                    {
                        kept += 1;
                    }
                })
            })
        } else {
            Err(0)
        };
        match fast {
            Ok((elements, shape)) => ArrayStats {
                shape,
                elements,
                incomplete: false,
            },
            Err(skip) => read_array(text, &["messages"], diags, |index, raw| {
                // The first `skip` elements were handed over by the one-pass read already.
                if index >= skip
                    && element(
                        ApiElement::Raw(index, raw.get()),
                        kept,
                        &mut element_diags,
                        &mut nulls,
                    )
                    .is_some()
                {
                    kept += 1;
                }
            }),
        }
    });
    let Some(stats) = stats else {
        return (
            StreamSummary {
                stats: None,
                kept: 0,
                diagnostics: diags.into_vec(),
            },
            None,
        );
    };
    diags.extend(element_diags.into_vec());
    report_nulls(nulls, &mut diags);
    let format = match &stats.shape {
        Shape::Wrapper { version, .. } => (HistoryFormat::Versioned, *version),
        _ => (HistoryFormat::AnthropicArray, None),
    };
    (
        StreamSummary {
            stats: Some(stats),
            kept,
            diagnostics: diags.into_vec(),
        },
        Some(format),
    )
}

/// Read a whole API history file; `None` when it does not exist.
pub fn read_api_history(path: &Path) -> Read<Option<ApiHistory>> {
    let mut messages = Vec::new();
    let (summary, format) = for_each_api_message(path, |_, m| messages.push(m));
    let mut diagnostics = summary.diagnostics;
    let value = format.map(|(format, version)| ApiHistory {
        format,
        version,
        messages,
    });
    if value.is_none() && diagnostics.is_empty() {
        diagnostics.push(missing(path));
    }
    Read::new(value, diagnostics)
}

fn read_object_file<T>(
    path: &Path,
    build: impl FnOnce(serde_json::Map<String, Value>, &mut Diags) -> T,
) -> Read<Option<T>> {
    let mut diags = Diags::for_file(path.display().to_string());
    let value = with_text(path, &mut diags, |text, diags| {
        let map = read_object(text, diags)?;
        Some(build(map, diags))
    })
    .flatten();
    Read::new(value, diags.into_vec())
}

/// Read `history_item.json`; `None` when missing or unusable (reported).
pub fn read_history_item(path: &Path) -> Read<Option<HistoryItem>> {
    read_object_file(path, |map, diags| HistoryItem::from_object(map, "", diags))
}

/// Read `task_metadata.json`.
pub fn read_task_metadata(path: &Path) -> Read<Option<TaskMetadata>> {
    read_object_file(path, |map, diags| TaskMetadata::from_object(map, "", diags))
}

/// Read `tasks/_index.json`. Entries without an `id` are skipped, as the extension does.
pub fn read_history_index(path: &Path) -> Read<Option<HistoryIndex>> {
    read_object_file(path, |mut map, diags| {
        let version = map.get("version").and_then(Value::as_i64);
        let updated_at = map.get("updatedAt").and_then(Value::as_i64);
        if version != Some(1) {
            diags.push(
                "version",
                DiagCode::UnexpectedShape,
                Severity::Warning,
                format!(
                    "expected version 1, found {}; the extension ignores such an index",
                    version.map_or("none".to_owned(), |v| v.to_string())
                ),
            );
        }
        let mut entries = Vec::new();
        match map.shift_remove("entries") {
            Some(Value::Array(items)) => {
                for (i, item) in items.into_iter().enumerate() {
                    match item {
                        Value::Object(o) => {
                            let entry =
                                HistoryItem::from_object(o, &format!("entries[{i}]"), diags);
                            if !entry.id.is_empty() {
                                entries.push(entry);
                            }
                        }
                        _ => diags.push(
                            format!("entries[{i}]"),
                            DiagCode::NotAnObject,
                            Severity::Warning,
                            "the entry is not an object and was skipped",
                        ),
                    }
                }
            }
            _ => diags.push(
                "entries",
                DiagCode::UnexpectedShape,
                Severity::Warning,
                "`entries` is missing or not an array",
            ),
        }
        HistoryIndex {
            version,
            updated_at,
            entries,
        }
    })
}
