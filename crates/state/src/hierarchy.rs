//! Parent/child hierarchy of tasks: stored links first, then inference from `newTask` instructions.
//!
//! 1. **Stored links** (unless [`HierarchyOptions::use_stored_links`] is off): the child's own
//!    `history_item.json` `parentTaskId`; a parent naming the child (its `history_item.json` `childIds`,
//!    or a `Delegated to child task <id>` result on one of its `newTask` calls); the child's
//!    `task_metadata.json` parent. When they name different parents the strongest source wins (in that
//!    order) and the disagreement is written into the evidence (`conflicts`) and the issues.
//! 2. **Inference** for every task still without a parent. Each task's `newTask` calls ("slots") are
//!    indexed in a radix trie keyed by the normalised message ([`normalize_instruction`], the same
//!    function on both sides). A task looks up its own normalised instruction: the longest stored
//!    message that equals it, or is a word-aligned prefix of it, gives the candidate slots. A slot is
//!    kept when the child was created after the call (and, when known, before the `subtask_result` that
//!    closed it, before the parent's next `newTask` call and before the parent's last activity; within
//!    a day when nothing closes it), both tasks belong to the same workspace ([`normalize_workspace`])
//!    and the slot's task is not the child itself. Slots are then handed out
//!    closest in time first, one child per slot; a child whose best two slots belong to different
//!    parents and cannot be told apart in time is reported as ambiguous and left without a parent.
//! 3. **Validation**: self links are dropped, cycles are broken at their weakest link (deterministically)
//!    and reported, links to a parent id that is not on disk are kept and counted as orphans, depths and
//!    `rootTaskId` are computed by following parents upwards.
//!
//! The result does not depend on the order of the input: skeletons come back sorted by task id.

use crate::skeleton::{ConversationSkeleton, ParentEvidence};
use radix_trie::{Trie, TrieCommon};
use rayon::prelude::*;
use roo_formats::extract::ChildSource;
use roo_formats::text::normalize_instruction;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_128_with_seed;

/// `parentEvidence.source` values.
pub mod source {
    pub const HISTORY_ITEM: &str = "history_item";
    pub const CHILD_IDS: &str = "child_ids";
    pub const TASK_METADATA: &str = "task_metadata";
    pub const INSTRUCTION_PREFIX: &str = "instruction_prefix";
}

/// `HierarchyIssue.kind` values.
pub mod issue {
    pub const CONFLICT: &str = "conflict";
    pub const AMBIGUOUS: &str = "ambiguous";
    pub const CYCLE: &str = "cycle";
    pub const ORPHAN: &str = "orphan";
    pub const SELF_LINK: &str = "self_link";
}

/// Trie keys are the first bytes of the normalised message (longer messages sharing them are told
/// apart by comparing the whole text).
const TRIE_KEY_BYTES: usize = 64;
/// Trie shards, by the key's first byte (built in parallel; a key and its prefixes share a shard).
const TRIE_SHARDS: usize = 16;
/// Keys of one trie node compared with the child's instruction, at most (longest first).
const MAX_KEYS_SCANNED: usize = 256;
/// Candidate slots kept per child (closest in time first).
const MAX_CANDIDATES: usize = 8;
/// Slots of one message examined per child, at most.
const MAX_SLOTS_SCANNED: usize = 512;
/// Shorter stored prefixes tried when the longest one yields no acceptable slot.
const MAX_ANCESTOR_STEPS: usize = 16;
/// A child may appear this long before a `newTask` seen in the UI (clock granularity).
const UI_TOLERANCE_MS: i64 = 1_000;
/// … or before a `newTask` seen only in the API history, whose `ts` is written after the stream ends.
const API_TOLERANCE_MS: i64 = 10_000;
/// A child may appear this long after the `subtask_result` / next call that closes a slot.
const UPPER_TOLERANCE_MS: i64 = 1_000;
/// A parent active this long after a call (with no `subtask_result`) bounds its child's creation.
const PARENT_ACTIVITY_SLACK_MS: i64 = 60_000;
/// Longest wait between a call that nothing closed (no `subtask_result`, no later call) and its child.
const MAX_OPEN_GAP_MS: i64 = 24 * 3_600_000;
/// Two slots of different parents closer than this (in gap to the child) cannot be told apart.
const AMBIGUITY_MS: i64 = 2_000;
/// A stored message shorter than this (bytes) never matches as a mere prefix.
const MIN_PREFIX_BYTES: usize = 24;
/// A stored message this long matches as a prefix whatever the child's instruction length.
const LONG_PREFIX_BYTES: usize = 160;
/// `matchedPrefix` is cut to this many characters.
const MATCHED_PREFIX_CHARS: usize = 192;

/// Options of [`reconstruct_hierarchy`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HierarchyOptions {
    /// Keep only the tasks of this workspace (compared after [`normalize_workspace`]).
    pub workspace_filter: Option<String>,
    /// Use `history_item.json`, `childIds`, delegation records and `task_metadata.json` (default true).
    /// Off: every link is inferred from instructions.
    pub use_stored_links: bool,
}

impl Default for HierarchyOptions {
    fn default() -> Self {
        Self {
            workspace_filter: None,
            use_stored_links: true,
        }
    }
}

/// Links of the result, per evidence source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinksBySource {
    pub history_item: u32,
    pub child_ids: u32,
    pub task_metadata: u32,
    pub instruction_prefix: u32,
}

/// Something the reconstruction met and did not hide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HierarchyIssue {
    /// `conflict`, `ambiguous`, `cycle`, `orphan` or `self_link`.
    pub kind: String,
    pub task_id: String,
    pub detail: String,
    /// The parent ids in play (conflict, ambiguous, orphan) or the members of the cycle.
    pub candidates: Vec<String>,
}

/// What [`reconstruct_hierarchy`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HierarchyMetrics {
    pub tasks: u32,
    pub links_by_source: LinksBySource,
    /// Tasks without a parent, or whose parent exists but was left out by the workspace filter.
    pub roots: u32,
    /// Tasks whose parent id is not on disk (not among the input skeletons).
    pub orphans: u32,
    /// Tasks left without a parent because several parents fit equally well.
    pub ambiguous: u32,
    pub cycles_broken: u32,
    /// Tasks whose stored sources name different parents.
    pub conflicts: u32,
    pub max_depth: u32,
    pub elapsed_ms: f64,
    pub issues: Vec<HierarchyIssue>,
}

/// A node of [`get_task_tree`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskTreeNode {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_evidence: Option<ParentEvidence>,
    /// 0 for the nodes returned at the top.
    pub depth: u32,
    pub children: Vec<TaskTreeNode>,
}

/// A node of [`get_task_tree_view`]: a [`TaskTreeNode`] borrowing from the skeletons (it
/// serialises to the same JSON).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskTreeView<'a> {
    pub task_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'a str>,
    pub created_at: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_evidence: Option<&'a ParentEvidence>,
    pub depth: u32,
    pub children: Vec<TaskTreeView<'a>>,
}

/// Options of [`get_task_tree`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TreeOptions {
    /// Only the subtree of this task.
    pub root_id: Option<String>,
    /// Only the tasks of this workspace (compared after [`normalize_workspace`]).
    pub workspace: Option<String>,
    /// Deepest level kept (0: the top nodes only).
    pub max_depth: Option<u32>,
}

/// The one workspace comparison key: `\` → `/`, `\\?\` and `file://` prefixes removed, repeated
/// separators collapsed (a leading `//` of a UNC path kept), `/d:/` → `d:/`, lower case, no trailing
/// separator, surrounding white space trimmed.
pub fn normalize_workspace(path: &str) -> String {
    let mut p = path.trim().replace('\\', "/");
    for prefix in ["//?/", "//./"] {
        if let Some(rest) = p.strip_prefix(prefix) {
            p = rest.to_owned();
        }
    }
    if p.len() >= 7
        && p.get(..7)
            .is_some_and(|s| s.eq_ignore_ascii_case("file://"))
    {
        p = p.get(7..).unwrap_or_default().to_owned();
    }
    let unc = p.starts_with("//");
    let mut out = String::with_capacity(p.len() + 1);
    if unc {
        out.push('/');
    }
    let mut prev_slash = false;
    for c in p.chars() {
        if c == '/' {
            if !prev_slash {
                out.push('/');
            }
            prev_slash = true;
        } else {
            prev_slash = false;
            out.extend(c.to_lowercase());
        }
    }
    // `/c:/x` (URI form) → `c:/x`.
    let b = out.as_bytes();
    if !unc && b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        out.remove(0);
    }
    while out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Reconstruction
