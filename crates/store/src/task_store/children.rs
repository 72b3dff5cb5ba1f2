//! The handle's headers, kept lean. A list, a tree and the hierarchy's links need a child call's
//! time, mode, sources and child id, not its todo list, and its message is almost always the same
//! text as the child task's own instruction. So the resident header keeps neither:
//! - each call's todos are kept as one JSON text per task (`[[call, todos], …]`), a fifth of what
//!   the parsed values take;
//! - a message that equals some task's instruction is left empty in the header, and the handle
//!   notes which task's instruction it is;
//! - the two match keys (`truncatedInstruction`, `childTaskInstructionPrefixes`) are dropped: they
//!   are derived from the instruction and the messages ([`instruction_keys`]).
//!
//! [`TaskStore::whole`] gives a header back whole; every way a caller sees a header (`get`, the
//! bulk headers and a list page that ask for those fields, [`TaskStore::into_skeletons`]) goes
//! through it, so what a caller sees does not change. A refresh puts every message back before it
//! changes a header (the hierarchy pass reads them, and a changed task's instruction may be
//! another's message), and keeps them apart again after. Nothing is read from disk: a handle
//! without a cache is the same.

use super::TaskStore;
use rayon::prelude::*;
use roo_state::skeleton::instruction_keys;
use roo_state::ConversationSkeleton;
use serde_json::Value;
use std::collections::HashMap;
use xxhash_rust::xxh3::xxh3_64;

/// What a task's header keeps outside itself.
#[derive(Debug, Clone, Default)]
pub(super) struct Apart {
    /// `(call, task)`: the call's message is the instruction of the task at that position.
    shared: Box<[(u32, u32)]>,
    /// `[[call, todos], …]`: the calls' todos, as JSON.
    todos: Option<Box<str>>,
}

impl Apart {
    /// The todos [`lean_out`] took out of a header.
    pub(super) fn todos(text: Box<str>) -> Box<Apart> {
        let todos = Some(text);
        Box::new(Apart {
            todos,
            ..Apart::default()
        })
    }
}

impl TaskStore {
    /// The header at `i` whole: its calls' messages and todos, and its match keys.
    pub fn whole(&self, i: usize) -> Option<ConversationSkeleton> {
        let mut s = self.skeletons.get(i)?.clone();
        let apart = self.tasks.get(i).and_then(|t| t.apart.as_deref());
        for &(call, from) in apart.map_or(&[][..], |a| &a.shared) {
            if let Some(c) = s.child_tasks.get_mut(call as usize) {
                c.message = self.instruction_at(from).to_owned();
            }
        }
        make_whole(&mut s, apart.and_then(|a| a.todos.as_deref()));
        Some(s)
    }

    fn instruction_at(&self, i: u32) -> &str {
        self.skeletons
            .get(i as usize)
            .and_then(|s| s.instruction.as_deref())
            .unwrap_or_default()
    }

    /// Put every shared message back into its header (before a refresh changes any header).
    pub(super) fn messages_in(&mut self) {
        let back: Vec<(usize, u32, String)> = (self.tasks.iter().enumerate())
            .filter_map(|(i, t)| Some((i, t.apart.as_deref()?)))
            .flat_map(|(i, a)| a.shared.iter().map(move |&(call, from)| (i, call, from)))
            .map(|(i, call, from)| (i, call, self.instruction_at(from).to_owned()))
            .collect();
        for (i, call, text) in back {
            if let Some(c) = self.skeletons[i].child_tasks.get_mut(call as usize) {
                c.message = text;
            }
        }
        for t in &mut self.tasks {
            if let Some(a) = t.apart.as_deref_mut() {
                a.shared = Box::default();
            }
            if t.apart.as_ref().is_some_and(|a| a.todos.is_none()) {
                t.apart = None;
            }
        }
    }

    /// Every header whole again (the handle given up).
    pub(super) fn all_in(&mut self) {
        self.messages_in();
        (self.skeletons.par_iter_mut())
            .zip(self.tasks.par_iter_mut())
            .for_each(|(s, t)| make_whole(s, t.apart.take().and_then(|a| a.todos).as_deref()));
    }

    /// Keep the child calls' todos and shared messages out of the headers (after a refresh that
    /// changed something).
    pub(super) fn keep_apart(&mut self) {
        self.keep_apart_with(Vec::new());
    }

