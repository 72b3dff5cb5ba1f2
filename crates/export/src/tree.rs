//! Conversation trees and project conversations over skeleton headers.

use crate::error::{ExportError, Result};
use roo_formats::text::parse_iso_ms;
use roo_state::hierarchy::{get_task_tree, TaskTreeNode, TreeOptions, WorkspaceQuery};
use roo_state::skeleton::ConversationSkeleton;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};

/// What a walk over a conversation tree meets, depth first (parents before children).
pub enum Visit<'a> {
    /// A task starts. `omitted`: children left out by the depth limit.
    Enter {
        node: &'a TaskTreeNode,
        header: Option<&'a ConversationSkeleton>,
        depth: u32,
        omitted: usize,
        has_children: bool,
    },
    /// The task's children (if any) have all been visited.
    Leave {
        node: &'a TaskTreeNode,
        has_children: bool,
    },
}

/// A conversation: the tree under `root_id`, `max_levels` levels deep (1 = the root alone).
pub struct Conversation<'a> {
    pub root: TaskTreeNode,
    index: HashMap<&'a str, &'a ConversationSkeleton>,
    child_counts: HashMap<&'a str, usize>,
}

impl<'a> Conversation<'a> {
    pub fn new(
        headers: &'a [ConversationSkeleton],
        root_id: &str,
        max_levels: Option<u32>,
        tasks_dir_shown: &str,
    ) -> Result<Self> {
        if max_levels == Some(0) {
            return Err(ExportError::InvalidArgument(
                "maxDepth counts levels of tasks, the root being level 1: give 1 or more (or \
                 leave it out for the whole tree)"
                    .into(),
            ));
        }
        let opts = TreeOptions {
            root_id: Some(root_id.to_owned()),
            workspace: None,
            max_depth: max_levels.map(|m| m - 1),
        };
        let root = get_task_tree(headers, &opts)
            .into_iter()
            .next()
            .ok_or_else(|| ExportError::TaskNotFound {
                task_id: root_id.to_owned(),
                tasks_dir: tasks_dir_shown.into(),
            })?;
        let mut index = HashMap::with_capacity(headers.len());
        let mut child_counts: HashMap<&str, usize> = HashMap::new();
        for h in headers {
            index.entry(h.task_id.as_str()).or_insert(h);
            if let Some(p) = h.parent_task_id.as_deref() {
                if p != h.task_id {
                    *child_counts.entry(p).or_default() += 1;
                }
            }
        }
        Ok(Self {
            root,
            index,
            child_counts,
        })
    }

    pub fn header(&self, id: &str) -> Option<&'a ConversationSkeleton> {
        self.index.get(id).copied()
    }

    /// Number of tasks in the tree.
    pub fn task_count(&self) -> usize {
        let mut n = 0;
        let mut stack = vec![&self.root];
        while let Some(t) = stack.pop() {
            n += 1;
            stack.extend(t.children.iter());
        }
        n
    }

    /// Depth-first walk without recursion (trees may be deep).
    pub fn walk(
        &self,
        cancel: &AtomicBool,
        mut visit: impl FnMut(Visit<'_>) -> Result<()>,
    ) -> Result<()> {
        enum Step<'n> {
            Open(&'n TaskTreeNode),
            Close(&'n TaskTreeNode, bool),
        }
        let mut stack = vec![Step::Open(&self.root)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Open(node) => {
                    if cancel.load(Ordering::Relaxed) {
                        return Err(ExportError::Aborted);
                    }
                    let has_children = !node.children.is_empty();
                    let total = self
                        .child_counts
                        .get(node.task_id.as_str())
                        .copied()
                        .unwrap_or(0);
                    let omitted = if has_children { 0 } else { total };
                    visit(Visit::Enter {
                        node,
                        header: self.header(&node.task_id),
                        depth: node.depth,
                        omitted,
                        has_children,
                    })?;
                    stack.push(Step::Close(node, has_children));
                    for c in node.children.iter().rev() {
                        stack.push(Step::Open(c));
                    }
                }
                Step::Close(node, has_children) => visit(Visit::Leave { node, has_children })?,
            }
        }
        Ok(())
    }
}

