//! The legacy in-memory instruction index (`TaskInstructionIndex` over the `exact-trie` package;
//! spec: legacy-server.md §4.2–4.4), reproduced with its lookup semantics — which are *not* a
//! longest-prefix match.
//!
//! The trie is keyed by UTF-16 code units of the lowercased key. A lookup walks the query unit by unit
//! while a child exists and answers with the value of the node where the walk stopped, if any. So a
//! stored key matches when it equals the query, or when it is a prefix of the query and no other stored
//! key continues along the query's next unit; a query that ends inside a longer key matches nothing.

use crate::js::js_trim;
use crate::prefix::{compute_instruction_prefix, DEFAULT_PREFIX_LEN};
use roo_js::{utf16_len, utf16_prefix};
use std::collections::HashMap;

#[derive(Debug, Clone, Default)]
struct Node {
    /// Children sorted by code unit.
    children: Vec<(u16, u32)>,
    /// Index into `entries` when a key ends here.
    value: Option<u32>,
}

#[derive(Debug, Clone)]
struct Entry {
    key: String,
    parent_task_ids: Vec<String>,
}

/// The legacy index: normalised prefix → parent task ids (insertion-ordered), with exact-trie lookups.
#[derive(Debug, Clone)]
pub struct LegacyInstructionIndex {
    nodes: Vec<Node>,
    entries: Vec<Entry>,
    by_key: HashMap<String, u32>,
}

impl Default for LegacyInstructionIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl LegacyInstructionIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self {
            nodes: vec![Node::default()],
            entries: Vec::new(),
            by_key: HashMap::new(),
        }
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key was added.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn child(&self, node: u32, unit: u16) -> Option<u32> {
        let n = self.nodes.get(node as usize)?;
        n.children
            .binary_search_by_key(&unit, |&(u, _)| u)
            .ok()
            .map(|i| n.children[i].1)
    }

    /// `trie.put(key.toLowerCase(), entry)`: always overwrites the value of the final node.
    fn put(&mut self, key: &str, entry: u32) {
        let mut node = 0u32;
        for unit in key.to_lowercase().encode_utf16() {
            node = match self.child(node, unit) {
                Some(c) => c,
                None => {
                    let new = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
                    self.nodes.push(Node::default());
                    if let Some(n) = self.nodes.get_mut(node as usize) {
                        let pos = n.children.partition_point(|&(u, _)| u < unit);
                        n.children.insert(pos, (unit, new));
                    }
                    new
                }
            };
        }
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.value = Some(entry);
        }
    }

    /// `trie.getWithCheckpoints(query)` with no checkpoint character.
    fn get_with_checkpoints(&self, query: &str) -> Option<u32> {
        let mut node = 0u32;
        for unit in query.to_lowercase().encode_utf16() {
            match self.child(node, unit) {
                Some(c) => node = c,
                None => break,
            }
        }
        self.nodes.get(node as usize).and_then(|n| n.value)
    }

    /// `addInstruction(parentTaskId, prefix)`: the prefix is normalised again with
    /// `compute_instruction_prefix(prefix, 192)`; one key can collect several parents (in order, no
    /// duplicates). An empty `prefix` is ignored.
    pub fn add_instruction(&mut self, parent_task_id: &str, prefix: &str) {
        if prefix.is_empty() {
            return;
        }
        let key = compute_instruction_prefix(prefix, DEFAULT_PREFIX_LEN);
        let idx = match self.by_key.get(&key) {
            Some(&i) => i,
            None => {
                let i = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
                self.entries.push(Entry {
                    key: key.clone(),
                    parent_task_ids: Vec::new(),
                });
                self.put(&key, i);
                self.by_key.insert(key, i);
                i
            }
        };
        if let Some(e) = self.entries.get_mut(idx as usize) {
            if !e.parent_task_ids.iter().any(|p| p == parent_task_id) {
                e.parent_task_ids.push(parent_task_id.to_owned());
            }
        }
    }

    /// Every key with its parents, in insertion order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.entries
            .iter()
            .map(|e| (e.key.as_str(), e.parent_task_ids.as_slice()))
    }

    /// Number of trie nodes (the root included).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// `searchExactPrefix(childText, k)`: every parent registered for the first key found, each with
    /// that key, or nothing.
    ///
    /// The query is `childText` cut to `k` units when it "looks normalised" (contains `sddd:` or
    /// `phase 3d hierarchy reconstruction execution sddd.`, or is at most 192 units, lowercase and
    /// trimmed), otherwise `compute_instruction_prefix(childText, k)`. Its first `k`, `k`, `k-16`, …
    /// (down to 32) and 16 units are then looked up in turn.
    pub fn search_exact_prefix(&self, child_text: &str, k: usize) -> Vec<(String, String)> {
        self.search_exact_prefix_trace(child_text, k, false).matches
    }

    /// [`search_exact_prefix`](Self::search_exact_prefix) step by step, for compat's debug logs:
    /// the whole query, whether it was normalised, each length tried with its query (`steps` only:
    /// the hot path records none) and the length that matched.
    pub fn search_exact_prefix_trace(
        &self,
        child_text: &str,
        k: usize,
        steps: bool,
    ) -> SearchTrace {
        let mut trace = SearchTrace::default();
        if child_text.is_empty() {
            return trace;
        }
        let looks_normalised = child_text
            .contains("phase 3d hierarchy reconstruction execution sddd.")
            || child_text.contains("sddd:")
            || (utf16_len(child_text) <= 192 && child_text == js_trim(&child_text.to_lowercase()));
        trace.computed = !looks_normalised;
        let full = if looks_normalised {
            utf16_prefix(child_text, k).into_owned()
        } else {
            compute_instruction_prefix(child_text, k)
        };
        let mut lengths = vec![k];
        let mut len = k;
        while len >= 32 {
            lengths.push(len);
            len -= 16;
        }
        lengths.push(16);
        for len in lengths {
            let query = utf16_prefix(&full, len);
            if steps {
                trace.tried.push((len, query.clone().into_owned()));
            }
            let Some(idx) = self.get_with_checkpoints(&query) else {
                continue;
            };
            let Some(entry) = self.entries.get(idx as usize) else {
                continue;
            };
            // The key is recovered by identity; an empty key is falsy and skipped.
            if entry.key.is_empty() {
                continue;
            }
            trace.found_length = Some(len);
            trace.matches = entry
                .parent_task_ids
                .iter()
                .map(|p| (p.clone(), entry.key.clone()))
                .collect();
            break;
        }
        if steps {
            trace.full = full;
        }
        trace
    }
}

