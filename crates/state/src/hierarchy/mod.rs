//! Parent/child hierarchy of tasks: stored links first, then inference from `newTask` instructions.
//!
//! 1. **Stored links** (unless [`HierarchyOptions::use_stored_links`] is off): the child's own
//!    `history_item.json` `parentTaskId`; a parent naming the child (its `history_item.json` `childIds`,
//!    or a `Delegated to child task <id>` result on one of its `newTask` calls); the child's
//!    `task_metadata.json` parent. When they name different parents the strongest source wins (in that
//!    order) and the disagreement is written into the evidence (`conflicts`) and the issues. A task
//!    whose own `history_item.json` names no parent while a parent still lists it (Zoo Code's
//!    "Abandon subtask" clears the child's side only) keeps no parent, stored or inferred, and is
//!    reported as `abandoned`.
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
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_128_with_seed;

mod index;
mod infer;
mod memo;
mod stored;
mod tree;
mod tree_json;
mod validate;

use index::*;
use infer::*;
pub use memo::KeyMemo;
use memo::TaskHashes;
use stored::*;
pub use tree::{
    ancestors, descendants, get_task_tree, get_task_tree_view, get_task_trees_view,
    get_task_trees_view_among,
};
pub use tree_json::{task_identity, tree_json, JsonText, TreeText};
use validate::*;

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
    /// A subtask whose own `history_item.json` names no parent while a parent still lists it
    /// (Zoo Code's "Abandon subtask"): it stays without a parent.
    pub const ABANDONED: &str = "abandoned";
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LinksBySource {
    pub history_item: u32,
    pub child_ids: u32,
    pub task_metadata: u32,
    pub instruction_prefix: u32,
}

/// Something the reconstruction met and did not hide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HierarchyIssue {
    /// `conflict`, `ambiguous`, `cycle`, `orphan`, `self_link` or `abandoned`.
    #[cfg_attr(
        feature = "ts",
        ts(
            type = "\"conflict\" | \"ambiguous\" | \"cycle\" | \"orphan\" | \"self_link\" | \"abandoned\""
        )
    )]
    pub kind: String,
    pub task_id: String,
    pub detail: String,
    /// The parent ids in play (conflict, ambiguous, orphan; for abandoned, the parents that still
    /// list the task) or the members of the cycle.
    pub candidates: Vec<String>,
}

/// What [`reconstruct_hierarchy`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    /// Subtasks a parent still lists while their own `history_item.json` names no parent (Zoo
    /// Code's "Abandon subtask"): left without a parent.
    #[serde(default)]
    pub abandoned: u32,
    pub max_depth: u32,
    pub elapsed_ms: f64,
    pub issues: Vec<HierarchyIssue>,
}

/// A node of [`get_task_tree`]: where the task sits (depth, parent link and its evidence) and
/// what a tree shows of it (title, dates, counts, completion). The fields after `children` are
/// always set by [`get_task_tree`]; they are optional so that nodes written before them still
/// read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct TaskTreeNode {
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Written as a [`TreeEvidence`]: without the matched text.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "tree_evidence"
    )]
    #[cfg_attr(feature = "ts", ts(as = "Option<TreeEvidence<'static>>"))]
    pub parent_evidence: Option<ParentEvidence>,
    /// 0 for the nodes returned at the top.
    pub depth: u32,
    pub children: Vec<TaskTreeNode>,
    /// The task's last activity (`metadata.lastActivity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_completed: Option<bool>,
    /// The task's parent, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<String>,
    /// `true` on a top node whose parent is not among the tasks at all (not merely left out by
    /// the workspace filter or the subtree asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_missing: Option<bool>,
}

/// How a tree node was linked to its parent: its [`ParentEvidence`] without `matchedPrefix`. The
/// matched text is up to 192 characters of the child's normalised instruction (3.7 of the 27 MB
/// of a 50 000-task tree), and a tree view shows only how the link was made; the task's header
/// keeps the text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct TreeEvidence<'a> {
    #[cfg_attr(
        feature = "ts",
        ts(type = "\"history_item\" | \"child_ids\" | \"task_metadata\" | \"instruction_prefix\"")
    )]
    pub source: &'a str,
    pub confidence: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_task_ts: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "\"exact\" | \"prefix\""))]
    pub match_kind: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap_ms: Option<i64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable, as = "Vec<String>"))]
    pub conflicts: &'a [String],
}

