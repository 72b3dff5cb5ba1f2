//! The text store of a grep: the searchable texts of every task of one store, decoded, kept in one
//! file of our cache (`<store cache dir>/dialogue.texts`), so that a grep reads plain text instead
//! of walking each task's JSON again.
//!
//! The file is the tasks' bodies one after the other, then a footer naming each: task id, the
//! signature of its files when its texts were read ([`sig_hash`] of the task store's signature),
//! where its body is, and the XXH3 of the body. A body is its texts in order, each `kind (u8) ·
//! time (i64 ms, `i64::MIN` for none) · message index (u32) · length (u32) · UTF-8 bytes`; a
//! dialogue file the task's texts could not be read from is kept in its body as a record of kind
//! [`SKIPPED`] whose bytes say why, so that every grep served from the store counts it too.
//!
//! A task whose signature differs, whose body does not check out, or that the footer does not
//! name is read from its folder; nothing is trusted that does not check out. The file is only
//! ever replaced whole: written beside it and renamed over it, so a reader sees the old file or
//! the new one. A footer that does not check out makes the whole file unknown (every task is read
//! from its folder, and a new file is written). A few tasks out of date do not make a new file
//! (see `with_texts`): they are read from their folders until more than one in fifty are.

use super::dialogue::Kind;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

const HEAD: &[u8; 8] = b"ROOTXT02";

/// The kind code of a body record saying a dialogue file was skipped (its bytes: the file and
/// why).
pub const SKIPPED: u8 = 255;
const TAIL: &[u8; 8] = b"ROOTXTEN";
/// `count (u32) · footer length (u64) · footer XXH3 (u64) · TAIL`.
const TRAILER: usize = 4 + 8 + 8 + 8;

/// The file name of a store's text store, in the store's cache directory.
pub const FILE_NAME: &str = "dialogue.texts";

/// The file of the store whose tasks are in `tasks_dir`, under our cache root.
pub fn store_file(cache_root: &Path, tasks_dir: &Path) -> PathBuf {
    roo_store::cache::store_cache_dir(cache_root, &roo_store::fsutil::canonical(tasks_dir))
        .join(FILE_NAME)
}

/// A task signature as the text store keeps it.
pub use roo_store::cache::sig_hash;

fn kind_code(k: Kind) -> u8 {
    match k {
        Kind::User => 0,
        Kind::Assistant => 1,
        Kind::ToolInput => 2,
        Kind::ToolResult => 3,
    }
}

/// Add one text to a body.
pub fn push_text(body: &mut Vec<u8>, kind: Kind, ts: Option<i64>, index: usize, text: &str) {
    body.push(kind_code(kind));
    body.extend_from_slice(&ts.unwrap_or(i64::MIN).to_le_bytes());
    body.extend_from_slice(&(index as u32).to_le_bytes());
    body.extend_from_slice(&(text.len() as u32).to_le_bytes());
    body.extend_from_slice(text.as_bytes());
}

/// Add to a body that one of the task's dialogue files was skipped: `file: why`.
pub fn push_skipped(body: &mut Vec<u8>, file: &str, why: &str) {
    let note = format!("{file}\n{why}");
    body.push(SKIPPED);
    body.extend_from_slice(&i64::MIN.to_le_bytes());
    body.extend_from_slice(&0u32.to_le_bytes());
    body.extend_from_slice(&(note.len() as u32).to_le_bytes());
    body.extend_from_slice(note.as_bytes());
}

/// One text of a body: its kind, time, message index and bytes (UTF-8 when the body checked
/// out: see [`text_str`]).
pub type Text<'a> = (Kind, Option<i64>, usize, &'a [u8]);

