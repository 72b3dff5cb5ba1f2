//! The incremental skeleton cache.
//!
//! Where: `<cache root>/stores/<key>/cache.bin`, one per task store, where the cache root is the
//! `cacheDir` option, else `ROO_STATE_CACHE_DIR`, else `<platform cache dir>/roo-state-core`, and
//! `<key>` is a hash of the store's canonical `tasks/` path. Never inside an extension's folder.
//!
//! The file (one atomic rename per build, so a reader sees one whole generation):
//! - line 1: a JSON header (magic, format version, engine version, tasks folder, build time,
//!   hierarchy metrics);
//! - line 2: a JSON array of entries, one per task: id, the size and modification time (ns) of
//!   each source file (`ui_messages.json`, `claude_messages.json`, `api_conversation_history.json`,
//!   `history_item.json`, `task_metadata.json`; `null` when absent), where the task's skeleton lies
//!   in the data section, its normalised workspace, the parent link the hierarchy gave it, and,
//!   in a store whose host writes by rename, the folder's modification time ([`FolderMark`]);
//! - then the data section: each task's skeleton header (no `sequence`) as one JSON line, exactly
//!   as `analyze_task` produced it, before the hierarchy.
//!
//! Checksums (XXH3-64): the header holds the entry list's (`entriesHash`), each entry its
//! skeleton line's (`h`), each journal line its own (after a tab). A line whose checksum does not
//! match, that lies past the end of the file or that names another task is damaged: a build reads
//! those tasks again from their folders and reports it ([`StoreBuild::damage`]); an entry list or a
//! header that cannot be read makes the whole file rebuilt. A warm build therefore reads and
//! hashes the data section besides the first two lines (on 5 000 tasks: 24 ms, 2.0× the bare
//! stat floor, against 1.4× without it).
//!
//! A task's entry is valid while every source file has the recorded size and modification time
//! (a file that appears or disappears changes the signature too). Files are stat'ed *before* a
//! task is parsed, so a write during the parse leaves a signature that no longer matches and the
//! task is parsed again next time. A header of another format or engine version invalidates the
//! whole file.
//!
//! A warm build with nothing changed reads the index lines, checks the data section's checksums
//! and stats the source files (four or five per task, in parallel): no skeleton is deserialised
//! and nothing is written. A handle's open stats one folder per task instead where the folder's
//! time may stand for its files (module `stamp`).
//! When something changed, unchanged skeletons are taken from the data section as they are (their
//! bytes are copied, not re-serialised), changed tasks are parsed, the hierarchy runs over the
//! whole store, and the new file replaces the old one by rename.
//!
//! Both index lines are JSON: measured on 5 000 tasks the entries parse in a few milliseconds,
//! well inside the warm budget, and the file stays readable with any tool. A binary encoding
//! would save little, since the stats dominate. The entry list (20 MB at 50 000 tasks) is read
//! in pieces cut at entry starts, in parallel ([`entries_in_pieces`]).
//!
//! Writers take the store's [`DirLock`]; readers need no lock (renames are atomic).

use crate::fsutil::{self, FileSig};
use crate::lock::DirLock;
use crate::{Result, StoreError, ENGINE_VERSION};
use rayon::prelude::*;
use roo_formats::diag::{DiagCode, Diagnostic, Severity};
use roo_formats::read::names;
use roo_state::hierarchy::{normalize_workspace, HierarchyMetrics, HierarchyOptions};
use roo_state::skeleton::{analyze_task, AnalyzeOptions, ParentEvidence};
use roo_state::ConversationSkeleton;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod build;
mod journal;
mod load;
mod stamp;
mod summary;

pub use build::*;
pub use journal::*;
use journal::{apply_journal, journal_path, new_generation, read_hierarchy_note};
pub use load::*;
pub use stamp::*;
pub use summary::*;

