//! A refresh's stat pass: the task folders of each store and what a pass saw of each, with a
//! folder's time standing for its files where the store allows it (module `cache::stamp`).

use super::copies::gone_copies;
use super::{OnDisk, RefreshReport, TaskStore};
use crate::cache::{self, Folders, Prior};
use crate::Result;
use std::collections::HashSet;
use std::path::Path;

/// What a refresh found changed on disk (see [`TaskStore::compare`]).
pub(super) struct Compared<'d> {
    /// Folders of tasks the handle shows (or will) to parse again.
    pub(super) to_parse: Vec<&'d OnDisk>,
    /// Tasks gone: (store, id).
    pub(super) gone: Vec<(usize, String)>,
    /// Folders of copies (tasks shown from another store) to parse again.
    pub(super) copies: Vec<&'d OnDisk>,
    /// Copies whose folder is gone: (store, id).
    pub(super) copies_gone: Vec<(usize, String)>,
    /// Tasks whose shown folder is gone while a copy remains: a copy takes their place.
    pub(super) replaced: Vec<String>,
}

impl Compared<'_> {
    /// Nothing changed on disk.
    pub(super) fn is_empty(&self) -> bool {
        self.to_parse.is_empty()
            && self.gone.is_empty()
            && self.copies.is_empty()
            && self.copies_gone.is_empty()
    }
}

/// The copies a pass met.
struct CopiesSeen<'d> {
    seen: Vec<bool>,
    on_disk: Vec<&'d OnDisk>,
    to_parse: Vec<&'d OnDisk>,
}

impl TaskStore {
    /// Every task folder of every store, stamped; counts the trusted folders in `report`.
    pub(super) fn stamp_stores(&mut self, report: &mut RefreshReport) -> Result<Vec<OnDisk>> {
        let slice = self.passes % cache::SLICES;
        self.passes += 1;
        let mut on_disk: Vec<OnDisk> = Vec::new();
        for (n, info) in self.stores.iter().enumerate() {
            let dir = Path::new(&info.tasks_dir);
            // A listing taken while the handle was opened (module `lazy`) serves the first pass.
            let dirs = match self.listed.take() {
                Some(dirs) if n == 0 => dirs,
                _ => cache::list_tasks(dir)?,
            };
            let prior = |i: usize, id: &str| -> Option<Prior> {
                let t = self.tasks.get(self.position(i, id)?)?;
                if t.store != n {
                    // Another store's copy of a task shown from elsewhere.
                    let c = self.copies.get(self.copy_index(id, n)?)?;
                    return Some((c.sig, c.folder?));
                }
                Some((t.sig, t.folder?))
            };
            let marks = self.own_tasks(n);
            let folders = Folders::trusting(dir, self.every_file, marks, &prior, slice)
                .unwrap_or_else(|| Folders::marking(dir, self.every_file));
            let stamps = cache::task_stamps(dir, &dirs, &folders);
            report.folders_trusted += stamps.iter().filter(|s| s.trusted).count() as u32;
            on_disk.extend(
                dirs.into_iter()
                    .zip(stamps)
                    .map(|((id, d), stamp)| (n, id, d, stamp)),
            );
        }
        Ok(on_disk)
    }

