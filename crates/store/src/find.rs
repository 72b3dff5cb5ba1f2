//! Where a task lives, from what a person typed: its exact id, or the start of it (in any case)
//! when only one task folder of the stores given begins so. The folders are those a listing of
//! `tasks/` takes ([`roo_state::scan::list_task_dirs`]: names starting with `_` or `.` are not
//! tasks); nothing is parsed.

use roo_state::scan::{is_task_name, list_task_dirs};
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Candidates named in the message of an ambiguous prefix (all of them are in
/// [`FindTaskError::candidates`]).
const SHOWN_CANDIDATES: usize = 10;

/// A task folder: the task's id, the tasks folder holding it, and its own folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TaskLocation {
    pub task_id: String,
    pub tasks_dir: PathBuf,
    /// Serialised with U+FFFD for bytes that are not UTF-8 (the name [`task_folder`] finds again).
    #[serde(serialize_with = "lossy_path")]
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub task_dir: PathBuf,
}

fn lossy_path<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

impl TaskLocation {
    fn new(tasks_dir: &Path, task_id: String) -> Self {
        TaskLocation {
            task_dir: tasks_dir.join(&task_id),
            tasks_dir: tasks_dir.to_path_buf(),
            task_id,
        }
    }
}

/// Why [`find_task`] names no task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindTaskError {
    /// Nothing (or only white space) was given.
    Empty,
    /// A path or something else no task folder can be named ([`crate::confine::check_task_id`]).
    NotAnId(String),
    /// Several task folders start with the prefix.
    Ambiguous {
        wanted: String,
        candidates: Vec<TaskLocation>,
    },
    /// No task folder has this id or starts with it.
    NotFound {
        wanted: String,
        stores: Vec<PathBuf>,
    },
}

impl FindTaskError {
    /// Stable code for JavaScript callers.
    pub fn code(&self) -> &'static str {
        match self {
            FindTaskError::Empty | FindTaskError::NotAnId(_) => "INVALID_ARGUMENT",
            FindTaskError::Ambiguous { .. } => "AMBIGUOUS_TASK_ID",
            FindTaskError::NotFound { .. } => "TASK_NOT_FOUND",
        }
    }

    /// The task folders an ambiguous prefix names, store by store and by name within a store.
    pub fn candidates(&self) -> &[TaskLocation] {
        match self {
            FindTaskError::Ambiguous { candidates, .. } => candidates,
            _ => &[],
        }
    }
}

impl fmt::Display for FindTaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FindTaskError::Empty => write!(f, "A task id is needed."),
            FindTaskError::NotAnId(why) => write!(f, "{why}."),
            FindTaskError::Ambiguous { wanted, candidates } => {
                // A task two stores hold is one id.
                let mut ids: Vec<&str> = candidates.iter().map(|c| c.task_id.as_str()).collect();
                ids.sort_unstable();
                ids.dedup();
                let more = if ids.len() > SHOWN_CANDIDATES {
                    ", …"
                } else {
                    ""
                };
                write!(
                    f,
                    "\"{wanted}\" is the start of {} task ids: {}{more}.",
                    ids.len(),
                    ids[..ids.len().min(SHOWN_CANDIDATES)].join(", ")
                )
            }
            FindTaskError::NotFound { wanted, stores } => {
                let listed: Vec<String> = stores.iter().map(|s| s.display().to_string()).collect();
                match listed.as_slice() {
                    [one] => write!(f, "No task \"{wanted}\" in {one}."),
                    many => write!(
                        f,
                        "No task \"{wanted}\" in the {} stores ({}).",
                        many.len(),
                        many.join(", ")
                    ),
                }
            }
        }
    }
}

impl std::error::Error for FindTaskError {}

/// Whether `wanted` could be a folder name of its own in a tasks folder (no separator, not a
/// name the listings leave out).
fn is_plain_task_name(wanted: &str) -> bool {
    is_task_name(wanted) && !wanted.contains(['/', '\\'])
}