// ---------------------------------------------------------------------------------------------

/// One `newTask` call of a task.
struct Slot<'a> {
    parent: u32,
    key: u32,
    ts: Option<i64>,
    /// `subtask_result` after the call, else the parent's next call.
    upper: Option<i64>,
    closed_by_result: bool,
    seen_in_ui: bool,
    /// The child a delegation record names.
    child_task_id: Option<&'a str>,
}

/// A distinct normalised message; its slots sorted by time (untimed last).
struct KeyEntry<'a> {
    text: &'a str,
    /// Some record of it ended with an ellipsis.
    cut: bool,
    slots: Vec<u32>,
}

struct TaskInfo<'a> {
    /// Interned normalised workspace.
    workspace: Option<u32>,
    created: Option<i64>,
    last_activity: Option<i64>,
    /// The normalised instruction ("" when the task is not looked up).
    query: &'a str,
    /// Its hash ([`KeyMemo`]), to find an equal message without hashing the text again.
    query_hash: u128,
}

struct SlotDraft<'a> {
    key: &'a str,
    key_hash: u128,
    cut: bool,
    ts: Option<i64>,
    upper: Option<i64>,
    closed_by_result: bool,
    seen_in_ui: bool,
    child_task_id: Option<&'a str>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MatchKind {
    Exact,
    Prefix,
}

#[derive(Clone, Copy)]
struct Edge {
    child: u32,
    slot: u32,
    parent: u32,
    kind: MatchKind,
    key_len: u32,
    gap: Option<i64>,
    workspace_known: bool,
}

impl Edge {
    fn order_key(&self) -> (bool, u8, i64, u32, u32) {
        (
            self.gap.is_none(),
            match self.kind {
                MatchKind::Exact => 0,
                MatchKind::Prefix => 1,
            },
            self.gap.map_or(i64::MAX, i64::abs),
            self.child,
            self.slot,
        )
    }
}

/// Strip a trailing `...` / `…` (a message cut by whoever recorded it) and the space before it;
/// says whether there was one.
fn strip_ellipsis(mut key: String) -> (String, bool) {
    let mut cut_seen = false;
    loop {
        let trimmed = key.trim_end();
        let cut = trimmed
            .strip_suffix("...")
            .or_else(|| trimmed.strip_suffix('…'))
            .map(str::len);
        match cut {
            Some(len) => {
                key.truncate(len);
                cut_seen = true;
            }
            None => {
                let len = trimmed.len();
                key.truncate(len);
                return (key, cut_seen);
            }
        }
    }
}

/// FxHash (the rustc hasher): the keys are task texts and ids, hashed many times; no DoS concern.
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(<[u8; 8]>::try_from(c).unwrap_or([0; 8]));
            h = (h.rotate_left(5) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// How a stored message `key` matches the child's instruction `query`, if it does. A `cut` key (it
/// ended with an ellipsis) may stop anywhere; a whole one must be word-aligned and cover at least half
/// of the query (or be long).
fn match_kind(key: &str, query: &str, cut: bool) -> Option<MatchKind> {
    if key == query {
        return Some(MatchKind::Exact);
    }
    if key.len() < MIN_PREFIX_BYTES || !query.starts_with(key) {
        return None;
    }
    if cut {
        return Some(MatchKind::Prefix);
    }
    if key.len() * 2 < query.len() && key.len() < LONG_PREFIX_BYTES {
        return None;
    }
    // Word-aligned: no match of `fix the bug` inside `fix the bugs`.
    let next = query.get(key.len()..).and_then(|r| r.chars().next());
    let last = key.chars().next_back();
    let aligned = match (last, next) {
        (_, None) => true,
        (Some(l), Some(n)) => !l.is_alphanumeric() || !n.is_alphanumeric(),
        (None, Some(_)) => false,
    };
    aligned.then_some(MatchKind::Prefix)
}

fn source_rank(source: &str) -> u8 {
    match source {
        source::HISTORY_ITEM => 3,
        source::CHILD_IDS => 2,
        source::TASK_METADATA => 1,
        _ => 0,
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn shard_of(key: &str) -> usize {
    key.as_bytes()
        .first()
        .map_or(0, |&b| b as usize % TRIE_SHARDS)
}

struct Claim<'a> {
    rank: u8,
    source: &'static str,
    parent: &'a str,
}

/// What the reconstruction decides for one task.
#[derive(Default)]
struct Outcome {
    parent: Option<String>,
    evidence: Option<ParentEvidence>,
    root: Option<String>,
}

/// Everything the passes share, over the skeletons sorted by task id (`rank`).
struct Index<'a> {
    view: Vec<&'a ConversationSkeleton>,
    index_of: FxMap<&'a str, u32>,
    infos: Vec<TaskInfo<'a>>,
    slots: Vec<Slot<'a>>,
    /// Slot ids of each task (contiguous).
    slots_of: Vec<std::ops::Range<u32>>,
    keys: Vec<KeyEntry<'a>>,
    /// Key ids by the hash of their text.
    key_ids: FxMap<u128, u32>,
}

impl<'a> Index<'a> {
    fn build(
        view: Vec<&'a ConversationSkeleton>,
        hashes: &[TaskHashes],
        memo: &'a KeyMemo,
    ) -> Self {
        // Workspaces: few distinct spellings, normalised once each, compared as numbers.
        let mut raw_ws: FxMap<&'a str, Option<u32>> = FxMap::default();
        let mut norm_ws: FxMap<String, u32> = FxMap::default();
        let ws_ids: Vec<Option<u32>> = view
            .iter()
            .map(|s| {
                let raw = s
                    .metadata
                    .workspace
                    .as_deref()
                    .filter(|w| !w.trim().is_empty())?;
                *raw_ws.entry(raw).or_insert_with(|| {
                    let next = norm_ws.len() as u32;
                    Some(*norm_ws.entry(normalize_workspace(raw)).or_insert(next))
                })
            })
            .collect();
        let prepared: Vec<(TaskInfo<'a>, Vec<SlotDraft<'a>>)> = view
            .par_iter()
            .zip(ws_ids.par_iter())
            .zip(hashes.par_iter())
            .map(|((s, &ws), h)| prepare(s, ws, h, memo))
            .collect();
        let n = view.len();
        let mut index_of: FxMap<&'a str, u32> = FxMap::default();
        index_of.reserve(n);
        for (i, s) in view.iter().enumerate() {
            index_of.entry(s.task_id.as_str()).or_insert(i as u32);
        }
        let total: usize = prepared.iter().map(|(_, d)| d.len()).sum();
        let mut infos = Vec::with_capacity(n);
        let mut slots: Vec<Slot<'a>> = Vec::with_capacity(total);
        let mut slots_of = Vec::with_capacity(n);
        let mut keys: Vec<KeyEntry<'a>> = Vec::with_capacity(total);
        let mut key_ids: FxMap<u128, u32> = FxMap::default();
        key_ids.reserve(total);
        for (i, (info, drafts)) in prepared.into_iter().enumerate() {
            infos.push(info);
            let first = slots.len() as u32;
            for d in drafts {
                let known = key_ids
                    .get(&d.key_hash)
                    .copied()
                    .filter(|&k| keys.get(k as usize).is_some_and(|e| e.text == d.key));
                let key = match known {
                    Some(k) => k,
                    None => {
                        let k = keys.len() as u32;
                        keys.push(KeyEntry {
                            text: d.key,
                            cut: false,
                            slots: Vec::new(),
                        });
                        // Two texts with one hash (never seen): the second is found by the trie only.
                        key_ids.entry(d.key_hash).or_insert(k);
                        k
                    }
                };
                let sid = slots.len() as u32;
                if let Some(e) = keys.get_mut(key as usize) {
                    e.slots.push(sid);
                    e.cut |= d.cut;
                }
                slots.push(Slot {
                    parent: i as u32,
                    key,
                    ts: d.ts,
                    upper: d.upper,
                    closed_by_result: d.closed_by_result,
                    seen_in_ui: d.seen_in_ui,
                    child_task_id: d.child_task_id,
                });
            }
            slots_of.push(first..slots.len() as u32);
        }
        for e in &mut keys {
            e.slots.sort_by_key(|&s| {
                let ts = slots.get(s as usize).and_then(|x| x.ts);
                (ts.is_none(), ts, s)
            });
        }
        Self {
            view,
            index_of,
            infos,
            slots,
            slots_of,
            keys,
            key_ids,
        }
    }

    /// The key whose text equals `text` (hash `hash`), if any task issued that message.
    fn key_of(&self, hash: u128, text: &str) -> Option<u32> {
        self.key_ids
            .get(&hash)
            .copied()
            .filter(|&k| self.keys.get(k as usize).is_some_and(|e| e.text == text))
    }

    fn id(&self, rank: u32) -> &'a str {
        self.view
            .get(rank as usize)
            .map_or("", |s| s.task_id.as_str())
    }

    fn slots_of(&self, rank: u32) -> std::ops::Range<u32> {
        self.slots_of.get(rank as usize).cloned().unwrap_or(0..0)
    }

    /// The texts of the keys, by key id.
    fn texts(&self) -> Vec<&'a str> {
        self.keys.iter().map(|e| e.text).collect()
    }
}