/// Bumped whenever the file layout or the meaning of its fields changes.
pub const CACHE_FORMAT_VERSION: u32 = 3;
const MAGIC: &str = "roo-state-core skeleton cache";
/// The cache file name inside a store's cache directory.
pub const CACHE_FILE: &str = "cache.bin";

/// The source files of a task, in signature order.
pub const SOURCE_FILES: [&str; 5] = [
    names::UI_MESSAGES,
    names::CLAUDE_MESSAGES,
    names::API_HISTORY,
    names::HISTORY_ITEM,
    names::TASK_METADATA,
];

/// Size and mtime of each source file.
pub type TaskSig = [FileSig; 5];

/// The signature of a task directory. `claude_messages.json` is only looked at when
/// `ui_messages.json` is absent, since the skeleton reads it only then.
pub fn task_sig(dir: &Path) -> TaskSig {
    sig_with(|name| fsutil::file_sig(&dir.join(name)))
}

/// [`task_sig`] of each task folder of `tasks_dir` (as [`list_tasks`] gave them): every file
/// stat'ed ([`task_stamps`] with [`Folders::Ignore`]).
pub fn task_sigs(tasks_dir: &Path, dirs: &[(String, PathBuf)]) -> Vec<TaskSig> {
    task_stamps(tasks_dir, dirs, &Folders::Ignore)
        .into_iter()
        .map(|s| s.sig)
        .collect()
}

/// A task signature as one number (XXH3 of each file's presence, size and time), for the files
/// that keep something per task beside the cache (a grep's texts, usage records).
pub fn sig_hash(sig: &TaskSig) -> u64 {
    let mut bytes = Vec::with_capacity(sig.len() * 17);
    for f in sig {
        match f {
            Some((len, ns)) => {
                bytes.push(1);
                bytes.extend_from_slice(&len.to_le_bytes());
                bytes.extend_from_slice(&ns.to_le_bytes());
            }
            None => bytes.push(0),
        }
    }
    line_hash(&bytes)
}

