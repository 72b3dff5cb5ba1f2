//! The task-level filters of a search that the store does not index: the host family (`roo`,
//! `zoo-code`, `cline`, `kilo-code`) and a task's subtree (the task and its descendants, by the
//! parent links the index state holds). Hits are checked after the store answers, from a deeper
//! pool.

use crate::error::{Error, Result};
use crate::state::IndexState;
use crate::store::ChunkPayload;
use std::collections::{HashMap, HashSet};

/// Who a search keeps.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    host: Option<String>,
    tasks: Option<HashSet<String>>,
}

impl Scope {
    /// The scope of a host family and a subtree root (an id or a unique prefix of an indexed
    /// task).
    pub fn new(host: Option<&str>, task: Option<&str>, st: Option<&IndexState>) -> Result<Scope> {
        let host = host
            .map(|h| h.trim().to_lowercase())
            .filter(|h| !h.is_empty());
        let tasks = match task.map(str::trim).filter(|t| !t.is_empty()) {
            None => None,
            Some(id) => Some(subtree(id, st)?),
        };
        Ok(Scope { host, tasks })
    }

    /// Whether the scope keeps everything.
    pub fn is_open(&self) -> bool {
        self.host.is_none() && self.tasks.is_none()
    }

    /// The one task of a subtree that has no descendant (the store can filter on it).
    pub fn single_task(&self) -> Option<&str> {
        let t = self.tasks.as_ref()?;
        (t.len() == 1).then(|| t.iter().next().map(String::as_str))?
    }

    pub fn keeps(&self, p: &ChunkPayload) -> bool {
        self.host.as_deref().is_none_or(|h| {
            p.source
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case(h))
        }) && self.tasks.as_ref().is_none_or(|t| t.contains(&p.task_id))
    }
}

/// A task and its descendants, by the parent links of the indexed tasks.
fn subtree(id: &str, st: Option<&IndexState>) -> Result<HashSet<String>> {
    let Some(st) = st else {
        return Ok(HashSet::from([id.to_owned()]));
    };
    let root = if st.tasks.contains_key(id) {
        id.to_owned()
    } else {
        let found: Vec<&String> = st
            .tasks
            .keys()
            .filter(|k| k.starts_with(id))
            .take(4)
            .collect();
        match found.as_slice() {
            [one] => (*one).clone(),
            [] => {
                return Err(Error::InvalidArgument(format!(
                    "no indexed task `{id}` (task takes an id or a unique prefix)"
                )))
            }
            many => {
                return Err(Error::InvalidArgument(format!(
                    "task `{id}` is ambiguous: {}…",
                    many.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        }
    };
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for (k, r) in &st.tasks {
        if let Some(p) = r.parent_task_id.as_deref() {
            children.entry(p).or_default().push(k.as_str());
        }
    }
    let mut out = HashSet::from([root.clone()]);
    let mut todo = vec![root];
    while let Some(t) = todo.pop() {
        for c in children.get(t.as_str()).into_iter().flatten() {
            if out.insert((*c).to_owned()) {
                todo.push((*c).to_owned());
            }
        }
    }
    Ok(out)
}
