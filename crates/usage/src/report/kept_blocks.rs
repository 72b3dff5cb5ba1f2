//! The blocks of the last reports kept between runs, beside the skeleton cache: one file per
//! handle, `<first store's cache dir>/usage.blocks`, so that a new process (a CLI run) answers a
//! report it made before without reading any task's records, and after a change sums again only
//! the blocks holding a changed task.
//!
//! A block ([`super::pass`]) is the sums of tasks `k * BLOCK ..` of the handle; it is taken back
//! only when its fingerprint is the one the handle gives now: the XXH3 of every task's id, store,
//! file signature and the header fields a report reads (parent or none, creation time,
//! workspace, host). The file holds the blocks of the last [`REPORTS`] option sets, each under
//! the options' fingerprint ([`super::pass::memo_key`]) and the handle's tasks folders; it is
//! JSON (numbers written and read back exactly: `serde_json`'s `float_roundtrip`), each report's
//! blocks with the XXH3 of their text, replaced whole by rename. A file of another format or
//! engine version, or that does not read, holds nothing; a report whose text fails its checksum
//! is summed again.

use super::pass::{Acc, Groups, Key, Partial, Summed, BLOCK};
use super::{Activity, FileOps, HistoryDisagreement, NoCostTask, Sums};
use roo_store::cache::sig_hash;
use roo_store::task_store::TaskStore;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file name in the first store's cache directory.
pub const FILE_NAME: &str = "usage.blocks";
/// Bumped whenever the shape below or what a block holds changes.
const FORMAT: u32 = 1;
/// The option sets whose blocks a file keeps, the most recent first.
const REPORTS: usize = 4;

#[derive(Serialize, Deserialize)]
struct File {
    format: u32,
    engine: String,
    reports: Vec<Report>,
}

#[derive(Serialize, Deserialize)]
struct Report {
    /// The options' fingerprint and the handle's tasks folders.
    key: String,
    /// Its [`Block`]s, read only for the report asked for, and the XXH3 of their text: a
    /// figure changed on disk is not taken.
    blocks: Box<serde_json::value::RawValue>,
    check: u64,
}

#[derive(Serialize, Deserialize)]
struct Block {
    fingerprint: u64,
    rows: Vec<(Row, Sums2)>,
    totals: Sums2,
    unpriced: Vec<String>,
    no_cost: Vec<NoCostTask>,
    history: Vec<HistoryDisagreement>,
    input_below_cache: u64,
    refused: u64,
    refused_why: Vec<String>,
}

/// A row's key.
#[derive(Serialize, Deserialize)]
enum Row {
    Num(i64),
    Text(String),
}

/// A row's sums ([`Acc`] without what only summing uses), each group of figures an array.
#[derive(Serialize, Deserialize)]
struct Sums2 {
    sums: Figures,
    activity: [u64; 4],
    files: [u64; 6],
    tasks: u64,
    models: Vec<(String, Figures)>,
}

/// [`Sums`] as an array: requests, input, tokens in and out, cache writes and reads, total
/// tokens, cost, cancelled, failed, without cost.
#[derive(Serialize, Deserialize)]
struct Figures(u64, f64, f64, f64, f64, f64, f64, f64, u64, u64, u64);

impl From<&Sums> for Figures {
    fn from(s: &Sums) -> Figures {
        Figures(
            s.requests,
            s.input,
            s.tokens_in,
            s.tokens_out,
            s.cache_writes,
            s.cache_reads,
            s.total_tokens,
            s.cost,
            s.cancelled,
            s.failed,
            s.without_cost,
        )
    }
}

impl From<Figures> for Sums {
    fn from(f: Figures) -> Sums {
        Sums {
            requests: f.0,
            input: f.1,
            tokens_in: f.2,
            tokens_out: f.3,
            cache_writes: f.4,
            cache_reads: f.5,
            total_tokens: f.6,
            cost: f.7,
            cancelled: f.8,
            failed: f.9,
            without_cost: f.10,
        }
    }
}

impl From<&Acc<Arc<str>>> for Sums2 {
    fn from(a: &Acc<Arc<str>>) -> Sums2 {
        let (v, f) = (&a.activity, &a.files);
        Sums2 {
            sums: Figures::from(&a.sums),
            activity: [v.user_messages, v.conversations, v.tool_calls, v.commands],
            files: [f.reads, f.writes, f.edits, f.creates, f.deletes, f.lines],
            tasks: a.tasks,
            models: (a.models.iter())
                .map(|(m, s)| (m.to_string(), Figures::from(s)))
                .collect(),
        }
    }
}

