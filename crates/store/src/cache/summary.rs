//! The headers' summary: beside a store's cache file, `summaries.bin` holds what a list, a tree
//! and a usage report read of each task (every field of its header but its instruction and its
//! child calls' messages and todos), with the signature and folder mark the handle compares with
//! the disk, in length-prefixed binary records. A handle opens from it without reading the cache
//! file (124 MB of JSON at 50 000 tasks, most of it instructions and messages): the records are
//! decoded in parallel into headers, and the handle's first refresh compares them with the
//! folders. It is trusted only as far as the folders agree: a task whose signature differs sends
//! the open through the cache (module `task_store::lazy`).
//!
//! The file: `ROOSUM01`, the format version (u32), the engine version and the tasks folder
//! (u32-length-prefixed UTF-8), the hierarchy metrics of the store (u32-prefixed JSON), the
//! number of headers and of tasks without one (u32 each), then each header's record and each
//! other task's (u32 length, then its bytes), last the XXH3 of everything before (u64) and
//! `ROOSUMEN`. Numbers are little endian. A file that does not check out in any way is not used.

use super::{FolderMark, TaskSig};
use crate::ENGINE_VERSION;
use rayon::prelude::*;
use roo_formats::diag::Diagnostic;
use roo_formats::extract::{ChildSource, NewTaskInstruction};
use roo_state::hierarchy::HierarchyMetrics;
use roo_state::skeleton::{
    ApiTotalsOut, DatesFrom, ParentEvidence, SkeletonMetadata, StoredLinks, TaskFiles,
};
use roo_state::ConversationSkeleton;
use std::path::{Path, PathBuf};

const HEAD: &[u8; 8] = b"ROOSUM01";
const TAIL: &[u8; 8] = b"ROOSUMEN";
/// Bumped whenever the encoding changes.
const FORMAT: u32 = 1;
/// The file name in a store's cache directory.
pub const SUMMARY_FILE: &str = "summaries.bin";

/// The summary file of the store whose tasks are in `tasks_dir`.
pub fn summary_file(cache_root: &Path, tasks_dir: &Path) -> PathBuf {
    super::store_cache_dir(cache_root, tasks_dir).join(SUMMARY_FILE)
}

/// What the handle keeps of a task beside its header.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stamped {
    pub sig: TaskSig,
    pub folder: Option<FolderMark>,
}

/// A store's summary, read back.
#[derive(Debug, Default)]
pub struct Summary {
    /// In task id order; no instruction, child calls without message or todos.
    pub skeletons: Vec<ConversationSkeleton>,
    pub stamps: Vec<Stamped>,
    /// Tasks without a header: id, signature, why.
    pub failed: Vec<(String, TaskSig, Vec<Diagnostic>)>,
    pub hierarchy: HierarchyMetrics,
}

/// The dates sources and child sources in the order of their codes.
const DATES: [DatesFrom; 7] = [
    DatesFrom::UiMessages,
    DatesFrom::ApiHistory,
    DatesFrom::HistoryItem,
    DatesFrom::TaskId,
    DatesFrom::TaskMetadata,
    DatesFrom::FileTimes,
    DatesFrom::None,
];
const CHILD_SOURCES: [ChildSource; 6] = [
    ChildSource::UiAsk,
    ChildSource::UiPartialAsk,
    ChildSource::ToolUse,
    ChildSource::ToolCall,
    ChildSource::XmlText,
    ChildSource::ResultHeader,
];

/// Bytes written little endian.
#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bool(&mut self, v: bool) {
        self.u8(u8::from(v));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.i64(v);
            }
            None => self.u8(0),
        }
    }
    fn strs(&mut self, v: &[String]) {
        self.u32(v.len() as u32);
        for s in v {
            self.str(s);
        }
    }
    fn sig(&mut self, sig: &TaskSig) {
        for f in sig {
            match f {
                Some((len, ns)) => {
                    self.u8(1);
                    self.u64(*len);
                    self.i64(*ns);
                }
                None => self.u8(0),
            }
        }
    }
    fn diagnostics(&mut self, d: &[Diagnostic]) -> Option<()> {
        if d.is_empty() {
            self.u32(0);
        } else {
            self.bytes(&serde_json::to_vec(d).ok()?);
        }
        Some(())
    }
}

