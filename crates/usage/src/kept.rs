//! The usage records kept between runs, beside the skeleton cache: one file per store,
//! `<store cache dir>/usage.records`, so that a new process (a CLI run) reads again only the
//! tasks whose files changed since the file was written.
//!
//! The file: a head (`ROOUSE01`, the format version, the engine version), the tasks' bodies one
//! after the other, then a footer naming each in task id order: id, the signature of its files
//! when its records were read (`roo_store::cache::sig_hash` of the task store's signature), where
//! its body is, and the XXH3 of the body; last, the trailer: the count, the footer's length and
//! XXH3, and `ROOUSEND`. A body is the task's [`TaskUsage`] in the encoding below (little endian).
//!
//! Nothing is trusted that does not check out: a file of another format or engine version, or
//! whose footer fails its checksum, holds nothing (every task is read from its folder and the
//! file is written again); a body that fails its checksum or does not decode is read from its
//! folder and reported. The file is only ever replaced whole, written beside it under a name of
//! its own and renamed over it, so a reader sees one whole file and two writers never mix.

use crate::activity::{Event, EventKind, HistoryTotals};
use crate::records::{FileOp, FileOpKind, Outcome, RecordKind, Refused, TaskUsage, UsageRecord};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const HEAD: &[u8; 8] = b"ROOUSE01";
const TAIL: &[u8; 8] = b"ROOUSEND";
/// Bumped whenever the encoding changes, or a task's records would be read otherwise
/// (`records`, `activity`): records kept by an older reading are then read again. The engine
/// version (`roo_store::ENGINE_VERSION`, which changes with the readers under them) is checked too.
const FORMAT: u32 = 2;
/// `count (u32) · footer length (u64) · footer XXH3 (u64) · TAIL`.
const TRAILER: usize = 4 + 8 + 8 + 8;

/// The file name in a store's cache directory.
pub const FILE_NAME: &str = "usage.records";

/// The file of the store whose tasks are in `tasks_dir`, under the cache root `cache_root`.
pub fn store_file(cache_root: &Path, tasks_dir: &Path) -> PathBuf {
    roo_store::cache::store_cache_dir(cache_root, tasks_dir).join(FILE_NAME)
}

fn check(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// Where a task's body is.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The id's bytes in the file.
    id: (usize, usize),
    sig: u64,
    body: (usize, usize),
    check: u64,
}

/// A file of kept records, read whole.
#[derive(Debug, Default)]
pub struct KeptFile {
    bytes: Vec<u8>,
    /// In task id order.
    slots: Vec<Slot>,
    /// Why a file that exists could not be used.
    pub problem: Option<String>,
}

/// A reading cursor over bytes from disk: every read is checked.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u32()?).ok()
    }
}

fn head() -> Vec<u8> {
    let engine = roo_store::ENGINE_VERSION.as_bytes();
    let mut h = HEAD.to_vec();
    h.extend_from_slice(&FORMAT.to_le_bytes());
    h.extend_from_slice(&(engine.len() as u16).to_le_bytes());
    h.extend_from_slice(engine);
    h
}

impl KeptFile {
    /// The file at `path`: a missing one holds nothing, a damaged one holds nothing and says why.
    pub fn open(path: &Path) -> KeptFile {
        match std::fs::read(path) {
            Ok(bytes) => match footer(&bytes) {
                Ok(slots) => KeptFile {
                    bytes,
                    slots,
                    problem: None,
                },
                Err(why) => KeptFile {
                    problem: Some(format!("{}: {why}", path.display())),
                    ..KeptFile::default()
                },
            },
            Err(_) => KeptFile::default(),
        }
    }

    fn slot(&self, task_id: &str) -> Option<&Slot> {
        let at = self
            .slots
            .binary_search_by(|s| self.bytes[s.id.0..s.id.1].cmp(task_id.as_bytes()))
            .ok()?;
        self.slots.get(at)
    }

    /// The signature the file holds `task_id` at.
    pub fn sig_of(&self, task_id: &str) -> Option<u64> {
        self.slot(task_id).map(|s| s.sig)
    }

