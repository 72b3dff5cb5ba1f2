//! A task tree written straight to JSON: the bytes of [`get_task_tree_view`] serialised by
//! serde_json, without the nested nodes built first, and several times faster.
//!
//! At 50 000 tasks a tree is some 24 MB of JSON, and a view asks for it again after every change
//! to the store. The nodes are listed breadth-first (a node's children follow each other in the
//! listing). The top nodes are cut into runs of about the same number of nodes (a tree at 50 000
//! tasks has some 20 000 top nodes), written in parallel, each depth-first with a stack of its
//! own (no recursion, whatever the depth): a node's fields up to `"children":[`, its children,
//! then its fields after them. The field names are written as they are, in
//! [`super::TaskTreeView`]'s order, and every string scanned once for what needs escaping; the
//! parent evidence, a nested object on the linked nodes, goes through serde_json. The tests hold
//! the bytes equal to serde_json's.

use super::tree::{list_nodes, parent_id, top_nodes, Forest, Listed, MissingParents};
use super::tree::{Placement, SiblingOrder};
use super::*;
use roo_js::latin1::Latin1Formatter;
use serde_json::ser::CompactFormatter;

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
    let forest = Forest::new(
        skeletons,
        opts.workspace.as_deref(),
        SiblingOrder::CreatedAtText,
    );
    let tops = top_nodes(&forest, opts);
    let listing = list_nodes(&forest, tops, opts.max_depth);
    let missing = MissingParents::new(&forest, skeletons);
    let tree = Listing::new(&forest, &listing, &missing);
    let written = (tree.runs(parts.max(1)).into_par_iter())
        .map(|run| tree.write(run, text))
        .collect::<serde_json::Result<Vec<Vec<u8>>>>()?;
    // One copy into a text of the exact size (a vector grown to it would be copied at each
    // doubling, every time into fresh pages).
    let size = written.iter().map(|w| w.len() + 1).sum::<usize>() + 1;
    let mut out = Vec::with_capacity(size);
    out.push(b'[');
    for w in written.iter().filter(|w| !w.is_empty()) {
        if out.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(w);
    }
    out.push(b']');
    Ok(out)
}

/// A tree's listing with each node's children (a run of the listing) and subtree size.
struct Listing<'l, 'f, 'a> {
    forest: &'f Forest<'a>,
    listing: &'l [Listed],
    missing: &'l MissingParents<'f, 'a>,
    /// Each node's children: the position of the first in the listing, and how many.
    kids: Vec<(usize, usize)>,
    /// Each node's count of nodes in its subtree, itself included.
    sizes: Vec<usize>,
}

impl<'l, 'f, 'a> Listing<'l, 'f, 'a> {
    fn new(
        forest: &'f Forest<'a>,
        listing: &'l [Listed],
        missing: &'l MissingParents<'f, 'a>,
    ) -> Self {
        let mut kids = vec![(0, 0); listing.len()];
        for (pos, at) in listing.iter().enumerate() {
            if let Some(k) = at.parent.and_then(|p| kids.get_mut(p)) {
                if k.1 == 0 {
                    k.0 = pos;
                }
                k.1 += 1;
            }
        }
        // A child comes after its parent: from the end, every subtree is complete when its size
        // is added to its parent's.
        let mut sizes = vec![1; listing.len()];
        for (pos, at) in listing.iter().enumerate().rev() {
            let size = sizes.get(pos).copied().unwrap_or(0);
            if let Some(s) = at.parent.and_then(|p| sizes.get_mut(p)) {
                *s += size;
            }
        }
        Listing {
            forest,
            listing,
            missing,
            kids,
            sizes,
        }
    }

    /// The top nodes (the listing's first nodes, those without a parent) in at most `parts` runs
    /// of consecutive ones, each of about the same number of nodes.
    fn runs(&self, parts: usize) -> Vec<std::ops::Range<usize>> {
        let tops = self
            .listing
            .iter()
            .take_while(|at| at.parent.is_none())
            .count();
        let share = self.listing.len().div_ceil(parts).max(1);
        let mut runs = Vec::new();
        let (mut start, mut nodes) = (0, 0);
        for top in 0..tops {
            nodes += self.sizes.get(top).copied().unwrap_or(1);
            if nodes >= share {
                runs.push(start..top + 1);
                (start, nodes) = (top + 1, 0);
            }
        }
        if start < tops {
            runs.push(start..tops);
        }
        runs
    }

    /// The top nodes `run` with their subtrees: the elements of a JSON array, without brackets.
    fn write(&self, run: std::ops::Range<usize>, text: JsonText) -> serde_json::Result<Vec<u8>> {
        let nodes: usize = (self.sizes.get(run.clone()).into_iter().flatten()).sum();
        // What a node takes, about (its dates, ids and counts, and room for a title): untouched
        // capacity is never faulted in, so room to spare costs no memory, and a vector that does
        // not grow is not copied.
        let mut w = Writer {
            out: Vec::with_capacity(nodes.saturating_mul(640)),
            text,
        };
        // The nodes open on the way down: each with the position of its next child.
        let mut open: Vec<(usize, usize)> = Vec::new();
        for top in run {
            if !w.out.is_empty() {
                w.out.push(b',');
            }
            w.head(self.node(top)?)?;
            open.push((top, 0));
            while let Some((pos, next)) = open.last_mut() {
                let (first, count) = self.kids.get(*pos).copied().unwrap_or((0, 0));
                if *next < count {
                    if *next > 0 {
                        w.out.push(b',');
                    }
                    let child = first + *next;
                    *next += 1;
                    w.head(self.node(child)?)?;
                    open.push((child, 0));
                } else {
                    let pos = *pos;
                    open.pop();
                    w.tail(self.node(pos)?);
                }
            }
        }
        Ok(w.out)
    }

    /// The skeleton of node `pos` and where it sits.
    fn node(&self, pos: usize) -> serde_json::Result<(&'a ConversationSkeleton, Placement)> {
        let at = self.listing.get(pos);
        let s = at.and_then(|at| self.forest.items.get(at.item).copied());
        let (Some(at), Some(s)) = (at, s) else {
            return Err(serde::ser::Error::custom("a tree node outside its listing"));
        };
        let parent_missing = at.parent.is_none() && self.missing.of(s);
        Ok((
            s,
            Placement {
                depth: at.depth,
                parent_missing,
            },
        ))
    }
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