/// A task's facts and its calls, with their keys from the memo (run in parallel).
fn prepare<'a>(
    s: &'a ConversationSkeleton,
    workspace: Option<u32>,
    hashes: &TaskHashes,
    memo: &'a KeyMemo,
) -> (TaskInfo<'a>, Vec<SlotDraft<'a>>) {
    let query = hashes.query.and_then(|h| memo.get(h));
    let info = TaskInfo {
        workspace,
        created: s.created_at_ms,
        last_activity: s.last_activity_ms,
        query: query.map_or("", |e| &*e.key),
        query_hash: query.map_or(0, |e| e.key_hash),
    };
    let mut times: Vec<i64> = s.child_tasks.iter().filter_map(|c| c.ts).collect();
    times.sort_unstable();
    let drafts = s
        .child_tasks
        .iter()
        .zip(&hashes.calls)
        .filter_map(|(c, &h)| {
            let entry = memo.get(h)?;
            if entry.key.is_empty() {
                return None;
            }
            let next_call =
                c.ts.and_then(|t| times.get(times.partition_point(|&x| x <= t)).copied());
            let upper = match (c.completed_ts, next_call) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            Some(SlotDraft {
                key: &entry.key,
                key_hash: entry.key_hash,
                cut: entry.cut,
                ts: c.ts,
                upper,
                closed_by_result: c.completed_ts.is_some(),
                seen_in_ui: c
                    .sources
                    .iter()
                    .any(|k| matches!(k, ChildSource::UiAsk | ChildSource::UiPartialAsk)),
                child_task_id: c.child_task_id.as_deref().filter(|x| !x.is_empty()),
            })
        })
        .collect();
    (info, drafts)
}

/// The memo hashes of one task's texts: its instruction (when it is looked up) and each call's
/// message, in the order of `child_tasks`.
struct TaskHashes {
    query: Option<u128>,
    calls: Vec<u128>,
}

/// Seeds of the two kinds of text: an instruction is kept whole, a call's message loses a trailing
/// ellipsis.
const QUERY_SEED: u64 = 0;
const CALL_SEED: u64 = 1;

/// Normalised instruction keys kept from one pass to the next.
///
/// Normalising every instruction and call message is the costly part of a pass. A long-lived caller
/// (the task store) keeps one memo and hands it to [`reconstruct_hierarchy_with`]: a pass then
/// normalises only the texts it has not seen, and a text shared by many tasks is held once. Entries
/// are found by a 128-bit hash (XXH3) of the raw text; after each pass only the texts that pass used
/// are kept.
#[derive(Default)]
pub struct KeyMemo {
    entries: FxMap<u128, MemoEntry>,
    pass: u32,
}

struct MemoEntry {
    /// The normalised text (a call's without its trailing ellipsis).
    key: Box<str>,
    /// Hash of `key`: equal keys of different raw texts share it.
    key_hash: u128,
    cut: bool,
    /// The last pass that used it.
    used: u32,
}

impl KeyMemo {
    /// Texts held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of normalised text held.
    pub fn text_bytes(&self) -> usize {
        self.entries.values().map(|e| e.key.len()).sum()
    }

    fn get(&self, hash: u128) -> Option<&MemoEntry> {
        self.entries.get(&hash)
    }

    /// Hash the texts of this pass, normalise those not held, forget those no task uses any more.
    ///
    /// With `stored` (stored links in use), a task whose `history_item.json` names another task as
    /// its parent will never be inferred: its instruction is not looked up here (it is normalised
    /// later, only if needed).
    fn update<'s>(&mut self, view: &[&'s ConversationSkeleton], stored: bool) -> Vec<TaskHashes> {
        self.pass = self.pass.wrapping_add(1);
        let pass = self.pass;
        let hashes: Vec<TaskHashes> = view
            .par_iter()
            .map(|s| {
                let linked = stored
                    && s.stored_links
                        .history_item_parent
                        .as_deref()
                        .is_some_and(|p| !p.trim().is_empty() && p != s.task_id);
                TaskHashes {
                    query: s
                        .instruction
                        .as_deref()
                        .filter(|_| !linked)
                        .map(|t| xxh3_128_with_seed(t.as_bytes(), QUERY_SEED)),
                    calls: s
                        .child_tasks
                        .iter()
                        .map(|c| xxh3_128_with_seed(c.message.as_bytes(), CALL_SEED))
                        .collect(),
                }
            })
            .collect();
        let mut missing: Vec<(u128, &'s str, bool)> = Vec::new();
        for (s, h) in view.iter().zip(&hashes) {
            let texts = h
                .query
                .zip(s.instruction.as_deref())
                .map(|(q, t)| (q, t, false))
                .into_iter()
                .chain(
                    h.calls
                        .iter()
                        .zip(&s.child_tasks)
                        .map(|(&c, t)| (c, t.message.as_str(), true)),
                );
            for (hash, text, call) in texts {
                match self.entries.get_mut(&hash) {
                    Some(e) => e.used = pass,
                    None => missing.push((hash, text, call)),
                }
            }
        }
        missing.sort_unstable_by_key(|m| m.0);
        missing.dedup_by_key(|m| m.0);
        let made: Vec<(u128, MemoEntry)> = missing
            .par_iter()
            .map(|&(hash, text, call)| {
                let (key, cut) = if call {
                    strip_ellipsis(normalize_instruction(text))
                } else {
                    (normalize_instruction(text), false)
                };
                let entry = MemoEntry {
                    key_hash: xxh3_128_with_seed(key.as_bytes(), 0),
                    key: key.into_boxed_str(),
                    cut,
                    used: pass,
                };
                (hash, entry)
            })
            .collect();
        self.entries.retain(|_, e| e.used == pass);
        self.entries.extend(made);
        hashes
    }
}

/// Rebuild every task's parent. See the [module documentation](self).
///
/// Returns the skeletons in the order given (only those of `workspace_filter` when set) with
/// `parent_task_id`, `parent_evidence` and `root_task_id` set, and what was done. The decisions do not
/// depend on the input order (ties are broken on task ids).
pub fn reconstruct_hierarchy(
    skeletons: Vec<ConversationSkeleton>,
    opts: &HierarchyOptions,
) -> (Vec<ConversationSkeleton>, HierarchyMetrics) {
    reconstruct_hierarchy_with(skeletons, opts, &mut KeyMemo::default())
}

