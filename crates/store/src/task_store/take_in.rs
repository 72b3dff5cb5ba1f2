//! An open's last step: the tasks each store loaded, taken into the handle in id order.

use super::{Stamp, Task, TaskStore, TextHashes};
use crate::cache;
use roo_formats::diag::Diagnostic;
use roo_state::ConversationSkeleton;

impl TaskStore {
    /// Take the stores' tasks into the handle, in id order; the same id in two stores: the first
    /// store's task is kept, the other reported. Returns what the open has to say beyond the
    /// tasks' own diagnostics (stores, shared ids, repairs), and the texts' hashes of each header
    /// taken, by position, where the read took them.
    pub(super) fn take_in(
        &mut self,
        mut loaded: Vec<cache::CachedTasks>,
    ) -> (Vec<Diagnostic>, Vec<Option<TextHashes>>) {
        let mut texts = Vec::with_capacity(loaded.iter().map(|t| t.skeletons.len()).sum());
        let mut task = |n: usize, k: cache::CachedTask| {
            let stamp = Stamp {
                sig: k.sig,
                folder: k.folder,
                trusted: false,
            };
            texts.push(k.texts);
            Task::new(n, stamp, k.todos)
        };
        let mut failed: Vec<(usize, cache::FailedTask)> = Vec::new();
        match loaded.as_mut_slice() {
            // One store in id order (the usual case): its headers' vector becomes the handle's,
            // not moved header by header into a new one (fresh pages: 40 MB at 50 000 tasks).
            [one] if in_id_order(one) => {
                self.skeletons = std::mem::take(&mut one.skeletons);
                let kept = std::mem::take(&mut one.kept);
                self.tasks = kept.into_iter().map(|k| task(0, k)).collect();
                failed.extend(one.failed.drain(..).map(|f| (0, f)));
            }
            _ => {
                // (store, has a header, position) of every task, by id; stable, so the first
                // store comes first.
                let mut order: Vec<(usize, bool, usize)> = (loaded.iter().enumerate())
                    .flat_map(|(n, t)| {
                        let kept = (0..t.skeletons.len()).map(move |k| (n, true, k));
                        kept.chain((0..t.failed.len()).map(move |k| (n, false, k)))
                    })
                    .collect();
                let id_of = |&(n, header, k): &(usize, bool, usize)| -> &str {
                    match header {
                        true => &loaded[n].skeletons[k].task_id,
                        false => &loaded[n].failed[k].id,
                    }
                };
                order.sort_by(|a, b| id_of(a).cmp(id_of(b)));
                let diagnostics = &mut self.diagnostics;
                order.dedup_by(|b, a| {
                    let dup = id_of(a) == id_of(b);
                    if dup {
                        diagnostics.push(Diagnostic::new(
                            id_of(b),
                            "",
                            roo_formats::DiagCode::InvalidValue,
                            roo_formats::Severity::Warning,
                            "this task id is in two of the stores opened; the first store's task is kept",
                        ));
                    }
                    dup
                });
                // Exact sizes: a doubling vector would hold up to twice the handle's headers
                // while it grows.
                let kept = order.iter().filter(|o| o.1).count();
                self.tasks.reserve_exact(kept);
                self.skeletons.reserve_exact(kept);
                for (n, header, k) in order {
                    let t = &mut loaded[n];
                    if header {
                        self.skeletons.push(std::mem::take(&mut t.skeletons[k]));
                        self.tasks.push(task(n, std::mem::take(&mut t.kept[k])));
                    } else {
                        failed.push((n, std::mem::take(&mut t.failed[k])));
                    }
                }
            }
        }
        let notes = self.diagnostics.clone();
        failed.sort_by(|a, b| a.1.id.cmp(&b.1.id));
        for (n, f) in failed {
            self.diagnostics.extend(f.diagnostics.iter().cloned());
            self.failed.insert(f.id, (n, f.sig, f.diagnostics));
        }
        (notes, texts)
    }
}

/// Whether a store's tasks are in strict id order, with no id both among its headers and among
/// the tasks without one.
fn in_id_order(t: &cache::CachedTasks) -> bool {
    fn id(s: &ConversationSkeleton) -> &str {
        &s.task_id
    }
    let mut failed: Vec<&str> = t.failed.iter().map(|f| f.id.as_str()).collect();
    failed.sort_unstable();
    (t.skeletons.windows(2)).all(|w| id(&w[0]) < id(&w[1]))
        && failed.windows(2).all(|w| w[0] < w[1])
        && (failed.iter()).all(|f| t.skeletons.binary_search_by_key(f, id).is_err())
}
