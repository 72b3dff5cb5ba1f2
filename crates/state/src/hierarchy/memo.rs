//! Normalised instruction keys kept from one pass to the next ([`KeyMemo`]).

use super::*;

/// The memo hashes of one task's texts: its instruction (when it is looked up) and each call's
/// message, in the order of `child_tasks`.
pub(super) struct TaskHashes {
    pub(super) query: Option<u128>,
    pub(super) calls: Vec<u128>,
}

/// Seeds of the two kinds of text: an instruction is kept whole, a call's message loses a trailing
/// ellipsis.
pub(super) const QUERY_SEED: u64 = 0;
pub(super) const CALL_SEED: u64 = 1;
/// Seed of the hash of a normalised key: one seed for both kinds, so an instruction and a call
/// message that normalise alike have the same key hash.
pub(super) const KEY_SEED: u64 = 0;

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

pub(super) struct MemoEntry {
    /// The normalised text (a call's without its trailing ellipsis).
    pub(super) key: Box<str>,
    /// Hash of `key`: equal keys of different raw texts share it.
    pub(super) key_hash: u128,
    pub(super) cut: bool,
    /// The last pass that used it.
    pub(super) used: u32,
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

    pub(super) fn get(&self, hash: u128) -> Option<&MemoEntry> {
        self.entries.get(&hash)
    }

    /// Hash the texts of this pass, normalise those not held, forget those no task uses any more.
    ///
    /// With `stored` (stored links in use), a task whose `history_item.json` names another task as
    /// its parent will never be inferred: its instruction is not looked up here (it is normalised
    /// later, only if needed).
    pub(super) fn update<'s>(
        &mut self,
        view: &[&'s ConversationSkeleton],
        stored: bool,
    ) -> Vec<TaskHashes> {
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
                    key_hash: xxh3_128_with_seed(key.as_bytes(), KEY_SEED),
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
