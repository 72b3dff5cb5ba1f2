//! The legacy storage detector's search for extension folders, `glob('**/<prefix>*', { cwd, absolute:
//! true })` once per prefix, done as one walk of the folder.
//!
//! What such a pattern matches, with glob's default options on Linux: every entry at any depth under
//! `cwd` whose name starts with `<prefix>` (case-sensitive), files and links included; names starting
//! with a dot are neither matched nor entered, and `**` does not enter a linked folder. Folders that
//! cannot be read are left out without an error. Each pattern walking the whole folder again is what
//! made a detection slow on a large store (six walks of every task folder).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// For each of `prefixes`, the absolute paths of the entries under `base` whose name starts with it,
/// shallower entries first and, at one depth, in the order the folders list them. Empty lists
/// where `base` cannot be read.
pub fn entries_named_with_prefixes(base: &Path, prefixes: &[String]) -> Vec<Vec<PathBuf>> {
    let mut found: Vec<Vec<PathBuf>> = vec![Vec::new(); prefixes.len()];
    let mut folders = VecDeque::from([base.to_path_buf()]);
    while let Some(folder) = folders.pop_front() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            for (i, prefix) in prefixes.iter().enumerate() {
                if name.starts_with(prefix.as_str()) {
                    found[i].push(path.clone());
                }
            }
            // The entry's own type: a link to a folder is not entered.
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                folders.push_back(path);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_at_any_depth_skips_dot_entries_and_linked_folders() {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = dir.path();
        let mk = |p: &str| std::fs::create_dir_all(base.join(p)).expect("mkdir");
        mk("rooveterinaryinc.roo-cline/tasks/t1/roo-inner");
        mk("other/cline-old");
        mk(".hidden/roo-hidden");
        mk("Roo-upper");
        std::fs::write(base.join("roo-file.txt"), "x").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("other"), base.join("roo-link")).expect("link");

        let prefixes = vec!["roo".to_owned(), "cline".to_owned(), "zoo".to_owned()];
        let found = entries_named_with_prefixes(base, &prefixes);
        let rel = |list: &Vec<PathBuf>| {
            let mut v: Vec<String> = list
                .iter()
                .map(|p| {
                    p.strip_prefix(base)
                        .expect("under base")
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            v.sort();
            v
        };
        let mut roo = vec![
            "roo-file.txt",
            "rooveterinaryinc.roo-cline",
            "rooveterinaryinc.roo-cline/tasks/t1/roo-inner",
        ];
        if cfg!(unix) {
            roo.push("roo-link");
        }
        roo.sort();
        assert_eq!(rel(&found[0]), roo);
        // `cline-old` is found under `other`, and not again through the link to it.
        assert_eq!(rel(&found[1]), vec!["other/cline-old"]);
        assert!(found[2].is_empty());
        // Shallower entries first.
        assert!(found[0]
            .iter()
            .position(|p| p.ends_with("roo-inner"))
            .is_some_and(|i| i == found[0].len() - 1));
    }

    #[test]
    fn an_unreadable_base_gives_empty_lists() {
        let found = entries_named_with_prefixes(
            Path::new("/nonexistent/roo-state-core/name-walk"),
            &["roo".to_owned()],
        );
        assert_eq!(found, vec![Vec::<PathBuf>::new()]);
    }
}