/// A checked reading cursor: every read of bytes from disk is bounded.
struct In<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.b.get(self.at..end)?;
        self.at = end;
        Some(out)
    }
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.array()?))
    }
    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.array()?))
    }
    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn str(&mut self) -> Option<String> {
        std::str::from_utf8(self.bytes()?).ok().map(str::to_owned)
    }
    fn opt_str(&mut self) -> Option<Option<String>> {
        match self.bool()? {
            true => self.str().map(Some),
            false => Some(None),
        }
    }
    fn opt_i64(&mut self) -> Option<Option<i64>> {
        match self.bool()? {
            true => self.i64().map(Some),
            false => Some(None),
        }
    }
    fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.u32()? as usize;
        // Each string takes at least its length's four bytes.
        if n > self.b.len().saturating_sub(self.at) / 4 {
            return None;
        }
        (0..n).map(|_| self.str()).collect()
    }
    fn sig(&mut self) -> Option<TaskSig> {
        let mut sig: TaskSig = [None; 5];
        for f in &mut sig {
            if self.bool()? {
                *f = Some((self.u64()?, self.i64()?));
            }
        }
        Some(sig)
    }
    fn diagnostics(&mut self) -> Option<Vec<Diagnostic>> {
        match self.bytes()? {
            [] => Some(Vec::new()),
            json => serde_json::from_slice(json).ok(),
        }
    }
}

/// One header's record, with its task's stamp; `None` when the header holds a value this
/// format has no code for (the summary is then not written).
fn encode_header(out: &mut Out, s: &ConversationSkeleton, st: &Stamped) -> Option<()> {
    // Every field named: a field added to the header fails to compile here until it is kept.
    let ConversationSkeleton {
        task_id,
        parent_task_id,
        sequence: _,
        metadata,
        child_task_instruction_prefixes: _,
        is_completed,
        truncated_instruction: _,
        instruction: _,
        child_tasks,
        stored_links,
        parent_evidence,
        root_task_id,
        api_totals,
        files,
        created_at_ms,
        last_activity_ms,
        diagnostics,
    } = s;
    out.str(task_id);
    out.opt_str(parent_task_id.as_deref());
    encode_metadata(out, metadata)?;
    out.bool(*is_completed);
    out.u32(child_tasks.len() as u32);
    for c in child_tasks {
        encode_child(out, c)?;
    }
    encode_links(out, stored_links, parent_evidence.as_ref());
    out.opt_str(root_task_id.as_deref());
    let ApiTotalsOut {
        requests,
        tokens_in,
        tokens_out,
        cache_writes,
        cache_reads,
        total_cost,
    } = api_totals;
    out.u32(*requests);
    for v in [tokens_in, tokens_out, cache_writes, cache_reads, total_cost] {
        out.f64(*v);
    }
    let TaskFiles {
        ui_file,
        ui_messages,
        api_history,
        api_messages,
        api_format,
        history_item,
        task_metadata,
    } = files;
    out.opt_str(ui_file.as_deref());
    out.u32(*ui_messages);
    out.bool(*api_history);
    out.u32(*api_messages);
    out.opt_str(api_format.as_deref());
    out.bool(*history_item);
    out.bool(*task_metadata);
    out.opt_i64(*created_at_ms);
    out.opt_i64(*last_activity_ms);
    out.diagnostics(diagnostics)?;
    out.sig(&st.sig);
    match st.folder {
        None => out.u8(0),
        Some(f) => {
            out.u8(1);
            out.i64(f.mtime);
            out.bool(f.settled);
        }
    }
    Some(())
}

/// The metadata of a header ([`encode_header`]).
fn encode_metadata(out: &mut Out, metadata: &SkeletonMetadata) -> Option<()> {
    let SkeletonMetadata {
        title,
        created_at,
        last_activity,
        mode,
        message_count,
        action_count,
        total_size,
        workspace,
        data_source,
        source,
        dates_from,
    } = metadata;
    out.opt_str(title.as_deref());
    out.str(created_at);
    out.str(last_activity);
    out.opt_str(mode.as_deref());
    out.u32(*message_count);
    out.u32(*action_count);
    out.u64(*total_size);
    out.opt_str(workspace.as_deref());
    out.str(data_source);
    out.str(source);
    out.u8(DATES.iter().position(|d| d == dates_from)? as u8);
    Some(())
}

/// A child call of a header ([`encode_header`]).
fn encode_child(out: &mut Out, c: &NewTaskInstruction) -> Option<()> {
    let NewTaskInstruction {
        ts,
        mode,
        message: _,
        todos: _,
        sources,
        child_task_id,
        completed_ts,
    } = c;
    out.opt_i64(*ts);
    out.opt_str(mode.as_deref());
    let mut mask = 0u8;
    for src in sources {
        mask |= 1 << CHILD_SOURCES.iter().position(|x| x == src)?;
    }
    out.u8(mask);
    out.opt_str(child_task_id.as_deref());
    out.opt_i64(*completed_ts);
    Some(())
}