/// [`reconstruct_hierarchy`] with the normalised keys of earlier passes (see [`KeyMemo`]); the
/// result is the same as without them.
pub fn reconstruct_hierarchy_with(
    mut skeletons: Vec<ConversationSkeleton>,
    opts: &HierarchyOptions,
    memo: &mut KeyMemo,
) -> (Vec<ConversationSkeleton>, HierarchyMetrics) {
    let start = Instant::now();
    let mut metrics = HierarchyMetrics::default();
    // Ids on disk but left out by the filter: a parent there is not an orphan.
    let mut filtered_out: HashSet<String> = HashSet::new();
    if let Some(filter) = &opts.workspace_filter {
        let filter = normalize_workspace(filter);
        let keep = |s: &ConversationSkeleton| {
            s.metadata
                .workspace
                .as_deref()
                .map(normalize_workspace)
                .as_deref()
                == Some(filter.as_str())
        };
        filtered_out = skeletons
            .iter()
            .filter(|s| !keep(s))
            .map(|s| s.task_id.clone())
            .collect();
        skeletons.retain(keep);
    }
    let mut order: Vec<u32> = (0..skeletons.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| {
        let (sa, sb) = (skeletons.get(a as usize), skeletons.get(b as usize));
        sa.map(|s| (&s.task_id, &s.metadata.data_source))
            .cmp(&sb.map(|s| (&s.task_id, &s.metadata.data_source)))
    });
    let outcomes = {
        let view: Vec<&ConversationSkeleton> = order
            .iter()
            .filter_map(|&i| skeletons.get(i as usize))
            .collect();
        let hashes = memo.update(&view, opts.use_stored_links);
        let index = Index::build(view, &hashes, memo);
        compute(&index, &filtered_out, opts, &mut metrics)
    };
    for (&i, out) in order.iter().zip(outcomes) {
        if let Some(s) = skeletons.get_mut(i as usize) {
            s.root_task_id = if out.parent.is_some() { out.root } else { None };
            s.parent_task_id = out.parent;
            s.parent_evidence = out.evidence;
        }
    }
    metrics.issues.sort_unstable_by(|a, b| {
        a.kind
            .cmp(&b.kind)
            .then_with(|| a.task_id.cmp(&b.task_id))
            .then_with(|| a.detail.cmp(&b.detail))
    });
    metrics.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
    (skeletons, metrics)
}

fn compute(
    ix: &Index<'_>,
    filtered_out: &HashSet<String>,
    opts: &HierarchyOptions,
    metrics: &mut HierarchyMetrics,
) -> Vec<Outcome> {
    let n = ix.view.len();
    metrics.tasks = u32::try_from(n).unwrap_or(u32::MAX);
    let on_disk = |id: &str| ix.index_of.contains_key(id) || filtered_out.contains(id);
    let mut claimed = vec![false; ix.slots.len()];
    let mut out: Vec<Outcome> = (0..n).map(|_| Outcome::default()).collect();
    let texts = ix.texts();
    if opts.use_stored_links {
        stored_links(ix, &texts, &on_disk, &mut claimed, &mut out, metrics);
    }
    infer(ix, &texts, &mut claimed, &mut out, metrics);
    validate(ix, &on_disk, &mut out, metrics);
    out
}

/// Pass 1: the links the files store, with their disagreements. Claims the parent's matching call.
fn stored_links(
    ix: &Index<'_>,
    texts: &[&str],
    on_disk: &dyn Fn(&str) -> bool,
    claimed: &mut [bool],
    out: &mut [Outcome],
    metrics: &mut HierarchyMetrics,
) {
    let mut named_by: FxMap<&str, Vec<u32>> = FxMap::default();
    for (p, s) in ix.view.iter().enumerate() {
        for c in &s.stored_links.child_ids {
            named_by.entry(c.as_str()).or_default().push(p as u32);
        }
        for sid in ix.slots_of(p as u32) {
            if let Some(c) = ix.slots.get(sid as usize).and_then(|x| x.child_task_id) {
                named_by.entry(c).or_default().push(p as u32);
                if ix.index_of.contains_key(c) {
                    if let Some(f) = claimed.get_mut(sid as usize) {
                        *f = true;
                    }
                }
            }
        }
    }
    for (i, s) in ix.view.iter().enumerate() {
        let mut claims: Vec<Claim<'_>> = Vec::new();
        if let Some(p) = &s.stored_links.history_item_parent {
            claims.push(Claim {
                rank: 3,
                source: source::HISTORY_ITEM,
                parent: p,
            });
        }
        for &p in named_by
            .get(s.task_id.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            claims.push(Claim {
                rank: 2,
                source: source::CHILD_IDS,
                parent: ix.id(p),
            });
        }
        if let Some(p) = &s.stored_links.metadata_parent {
            claims.push(Claim {
                rank: 1,
                source: source::TASK_METADATA,
                parent: p,
            });
        }
        claims.retain(|c| !c.parent.trim().is_empty());
        if claims.iter().any(|c| c.parent == s.task_id) {
            let mut sources: Vec<&str> = claims
                .iter()
                .filter(|c| c.parent == s.task_id)
                .map(|c| c.source)
                .collect();
            sources.sort_unstable();
            sources.dedup();
            metrics.issues.push(HierarchyIssue {
                kind: issue::SELF_LINK.into(),
                task_id: s.task_id.clone(),
                detail: format!("stored link to itself ignored ({})", sources.join(", ")),
                candidates: vec![s.task_id.clone()],
            });
            claims.retain(|c| c.parent != s.task_id);
        }
        // Strongest source first; within one, a parent on disk, then the smallest id.
        claims.sort_by(|a, b| {
            b.rank
                .cmp(&a.rank)
                .then_with(|| on_disk(b.parent).cmp(&on_disk(a.parent)))
                .then_with(|| a.parent.cmp(b.parent))
        });
        let Some(best) = claims.first() else { continue };
        let chosen = best.parent;
        let mut conflicts: Vec<String> = claims
            .iter()
            .filter(|c| c.parent != chosen)
            .map(|c| format!("{}:{}", c.source, c.parent))
            .collect();
        conflicts.sort();
        conflicts.dedup();
        let base = if best.source == source::TASK_METADATA {
            0.9
        } else {
            1.0
        };
        if !conflicts.is_empty() {
            metrics.conflicts += 1;
            let mut cands: Vec<String> = claims.iter().map(|c| c.parent.to_owned()).collect();
            cands.sort();
            cands.dedup();
            metrics.issues.push(HierarchyIssue {
                kind: issue::CONFLICT.into(),
                task_id: s.task_id.clone(),
                detail: format!(
                    "stored sources disagree; kept {}:{} over {}",
                    best.source,
                    chosen,
                    conflicts.join(", ")
                ),
                candidates: cands,
            });
        }
        // The parent's matching call is this child's: no look-alike may claim it.
        if let Some(&p) = ix.index_of.get(chosen) {
            if let Some(sid) = matching_slot(ix, texts, i as u32, p, claimed) {
                if let Some(f) = claimed.get_mut(sid as usize) {
                    *f = true;
                }
            }
        }
        if let Some(o) = out.get_mut(i) {
            o.parent = Some(chosen.to_owned());
            o.evidence = Some(ParentEvidence {
                source: best.source.to_owned(),
                confidence: if conflicts.is_empty() {
                    base
                } else {
                    round3(base - 0.2)
                },
                matched_prefix: None,
                new_task_ts: None,
                match_kind: None,
                gap_ms: None,
                conflicts,
            });
        }
    }
}

/// The unclaimed call of `parent` whose message matches `child`'s instruction, closest in time.
fn matching_slot(
    ix: &Index<'_>,
    texts: &[&str],
    child: u32,
    parent: u32,
    claimed: &[bool],
) -> Option<u32> {
    let info = ix.infos.get(child as usize)?;
    let open: Vec<u32> = ix
        .slots_of(parent)
        .filter(|&sid| !claimed.get(sid as usize).copied().unwrap_or(true))
        .collect();
    if open.is_empty() {
        return None;
    }
    let lazy;
    let query = if info.query.is_empty() {
        lazy = normalize_instruction(ix.view.get(child as usize)?.instruction.as_deref()?);
        lazy.as_str()
    } else {
        info.query
    };
    open.into_iter()
        .filter_map(|sid| {
            let sl = ix.slots.get(sid as usize)?;
            let k = ix.keys.get(sl.key as usize)?;
            match_kind(texts.get(sl.key as usize)?, query, k.cut)?;
            let gap = match (info.created, sl.ts) {
                (Some(c), Some(t)) => (c - t).abs(),
                _ => i64::MAX,
            };
            Some((gap, sid))
        })
        .min()
        .map(|(_, sid)| sid)
}

