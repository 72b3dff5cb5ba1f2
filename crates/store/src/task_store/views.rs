//! What the handle keeps between refreshes so that its queries do not redo work: the task order
//! of each sort a list asked for, and the JSON of the last whole tree. A refresh that changed
//! anything drops the orders. It keeps the tree: after headers changed in place, its next query
//! writes again only the parts that show them; after tasks came, went or moved, it builds the
//! tree anew but copies the parts whose tasks are the same, in the same places, and unchanged.

use super::list::SortKey;
use super::TaskStore;
use crate::StoreError;
use rayon::prelude::*;
use roo_state::hierarchy::{self, TaskTreeNode, TaskTreeView, TreeOptions, TreeText};
use roo_state::ConversationSkeleton;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// A sort order: positions of the handle's headers, sorted.
pub(super) type Order = Arc<[u32]>;

/// The handle's kept views (see the module documentation). Behind locks: queries take `&self`.
#[derive(Default)]
pub(super) struct Views {
    orders: Mutex<Vec<((SortKey, bool), Order)>>,
    tree: Mutex<Option<KeptTree>>,
    /// Every task name in lower case, sorted ([`crate::find::short_id`]).
    folded: Mutex<Option<Arc<Vec<String>>>>,
    /// Whether each task is a top task of the handle's forest, by position.
    tops: Mutex<Option<Arc<Vec<bool>>>>,
}

/// The most changes a kept tree notes before it is dropped.
const MOST_CHANGES: usize = 1 << 16;

/// The options a whole tree is kept for.
pub(super) type TreeKey = (Option<String>, Option<u32>);

/// The last whole tree: its options (workspace, depth), its text (Latin-1), and what changed
/// since it was written.
struct KeptTree {
    key: TreeKey,
    text: TreeText,
    /// The positions of the headers changed in place; `None` once tasks came, went or moved in
    /// the tree (positions then no longer name the same tasks).
    changed: Option<Vec<usize>>,
    /// The [`hierarchy::task_identity`] of every task whose header changed.
    dirty: HashSet<u64>,
}

impl KeptTree {
    fn noted(&self) -> usize {
        (self.changed.as_ref())
            .map_or(0, Vec::len)
            .max(self.dirty.len())
    }
}

impl Views {
    /// The headers at `positions` (with their tasks' identities) changed in place, and no task
    /// moved in the tree: forget the orders, and note them for the kept tree (a tree nobody asks
    /// for again is dropped once it has noted [`MOST_CHANGES`], rather than noting changes for
    /// the life of a server).
    pub(super) fn changed_in_place(&mut self, changes: impl IntoIterator<Item = (usize, u64)>) {
        self.note(|kept| {
            for (pos, identity) in changes {
                if let Some(c) = kept.changed.as_mut() {
                    c.push(pos);
                }
                kept.dirty.insert(identity);
            }
        });
    }

    /// Tasks came, went or moved in the tree; `changed`: the identities of those whose header
    /// changed (new, parsed again or linked anew). Forget the orders; the kept tree's next query
    /// builds it anew, copying the runs of it that show none of them.
    pub(super) fn moved(&mut self, changed: impl IntoIterator<Item = u64>) {
        self.note(|kept| {
            kept.changed = None;
            kept.dirty.extend(changed);
        });
    }

    fn note(&mut self, note: impl FnOnce(&mut KeptTree)) {
        *self.orders.get_mut().unwrap_or_else(|e| e.into_inner()) = Vec::new();
        *self.folded.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        *self.tops.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        let tree = self.tree.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(kept) = tree {
            note(kept);
            if kept.noted() > MOST_CHANGES {
                *tree = None;
            }
        }
    }