/// Of the folders of one task, the one whose newest task file is the latest (the first on a tie).
fn newest_copy(copies: Vec<TaskLocation>) -> Option<TaskLocation> {
    if copies.len() < 2 {
        return copies.into_iter().next();
    }
    let newest = |t: &TaskLocation| {
        crate::cache::task_sig(&t.task_dir)
            .iter()
            .flatten()
            .map(|f| f.1)
            .max()
    };
    let mut best: Option<(Option<i64>, TaskLocation)> = None;
    for t in copies {
        let n = newest(&t);
        if best.as_ref().is_none_or(|(b, _)| n > *b) {
            best = Some((n, t));
        }
    }
    best.map(|(_, t)| t)
}

/// The folder of the task `task_id` in `tasks_dir`: `tasks_dir/task_id` when it is one, else the
/// task folder whose name, read as UTF-8 with U+FFFD for the bytes that are not, is `task_id` (a
/// folder whose name is not UTF-8 is opened by its own bytes).
pub fn task_folder(tasks_dir: &Path, task_id: &str) -> Option<PathBuf> {
    let direct = tasks_dir.join(task_id);
    if direct.is_dir() {
        return Some(direct);
    }
    if !task_id.contains('\u{FFFD}') {
        return None;
    }
    let (folders, _) = list_task_dirs(tasks_dir).ok()?;
    folders
        .into_iter()
        .find(|(name, _)| name == task_id)
        .map(|(_, path)| path)
}

/// The task `id_or_prefix` names in `tasks_dirs` (searched in order; surrounding white space is
/// ignored): a folder of exactly that name; else the one task whose folder name starts with it,
/// compared in lower case. A task two stores hold (Zoo Code's import of Roo Code's history) is
/// one task: its copy with the newer task files is taken (the first store's on a tie). A store
/// that cannot be listed is passed over.
pub fn find_task(
    tasks_dirs: &[PathBuf],
    id_or_prefix: &str,
) -> Result<TaskLocation, FindTaskError> {
    let wanted = roo_js::text::js_trim(id_or_prefix);
    if wanted.is_empty() {
        return Err(FindTaskError::Empty);
    }
    if let Err(e) = crate::confine::check_task_id(wanted) {
        return Err(FindTaskError::NotAnId(e.to_string()));
    }
    if is_plain_task_name(wanted) {
        let copies: Vec<TaskLocation> = (tasks_dirs.iter())
            .filter(|d| d.join(wanted).is_dir())
            .map(|d| TaskLocation::new(d, wanted.to_owned()))
            .collect();
        if let Some(found) = newest_copy(copies) {
            return Ok(found);
        }
    }
    let needle = wanted.to_lowercase();
    let mut matches: Vec<TaskLocation> = Vec::new();
    for dir in tasks_dirs {
        let Ok((folders, _)) = list_task_dirs(dir) else {
            continue;
        };
        // The folder's own path, not one rebuilt from its (possibly lossy) name: a folder whose
        // name is not UTF-8 is still opened by its bytes.
        matches.extend(
            folders
                .into_iter()
                .filter(|(name, _)| name.to_lowercase().starts_with(&needle))
                .map(|(name, path)| TaskLocation {
                    task_dir: path,
                    ..TaskLocation::new(dir, name)
                }),
        );
    }
    // None, one task, or one task in several stores.
    if matches.windows(2).all(|w| w[0].task_id == w[1].task_id) {
        return newest_copy(matches).ok_or_else(|| FindTaskError::NotFound {
            wanted: wanted.to_owned(),
            stores: tasks_dirs.to_vec(),
        });
    }
    Err(FindTaskError::Ambiguous {
        wanted: wanted.to_owned(),
        candidates: matches,
    })
}

/// The fewest characters an id is shown with (ids of one minute share eight: a UUIDv7's first
/// eight hex digits are its time in units of 65 s).
pub const SHORT_ID_MIN: usize = 8;

/// The shortest prefix of `id`, at least `min` characters, that [`find_task`] resolves to it
/// alone among the task names `folded` (lower case, sorted; `id` may be among them): one
/// character past the longest prefix it shares with another name, the whole id when that is
/// longer, and one character further when the prefix would end at a dash.
pub fn short_id(folded: &[String], id: &str, min: usize) -> String {
    let key = id.to_lowercase();
    let at = folded.partition_point(|n| n.as_str() < key.as_str());
    let shared = |n: &String| -> usize {
        (n.chars().zip(key.chars()))
            .take_while(|(a, b)| a == b)
            .count()
    };
    // The names before and after `id`'s place, itself (or a copy of it) left out.
    let before = folded[..at].iter().rev().find(|n| **n != key);
    let after = folded[at..].iter().find(|n| **n != key);
    let need = (before.into_iter().chain(after))
        .map(|n| shared(n) + 1)
        .max()
        .unwrap_or(0)
        .max(min);
    let chars: Vec<char> = id.chars().collect();
    let mut n = need.min(chars.len());
    if n > 0 && n < chars.len() && chars[n - 1] == '-' {
        n += 1;
    }
    chars[..n].iter().collect()
}

