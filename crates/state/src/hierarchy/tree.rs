//! Walks over linked skeletons: the task tree, ancestors, descendants.

use super::*;

/// How the walks order siblings (and the top nodes of a tree).
#[derive(Debug, Clone, Copy)]
pub(super) enum SiblingOrder {
    /// `createdAtMs` (a task without one last), then task id: the order of [`descendants`].
    CreatedMs,
    /// The `createdAt` text, then task id: the order trees show. A task without a date, whose
    /// `createdAt` is the epoch, comes first.
    CreatedAtText,
}

impl SiblingOrder {
    /// A number in the order of `s` among tasks: two tasks whose keys differ compare as their
    /// keys do; equal keys leave it to [`SiblingOrder::compare`]. Sorts compare keys side by
    /// side in one vector instead of texts scattered over the headers.
    fn key(self, s: &ConversationSkeleton) -> u128 {
        match self {
            // A `None` as `compare` takes it: the latest time.
            SiblingOrder::CreatedMs => {
                let ms = s.created_at_ms.unwrap_or(i64::MAX);
                (i128::from(ms) - i128::from(i64::MIN)) as u128
            }
            // The first 16 bytes, zero-padded, as a big-endian number: where those differ, the
            // texts compare as they do (a text that ends first is the smaller one).
            SiblingOrder::CreatedAtText => {
                let mut head = [0u8; 16];
                let text = s.metadata.created_at.as_bytes();
                let n = text.len().min(16);
                head[..n].copy_from_slice(&text[..n]);
                u128::from_be_bytes(head)
            }
        }
    }

    fn compare(self, a: &ConversationSkeleton, b: &ConversationSkeleton) -> Ordering {
        match self {
            SiblingOrder::CreatedMs => (a.created_at_ms.unwrap_or(i64::MAX), &a.task_id)
                .cmp(&(b.created_at_ms.unwrap_or(i64::MAX), &b.task_id)),
            SiblingOrder::CreatedAtText => a
                .metadata
                .created_at
                .cmp(&b.metadata.created_at)
                .then_with(|| a.task_id.cmp(&b.task_id)),
        }
    }
}

pub(super) struct Forest<'a> {
    pub(super) items: Vec<&'a ConversationSkeleton>,
    pub(super) index: FxMap<&'a str, usize>,
    pub(super) children: Vec<Vec<usize>>,
    /// Each item's position in the headers the forest was made of.
    pub(super) positions: Vec<usize>,
    /// Each item's parent among the items.
    parents: Vec<Option<usize>>,
    order: SiblingOrder,
    /// Each item's [`SiblingOrder::key`].
    keys: Vec<u128>,
}

impl<'a> Forest<'a> {
    pub(super) fn new(
        skeletons: &'a [ConversationSkeleton],
        workspace: Option<&str>,
        order: SiblingOrder,
    ) -> Self {
        // The one workspace rule: a path, or a bare folder name ([`WorkspaceQuery`]).
        let ws = workspace.map(WorkspaceQuery::new);
        let placed: Vec<(usize, &ConversationSkeleton)> = skeletons
            .iter()
            .enumerate()
            .filter(|(_, s)| match &ws {
                Some(w) => s
                    .metadata
                    .workspace
                    .as_deref()
                    .is_some_and(|x| w.matches(x)),
                None => true,
            })
            .collect();
        Self::of(placed, order)
    }

    /// The forest of the tasks at `positions` of `skeletons` only.
    pub(super) fn among(
        skeletons: &'a [ConversationSkeleton],
        positions: &[usize],
        order: SiblingOrder,
    ) -> Self {
        let placed = (positions.iter())
            .filter_map(|&i| Some((i, skeletons.get(i)?)))
            .collect();
        Self::of(placed, order)
    }