impl From<Sums2> for Acc<Arc<str>> {
    fn from(s: Sums2) -> Acc<Arc<str>> {
        let [user_messages, conversations, tool_calls, commands] = s.activity;
        let [reads, writes, edits, creates, deletes, lines] = s.files;
        let mut acc = Acc::default();
        acc.sums = Sums::from(s.sums);
        acc.activity = Activity {
            user_messages,
            conversations,
            tool_calls,
            commands,
        };
        acc.files = FileOps {
            reads,
            writes,
            edits,
            creates,
            deletes,
            lines,
        };
        acc.tasks = s.tasks;
        acc.models = (s.models.into_iter())
            .map(|(m, f)| (Arc::from(m), Sums::from(f)))
            .collect();
        acc
    }
}

impl Block {
    /// A block as a report keeps it; `None` for one that holds per-task costs (a conversations
    /// report, which keeps no blocks).
    fn of(fingerprint: u64, p: &Partial<Arc<str>>) -> Option<Block> {
        if !p.task_costs.is_empty() {
            return None;
        }
        Some(Block {
            fingerprint,
            rows: (p.groups.slots.iter())
                .map(|(k, a)| {
                    let row = match k {
                        Key::Num(n) => Row::Num(*n),
                        Key::Text(t) => Row::Text(t.to_string()),
                    };
                    (row, Sums2::from(a))
                })
                .collect(),
            totals: Sums2::from(&p.totals),
            unpriced: p.unpriced.clone(),
            no_cost: p.no_cost.clone(),
            history: p.history.clone(),
            input_below_cache: p.input_below_cache,
            refused: p.refused,
            refused_why: p.refused_why.clone(),
        })
    }

    fn partial(self) -> Partial<Arc<str>> {
        let mut groups = Groups::default();
        groups.slots = (self.rows.into_iter())
            .map(|(row, s)| {
                let key = match row {
                    Row::Num(n) => Key::Num(n),
                    Row::Text(t) => Key::Text(Arc::from(t)),
                };
                (key, Acc::from(s))
            })
            .collect();
        Partial {
            groups,
            totals: Acc::from(self.totals),
            unpriced: self.unpriced,
            no_cost: self.no_cost,
            history: self.history,
            input_below_cache: self.input_below_cache,
            refused: self.refused,
            refused_why: self.refused_why,
            ..Partial::default()
        }
    }
}

/// The file of the handle's kept blocks, when it has a cache.
fn file_of(store: &TaskStore) -> Option<PathBuf> {
    let root = store.cache_root()?;
    let first = store.stores().first()?;
    Some(roo_store::cache::store_cache_dir(root, Path::new(&first.tasks_dir)).join(FILE_NAME))
}

/// The key of a report's blocks: the options' fingerprint and the handle's tasks folders.
fn key_of(options: &str, store: &TaskStore) -> String {
    let dirs: Vec<&str> = store
        .stores()
        .iter()
        .map(|s| s.tasks_dir.as_str())
        .collect();
    format!("{options}|{}", dirs.join("|"))
}

/// The fingerprint of each block of the handle as it is now (see the module documentation).
fn fingerprints(store: &TaskStore) -> Vec<u64> {
    use rayon::prelude::*;
    let skeletons = store.skeletons();
    let blocks: Vec<usize> = (0..skeletons.len().div_ceil(BLOCK)).collect();
    blocks
        .par_iter()
        .map(|&b| {
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            let end = ((b + 1) * BLOCK).min(skeletons.len());
            for (i, s) in skeletons.iter().enumerate().take(end).skip(b * BLOCK) {
                let sig = store.signature(i).unwrap_or_default();
                let store_n = store.store_of(i).unwrap_or(usize::MAX) as u64;
                for text in [
                    Some(s.task_id.as_str()),
                    s.metadata.workspace.as_deref(),
                    Some(s.metadata.source.as_str()),
                ] {
                    // Each text with its length (or none): two fields never run into each other.
                    match text {
                        Some(t) => {
                            h.update(&(t.len() as u64).to_le_bytes());
                            h.update(t.as_bytes());
                        }
                        None => h.update(&u64::MAX.to_le_bytes()),
                    }
                }
                h.update(&sig_hash(&sig).to_le_bytes());
                h.update(&store_n.to_le_bytes());
                h.update(&[u8::from(s.parent_task_id.is_some())]);
                h.update(&s.created_at_ms.map_or(i64::MIN, |t| t).to_le_bytes());
            }
            h.digest()
        })
        .collect()
}