/// The stored links and the parent's evidence of a header ([`encode_header`]).
fn encode_links(
    out: &mut Out,
    stored_links: &StoredLinks,
    parent_evidence: Option<&ParentEvidence>,
) {
    let StoredLinks {
        history_item_parent,
        metadata_parent,
        root_task_id: stored_root,
        child_ids,
        status,
    } = stored_links;
    out.opt_str(history_item_parent.as_deref());
    out.opt_str(metadata_parent.as_deref());
    out.opt_str(stored_root.as_deref());
    out.strs(child_ids);
    out.opt_str(status.as_deref());
    match parent_evidence {
        None => out.u8(0),
        Some(ParentEvidence {
            source,
            confidence,
            matched_prefix,
            new_task_ts,
            match_kind,
            gap_ms,
            conflicts,
        }) => {
            out.u8(1);
            out.str(source);
            out.f64(*confidence);
            out.opt_str(matched_prefix.as_deref());
            out.opt_i64(*new_task_ts);
            out.opt_str(match_kind.as_deref());
            out.opt_i64(*gap_ms);
            out.strs(conflicts);
        }
    }
}

fn decode_header(r: &mut In<'_>) -> Option<(ConversationSkeleton, Stamped)> {
    let task_id = r.str()?;
    let parent_task_id = r.opt_str()?;
    let metadata = SkeletonMetadata {
        title: r.opt_str()?,
        created_at: r.str()?,
        last_activity: r.str()?,
        mode: r.opt_str()?,
        message_count: r.u32()?,
        action_count: r.u32()?,
        total_size: r.u64()?,
        workspace: r.opt_str()?,
        data_source: r.str()?,
        source: r.str()?,
        dates_from: *DATES.get(usize::from(r.u8()?))?,
    };
    let is_completed = r.bool()?;
    let calls = r.u32()? as usize;
    let mut child_tasks = Vec::with_capacity(calls.min(r.b.len() / 8));
    for _ in 0..calls {
        let ts = r.opt_i64()?;
        let mode = r.opt_str()?;
        let mask = r.u8()?;
        let sources = (CHILD_SOURCES.iter().enumerate())
            .filter(|(k, _)| mask & (1 << k) != 0)
            .map(|(_, s)| *s)
            .collect();
        child_tasks.push(NewTaskInstruction {
            ts,
            mode,
            message: String::new(),
            todos: None,
            sources,
            child_task_id: r.opt_str()?,
            completed_ts: r.opt_i64()?,
        });
    }
    let stored_links = StoredLinks {
        history_item_parent: r.opt_str()?,
        metadata_parent: r.opt_str()?,
        root_task_id: r.opt_str()?,
        child_ids: r.strs()?,
        status: r.opt_str()?,
    };
    let parent_evidence = match r.bool()? {
        false => None,
        true => Some(ParentEvidence {
            source: r.str()?,
            confidence: r.f64()?,
            matched_prefix: r.opt_str()?,
            new_task_ts: r.opt_i64()?,
            match_kind: r.opt_str()?,
            gap_ms: r.opt_i64()?,
            conflicts: r.strs()?,
        }),
    };
    let root_task_id = r.opt_str()?;
    let api_totals = ApiTotalsOut {
        requests: r.u32()?,
        tokens_in: r.f64()?,
        tokens_out: r.f64()?,
        cache_writes: r.f64()?,
        cache_reads: r.f64()?,
        total_cost: r.f64()?,
    };
    let files = TaskFiles {
        ui_file: r.opt_str()?,
        ui_messages: r.u32()?,
        api_history: r.bool()?,
        api_messages: r.u32()?,
        api_format: r.opt_str()?,
        history_item: r.bool()?,
        task_metadata: r.bool()?,
    };
    let skeleton = ConversationSkeleton {
        task_id,
        parent_task_id,
        sequence: None,
        metadata,
        child_task_instruction_prefixes: Vec::new(),
        is_completed,
        truncated_instruction: None,
        instruction: None,
        child_tasks,
        stored_links,
        parent_evidence,
        root_task_id,
        api_totals,
        files,
        created_at_ms: r.opt_i64()?,
        last_activity_ms: r.opt_i64()?,
        diagnostics: r.diagnostics()?,
    };
    let sig = r.sig()?;
    let folder = match r.bool()? {
        false => None,
        true => Some(FolderMark {
            mtime: r.i64()?,
            settled: r.bool()?,
        }),
    };
    Some((skeleton, Stamped { sig, folder }))
}