fn sig_with(mut sig: impl FnMut(&str) -> FileSig) -> TaskSig {
    let ui = sig(SOURCE_FILES[0]);
    let claude = if ui.is_none() {
        sig(SOURCE_FILES[1])
    } else {
        None
    };
    [
        ui,
        claude,
        sig(SOURCE_FILES[2]),
        sig(SOURCE_FILES[3]),
        sig(SOURCE_FILES[4]),
    ]
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header {
    magic: String,
    format_version: u32,
    engine_version: String,
    tasks_dir: String,
    built_at: i64,
    build_ms: f64,
    tasks: usize,
    #[serde(default)]
    hierarchy: Option<HierarchyMetrics>,
    /// Identifies this generation of the file; journal lines of another generation are ignored.
    #[serde(default)]
    generation: u64,
    /// XXH3-64 of the entry list line (without its newline).
    #[serde(default)]
    entries_hash: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Entry {
    id: String,
    sig: TaskSig,
    /// Offset and length of the skeleton line in the data section; `len == 0`: no skeleton.
    #[serde(default)]
    off: u64,
    #[serde(default)]
    len: u64,
    /// XXH3-64 of the skeleton line (newline included); `None` when there is no line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    h: Option<u64>,
    /// Normalised workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ws: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    root: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    evidence: Option<ParentEvidence>,
    /// Why a task has no skeleton.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    diagnostics: Vec<Diagnostic>,
    /// The task folder's mark, when its time may stand for its files (module `stamp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    folder: Option<FolderMark>,
}

/// A cache file's header and entries, and where its data section starts.
struct Index {
    header: Header,
    entries: Vec<Entry>,
    data_start: u64,
    /// Journal lines of this generation whose checksum failed (the journal ends there).
    journal_damage: Option<String>,
}

/// The checksum of a line of the cache or its journal.
pub(crate) fn line_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

enum ReadOutcome {
    Missing,
    /// Unusable or of another version: the reason.
    Invalid(String),
    Ok(Box<Index>),
}

fn read_index(path: &Path) -> ReadOutcome {
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return ReadOutcome::Missing,
        Err(e) => return ReadOutcome::Invalid(format!("the cache file could not be opened: {e}")),
    };
    let size = file.metadata().map_or(0, |m| m.len());
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || !line.ends_with('\n') {
        return ReadOutcome::Invalid("the cache file has no complete header".into());
    }
    let header_len = line.len() as u64;
    let header: Header = match serde_json::from_str::<serde_json::Value>(&line) {
        Ok(v) => {
            let magic_ok = v.get("magic").and_then(|m| m.as_str()) == Some(MAGIC);
            let fv = v.get("formatVersion").and_then(|m| m.as_u64());
            let ev = v
                .get("engineVersion")
                .and_then(|m| m.as_str())
                .unwrap_or("?");
            if !magic_ok {
                return ReadOutcome::Invalid("the file is not a skeleton cache".into());
            }
            if fv != Some(u64::from(CACHE_FORMAT_VERSION)) || ev != ENGINE_VERSION {
                return ReadOutcome::Invalid(format!(
                    "the cache was written by version {ev} (format {}); this is version {ENGINE_VERSION} (format {CACHE_FORMAT_VERSION}), so it was rebuilt",
                    fv.map_or("?".to_owned(), |f| f.to_string())
                ));
            }
            match serde_json::from_value(v) {
                Ok(h) => h,
                Err(e) => return ReadOutcome::Invalid(format!("the cache header is damaged: {e}")),
            }
        }
        Err(e) => return ReadOutcome::Invalid(format!("the cache header is damaged: {e}")),
    };
    // The entry list, 20 MB at 50 000 tasks: read as bytes into room for the header's count
    // (within the file; room never written costs no memory), not grown by doubling (each step
    // copied into fresh pages) and checked as UTF-8 whole before serde reads it.
    let room = header.tasks.saturating_mul(ENTRY_ROOM);
    let mut line = Vec::with_capacity(room.min(usize::try_from(size).unwrap_or(0)));
    if reader.read_until(b'\n', &mut line).is_err() || line.last() != Some(&b'\n') {
        return ReadOutcome::Invalid("the cache file has no complete entry list".into());
    }
    if line_hash(&line[..line.len() - 1]) != header.entries_hash {
        return ReadOutcome::Invalid(
            "the cache entries are damaged (their checksum does not match); every task was read again"
                .into(),
        );
    }
    let mut entries: Vec<Entry> = match entries_of(&line, header.tasks) {
        Ok(e) => e,
        Err(e) => return ReadOutcome::Invalid(format!("the cache entries are damaged: {e}")),
    };
    let journal_damage = if header.generation != 0 {
        apply_journal(path, header.generation, &mut entries)
    } else {
        None
    };
    ReadOutcome::Ok(Box::new(Index {
        header,
        entries,
        data_start: header_len + line.len() as u64,
        journal_damage,
    }))
}

/// The room [`read_index`] makes for each entry of the list (an entry with an inferred link takes
/// about 450 bytes of JSON).
const ENTRY_ROOM: usize = 512;

/// The entry list in `line`: in pieces parsed in parallel ([`entries_in_pieces`]), else whole.
fn entries_of(line: &[u8], count: usize) -> serde_json::Result<Vec<Entry>> {
    match entries_in_pieces(line) {
        Some(entries) => Ok(entries),
        None => entries_whole(line, count),
    }
}

/// How every entry's JSON starts: an entry's first field is its id. It cannot occur inside a JSON
/// string (a quote there is escaped) nor in an entry's nested objects (none has an `id`).
const ENTRY_START: &[u8] = b"{\"id\":";

/// The entry list in `line`, cut at entry starts into a few pieces per thread, each parsed into
/// its share of one vector sized for every entry (pieces joined afterwards would copy every entry
/// into fresh pages). `None` when a piece does not parse as exactly the entries it holds: the
/// list is then read whole ([`entries_whole`]), which says what is wrong with it.
fn entries_in_pieces(line: &[u8]) -> Option<Vec<Entry>> {
    let body = (line.trim_ascii_end().strip_prefix(b"[")?).strip_suffix(b"]")?;
    let finder = memchr::memmem::Finder::new(ENTRY_START);
    let pieces = rayon::current_num_threads() * 4;
    let mut cuts: Vec<usize> = (0..pieces)
        .filter_map(|k| {
            let from = body.len() * k / pieces;
            Some(from + finder.find(body.get(from..)?)?)
        })
        .collect();
    cuts.dedup();
    if cuts.first() != Some(&0) {
        return None;
    }
    cuts.push(body.len());
    let spans: Vec<&[u8]> = cuts
        .windows(2)
        .filter_map(|w| body.get(w[0]..w[1]))
        .collect();
    let counts: Vec<usize> = (spans.par_iter())
        .map(|p| finder.find_iter(p).count())
        .collect();
    let total = counts.iter().sum();
    let mut entries: Vec<Entry> = Vec::with_capacity(total);
    entries.par_extend((0..total).into_par_iter().map(|_| Entry::default()));
    let mut shares = Vec::with_capacity(counts.len());
    let mut rest = entries.as_mut_slice();
    for &n in &counts {
        let (share, after) = rest.split_at_mut(n);
        shares.push(share);
        rest = after;
    }
    let parsed =
        (spans.into_par_iter().zip(shares)).all(|(piece, share)| parse_piece(piece, share));
    parsed.then_some(entries)
}

/// The entries of `piece` (each followed by a comma, save perhaps the last) into `out`: whether
/// the piece holds exactly that many. The piece is checked as UTF-8 whole, then read as text
/// (serde_json would otherwise check each string and key on its own).
fn parse_piece(piece: &[u8], out: &mut [Entry]) -> bool {
    let Ok(piece) = std::str::from_utf8(piece) else {
        return false;
    };
    let mut at = 0;
    for slot in out {
        let Some(rest) = piece.get(at..) else {
            return false;
        };
        let mut one = serde_json::Deserializer::from_str(rest).into_iter::<Entry>();
        match one.next() {
            Some(Ok(e)) => *slot = e,
            _ => return false,
        }
        at += one.byte_offset();
        if piece.as_bytes().get(at) == Some(&b',') {
            at += 1;
        }
    }
    at == piece.len()
}

/// The entry list in `line`, in a vector sized for `count` entries up front (a doubling vector
/// would copy every entry into fresh pages at each step), no larger than the line could hold.
fn entries_whole(line: &[u8], count: usize) -> serde_json::Result<Vec<Entry>> {
    use serde::de::{DeserializeSeed, SeqAccess, Visitor};
    struct Sized(usize);
    impl<'de> Visitor<'de> for Sized {
        type Value = Vec<Entry>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of cache entries")
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<Vec<Entry>, A::Error> {
            let mut entries = Vec::with_capacity(self.0);
            while let Some(e) = seq.next_element()? {
                entries.push(e);
            }
            Ok(entries)
        }
    }
    impl<'de> DeserializeSeed<'de> for Sized {
        type Value = Vec<Entry>;
        fn deserialize<D: serde::Deserializer<'de>>(
            self,
            d: D,
        ) -> std::result::Result<Vec<Entry>, D::Error> {
            d.deserialize_seq(self)
        }
    }
    // An entry's JSON is at least its id and signature: some 60 bytes.
    let count = count.min(line.len() / 60);
    let mut de = serde_json::Deserializer::from_slice(line);
    let entries = Sized(count).deserialize(&mut de)?;
    de.end()?;
    Ok(entries)
}

