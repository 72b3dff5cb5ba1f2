//! The links the legacy engine finds by content alone, for comparison suites: the legacy analysis of
//! each task and the legacy index, with the legacy server's matching rules. Nothing in the project's
//! own hierarchy pass uses this.

use crate::{analyze_task_legacy, LegacyAnalysis, LegacyInstructionIndex, DEFAULT_PREFIX_LEN};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Legacy `isRootTask` on a lower-cased key (legacy-server.md §5.2): the case-sensitive checks can
/// only fire on `planification`.
fn legacy_is_root(key: &str) -> bool {
    const STARTS: [&str; 11] = [
        "bonjour",
        "hello",
        "je voudrais",
        "j'aimerais",
        "peux-tu",
        "aide-moi",
        "créer un",
        "planifier",
        "planification",
        "texte unique",
        "mission secondaire",
    ];
    key.contains("planification")
        || roo_js::utf16_len(key) < 10
        || STARTS.iter().any(|p| key.to_lowercase().starts_with(p))
}

/// The links the legacy engine finds by content alone on a tasks directory: legacy analysis of each
/// task (legacy child prefixes, legacy `truncatedInstruction`), every prefix in the legacy index,
/// then the strict engine's phase 2 for every task (stored parents ignored): `isRootTask`, the
/// exact-trie `searchExactPrefix`, several parents narrowed by workspace string equality and
/// closest earlier creation, then `validateParentCandidate` (dates present, parent not more than 1 s
/// after the child, no cycle, same workspace string). Pairs are `(child, parent)`, sorted.
pub fn legacy_links(tasks_dir: &Path) -> Vec<(String, String)> {
    let Ok((dirs, _)) = roo_state::scan::list_task_dirs(tasks_dir) else {
        return Vec::new();
    };
    let mut analyses: Vec<LegacyAnalysis> = dirs
        .par_iter()
        .filter_map(|(_, dir)| analyze_task_legacy(dir))
        .collect();
    analyses.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    let mut index = LegacyInstructionIndex::new();
    for a in &analyses {
        for p in &a.child_task_instruction_prefixes {
            index.add_instruction(&a.task_id, p);
        }
    }
    let by_id: HashMap<&str, &LegacyAnalysis> =
        analyses.iter().map(|a| (a.task_id.as_str(), a)).collect();
    let mut parent: HashMap<String, String> = HashMap::new();
    for a in &analyses {
        let Some(ti) = a.truncated_instruction.as_deref().filter(|t| !t.is_empty()) else {
            continue;
        };
        if legacy_is_root(ti) {
            continue;
        }
        let found = index.search_exact_prefix(ti, DEFAULT_PREFIX_LEN);
        let candidate: Option<String> = match found.as_slice() {
            [] => None,
            [(p, _)] => (p != &a.task_id).then(|| p.clone()),
            many => {
                let others: Vec<&LegacyAnalysis> = many
                    .iter()
                    .filter(|(p, _)| p != &a.task_id)
                    .filter_map(|(p, _)| by_id.get(p.as_str()).copied())
                    .collect();
                let same_ws: Vec<&LegacyAnalysis> = others
                    .iter()
                    .copied()
                    .filter(|o| o.workspace.is_some() && o.workspace == a.workspace)
                    .collect();
                let pool = if same_ws.is_empty() { others } else { same_ws };
                let child_time = a.created_at_ms;
                pool.iter()
                    .filter_map(|o| match (o.created_at_ms, child_time) {
                        (Some(pt), Some(ct)) if pt <= ct => Some((ct - pt, o.task_id.clone())),
                        _ => None,
                    })
                    .min_by(|x, y| x.0.total_cmp(&y.0))
                    .map(|(_, id)| id)
            }
        };
        let Some(p) = candidate else { continue };
        let Some(pa) = by_id.get(p.as_str()) else {
            continue;
        };
        let (Some(pt), Some(ct)) = (pa.created_at_ms, a.created_at_ms) else {
            continue;
        };
        if pt > ct + 1000.0 {
            continue;
        }
        // wouldCreateCycle: walk up from the parent.
        let mut seen: HashSet<&str> = HashSet::new();
        let mut cur = Some(p.as_str());
        let mut cycle = false;
        while let Some(x) = cur {
            if x == a.task_id || !seen.insert(x) {
                cycle = true;
                break;
            }
            cur = parent.get(x).map(String::as_str);
        }
        if cycle {
            continue;
        }
        if let (Some(wa), Some(wp)) = (&a.workspace, &pa.workspace) {
            if wa != wp {
                continue;
            }
        }
        parent.insert(a.task_id.clone(), p);
    }
    let mut out: Vec<(String, String)> = parent.into_iter().collect();
    out.sort();
    out
}
