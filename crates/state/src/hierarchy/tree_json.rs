//! A task tree written straight to JSON: the bytes of [`get_task_tree_view`] serialised by
//! serde_json, without the nested nodes built first, and several times faster.
//!
//! At 50 000 tasks a tree is some 24 MB of JSON, and a view asks for it again after every change
//! to the store. The nodes are listed breadth-first. The top nodes (some 20 000 at 50 000 tasks)
//! are cut into runs of about the same number of nodes, written in parallel, each depth-first
//! with a stack of its own (no recursion, whatever the depth): a node's fields up to
//! `"children":[`, its children, then its fields after them. The field names are written as they
//! are, in [`super::TaskTreeView`]'s order, and every string scanned once for what needs
//! escaping; the parent evidence goes through serde_json. The tests hold the bytes equal to
//! serde_json's. A caller parsing the text on one thread can take each run as it is written
//! ([`TreeText::new_fed`]) and parse while the others are being written.
//!
//! [`TreeText`] keeps the text with its plan (each node's header position and place), where
//! each run's text lies and each run's print (its tasks and their places), so that after headers
//! changed in place only the runs that show them are written again, and the others copied; and
//! after tasks came, went or moved, a tree built anew copies the text of each run whose print is
//! unchanged and none of whose tasks changed.

use super::tree::{list_nodes, parent_id, top_nodes, Forest, Listed, MissingParents};
use super::tree::{Placement, SiblingOrder};
use super::*;
use roo_js::latin1::Latin1Formatter;
use serde_json::ser::CompactFormatter;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

/// How a JSON text holds its strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonText {
    /// As UTF-8: what `serde_json::to_vec` writes.
    Utf8,
    /// As Latin-1 bytes, every character above U+00FF a `\uXXXX` escape: what
    /// [`roo_js::to_latin1_json`] writes, for a one-byte JavaScript string.
    Latin1,
}

/// The JSON of [`get_task_tree_view`] for `opts` (compact: no white space), written in up to
/// `parts` runs in parallel, then joined into one array.
pub fn tree_json(
    skeletons: &[ConversationSkeleton],
    opts: &TreeOptions,
    text: JsonText,
    parts: usize,
) -> serde_json::Result<Vec<u8>> {
    TreeText::new(skeletons, opts, text, parts).map(|t| Arc::unwrap_or_clone(t.json))
}

/// A tree's JSON ([`tree_json`]) with what it takes to write parts of it again: each node's
/// header and place, the runs of top nodes written apart, and where each run's text lies in the
/// whole. After headers changed in place (same positions, same links, dates and workspaces), only
/// the runs that hold them are written again ([`TreeText::patch`]).
pub struct TreeText {
    json: Arc<Vec<u8>>,
    text: JsonText,
    plan: Plan,
    runs: Vec<Run>,
    /// Where each run's text lies in `json`.
    spans: Vec<Range<usize>>,
    /// The run of each header (by its position in the headers given), [`NOT_SHOWN`] for a header
    /// the tree leaves out.
    run_of: Vec<u32>,
    /// Each run's [`Mark`], for [`TreeText::rebuild`].
    marks: Vec<Mark>,
}

/// What a rebuild knows of a run of a tree written before: the identity ([`task_identity`]) of
/// its first top node, and its print: the identities and places of its nodes, depth first, with
/// where each node's children end.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Mark {
    first: u64,
    print: u64,
}

/// What stands for a task across rebuilds of a tree: a hash of its id. A rebuild reuses runs
/// only where the tasks of the tree have distinct ids (a handle's do).
pub fn task_identity(task_id: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(task_id.as_bytes())
}

/// A running hash of a sequence of numbers (FxHasher's step).
#[derive(Default)]
struct Print(u64);

impl Print {
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    /// A node entered: its identity and place.
    fn enter(&mut self, s: &ConversationSkeleton, at: Placement) {
        self.add(task_identity(&s.task_id));
        self.add(u64::from(at.depth) << 1 | u64::from(at.parent_missing));
    }

    /// The end of a node's children.
    fn leave(&mut self) {
        self.add(u64::MAX);
    }
}

/// In [`TreeText::run_of`]: a header the tree leaves out (another workspace, deeper than asked).
const NOT_SHOWN: u32 = u32::MAX;

