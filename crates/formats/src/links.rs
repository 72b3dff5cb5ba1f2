//! The rule for symbolic links inside a task store: a task folder or a task file that resolves
//! outside its store is never read, written or removed through.
//!
//! A task store is a `tasks/` folder; a task folder is an entry of it, a task file an entry of a
//! task folder. A link is followed only while what it resolves to (canonically, every link on the
//! way followed) stays under the store's own canonical folder: a task folder linked to another
//! folder of the same store, or a file linked to a sibling task's, is read as usual; a task folder
//! linked to `/elsewhere/t1`, or a `ui_messages.json` linked to a file of a project or a home
//! folder, is refused with a [`LinkOut`] saying where it leads (readers turn it into a diagnostic
//! of the task, writers leave it alone). The store itself may be reached through links (a
//! `globalStorage` moved to another disk): only what lies inside it is held to it.
//!
//! This is the one place the rule is written; `roo_store::confine` re-exports it for the callers
//! above the readers (the maintenance writers, the task lookup, the search index).

use crate::diag::{DiagCode, Diagnostic, Severity};
use std::path::{Path, PathBuf};

/// A path inside a store that is a link to somewhere outside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOut {
    /// The task folder or file, as it was named.
    pub path: PathBuf,
    /// Where the link resolves.
    pub target: PathBuf,
    /// The store it should have stayed in (canonical).
    pub store: PathBuf,
}

impl std::fmt::Display for LinkOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is a link to {}, outside its store {}; it was not followed",
            self.path.display(),
            self.target.display(),
            self.store.display()
        )
    }
}

impl LinkOut {
    /// The refusal as a diagnostic of the task (`unreadable`, an error).
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::new(
            self.path.display().to_string(),
            "",
            DiagCode::Unreadable,
            Severity::Error,
            self.to_string(),
        )
    }
}

/// The folder holding `path` (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// `Some` when `path` resolves outside `store` (both compared canonically). A path that cannot be
/// resolved (a link to nowhere, a loop) is not judged here: opening it fails on its own.
pub fn outside(path: &Path, store: &Path) -> Option<LinkOut> {
    let target = std::fs::canonicalize(path).ok()?;
    let store = std::fs::canonicalize(store).ok()?;
    (!target.starts_with(&store)).then(|| LinkOut {
        path: path.to_path_buf(),
        target,
        store,
    })
}

/// `Some` when the task folder `task_dir` is a link that resolves outside its store (the folder
/// holding it). One `lstat` when it is not a link.
pub fn task_folder_out(task_dir: &Path) -> Option<LinkOut> {
    if !is_link(task_dir) {
        return None;
    }
    outside(task_dir, parent_of(task_dir))
}

/// `Some` when the task file `file`, or the task folder holding it, resolves outside the store
/// (the folder holding the task folder). `file_is_link`: whether the file itself is known to be a
/// link (`None`: not known, looked at here).
pub fn task_file_out(file: &Path, file_is_link: Option<bool>) -> Option<LinkOut> {
    let folder = parent_of(file);
    if let Some(out) = task_folder_out(folder) {
        return Some(out);
    }
    if file_is_link.unwrap_or_else(|| is_link(file)) {
        return outside(file, parent_of(folder));
    }
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"))
    }

    #[test]
    fn links_inside_the_store_are_followed_and_links_out_are_not() {
        let root = tmp();
        let tasks = root.path().join("store").join("tasks");
        let elsewhere = root.path().join("elsewhere");
        for d in [tasks.join("a"), tasks.join("b"), elsewhere.join("t1")] {
            fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
        }
        fs::write(tasks.join("a/ui_messages.json"), "[]").unwrap_or_else(|e| panic!("{e}"));
        fs::write(elsewhere.join("t1/ui_messages.json"), "[]").unwrap_or_else(|e| panic!("{e}"));
        fs::write(elsewhere.join("secret.json"), "[]").unwrap_or_else(|e| panic!("{e}"));
        let link = |from: &Path, to: &Path| symlink(from, to).unwrap_or_else(|e| panic!("{e}"));
        link(&tasks.join("a"), &tasks.join("in"));
        link(&elsewhere.join("t1"), &tasks.join("out"));
        link(
            &tasks.join("a/ui_messages.json"),
            &tasks.join("b/ui_messages.json"),
        );
        link(
            &elsewhere.join("secret.json"),
            &tasks.join("a/api_conversation_history.json"),
        );
        // A plain folder, and a link to a folder of the same store.
        assert_eq!(task_folder_out(&tasks.join("a")), None);
        assert_eq!(task_folder_out(&tasks.join("in")), None);
        // A folder linked out.
        let out = task_folder_out(&tasks.join("out")).unwrap_or_else(|| panic!("not refused"));
        assert!(out.target.ends_with("elsewhere/t1"), "{out}");
        assert!(out.to_string().contains("outside its store"), "{out}");
        // Files: plain, linked to a sibling task's, linked out, and inside a folder linked out.
        assert_eq!(task_file_out(&tasks.join("a/ui_messages.json"), None), None);
        assert_eq!(task_file_out(&tasks.join("b/ui_messages.json"), None), None);
        assert!(task_file_out(&tasks.join("a/api_conversation_history.json"), None).is_some());
        assert!(task_file_out(&tasks.join("out/ui_messages.json"), Some(false)).is_some());
        // The store reached through a link is still the store.
        link(&root.path().join("store"), &root.path().join("store-link"));
        let via = root.path().join("store-link").join("tasks");
        assert_eq!(task_folder_out(&via.join("in")), None);
        assert!(task_folder_out(&via.join("out")).is_some());
    }
}