/// The texts of a body, in order, and the files it says were skipped (file and why); `None` at
/// the first record that does not read (the caller then reads the task from its folder).
#[expect(clippy::type_complexity)]
pub fn texts(body: &[u8]) -> Option<(Vec<Text<'_>>, Vec<(String, String)>)> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut at = 0usize;
    while at < body.len() {
        let head = body.get(at..at + 17)?;
        let ts = i64::from_le_bytes(head[1..9].try_into().ok()?);
        let index = u32::from_le_bytes(head[9..13].try_into().ok()?) as usize;
        let len = u32::from_le_bytes(head[13..17].try_into().ok()?) as usize;
        let text = body.get(at + 17..at + 17 + len)?;
        at += 17 + len;
        let kind = match head[0] {
            0 => Kind::User,
            1 => Kind::Assistant,
            2 => Kind::ToolInput,
            3 => Kind::ToolResult,
            SKIPPED => {
                let note = text_str(text)?;
                let (file, why) = note.split_once('\n')?;
                skipped.push((file.to_owned(), why.to_owned()));
                continue;
            }
            _ => return None,
        };
        out.push((kind, (ts != i64::MIN).then_some(ts), index, text));
    }
    Some((out, skipped))
}

/// A text's bytes as text (checked: a body is only ever read after its XXH3, but its bytes are
/// still data from disk). Only the texts a pattern runs on are checked.
pub fn text_str(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

/// Where a task's body is.
#[derive(Debug, Clone, Copy)]
struct Entry {
    sig: u64,
    offset: u64,
    len: u64,
    check: u64,
}

/// A text store opened for reading.
#[derive(Debug, Default)]
pub struct TextStore {
    file: Option<File>,
    entries: HashMap<String, Entry>,
    /// Why the file could not be used, when it exists and could not.
    pub problem: Option<String>,
}

impl TextStore {
    /// Open the store at `path`; a missing file is an empty store, a damaged one an empty store
    /// with its problem said.
    pub fn open(path: &Path) -> TextStore {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(_) => return TextStore::default(),
        };
        match read_footer(&file) {
            Ok(entries) => TextStore {
                file: Some(file),
                entries,
                problem: None,
            },
            Err(why) => TextStore {
                problem: Some(why),
                ..TextStore::default()
            },
        }
    }

    /// The body of `task_id` into `buf` when the store holds it for signature `sig` and it
    /// checks out; `Err` with what was wrong when it holds it but the body does not check out.
    pub fn body(&self, task_id: &str, sig: u64, buf: &mut Vec<u8>) -> Result<bool, String> {
        let (Some(file), Some(e)) = (&self.file, self.entries.get(task_id)) else {
            return Ok(false);
        };
        if e.sig != sig {
            return Ok(false);
        }
        read_at(file, e.offset, e.len, buf).map_err(|err| format!("{task_id}: {err}"))?;
        if xxhash_rust::xxh3::xxh3_64(buf) != e.check {
            return Err(format!("{task_id}: its texts do not check out"));
        }
        Ok(true)
    }

    /// How many tasks the store holds that `current` (every task of the store now, with its
    /// signature) does not have at the same signature.
    pub fn outdated(&self, current: &HashMap<String, u64>) -> usize {
        self.entries
            .iter()
            .filter(|(id, e)| current.get(*id) != Some(&e.sig))
            .count()
    }

    /// Whether a store file was read (a missing or damaged one was not).
    pub fn is_open(&self) -> bool {
        self.file.is_some()
    }

    /// Whether the store holds `task_id` at signature `sig` (its body unchecked).
    pub fn holds(&self, task_id: &str, sig: u64) -> bool {
        self.entries.get(task_id).is_some_and(|e| e.sig == sig)
    }
}

fn read_at(file: &File, offset: u64, len: u64, buf: &mut Vec<u8>) -> io::Result<()> {
    let len = usize::try_from(len).map_err(io::Error::other)?;
    // The buffer is kept between reads: only what it grows by is zeroed.
    if buf.len() < len {
        buf.try_reserve(len - buf.len()).map_err(io::Error::other)?;
        buf.resize(len, 0);
    }
    buf.truncate(len);
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt as _;
        file.read_exact_at(buf, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read as _, Seek as _};
        let mut f = file.try_clone()?;
        f.seek(io::SeekFrom::Start(offset))?;
        f.read_exact(buf)
    }
}