fn read_file(path: &Path) -> Option<File> {
    let bytes = std::fs::read(path).ok()?;
    let file: File = serde_json::from_slice(&bytes).ok()?;
    (file.format == FORMAT && file.engine == roo_store::ENGINE_VERSION).then_some(file)
}

/// The blocks the file keeps under `key`, when it keeps them and they check out.
fn read(path: &Path, key: &str) -> Option<Vec<Block>> {
    let file = read_file(path)?;
    let report = file.reports.into_iter().find(|r| r.key == key)?;
    if xxhash_rust::xxh3::xxh3_64(report.blocks.get().as_bytes()) != report.check {
        return None;
    }
    serde_json::from_str(report.blocks.get()).ok()
}

/// Keep `blocks` (every block of a report, in order, with the fingerprints of the handle they
/// were summed over) under `key`, before the other reports the file keeps.
fn write(path: &Path, key: &str, blocks: &[Summed], fingerprints: &[u64]) -> std::io::Result<()> {
    let kept: Option<Vec<Block>> = (blocks.iter().zip(fingerprints))
        .map(|(p, &fp)| Block::of(fp, p))
        .collect();
    let Some(kept) = kept else {
        return Ok(());
    };
    let blocks = serde_json::value::to_raw_value(&kept).map_err(std::io::Error::other)?;
    let mut reports = vec![Report {
        key: key.to_owned(),
        check: xxhash_rust::xxh3::xxh3_64(blocks.get().as_bytes()),
        blocks,
    }];
    if let Some(old) = read_file(path) {
        reports.extend(old.reports.into_iter().filter(|r| r.key != key));
    }
    reports.truncate(REPORTS);
    let file = File {
        format: FORMAT,
        engine: roo_store::ENGINE_VERSION.to_owned(),
        reports,
    };
    let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    roo_store::fsutil::write_atomic_with(path, &bytes, false)
}

/// What a new index takes from the file for a report: the memo of the blocks it keeps, the
/// positions of the tasks whose records the others need, and the handle's fingerprints.
pub(crate) struct Taken {
    pub(crate) memo: super::Memo,
    pub(crate) to_read: Vec<usize>,
    pub(crate) fingerprints: Vec<u64>,
}

/// The kept blocks of the report `opts` asks for over `store`, each taken where its fingerprint
/// is the handle's at its position, when the file keeps some that the handle still gives. Not for
/// a report of the last periods (it is built twice, the second time over options known only
/// after the first).
pub(crate) fn take(store: &TaskStore, opts: &super::ReportOptions) -> Option<Taken> {
    if opts.last.is_some() {
        return None;
    }
    let key = super::pass::memo_key(opts)?;
    let kept = read(&file_of(store)?, &key_of(&key, store))?;
    let fingerprints = fingerprints(store);
    if kept.len() != fingerprints.len() {
        return None;
    }
    let blocks: Vec<Option<Summed>> = (kept.into_iter())
        .zip(&fingerprints)
        .map(|(b, &fp)| (b.fingerprint == fp).then(|| Arc::new(b.partial())))
        .collect();
    if blocks.iter().all(Option::is_none) {
        return None;
    }
    let n = store.skeletons().len();
    let memo = super::Memo::of(key, store.layout(), blocks);
    let to_read = (memo.missing())
        .flat_map(|b| b * BLOCK..((b + 1) * BLOCK).min(n))
        .collect();
    Some(Taken {
        memo,
        to_read,
        fingerprints,
    })
}

/// Keep the blocks of `memo` (the last report's, when it holds every block over `store` as it
/// is) in the handle's file; `fingerprints`: the handle's, when already known.
pub(crate) fn keep(
    store: &TaskStore,
    memo: &super::Memo,
    fingerprints: Option<Vec<u64>>,
) -> std::io::Result<()> {
    let (Some(path), Some((key, layout, blocks))) = (file_of(store), memo.whole()) else {
        return Ok(());
    };
    if layout != store.layout() {
        return Ok(());
    }
    let fingerprints = fingerprints.unwrap_or_else(|| self::fingerprints(store));
    write(&path, &key_of(key, store), &blocks, &fingerprints)
}
