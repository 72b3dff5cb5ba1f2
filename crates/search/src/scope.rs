//! The task-level filters of a search that the store does not index: the host family (`roo`,
//! `zoo-code`, `cline`, `kilo-code`) and a task's subtree (the task and its descendants, by the
//! parent links the index state holds). Both become conditions of the store's own filter, so a
//! narrow scope over a large index still fills its page.

use crate::error::{Error, Result};
use crate::state::IndexState;
use crate::store::Filter;
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

    /// The scope as conditions of the store's filter: the host family on the chunks' `source`,
    /// the subtree on their `task_id` (one value, or any of the subtree's, sorted).
    pub fn narrow(&self, filter: &mut Filter) {
        filter.source = self.host.clone();
        match &self.tasks {
            Some(t) if t.len() == 1 => filter.task_id = t.iter().next().cloned(),
            Some(t) => {
                let mut ids: Vec<String> = t.iter().cloned().collect();
                ids.sort_unstable();
                filter.task_ids = Some(ids);
            }
            None => {}
        }
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
