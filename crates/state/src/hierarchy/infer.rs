//! Pass 2: parents inferred from instructions (exact match, then the radix trie).

use super::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum MatchKind {
    Exact,
    Prefix,
}

#[derive(Clone, Copy)]
pub(super) struct Edge {
    pub(super) child: u32,
    pub(super) slot: u32,
    pub(super) parent: u32,
    pub(super) kind: MatchKind,
    pub(super) key_len: u32,
    pub(super) gap: Option<i64>,
    pub(super) workspace_known: bool,
}

impl Edge {
    pub(super) fn order_key(&self) -> (bool, u8, i64, u32, u32) {
        (
            self.gap.is_none(),
            match self.kind {
                MatchKind::Exact => 0,
                MatchKind::Prefix => 1,
            },
            self.gap.map_or(i64::MAX, i64::abs),
            self.child,
            self.slot,
        )
    }
}

/// Strip a trailing `...` / `…` (a message cut by whoever recorded it) and the space before it;
/// says whether there was one.
pub(super) fn strip_ellipsis(mut key: String) -> (String, bool) {
    let mut cut_seen = false;
    loop {
        let trimmed = key.trim_end();
        let cut = trimmed
            .strip_suffix("...")
            .or_else(|| trimmed.strip_suffix('…'))
            .map(str::len);
        match cut {
            Some(len) => {
                key.truncate(len);
                cut_seen = true;
            }
            None => {
                let len = trimmed.len();
                key.truncate(len);
                return (key, cut_seen);
            }
        }
    }
}

/// Pass 2: inference for every task still without a parent.
pub(super) fn infer(
    ix: &Index<'_>,
    texts: &[&str],
    claimed: &mut [bool],
    out: &mut [TaskLink],
    metrics: &mut HierarchyMetrics,
) {
    let pending = unlinked_with_instruction(ix, out);
    if pending.is_empty() || ix.slots.is_empty() {
        return;
    }
    let per_child = candidate_edges(ix, texts, &pending, claimed);
    let handout = hand_out_slots(ix, &pending, &per_child, claimed);
    metrics.ambiguous += u32::try_from(handout.ambiguous.len()).unwrap_or(u32::MAX);
    let issues: Vec<HierarchyIssue> = handout
        .ambiguous
        .par_iter()
        .map(|(e, rivals)| ambiguity_issue(ix, e, rivals))
        .collect();
    metrics.issues.extend(issues);
    // The evidence of each link (allocations only), in parallel.
    let evidence: Vec<(usize, String, ParentEvidence)> = handout
        .assigned
        .par_iter()
        .map(|e| {
            let ev = inferred_evidence(ix, texts, e);
            (e.child as usize, ix.id(e.parent).to_owned(), ev)
        })
        .collect();
    for (c, parent, ev) in evidence {
        if let Some(o) = out.get_mut(c) {
            o.parent = Some(parent);
            o.evidence = Some(ev);
        }
    }
}

/// The tasks inference looks up: no parent yet, and an instruction to match.
fn unlinked_with_instruction(ix: &Index<'_>, out: &[TaskLink]) -> Vec<u32> {
    (0..ix.view.len() as u32)
        .filter(|&i| {
            out.get(i as usize)
                .is_some_and(|o| o.parent.is_none() && !o.settled)
                && ix
                    .infos
                    .get(i as usize)
                    .is_some_and(|x| !x.query.is_empty())
        })
        .collect()
}

/// The acceptable slots of each pending task (same order as `pending`): exact matches first (a hash
/// lookup), then the radix trie for the tasks that found none.
fn candidate_edges(
    ix: &Index<'_>,
    texts: &[&str],
    pending: &[u32],
    claimed: &[bool],
) -> Vec<Vec<Edge>> {
    let mut per_child: Vec<Vec<Edge>> = pending
        .par_iter()
        .map(|&c| {
            let Some(info) = ix.infos.get(c as usize) else {
                return Vec::new();
            };
            let q = info.query;
            match ix.key_of(info.query_hash, q) {
                Some(k) => slot_edges(ix, c, MatchKind::Exact, q.len(), k, claimed),
                None => Vec::new(),
            }
        })
        .collect();
    let fallback: Vec<usize> = per_child
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_empty())
        .map(|(i, _)| i)
        .collect();
    if !fallback.is_empty() {
        let tries = build_tries(texts);
        let found: Vec<(usize, Vec<Edge>)> = fallback
            .par_iter()
            .map(|&i| {
                let c = pending.get(i).copied().unwrap_or(0);
                (i, prefix_edges(ix, c, texts, &tries, claimed))
            })
            .collect();
        for (i, e) in found {
            if let Some(slot) = per_child.get_mut(i) {
                *slot = e;
            }
        }
    }
    per_child
}