impl TreeText {
    /// The tree of `opts` over `skeletons`, written in up to `parts` runs in parallel.
    pub fn new(
        skeletons: &[ConversationSkeleton],
        opts: &TreeOptions,
        text: JsonText,
        parts: usize,
    ) -> serde_json::Result<Self> {
        Self::new_fed(skeletons, opts, text, parts, &mut |_| {})
    }

    /// [`TreeText::new`], handing each run's text, a JSON array of its top nodes, to `feed` on
    /// the calling thread, in order, as soon as it and the runs before it are written, while the
    /// runs after it are still being written on the pool: a caller that parses the runs
    /// (JavaScript's `JSON.parse`, on its one thread) parses while the rest is written instead
    /// of after. The arrays' elements, in order, are the tree's.
    pub fn new_fed(
        skeletons: &[ConversationSkeleton],
        opts: &TreeOptions,
        text: JsonText,
        parts: usize,
        feed: &mut dyn FnMut(&Arc<Vec<u8>>),
    ) -> serde_json::Result<Self> {
        let (plan, listing, _) = Plan::of(skeletons, opts);
        let runs = runs(&listing, parts.max(1), |_| false);
        drop(listing);
        let written = plan.write_fed(skeletons, &runs, text, feed)?;
        let written = (written.iter())
            .map(|(t, mark)| (Cow::Borrowed(elements(t)), *mark))
            .collect();
        Ok(Self::assemble(skeletons, text, plan, runs, written))
    }

    /// The tree of `opts` over `skeletons` after tasks came, went, moved or changed since `self`
    /// was written (with the same options): built anew, but the text of each run whose tasks
    /// are the same in the same places, none of them in `dirty` (the [`task_identity`] of every
    /// task whose header changed since), is copied rather than written. A run is cut where one
    /// of `self` began, so that a task added or removed leaves the other runs as they were.
    pub fn rebuild(
        self,
        skeletons: &[ConversationSkeleton],
        opts: &TreeOptions,
        dirty: impl Fn(u64) -> bool + Sync,
        parts: usize,
    ) -> serde_json::Result<Self> {
        let (plan, listing, distinct) = Plan::of(skeletons, opts);
        // Each top node's identity, when the ids are distinct (else nothing is reused).
        let tops = listing.iter().take_while(|at| at.parent.is_none()).count();
        let firsts: FxMap<u64, ()> = self.marks.iter().map(|m| (m.first, ())).collect();
        let identity = |pos: usize| {
            let node = plan.node(skeletons, pos).ok();
            node.map(|(s, _)| task_identity(&s.task_id))
        };
        let top_ids: Vec<Option<u64>> = match distinct {
            true => (0..tops).into_par_iter().map(identity).collect(),
            false => Vec::new(),
        };
        let starts = |top: usize| {
            distinct && matches!(top_ids.get(top), Some(Some(id)) if firsts.contains_key(id))
        };
        let runs = runs(&listing, parts.max(1), starts);
        drop(listing);
        let old: FxMap<Mark, usize> = (self.marks.iter().enumerate())
            .map(|(r, &m)| (m, r))
            .collect();
        // Each run's text: the old one where its mark is found and no task of it changed.
        let written = (runs.par_iter())
            .map(|run| {
                if distinct {
                    let (mark, changed) = plan.mark(skeletons, run, &dirty)?;
                    if let Some(&r) = old.get(&mark).filter(|_| !changed) {
                        return match self.spans.get(r).and_then(|s| self.json.get(s.clone())) {
                            Some(text) => Ok((Cow::Borrowed(text), mark)),
                            None => Err(serde::ser::Error::custom("a run outside the tree")),
                        };
                    }
                }
                (plan.write(skeletons, run, self.text, false)).map(|(t, m)| (Cow::Owned(t), m))
            })
            .collect::<serde_json::Result<Vec<_>>>()?;
        Ok(Self::assemble(skeletons, self.text, plan, runs, written))
    }