    /// [`TaskStore::keep_apart`], with the texts' hashes taken as the headers were read, by
    /// position (`None` or missing: hashed here). After an open, each header was hot when its
    /// hashes were taken; here they would be read again from memory, 27 MB at 50 000 tasks.
    pub(super) fn keep_apart_with(&mut self, mut known: Vec<Option<TextHashes>>) {
        self.messages_in();
        known.resize_with(self.skeletons.len(), || None);
        let hashes: Vec<TextHashes> = (self.skeletons.par_iter())
            .zip(known)
            .map(|(s, h)| h.unwrap_or_else(|| TextHashes::of(s)))
            .collect();
        // Each instruction's hash → the first task with that instruction.
        let mut by_text: HashMap<u64, u32> = HashMap::with_capacity(hashes.len());
        for (i, h) in hashes.iter().enumerate() {
            if let Some(h) = h.instruction {
                by_text.entry(h).or_insert(i as u32);
            }
        }
        let this = &*self;
        let shared: Vec<Vec<(u32, u32)>> = (this.skeletons.par_iter())
            .zip(&hashes)
            .map(|(s, h)| {
                let calls = s.child_tasks.iter().zip(&*h.messages).enumerate();
                calls
                    .filter(|(_, (c, _))| !c.message.is_empty())
                    .filter_map(|(k, (c, h))| {
                        let from = *by_text.get(h)?;
                        (this.instruction_at(from) == c.message).then_some((k as u32, from))
                    })
                    .collect()
            })
            .collect();
        crate::cache::free_aside(hashes);
        (self.skeletons.par_iter_mut())
            .zip(self.tasks.par_iter_mut())
            .zip(shared)
            .for_each(|((s, t), shared)| {
                let todos = lean_out(s);
                if shared.is_empty() && todos.is_none() {
                    return;
                }
                let apart = t.apart.get_or_insert_with(Box::default);
                for &(call, _) in &shared {
                    s.child_tasks[call as usize].message = String::new();
                }
                apart.shared = shared.into();
                if todos.is_some() {
                    apart.todos = todos;
                }
            });
    }
}

/// The hashes [`TaskStore::keep_apart`] matches a header's texts by: its instruction's and each
/// child call's message's. A hash only finds a candidate; the texts are compared before a message
/// is shared, so hashes of an older text cost a share, never a wrong one.
#[derive(Debug, Clone, Default)]
pub(crate) struct TextHashes {
    instruction: Option<u64>,
    /// By call position.
    messages: Box<[u64]>,
}

impl TextHashes {
    pub(crate) fn of(s: &ConversationSkeleton) -> TextHashes {
        let hash = |t: &str| xxh3_64(t.as_bytes());
        TextHashes {
            instruction: s.instruction.as_deref().map(hash),
            messages: s.child_tasks.iter().map(|c| hash(&c.message)).collect(),
        }
    }
}

/// Take out of a header what the handle does not keep in it: its calls' todos, returned as JSON
/// (`None` when no call has any left in it), and the match keys [`make_whole`] derives again. The
/// cache's readers call it as each header is parsed, so what it drops is freed at once.
pub(crate) fn lean_out(s: &mut ConversationSkeleton) -> Option<Box<str>> {
    s.truncated_instruction = None;
    s.child_task_instruction_prefixes = Vec::new();
    let todos: Vec<(usize, &Value)> = (s.child_tasks.iter().enumerate())
        .filter_map(|(k, c)| Some((k, c.todos.as_ref()?)))
        .collect();
    if todos.is_empty() {
        return None;
    }
    // A value always writes; were it not to, the todos would simply stay in the header.
    let text = serde_json::to_string(&todos).ok()?;
    for c in &mut s.child_tasks {
        c.todos = None;
    }
    Some(text.into_boxed_str())
}

/// Put back what [`lean_out`] took (the messages already back in the calls).
fn make_whole(s: &mut ConversationSkeleton, todos: Option<&str>) {
    if let Some(text) = todos {
        let todos: Vec<(usize, Value)> = serde_json::from_str(text).unwrap_or_default();
        for (call, t) in todos {
            if let Some(c) = s.child_tasks.get_mut(call) {
                c.todos = Some(t);
            }
        }
    }
    (s.truncated_instruction, s.child_task_instruction_prefixes) =
        instruction_keys(s.instruction.as_deref(), &s.child_tasks);
}