/// What the hand-out of slots decided: the links made, and the children left unlinked because
/// rival parents fit as well (with those rivals).
struct SlotHandout {
    assigned: Vec<Edge>,
    ambiguous: Vec<(Edge, Vec<u32>)>,
}

/// Hands out the slots closest in time first, one child per slot and one slot per child; a child
/// whose best edge has a rival parent that time cannot tell apart is left unlinked. Claims the
/// slots it hands out.
fn hand_out_slots(
    ix: &Index<'_>,
    pending: &[u32],
    per_child: &[Vec<Edge>],
    claimed: &mut [bool],
) -> SlotHandout {
    let mut edges: Vec<Edge> = per_child.iter().flatten().copied().collect();
    edges.sort_unstable_by_key(Edge::order_key);
    let mut edges_of: Vec<&[Edge]> = vec![&[]; ix.view.len()];
    for (&c, e) in pending.iter().zip(per_child.iter()) {
        if let Some(x) = edges_of.get_mut(c as usize) {
            *x = e.as_slice();
        }
    }
    let mut done = vec![false; ix.view.len()];
    let mut handout = SlotHandout {
        assigned: Vec::new(),
        ambiguous: Vec::new(),
    };
    for e in &edges {
        let (c, s) = (e.child as usize, e.slot as usize);
        if done.get(c).copied().unwrap_or(true) || claimed.get(s).copied().unwrap_or(true) {
            continue;
        }
        let is_rival = |o: &&Edge| {
            o.parent != e.parent
                && !claimed.get(o.slot as usize).copied().unwrap_or(true)
                && o.gap.is_none() == e.gap.is_none()
                && match (o.gap, e.gap) {
                    (Some(a), Some(b)) => a.abs() - b.abs() <= AMBIGUITY_MS,
                    _ => true,
                }
        };
        let mine = edges_of.get(c).copied().unwrap_or_default();
        if let Some(d) = done.get_mut(c) {
            *d = true;
        }
        if mine.iter().any(|o| is_rival(&o)) {
            // The issue is written after the loop, in parallel; the rivals are those of now.
            let rivals: Vec<u32> = mine.iter().filter(is_rival).map(|x| x.parent).collect();
            handout.ambiguous.push((*e, rivals));
            continue;
        }
        if let Some(f) = claimed.get_mut(s) {
            *f = true;
        }
        handout.assigned.push(*e);
    }
    handout
}

/// The `ambiguous` issue of a child left unlinked: its best edge's parent and the rivals.
fn ambiguity_issue(ix: &Index<'_>, e: &Edge, rivals: &[u32]) -> HierarchyIssue {
    let mut cands: Vec<String> = std::iter::once(e.parent)
        .chain(rivals.iter().copied())
        .map(|p| ix.id(p).to_owned())
        .collect();
    cands.sort_unstable();
    cands.dedup();
    HierarchyIssue {
        kind: issue::AMBIGUOUS.into(),
        task_id: ix.id(e.child).to_owned(),
        detail: match e.gap {
            Some(g) => format!(
                "{} parents issued this instruction within {AMBIGUITY_MS} ms of each other (best gap {g} ms); left unlinked",
                cands.len()
            ),
            None => format!(
                "{} parents issued this instruction and no timestamps separate them; left unlinked",
                cands.len()
            ),
        },
        candidates: cands,
    }
}