impl<'a> From<&'a ParentEvidence> for TreeEvidence<'a> {
    fn from(e: &'a ParentEvidence) -> Self {
        TreeEvidence {
            source: &e.source,
            confidence: e.confidence,
            new_task_ts: e.new_task_ts,
            match_kind: e.match_kind.as_deref(),
            gap_ms: e.gap_ms,
            conflicts: &e.conflicts,
        }
    }
}

fn tree_evidence<S: serde::Serializer>(
    e: &Option<ParentEvidence>,
    s: S,
) -> Result<S::Ok, S::Error> {
    e.as_ref().map(TreeEvidence::from).serialize(s)
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
    pub parent_evidence: Option<TreeEvidence<'a>>,
    pub depth: u32,
    pub children: Vec<TaskTreeView<'a>>,
    pub last_activity: &'a str,
    pub message_count: u32,
    pub action_count: u32,
    pub is_completed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_task_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_missing: Option<bool>,
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

/// The last folder of a workspace key ([`normalize_workspace`]), which a bare folder name is
/// matched against.
pub fn workspace_folder(key: &str) -> Option<&str> {
    key.rsplit('/').find(|s| !s.is_empty())
}

/// A workspace query as the task lists read it: a path names one workspace (compared after
/// [`normalize_workspace`]); a bare folder name (no separator) names every workspace whose last
/// folder it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceQuery {
    key: String,
    bare: bool,
}

impl WorkspaceQuery {
    pub fn new(query: &str) -> Self {
        let key = normalize_workspace(query);
        let bare = !key.contains('/');
        WorkspaceQuery { key, bare }
    }

    /// Whether a task of `workspace` is one the query names.
    pub fn matches(&self, workspace: &str) -> bool {
        let ws = normalize_workspace(workspace);
        ws == self.key || (self.bare && workspace_folder(&ws) == Some(self.key.as_str()))
    }
}

// FxHash (the rustc hasher): the keys are task texts and ids, hashed many times; no DoS concern.
use rustc_hash::FxHasher;

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
        link_all(&index, &filtered_out, opts, &mut metrics)
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

fn link_all(
    ix: &Index<'_>,
    filtered_out: &HashSet<String>,
    opts: &HierarchyOptions,
    metrics: &mut HierarchyMetrics,
) -> Vec<TaskLink> {
    let n = ix.view.len();
    metrics.tasks = u32::try_from(n).unwrap_or(u32::MAX);
    let on_disk = |id: &str| ix.index_of.contains_key(id) || filtered_out.contains(id);
    let mut claimed = vec![false; ix.slots.len()];
    let mut out: Vec<TaskLink> = (0..n).map(|_| TaskLink::default()).collect();
    let texts = ix.texts();
    if opts.use_stored_links {
        stored_links(ix, &texts, &on_disk, &mut claimed, &mut out, metrics);
    }
    infer(ix, &texts, &mut claimed, &mut out, metrics);
    validate(ix, &on_disk, &mut out, metrics);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_queries_take_paths_or_folder_names() {
        let path = WorkspaceQuery::new("D:\\Dev\\Shop\\");
        assert!(path.matches("d:/dev/shop"));
        assert!(path.matches("file:///d:/dev//shop/"));
        assert!(!path.matches("d:/other/shop"));
        let name = WorkspaceQuery::new("Shop");
        assert!(name.matches("d:/dev/shop"));
        assert!(name.matches("/home/u/SHOP/"));
        assert!(name.matches("shop"));
        assert!(!name.matches("d:/dev/shop-2"));
        assert!(!name.matches("d:/shop/dev"));
        assert_eq!(workspace_folder("d:/dev/shop"), Some("shop"));
        assert_eq!(workspace_folder("/"), None);
    }

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
