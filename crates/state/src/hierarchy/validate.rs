//! Pass 3: cycles, orphans, depths and roots.

use super::*;

/// Pass 3: cycles broken at their weakest link, orphans, depths, roots, counts.
pub(super) fn validate(
    ix: &Index<'_>,
    on_disk: &dyn Fn(&str) -> bool,
    out: &mut [TaskLink],
    metrics: &mut HierarchyMetrics,
) {
    let mut parent_idx = parent_ranks(ix, out);
    break_cycles(ix, out, &mut parent_idx, metrics);
    let chains = Chains::follow(&parent_idx);
    let mut roots = root_task_ids(ix, out, &chains.top);
    for (i, o) in out.iter_mut().enumerate() {
        metrics.max_depth = metrics
            .max_depth
            .max(chains.depth.get(i).copied().flatten().unwrap_or(0));
        o.root = roots.get_mut(i).and_then(Option::take);
        let Some(p) = o.parent.as_deref() else {
            metrics.roots += 1;
            continue;
        };
        if !on_disk(p) {
            metrics.orphans += 1;
            metrics.issues.push(HierarchyIssue {
                kind: issue::ORPHAN.into(),
                task_id: ix.id(i as u32).to_owned(),
                detail: format!("parent {p} is not on disk"),
                candidates: vec![p.to_owned()],
            });
        } else if parent_idx.get(i).copied().flatten().is_none() {
            metrics.roots += 1;
        }
        count_link_source(&mut metrics.links_by_source, o.evidence.as_ref());
    }
}

/// The rank of each task's parent, when that parent is among the tasks.
fn parent_ranks(ix: &Index<'_>, out: &[TaskLink]) -> Vec<Option<u32>> {
    out.iter()
        .map(|o| {
            o.parent
                .as_deref()
                .and_then(|p| ix.index_of.get(p).copied())
        })
        .collect()
}

/// Follows the parents up from every task and breaks each cycle met at its weakest link.
fn break_cycles(
    ix: &Index<'_>,
    out: &mut [TaskLink],
    parent_idx: &mut [Option<u32>],
    metrics: &mut HierarchyMetrics,
) {
    let n = ix.view.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the current path, 2 done
    let mut path: Vec<usize> = Vec::new();
    for start_node in 0..n {
        if state.get(start_node).copied() != Some(0) {
            continue;
        }
        path.clear();
        let mut cur = Some(start_node);
        while let Some(x) = cur {
            match state.get(x).copied() {
                Some(0) => {
                    if let Some(st) = state.get_mut(x) {
                        *st = 1;
                    }
                    path.push(x);
                    cur = parent_idx.get(x).copied().flatten().map(|p| p as usize);
                }
                Some(1) => {
                    // A cycle: the members are the path from `x` on.
                    let from = path.iter().position(|&p| p == x).unwrap_or(0);
                    let members: &[usize] = path.get(from..).unwrap_or_default();
                    break_cycle(ix, members, out, parent_idx, metrics);
                    break;
                }
                _ => break,
            }
        }
        for &p in &path {
            if let Some(st) = state.get_mut(p) {
                *st = 2;
            }
        }
    }
}

/// Drops the link of the weakest member of the cycle `members` (see [`weaker`]) and reports the
/// cycle.
fn break_cycle(
    ix: &Index<'_>,
    members: &[usize],
    out: &mut [TaskLink],
    parent_idx: &mut [Option<u32>],
    metrics: &mut HierarchyMetrics,
) {
    let Some(&weakest) = members.iter().min_by(|&&a, &&b| weaker(a, b, out, ix)) else {
        return;
    };
    let ids: Vec<String> = members
        .iter()
        .map(|&m| ix.id(m as u32).to_owned())
        .collect();
    let wid = ix.id(weakest as u32).to_owned();
    let (wparent, wsource) = out
        .get(weakest)
        .map_or((String::new(), String::new()), |o| {
            (
                o.parent.clone().unwrap_or_default(),
                o.evidence
                    .as_ref()
                    .map(|e| e.source.clone())
                    .unwrap_or_default(),
            )
        });
    metrics.cycles_broken += 1;
    metrics.issues.push(HierarchyIssue {
        kind: issue::CYCLE.into(),
        task_id: wid.clone(),
        detail: format!(
            "cycle of {} tasks broken by dropping the link {wid} → {wparent} ({wsource})",
            members.len()
        ),
        candidates: ids,
    });
    if let Some(o) = out.get_mut(weakest) {
        o.parent = None;
        o.evidence = None;
    }
    if let Some(p) = parent_idx.get_mut(weakest) {
        *p = None;
    }
}

