//! Pass 1: the links the task files store.

use super::*;

/// A parent a task's files name: how strong the record is (`rank`, lower is stronger) and which
/// record it is.
pub(super) struct StoredParent<'a> {
    pub(super) rank: u8,
    pub(super) source: &'static str,
    pub(super) parent: &'a str,
}

/// Pass 1: the links the files store, with their disagreements. Claims the parent's matching call.
pub(super) fn stored_links(
    ix: &Index<'_>,
    texts: &[&str],
    on_disk: &dyn Fn(&str) -> bool,
    claimed: &mut [bool],
    out: &mut [TaskLink],
    metrics: &mut HierarchyMetrics,
) {
    let named_by = parents_naming_children(ix, claimed);
    for (i, s) in ix.view.iter().enumerate() {
        let mut claims = stored_claims(ix, s, &named_by);
        if let Some(self_link) = self_link_issue(s, &claims) {
            metrics.issues.push(self_link);
            claims.retain(|c| c.parent != s.task_id);
        }
        if let Some(abandoned) = abandoned_issue(s, &claims) {
            // The child's own record decides: no parent, and none inferred either. The call
            // that created it stays its own, so no look-alike takes it.
            for p in &abandoned.candidates {
                if let Some(sid) = ix
                    .index_of
                    .get(p.as_str())
                    .and_then(|&p| matching_slot(ix, texts, i as u32, p, claimed))
                {
                    if let Some(f) = claimed.get_mut(sid as usize) {
                        *f = true;
                    }
                }
            }
            metrics.abandoned += 1;
            metrics.issues.push(abandoned);
            claims.clear();
            if let Some(o) = out.get_mut(i) {
                o.settled = true;
            }
        }
        // Strongest source first; within one, a parent on disk, then the smallest id.
        claims.sort_by(|a, b| {
            b.rank
                .cmp(&a.rank)
                .then_with(|| on_disk(b.parent).cmp(&on_disk(a.parent)))
                .then_with(|| a.parent.cmp(b.parent))
        });
        let Some(best) = claims.first() else { continue };
        let chosen = best.parent;
        let mut conflicts: Vec<String> = claims
            .iter()
            .filter(|c| c.parent != chosen)
            .map(|c| format!("{}:{}", c.source, c.parent))
            .collect();
        conflicts.sort();
        conflicts.dedup();
        if !conflicts.is_empty() {
            metrics.conflicts += 1;
            metrics
                .issues
                .push(conflict_issue(s, &claims, best, &conflicts));
        }
        // The parent's matching call is this child's: no look-alike may claim it.
        if let Some(&p) = ix.index_of.get(chosen) {
            if let Some(sid) = matching_slot(ix, texts, i as u32, p, claimed) {
                if let Some(f) = claimed.get_mut(sid as usize) {
                    *f = true;
                }
            }
        }
        if let Some(o) = out.get_mut(i) {
            o.parent = Some(chosen.to_owned());
            o.evidence = Some(stored_evidence(best, conflicts));
        }
    }
}

/// The tasks that name each child (in their `childIds` or a delegation record on a call), by child
/// id. Claims the calls whose delegation record names a task on disk.
fn parents_naming_children<'a>(ix: &Index<'a>, claimed: &mut [bool]) -> FxMap<&'a str, Vec<u32>> {
    let mut named_by: FxMap<&'a str, Vec<u32>> = FxMap::default();
    for (p, s) in ix.view.iter().enumerate() {
        for c in &s.stored_links.child_ids {
            named_by.entry(c.as_str()).or_default().push(p as u32);
        }
        for sid in ix.slots_of(p as u32) {
            if let Some(c) = ix.slots.get(sid as usize).and_then(|x| x.child_task_id) {
                named_by.entry(c).or_default().push(p as u32);
                if ix.index_of.contains_key(c) {
                    if let Some(f) = claimed.get_mut(sid as usize) {
                        *f = true;
                    }
                }
            }
        }
    }
    named_by
}

/// Every parent the files name for task `s`, blank ones left out: its `history_item.json`, the
/// tasks naming it as a child, its `task_metadata.json`.
fn stored_claims<'a>(
    ix: &Index<'a>,
    s: &'a ConversationSkeleton,
    named_by: &FxMap<&str, Vec<u32>>,
) -> Vec<StoredParent<'a>> {
    let mut claims: Vec<StoredParent<'a>> = Vec::new();
    if let Some(p) = &s.stored_links.history_item_parent {
        claims.push(StoredParent {
            rank: 3,
            source: source::HISTORY_ITEM,
            parent: p,
        });
    }
    for &p in named_by
        .get(s.task_id.as_str())
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        claims.push(StoredParent {
            rank: 2,
            source: source::CHILD_IDS,
            parent: ix.id(p),
        });
    }
    if let Some(p) = &s.stored_links.metadata_parent {
        claims.push(StoredParent {
            rank: 1,
            source: source::TASK_METADATA,
            parent: p,
        });
    }
    claims.retain(|c| !c.parent.trim().is_empty());
    claims
}

