//! Walks over linked skeletons: the task tree, ancestors, descendants.

use super::*;

pub(super) struct Forest<'a> {
    pub(super) items: Vec<&'a ConversationSkeleton>,
    pub(super) index: FxMap<&'a str, usize>,
    pub(super) children: Vec<Vec<usize>>,
}

impl<'a> Forest<'a> {
    pub(super) fn new(skeletons: &'a [ConversationSkeleton], workspace: Option<&str>) -> Self {
        let ws = workspace.map(normalize_workspace);
        let mut items: Vec<&ConversationSkeleton> = skeletons
            .iter()
            .filter(|s| match &ws {
                Some(w) => {
                    s.metadata
                        .workspace
                        .as_deref()
                        .map(normalize_workspace)
                        .as_deref()
                        == Some(w.as_str())
                }
                None => true,
            })
            .collect();
        items.sort_unstable_by(|a, b| {
            a.task_id
                .cmp(&b.task_id)
                .then_with(|| a.metadata.data_source.cmp(&b.metadata.data_source))
        });
        let mut index: FxMap<&str, usize> = FxMap::default();
        index.reserve(items.len());
        for (i, s) in items.iter().enumerate() {
            index.entry(s.task_id.as_str()).or_insert(i);
        }
        let mut children = vec![Vec::new(); items.len()];
        for (i, s) in items.iter().enumerate() {
            if let Some(&p) = s.parent_task_id.as_deref().and_then(|p| index.get(p)) {
                if p != i {
                    if let Some(c) = children.get_mut(p) {
                        c.push(i);
                    }
                }
            }
        }
        let order = |i: &usize| {
            let s = items.get(*i);
            (
                s.and_then(|s| s.created_at_ms).unwrap_or(i64::MAX),
                s.map(|s| s.task_id.as_str()).unwrap_or_default(),
            )
        };
        for c in &mut children {
            c.sort_by(|a, b| order(a).cmp(&order(b)));
        }
        Self {
            items,
            index,
            children,
        }
    }

    pub(super) fn parent_of(&self, i: usize) -> Option<usize> {
        let s = self.items.get(i)?;
        let p = *self.index.get(s.parent_task_id.as_deref()?)?;
        (p != i).then_some(p)
    }
}

/// The forest of tasks (or the subtree of `root_id`), children in creation order, cycle-safe.
pub fn get_task_tree(skeletons: &[ConversationSkeleton], opts: &TreeOptions) -> Vec<TaskTreeNode> {
    build_tree(
        skeletons,
        opts,
        |s, depth| TaskTreeNode {
            task_id: s.task_id.clone(),
            title: s.metadata.title.clone(),
            created_at: s.metadata.created_at.clone(),
            workspace: s.metadata.workspace.clone(),
            mode: s.metadata.mode.clone(),
            parent_evidence: s.parent_evidence.clone(),
            depth,
            children: Vec::new(),
        },
        |n, children| n.children = children,
    )
}

/// [`get_task_tree`] borrowing from the skeletons: the same nodes and the same JSON, without a
/// copy of every string (what a caller that only serialises the tree wants).
pub fn get_task_tree_view<'a>(
    skeletons: &'a [ConversationSkeleton],
    opts: &TreeOptions,
) -> Vec<TaskTreeView<'a>> {
    build_tree(
        skeletons,
        opts,
        |s, depth| TaskTreeView {
            task_id: &s.task_id,
            title: s.metadata.title.as_deref(),
            created_at: &s.metadata.created_at,
            workspace: s.metadata.workspace.as_deref(),
            mode: s.metadata.mode.as_deref(),
            parent_evidence: s.parent_evidence.as_ref(),
            depth,
            children: Vec::new(),
        },
        |n, children| n.children = children,
    )
}