    fn of(mut placed: Vec<(usize, &'a ConversationSkeleton)>, order: SiblingOrder) -> Self {
        placed.par_sort_unstable_by(|(_, a), (_, b)| {
            a.task_id
                .cmp(&b.task_id)
                .then_with(|| a.metadata.data_source.cmp(&b.metadata.data_source))
        });
        let (positions, items): (Vec<usize>, Vec<&ConversationSkeleton>) =
            placed.into_iter().unzip();
        let mut index: FxMap<&str, usize> = FxMap::default();
        index.reserve(items.len());
        for (i, s) in items.iter().enumerate() {
            index.entry(s.task_id.as_str()).or_insert(i);
        }
        let mut children = vec![Vec::new(); items.len()];
        let mut parents = vec![None; items.len()];
        for (i, s) in items.iter().enumerate() {
            if let Some(&p) = s.parent_task_id.as_deref().and_then(|p| index.get(p)) {
                if p != i {
                    if let Some(c) = children.get_mut(p) {
                        c.push(i);
                        parents[i] = Some(p);
                    }
                }
            }
        }
        let keys = items.iter().map(|s| order.key(s)).collect();
        let mut forest = Self {
            items,
            index,
            children,
            positions,
            parents,
            order,
            keys,
        };
        let mut children = std::mem::take(&mut forest.children);
        for c in &mut children {
            forest.sort(c);
        }
        forest.children = children;
        forest
    }

    /// Sort positions of `items` in the forest's sibling order, the same task twice (one id in
    /// two stores) by position. A long list (the top nodes of a large store) is sorted on
    /// every thread.
    fn sort(&self, positions: &mut [usize]) {
        let key = |i: usize| self.keys.get(i).copied().unwrap_or(u128::MAX);
        let order = |&a: &usize, &b: &usize| {
            (key(a).cmp(&key(b)))
                .then_with(|| match (self.items.get(a), self.items.get(b)) {
                    (Some(x), Some(y)) => self.order.compare(x, y),
                    _ => Ordering::Equal,
                })
                .then(a.cmp(&b))
        };
        match positions.len() > 4096 {
            true => positions.par_sort_unstable_by(order),
            false => positions.sort_unstable_by(order),
        }
    }

    pub(super) fn parent_of(&self, i: usize) -> Option<usize> {
        self.parents.get(i).copied().flatten()
    }
}

/// A task's parent id, when it names one (an empty id names none).
pub(super) fn parent_id(s: &ConversationSkeleton) -> Option<&str> {
    s.parent_task_id.as_deref().filter(|p| !p.is_empty())
}

/// Where a node of a tree sits: its depth, and for a top node whether its parent is missing from
/// the tasks given.
#[derive(Debug, Clone, Copy)]
pub(super) struct Placement {
    pub(super) depth: u32,
    pub(super) parent_missing: bool,
}

/// The forest of tasks (or the subtree of `root_id`), children in creation order (the
/// `createdAt` text, then task id), cycle-safe. Each node carries the task's dates, counts,
/// completion and parent; a top node whose parent is not among `skeletons` is marked
/// `parent_missing`.
pub fn get_task_tree(skeletons: &[ConversationSkeleton], opts: &TreeOptions) -> Vec<TaskTreeNode> {
    build_tree(
        skeletons,
        opts,
        |s, at| TaskTreeNode {
            task_id: s.task_id.clone(),
            title: s.metadata.title.clone(),
            created_at: s.metadata.created_at.clone(),
            workspace: s.metadata.workspace.clone(),
            mode: s.metadata.mode.clone(),
            parent_evidence: s.parent_evidence.clone(),
            depth: at.depth,
            children: Vec::new(),
            last_activity: Some(s.metadata.last_activity.clone()),
            message_count: Some(s.metadata.message_count),
            action_count: Some(s.metadata.action_count),
            is_completed: Some(s.is_completed),
            parent_task_id: parent_id(s).map(str::to_owned),
            parent_missing: at.parent_missing.then_some(true),
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
    build_tree(skeletons, opts, view_node, |n, children| {
        n.children = children
    })
}

/// The trees of several tasks at once, in the order given (an id not among `skeletons` is left
/// out), each exactly the [`get_task_tree_view`] of its `root_id`: the forest is built once,
/// where a call per task would build it again each time.
pub fn get_task_trees_view<'a>(
    skeletons: &'a [ConversationSkeleton],
    root_ids: &[String],
    max_depth: Option<u32>,
) -> Vec<TaskTreeView<'a>> {
    let forest = Forest::new(skeletons, None, SiblingOrder::CreatedAtText);
    root_ids
        .iter()
        .filter_map(|id| forest.index.get(id.as_str()).copied())
        .flat_map(|top| {
            build_tree_in(
                &forest,
                skeletons,
                vec![top],
                max_depth,
                view_node,
                |n, c| n.children = c,
            )
        })
        .collect()
}

/// [`get_task_trees_view`] over skeletons sorted by task id with distinct ids (a task store
/// handle's), building the forest of `members` only: the positions of the tasks of the trees
/// asked for (more do no harm). A top node's parent is missing when no task of `skeletons`, not
/// merely of `members`, has its id.
pub fn get_task_trees_view_among<'a>(
    skeletons: &'a [ConversationSkeleton],
    members: &[usize],
    root_ids: &[String],
    max_depth: Option<u32>,
) -> Vec<TaskTreeView<'a>> {
    let forest = Forest::among(skeletons, members, SiblingOrder::CreatedAtText);
    let missing = MissingParents::sorted(&forest, skeletons);
    root_ids
        .iter()
        .filter_map(|id| forest.index.get(id.as_str()).copied())
        .flat_map(|top| {
            let listing = list_nodes(&forest, vec![top], max_depth);
            assemble(&forest, &missing, listing, view_node, |n, c| n.children = c)
        })
        .collect()
}