    /// The records of `task_id` when the file holds them for signature `sig`: `None` when it does
    /// not, `Err` when it does but they do not check out.
    pub fn get(&self, task_id: &str, sig: u64) -> Option<Result<TaskUsage, String>> {
        let s = self.slot(task_id).filter(|s| s.sig == sig)?;
        let body = &self.bytes[s.body.0..s.body.1];
        if check(body) != s.check {
            return Some(Err(format!(
                "{task_id}: its kept records fail their checksum"
            )));
        }
        Some(decode(body).ok_or_else(|| format!("{task_id}: its kept records do not read")))
    }

    /// How many tasks the file holds.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// The slots of a whole file, checked: head, trailer, footer checksum, each slot inside the body
/// section, ids in order.
fn footer(bytes: &[u8]) -> Result<Vec<Slot>, String> {
    let h = head();
    if !bytes.starts_with(&h) {
        return Err(if bytes.starts_with(HEAD) {
            "written by another version (its records were read again)".into()
        } else {
            "not a file of kept usage records".into()
        });
    }
    let short = || "cut short".to_owned();
    let t = bytes.len().checked_sub(TRAILER).ok_or_else(short)?;
    let mut c = Cursor { bytes, at: t };
    let count = c.len().ok_or_else(short)?;
    let len = usize::try_from(c.u64().ok_or_else(short)?).map_err(|_| short())?;
    let sum = c.u64().ok_or_else(short)?;
    if c.take(8) != Some(TAIL.as_slice()) {
        return Err(short());
    }
    let start = t
        .checked_sub(len)
        .filter(|&s| s >= h.len())
        .ok_or_else(short)?;
    if check(&bytes[start..t]) != sum {
        return Err("its index fails its checksum".into());
    }
    let mut c = Cursor { bytes, at: start };
    let mut slots: Vec<Slot> = Vec::with_capacity(count.min(len / 30));
    for _ in 0..count {
        let bad = || "its index does not read".to_owned();
        let n = usize::from(c.u16().ok_or_else(bad)?);
        let id = (c.at, c.at + n);
        c.take(n).ok_or_else(bad)?;
        let sig = c.u64().ok_or_else(bad)?;
        let off = usize::try_from(c.u64().ok_or_else(bad)?).map_err(|_| bad())?;
        let blen = c.len().ok_or_else(bad)?;
        let body = (off, off.checked_add(blen).ok_or_else(bad)?);
        if off < h.len() || body.1 > start {
            return Err(bad());
        }
        if slots
            .last()
            .is_some_and(|p| bytes[p.id.0..p.id.1] >= bytes[id.0..id.1])
        {
            return Err("its index is not in task id order".into());
        }
        let check = c.u64().ok_or_else(bad)?;
        slots.push(Slot {
            id,
            sig,
            body,
            check,
        });
    }
    if c.at != t {
        return Err("its index does not read".into());
    }
    Ok(slots)
}

/// Write the file at `path` with the records of `tasks` (`(id, signature, records)`, in task id
/// order): beside it under a name of its own, then renamed over it.
pub fn write<'a>(
    path: &Path,
    tasks: impl IntoIterator<Item = (&'a str, u64, &'a TaskUsage)>,
) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other("the usage records file has no folder"))?;
    std::fs::create_dir_all(dir)?;
    let mut bytes = head();
    let mut index = Vec::new();
    let mut count = 0u32;
    let mut last: Option<&str> = None;
    for (id, sig, usage) in tasks {
        if last.is_some_and(|l| l >= id) {
            return Err(io::Error::other(
                "usage records written out of task id order",
            ));
        }
        last = Some(id);
        let start = bytes.len();
        encode(usage, &mut bytes);
        let body = &bytes[start..];
        index.extend_from_slice(&(id.len() as u16).to_le_bytes());
        index.extend_from_slice(id.as_bytes());
        index.extend_from_slice(&sig.to_le_bytes());
        index.extend_from_slice(&(start as u64).to_le_bytes());
        index.extend_from_slice(&(body.len() as u32).to_le_bytes());
        index.extend_from_slice(&check(body).to_le_bytes());
        count += 1;
    }
    bytes.extend_from_slice(&index);
    bytes.extend_from_slice(&count.to_le_bytes());
    bytes.extend_from_slice(&(index.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&check(&index).to_le_bytes());
    bytes.extend_from_slice(TAIL);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".{FILE_NAME}.{}.{nanos}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(&bytes));
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

// ---- The encoding of one task's records -----------------------------------------------------

/// The strings of a body (models, providers, modes, protocols), each written once.
#[derive(Default)]
struct Strings<'a>(Vec<&'a str>);