/// The tree of `opts` with nodes made by `node` (from a skeleton and its depth) and given their
/// children by `adopt`: a breadth-first listing, node contents in parallel, then assembly
/// bottom-up by moves (no recursion, whatever the depth).
pub(super) fn build_tree<'a, N: Send>(
    skeletons: &'a [ConversationSkeleton],
    opts: &TreeOptions,
    node: impl Fn(&'a ConversationSkeleton, u32) -> N + Sync,
    adopt: impl Fn(&mut N, Vec<N>),
) -> Vec<N> {
    let forest = Forest::new(skeletons, opts.workspace.as_deref());
    let roots: Vec<usize> = match &opts.root_id {
        Some(id) => forest.index.get(id.as_str()).copied().into_iter().collect(),
        None => {
            let mut r: Vec<usize> = (0..forest.items.len())
                .filter(|&i| forest.parent_of(i).is_none())
                .collect();
            let key = |i: usize| {
                let s = forest.items.get(i);
                (
                    s.and_then(|s| s.created_at_ms).unwrap_or(i64::MAX),
                    s.map(|s| s.task_id.as_str()).unwrap_or_default(),
                )
            };
            r.sort_by(|&a, &b| key(a).cmp(&key(b)));
            r
        }
    };
    // Breadth-first listing (index, depth, parent position).
    let mut visited = vec![false; forest.items.len()];
    let mut listing: Vec<(usize, u32, Option<usize>)> = Vec::new();
    let mut queue: VecDeque<(usize, u32, Option<usize>)> =
        roots.into_iter().map(|r| (r, 0, None)).collect();
    while let Some((i, d, parent_pos)) = queue.pop_front() {
        if visited.get(i).copied().unwrap_or(true) {
            continue;
        }
        if let Some(v) = visited.get_mut(i) {
            *v = true;
        }
        let pos = listing.len();
        listing.push((i, d, parent_pos));
        if opts.max_depth.is_none_or(|m| d < m) {
            for &c in forest
                .children
                .get(i)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                queue.push_back((c, d + 1, Some(pos)));
            }
        }
    }
    let mut shells: Vec<Option<N>> = listing
        .par_iter()
        .map(|&(i, depth, _)| forest.items.get(i).map(|&s| node(s, depth)))
        .collect();
    let mut kids: Vec<Vec<N>> = (0..listing.len()).map(|_| Vec::new()).collect();
    let mut top: Vec<N> = Vec::new();
    for pos in (0..listing.len()).rev() {
        let Some(&(_, _, parent_pos)) = listing.get(pos) else {
            continue;
        };
        let Some(mut n) = shells.get_mut(pos).and_then(Option::take) else {
            continue;
        };
        let mut children = kids.get_mut(pos).map(std::mem::take).unwrap_or_default();
        children.reverse();
        adopt(&mut n, children);
        match parent_pos.and_then(|p| kids.get_mut(p)) {
            Some(k) => k.push(n),
            None => top.push(n),
        }
    }
    top.reverse();
    top
}

/// The ancestors of `task_id`, nearest first. A parent id that is not among `skeletons` is listed
/// and ends the walk. Cycle-safe.
pub fn ancestors(skeletons: &[ConversationSkeleton], task_id: &str) -> Vec<String> {
    let index: HashMap<&str, &ConversationSkeleton> = skeletons
        .iter()
        .rev()
        .map(|s| (s.task_id.as_str(), s))
        .collect();
    let mut out = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    seen.insert(task_id);
    let mut cur = index.get(task_id).and_then(|s| s.parent_task_id.as_deref());
    while let Some(p) = cur {
        if !seen.insert(p) {
            break;
        }
        out.push(p.to_owned());
        cur = index.get(p).and_then(|s| s.parent_task_id.as_deref());
    }
    out
}

/// The descendants of `task_id`, breadth-first, siblings in creation order. Cycle-safe.
pub fn descendants(skeletons: &[ConversationSkeleton], task_id: &str) -> Vec<String> {
    let forest = Forest::new(skeletons, None);
    let Some(&start) = forest.index.get(task_id) else {
        return Vec::new();
    };
    let mut seen = vec![false; forest.items.len()];
    if let Some(s) = seen.get_mut(start) {
        *s = true;
    }
    let mut out = Vec::new();
    let mut queue = VecDeque::from([start]);
    while let Some(i) = queue.pop_front() {
        for &c in forest
            .children
            .get(i)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            if seen.get(c).copied().unwrap_or(true) {
                continue;
            }
            if let Some(s) = seen.get_mut(c) {
                *s = true;
            }
            if let Some(s) = forest.items.get(c) {
                out.push(s.task_id.clone());
            }
            queue.push_back(c);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Legacy comparison
// ---------------------------------------------------------------------------------------------