/// Depth and top of each task's chain of parents.
struct Chains {
    depth: Vec<Option<u32>>,
    /// The last task up the chain (the task itself when it has no parent among the tasks).
    top: Vec<u32>,
}

impl Chains {
    /// Follows parents upwards, memoised; the graph is a forest once cycles are broken.
    fn follow(parent_idx: &[Option<u32>]) -> Chains {
        let n = parent_idx.len();
        let mut depth: Vec<Option<u32>> = vec![None; n];
        let mut top: Vec<u32> = (0..n as u32).collect();
        let mut chain: Vec<usize> = Vec::new();
        for i in 0..n {
            if depth.get(i).copied().flatten().is_some() {
                continue;
            }
            chain.clear();
            let mut cur = i;
            while depth.get(cur).copied().flatten().is_none() && chain.len() <= n {
                chain.push(cur);
                match parent_idx.get(cur).copied().flatten() {
                    Some(p) => cur = p as usize,
                    None => break,
                }
            }
            let (mut d, t) = match depth.get(cur).copied().flatten() {
                Some(d) => (d, top.get(cur).copied().unwrap_or(cur as u32)),
                None => {
                    // The last of the chain has no parent in the set: it tops its chain.
                    let Some(r) = chain.pop() else { continue };
                    if let Some(slot) = depth.get_mut(r) {
                        *slot = Some(0);
                    }
                    (0, r as u32)
                }
            };
            while let Some(x) = chain.pop() {
                d += 1;
                if let Some(slot) = depth.get_mut(x) {
                    *slot = Some(d);
                }
                if let Some(slot) = top.get_mut(x) {
                    *slot = t;
                }
            }
        }
        Chains { depth, top }
    }
}

/// `rootTaskId` of each linked task: the top's own parent id when that parent is not in the set,
/// else the top.
fn root_task_ids(ix: &Index<'_>, out: &[TaskLink], top: &[u32]) -> Vec<Option<String>> {
    (0..out.len())
        .into_par_iter()
        .map(|i| {
            out.get(i)?.parent.as_ref()?;
            let t = top.get(i).copied().unwrap_or(i as u32);
            Some(
                out.get(t as usize)
                    .and_then(|o| o.parent.clone())
                    .unwrap_or_else(|| ix.id(t).to_owned()),
            )
        })
        .collect()
}

/// Counts a link under the source of its evidence.
fn count_link_source(l: &mut LinksBySource, evidence: Option<&ParentEvidence>) {
    match evidence.map(|e| e.source.as_str()) {
        Some(source::HISTORY_ITEM) => l.history_item += 1,
        Some(source::CHILD_IDS) => l.child_ids += 1,
        Some(source::TASK_METADATA) => l.task_metadata += 1,
        Some(_) => l.instruction_prefix += 1,
        None => {}
    }
}

/// Which of two cycle members holds the weaker link (`Less` = `a`): the weakest source, then the
/// lowest confidence, then the earliest-created task (it becomes the root), then the smallest id.
pub(super) fn weaker(a: usize, b: usize, out: &[TaskLink], ix: &Index<'_>) -> Ordering {
    let key = |i: usize| {
        let ev = out.get(i).and_then(|o| o.evidence.as_ref());
        (
            ev.map_or(0, |e| source_rank(&e.source)),
            ev.map_or(0.0, |e| e.confidence),
            ix.view
                .get(i)
                .and_then(|s| s.created_at_ms)
                .unwrap_or(i64::MAX),
        )
    };
    let (ka, kb) = (key(a), key(b));
    ka.0.cmp(&kb.0)
        .then_with(|| ka.1.total_cmp(&kb.1))
        .then_with(|| ka.2.cmp(&kb.2))
        .then_with(|| ix.id(a as u32).cmp(ix.id(b as u32)))
}

// ---------------------------------------------------------------------------------------------
// Trees and walks
// ---------------------------------------------------------------------------------------------