/// A root task of a project and what its tree adds up to.
#[derive(Debug, Clone)]
pub struct ProjectConversation<'a> {
    pub root: &'a ConversationSkeleton,
    pub task_count: usize,
    pub total_size: u64,
    pub created_ms: i64,
    pub last_ms: i64,
    pub message_count: u64,
    pub action_count: u64,
}

/// Selection of a project's conversations.
#[derive(Debug, Clone, Default)]
pub struct ProjectFilter {
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    pub mode: Option<String>,
}

pub fn created_ms(s: &ConversationSkeleton) -> i64 {
    s.created_at_ms
        .or_else(|| parse_iso_ms(&s.metadata.created_at))
        .unwrap_or(0)
}

pub fn last_ms(s: &ConversationSkeleton) -> i64 {
    s.last_activity_ms
        .or_else(|| parse_iso_ms(&s.metadata.last_activity))
        .unwrap_or(0)
}

/// Does a task belong to the project `project` names (a path, or a bare folder name: the one
/// workspace rule, [`WorkspaceQuery`])?
pub fn in_project(s: &ConversationSkeleton, project: &WorkspaceQuery) -> bool {
    (s.metadata.workspace.as_deref()).is_some_and(|w| project.matches(w))
}

/// The conversations of a project: its tasks whose parent is not one of its tasks are roots; each
/// root counts its whole tree. Kept when the tree's activity `[first, last]` meets
/// `[start, end]` and (with `mode`) the root ran in that mode. Most recent activity first.
pub fn project_conversations<'a>(
    headers: &'a [ConversationSkeleton],
    project_path: &str,
    filter: &ProjectFilter,
) -> Vec<ProjectConversation<'a>> {
    let project = WorkspaceQuery::new(project_path);
    let members: Vec<&ConversationSkeleton> =
        headers.iter().filter(|s| in_project(s, &project)).collect();
    let ids: HashSet<&str> = members.iter().map(|s| s.task_id.as_str()).collect();
    let mut children: HashMap<&str, Vec<&ConversationSkeleton>> = HashMap::new();
    let mut roots: Vec<&ConversationSkeleton> = Vec::new();
    for s in &members {
        match s.parent_task_id.as_deref() {
            Some(p) if p != s.task_id && ids.contains(p) => children.entry(p).or_default().push(s),
            _ => roots.push(s),
        }
    }
    let mut seen: HashSet<&str> = HashSet::with_capacity(members.len());
    let mut out = Vec::new();
    let tally = |root: &'a ConversationSkeleton, seen: &mut HashSet<&'a str>| {
        let mut c = ProjectConversation {
            root,
            task_count: 0,
            total_size: 0,
            created_ms: i64::MAX,
            last_ms: i64::MIN,
            message_count: 0,
            action_count: 0,
        };
        let mut queue = VecDeque::from([root]);
        seen.insert(root.task_id.as_str());
        while let Some(t) = queue.pop_front() {
            c.task_count += 1;
            c.total_size += t.metadata.total_size;
            c.message_count += u64::from(t.metadata.message_count);
            c.action_count += u64::from(t.metadata.action_count);
            c.created_ms = c.created_ms.min(created_ms(t));
            c.last_ms = c.last_ms.max(last_ms(t));
            for k in children
                .get(t.task_id.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                if seen.insert(k.task_id.as_str()) {
                    queue.push_back(k);
                }
            }
        }
        c
    };
    for r in &roots {
        out.push(tally(r, &mut seen));
    }
    // Tasks no root reaches (a loop of parents the hierarchy left): each becomes a conversation.
    for s in &members {
        if !seen.contains(s.task_id.as_str()) {
            out.push(tally(s, &mut seen));
        }
    }
    out.retain(|c| {
        filter.start_ms.is_none_or(|s| c.last_ms >= s)
            && filter.end_ms.is_none_or(|e| c.created_ms <= e)
            && filter
                .mode
                .as_deref()
                .is_none_or(|m| c.root.metadata.mode.as_deref() == Some(m))
    });
    out.sort_by(|a, b| {
        b.last_ms
            .cmp(&a.last_ms)
            .then_with(|| a.root.task_id.cmp(&b.root.task_id))
    });
    out
}