fn read_data(path: &Path, start: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Seek;
    let mut f = fs::File::open(path)?;
    f.seek(std::io::SeekFrom::Start(start))?;
    let mut data = Vec::new();
    f.read_to_end(&mut data)?;
    Ok(data)
}

/// The task folders of `tasks_dir`, sorted ([`roo_state::scan::list_task_dirs`]; files among them
/// are left out here, the scan reports them).
pub fn list_tasks(tasks_dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    roo_state::scan::list_task_dirs(tasks_dir)
        .map(|(dirs, _)| dirs)
        .map_err(|e| StoreError::InvalidPath(e.to_string()))
}

/// The skeleton line of an entry in a data section, when the entry's span lies inside it and the
/// line's checksum is the entry's.
fn line_of<'a>(data: &'a [u8], e: &Entry) -> Option<&'a [u8]> {
    line_at(data, e.off, e)
}

/// [`line_of`] with the line at `off` of `data` (a part of the data section).
fn line_at<'a>(data: &'a [u8], off: u64, e: &Entry) -> Option<&'a [u8]> {
    let start = usize::try_from(off).ok()?;
    let end = start.checked_add(usize::try_from(e.len).ok()?)?;
    let line = data.get(start..end)?;
    (e.h == Some(line_hash(line))).then_some(line)
}