    /// A tree of `runs` from the runs' texts and marks.
    fn assemble(
        skeletons: &[ConversationSkeleton],
        text: JsonText,
        plan: Plan,
        runs: Vec<Run>,
        written: Vec<(Cow<'_, [u8]>, Mark)>,
    ) -> Self {
        let (json, spans) = join(written.iter().map(|(t, _)| t.as_ref()));
        let marks = written.iter().map(|&(_, m)| m).collect();
        let run_of = plan.run_of(&runs, skeletons.len());
        TreeText {
            json: Arc::new(json),
            text,
            plan,
            runs,
            spans,
            run_of,
            marks,
        }
    }

    /// The text: a JSON array.
    pub fn json(&self) -> &Arc<Vec<u8>> {
        &self.json
    }

    /// The tree after the headers at `changed` (positions in `skeletons`) changed in place: the
    /// runs that show them written again, the others copied. The caller vouches that nothing
    /// else moved: the same headers at the same positions, with the same parents, creation dates
    /// and workspaces; headers of another length are an error.
    pub fn patch(
        self,
        skeletons: &[ConversationSkeleton],
        changed: &[usize],
    ) -> serde_json::Result<Self> {
        if skeletons.len() != self.run_of.len() {
            return Err(serde::ser::Error::custom("the headers are not the tree's"));
        }
        let mut dirty: Vec<usize> = (changed.iter())
            .filter_map(|&i| self.run_of.get(i).copied())
            .filter(|&r| r != NOT_SHOWN)
            .map(|r| r as usize)
            .collect();
        dirty.sort_unstable();
        dirty.dedup();
        if dirty.is_empty() {
            return Ok(self);
        }
        let written = (dirty.par_iter())
            .map(|&r| match self.runs.get(r) {
                Some(run) => self.plan.write(skeletons, run, self.text, false),
                None => Err(serde::ser::Error::custom("a run outside the tree")),
            })
            .collect::<serde_json::Result<Vec<_>>>()?;
        let pieces = (0..self.runs.len()).map(|r| match dirty.binary_search(&r) {
            Ok(k) => written
                .get(k)
                .map(|(t, _)| t.as_slice())
                .unwrap_or_default(),
            Err(_) => (self.spans.get(r).cloned())
                .and_then(|span| self.json.get(span))
                .unwrap_or_default(),
        });
        let (json, spans) = join(pieces);
        let mut marks = self.marks;
        for (&r, &(_, mark)) in dirty.iter().zip(&written) {
            if let Some(m) = marks.get_mut(r) {
                *m = mark;
            }
        }
        Ok(TreeText {
            json: Arc::new(json),
            spans,
            marks,
            ..self
        })
    }
}

/// `pieces` (array elements, none empty) as one JSON array, copied once into a text of the exact
/// size (a vector grown to it would be copied at each doubling, every time into fresh pages), and
/// where each piece lies in it. The pieces are copied in parallel: at 50 000 tasks the text is
/// some 24 MB of pages the system maps in on first touch, which one thread pays for alone.
fn join<'p>(pieces: impl Iterator<Item = &'p [u8]>) -> (Vec<u8>, Vec<Range<usize>>) {
    let pieces: Vec<&[u8]> = pieces.collect();
    // `[`, each piece with the `,` after it (the last one's `,` is the `]`).
    let size = 1 + pieces.iter().map(|p| p.len() + 1).sum::<usize>();
    // Zeroed: memory fresh from the system is not written twice.
    let mut out = vec![0u8; size.max(2)];
    let mut spans = Vec::with_capacity(pieces.len());
    let mut slots = Vec::with_capacity(pieces.len());
    let (open, mut rest) = out.split_at_mut(1);
    open.fill(b'[');
    let mut at = 1;
    for p in &pieces {
        let (slot, after) = std::mem::take(&mut rest).split_at_mut(p.len() + 1);
        spans.push(at..at + p.len());
        at += p.len() + 1;
        slots.push((slot, *p));
        rest = after;
    }
    slots.par_iter_mut().for_each(|(slot, piece)| {
        let (text, comma) = slot.split_at_mut(piece.len());
        text.copy_from_slice(piece);
        comma.fill(b',');
    });
    if let Some(last) = out.last_mut() {
        *last = b']';
    }
    (out, spans)
}

/// A run of consecutive top nodes (positions in the listing) and its count of nodes.
struct Run {
    tops: Range<usize>,
    nodes: usize,
}