/// Pass 2: inference for every task still without a parent.
fn infer(
    ix: &Index<'_>,
    texts: &[&str],
    claimed: &mut [bool],
    out: &mut [Outcome],
    metrics: &mut HierarchyMetrics,
) {
    let pending: Vec<u32> = (0..ix.view.len() as u32)
        .filter(|&i| {
            out.get(i as usize).is_some_and(|o| o.parent.is_none())
                && ix
                    .infos
                    .get(i as usize)
                    .is_some_and(|x| !x.query.is_empty())
        })
        .collect();
    if pending.is_empty() || ix.slots.is_empty() {
        return;
    }
    // Exact matches first (a hash lookup), then the radix trie for the rest.
    let frozen: &[bool] = claimed;
    let mut per_child: Vec<Vec<Edge>> = pending
        .par_iter()
        .map(|&c| {
            let Some(info) = ix.infos.get(c as usize) else {
                return Vec::new();
            };
            let q = info.query;
            match ix.key_of(info.query_hash, q) {
                Some(k) => slot_edges(ix, c, MatchKind::Exact, q.len(), k, frozen),
                None => Vec::new(),
            }
        })
        .collect();
    let fallback: Vec<usize> = per_child
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_empty())
        .map(|(i, _)| i)
        .collect();
    if !fallback.is_empty() {
        let tries = build_tries(texts);
        let found: Vec<(usize, Vec<Edge>)> = fallback
            .par_iter()
            .map(|&i| {
                let c = pending.get(i).copied().unwrap_or(0);
                (i, prefix_edges(ix, c, texts, &tries, frozen))
            })
            .collect();
        for (i, e) in found {
            if let Some(slot) = per_child.get_mut(i) {
                *slot = e;
            }
        }
    }
    let mut edges: Vec<Edge> = per_child.iter().flatten().copied().collect();
    edges.sort_unstable_by_key(Edge::order_key);
    let mut edges_of: Vec<&[Edge]> = vec![&[]; ix.view.len()];
    for (&c, e) in pending.iter().zip(per_child.iter()) {
        if let Some(x) = edges_of.get_mut(c as usize) {
            *x = e.as_slice();
        }
    }
    let mut done = vec![false; ix.view.len()];
    let mut assigned: Vec<Edge> = Vec::new();
    let mut ambiguous: Vec<(Edge, Vec<u32>)> = Vec::new();
    for e in &edges {
        let (c, s) = (e.child as usize, e.slot as usize);
        if done.get(c).copied().unwrap_or(true) || claimed.get(s).copied().unwrap_or(true) {
            continue;
        }
        let is_rival = |o: &&Edge| {
            o.parent != e.parent
                && !claimed.get(o.slot as usize).copied().unwrap_or(true)
                && o.gap.is_none() == e.gap.is_none()
                && match (o.gap, e.gap) {
                    (Some(a), Some(b)) => a.abs() - b.abs() <= AMBIGUITY_MS,
                    _ => true,
                }
        };
        let mine = edges_of.get(c).copied().unwrap_or_default();
        if let Some(d) = done.get_mut(c) {
            *d = true;
        }
        if mine.iter().any(|o| is_rival(&o)) {
            // The issue is written after the loop, in parallel; the rivals are those of now.
            let rivals: Vec<u32> = mine.iter().filter(is_rival).map(|x| x.parent).collect();
            ambiguous.push((*e, rivals));
            continue;
        }
        if let Some(f) = claimed.get_mut(s) {
            *f = true;
        }
        assigned.push(*e);
    }
    metrics.ambiguous += u32::try_from(ambiguous.len()).unwrap_or(u32::MAX);
    let issues: Vec<HierarchyIssue> = ambiguous
        .par_iter()
        .map(|(e, rivals)| {
            let mut cands: Vec<String> = std::iter::once(e.parent)
                .chain(rivals.iter().copied())
                .map(|p| ix.id(p).to_owned())
                .collect();
            cands.sort_unstable();
            cands.dedup();
            HierarchyIssue {
                kind: issue::AMBIGUOUS.into(),
                task_id: ix.id(e.child).to_owned(),
                detail: match e.gap {
                    Some(g) => format!(
                        "{} parents issued this instruction within {AMBIGUITY_MS} ms of each other (best gap {g} ms); left unlinked",
                        cands.len()
                    ),
                    None => format!(
                        "{} parents issued this instruction and no timestamps separate them; left unlinked",
                        cands.len()
                    ),
                },
                candidates: cands,
            }
        })
        .collect();
    metrics.issues.extend(issues);
    // The evidence of each link (allocations only), in parallel.
    let evidence: Vec<(usize, String, ParentEvidence)> = assigned
        .par_iter()
        .map(|e| {
            let c = e.child as usize;
            let slot = ix.slots.get(e.slot as usize);
            let query_len = ix.infos.get(c).map_or(1, |x| x.query.len().max(1));
            let mut confidence = match e.kind {
                MatchKind::Exact => 0.95,
                MatchKind::Prefix => 0.6 + 0.3 * (e.key_len as f64 / query_len as f64).min(1.0),
            };
            if e.gap.is_none() {
                confidence -= 0.25;
            }
            if !e.workspace_known {
                confidence -= 0.1;
            }
            if !slot.is_some_and(|x| x.closed_by_result) {
                confidence -= 0.05;
            }
            let matched = slot
                .and_then(|x| texts.get(x.key as usize))
                .map(|t| t.chars().take(MATCHED_PREFIX_CHARS).collect::<String>());
            let ev = ParentEvidence {
                source: source::INSTRUCTION_PREFIX.to_owned(),
                confidence: round3(confidence.clamp(0.05, 0.99)),
                matched_prefix: matched,
                new_task_ts: slot.and_then(|x| x.ts),
                match_kind: Some(
                    match e.kind {
                        MatchKind::Exact => "exact",
                        MatchKind::Prefix => "prefix",
                    }
                    .to_owned(),
                ),
                gap_ms: e.gap,
                conflicts: Vec::new(),
            };
            (c, ix.id(e.parent).to_owned(), ev)
        })
        .collect();
    for (c, parent, ev) in evidence {
        if let Some(o) = out.get_mut(c) {
            o.parent = Some(parent);
            o.evidence = Some(ev);
        }
    }
}

/// The radix tries (one per shard of first bytes, built in parallel) over the first
/// [`TRIE_KEY_BYTES`] of every key; each node lists the keys sharing it, longest first.
fn build_tries<'t>(texts: &[&'t str]) -> Vec<Trie<&'t str, Vec<u32>>> {
    let mut groups: FxMap<&'t str, Vec<u32>> = FxMap::default();
    for (k, t) in texts.iter().enumerate() {
        let cut = floor_char_boundary(t, TRIE_KEY_BYTES);
        if let Some(head) = t.get(..cut).filter(|h| !h.is_empty()) {
            groups.entry(head).or_default().push(k as u32);
        }
    }
    let mut shards: Vec<Vec<(&'t str, Vec<u32>)>> = (0..TRIE_SHARDS).map(|_| Vec::new()).collect();
    for (head, mut ids) in groups {
        ids.sort_by_key(|&k| {
            (
                std::cmp::Reverse(texts.get(k as usize).map_or(0, |t| t.len())),
                k,
            )
        });
        if let Some(s) = shards.get_mut(shard_of(head)) {
            s.push((head, ids));
        }
    }
    shards
        .into_par_iter()
        .map(|mut entries| {
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut trie = Trie::new();
            for (head, ids) in entries {
                trie.insert(head, ids);
            }
            trie
        })
        .collect()
}

/// The acceptable slots for task `c` through the trie: those of the longest stored message that is a
/// prefix of its normalised instruction (word-aligned unless the record was cut), closest in time first.
fn prefix_edges(
    ix: &Index<'_>,
    c: u32,
    texts: &[&str],
    tries: &[Trie<&str, Vec<u32>>],
    claimed: &[bool],
) -> Vec<Edge> {
    let Some(info) = ix.infos.get(c as usize) else {
        return Vec::new();
    };
    let q = info.query;
    let Some(trie) = tries.get(shard_of(q)) else {
        return Vec::new();
    };
    let mut probe_len = floor_char_boundary(q, TRIE_KEY_BYTES);
    for _ in 0..MAX_ANCESTOR_STEPS {
        let Some(probe) = q.get(..probe_len) else {
            break;
        };
        let Some(sub) = trie.get_ancestor(probe) else {
            break;
        };
        let node_len = sub.key().map_or(0, |k| k.len());
        for &k in sub
            .value()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .take(MAX_KEYS_SCANNED)
        {
            let Some(text) = texts.get(k as usize) else {
                continue;
            };
            if text.len() > q.len() {
                continue;
            }
            let Some(kind) = ix
                .keys
                .get(k as usize)
                .and_then(|e| match_kind(text, q, e.cut))
            else {
                continue;
            };
            let edges = slot_edges(ix, c, kind, text.len(), k, claimed);
            if !edges.is_empty() {
                return edges;
            }
        }
        if node_len == 0 {
            break;
        }
        probe_len = floor_char_boundary(q, node_len - 1);
    }
    Vec::new()
}

