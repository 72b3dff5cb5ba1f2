//! The child calls of the handle's headers, kept lean. A list, a tree and the hierarchy's links
//! need a call's time, mode, sources and child id, not its todo list, and its message is almost
//! always the same text as the child task's own instruction. So the resident header keeps neither:
//! - each call's todos are kept as one JSON text per task (`[[call, todos], …]`), a fifth of what
//!   the parsed values take;
//! - a message that equals some task's instruction is left empty in the header, and the handle
//!   notes which task's instruction it is.
//!
//! [`TaskStore::whole`] gives a header back whole; every way a caller sees a header (`get`, the
//! bulk headers, a list page with `childTasks`, [`TaskStore::into_skeletons`]) goes through it, so
//! what a caller sees does not change. A refresh puts every message back before it changes a header
//! (the hierarchy pass reads them, and a changed task's instruction may be another's message), and
//! keeps them apart again after. Nothing is read from disk: a handle without a cache is the same.

use super::TaskStore;
use rayon::prelude::*;
use roo_state::ConversationSkeleton;
use serde_json::Value;
use std::borrow::Cow;
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
    /// The todos [`todos_out`] took out of a header.
    pub(super) fn todos(text: Box<str>) -> Box<Apart> {
        let todos = Some(text);
        Box::new(Apart {
            todos,
            ..Apart::default()
        })
    }
}

impl TaskStore {
    /// The header at `i` with its child calls whole (borrowed when nothing of it is kept apart).
    pub fn whole(&self, i: usize) -> Option<Cow<'_, ConversationSkeleton>> {
        let s = self.skeletons.get(i)?;
        let Some(apart) = self.tasks.get(i).and_then(|t| t.apart.as_deref()) else {
            return Some(Cow::Borrowed(s));
        };
        let mut s = s.clone();
        for &(call, from) in apart.shared.iter() {
            if let Some(c) = s.child_tasks.get_mut(call as usize) {
                c.message = self.instruction_at(from).to_owned();
            }
        }
        if let Some(text) = apart.todos.as_deref() {
            todos_in(&mut s, text);
        }
        Some(Cow::Owned(s))
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
            .for_each(|(s, t)| {
                if let Some(text) = t.apart.take().and_then(|a| a.todos) {
                    todos_in(s, &text);
                }
            });
    }

    /// Keep the child calls' todos and shared messages out of the headers (after an open, and
    /// after a refresh that changed something).
    pub(super) fn keep_apart(&mut self) {
        self.messages_in();
        // Each instruction's hash → the first task with that instruction.
        let hashes: Vec<Option<u64>> = (self.skeletons.par_iter())
            .map(|s| s.instruction.as_deref().map(|t| xxh3_64(t.as_bytes())))
            .collect();
        let mut by_text: HashMap<u64, u32> = HashMap::with_capacity(hashes.len());
        for (i, h) in hashes.iter().enumerate() {
            if let Some(h) = h {
                by_text.entry(*h).or_insert(i as u32);
            }
        }
        let this = &*self;
        let shared: Vec<Vec<(u32, u32)>> = (this.skeletons.par_iter())
            .map(|s| {
                let calls = s.child_tasks.iter().enumerate();
                calls
                    .filter(|(_, c)| !c.message.is_empty())
                    .filter_map(|(k, c)| {
                        let from = *by_text.get(&xxh3_64(c.message.as_bytes()))?;
                        (this.instruction_at(from) == c.message).then_some((k as u32, from))
                    })
                    .collect()
            })
            .collect();
        (self.skeletons.par_iter_mut())
            .zip(self.tasks.par_iter_mut())
            .zip(shared)
            .for_each(|((s, t), shared)| {
                let todos = todos_out(s);
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

/// Take the todos out of a header's calls, as JSON (`None` when no call has any left in it). The
/// cache's readers call it as each header is parsed, so the parsed todos are freed at once.
pub(crate) fn todos_out(s: &mut ConversationSkeleton) -> Option<Box<str>> {
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

/// Put the todos of [`todos_out`] back into the header's calls.
fn todos_in(s: &mut ConversationSkeleton, text: &str) {
    let todos: Vec<(usize, Value)> = serde_json::from_str(text).unwrap_or_default();
    for (call, t) in todos {
        if let Some(c) = s.child_tasks.get_mut(call) {
            c.todos = Some(t);
        }
    }
}