/// The skeleton an entry's line holds, when the line checks out and is the entry's task's.
fn skeleton_of(data: &[u8], e: &Entry) -> Option<ConversationSkeleton> {
    skeleton_at(data, e.off, e)
}

/// [`skeleton_of`] with the line at `off` of `data` (a part of the data section), checked as
/// UTF-8 whole and read as text (as [`crate::task_store::lean_header`] reads it).
fn skeleton_at(data: &[u8], off: u64, e: &Entry) -> Option<ConversationSkeleton> {
    let line = std::str::from_utf8(line_at(data, off, e)?).ok()?;
    let s: ConversationSkeleton = serde_json::from_str(line).ok()?;
    (s.task_id == e.id).then_some(s)
}

/// Entries with a skeleton line that does not check out (cut off, altered, re-pointed).
fn damaged_entries<'e>(data: &[u8], entries: impl Iterator<Item = &'e Entry>) -> Vec<&'e str> {
    entries
        .filter(|e| e.len > 0 && line_of(data, e).is_none())
        .map(|e| e.id.as_str())
        .collect()
}

/// The diagnostic of a damaged cache: which tasks were read again, and a damaged journal.
fn damage_diagnostic(cache_file: &Path, ids: &[&str], journal: Option<&str>) -> Option<Diagnostic> {
    if ids.is_empty() && journal.is_none() {
        return None;
    }
    let mut parts = Vec::new();
    if !ids.is_empty() {
        let shown: Vec<&str> = ids.iter().take(5).copied().collect();
        parts.push(format!(
            "{} cached skeleton(s) failed their checksum ({}{})",
            ids.len(),
            shown.join(", "),
            if ids.len() > 5 { ", …" } else { "" }
        ));
    }
    if let Some(j) = journal {
        parts.push(j.to_owned());
    }
    Some(Diagnostic::new(
        cache_file.display().to_string(),
        "",
        DiagCode::Truncated,
        Severity::Warning,
        format!(
            "the skeleton cache was damaged: {}; those tasks were read again from their folders",
            parts.join("; ")
        ),
    ))
}

/// The cache directory of one store.
pub fn store_cache_dir(cache_root: &Path, tasks_dir: &Path) -> PathBuf {
    cache_root
        .join("stores")
        .join(fsutil::path_key(&fsutil::canonical(tasks_dir)))
}

/// The cache file of one store.
pub fn cache_file_for(cache_root: &Path, tasks_dir: &Path) -> PathBuf {
    store_cache_dir(cache_root, tasks_dir).join(CACHE_FILE)
}