/// The acceptable calls among those of message `key` for child `c`, closest in time first.
fn slot_edges(
    ix: &Index<'_>,
    c: u32,
    kind: MatchKind,
    key_len: usize,
    key: u32,
    claimed: &[bool],
) -> Vec<Edge> {
    let (Some(entry), Some(info)) = (ix.keys.get(key as usize), ix.infos.get(c as usize)) else {
        return Vec::new();
    };
    let list = entry.slots.as_slice();
    let ts_of = |s: u32| ix.slots.get(s as usize).and_then(|x| x.ts);
    let timed = list.partition_point(|&s| ts_of(s).is_some());
    let mut out: Vec<Edge> = Vec::new();
    let accept = |sid: u32, out: &mut Vec<Edge>| {
        let Some(sl) = ix.slots.get(sid as usize) else {
            return;
        };
        if sl.parent == c || claimed.get(sid as usize).copied().unwrap_or(true) {
            return;
        }
        let Some(parent_info) = ix.infos.get(sl.parent as usize) else {
            return;
        };
        let workspace_known = match (&info.workspace, &parent_info.workspace) {
            (Some(a), Some(b)) => {
                if a != b {
                    return;
                }
                true
            }
            _ => false,
        };
        let gap = match (info.created, sl.ts) {
            (Some(created), Some(ts)) => {
                let tol = if sl.seen_in_ui {
                    UI_TOLERANCE_MS
                } else {
                    API_TOLERANCE_MS
                };
                if created < ts - tol {
                    return;
                }
                if sl.upper.is_some_and(|u| created > u + UPPER_TOLERANCE_MS) {
                    return;
                }
                // A call nothing closed adopts a child within a day, not a look-alike a week later.
                if sl.upper.is_none() && created - ts > MAX_OPEN_GAP_MS {
                    return;
                }
                // A parent that went on well after the call had its child by then.
                if parent_info.last_activity.is_some_and(|la| {
                    la > ts + PARENT_ACTIVITY_SLACK_MS && created > la + PARENT_ACTIVITY_SLACK_MS
                }) {
                    return;
                }
                Some(created - ts)
            }
            _ => None,
        };
        out.push(Edge {
            child: c,
            slot: sid,
            parent: sl.parent,
            kind,
            key_len: u32::try_from(key_len).unwrap_or(u32::MAX),
            gap,
            workspace_known,
        });
    };
    let timed_list = list.get(..timed).unwrap_or_default();
    match info.created {
        Some(created) => {
            // Calls up to the child's creation (plus tolerance), nearest first.
            let end = timed_list
                .partition_point(|&s| ts_of(s).is_some_and(|t| t <= created + API_TOLERANCE_MS));
            for &sid in timed_list
                .get(..end)
                .unwrap_or_default()
                .iter()
                .rev()
                .take(MAX_SLOTS_SCANNED)
            {
                accept(sid, &mut out);
                if out.len() >= MAX_CANDIDATES {
                    break;
                }
            }
        }
        None => {
            for &sid in timed_list.iter().take(MAX_SLOTS_SCANNED) {
                accept(sid, &mut out);
                if out.len() >= MAX_CANDIDATES {
                    break;
                }
            }
        }
    }
    if out.len() < MAX_CANDIDATES {
        for &sid in list
            .get(timed..)
            .unwrap_or_default()
            .iter()
            .take(MAX_SLOTS_SCANNED)
        {
            accept(sid, &mut out);
            if out.len() >= MAX_CANDIDATES {
                break;
            }
        }
    }
    out.sort_by_key(Edge::order_key);
    out
}

/// Pass 3: cycles broken at their weakest link, orphans, depths, roots, counts.
fn validate(
    ix: &Index<'_>,
    on_disk: &dyn Fn(&str) -> bool,
    out: &mut [Outcome],
    metrics: &mut HierarchyMetrics,
) {
    let n = ix.view.len();
    let mut parent_idx: Vec<Option<u32>> = out
        .iter()
        .map(|o| {
            o.parent
                .as_deref()
                .and_then(|p| ix.index_of.get(p).copied())
        })
        .collect();
    let mut state = vec![0u8; n]; // 0 new, 1 on the current path, 2 done
    let mut path: Vec<usize> = Vec::new();
    for start_node in 0..n {
        if state.get(start_node).copied() != Some(0) {
            continue;
        }
        path.clear();
        let mut cur = Some(start_node);
        while let Some(x) = cur {
            match state.get(x).copied() {
                Some(0) => {
                    if let Some(st) = state.get_mut(x) {
                        *st = 1;
                    }
                    path.push(x);
                    cur = parent_idx.get(x).copied().flatten().map(|p| p as usize);
                }
                Some(1) => {
                    // A cycle: the members are the path from `x` on.
                    let from = path.iter().position(|&p| p == x).unwrap_or(0);
                    let members: &[usize] = path.get(from..).unwrap_or_default();
                    if let Some(&weakest) = members.iter().min_by(|&&a, &&b| weaker(a, b, out, ix))
                    {
                        let ids: Vec<String> = members
                            .iter()
                            .map(|&m| ix.id(m as u32).to_owned())
                            .collect();
                        let wid = ix.id(weakest as u32).to_owned();
                        let (wparent, wsource) =
                            out.get(weakest)
                                .map_or((String::new(), String::new()), |o| {
                                    (
                                        o.parent.clone().unwrap_or_default(),
                                        o.evidence
                                            .as_ref()
                                            .map(|e| e.source.clone())
                                            .unwrap_or_default(),
                                    )
                                });
                        metrics.cycles_broken += 1;
                        metrics.issues.push(HierarchyIssue {
                            kind: issue::CYCLE.into(),
                            task_id: wid.clone(),
                            detail: format!(
                                "cycle of {} tasks broken by dropping the link {wid} → {wparent} ({wsource})",
                                members.len()
                            ),
                            candidates: ids,
                        });
                        if let Some(o) = out.get_mut(weakest) {
                            o.parent = None;
                            o.evidence = None;
                        }
                        if let Some(p) = parent_idx.get_mut(weakest) {
                            *p = None;
                        }
                    }
                    break;
                }
                _ => break,
            }
        }
        for &p in &path {
            if let Some(st) = state.get_mut(p) {
                *st = 2;
            }
        }
    }

    // Depth and top of each chain, following parents upwards (memoised; the graph is now a forest).
    let mut depth: Vec<Option<u32>> = vec![None; n];
    let mut top: Vec<u32> = (0..n as u32).collect();
    let mut chain: Vec<usize> = Vec::new();
    for i in 0..n {
        if depth.get(i).copied().flatten().is_some() {
            continue;
        }
        chain.clear();
        let mut cur = i;
        while depth.get(cur).copied().flatten().is_none() && chain.len() <= n {
            chain.push(cur);
            match parent_idx.get(cur).copied().flatten() {
                Some(p) => cur = p as usize,
                None => break,
            }
        }
        let (mut d, t) = match depth.get(cur).copied().flatten() {
            Some(d) => (d, top.get(cur).copied().unwrap_or(cur as u32)),
            None => {
                // The last of the chain has no parent in the set: it tops its chain.
                let Some(r) = chain.pop() else { continue };
                if let Some(slot) = depth.get_mut(r) {
                    *slot = Some(0);
                }
                (0, r as u32)
            }
        };
        while let Some(x) = chain.pop() {
            d += 1;
            if let Some(slot) = depth.get_mut(x) {
                *slot = Some(d);
            }
            if let Some(slot) = top.get_mut(x) {
                *slot = t;
            }
        }
    }
    // rootTaskId: the top's own parent id when that parent is not in the set, else the top.
    let roots: Vec<Option<String>> = (0..n)
        .into_par_iter()
        .map(|i| {
            out.get(i)?.parent.as_ref()?;
            let t = top.get(i).copied().unwrap_or(i as u32);
            Some(
                out.get(t as usize)
                    .and_then(|o| o.parent.clone())
                    .unwrap_or_else(|| ix.id(t).to_owned()),
            )
        })
        .collect();

    let mut roots = roots;
    for (i, o) in out.iter_mut().enumerate() {
        metrics.max_depth = metrics
            .max_depth
            .max(depth.get(i).copied().flatten().unwrap_or(0));
        o.root = roots.get_mut(i).and_then(Option::take);
        let Some(p) = o.parent.as_deref() else {
            metrics.roots += 1;
            continue;
        };
        if !on_disk(p) {
            metrics.orphans += 1;
            metrics.issues.push(HierarchyIssue {
                kind: issue::ORPHAN.into(),
                task_id: ix.id(i as u32).to_owned(),
                detail: format!("parent {p} is not on disk"),
                candidates: vec![p.to_owned()],
            });
        } else if parent_idx.get(i).copied().flatten().is_none() {
            metrics.roots += 1;
        }
        let l = &mut metrics.links_by_source;
        match o.evidence.as_ref().map(|e| e.source.as_str()) {
            Some(source::HISTORY_ITEM) => l.history_item += 1,
            Some(source::CHILD_IDS) => l.child_ids += 1,
            Some(source::TASK_METADATA) => l.task_metadata += 1,
            Some(_) => l.instruction_prefix += 1,
            None => {}
        }
    }
}

