//! Subtask sightings merged into children: every record that shows a `new_task` call (UI ask,
//! API tool call, XML text, result header) is a sighting, and the sightings of one call, found by
//! their normalised text, make one child.

use super::{mode_slug, ChildSource, NewTaskInstruction, Sighting};
use crate::text;
use rustc_hash::FxHashMap;
use std::collections::HashMap;

/// The key of each sighting: the index of the first distinct message that normalises as it does,
/// or `None` when it normalises to nothing or to the task's own instruction (`own_key`).
///
/// Each distinct message is normalised once: a subtask is usually sighted in several records (the
/// UI ask, the API call, a partial) with the same text. The normalised texts are written one after
/// the other into one buffer the thread keeps, so no long text is allocated or copied to serve as
/// a key.
fn sighting_keys(sightings: &[Sighting], own_key: Option<&str>) -> Vec<Option<usize>> {
    crate::kept::with_kept(&NORMALISED, MAX_KEPT_KEYS, |keys| {
        keys.clear();
        let mut normalised: Vec<std::ops::Range<usize>> = Vec::new();
        let message_key: Vec<usize> = {
            let mut by_message: FxHashMap<&str, usize> = FxHashMap::default();
            sightings
                .iter()
                .map(|s| {
                    *by_message.entry(s.message.as_str()).or_insert_with(|| {
                        let start = keys.len();
                        text::normalize_instruction_into(&s.message, keys);
                        normalised.push(start..keys.len());
                        normalised.len() - 1
                    })
                })
                .collect()
        };
        // Two messages can normalise alike: each normalised text stands for the first of its
        // equals.
        let canonical: Vec<Option<usize>> = {
            let mut first: FxHashMap<&str, usize> = FxHashMap::default();
            normalised
                .iter()
                .enumerate()
                .map(|(i, range)| {
                    let key = &keys[range.clone()];
                    (!key.is_empty() && Some(key) != own_key)
                        .then(|| *first.entry(key).or_insert(i))
                })
                .collect()
        };
        message_key
            .into_iter()
            .map(|i| canonical.get(i).copied().flatten())
            .collect()
    })
}

/// The largest buffer of normalised messages a thread keeps for its next task.
const MAX_KEPT_KEYS: usize = 1 << 20;

thread_local! {
    static NORMALISED: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

pub(super) fn merge_sightings(
    sightings: Vec<Sighting>,
    own_key: Option<&str>,
    subtask_results: &[i64],
) -> Vec<NewTaskInstruction> {
    let sighting_key = sighting_keys(&sightings, own_key);
    // Per normalised message: the sightings of each source, in order.
    let mut order: Vec<usize> = Vec::new();
    let mut by_key: FxHashMap<usize, HashMap<ChildSource, Vec<Sighting>>> = FxHashMap::default();
    for (s, key) in sightings.into_iter().zip(sighting_key) {
        let Some(key) = key else {
            continue;
        };
        by_key
            .entry(key)
            .or_insert_with(|| {
                order.push(key);
                HashMap::new()
            })
            .entry(s.source)
            .or_default()
            .push(s);
    }
    let mut out = Vec::new();
    for key in order {
        let Some(mut sources) = by_key.remove(&key) else {
            continue;
        };
        // A partial ask is only its own call when no completed record of that text exists.
        if sources.contains_key(&ChildSource::UiPartialAsk) && sources.len() > 1 {
            sources.remove(&ChildSource::UiPartialAsk);
        }
        let calls = sources.values().map(Vec::len).max().unwrap_or(0);
        let mut kinds: Vec<ChildSource> = sources.keys().copied().collect();
        kinds.sort();
        for n in 0..calls {
            let mut child = NewTaskInstruction {
                ts: None,
                mode: None,
                message: String::new(),
                todos: None,
                sources: Vec::new(),
                child_task_id: None,
                completed_ts: None,
            };
            let mut slug: Option<String> = None;
            let mut display: Option<String> = None;
            for kind in &kinds {
                let Some(s) = sources.get_mut(kind).and_then(|v| v.get_mut(n)) else {
                    continue;
                };
                child.sources.push(*kind);
                // The UI ask's time is when the call was shown; prefer it, then the API's.
                if child.ts.is_none() || *kind == ChildSource::UiAsk {
                    child.ts = s.ts.or(child.ts);
                }
                if child.message.is_empty()
                    || matches!(
                        kind,
                        ChildSource::UiAsk | ChildSource::ToolUse | ChildSource::ToolCall
                    )
                {
                    // Each sighting serves one child: its text is moved, not copied.
                    child.message = std::mem::take(&mut s.message);
                }
                if child.todos.is_none() {
                    child.todos = s.todos.clone();
                }
                if child.child_task_id.is_none() {
                    child.child_task_id = s.child_task_id.clone();
                }
                match (&s.mode, s.mode_is_slug) {
                    (Some(m), true) if slug.is_none() => slug = Some(m.clone()),
                    (Some(m), false) if display.is_none() => display = Some(m.clone()),
                    _ => {}
                }
            }
            child.mode = slug.or_else(|| display.map(|d| mode_slug(&d)));
            child.completed_ts = child
                .ts
                .and_then(|t| subtask_results.iter().copied().filter(|r| *r > t).min());
            out.push(child);
        }
    }
    out.sort_by_key(|c| c.ts.unwrap_or(i64::MAX));
    out
}

#[cfg(test)]
mod tests {
    use super::merge_sightings;
    use crate::extract::{ChildSource, Sighting};
    use crate::text;

    fn sighting(ts: i64, message: &str, source: ChildSource) -> Sighting {
        Sighting {
            ts: Some(ts),
            mode: Some("code".into()),
            mode_is_slug: true,
            message: message.into(),
            todos: None,
            source,
            child_task_id: None,
        }
    }

    #[test]
    fn sightings_merge_by_normalised_text_without_the_tasks_own() {
        let own = text::normalize_instruction("<task>Plan the release</task>");
        let children = merge_sightings(
            vec![
                sighting(1, "Write the tests", ChildSource::UiAsk),
                // The same call in the API history, written otherwise: one child.
                sighting(2, "write   THE tests", ChildSource::ToolUse),
                // The task's own instruction, and a text that normalises to nothing: none.
                sighting(3, "Plan the release", ChildSource::XmlText),
                sighting(4, " \n ", ChildSource::UiAsk),
                sighting(5, "Fix the build", ChildSource::ToolUse),
                // Seen again by the same source: a second call.
                sighting(6, "Fix the build", ChildSource::ToolUse),
            ],
            Some(&own),
            &[],
        );
        let got: Vec<(&str, Vec<ChildSource>)> = children
            .iter()
            .map(|c| (c.message.as_str(), c.sources.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "write   THE tests",
                    vec![ChildSource::UiAsk, ChildSource::ToolUse]
                ),
                ("Fix the build", vec![ChildSource::ToolUse]),
                ("Fix the build", vec![ChildSource::ToolUse]),
            ]
        );
    }
}
