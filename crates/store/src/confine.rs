//! What a caller that is not the user (an MCP client, an agent) may name.
//!
//! The one rule the MCP tools go through before any read or maintenance operation:
//!
//! - a **tasks folder** given as an argument is accepted only when it is one of the stores the
//!   user chose outside the call (the server's `--tasks-dir`, `ROO_STATE_STORAGE`, or the stores
//!   discovery found), compared by their canonical paths; the storage folder holding a `tasks/`
//!   stands for that `tasks/`. Any other folder (a project, a home folder, a backup) is refused
//!   before anything is read or written in it;
//! - a **task id** is a name, never a path: no `/` or `\`, no `..`, no NUL or other control
//!   character; it is then looked up in the allowed stores only ([`crate::find`]);
//! - a **migration's destination** ([`confine_destination`]) is a folder beside the store, or
//!   under a folder the user named when the server was started, never anywhere else.
//!
//! And the rule every reader and writer of this workspace keeps for links inside a store
//! ([`roo_formats::links`], re-exported here): a task folder or task file that resolves outside
//! its store is refused with a diagnostic when read ([`task_file_out`], [`task_folder_out`]:
//! `roo_formats::read::read_task_file_into` and `roo_state::analyze_task` go through them) and
//! never followed when written or removed (the cleanup, the rebuild, the search index).

use crate::{Result, StoreError};
use std::path::{Component, Path, PathBuf};

pub use roo_formats::links::{outside, task_file_out, task_folder_out, LinkOut};

/// Longest task id or prefix accepted (a folder name's limit on common file systems).
const MAX_ID_BYTES: usize = 255;

/// Why `id` cannot be a task id, or `None` when it can.
pub fn task_id_problem(id: &str) -> Option<&'static str> {
    if id.is_empty() {
        return Some("it is empty");
    }
    if id.len() > MAX_ID_BYTES {
        return Some("it is longer than a folder name can be");
    }
    if id.contains(['/', '\\']) {
        return Some("it holds a path separator; give the task's id, not a path");
    }
    if id.contains("..") {
        return Some("it holds \"..\"");
    }
    if id.chars().any(char::is_control) {
        return Some("it holds a control character");
    }
    None
}

/// `id` if it can be a task id (see the [module documentation](self)), else `InvalidArgument`.
pub fn check_task_id(id: &str) -> Result<&str> {
    match task_id_problem(id) {
        None => Ok(id),
        Some(why) => Err(StoreError::InvalidArgument(format!(
            "{:?} is not a task id: {why}",
            shown(id)
        ))),
    }
}

fn shown(s: &str) -> String {
    s.chars().take(120).collect()
}

/// The canonical tasks folder a path names: the folder itself, or the `tasks/` inside a storage
/// folder. `None` when it does not exist.
fn canonical_store(path: &Path) -> Option<PathBuf> {
    let canon = std::fs::canonicalize(path).ok()?;
    if canon.file_name().is_some_and(|n| n != "tasks") {
        if let Ok(inner) = std::fs::canonicalize(canon.join("tasks")) {
            if inner.is_dir() {
                return Some(inner);
            }
        }
    }
    Some(canon)
}

/// The entry of `allowed` that `requested` names (compared canonically; see the
/// [module documentation](self)), else `InvalidPath` naming the allowed stores.
pub fn confine_tasks_dir(requested: &Path, allowed: &[PathBuf]) -> Result<PathBuf> {
    let wanted = canonical_store(requested).ok_or_else(|| StoreError::NotFound {
        path: requested.to_path_buf(),
    })?;
    allowed
        .iter()
        .find(|a| canonical_store(a).is_some_and(|c| c == wanted))
        .cloned()
        .ok_or_else(|| {
            let listed: Vec<String> = allowed.iter().map(|a| a.display().to_string()).collect();
            StoreError::InvalidPath(format!(
                "{} is not one of this server's task stores ({}); a tool works only on the \
                 stores chosen when the server was started (--tasks-dir, ROO_STATE_STORAGE) or \
                 found on this machine",
                requested.display(),
                if listed.is_empty() {
                    "none".to_owned()
                } else {
                    listed.join(", ")
                }
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"))
    }

    #[test]
    fn ids_with_paths_in_them_are_refused() {
        for bad in [
            "",
            "../secret/019a",
            "..",
            "a/b",
            "a\\b",
            "019a..x",
            "a\0b",
            "a\nb",
        ] {
            assert!(check_task_id(bad).is_err(), "{bad:?} was taken as an id");
        }
        let long = "a".repeat(MAX_ID_BYTES + 1);
        assert!(check_task_id(&long).is_err());
        for good in ["019a", "019a7c2e-0000-7000-8000-000000000000", "abc-DEF_1"] {
            assert_eq!(check_task_id(good).ok(), Some(good));
        }
    }

    #[test]
    fn only_an_allowed_store_is_accepted() {
        let root = tmp();
        let storage = root.path().join("storage");
        let tasks = storage.join("tasks");
        let project = root.path().join("project");
        fs::create_dir_all(tasks.join("t1")).unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(project.join("src")).unwrap_or_else(|e| panic!("{e}"));
        let allowed = vec![tasks.clone()];
        // The store itself, through `..`, and the storage folder holding it.
        assert_eq!(
            confine_tasks_dir(&tasks, &allowed).ok(),
            Some(tasks.clone())
        );
        let roundabout = project.join("..").join("storage").join("tasks");
        assert_eq!(
            confine_tasks_dir(&roundabout, &allowed).ok(),
            Some(tasks.clone())
        );
        assert_eq!(
            confine_tasks_dir(&storage, &allowed).ok(),
            Some(tasks.clone())
        );
        // Anything else: refused.
        let refused = confine_tasks_dir(&project, &allowed);
        assert!(
            matches!(refused, Err(StoreError::InvalidPath(_))),
            "{refused:?}"
        );
        assert!(confine_tasks_dir(&tasks.join("t1"), &allowed).is_err());
        assert!(confine_tasks_dir(root.path(), &allowed).is_err());
        assert!(confine_tasks_dir(&root.path().join("missing"), &allowed).is_err());
        assert!(confine_tasks_dir(&tasks, &[]).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_store_is_that_store_and_a_link_elsewhere_is_not() {
        let root = tmp();
        let tasks = root.path().join("tasks");
        let other = root.path().join("other");
        fs::create_dir_all(&tasks).unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(&other).unwrap_or_else(|e| panic!("{e}"));
        let to_store = root.path().join("to-store");
        let to_other = root.path().join("to-other");
        std::os::unix::fs::symlink(&tasks, &to_store).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&other, &to_other).unwrap_or_else(|e| panic!("{e}"));
        let allowed = vec![tasks.clone()];
        assert_eq!(confine_tasks_dir(&to_store, &allowed).ok(), Some(tasks));
        assert!(confine_tasks_dir(&to_other, &allowed).is_err());
    }
}