    /// The order of `key` (`reverse`: against the key's natural order; ties stay by task id),
    /// sorted once and kept.
    pub(super) fn order(
        &self,
        key: SortKey,
        reverse: bool,
        sort: impl FnOnce() -> Vec<u32>,
    ) -> Order {
        let mut orders = self.orders.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, o)) = orders.iter().find(|(k, _)| *k == (key, reverse)) {
            return o.clone();
        }
        let o: Order = sort().into();
        orders.push(((key, reverse), o.clone()));
        o
    }

    /// Every task name in lower case, sorted: made once and kept.
    pub(super) fn folded(&self, make: impl FnOnce() -> Vec<String>) -> Arc<Vec<String>> {
        let mut folded = self.folded.lock().unwrap_or_else(|e| e.into_inner());
        folded.get_or_insert_with(|| Arc::new(make())).clone()
    }

    /// Whether each task is a top task, by position: made once and kept.
    pub(super) fn tops(&self, make: impl FnOnce() -> Vec<bool>) -> Arc<Vec<bool>> {
        let mut tops = self.tops.lock().unwrap_or_else(|e| e.into_inner());
        tops.get_or_insert_with(|| Arc::new(make())).clone()
    }

    /// The JSON of the tree of `key`: built once and kept; patched after changes in place,
    /// rebuilt with the runs that did not change copied after tasks came, went or moved.
    pub(super) fn tree(
        &self,
        key: TreeKey,
        build: impl FnOnce() -> serde_json::Result<TreeText>,
        patch: impl FnOnce(TreeText, &[usize]) -> serde_json::Result<TreeText>,
        rebuild: impl FnOnce(TreeText, &HashSet<u64>) -> serde_json::Result<TreeText>,
    ) -> serde_json::Result<Arc<Vec<u8>>> {
        let mut tree = self.tree.lock().unwrap_or_else(|e| e.into_inner());
        // A patch or rebuild that fails (it never should) leaves the tree to be built anew.
        let text = match tree.take() {
            Some(kept) if kept.key == key => match kept.changed {
                Some(changed) if changed.is_empty() => kept.text,
                Some(changed) => patch(kept.text, &changed).or_else(|_| build())?,
                None => rebuild(kept.text, &kept.dirty).or_else(|_| build())?,
            },
            _ => build()?,
        };
        let json = text.json().clone();
        *tree = Some(KeptTree {
            key,
            text,
            changed: Some(Vec::new()),
            dirty: HashSet::new(),
        });
        Ok(json)
    }
}

impl TaskStore {
    /// Every header as one JSON array, with `fields` of each.
    pub fn headers_json(&self, fields: Fields) -> crate::Result<Vec<u8>> {
        self.write_headers(fields, serde_json::ser::CompactFormatter)
    }

    /// [`TaskStore::headers_json`] as Latin-1 bytes ([`roo_js::latin1`]): the bulk transfer to
    /// JavaScript.
    pub fn headers_latin1(&self, fields: Fields) -> crate::Result<Vec<u8>> {
        self.write_headers(fields, roo_js::latin1::Latin1Formatter)
    }

    fn write_headers<F: serde_json::ser::Formatter>(
        &self,
        fields: Fields,
        formatter: F,
    ) -> crate::Result<Vec<u8>> {
        use serde::ser::SerializeSeq;
        let err = |e: serde_json::Error| StoreError::InvalidArgument(e.to_string());
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        if !fields.need_whole() {
            let picked: Vec<Picked<'_>> = self.skeletons.iter().map(|s| fields.pick(s)).collect();
            picked.serialize(&mut ser).map_err(err)?;
            return Ok(out);
        }
        let mut seq = ser.serialize_seq(Some(self.skeletons.len())).map_err(err)?;
        // Headers made whole (when the fields need it) a block at a time, in parallel.
        let all: Vec<usize> = (0..self.skeletons.len()).collect();
        for block in all.chunks(2048) {
            let shown: Vec<_> = block
                .par_iter()
                .filter_map(|&i| fields.shown(self, i))
                .collect();
            for s in &shown {
                seq.serialize_element(&fields.pick(s)).map_err(err)?;
            }
        }
        SerializeSeq::end(seq).map_err(err)?;
        Ok(out)
    }

    /// The JSON of [`TaskStore::tree_view`] as Latin-1 bytes ([`roo_js::latin1`]: what
    /// JavaScript takes as a one-byte string without decoding it), written straight from the
    /// headers in parts in parallel ([`TreeText`]). A whole forest (no `root_id`) is kept: asked
    /// again, it is not built again; after headers changed in place, only the parts that show
    /// them are written again.
    pub fn tree_json(&self, opts: &TreeOptions) -> crate::Result<Arc<Vec<u8>>> {
        self.tree_json_fed(opts, &mut |_| {})
    }