/// The top nodes of `listing` (its first nodes, those without a parent) in runs of consecutive
/// ones: at most `parts` runs of about the same number of nodes; or, where `starts` names tops
/// (where the runs of an earlier tree began), a run begins at each of them, and a run grown
/// past twice its share is cut too.
fn runs(listing: &[Listed], parts: usize, starts: impl Fn(usize) -> bool) -> Vec<Run> {
    // Each node's count of nodes in its subtree, itself included. A child comes after its parent:
    // from the end, every subtree is complete when its size is added to its parent's.
    let mut sizes = vec![1; listing.len()];
    for (pos, at) in listing.iter().enumerate().rev() {
        let size = sizes.get(pos).copied().unwrap_or(0);
        if let Some(s) = at.parent.and_then(|p| sizes.get_mut(p)) {
            *s += size;
        }
    }
    let tops = listing.iter().take_while(|at| at.parent.is_none()).count();
    let hinted = (1..tops).any(&starts);
    let share = listing.len().div_ceil(parts).max(1);
    let close_at = if hinted { 2 * share } else { share };
    let mut runs = Vec::new();
    let (mut start, mut nodes) = (0, 0);
    for top in 0..tops {
        if top > start && starts(top) {
            runs.push(Run {
                tops: start..top,
                nodes,
            });
            (start, nodes) = (top, 0);
        }
        nodes += sizes.get(top).copied().unwrap_or(1);
        if nodes >= close_at {
            runs.push(Run {
                tops: start..top + 1,
                nodes,
            });
            (start, nodes) = (top + 1, 0);
        }
    }
    if start < tops {
        runs.push(Run {
            tops: start..tops,
            nodes,
        });
    }
    runs
}

/// One node of a tree: the position of its header, and where it sits.
#[derive(Clone, Copy)]
struct Node {
    header: u32,
    place: Placement,
}

/// A tree's nodes in breadth-first order with each node's children (a run of the listing).
struct Plan {
    nodes: Vec<Node>,
    /// Each node's children: the position of the first in the listing, and how many.
    kids: Vec<(usize, usize)>,
}

/// One step of [`Plan::walk`].
enum Step {
    /// Down to a node (`first`: the first of its siblings in the run).
    Enter(usize, bool),
    /// Back up from a node, after its children.
    Leave(usize),
}

impl Plan {
    /// The plan of the tree of `opts` over `skeletons`, with its breadth-first listing, and
    /// whether the tasks it draws from have distinct ids.
    fn of(skeletons: &[ConversationSkeleton], opts: &TreeOptions) -> (Self, Vec<Listed>, bool) {
        let order = SiblingOrder::CreatedAtText;
        let forest = Forest::new(skeletons, opts.workspace.as_deref(), order);
        let distinct = forest.index.len() == forest.items.len();
        let tops = top_nodes(&forest, opts);
        let listing = list_nodes(&forest, tops, opts.max_depth);
        let missing = MissingParents::new(&forest, skeletons);
        (Plan::new(&forest, &listing, &missing), listing, distinct)
    }

    /// The top nodes of `run` and their subtrees, depth first, as [`Step`]s (no recursion,
    /// whatever the depth).
    fn walk<E>(&self, run: &Run, mut step: impl FnMut(Step) -> Result<(), E>) -> Result<(), E> {
        // The nodes open on the way down: each with the position of its next child.
        let mut open: Vec<(usize, usize)> = Vec::new();
        for top in run.tops.clone() {
            step(Step::Enter(top, top == run.tops.start))?;
            open.push((top, 0));
            while let Some((pos, next)) = open.last_mut() {
                let (first, count) = self.kids.get(*pos).copied().unwrap_or((0, 0));
                if *next < count {
                    let child = first + *next;
                    *next += 1;
                    let first_child = *next == 1;
                    open.push((child, 0));
                    step(Step::Enter(child, first_child))?;
                } else {
                    let pos = *pos;
                    open.pop();
                    step(Step::Leave(pos))?;
                }
            }
        }
        Ok(())
    }