/// How sure an inferred link is: by the kind of match (and a prefix's share of the instruction),
/// less without timestamps, without a known workspace, or with a call no result closed.
fn inferred_confidence(ix: &Index<'_>, e: &Edge) -> f64 {
    let query_len = ix
        .infos
        .get(e.child as usize)
        .map_or(1, |x| x.query.len().max(1));
    let mut confidence = match e.kind {
        MatchKind::Exact => 0.95,
        MatchKind::Prefix => 0.6 + 0.3 * (e.key_len as f64 / query_len as f64).min(1.0),
    };
    if e.gap.is_none() {
        confidence -= 0.25;
    }
    if !e.workspace_known {
        confidence -= 0.1;
    }
    if !ix
        .slots
        .get(e.slot as usize)
        .is_some_and(|x| x.closed_by_result)
    {
        confidence -= 0.05;
    }
    round3(confidence.clamp(0.05, 0.99))
}

/// The `parentEvidence` of a link inferred from an instruction.
fn inferred_evidence(ix: &Index<'_>, texts: &[&str], e: &Edge) -> ParentEvidence {
    let slot = ix.slots.get(e.slot as usize);
    let matched = slot
        .and_then(|x| texts.get(x.key as usize))
        .map(|t| t.chars().take(MATCHED_PREFIX_CHARS).collect::<String>());
    ParentEvidence {
        source: source::INSTRUCTION_PREFIX.to_owned(),
        confidence: inferred_confidence(ix, e),
        matched_prefix: matched,
        new_task_ts: slot.and_then(|x| x.ts),
        match_kind: Some(
            match e.kind {
                MatchKind::Exact => "exact",
                MatchKind::Prefix => "prefix",
            }
            .to_owned(),
        ),
        gap_ms: e.gap,
        conflicts: Vec::new(),
    }
}

/// The radix tries (one per shard of first bytes, built in parallel) over the first
/// [`TRIE_KEY_BYTES`] of every key; each node lists the keys sharing it, longest first.
pub(super) fn build_tries<'t>(texts: &[&'t str]) -> Vec<Trie<&'t str, Vec<u32>>> {
    let mut groups: FxMap<&'t str, Vec<u32>> = FxMap::default();
    for (k, t) in texts.iter().enumerate() {
        let cut = floor_char_boundary(t, TRIE_KEY_BYTES);
        if let Some(head) = t.get(..cut).filter(|h| !h.is_empty()) {
            groups.entry(head).or_default().push(k as u32);
        }
    }
    let mut shards: Vec<Vec<(&'t str, Vec<u32>)>> = (0..TRIE_SHARDS).map(|_| Vec::new()).collect();
    for (head, mut ids) in groups {
        ids.sort_by_key(|&k| {
            (
                std::cmp::Reverse(texts.get(k as usize).map_or(0, |t| t.len())),
                k,
            )
        });
        if let Some(s) = shards.get_mut(shard_of(head)) {
            s.push((head, ids));
        }
    }
    shards
        .into_par_iter()
        .map(|mut entries| {
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut trie = Trie::new();
            for (head, ids) in entries {
                trie.insert(head, ids);
            }
            trie
        })
        .collect()
}

/// The acceptable slots for task `c` through the trie: those of the longest stored message that is a
/// prefix of its normalised instruction (word-aligned unless the record was cut), closest in time first.
pub(super) fn prefix_edges(
    ix: &Index<'_>,
    c: u32,
    texts: &[&str],
    tries: &[Trie<&str, Vec<u32>>],
    claimed: &[bool],
) -> Vec<Edge> {
    let Some(info) = ix.infos.get(c as usize) else {
        return Vec::new();
    };
    let q = info.query;
    let Some(trie) = tries.get(shard_of(q)) else {
        return Vec::new();
    };
    let mut probe_len = floor_char_boundary(q, TRIE_KEY_BYTES);
    for _ in 0..MAX_ANCESTOR_STEPS {
        let Some(probe) = q.get(..probe_len) else {
            break;
        };
        let Some(sub) = trie.get_ancestor(probe) else {
            break;
        };
        let node_len = sub.key().map_or(0, |k| k.len());
        for &k in sub
            .value()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .take(MAX_KEYS_SCANNED)
        {
            let Some(text) = texts.get(k as usize) else {
                continue;
            };
            if text.len() > q.len() {
                continue;
            }
            let Some(kind) = ix
                .keys
                .get(k as usize)
                .and_then(|e| match_kind(text, q, e.cut))
            else {
                continue;
            };
            let edges = slot_edges(ix, c, kind, text.len(), k, claimed);
            if !edges.is_empty() {
                return edges;
            }
        }
        if node_len == 0 {
            break;
        }
        probe_len = floor_char_boundary(q, node_len - 1);
    }
    Vec::new()
}