/// Which of two cycle members holds the weaker link (`Less` = `a`): the weakest source, then the
/// lowest confidence, then the earliest-created task (it becomes the root), then the smallest id.
fn weaker(a: usize, b: usize, out: &[Outcome], ix: &Index<'_>) -> Ordering {
    let key = |i: usize| {
        let ev = out.get(i).and_then(|o| o.evidence.as_ref());
        (
            ev.map_or(0, |e| source_rank(&e.source)),
            ev.map_or(0.0, |e| e.confidence),
            ix.view
                .get(i)
                .and_then(|s| s.created_at_ms)
                .unwrap_or(i64::MAX),
        )
    };
    let (ka, kb) = (key(a), key(b));
    ka.0.cmp(&kb.0)
        .then_with(|| ka.1.total_cmp(&kb.1))
        .then_with(|| ka.2.cmp(&kb.2))
        .then_with(|| ix.id(a as u32).cmp(ix.id(b as u32)))
}

// ---------------------------------------------------------------------------------------------
// Trees and walks
// ---------------------------------------------------------------------------------------------

struct Forest<'a> {
    items: Vec<&'a ConversationSkeleton>,
    index: FxMap<&'a str, usize>,
    children: Vec<Vec<usize>>,
}

impl<'a> Forest<'a> {
    fn new(skeletons: &'a [ConversationSkeleton], workspace: Option<&str>) -> Self {
        let ws = workspace.map(normalize_workspace);
        let mut items: Vec<&ConversationSkeleton> = skeletons
            .iter()
            .filter(|s| match &ws {
                Some(w) => {
                    s.metadata
                        .workspace
                        .as_deref()
                        .map(normalize_workspace)
                        .as_deref()
                        == Some(w.as_str())
                }
                None => true,
            })
            .collect();
        items.sort_unstable_by(|a, b| {
            a.task_id
                .cmp(&b.task_id)
                .then_with(|| a.metadata.data_source.cmp(&b.metadata.data_source))
        });
        let mut index: FxMap<&str, usize> = FxMap::default();
        index.reserve(items.len());
        for (i, s) in items.iter().enumerate() {
            index.entry(s.task_id.as_str()).or_insert(i);
        }
        let mut children = vec![Vec::new(); items.len()];
        for (i, s) in items.iter().enumerate() {
            if let Some(&p) = s.parent_task_id.as_deref().and_then(|p| index.get(p)) {
                if p != i {
                    if let Some(c) = children.get_mut(p) {
                        c.push(i);
                    }
                }
            }
        }
        let order = |i: &usize| {
            let s = items.get(*i);
            (
                s.and_then(|s| s.created_at_ms).unwrap_or(i64::MAX),
                s.map(|s| s.task_id.as_str()).unwrap_or_default(),
            )
        };
        for c in &mut children {
            c.sort_by(|a, b| order(a).cmp(&order(b)));
        }
        Self {
            items,
            index,
            children,
        }
    }

    fn parent_of(&self, i: usize) -> Option<usize> {
        let s = self.items.get(i)?;
        let p = *self.index.get(s.parent_task_id.as_deref()?)?;
        (p != i).then_some(p)
    }
}

/// The forest of tasks (or the subtree of `root_id`), children in creation order, cycle-safe.
pub fn get_task_tree(skeletons: &[ConversationSkeleton], opts: &TreeOptions) -> Vec<TaskTreeNode> {
    build_tree(
        skeletons,
        opts,
        |s, depth| TaskTreeNode {
            task_id: s.task_id.clone(),
            title: s.metadata.title.clone(),
            created_at: s.metadata.created_at.clone(),
            workspace: s.metadata.workspace.clone(),
            mode: s.metadata.mode.clone(),
            parent_evidence: s.parent_evidence.clone(),
            depth,
            children: Vec::new(),
        },
        |n, children| n.children = children,
    )
}

/// [`get_task_tree`] borrowing from the skeletons: the same nodes and the same JSON, without a
/// copy of every string (what a caller that only serialises the tree wants).
pub fn get_task_tree_view<'a>(
    skeletons: &'a [ConversationSkeleton],
    opts: &TreeOptions,
) -> Vec<TaskTreeView<'a>> {
    build_tree(
        skeletons,
        opts,
        |s, depth| TaskTreeView {
            task_id: &s.task_id,
            title: s.metadata.title.as_deref(),
            created_at: &s.metadata.created_at,
            workspace: s.metadata.workspace.as_deref(),
            mode: s.metadata.mode.as_deref(),
            parent_evidence: s.parent_evidence.as_ref(),
            depth,
            children: Vec::new(),
        },
        |n, children| n.children = children,
    )
}

/// The tree of `opts` with nodes made by `node` (from a skeleton and its depth) and given their
/// children by `adopt`: a breadth-first listing, node contents in parallel, then assembly
/// bottom-up by moves (no recursion, whatever the depth).
fn build_tree<'a, N: Send>(
    skeletons: &'a [ConversationSkeleton],
    opts: &TreeOptions,
    node: impl Fn(&'a ConversationSkeleton, u32) -> N + Sync,
    adopt: impl Fn(&mut N, Vec<N>),
) -> Vec<N> {
    let forest = Forest::new(skeletons, opts.workspace.as_deref());
    let roots: Vec<usize> = match &opts.root_id {
        Some(id) => forest.index.get(id.as_str()).copied().into_iter().collect(),
        None => {
            let mut r: Vec<usize> = (0..forest.items.len())
                .filter(|&i| forest.parent_of(i).is_none())
                .collect();
            let key = |i: usize| {
                let s = forest.items.get(i);
                (
                    s.and_then(|s| s.created_at_ms).unwrap_or(i64::MAX),
                    s.map(|s| s.task_id.as_str()).unwrap_or_default(),
                )
            };
            r.sort_by(|&a, &b| key(a).cmp(&key(b)));
            r
        }
    };
    // Breadth-first listing (index, depth, parent position).
    let mut visited = vec![false; forest.items.len()];
    let mut listing: Vec<(usize, u32, Option<usize>)> = Vec::new();
    let mut queue: VecDeque<(usize, u32, Option<usize>)> =
        roots.into_iter().map(|r| (r, 0, None)).collect();
    while let Some((i, d, parent_pos)) = queue.pop_front() {
        if visited.get(i).copied().unwrap_or(true) {
            continue;
        }
        if let Some(v) = visited.get_mut(i) {
            *v = true;
        }
        let pos = listing.len();
        listing.push((i, d, parent_pos));
        if opts.max_depth.is_none_or(|m| d < m) {
            for &c in forest
                .children
                .get(i)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                queue.push_back((c, d + 1, Some(pos)));
            }
        }
    }
    let mut shells: Vec<Option<N>> = listing
        .par_iter()
        .map(|&(i, depth, _)| forest.items.get(i).map(|&s| node(s, depth)))
        .collect();
    let mut kids: Vec<Vec<N>> = (0..listing.len()).map(|_| Vec::new()).collect();
    let mut top: Vec<N> = Vec::new();
    for pos in (0..listing.len()).rev() {
        let Some(&(_, _, parent_pos)) = listing.get(pos) else {
            continue;
        };
        let Some(mut n) = shells.get_mut(pos).and_then(Option::take) else {
            continue;
        };
        let mut children = kids.get_mut(pos).map(std::mem::take).unwrap_or_default();
        children.reverse();
        adopt(&mut n, children);
        match parent_pos.and_then(|p| kids.get_mut(p)) {
            Some(k) => k.push(n),
            None => top.push(n),
        }
    }
    top.reverse();
    top
}