    /// `run`'s [`Mark`], and whether any of its tasks is `dirty`.
    fn mark(
        &self,
        skeletons: &[ConversationSkeleton],
        run: &Run,
        dirty: impl Fn(u64) -> bool,
    ) -> serde_json::Result<(Mark, bool)> {
        let mut print = Print::default();
        let mut changed = false;
        self.walk(run, |step| {
            match step {
                Step::Enter(pos, _) => {
                    let (s, at) = self.node(skeletons, pos)?;
                    changed = changed || dirty(task_identity(&s.task_id));
                    print.enter(s, at);
                }
                Step::Leave(_) => print.leave(),
            }
            Ok(())
        })?;
        Ok((self.mark_of(skeletons, run, print), changed))
    }

    fn mark_of(&self, skeletons: &[ConversationSkeleton], run: &Run, print: Print) -> Mark {
        let first = self.node(skeletons, run.tops.start).ok();
        Mark {
            first: first
                .map(|(s, _)| task_identity(&s.task_id))
                .unwrap_or_default(),
            print: print.0,
        }
    }

    /// The header and place of the node at `pos`; an error where the plan is not of
    /// `skeletons`.
    fn node<'s>(
        &self,
        skeletons: &'s [ConversationSkeleton],
        pos: usize,
    ) -> serde_json::Result<(&'s ConversationSkeleton, Placement)> {
        let at = self.nodes.get(pos);
        match at.and_then(|at| Some((skeletons.get(at.header as usize)?, at.place))) {
            Some(node) => Ok(node),
            None => Err(serde::ser::Error::custom("a tree node outside its headers")),
        }
    }

    fn new(forest: &Forest<'_>, listing: &[Listed], missing: &MissingParents<'_, '_>) -> Self {
        let nodes = (listing.iter())
            .map(|at| Node {
                header: forest.positions.get(at.item).copied().unwrap_or(usize::MAX) as u32,
                place: missing.placement(at),
            })
            .collect();
        let mut kids = vec![(0, 0); listing.len()];
        for (pos, at) in listing.iter().enumerate() {
            if let Some(k) = at.parent.and_then(|p| kids.get_mut(p)) {
                if k.1 == 0 {
                    k.0 = pos;
                }
                k.1 += 1;
            }
        }
        Plan { nodes, kids }
    }

    /// The run of each of `headers` headers ([`NOT_SHOWN`] for one the tree leaves out).
    fn run_of(&self, runs: &[Run], headers: usize) -> Vec<u32> {
        // A top node's run is where it is cut; any other node's is its parent's, which the
        // listing has set before it.
        let mut of_node = vec![NOT_SHOWN; self.nodes.len()];
        for (r, run) in runs.iter().enumerate() {
            for slot in of_node.get_mut(run.tops.clone()).into_iter().flatten() {
                *slot = r as u32;
            }
        }
        for (pos, &(first, count)) in self.kids.iter().enumerate() {
            let r = of_node.get(pos).copied().unwrap_or(NOT_SHOWN);
            for slot in of_node.get_mut(first..first + count).into_iter().flatten() {
                *slot = r;
            }
        }
        let mut of_header = vec![NOT_SHOWN; headers];
        for (node, r) in self.nodes.iter().zip(of_node) {
            if let Some(slot) = of_header.get_mut(node.header as usize) {
                *slot = r;
            }
        }
        of_header
    }

    /// The top nodes of `run` with their subtrees (the elements of a JSON array; with
    /// `brackets`, the array), and the run's [`Mark`].
    fn write(
        &self,
        skeletons: &[ConversationSkeleton],
        run: &Run,
        text: JsonText,
        brackets: bool,
    ) -> serde_json::Result<(Vec<u8>, Mark)> {
        // What a node takes, about (its dates, ids and counts, and room for a title): untouched
        // capacity is never faulted in, so room to spare costs no memory, and a vector that does
        // not grow is not copied.
        let mut w = Writer {
            out: Vec::with_capacity(run.nodes.saturating_mul(640)),
            text,
        };
        if brackets {
            w.out.push(b'[');
        }
        let mut print = Print::default();
        self.walk(run, |step| match step {
            Step::Enter(pos, first) => {
                if !first {
                    w.out.push(b',');
                }
                let (s, at) = self.node(skeletons, pos)?;
                print.enter(s, at);
                w.head((s, at))
            }
            Step::Leave(pos) => {
                print.leave();
                w.tail(self.node(skeletons, pos)?);
                Ok(())
            }
        })?;
        if brackets {
            w.out.push(b']');
        }
        Ok((w.out, self.mark_of(skeletons, run, print)))
    }
}

