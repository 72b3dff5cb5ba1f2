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

/// `path` with its longest existing part resolved (links followed) and the rest appended; `None`
/// when nothing of it exists or the rest climbs (`..`).
fn resolved(path: &Path) -> Option<PathBuf> {
    let mut base = path;
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(canon) = std::fs::canonicalize(base) {
            return Some(rest.iter().rev().fold(canon, |p, c| p.join(c)));
        }
        match base.components().next_back() {
            Some(Component::Normal(name)) => rest.push(name),
            _ => return None,
        }
        base = base.parent()?;
    }
}

/// The destination `to` of a migration of the store `from` that a caller who is not the user (an
/// MCP tool call) names, when it may be used: a new folder beside the store (in the folder
/// holding it), or a folder under one of `roots` (the folders the user named when the server was
/// started). Both are compared after every link on the way is resolved, so a destination that
/// reaches elsewhere through a link is refused; so is one inside the store itself. Else
/// `InvalidPath` saying where a migration may go.
pub fn confine_destination(to: &Path, from: &Path, roots: &[PathBuf]) -> Result<PathBuf> {
    let refused = |why: &str| {
        let listed: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        StoreError::InvalidPath(format!(
            "{} cannot be this migration's destination: {why}. A tool call may move a store only \
             beside it (into its own folder{}) or under a folder named when the server was \
             started (roo-state mcp --migrate-to DIR{}); ask the user to run `roo-state migrate` \
             for any other place",
            to.display(),
            from.parent()
                .map(|p| format!(", {}", p.display()))
                .unwrap_or_default(),
            if listed.is_empty() {
                String::new()
            } else {
                format!(": {}", listed.join(", "))
            }
        ))
    };
    if !to.is_absolute() {
        return Err(refused("it is not an absolute path"));
    }
    let store = std::fs::canonicalize(from).map_err(|_| StoreError::NotFound {
        path: from.to_path_buf(),
    })?;
    let dest = resolved(to).ok_or_else(|| refused("it cannot be resolved"))?;
    if dest.starts_with(&store) || store.starts_with(&dest) {
        return Err(refused("it lies inside the store, or holds it"));
    }
    let beside = store.parent().is_some_and(|p| dest.parent() == Some(p));
    let under = roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .any(|r| dest.starts_with(&r));
    if beside || under {
        Ok(dest)
    } else {
        Err(refused(
            "it is neither beside the store nor under a folder the user named",
        ))
    }
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

    #[cfg(unix)]
    #[test]
    fn a_migration_goes_beside_the_store_or_under_a_named_folder_only() {
        let root = tmp();
        let storage = root.path().join("storage");
        let tasks = storage.join("tasks");
        let named = root.path().join("named");
        let elsewhere = root.path().join("elsewhere");
        for d in [&tasks, &named, &elsewhere] {
            fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        let roots = vec![named.clone()];
        let ok = |to: &Path| confine_destination(to, &tasks, &roots);
        // Beside the store, and under the named folder (new folders, or an empty one).
        assert!(ok(&storage.join("tasks-moved")).is_ok());
        assert!(ok(&named.join("roo").join("tasks")).is_ok());
        assert!(ok(&named).is_ok());
        // Anywhere else, inside the store, through `..`, or through a link out: refused.
        for bad in [
            elsewhere.join("x"),
            PathBuf::from("/etc/x"),
            tasks.join("inner"),
            storage.clone(),
            named.join("..").join("elsewhere").join("x"),
            PathBuf::from("relative/x"),
        ] {
            let r = ok(&bad);
            assert!(
                matches!(r, Err(StoreError::InvalidPath(_))),
                "{bad:?}: {r:?}"
            );
        }
        std::os::unix::fs::symlink(&elsewhere, storage.join("escape"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(ok(&storage.join("escape").join("x")).is_err());
        assert!(ok(&storage.join("escape")).is_err());
        // Without named folders, only beside the store.
        assert!(confine_destination(&named.join("x"), &tasks, &[]).is_err());
    }
}