/// The `self_link` issue of a task some of whose files name it as its own parent, if any do.
fn self_link_issue(
    s: &ConversationSkeleton,
    claims: &[StoredParent<'_>],
) -> Option<HierarchyIssue> {
    let mut sources: Vec<&str> = claims
        .iter()
        .filter(|c| c.parent == s.task_id)
        .map(|c| c.source)
        .collect();
    if sources.is_empty() {
        return None;
    }
    sources.sort_unstable();
    sources.dedup();
    Some(HierarchyIssue {
        kind: issue::SELF_LINK.into(),
        task_id: s.task_id.clone(),
        detail: format!("stored link to itself ignored ({})", sources.join(", ")),
        candidates: vec![s.task_id.clone()],
    })
}

/// The `abandoned` issue of a subtask whose own `history_item.json` names no parent while tasks
/// still name it as their child (their `childIds` or a delegation record): Zoo Code's "Abandon
/// subtask" clears the child's `parentTaskId` and `rootTaskId` and leaves the parent's records as
/// they were. The candidates are those parents.
fn abandoned_issue(
    s: &ConversationSkeleton,
    claims: &[StoredParent<'_>],
) -> Option<HierarchyIssue> {
    if !s.files.history_item || s.stored_links.history_item_parent.is_some() {
        return None;
    }
    let mut parents: Vec<String> = claims
        .iter()
        .filter(|c| c.source == source::CHILD_IDS)
        .map(|c| c.parent.to_owned())
        .collect();
    if parents.is_empty() {
        return None;
    }
    parents.sort_unstable();
    parents.dedup();
    Some(HierarchyIssue {
        kind: issue::ABANDONED.into(),
        task_id: s.task_id.clone(),
        detail: format!(
            "abandoned by {}: its own history_item.json names no parent while the parent's \
             records still list it; left without a parent",
            parents.join(", ")
        ),
        candidates: parents,
    })
}

/// The `conflict` issue of a task whose files name different parents: the one kept, the others.
fn conflict_issue(
    s: &ConversationSkeleton,
    claims: &[StoredParent<'_>],
    best: &StoredParent<'_>,
    conflicts: &[String],
) -> HierarchyIssue {
    let mut cands: Vec<String> = claims.iter().map(|c| c.parent.to_owned()).collect();
    cands.sort();
    cands.dedup();
    HierarchyIssue {
        kind: issue::CONFLICT.into(),
        task_id: s.task_id.clone(),
        detail: format!(
            "stored sources disagree; kept {}:{} over {}",
            best.source,
            best.parent,
            conflicts.join(", ")
        ),
        candidates: cands,
    }
}

/// The `parentEvidence` of a stored link: full confidence (less for `task_metadata.json`), less
/// again when other records disagree.
fn stored_evidence(best: &StoredParent<'_>, conflicts: Vec<String>) -> ParentEvidence {
    let base = if best.source == source::TASK_METADATA {
        0.9
    } else {
        1.0
    };
    ParentEvidence {
        source: best.source.to_owned(),
        confidence: if conflicts.is_empty() {
            base
        } else {
            round3(base - 0.2)
        },
        matched_prefix: None,
        new_task_ts: None,
        match_kind: None,
        gap_ms: None,
        conflicts,
    }
}

/// The unclaimed call of `parent` whose message matches `child`'s instruction, closest in time.
pub(super) fn matching_slot(
    ix: &Index<'_>,
    texts: &[&str],
    child: u32,
    parent: u32,
    claimed: &[bool],
) -> Option<u32> {
    let info = ix.infos.get(child as usize)?;
    let open: Vec<u32> = ix
        .slots_of(parent)
        .filter(|&sid| !claimed.get(sid as usize).copied().unwrap_or(true))
        .collect();
    if open.is_empty() {
        return None;
    }
    let lazy;
    let query = if info.query.is_empty() {
        lazy = normalize_instruction(ix.view.get(child as usize)?.instruction.as_deref()?);
        lazy.as_str()
    } else {
        info.query
    };
    open.into_iter()
        .filter_map(|sid| {
            let sl = ix.slots.get(sid as usize)?;
            let k = ix.keys.get(sl.key as usize)?;
            match_kind(texts.get(sl.key as usize)?, query, k.cut)?;
            let gap = match (info.created, sl.ts) {
                (Some(c), Some(t)) => (c - t).abs(),
                _ => i64::MAX,
            };
            Some((gap, sid))
        })
        .min()
        .map(|(_, sid)| sid)
}