impl Plan {
    /// Each of `runs` written as a JSON array, in parallel, and handed to `feed` on this thread
    /// in order, each as soon as it and those before it are written (see [`TreeText::new_fed`]).
    fn write_fed(
        &self,
        skeletons: &[ConversationSkeleton],
        runs: &[Run],
        text: JsonText,
        feed: &mut dyn FnMut(&Arc<Vec<u8>>),
    ) -> serde_json::Result<Vec<(Arc<Vec<u8>>, Mark)>> {
        let write = |run| (self.write(skeletons, run, text, true)).map(|(t, m)| (Arc::new(t), m));
        if rayon::current_thread_index().is_some() {
            // On a thread of the pool, waiting for the pool could be waiting for this thread:
            // every run written first, then fed.
            let all = runs
                .par_iter()
                .map(write)
                .collect::<serde_json::Result<Vec<_>>>()?;
            all.iter().for_each(|(t, _)| feed(t));
            return Ok(all);
        }
        let mut written: Vec<Option<_>> = runs.iter().map(|_| None).collect();
        let mut fed = 0;
        rayon::in_place_scope(|scope| {
            let (done, arrived) = std::sync::mpsc::channel();
            scope.spawn(|_| {
                (runs.par_iter().enumerate()).for_each_with(done, |done, (r, run)| {
                    // The receiver outlives the scope's jobs: a send cannot fail.
                    let _ = done.send((r, write(run)));
                })
            });
            for (r, result) in arrived {
                if let Some(slot) = written.get_mut(r) {
                    *slot = Some(result);
                }
                while let Some(Some(Ok((t, _)))) = written.get(fed) {
                    feed(t);
                    fed += 1;
                }
            }
        });
        (written.into_iter())
            .map(|w| w.unwrap_or_else(|| Err(serde::ser::Error::custom("a run not written"))))
            .collect()
    }
}

/// The elements of a JSON array's text (its brackets left out).
fn elements(array: &[u8]) -> &[u8] {
    let inner = array.strip_prefix(b"[").and_then(|a| a.strip_suffix(b"]"));
    inner.unwrap_or(array)
}

/// Whether none of the eight bytes of `w` needs escaping: no control character, no `"` nor `\`,
/// and with `latin1` no byte from 0x80 (UTF-8 that becomes a Latin-1 byte or an escape). A byte
/// below 0x20 (or zero after an XOR with the byte sought) sets its high bit in the answer; a
/// borrow may set others, but only in a word that has such a byte, so the answer is zero exactly
/// when there is none.
fn plain8(w: u64, latin1: bool) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    let quote = has_zero(w ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(w ^ (ONES * u64::from(b'\\')));
    let high = if latin1 { w & HIGH } else { 0 };
    control | quote | backslash | high == 0
}

/// One run's text as it is written.
struct Writer {
    out: Vec<u8>,
    text: JsonText,
}

impl Writer {
    /// A node's fields up to `"children":[`.
    fn head(&mut self, (s, at): (&ConversationSkeleton, Placement)) -> serde_json::Result<()> {
        self.out.extend_from_slice(b"{\"taskId\":");
        self.string(&s.task_id);
        if let Some(title) = &s.metadata.title {
            self.out.extend_from_slice(b",\"title\":");
            self.string(title);
        }
        self.out.extend_from_slice(b",\"createdAt\":");
        self.string(&s.metadata.created_at);
        if let Some(workspace) = &s.metadata.workspace {
            self.out.extend_from_slice(b",\"workspace\":");
            self.string(workspace);
        }
        if let Some(mode) = &s.metadata.mode {
            self.out.extend_from_slice(b",\"mode\":");
            self.string(mode);
        }
        if let Some(e) = &s.parent_evidence {
            self.out.extend_from_slice(b",\"parentEvidence\":");
            let e = TreeEvidence::from(e);
            match self.text {
                JsonText::Utf8 => e.serialize(&mut serde_json::Serializer::with_formatter(
                    &mut self.out,
                    CompactFormatter,
                )),
                JsonText::Latin1 => e.serialize(&mut serde_json::Serializer::with_formatter(
                    &mut self.out,
                    Latin1Formatter,
                )),
            }?;
        }
        self.out.extend_from_slice(b",\"depth\":");
        self.number(at.depth);
        self.out.extend_from_slice(b",\"children\":[");
        Ok(())
    }