/// Every task name of `tasks_dirs`, in lower case and sorted: what [`short_id`] compares with.
pub fn folded_task_names(tasks_dirs: &[PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = (tasks_dirs.iter())
        .filter_map(|d| list_task_dirs(d).ok())
        .flat_map(|(folders, _)| folders.into_iter().map(|(name, _)| name.to_lowercase()))
        .collect();
    names.sort_unstable();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Two stores: `a` holds `019a-one`, `019A-two`, `_index`, `.hidden-019a` and a file
    /// `019a-file`; `b` holds `019a-one` and `77-only`.
    fn stores() -> (tempfile::TempDir, Vec<PathBuf>) {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let a = root.path().join("a");
        let b = root.path().join("b");
        for d in [
            a.join("019a-one"),
            a.join("019A-two"),
            a.join("_index"),
            a.join(".hidden-019a"),
            b.join("019a-one"),
            b.join("77-only"),
        ] {
            fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        }
        fs::write(a.join("019a-file"), b"").unwrap_or_else(|e| panic!("file: {e}"));
        (root, vec![a, b])
    }

    #[test]
    fn an_exact_id_is_taken_from_the_copy_with_the_newer_files() {
        let (_root, dirs) = stores();
        // No task files in either copy: the first store's.
        let found = find_task(&dirs, "  019a-one\n");
        assert_eq!(found, Ok(TaskLocation::new(&dirs[0], "019a-one".into())));
        // The second store's copy written later (an import, or a conversation continued there).
        for (i, dir) in dirs.iter().enumerate() {
            let file = dir.join("019a-one").join("ui_messages.json");
            fs::write(&file, b"[]").unwrap_or_else(|e| panic!("{e}"));
            let t = std::time::SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(1_780_000_000 + 60 * i as u64);
            fs::File::open(&file)
                .and_then(|f| f.set_modified(t))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        for wanted in ["019a-one", "019A-O"] {
            let found = find_task(&dirs, wanted);
            assert_eq!(
                found,
                Ok(TaskLocation::new(&dirs[1], "019a-one".into())),
                "{wanted}"
            );
        }
        let found = find_task(&dirs, "77-only");
        assert_eq!(found.map(|t| t.task_dir), Ok(dirs[1].join("77-only")));
    }

    #[test]
    fn a_prefix_in_any_case_names_the_one_folder_starting_with_it() {
        let (_root, dirs) = stores();
        let found = find_task(&dirs, "019A-T");
        assert_eq!(found, Ok(TaskLocation::new(&dirs[0], "019A-two".into())));
        assert_eq!(
            find_task(&dirs, "77").map(|t| t.task_id),
            Ok("77-only".into())
        );
    }

    #[test]
    fn a_prefix_several_folders_start_with_lists_them_all() {
        let (_root, dirs) = stores();
        let err = find_task(&dirs, "019a").err();
        let candidates: Vec<(&str, &Path)> = err
            .iter()
            .flat_map(|e| e.candidates())
            .map(|c| (c.task_id.as_str(), c.tasks_dir.as_path()))
            .collect();
        assert_eq!(
            candidates,
            vec![
                ("019A-two", dirs[0].as_path()),
                ("019a-one", dirs[0].as_path()),
                ("019a-one", dirs[1].as_path()),
            ]
        );
        assert_eq!(
            err.as_ref().map(FindTaskError::code),
            Some("AMBIGUOUS_TASK_ID")
        );
        assert_eq!(
            err.map(|e| e.to_string()),
            Some("\"019a\" is the start of 2 task ids: 019A-two, 019a-one.".into())
        );
    }

    #[test]
    fn the_message_of_a_long_candidate_list_names_ten() {
        let e = FindTaskError::Ambiguous {
            wanted: "t".into(),
            candidates: (0..12)
                .map(|i| TaskLocation::new(Path::new("/s"), format!("t{i:02}")))
                .collect(),
        };
        assert_eq!(
            e.to_string(),
            "\"t\" is the start of 12 task ids: t00, t01, t02, t03, t04, t05, t06, t07, t08, t09, …."
        );
    }

    #[test]
    fn names_that_are_not_tasks_are_never_found() {
        let (_root, dirs) = stores();
        for wanted in ["_index", ".hidden", "019a-file", "nothing"] {
            let err = find_task(&dirs, wanted).err();
            assert_eq!(
                err.as_ref().map(FindTaskError::code),
                Some("TASK_NOT_FOUND"),
                "{wanted}"
            );
        }
        // A path is not an id, even one that leads to a task folder.
        for wanted in ["../a/019a-one", "../b/77-only", "..", "019a-one/.."] {
            let err = find_task(&dirs, wanted).err();
            assert!(
                matches!(err, Some(FindTaskError::NotAnId(_))),
                "{wanted}: {err:?}"
            );
        }
        let one = find_task(&dirs[..1], "zz").err().map(|e| e.to_string());
        assert_eq!(
            one,
            Some(format!("No task \"zz\" in {}.", dirs[0].display()))
        );
        let both = find_task(&dirs, "zz").err().map(|e| e.to_string());
        assert_eq!(
            both,
            Some(format!(
                "No task \"zz\" in the 2 stores ({}, {}).",
                dirs[0].display(),
                dirs[1].display()
            ))
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_whose_name_is_not_utf8_is_opened_by_its_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let store = root.path().join("s");
        let name = std::ffi::OsStr::from_bytes(b"019b-caf\xe9");
        fs::create_dir_all(store.join(name)).unwrap_or_else(|e| panic!("{e}"));
        let found =
            find_task(std::slice::from_ref(&store), "019b").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(found.task_dir, store.join(name));
        assert!(found.task_dir.is_dir());
        // Its id, as listings show it, leads back to the folder.
        assert_eq!(task_folder(&store, &found.task_id), Some(store.join(name)));
        assert_eq!(task_folder(&store, "019b-caf"), None);
    }

    #[test]
    fn an_empty_id_and_an_unreadable_store() {
        let (_root, mut dirs) = stores();
        assert_eq!(find_task(&dirs, " \t").err(), Some(FindTaskError::Empty));
        assert_eq!(FindTaskError::Empty.code(), "INVALID_ARGUMENT");
        dirs.insert(0, dirs[0].join("no-such-store"));
        assert_eq!(
            find_task(&dirs, "77").map(|t| t.task_id),
            Ok("77-only".into())
        );
    }

    #[test]
    fn a_short_id_is_the_shortest_prefix_that_names_the_task_alone() {
        let mut names: Vec<String> = [
            "019d1775-aa10-7000-8000-000000000001",
            "019d1775-b620-7000-8000-000000000002",
            "019d1776-0000-7000-8000-000000000003",
            "1771300000000",
            "1771300000000-copy",
            "abc",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.sort();
        let short = |id: &str| short_id(&names, id, SHORT_ID_MIN);
        // Two ids of one minute share eight characters and the dash: each gets one more.
        assert_eq!(short("019d1775-aa10-7000-8000-000000000001"), "019d1775-a");
        // Compared in any case, shown as given.
        assert_eq!(short("019D1775-B620-7000-8000-000000000002"), "019D1775-B");
        assert_eq!(short("019d1776-0000-7000-8000-000000000003"), "019d1776");
        // An id that is another's prefix is shown whole; the other past it.
        assert_eq!(short("1771300000000"), "1771300000000");
        assert_eq!(short("1771300000000-copy"), "1771300000000-c");
        assert_eq!(short("abc"), "abc");
        // An id the names do not hold: unique against all of them.
        assert_eq!(short("019d1775-ab00"), "019d1775-ab");
        for id in &names {
            let s = short(id);
            let hits = names
                .iter()
                .filter(|n| n.starts_with(&s.to_lowercase()))
                .count();
            assert!(hits == 1 || names.contains(&s.to_lowercase()), "{s}");
        }
    }
}
