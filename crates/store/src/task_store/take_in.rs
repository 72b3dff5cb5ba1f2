//! An open's last step: the tasks each store loaded, taken into the handle in id order.

use super::copies::{shown_first, Copy, Recency};
use super::{Stamp, Task, TaskStore, TextHashes};
use crate::cache;
use roo_formats::diag::Diagnostic;
use roo_state::ConversationSkeleton;
use std::cmp::Ordering;

impl TaskStore {
    /// Take the stores' tasks into the handle, in id order; the same id in two stores: the
    /// newer copy is taken, the others kept as copies (module `copies`). Returns what the open
    /// has to say beyond the tasks' own diagnostics (stores, repairs), and the texts' hashes of
    /// each header taken, by position, where the read took them.
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
                // The same id in several stores: the newer copy first (a copy with a header
                // before one without), the others become copies.
                let recency = |&(n, header, k): &(usize, bool, usize)| {
                    let t = &loaded[n];
                    let sig = match header {
                        true => t.kept[k].sig,
                        false => t.failed[k].sig,
                    };
                    let s = header.then(|| &t.skeletons[k]);
                    (header, Recency::of(s, &sig))
                };
                let mut shown: Vec<(usize, bool, usize)> = Vec::with_capacity(order.len());
                for o in order {
                    match shown.last_mut() {
                        Some(last) if id_of(last) == id_of(&o) => {
                            let (a, b) = (recency(&o), recency(last));
                            let newer =
                                a.0.cmp(&b.0)
                                    .then_with(|| shown_first((a.1, o.0), (b.1, last.0)));
                            let older = if newer == Ordering::Greater {
                                std::mem::replace(last, o)
                            } else {
                                o
                            };
                            let (n, header, k) = older;
                            let t = &loaded[n];
                            let stamp = match header {
                                true => Stamp {
                                    sig: t.kept[k].sig,
                                    folder: t.kept[k].folder,
                                    trusted: false,
                                },
                                false => Stamp {
                                    sig: t.failed[k].sig,
                                    folder: None,
                                    trusted: false,
                                },
                            };
                            let s = header.then(|| &t.skeletons[k]);
                            self.copies.push(Copy::of(n, id_of(&older), &stamp, s));
                        }
                        _ => shown.push(o),
                    }
                }
                self.sort_copies();
                let order = shown;
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