    /// Compare a pass with the handle: the folders to parse again (changed or new), the tasks
    /// gone, and what changed among the copies of tasks several stores hold (module `copies`).
    /// Unchanged tasks take their folder's new mark. The listing and the handle are both in id
    /// order, so a folder is looked for first just after the last one found.
    pub(super) fn compare<'d>(
        &mut self,
        on_disk: &'d [OnDisk],
        report: &mut RefreshReport,
    ) -> Compared<'d> {
        let mut matched = vec![false; self.tasks.len()];
        // Ids seen that the handle holds no header of: tasks without a skeleton, and new ones.
        let mut others: HashSet<&str> = HashSet::new();
        let mut to_parse = Vec::new();
        let mut copies = CopiesSeen {
            seen: vec![false; self.copies.len()],
            on_disk: Vec::new(),
            to_parse: Vec::new(),
        };
        let mut next = 0;
        for t in on_disk {
            let unchanged = match self.position(next, &t.1) {
                Some(i) if self.tasks.get(i).is_some_and(|k| k.store != t.0) => {
                    // Another store's folder of a task shown from elsewhere: a copy.
                    self.meet_copy(t, &mut copies, report);
                    continue;
                }
                Some(i) => {
                    next = i + 1;
                    match (matched.get_mut(i), self.tasks.get_mut(i)) {
                        (Some(m), Some(k)) if !*m => {
                            *m = true;
                            let same = k.store == t.0 && k.sig == t.3.sig;
                            if same {
                                k.folder = t.3.folder;
                            }
                            Some(same)
                        }
                        _ => continue,
                    }
                }
                None if others.insert(t.1.as_str()) => {
                    self.failed.get(&t.1).map(|f| f.0 == t.0 && f.1 == t.3.sig)
                }
                None => {
                    // New in two stores at once: set against the first when both are parsed.
                    report.added += 1;
                    copies.to_parse.push(t);
                    continue;
                }
            };
            match unchanged {
                Some(true) => {}
                Some(false) => {
                    report.changed += 1;
                    to_parse.push(t);
                }
                None => {
                    report.added += 1;
                    to_parse.push(t);
                }
            }
        }
        let mut gone: Vec<(usize, String)> = self
            .skeletons
            .iter()
            .zip(&self.tasks)
            .zip(&matched)
            .filter(|(_, m)| !**m)
            .map(|((s, t), _)| (t.store, s.task_id.clone()))
            .chain(
                self.failed
                    .iter()
                    .filter(|(id, _)| !others.contains(id.as_str()))
                    .map(|(id, f)| (f.0, id.clone())),
            )
            .collect();
        // A task gone from the store it was shown from while a copy remains: the copies are
        // read again and the newer takes its place.
        let mut replaced = Vec::new();
        gone.retain(|(_, id)| {
            let left: Vec<&'d OnDisk> = (copies.on_disk.iter())
                .filter(|t| t.1 == *id)
                .copied()
                .collect();
            if left.is_empty() {
                return true;
            }
            for t in left {
                if let Some(c) = self.copy_index(&t.1, t.0) {
                    if !copies.to_parse.iter().any(|p| p.0 == t.0 && p.1 == t.1) {
                        copies.seen[c] = true;
                        copies.to_parse.push(t);
                    }
                }
            }
            report.changed += 1;
            replaced.push(id.clone());
            false
        });
        let copies_gone = gone_copies(&self.copies, &copies.seen);
        report.removed = (gone.len() + copies_gone.len()) as u32;
        report.tasks = (matched.iter().filter(|m| **m).count() + others.len()) as u32;
        Compared {
            to_parse,
            gone,
            copies: copies.to_parse,
            copies_gone,
            replaced,
        }
    }

    /// A copy met by a pass: unchanged, it takes its folder's new mark; changed or new, it is
    /// to be parsed.
    fn meet_copy<'d>(
        &mut self,
        t: &'d OnDisk,
        copies: &mut CopiesSeen<'d>,
        report: &mut RefreshReport,
    ) {
        copies.on_disk.push(t);
        match self.copy_index(&t.1, t.0) {
            Some(c) if self.copies[c].sig == t.3.sig => {
                copies.seen[c] = true;
                self.copies[c].folder = t.3.folder;
            }
            Some(c) => {
                copies.seen[c] = true;
                report.changed += 1;
                copies.to_parse.push(t);
            }
            None => {
                report.added += 1;
                copies.to_parse.push(t);
            }
        }
    }

    /// The handle's position of task `id`, tried at `hint` first.
    fn position(&self, hint: usize, id: &str) -> Option<usize> {
        match self.skeletons.get(hint) {
            Some(s) if s.task_id == id => Some(hint),
            _ => self.position_of(id),
        }
    }

    /// The signature and mark of each task of store `n`.
    fn own_tasks(
        &self,
        n: usize,
    ) -> impl Iterator<Item = (&cache::TaskSig, Option<cache::FolderMark>)> {
        self.tasks
            .iter()
            .filter(move |t| t.store == n)
            .map(|t| (&t.sig, t.folder))
    }
}