/// A tasks folder given to the handle or a build, canonical (an empty path, a file or nothing there: an
/// error saying which).
pub(crate) fn checked_tasks_dir(dir: &Path) -> Result<PathBuf> {
    if dir.as_os_str().is_empty() {
        return Err(StoreError::InvalidArgument(
            "no tasks folder was given (an empty path)".into(),
        ));
    }
    match std::fs::metadata(dir) {
        Ok(md) if md.is_dir() => Ok(fsutil::canonical(dir)),
        Ok(_) => Err(StoreError::InvalidPath(format!(
            "{} is a file, not a tasks folder",
            dir.display()
        ))),
        Err(_) => Err(StoreError::NotFound {
            path: dir.to_path_buf(),
        }),
    }
}

/// Refuse a cache root inside the folders the extension owns ([`extension_folders`]).
pub fn check_cache_root(cache_root: &Path, tasks_dir: &Path) -> Result<()> {
    for folder in extension_folders(tasks_dir) {
        if fsutil::is_within(cache_root, &folder) {
            return Err(StoreError::InvalidCacheDir(format!(
                "the cache directory {} lies inside {}, a folder the extension owns; choose a directory of its own",
                cache_root.display(),
                folder.display()
            )));
        }
    }
    Ok(())
}

/// The folders an extension owns around a tasks folder: the tasks folder itself; the whole storage
/// folder when it is an extension's own (`globalStorage/<extension id>`); otherwise (a custom
/// storage path, which may be any folder, the home folder included) the extension's
/// subfolders beside `tasks/`: `settings`, `cache`, `checkpoints`.
pub fn extension_folders(tasks_dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![tasks_dir.to_path_buf()];
    let Some(base) = tasks_dir.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return out;
    };
    let named = base
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .is_some_and(|n| crate::discover::HOSTS.iter().any(|h| h.id == n));
    if named {
        out.push(base.to_path_buf());
    } else {
        out.extend(["settings", "cache", "checkpoints"].map(|d| base.join(d)));
    }
    out
}

fn header_options() -> AnalyzeOptions {
    AnalyzeOptions {
        include_sequence: false,
        ..AnalyzeOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u64) -> Entry {
        Entry {
            id: format!("task-{n:04}"),
            sig: [Some((n, 7)), None, None, None, None],
            off: n * 10,
            len: 10,
            h: Some(n),
            // Text that looks like an entry's start, inside a string.
            ws: Some(format!("/w/{{\"id\":\"x{n}\"}},{{\"id\":")),
            ..Entry::default()
        }
    }

    #[test]
    fn an_entry_list_read_in_pieces_is_the_list_read_whole() {
        let list: Vec<Entry> = (0..300).map(entry).collect();
        let line = format!("{}\n", serde_json::to_string(&list).expect("entries write"));
        let pieces = entries_in_pieces(line.as_bytes()).expect("read in pieces");
        let whole = entries_whole(line.as_bytes(), 300).expect("read whole");
        let json = |v: &[Entry]| serde_json::to_string(v).expect("entries write");
        assert_eq!(json(&pieces), json(&whole));
        assert_eq!(json(&pieces), json(&list));
        // A damaged list is not read in pieces; read whole, it is an error.
        let cut = line.replace("\"off\":1500,", "\"off\":1500");
        assert!(entries_in_pieces(cut.as_bytes()).is_none());
        assert!(entries_of(cut.as_bytes(), 300).is_err());
        // Nor is a list with a byte that is not UTF-8 in a string.
        let mut bad = line.clone().into_bytes();
        let at = line.find("task-0150").expect("an id");
        bad[at] = 0xff;
        assert!(entries_in_pieces(&bad).is_none());
        assert!(entries_of(&bad, 300).is_err());
        assert_eq!(entries_in_pieces(b"[]\n").map(|v| v.len()), None);
        assert_eq!(entries_of(b"[]\n", 0).map(|v| v.len()).ok(), Some(0));
    }
}