impl<'a> Strings<'a> {
    /// 0 for none, else the string's place + 1.
    fn code(&mut self, s: Option<&'a Arc<str>>) -> u16 {
        let Some(s) = s.map(|s| &**s) else { return 0 };
        let at = match self.0.iter().position(|x| *x == s) {
            Some(i) => i,
            None => {
                self.0.push(s);
                self.0.len() - 1
            }
        };
        u16::try_from(at + 1).unwrap_or(0)
    }
}

fn kind_code(k: RecordKind) -> u8 {
    match k {
        RecordKind::Request => 0,
        RecordKind::Condense => 1,
        RecordKind::TaskTotals => 2,
    }
}

fn outcome_code(o: Outcome) -> u8 {
    match o {
        Outcome::Completed => 0,
        Outcome::Cancelled => 1,
        Outcome::Failed => 2,
    }
}

fn op_code(k: FileOpKind) -> u8 {
    match k {
        FileOpKind::Read => 0,
        FileOpKind::Write => 1,
        FileOpKind::Edit => 2,
        FileOpKind::Create => 3,
        FileOpKind::Delete => 4,
    }
}

fn event_code(k: EventKind) -> u8 {
    match k {
        EventKind::UserMessage => 0,
        EventKind::ToolCall => 1,
        EventKind::Command => 2,
    }
}