    /// The end of a node's children, its fields after them, and its end.
    fn tail(&mut self, (s, at): (&ConversationSkeleton, Placement)) {
        self.out.extend_from_slice(b"],\"lastActivity\":");
        self.string(&s.metadata.last_activity);
        self.out.extend_from_slice(b",\"messageCount\":");
        self.number(s.metadata.message_count);
        self.out.extend_from_slice(b",\"actionCount\":");
        self.number(s.metadata.action_count);
        self.out.extend_from_slice(match s.is_completed {
            true => b",\"isCompleted\":true",
            false => b",\"isCompleted\":false",
        });
        if let Some(p) = parent_id(s) {
            self.out.extend_from_slice(b",\"parentTaskId\":");
            self.string(p);
        }
        if at.parent_missing {
            self.out.extend_from_slice(b",\"parentMissing\":true");
        }
        self.out.push(b'}');
    }

    fn number(&mut self, n: u32) {
        let mut digits = [0u8; 10];
        let mut at = digits.len();
        let mut n = n;
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.out.extend_from_slice(&digits[at..]);
    }

    /// `s` as a JSON string, escaped as serde_json escapes it: `"` and `\`, the control
    /// characters (`\b`, `\t`, `\n`, `\f`, `\r`, else `\u00XX`); in [`JsonText::Latin1`], every
    /// character above U+00FF as `\uXXXX` (a surrogate pair past U+FFFF) and those from U+0080
    /// as their one byte.
    fn string(&mut self, s: &str) {
        let bytes = s.as_bytes();
        let latin1 = self.text == JsonText::Latin1;
        self.out.push(b'"');
        // The start of the run of bytes written as they are.
        let mut run = 0;
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            // Eight bytes at a time while none needs escaping.
            let word = bytes.get(i..i + 8).and_then(|w| w.try_into().ok());
            if word.is_some_and(|w| plain8(u64::from_le_bytes(w), latin1)) {
                i += 8;
                continue;
            }
            let plain = b >= 0x20 && b != b'"' && b != b'\\' && (b < 0x80 || !latin1);
            if plain {
                i += 1;
                continue;
            }
            self.out
                .extend_from_slice(bytes.get(run..i).unwrap_or_default());
            if b >= 0x80 {
                let c = s
                    .get(i..)
                    .and_then(|rest| rest.chars().next())
                    .unwrap_or('\u{fffd}');
                match u8::try_from(u32::from(c)) {
                    Ok(byte) => self.out.push(byte),
                    Err(_) => {
                        for unit in c.encode_utf16(&mut [0; 2]) {
                            self.escape(*unit);
                        }
                    }
                }
                i += c.len_utf8().max(1);
            } else {
                match b {
                    b'"' => self.out.extend_from_slice(b"\\\""),
                    b'\\' => self.out.extend_from_slice(b"\\\\"),
                    0x08 => self.out.extend_from_slice(b"\\b"),
                    b'\t' => self.out.extend_from_slice(b"\\t"),
                    b'\n' => self.out.extend_from_slice(b"\\n"),
                    0x0c => self.out.extend_from_slice(b"\\f"),
                    b'\r' => self.out.extend_from_slice(b"\\r"),
                    _ => self.escape(u16::from(b)),
                }
                i += 1;
            }
            run = i;
        }
        self.out
            .extend_from_slice(bytes.get(run..).unwrap_or_default());
        self.out.push(b'"');
    }

    /// `\u` and four lower-case hexadecimal digits.
    fn escape(&mut self, unit: u16) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.out.extend_from_slice(b"\\u");
        for shift in [12, 8, 4, 0] {
            self.out.push(HEX[usize::from((unit >> shift) & 0xf)]);
        }
    }
}

#[cfg(test)]
#[path = "tree_json_tests.rs"]
mod tests;