    /// [`TaskStore::tree_json`]; when the whole forest is written anew, each part of it is
    /// handed to `feed` as soon as it is written, a JSON array of its top nodes, in order
    /// ([`TreeText::new_fed`]): a caller that parses them on its thread does so while the rest
    /// is written. `feed` is not called when the text was kept or patched, nor for one root's
    /// tree. The text returned is the whole tree either way.
    pub fn tree_json_fed(
        &self,
        opts: &TreeOptions,
        feed: &mut dyn FnMut(&Arc<Vec<u8>>),
    ) -> crate::Result<Arc<Vec<u8>>> {
        let latin1 = hierarchy::JsonText::Latin1;
        let build = || TreeText::new_fed(&self.skeletons, opts, latin1, TREE_PARTS, feed);
        let json = match opts.root_id {
            None => self.views.tree(
                (opts.workspace.clone(), opts.max_depth),
                build,
                |kept, changed| kept.patch(&self.skeletons, changed),
                |kept, dirty| {
                    let dirty = |identity| dirty.contains(&identity);
                    kept.rebuild(&self.skeletons, opts, dirty, TREE_PARTS)
                },
            ),
            Some(_) => {
                TreeText::new(&self.skeletons, opts, latin1, TREE_PARTS).map(|t| t.json().clone())
            }
        };
        json.map_err(|e| StoreError::InvalidArgument(e.to_string()))
    }
}

/// The parts a tree is written in: enough for both threads to stay busy when one part holds a
/// large tree, and small enough (some 400 kB at 50 000 tasks) that a change rewrites little.
const TREE_PARTS: usize = 64;

/// The top-level fields of a header (its JSON names), in the order a header is written.
pub const HEADER_FIELDS: [&str; 17] = [
    "taskId",
    "parentTaskId",
    "sequence",
    "metadata",
    "childTaskInstructionPrefixes",
    "isCompleted",
    "truncatedInstruction",
    "instruction",
    "childTasks",
    "storedLinks",
    "parentEvidence",
    "rootTaskId",
    "apiTotals",
    "files",
    "createdAtMs",
    "lastActivityMs",
    "diagnostics",
];

/// The position of `name` in [`HEADER_FIELDS`] (a name not there stops the build).
const fn at(name: &str) -> usize {
    let mut i = 0;
    while i < HEADER_FIELDS.len() {
        let (a, b) = (HEADER_FIELDS[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a header field")
}

/// A choice of a header's top-level fields (see [`HEADER_FIELDS`]): what a list view asks for
/// instead of every instruction and every child's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields(u32);

impl Default for Fields {
    /// Every field.
    fn default() -> Self {
        Fields((1 << HEADER_FIELDS.len()) - 1)
    }
}

impl Fields {
    /// The fields named (`taskId` always included); an unknown name is an error naming it.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<Fields, String> {
        let mut bits = 1;
        for n in names {
            let n = n.as_ref();
            let i = HEADER_FIELDS.iter().position(|f| *f == n).ok_or_else(|| {
                format!(
                    "{n} is not a field of a task header ({})",
                    HEADER_FIELDS.join(", ")
                )
            })?;
            bits |= 1 << i;
        }
        Ok(Fields(bits))
    }

    fn has(self, i: usize) -> bool {
        self.0 & (1 << i) != 0
    }

    /// Whether these fields include one a partial header leaves out (module `lazy`): the
    /// instruction, the child calls, and the match keys derived from them.
    pub fn need_fill(self) -> bool {
        self.has(4) || self.has(6) || self.has(7) || self.has(8)
    }

    /// Whether these fields include one the handle keeps apart (`childTasks`,
    /// `truncatedInstruction`, `childTaskInstructionPrefixes`).
    fn need_whole(self) -> bool {
        const APART: [usize; 3] = [
            at("childTaskInstructionPrefixes"),
            at("truncatedInstruction"),
            at("childTasks"),
        ];
        APART.iter().any(|&i| self.has(i))
    }

    /// The header at `i` as these fields show it: whole ([`TaskStore::whole`]) when they include
    /// a field the handle keeps apart (`childTasks`, `truncatedInstruction`,
    /// `childTaskInstructionPrefixes`).
    pub(super) fn shown(
        self,
        store: &TaskStore,
        i: usize,
    ) -> Option<Cow<'_, ConversationSkeleton>> {
        match self.need_whole() {
            true => store.whole(i).map(Cow::Owned),
            false => store.skeletons.get(i).map(Cow::Borrowed),
        }
    }

    /// `s` with only these fields, written as a header is.
    pub fn pick(self, s: &ConversationSkeleton) -> Picked<'_> {
        Picked(s, self)
    }
}