/// The ancestors of `task_id`, nearest first. A parent id that is not among `skeletons` is listed
/// and ends the walk. Cycle-safe.
pub fn ancestors(skeletons: &[ConversationSkeleton], task_id: &str) -> Vec<String> {
    let index: HashMap<&str, &ConversationSkeleton> = skeletons
        .iter()
        .rev()
        .map(|s| (s.task_id.as_str(), s))
        .collect();
    let mut out = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    seen.insert(task_id);
    let mut cur = index.get(task_id).and_then(|s| s.parent_task_id.as_deref());
    while let Some(p) = cur {
        if !seen.insert(p) {
            break;
        }
        out.push(p.to_owned());
        cur = index.get(p).and_then(|s| s.parent_task_id.as_deref());
    }
    out
}

/// The descendants of `task_id`, breadth-first, siblings in creation order. Cycle-safe.
pub fn descendants(skeletons: &[ConversationSkeleton], task_id: &str) -> Vec<String> {
    let forest = Forest::new(skeletons, None);
    let Some(&start) = forest.index.get(task_id) else {
        return Vec::new();
    };
    let mut seen = vec![false; forest.items.len()];
    if let Some(s) = seen.get_mut(start) {
        *s = true;
    }
    let mut out = Vec::new();
    let mut queue = VecDeque::from([start]);
    while let Some(i) = queue.pop_front() {
        for &c in forest
            .children
            .get(i)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            if seen.get(c).copied().unwrap_or(true) {
                continue;
            }
            if let Some(s) = seen.get_mut(c) {
                *s = true;
            }
            if let Some(s) = forest.items.get(c) {
                out.push(s.task_id.clone());
            }
            queue.push_back(c);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Legacy comparison
// ---------------------------------------------------------------------------------------------

/// Legacy `isRootTask` on a lower-cased key (legacy-server.md §5.2): the case-sensitive checks can
/// only fire on `planification`.
fn legacy_is_root(key: &str) -> bool {
    const STARTS: [&str; 11] = [
        "bonjour",
        "hello",
        "je voudrais",
        "j'aimerais",
        "peux-tu",
        "aide-moi",
        "créer un",
        "planifier",
        "planification",
        "texte unique",
        "mission secondaire",
    ];
    key.contains("planification")
        || key.encode_utf16().count() < 10
        || STARTS.iter().any(|p| key.to_lowercase().starts_with(p))
}

/// The links the legacy engine finds by content alone on a tasks directory: legacy analysis of each
/// task (legacy child prefixes, legacy `truncatedInstruction`), every prefix in the legacy index,
/// then the strict engine's phase 2 for every task (stored parents ignored): `isRootTask`, the
/// exact-trie `searchExactPrefix`, several parents narrowed by workspace string equality and
/// closest earlier creation, then `validateParentCandidate` (dates present, parent not more than 1 s
/// after the child, no cycle, same workspace string). Pairs are `(child, parent)`, sorted.
pub fn legacy_links(tasks_dir: &Path) -> Vec<(String, String)> {
    let Ok((dirs, _)) = crate::scan::list_task_dirs(tasks_dir) else {
        return Vec::new();
    };
    let mut analyses: Vec<roo_legacy::LegacyAnalysis> = dirs
        .par_iter()
        .filter_map(|(_, dir)| roo_legacy::analyze_task_legacy(dir))
        .collect();
    analyses.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    let mut index = roo_legacy::LegacyInstructionIndex::new();
    for a in &analyses {
        for p in &a.child_task_instruction_prefixes {
            index.add_instruction(&a.task_id, p);
        }
    }
    let by_id: HashMap<&str, &roo_legacy::LegacyAnalysis> =
        analyses.iter().map(|a| (a.task_id.as_str(), a)).collect();
    let mut parent: HashMap<String, String> = HashMap::new();
    for a in &analyses {
        let Some(ti) = a.truncated_instruction.as_deref().filter(|t| !t.is_empty()) else {
            continue;
        };
        if legacy_is_root(ti) {
            continue;
        }
        let found = index.search_exact_prefix(ti, roo_legacy::DEFAULT_PREFIX_LEN);
        let candidate: Option<String> = match found.as_slice() {
            [] => None,
            [(p, _)] => (p != &a.task_id).then(|| p.clone()),
            many => {
                let others: Vec<&roo_legacy::LegacyAnalysis> = many
                    .iter()
                    .filter(|(p, _)| p != &a.task_id)
                    .filter_map(|(p, _)| by_id.get(p.as_str()).copied())
                    .collect();
                let same_ws: Vec<&roo_legacy::LegacyAnalysis> = others
                    .iter()
                    .copied()
                    .filter(|o| o.workspace.is_some() && o.workspace == a.workspace)
                    .collect();
                let pool = if same_ws.is_empty() { others } else { same_ws };
                let child_time = a.created_at_ms;
                pool.iter()
                    .filter_map(|o| match (o.created_at_ms, child_time) {
                        (Some(pt), Some(ct)) if pt <= ct => Some((ct - pt, o.task_id.clone())),
                        _ => None,
                    })
                    .min_by(|x, y| x.0.total_cmp(&y.0))
                    .map(|(_, id)| id)
            }
        };
        let Some(p) = candidate else { continue };
        let Some(pa) = by_id.get(p.as_str()) else {
            continue;
        };
        let (Some(pt), Some(ct)) = (pa.created_at_ms, a.created_at_ms) else {
            continue;
        };
        if pt > ct + 1000.0 {
            continue;
        }
        // wouldCreateCycle: walk up from the parent.
        let mut seen: HashSet<&str> = HashSet::new();
        let mut cur = Some(p.as_str());
        let mut cycle = false;
        while let Some(x) = cur {
            if x == a.task_id || !seen.insert(x) {
                cycle = true;
                break;
            }
            cur = parent.get(x).map(String::as_str);
        }
        if cycle {
            continue;
        }
        if let (Some(wa), Some(wp)) = (&a.workspace, &pa.workspace) {
            if wa != wp {
                continue;
            }
        }
        parent.insert(a.task_id.clone(), p);
    }
    let mut out: Vec<(String, String)> = parent.into_iter().collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_normalisation() {
        for (a, b) in [
            ("D:\\dev\\roo-extensions\\", "d:/dev/roo-extensions"),
            ("d:/Dev/Roo-Extensions", "d:/dev/roo-extensions"),
            ("/d:/dev/roo-extensions/", "d:/dev/roo-extensions"),
            ("file:///d:/dev/roo-extensions", "d:/dev/roo-extensions"),
            ("\\\\?\\D:\\dev\\roo-extensions", "d:/dev/roo-extensions"),
            ("/home/u//proj/", "/home/u/proj"),
            ("\\\\server\\share\\x", "//server/share/x"),
            ("/", "/"),
            ("  C:\\  ", "c:"),
        ] {
            assert_eq!(normalize_workspace(a), b, "{a}");
        }
    }

    #[test]
    fn prefix_matching_rules() {
        let long = "implement the parser for the configuration files and write tests";
        assert!(matches!(
            match_kind(long, long, false),
            Some(MatchKind::Exact)
        ));
        let q = format!("{long} for every era");
        assert!(matches!(
            match_kind(long, &q, false),
            Some(MatchKind::Prefix)
        ));
        // Not word-aligned, unless the record was visibly cut.
        assert!(match_kind("implement the parser for the configuration file", &q, false).is_none());
        assert!(match_kind("implement the parser for the configuration file", &q, true).is_some());
        // Too short a share of the query.
        assert!(match_kind("implement the parser for", &q, false).is_none());
        assert!(match_kind("implement the parser for", &q, true).is_some());
        assert!(match_kind("implement", &q, true).is_none());
    }

    #[test]
    fn ellipsis_stripped() {
        assert_eq!(
            strip_ellipsis("do the thing ...".into()),
            ("do the thing".into(), true)
        );
        assert_eq!(
            strip_ellipsis("do the thing…".into()),
            ("do the thing".into(), true)
        );
        assert_eq!(strip_ellipsis("plain ".into()), ("plain".into(), false));
    }
}
