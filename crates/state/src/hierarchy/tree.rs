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
        let ws = workspace.map(normalize_workspace);
        let mut placed: Vec<(usize, &ConversationSkeleton)> = skeletons
            .iter()
            .enumerate()
            .filter(|(_, s)| match &ws {
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
        placed.sort_unstable_by(|(_, a), (_, b)| {
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

    /// Sort positions of `items` in the forest's sibling order.
    fn sort(&self, positions: &mut [usize]) {
        let key = |i: usize| self.keys.get(i).copied().unwrap_or(u128::MAX);
        positions.sort_by(|&a, &b| {
            key(a)
                .cmp(&key(b))
                .then_with(|| match (self.items.get(a), self.items.get(b)) {
                    (Some(x), Some(y)) => self.order.compare(x, y),
                    _ => a.cmp(&b),
                })
        });
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
}

impl<'f, 'a> MissingParents<'f, 'a> {
    pub(super) fn new(forest: &'f Forest<'a>, skeletons: &'a [ConversationSkeleton]) -> Self {
        let all_ids = (forest.items.len() < skeletons.len())
            .then(|| skeletons.iter().map(|s| s.task_id.as_str()).collect());
        Self { forest, all_ids }
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
        parent_id(s).is_some_and(|p| match &self.all_ids {
            Some(ids) => !ids.contains(p),
            None => !self.forest.index.contains_key(p),
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
mod tests {
    use super::*;
    use crate::skeleton::{ApiTotalsOut, DatesFrom, SkeletonMetadata, StoredLinks, TaskFiles};

    const T0: i64 = 1_750_000_000_000;

    /// A linked header: `parent` as the hierarchy left it, created at `created` (none: no date).
    fn task(
        id: &str,
        parent: Option<&str>,
        created: Option<i64>,
        ws: &str,
    ) -> ConversationSkeleton {
        ConversationSkeleton {
            task_id: id.to_owned(),
            parent_task_id: parent.map(str::to_owned),
            sequence: None,
            metadata: SkeletonMetadata {
                title: Some(format!("task {id}")),
                created_at: roo_js::iso_from_ms(created.unwrap_or(0)),
                last_activity: roo_js::iso_from_ms(created.unwrap_or(0) + 60_000),
                mode: Some("code".into()),
                message_count: 7,
                action_count: 3,
                total_size: 0,
                workspace: Some(ws.to_owned()),
                data_source: format!("/tasks/{id}"),
                source: "roo".into(),
                dates_from: DatesFrom::UiMessages,
            },
            child_task_instruction_prefixes: Vec::new(),
            is_completed: id.starts_with('c'),
            truncated_instruction: None,
            instruction: None,
            child_tasks: Vec::new(),
            stored_links: StoredLinks::default(),
            parent_evidence: None,
            root_task_id: None,
            api_totals: ApiTotalsOut::default(),
            files: TaskFiles::default(),
            created_at_ms: created,
            last_activity_ms: created.map(|c| c + 60_000),
            diagnostics: Vec::new(),
        }
    }

    fn ids(nodes: &[TaskTreeNode]) -> Vec<&str> {
        nodes.iter().map(|n| n.task_id.as_str()).collect()
    }

    #[test]
    fn nodes_carry_dates_counts_completion_and_parent() {
        let tasks = vec![
            task("root", None, Some(T0), "/w"),
            task("child", Some("root"), Some(T0 + 1_000), "/w"),
        ];
        let tree = get_task_tree(&tasks, &TreeOptions::default());
        let root = &tree[0];
        assert_eq!(
            root.last_activity.as_deref(),
            Some("2025-06-15T15:07:40.000Z")
        );
        assert_eq!((root.message_count, root.action_count), (Some(7), Some(3)));
        assert_eq!(root.is_completed, Some(false));
        assert_eq!(
            (root.parent_task_id.as_deref(), root.parent_missing),
            (None, None)
        );
        let child = &root.children[0];
        assert_eq!(child.is_completed, Some(true));
        assert_eq!(child.parent_task_id.as_deref(), Some("root"));
        assert_eq!(child.parent_missing, None);
        let json = serde_json::to_string(child).unwrap_or_default();
        assert!(
            json.contains(r#""depth":1,"children":[],"lastActivity":"2025-06-15T15:07:41.000Z","messageCount":7,"actionCount":3,"isCompleted":true,"parentTaskId":"root"}"#),
            "{json}"
        );
    }

    #[test]
    fn a_node_says_how_it_was_linked_without_the_matched_text() {
        let mut child = task("child", Some("root"), Some(T0 + 1_000), "/w");
        child.parent_evidence = Some(ParentEvidence {
            source: "instruction_prefix".into(),
            confidence: 0.9,
            matched_prefix: Some("write the parser tests".into()),
            new_task_ts: Some(T0 + 500),
            match_kind: Some("exact".into()),
            gap_ms: Some(500),
            conflicts: vec!["other".into()],
        });
        let tasks = vec![task("root", None, Some(T0), "/w"), child];
        let want = serde_json::json!({
            "source": "instruction_prefix", "confidence": 0.9, "newTaskTs": T0 + 500,
            "matchKind": "exact", "gapMs": 500, "conflicts": ["other"],
        });
        let owned = serde_json::to_value(get_task_tree(&tasks, &TreeOptions::default()))
            .expect("serialises");
        let view = serde_json::to_value(get_task_tree_view(&tasks, &TreeOptions::default()))
            .expect("serialises");
        assert_eq!(owned[0]["children"][0]["parentEvidence"], want);
        assert_eq!(view, owned);
        // The header keeps the text.
        let header = serde_json::to_value(&tasks[1]).expect("serialises");
        assert_eq!(
            header["parentEvidence"]["matchedPrefix"],
            "write the parser tests"
        );
    }

    /// [`super::super::tree_json`] in `parts` parts.
    fn written(tasks: &[ConversationSkeleton], o: &TreeOptions, parts: usize) -> String {
        let written = super::super::tree_json(tasks, o, JsonText::Utf8, parts).expect("written");
        String::from_utf8(written).expect("UTF-8")
    }

    #[test]
    fn a_written_tree_is_the_owned_tree_with_cycles_missing_parents_and_any_text() {
        let mut tasks = vec![
            task("a", None, Some(T0), "/w"),
            task("a1", Some("a"), Some(T0 + 1), "/w"),
            task("a2", Some("a"), Some(T0 + 2), "/w"),
            task("a11", Some("a1"), Some(T0 + 3), "/w"),
            task("orphan", Some("gone"), Some(T0 + 4), "/w"),
            task("x", Some("y"), Some(T0 + 5), "/v"),
            task("y", Some("x"), Some(T0 + 6), "/v"),
            task("b", None, None, "/v"),
        ];
        tasks[1].metadata.title = Some("résumé \"quoted\" 日本語 🚀\n\u{1}".into());
        let by_depth = TreeOptions {
            max_depth: Some(1),
            ..TreeOptions::default()
        };
        let rooted = TreeOptions {
            root_id: Some("a1".into()),
            ..TreeOptions::default()
        };
        tasks[2].metadata.title = Some("ÿ½ \u{7f}\u{1f}\t\r\u{8}\u{c}/€".into());
        for o in [TreeOptions::default(), by_depth, rooted] {
            let owned = serde_json::to_string(&get_task_tree(&tasks, &o)).expect("serialises");
            for parts in [1, 2, 5, 50] {
                assert_eq!(written(&tasks, &o, parts), owned, "{o:?} {parts}");
            }
            let latin1 = roo_js::to_latin1_json(&get_task_tree(&tasks, &o)).expect("serialises");
            let written = super::super::tree_json(&tasks, &o, JsonText::Latin1, 3);
            assert_eq!(written.expect("written"), latin1, "{o:?}");
        }
        // A workspace with no task: one empty array.
        let none = TreeOptions {
            workspace: Some("/nowhere".into()),
            ..TreeOptions::default()
        };
        assert_eq!(written(&tasks, &none, 4), "[]");
    }

    #[test]
    fn sorting_by_keys_is_sorting_by_the_order() {
        // Dates alike in their first 16 bytes or shorter, a NUL, no date, the extreme times.
        let texts = [
            "2025-06-15T15:07:41.000Z",
            "2025-06-15T15:07:41.001Z",
            "2025-06-15T15:07",
            "2025-06-15T15:0",
            "2025-06-15T15:07\0",
            "",
            "2025-06-15T15:07:41.000Z",
            "9",
            "10",
        ];
        let times = [
            Some(T0),
            Some(T0 + 1),
            None,
            Some(i64::MAX),
            Some(i64::MIN),
            Some(-1),
            None,
        ];
        let tasks: Vec<ConversationSkeleton> = (0..texts.len() * times.len())
            .map(|i| {
                let mut t = task(&format!("t{:02}", (i * 5) % 63), None, None, "/w");
                t.metadata.created_at = texts[i % texts.len()].to_owned();
                t.created_at_ms = times[i % times.len()];
                t
            })
            .collect();
        for order in [SiblingOrder::CreatedAtText, SiblingOrder::CreatedMs] {
            let forest = Forest::new(&tasks, None, order);
            let mut by_keys: Vec<usize> = (0..forest.items.len()).rev().collect();
            forest.sort(&mut by_keys);
            let mut by_order = by_keys.clone();
            by_order.sort_by(|&a, &b| order.compare(forest.items[a], forest.items[b]));
            assert_eq!(by_keys, by_order, "{order:?}");
        }
    }

    #[test]
    fn a_written_tree_of_any_depth_needs_no_recursion() {
        // A chain deeper than serialising nested nodes could go on a thread's stack.
        let n = 200_000;
        let tasks: Vec<ConversationSkeleton> = (0..n)
            .map(|i| {
                let parent = (i > 0).then(|| format!("t{:06}", i - 1));
                task(&format!("t{i:06}"), parent.as_deref(), Some(T0 + i), "/w")
            })
            .collect();
        let text = written(&tasks, &TreeOptions::default(), 4);
        assert_eq!(text.matches("\"taskId\"").count(), n as usize);
        assert!(text.contains(r#""depth":199999,"children":[]"#));
        assert!(text.starts_with(r#"[{"taskId":"t000000""#));
    }

    #[test]
    fn several_trees_at_once_are_the_trees_of_each_root() {
        let tasks = vec![
            task("a", None, Some(T0), "/w"),
            task("a1", Some("a"), Some(T0 + 1), "/w"),
            task("a11", Some("a1"), Some(T0 + 2), "/w"),
            task("b", None, Some(T0 + 3), "/v"),
            task("orphan", Some("gone"), Some(T0 + 4), "/w"),
        ];
        let json = |v: &TaskTreeView<'_>| serde_json::to_string(v).unwrap_or_default();
        let wanted = ["b", "nope", "orphan", "a", "a1"].map(String::from);
        for depth in [None, Some(0), Some(1)] {
            let many = get_task_trees_view(&tasks, &wanted, depth);
            // In the order given, an unknown id left out.
            let expected: Vec<String> = ["b", "orphan", "a", "a1"]
                .iter()
                .map(|id| {
                    let one = get_task_tree_view(
                        &tasks,
                        &TreeOptions {
                            root_id: Some((*id).to_owned()),
                            max_depth: depth,
                            ..TreeOptions::default()
                        },
                    );
                    assert_eq!(one.len(), 1, "{id}");
                    one.first().map(json).unwrap_or_default()
                })
                .collect();
            let got: Vec<String> = many.iter().map(json).collect();
            assert_eq!(got, expected, "depth {depth:?}");
        }
    }

    #[test]
    fn a_top_node_whose_parent_is_not_there_says_so() {
        let tasks = vec![
            task("orphan", Some("gone"), Some(T0), "/w"),
            task("elsewhere", None, Some(T0), "/other"),
            task("moved", Some("elsewhere"), Some(T0 + 1), "/w"),
            task("kid", Some("orphan"), Some(T0 + 2), "/w"),
        ];
        let all = get_task_tree(&tasks, &TreeOptions::default());
        let orphan = all.iter().find(|n| n.task_id == "orphan");
        assert_eq!(orphan.and_then(|n| n.parent_missing), Some(true));
        assert_eq!(orphan.map(|n| n.children[0].parent_missing), Some(None));
        // A parent left out by the workspace filter is still in the store.
        let w = get_task_tree(
            &tasks,
            &TreeOptions {
                workspace: Some("/w".into()),
                ..TreeOptions::default()
            },
        );
        assert_eq!(ids(&w), vec!["orphan", "moved"]);
        assert_eq!(w[0].parent_missing, Some(true));
        assert_eq!(w[1].parent_missing, None);
        assert_eq!(w[1].parent_task_id.as_deref(), Some("elsewhere"));
        // The subtree of a task: its top node is judged the same way.
        let sub = get_task_tree(
            &tasks,
            &TreeOptions {
                root_id: Some("kid".into()),
                ..TreeOptions::default()
            },
        );
        assert_eq!(sub[0].parent_missing, None);
        let view = serde_json::to_string(&get_task_tree_view(&tasks, &TreeOptions::default()));
        let owned = serde_json::to_string(&all);
        assert_eq!(view.ok(), owned.ok());
    }

    #[test]
    fn trees_order_by_creation_text_then_id_and_walks_keep_dateless_tasks_last() {
        let tasks = vec![
            task("p", None, Some(T0), "/w"),
            task("b", Some("p"), Some(T0 + 5), "/w"),
            task("a", Some("p"), Some(T0 + 5), "/w"),
            task("undated", Some("p"), None, "/w"),
            task("early", Some("p"), Some(T0 + 1), "/w"),
            task("r2", None, None, "/w"),
        ];
        let tree = get_task_tree(&tasks, &TreeOptions::default());
        assert_eq!(ids(&tree), vec!["r2", "p"]);
        assert_eq!(ids(&tree[1].children), vec!["undated", "early", "a", "b"]);
        assert_eq!(descendants(&tasks, "p"), vec!["early", "a", "b", "undated"]);
    }
}