/// A header with some of its fields ([`Fields::pick`]).
pub struct Picked<'a>(&'a ConversationSkeleton, Fields);

impl Serialize for Picked<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let (s, f) = (self.0, self.1);
        if f == Fields::default() {
            return s.serialize(ser);
        }
        let mut m = ser.serialize_map(None)?;
        // Each field under its JSON name, at its place in HEADER_FIELDS (a test holds the list to
        // the struct's own serialisation).
        macro_rules! field {
            ($name:literal, $v:expr) => {
                if f.has(at($name)) {
                    m.serialize_entry($name, $v)?;
                }
            };
        }
        macro_rules! optional {
            ($name:literal, $v:expr) => {
                if f.has(at($name)) {
                    if let Some(v) = $v {
                        m.serialize_entry($name, v)?;
                    }
                }
            };
        }
        field!("taskId", &s.task_id);
        optional!("parentTaskId", &s.parent_task_id);
        optional!("sequence", &s.sequence);
        field!("metadata", &s.metadata);
        field!(
            "childTaskInstructionPrefixes",
            &s.child_task_instruction_prefixes
        );
        field!("isCompleted", &s.is_completed);
        optional!("truncatedInstruction", &s.truncated_instruction);
        optional!("instruction", &s.instruction);
        field!("childTasks", &s.child_tasks);
        field!("storedLinks", &s.stored_links);
        optional!("parentEvidence", &s.parent_evidence);
        optional!("rootTaskId", &s.root_task_id);
        field!("apiTotals", &s.api_totals);
        field!("files", &s.files);
        optional!("createdAtMs", &s.created_at_ms);
        optional!("lastActivityMs", &s.last_activity_ms);
        field!("diagnostics", &s.diagnostics);
        m.end()
    }
}

/// The trees and links of the handle's tasks, in place.
impl TaskStore {
    /// The forest of tasks, or one subtree (see [`hierarchy::get_task_tree`]).
    pub fn tree(&self, opts: &TreeOptions) -> Vec<TaskTreeNode> {
        hierarchy::get_task_tree(&self.skeletons, opts)
    }