/// The acceptable calls among those of message `key` for child `c`, closest in time first.
pub(super) fn slot_edges(
    ix: &Index<'_>,
    c: u32,
    kind: MatchKind,
    key_len: usize,
    key: u32,
    claimed: &[bool],
) -> Vec<Edge> {
    let (Some(entry), Some(info)) = (ix.keys.get(key as usize), ix.infos.get(c as usize)) else {
        return Vec::new();
    };
    let list = entry.slots.as_slice();
    let ts_of = |s: u32| ix.slots.get(s as usize).and_then(|x| x.ts);
    let timed = list.partition_point(|&s| ts_of(s).is_some());
    let mut out: Vec<Edge> = Vec::new();
    let accept = |sid: u32, out: &mut Vec<Edge>| {
        let Some(sl) = ix.slots.get(sid as usize) else {
            return;
        };
        if sl.parent == c || claimed.get(sid as usize).copied().unwrap_or(true) {
            return;
        }
        let Some(parent_info) = ix.infos.get(sl.parent as usize) else {
            return;
        };
        let workspace_known = match (&info.workspace, &parent_info.workspace) {
            (Some(a), Some(b)) => {
                if a != b {
                    return;
                }
                true
            }
            _ => false,
        };
        let gap = match (info.created, sl.ts) {
            (Some(created), Some(ts)) => {
                let tol = if sl.seen_in_ui {
                    UI_TOLERANCE_MS
                } else {
                    API_TOLERANCE_MS
                };
                if created < ts - tol {
                    return;
                }
                if sl.upper.is_some_and(|u| created > u + UPPER_TOLERANCE_MS) {
                    return;
                }
                // A call nothing closed adopts a child within a day, not a look-alike a week later.
                if sl.upper.is_none() && created - ts > MAX_OPEN_GAP_MS {
                    return;
                }
                // A parent that went on well after the call had its child by then.
                if parent_info.last_activity.is_some_and(|la| {
                    la > ts + PARENT_ACTIVITY_SLACK_MS && created > la + PARENT_ACTIVITY_SLACK_MS
                }) {
                    return;
                }
                Some(created - ts)
            }
            _ => None,
        };
        out.push(Edge {
            child: c,
            slot: sid,
            parent: sl.parent,
            kind,
            key_len: u32::try_from(key_len).unwrap_or(u32::MAX),
            gap,
            workspace_known,
        });
    };
    let timed_list = list.get(..timed).unwrap_or_default();
    match info.created {
        Some(created) => {
            // Calls up to the child's creation (plus tolerance), nearest first.
            let end = timed_list
                .partition_point(|&s| ts_of(s).is_some_and(|t| t <= created + API_TOLERANCE_MS));
            for &sid in timed_list
                .get(..end)
                .unwrap_or_default()
                .iter()
                .rev()
                .take(MAX_SLOTS_SCANNED)
            {
                accept(sid, &mut out);
                if out.len() >= MAX_CANDIDATES {
                    break;
                }
            }
        }
        None => {
            for &sid in timed_list.iter().take(MAX_SLOTS_SCANNED) {
                accept(sid, &mut out);
                if out.len() >= MAX_CANDIDATES {
                    break;
                }
            }
        }
    }
    if out.len() < MAX_CANDIDATES {
        for &sid in list
            .get(timed..)
            .unwrap_or_default()
            .iter()
            .take(MAX_SLOTS_SCANNED)
        {
            accept(sid, &mut out);
            if out.len() >= MAX_CANDIDATES {
                break;
            }
        }
    }
    out.sort_by_key(Edge::order_key);
    out
}