fn read_footer(file: &File) -> Result<HashMap<String, Entry>, String> {
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let short = || "the file is cut short".to_owned();
    if size < (HEAD.len() + TRAILER) as u64 {
        return Err(short());
    }
    let mut head = Vec::new();
    read_at(file, 0, HEAD.len() as u64, &mut head).map_err(|e| e.to_string())?;
    if head != HEAD {
        return Err("not a text store of this version".to_owned());
    }
    let mut trailer = Vec::new();
    read_at(file, size - TRAILER as u64, TRAILER as u64, &mut trailer)
        .map_err(|e| e.to_string())?;
    let u64_at = |b: &[u8], at: usize| -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(a)
    };
    if &trailer[20..28] != TAIL {
        return Err(short());
    }
    let count = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]) as usize;
    let (footer_len, footer_check) = (u64_at(&trailer, 4), u64_at(&trailer, 12));
    let footer_at = (size - TRAILER as u64)
        .checked_sub(footer_len)
        .filter(|&at| at >= HEAD.len() as u64)
        .ok_or_else(short)?;
    let mut footer = Vec::new();
    read_at(file, footer_at, footer_len, &mut footer).map_err(|e| e.to_string())?;
    if xxhash_rust::xxh3::xxh3_64(&footer) != footer_check {
        return Err("its table of tasks does not check out".to_owned());
    }
    let mut entries = HashMap::with_capacity(count);
    let mut at = 0usize;
    for _ in 0..count {
        let id_len = footer
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
            .ok_or_else(short)?;
        let id = footer
            .get(at + 2..at + 2 + id_len)
            .and_then(|b| std::str::from_utf8(b).ok())
            .ok_or_else(short)?
            .to_owned();
        at += 2 + id_len;
        let nums = footer.get(at..at + 32).ok_or_else(short)?;
        let e = Entry {
            sig: u64_at(nums, 0),
            offset: u64_at(nums, 8),
            len: u64_at(nums, 16),
            check: u64_at(nums, 24),
        };
        if e.offset
            .checked_add(e.len)
            .is_none_or(|end| end > footer_at)
        {
            return Err(short());
        }
        entries.insert(id, e);
        at += 32;
    }
    Ok(entries)
}

/// A new text store being written beside the file it will replace.
pub struct Writer {
    path: PathBuf,
    tmp: PathBuf,
    out: BufWriter<File>,
    at: u64,
    footer: Vec<u8>,
    count: u32,
    ids: std::collections::HashSet<String>,
}

impl Writer {
    pub fn create(path: &Path) -> io::Result<Writer> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension(format!("texts.{}.tmp", std::process::id()));
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        out.write_all(HEAD)?;
        Ok(Writer {
            path: path.to_path_buf(),
            tmp,
            out,
            at: HEAD.len() as u64,
            footer: Vec::new(),
            count: 0,
            ids: Default::default(),
        })
    }

    /// Whether the new store has `task_id` already.
    pub fn has(&self, task_id: &str) -> bool {
        self.ids.contains(task_id)
    }

    /// Add a task's body (the first one given for an id is kept).
    pub fn add(&mut self, task_id: &str, sig: u64, body: &[u8]) -> io::Result<()> {
        if task_id.len() > usize::from(u16::MAX) || !self.ids.insert(task_id.to_owned()) {
            return Ok(());
        }
        self.out.write_all(body)?;
        self.footer
            .extend_from_slice(&(task_id.len() as u16).to_le_bytes());
        self.footer.extend_from_slice(task_id.as_bytes());
        for n in [
            sig,
            self.at,
            body.len() as u64,
            xxhash_rust::xxh3::xxh3_64(body),
        ] {
            self.footer.extend_from_slice(&n.to_le_bytes());
        }
        self.at += body.len() as u64;
        self.count += 1;
        Ok(())
    }

    /// Write the footer and put the file in place of the old one.
    pub fn finish(mut self) -> io::Result<()> {
        let result = (|| {
            self.out.write_all(&self.footer)?;
            self.out.write_all(&self.count.to_le_bytes())?;
            self.out
                .write_all(&(self.footer.len() as u64).to_le_bytes())?;
            self.out
                .write_all(&xxhash_rust::xxh3::xxh3_64(&self.footer).to_le_bytes())?;
            self.out.write_all(TAIL)?;
            self.out.flush()?;
            std::fs::rename(&self.tmp, &self.path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        result
    }

    /// Drop what was written.
    pub fn abandon(self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}