/// A node of [`get_task_tree_view`].
fn view_node(s: &ConversationSkeleton, at: Placement) -> TaskTreeView<'_> {
    TaskTreeView {
        task_id: &s.task_id,
        title: s.metadata.title.as_deref(),
        created_at: &s.metadata.created_at,
        workspace: s.metadata.workspace.as_deref(),
        mode: s.metadata.mode.as_deref(),
        parent_evidence: s.parent_evidence.as_ref().map(TreeEvidence::from),
        depth: at.depth,
        children: Vec::new(),
        last_activity: &s.metadata.last_activity,
        message_count: s.metadata.message_count,
        action_count: s.metadata.action_count,
        is_completed: s.is_completed,
        parent_task_id: parent_id(s),
        parent_missing: at.parent_missing.then_some(true),
    }
}

/// Whether a task's parent is missing from `skeletons`: it names one, and no task of that id is
/// there (a parent left out by the workspace filter is there).
pub(super) struct MissingParents<'f, 'a> {
    forest: &'f Forest<'a>,
    /// Every id of `skeletons`, when the workspace filter left some out of the forest.
    all_ids: Option<HashSet<&'a str, std::hash::BuildHasherDefault<FxHasher>>>,
    /// Every skeleton, sorted by task id, when the forest holds some of them only.
    sorted: Option<&'a [ConversationSkeleton]>,
}

impl<'f, 'a> MissingParents<'f, 'a> {
    pub(super) fn new(forest: &'f Forest<'a>, skeletons: &'a [ConversationSkeleton]) -> Self {
        let all_ids = (forest.items.len() < skeletons.len())
            .then(|| skeletons.iter().map(|s| s.task_id.as_str()).collect());
        Self {
            forest,
            all_ids,
            sorted: None,
        }
    }

    /// Parents looked up by id among `skeletons`, sorted by task id.
    pub(super) fn sorted(forest: &'f Forest<'a>, skeletons: &'a [ConversationSkeleton]) -> Self {
        Self {
            forest,
            all_ids: None,
            sorted: Some(skeletons),
        }
    }

    /// Where the listed node `at` sits.
    pub(super) fn placement(&self, at: &Listed) -> Placement {
        let s = self.forest.items.get(at.item);
        Placement {
            depth: at.depth,
            parent_missing: at.parent.is_none() && s.is_some_and(|s| self.of(s)),
        }
    }

    fn of(&self, s: &ConversationSkeleton) -> bool {
        parent_id(s).is_some_and(|p| match (&self.all_ids, self.sorted) {
            (_, Some(all)) => all.binary_search_by(|x| x.task_id.as_str().cmp(p)).is_err(),
            (Some(ids), None) => !ids.contains(p),
            (None, None) => !self.forest.index.contains_key(p),
        })
    }
}

/// The top nodes of a tree: `root_id` alone, or every task without a parent in the forest, in
/// the forest's sibling order.
pub(super) fn top_nodes(forest: &Forest<'_>, opts: &TreeOptions) -> Vec<usize> {
    match &opts.root_id {
        Some(id) => forest.index.get(id.as_str()).copied().into_iter().collect(),
        None => {
            let mut r: Vec<usize> = (0..forest.items.len())
                .filter(|&i| forest.parent_of(i).is_none())
                .collect();
            forest.sort(&mut r);
            r
        }
    }
}

