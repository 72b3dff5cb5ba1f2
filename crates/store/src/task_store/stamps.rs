//! A refresh's stat pass: the task folders of each store and what a pass saw of each, with a
//! folder's time standing for its files where the store allows it (module `cache::stamp`).

use super::{OnDisk, RefreshReport, TaskStore};
use crate::cache::{self, Folders, Prior};
use crate::Result;
use std::collections::HashSet;
use std::path::Path;

impl TaskStore {
    /// Every task folder of every store, stamped; counts the trusted folders in `report`.
    pub(super) fn stamp_stores(&mut self, report: &mut RefreshReport) -> Result<Vec<OnDisk>> {
        let slice = self.passes % cache::SLICES;
        self.passes += 1;
        let mut on_disk: Vec<OnDisk> = Vec::new();
        for (n, info) in self.stores.iter().enumerate() {
            let dir = Path::new(&info.tasks_dir);
            let dirs = cache::list_tasks(dir)?;
            let prior = |i: usize, id: &str| -> Option<Prior> {
                let t = self.tasks.get(self.position(i, id)?)?;
                Some((t.sig, t.folder.filter(|_| t.store == n)?))
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

    /// Compare a pass with the handle: the folders to parse again (changed or new) and the tasks
    /// gone. Unchanged tasks take their folder's new mark. An id in two stores: the first
    /// store's. The listing and the handle are both in id order, so a folder is looked for first
    /// just after the last one found.
    pub(super) fn compare<'d>(
        &mut self,
        on_disk: &'d [OnDisk],
        report: &mut RefreshReport,
    ) -> (Vec<&'d OnDisk>, Vec<(usize, String)>) {
        let mut matched = vec![false; self.tasks.len()];
        // Ids seen that the handle holds no header of: tasks without a skeleton, and new ones.
        let mut others: HashSet<&str> = HashSet::new();
        let mut to_parse = Vec::new();
        let mut next = 0;
        for t in on_disk {
            let unchanged = match self.position(next, &t.1) {
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
                None => continue,
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
        let gone: Vec<(usize, String)> = self
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
        report.removed = gone.len() as u32;
        report.tasks = (matched.iter().filter(|m| **m).count() + others.len()) as u32;
        (to_parse, gone)
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
