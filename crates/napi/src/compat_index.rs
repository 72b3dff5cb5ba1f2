//! The compat layer's instruction index as a native class: the legacy exact-trie index kept in
//! Rust, so a long-lived server adds and looks up instructions with no JavaScript copy of the trie.
//! `compat/utils/task-instruction-index.js` wraps it with the legacy method names and shapes.

use napi_derive::napi;
use roo_legacy::{LegacyInstructionIndex, DEFAULT_PREFIX_LEN};

/// One parent found for an instruction.
#[napi(object)]
pub struct IndexMatch {
    pub task_id: String,
    pub prefix: String,
}

/// One key of the index with the parents registered under it.
#[napi(object)]
pub struct IndexEntry {
    pub prefix: String,
    pub parent_task_ids: Vec<String>,
}

/// One length a lookup tried, with its query.
#[napi(object)]
pub struct IndexSearchStep {
    pub length: u32,
    pub query: String,
}

/// A lookup step by step (what compat's index logs under `ROO_DEBUG_INSTRUCTIONS=1`).
#[napi(object)]
pub struct IndexSearchTrace {
    /// The whole query before the cuts.
    pub full: String,
    /// Whether the query is the text's normalised key (else the text itself, cut).
    pub computed: bool,
    /// Each length tried, in order, the matching one last.
    pub steps: Vec<IndexSearchStep>,
    /// The length whose query matched.
    pub found_length: Option<u32>,
    pub matches: Vec<IndexMatch>,
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The legacy instruction index (normalised prefix → parent task ids, exact-trie lookups).
#[napi]
pub struct NativeInstructionIndex {
    inner: LegacyInstructionIndex,
}

impl Default for NativeInstructionIndex {
    fn default() -> Self {
        Self::new()
    }
}

#[napi]
impl NativeInstructionIndex {
    #[napi(constructor)]
    pub fn new() -> Self {
        Self {
            inner: LegacyInstructionIndex::new(),
        }
    }

    /// Registers `prefix` (normalised again, as the legacy index does) for `parentTaskId`; an empty
    /// prefix is ignored.
    #[napi(catch_unwind)]
    pub fn add(&mut self, parent_task_id: String, prefix: String) {
        self.inner.add_instruction(&parent_task_id, &prefix);
    }

    /// Registers many `[parentTaskId, prefix]` pairs in one call.
    #[napi(catch_unwind)]
    pub fn add_many(&mut self, pairs: Vec<Vec<String>>) {
        for pair in pairs {
            if let [parent, prefix] = pair.as_slice() {
                self.inner.add_instruction(parent, prefix);
            }
        }
    }

    /// The parents of the first key found along `childText` (legacy exact-trie semantics).
    #[napi(catch_unwind)]
    pub fn search_exact_prefix(&self, child_text: String, k: Option<u32>) -> Vec<IndexMatch> {
        let k = k.map_or(DEFAULT_PREFIX_LEN, |k| k as usize);
        self.inner
            .search_exact_prefix(&child_text, k)
            .into_iter()
            .map(|(task_id, prefix)| IndexMatch { task_id, prefix })
            .collect()
    }

    /// [`Self::search_exact_prefix`] step by step: the same answer, with each length tried.
    #[napi(catch_unwind)]
    pub fn search_exact_prefix_trace(
        &self,
        child_text: String,
        k: Option<u32>,
    ) -> IndexSearchTrace {
        let k = k.map_or(DEFAULT_PREFIX_LEN, |k| k as usize);
        let t = self.inner.search_exact_prefix_trace(&child_text, k, true);
        IndexSearchTrace {
            full: t.full,
            computed: t.computed,
            steps: t
                .tried
                .into_iter()
                .map(|(length, query)| IndexSearchStep {
                    length: to_u32(length),
                    query,
                })
                .collect(),
            found_length: t.found_length.map(to_u32),
            matches: t
                .matches
                .into_iter()
                .map(|(task_id, prefix)| IndexMatch { task_id, prefix })
                .collect(),
        }
    }

    /// Number of distinct keys.
    #[napi(catch_unwind, getter)]
    pub fn size(&self) -> u32 {
        to_u32(self.inner.len())
    }

    /// Number of trie nodes, the root included.
    #[napi(catch_unwind, getter)]
    pub fn node_count(&self) -> u32 {
        to_u32(self.inner.node_count())
    }

    /// Every key with its parents, in insertion order.
    #[napi(catch_unwind)]
    pub fn entries(&self) -> Vec<IndexEntry> {
        self.inner
            .entries()
            .map(|(prefix, parents)| IndexEntry {
                prefix: prefix.to_owned(),
                parent_task_ids: parents.to_vec(),
            })
            .collect()
    }

    /// Removes every key.
    #[napi(catch_unwind)]
    pub fn clear(&mut self) {
        self.inner = LegacyInstructionIndex::new();
    }
}