/// One lookup of [`LegacyInstructionIndex::search_exact_prefix_trace`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchTrace {
    /// The whole query before the cuts (when steps were asked for).
    pub full: String,
    /// Whether the query is the text's normalised key (else the text itself, cut).
    pub computed: bool,
    /// Each length tried and its query, in order, the matching one last (when steps were asked for).
    pub tried: Vec<(usize, String)>,
    /// The length whose query matched.
    pub found_length: Option<usize>,
    /// `(parent task id, key)` for each parent of the key found.
    pub matches: Vec<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_lists_each_length_up_to_the_match() {
        let mut index = LegacyInstructionIndex::new();
        index.add_instruction("p", "mission sddd: build the release pipeline");
        // Looks normalised (`sddd:`), so taken as it is; the trie walk lowercases it.
        let q = "Mission sddd: build the release pipeline, then more";
        let t = index.search_exact_prefix_trace(q, 40, true);
        assert!(!t.computed);
        assert_eq!(t.full, utf16_prefix(q, 40));
        assert_eq!(t.tried, [(40, utf16_prefix(q, 40).into_owned())]);
        assert_eq!(t.found_length, Some(40));
        assert_eq!(t.matches, index.search_exact_prefix(q, 40));
        assert_eq!(ids(t.matches), ["p"]);
        let miss = index.search_exact_prefix_trace("Nothing Like It At All", 40, true);
        assert!(miss.computed);
        // 40, 40 again (the legacy list repeats `k`), then 16.
        let lengths: Vec<usize> = miss.tried.iter().map(|(n, _)| *n).collect();
        assert_eq!(lengths, [40, 40, 16]);
        assert_eq!((miss.found_length, miss.matches.len()), (None, 0));
        // Without steps the hot path records none.
        assert!(index
            .search_exact_prefix_trace(q, 40, false)
            .tried
            .is_empty());
    }

    fn ids(r: Vec<(String, String)>) -> Vec<String> {
        r.into_iter().map(|(id, _)| id).collect()
    }

    #[test]
    fn measured_exact_trie_cases() {
        let mut idx = LegacyInstructionIndex::new();
        idx.add_instruction("P1", "abc def ghi");
        idx.add_instruction("P2", "abc def ghi jkl mno");
        assert_eq!(idx.len(), 2);
        assert_eq!(ids(idx.search_exact_prefix("abc def ghi", 192)), vec!["P1"]);
        assert_eq!(
            ids(idx.search_exact_prefix("abc def ghi jkl mno pqr", 192)),
            vec!["P2"]
        );
        assert!(idx.search_exact_prefix("abc def ghi xyz", 192).is_empty());
        assert!(idx
            .search_exact_prefix("abc def ghi jkl zzz", 192)
            .is_empty());
        // The matched key is reported.
        assert_eq!(
            idx.search_exact_prefix("ABC DEF GHI", 192),
            vec![("P1".to_owned(), "abc def ghi".to_owned())]
        );
    }

    #[test]
    fn several_parents_in_insertion_order() {
        let mut idx = LegacyInstructionIndex::new();
        idx.add_instruction("B", "Same instruction text here");
        idx.add_instruction("A", "same   instruction text HERE");
        idx.add_instruction("B", "same instruction text here");
        assert_eq!(idx.len(), 1);
        assert_eq!(
            ids(idx.search_exact_prefix("same instruction text here", 192)),
            vec!["B", "A"]
        );
        idx.add_instruction("C", "");
        assert_eq!(idx.len(), 1);
        assert!(idx.search_exact_prefix("", 192).is_empty());
    }

    #[test]
    fn shorter_lengths_only_help_on_exact_key_lengths() {
        let mut idx = LegacyInstructionIndex::new();
        let key16 = "abcdefghijklmnop"; // 16 units
        idx.add_instruction("P", key16);
        let query = format!("{key16}qrstuvwxyz and more");
        // The walk stops after the key (no continuation) → hit already at full length.
        assert_eq!(ids(idx.search_exact_prefix(&query, 192)), vec!["P"]);
        idx.add_instruction("Q", &format!("{key16}q-longer key"));
        // Now the walk continues into the longer key and stops inside it: the 16-unit cut still hits.
        assert_eq!(ids(idx.search_exact_prefix(&query, 192)), vec!["P"]);
    }

    #[test]
    fn empty_key_is_skipped() {
        let mut idx = LegacyInstructionIndex::new();
        idx.add_instruction("E", "<b></b>");
        assert_eq!(idx.len(), 1);
        assert!(idx.search_exact_prefix("anything at all", 192).is_empty());
    }
}