/// What [`write_summary`] writes of one store.
pub struct SummaryOf<'a> {
    pub tasks_dir: &'a Path,
    /// In task id order, each with its stamp.
    pub headers: Vec<(&'a ConversationSkeleton, Stamped)>,
    pub failed: Vec<(&'a str, &'a TaskSig, &'a [Diagnostic])>,
    pub hierarchy: &'a HierarchyMetrics,
}

/// The bytes of a store's summary; `None` when a header holds a value the format cannot keep.
pub fn encode_summary(s: &SummaryOf<'_>) -> Option<Vec<u8>> {
    let records: Vec<Vec<u8>> = (s.headers.par_iter())
        .map(|(h, st)| {
            let mut o = Out::default();
            encode_header(&mut o, h, st)?;
            Some(o.0)
        })
        .collect::<Option<_>>()?;
    let mut out = Out(Vec::with_capacity(
        records.iter().map(|r| r.len() + 4).sum::<usize>() + 4096,
    ));
    out.0.extend_from_slice(HEAD);
    out.u32(FORMAT);
    out.str(ENGINE_VERSION);
    out.str(&s.tasks_dir.display().to_string());
    out.bytes(&serde_json::to_vec(s.hierarchy).ok()?);
    out.u32(records.len() as u32);
    out.u32(s.failed.len() as u32);
    for r in &records {
        out.bytes(r);
    }
    for (id, sig, diags) in &s.failed {
        let mut o = Out::default();
        o.str(id);
        o.sig(sig);
        o.diagnostics(diags)?;
        out.bytes(&o.0);
    }
    let check = xxhash_rust::xxh3::xxh3_64(&out.0);
    out.u64(check);
    out.0.extend_from_slice(TAIL);
    Some(out.0)
}

/// A store's summary from its bytes, when they are whole, of this format and engine, of this
/// tasks folder, and every record decodes, headers in strict id order.
pub fn decode_summary(bytes: &[u8], tasks_dir: &Path) -> Option<Summary> {
    let body_len = bytes.len().checked_sub(16)?;
    let (body, trailer) = bytes.split_at(body_len);
    let (check, tail) = trailer.split_at(8);
    if tail != TAIL
        || u64::from_le_bytes(check.try_into().ok()?) != xxhash_rust::xxh3::xxh3_64(body)
    {
        return None;
    }
    let mut r = In { b: body, at: 0 };
    if r.take(8)? != HEAD || r.u32()? != FORMAT || r.str()? != ENGINE_VERSION {
        return None;
    }
    if r.str()? != tasks_dir.display().to_string() {
        return None;
    }
    let hierarchy: HierarchyMetrics = serde_json::from_slice(r.bytes()?).ok()?;
    let (headers, failed) = (r.u32()? as usize, r.u32()? as usize);
    // Each record's span, found in one pass over the lengths; then decoded in parallel.
    let mut spans = Vec::with_capacity(headers.min(body.len() / 4));
    for _ in 0..headers {
        spans.push(r.bytes()?);
    }
    // Each header decoded into its place in the vector the handle keeps (placeholders first,
    // written in parallel): collected and moved, 50 000 headers would be 80 MB of fresh pages.
    let mut out = Summary {
        hierarchy,
        ..Summary::default()
    };
    out.skeletons.reserve_exact(spans.len());
    (out.skeletons).par_extend((0..spans.len()).into_par_iter().map(|_| Default::default()));
    out.stamps = vec![Stamped::default(); spans.len()];
    let decoded = (out.skeletons.par_iter_mut())
        .zip(out.stamps.par_iter_mut())
        .zip(spans.par_iter())
        .all(|((s, st), b)| {
            let mut one = In { b, at: 0 };
            match decode_header(&mut one) {
                Some((h, stamp)) if one.at == b.len() => {
                    *s = h;
                    *st = stamp;
                    true
                }
                _ => false,
            }
        });
    let ordered = (out.skeletons.windows(2)).all(|w| w[0].task_id < w[1].task_id);
    for _ in 0..failed {
        let mut one = In {
            b: r.bytes()?,
            at: 0,
        };
        out.failed
            .push((one.str()?, one.sig()?, one.diagnostics()?));
    }
    (decoded && ordered && r.at == body.len()).then_some(out)
}

/// Write a store's summary beside its cache (through a temporary file and a rename). A summary
/// that cannot be written is left out: the next open reads the cache, as it would without one.
pub fn write_summary(cache_root: &Path, s: &SummaryOf<'_>) {
    let path = summary_file(cache_root, s.tasks_dir);
    match encode_summary(s) {
        Some(bytes) => {
            if crate::fsutil::write_atomic_with(&path, &bytes, false).is_err() {
                let _ = std::fs::remove_file(&path);
            }
        }
        None => {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// A store's summary, when its file is there and checks out.
pub fn read_summary(cache_root: &Path, tasks_dir: &Path) -> Option<Summary> {
    let bytes = std::fs::read(summary_file(cache_root, tasks_dir)).ok()?;
    decode_summary(&bytes, tasks_dir)
}