    /// [`TaskStore::tree`] borrowing from the handle (the same JSON, no string copied).
    pub fn tree_view(&self, opts: &TreeOptions) -> Vec<TaskTreeView<'_>> {
        hierarchy::get_task_tree_view(&self.skeletons, opts)
    }

    /// The trees of several tasks (by full id) in one pass, in the order given
    /// ([`hierarchy::get_task_trees_view`]). Only the forest of their conversations is built:
    /// every task of a tree names the same root (its top, or the top's parent missing from the
    /// handle) as the tree's top does, so the tasks of those roots are found in one pass over the
    /// headers (a page of 20 conversations of 50 000 tasks: 1 ms, where the whole forest took 11).
    pub fn trees_view(&self, root_ids: &[String], max_depth: Option<u32>) -> Vec<TaskTreeView<'_>> {
        let tree_of = |s: &ConversationSkeleton| -> String {
            s.root_task_id.clone().unwrap_or_else(|| s.task_id.clone())
        };
        let keys: HashSet<String> = (root_ids.iter())
            .filter_map(|id| self.skeletons.get(self.position_of(id)?))
            .map(tree_of)
            .collect();
        let members: Vec<usize> = (0..self.skeletons.len())
            .into_par_iter()
            .filter(|&i| {
                let s = &self.skeletons[i];
                keys.contains(s.root_task_id.as_deref().unwrap_or(&s.task_id))
            })
            .collect();
        hierarchy::get_task_trees_view_among(&self.skeletons, &members, root_ids, max_depth)
    }

    /// The shortest prefix (at least `min` characters) that names each of `ids` alone among the
    /// handle's tasks, as a lookup by prefix takes it ([`crate::find::short_id`]).
    pub fn short_ids(&self, ids: &[String], min: usize) -> Vec<String> {
        let folded = self.views.folded(|| {
            let mut names: Vec<String> = (self.skeletons.par_iter())
                .map(|s| s.task_id.to_lowercase())
                .collect();
            let others = (self.failed.keys().map(String::as_str))
                .chain(self.copies.iter().map(|c| c.id.as_str()));
            names.extend(others.map(str::to_lowercase));
            // Mostly in order already (the headers are in id order).
            names.par_sort_unstable();
            names
        });
        (ids.iter())
            .map(|id| crate::find::short_id(&folded, id, min))
            .collect()
    }

    /// Ancestors of a task, nearest first.
    pub fn ancestors(&self, task_id: &str) -> Vec<String> {
        hierarchy::ancestors(&self.skeletons, task_id)
    }

    /// Descendants of a task, breadth-first.
    pub fn descendants(&self, task_id: &str) -> Vec<String> {
        hierarchy::descendants(&self.skeletons, task_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header with every optional field present.
    fn full_header() -> ConversationSkeleton {
        ConversationSkeleton {
            task_id: "t".into(),
            parent_task_id: Some("p".into()),
            sequence: Some(Vec::new()),
            truncated_instruction: Some("x".into()),
            instruction: Some("x".into()),
            parent_evidence: Some(roo_state::skeleton::ParentEvidence {
                source: "history_item".into(),
                confidence: 1.0,
                matched_prefix: None,
                new_task_ts: None,
                match_kind: None,
                gap_ms: None,
                conflicts: Vec::new(),
            }),
            root_task_id: Some("p".into()),
            created_at_ms: Some(1),
            last_activity_ms: Some(2),
            ..ConversationSkeleton::default()
        }
    }

    /// HEADER_FIELDS is the struct's own list: the names its serialisation writes, in order; and a
    /// header picked with every field named is the header itself.
    #[test]
    fn the_header_fields_are_the_skeletons_own() {
        let s = full_header();
        let whole = serde_json::to_value(&s).expect("json");
        let names: Vec<&str> = whole
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(names, HEADER_FIELDS);
        // Named one by one, all but the last (every field would be the default, which writes the
        // struct itself): each written under its name, in order.
        let last = HEADER_FIELDS.len() - 1;
        let most = Fields::parse(&HEADER_FIELDS[..last]).expect("fields");
        let picked = serde_json::to_value(most.pick(&s)).expect("json");
        let mut want = whole.clone();
        if let Some(o) = want.as_object_mut() {
            o.shift_remove(HEADER_FIELDS[last]);
        }
        assert_eq!(picked, want);
        assert_eq!(
            picked.as_object().map(|o| o.keys().count()),
            Some(HEADER_FIELDS.len() - 1)
        );
        let two = Fields::parse(&["apiTotals", "rootTaskId"]).expect("fields");
        let picked = serde_json::to_value(two.pick(&s)).expect("json");
        let keys: Vec<&String> = picked
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["taskId", "rootTaskId", "apiTotals"]);
    }

    #[test]
    fn a_tree_nobody_asks_for_notes_changes_up_to_a_bound() {
        let mut views = Views::default();
        let key: TreeKey = (None, None);
        let text = || TreeText::new(&[], &TreeOptions::default(), hierarchy::JsonText::Utf8, 1);
        let patched = |kept: TreeText, _: &[usize]| Ok(kept);
        let refused = || Err(serde::ser::Error::custom("built again"));
        let not_rebuilt = |_: TreeText, _: &HashSet<u64>| refused();
        let json = views
            .tree(key.clone(), text, patched, not_rebuilt)
            .expect("built");
        assert_eq!(json.as_slice(), b"[]");
        // Changes noted: the next tree patches the kept one.
        views.changed_in_place((0..MOST_CHANGES).map(|i| (i, i as u64)));
        assert!(views
            .tree(key.clone(), refused, patched, not_rebuilt)
            .is_ok());
        // One change more than the bound: the kept tree is gone, the next one is built.
        views.changed_in_place((0..=MOST_CHANGES).map(|i| (i, i as u64)));
        assert!(views
            .tree(key.clone(), refused, patched, not_rebuilt)
            .is_err());
        // Tasks moved: the next tree is rebuilt from the kept one, with what changed.
        assert!(views.tree(key.clone(), text, patched, not_rebuilt).is_ok());
        views.changed_in_place([(3, 30)]);
        views.moved([40, 50]);
        let rebuilt = |kept: TreeText, dirty: &HashSet<u64>| {
            assert_eq!(dirty, &HashSet::from([30, 40, 50]));
            Ok(kept)
        };
        assert!(views.tree(key.clone(), refused, patched, rebuilt).is_ok());
        // And past the bound, built anew.
        views.moved(0..=MOST_CHANGES as u64);
        assert!(views.tree(key, refused, patched, rebuilt).is_err());
    }
}