/// Append the encoding of `u` to `out`.
pub(crate) fn encode(u: &TaskUsage, out: &mut Vec<u8>) {
    let mut strings = Strings::default();
    let mut recs = Vec::with_capacity(u.records.len() * 57);
    for r in &u.records {
        recs.extend_from_slice(&r.ts.to_le_bytes());
        let flags = kind_code(r.kind)
            | (outcome_code(r.outcome) << 2)
            | (u8::from(r.input_includes_cache) << 4)
            | (u8::from(r.cost.is_some()) << 5);
        recs.push(flags);
        for v in [r.tokens_in, r.tokens_out, r.cache_writes, r.cache_reads] {
            recs.extend_from_slice(&v.to_le_bytes());
        }
        if let Some(c) = r.cost {
            recs.extend_from_slice(&c.to_le_bytes());
        }
        for s in [&r.model, &r.provider, &r.mode, &r.protocol] {
            recs.extend_from_slice(&strings.code(s.as_ref()).to_le_bytes());
        }
    }
    out.extend_from_slice(&(strings.0.len() as u32).to_le_bytes());
    for s in &strings.0 {
        let b = &s.as_bytes()[..s.len().min(usize::from(u16::MAX))];
        out.extend_from_slice(&(b.len() as u16).to_le_bytes());
        out.extend_from_slice(b);
    }
    out.extend_from_slice(&(u.records.len() as u32).to_le_bytes());
    out.extend_from_slice(&recs);
    out.extend_from_slice(&(u.file_ops.len() as u32).to_le_bytes());
    for op in &u.file_ops {
        out.extend_from_slice(&op.ts.to_le_bytes());
        out.push(op_code(op.kind) | (u8::from(op.lines.is_some()) << 7));
        if let Some(l) = op.lines {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }
    out.extend_from_slice(&(u.events.len() as u32).to_le_bytes());
    for e in &u.events {
        out.extend_from_slice(&e.ts.to_le_bytes());
        out.push(event_code(e.kind));
    }
    out.extend_from_slice(&u.unrecorded.to_le_bytes());
    match &u.history {
        None => out.push(0),
        Some(h) => {
            let fields = [
                h.tokens_in,
                h.tokens_out,
                h.cache_writes,
                h.cache_reads,
                h.cost,
            ];
            let mut mask = 1u8 << 7;
            for (i, f) in fields.iter().enumerate() {
                mask |= u8::from(f.is_some()) << i;
            }
            out.push(mask);
            for v in fields.into_iter().flatten() {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    out.extend_from_slice(&(u.refused.len() as u32).to_le_bytes());
    for r in &u.refused {
        out.extend_from_slice(&r.ts.to_le_bytes());
        out.extend_from_slice(&(r.why.len() as u32).to_le_bytes());
        out.extend_from_slice(r.why.as_bytes());
    }
}

/// The records of a body; `None` at anything that does not read.
pub(crate) fn decode(body: &[u8]) -> Option<TaskUsage> {
    let mut c = Cursor { bytes: body, at: 0 };
    let n = c.len()?;
    let mut strings: Vec<Arc<str>> = Vec::with_capacity(n.min(body.len() / 2));
    for _ in 0..n {
        let len = usize::from(c.u16()?);
        strings.push(Arc::from(std::str::from_utf8(c.take(len)?).ok()?));
    }
    let string = |code: u16| -> Option<Option<Arc<str>>> {
        match code {
            0 => Some(None),
            k => strings.get(usize::from(k) - 1).cloned().map(Some),
        }
    };
    let n = c.len()?;
    let mut records = Vec::with_capacity(n.min(body.len() / 49));
    for _ in 0..n {
        let ts = c.i64()?;
        let flags = c.u8()?;
        let kind = match flags & 3 {
            0 => RecordKind::Request,
            1 => RecordKind::Condense,
            2 => RecordKind::TaskTotals,
            _ => return None,
        };
        let outcome = match (flags >> 2) & 3 {
            0 => Outcome::Completed,
            1 => Outcome::Cancelled,
            2 => Outcome::Failed,
            _ => return None,
        };
        let (tokens_in, tokens_out, cache_writes, cache_reads) =
            (c.f64()?, c.f64()?, c.f64()?, c.f64()?);
        let cost = if flags & (1 << 5) != 0 {
            Some(c.f64()?)
        } else {
            None
        };
        records.push(UsageRecord {
            ts,
            kind,
            tokens_in,
            tokens_out,
            cache_writes,
            cache_reads,
            cost,
            model: string(c.u16()?)?,
            provider: string(c.u16()?)?,
            mode: string(c.u16()?)?,
            protocol: string(c.u16()?)?,
            input_includes_cache: flags & (1 << 4) != 0,
            outcome,
        });
    }
    let n = c.len()?;
    let mut file_ops = Vec::with_capacity(n.min(body.len() / 9));
    for _ in 0..n {
        let ts = c.i64()?;
        let code = c.u8()?;
        let kind = match code & 0x7f {
            0 => FileOpKind::Read,
            1 => FileOpKind::Write,
            2 => FileOpKind::Edit,
            3 => FileOpKind::Create,
            4 => FileOpKind::Delete,
            _ => return None,
        };
        let lines = if code & 0x80 != 0 {
            Some(c.u32()?)
        } else {
            None
        };
        file_ops.push(FileOp { ts, kind, lines });
    }
    let n = c.len()?;
    let mut events = Vec::with_capacity(n.min(body.len() / 9));
    for _ in 0..n {
        let ts = c.i64()?;
        let kind = match c.u8()? {
            0 => EventKind::UserMessage,
            1 => EventKind::ToolCall,
            2 => EventKind::Command,
            _ => return None,
        };
        events.push(Event { ts, kind });
    }
    let unrecorded = c.u32()?;
    let mask = c.u8()?;
    let history = if mask & (1 << 7) != 0 {
        let mut f = [None; 5];
        for (i, slot) in f.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *slot = Some(c.f64()?);
            }
        }
        Some(HistoryTotals {
            tokens_in: f[0],
            tokens_out: f[1],
            cache_writes: f[2],
            cache_reads: f[3],
            cost: f[4],
        })
    } else {
        None
    };
    let refused = decode_refused(&mut c)?;
    (c.at == body.len()).then_some(TaskUsage {
        records,
        file_ops,
        unrecorded,
        events,
        history,
        refused,
    })
}

/// The records refused as past belief (their time and why), as [`encode`] wrote them.
fn decode_refused(c: &mut Cursor<'_>) -> Option<Vec<Refused>> {
    let n = c.len()?;
    let mut refused = Vec::with_capacity(n.min(c.bytes.len() / 12));
    for _ in 0..n {
        let ts = c.i64()?;
        let len = c.len()?;
        let why = std::str::from_utf8(c.take(len)?).ok()?.to_owned();
        refused.push(Refused { ts, why });
    }
    Some(refused)
}