/// One node of the breadth-first listing of a tree.
#[derive(Clone, Copy)]
pub(super) struct Listed {
    /// Position in the forest's items.
    pub(super) item: usize,
    pub(super) depth: u32,
    /// Position of the parent node in the listing (`None`: a top node).
    pub(super) parent: Option<usize>,
}

/// The tree of `opts` with nodes made by `node` (from a skeleton and its placement) and given
/// their children by `adopt`: a breadth-first listing, node contents in parallel, then assembly
/// bottom-up by moves (no recursion, whatever the depth).
pub(super) fn build_tree<'a, N: Send>(
    skeletons: &'a [ConversationSkeleton],
    opts: &TreeOptions,
    node: impl Fn(&'a ConversationSkeleton, Placement) -> N + Sync,
    adopt: impl Fn(&mut N, Vec<N>),
) -> Vec<N> {
    let forest = Forest::new(
        skeletons,
        opts.workspace.as_deref(),
        SiblingOrder::CreatedAtText,
    );
    let tops = top_nodes(&forest, opts);
    build_tree_in(&forest, skeletons, tops, opts.max_depth, node, adopt)
}

/// [`build_tree`] in a forest already built, from the top nodes `tops`.
fn build_tree_in<'a, N: Send>(
    forest: &Forest<'a>,
    skeletons: &'a [ConversationSkeleton],
    tops: Vec<usize>,
    max_depth: Option<u32>,
    node: impl Fn(&'a ConversationSkeleton, Placement) -> N + Sync,
    adopt: impl Fn(&mut N, Vec<N>),
) -> Vec<N> {
    let missing = MissingParents::new(forest, skeletons);
    let listing = list_nodes(forest, tops, max_depth);
    assemble(forest, &missing, listing, node, adopt)
}

/// The nodes of `listing` made by `node` (in parallel) and given their children by `adopt`,
/// bottom-up by moves.
fn assemble<'a, N: Send>(
    forest: &Forest<'a>,
    missing: &MissingParents<'_, 'a>,
    listing: Vec<Listed>,
    node: impl Fn(&'a ConversationSkeleton, Placement) -> N + Sync,
    adopt: impl Fn(&mut N, Vec<N>),
) -> Vec<N> {
    let mut shells: Vec<Option<N>> = listing
        .par_iter()
        .map(|at| (forest.items.get(at.item)).map(|&s| node(s, missing.placement(at))))
        .collect();
    let mut kids: Vec<Vec<N>> = (0..listing.len()).map(|_| Vec::new()).collect();
    let mut top: Vec<N> = Vec::new();
    for pos in (0..listing.len()).rev() {
        let Some(at) = listing.get(pos) else {
            continue;
        };
        let Some(mut n) = shells.get_mut(pos).and_then(Option::take) else {
            continue;
        };
        let mut children = kids.get_mut(pos).map(std::mem::take).unwrap_or_default();
        children.reverse();
        adopt(&mut n, children);
        match at.parent.and_then(|p| kids.get_mut(p)) {
            Some(k) => k.push(n),
            None => top.push(n),
        }
    }
    top.reverse();
    top
}

/// The nodes of the tree from `tops`, breadth-first, each task once (the first place it is
/// reached: cycle-safe), down to `max_depth`. A node's children follow each other in the listing,
/// in the forest's sibling order, and come after it.
pub(super) fn list_nodes(
    forest: &Forest<'_>,
    tops: Vec<usize>,
    max_depth: Option<u32>,
) -> Vec<Listed> {
    let mut visited = vec![false; forest.items.len()];
    let mut listing: Vec<Listed> = Vec::new();
    let mut queue: VecDeque<Listed> = tops
        .into_iter()
        .map(|item| Listed {
            item,
            depth: 0,
            parent: None,
        })
        .collect();
    while let Some(at) = queue.pop_front() {
        if visited.get(at.item).copied().unwrap_or(true) {
            continue;
        }
        if let Some(v) = visited.get_mut(at.item) {
            *v = true;
        }
        let pos = listing.len();
        listing.push(at);
        if max_depth.is_none_or(|m| at.depth < m) {
            for &c in forest
                .children
                .get(at.item)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                queue.push_back(Listed {
                    item: c,
                    depth: at.depth + 1,
                    parent: Some(pos),
                });
            }
        }
    }
    listing
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
    let forest = Forest::new(skeletons, None, SiblingOrder::CreatedMs);
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

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
