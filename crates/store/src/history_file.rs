//! Writing an extension's per-task `history_item.json` the way Zoo Code (3.80+) writes it, so
//! that neither our writers nor the extension (one window or several) lose each other's changes.
//!
//! - **The lock** is `proper-lockfile`'s protocol on the file's path: a folder `<file>.lock`
//!   made with `mkdir` (which only one process can win), fresh while its modification time is
//!   less than [`LOCK_STALE_MS`] old. An older one was left by a holder that is gone and is taken
//!   over; a fresh one is waited for a few times (100 ms to 1 s apart), then the write fails with
//!   [`StoreError::Busy`]. Releasing removes the folder.
//! - **Under the lock** the file is read again and only the fields the writer changes are applied
//!   to what is there now ([`merge_change`]): a field another writer changed in between keeps its
//!   new value, and `childIds` lists are united.
//! - **Statuses** follow the task state machine ([`check_transition`]): active → delegated,
//!   completed or interrupted; delegated → active; interrupted → completed; completed is final. A
//!   change that would break it is refused whole ([`StoreError::DeltaRejected`]) and nothing is
//!   written.
//! - The file is written compact, through a temporary file and a rename.

use crate::{fsutil, Result, StoreError};
use roo_formats::decode::decode_json_bytes;
use roo_formats::read::read_task_file;
use roo_formats::Diags;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How old a lock folder must be to count as left behind (proper-lockfile's `stale` as Zoo Code
/// sets it).
pub const LOCK_STALE_MS: u64 = 31_000;

/// The waits between attempts on a fresh lock: doubling from 5 ms (a lock is held for a few
/// milliseconds), at most 1 s, 3.3 s in all: longer than the extension waits (five retries from
/// 100 ms, 2.5 s in all), so that we give up no sooner than it does.
const LOCK_RETRY_WAITS_MS: [u64; 10] = [5, 10, 20, 40, 80, 160, 320, 640, 1_000, 1_000];

/// The statuses of a task, and where each may go.
const TRANSITIONS: [(&str, &[&str]); 4] = [
    ("active", &["delegated", "completed", "interrupted"]),
    ("delegated", &["active"]),
    ("interrupted", &["completed"]),
    ("completed", &[]),
];

/// A record's status, a missing one being `active` (records written before statuses existed).
pub fn status_of(record: &Value) -> &str {
    record
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("active")
}

/// Whether a task may go from `from` (`None`: no status, i.e. `active`) to `to`. Staying is not a
/// transition and is refused here too; writers skip the check when the status does not change.
pub fn check_transition(from: Option<&str>, to: &str) -> Result<()> {
    let from = from.unwrap_or("active");
    let allowed = TRANSITIONS
        .iter()
        .find(|(s, _)| *s == from)
        .is_some_and(|(_, targets)| targets.contains(&to));
    if allowed {
        Ok(())
    } else {
        Err(StoreError::InvalidTransition {
            from: from.to_owned(),
            to: to.to_owned(),
        })
    }
}

/// The fields a writer changes in a record: values to set, and fields to remove (the
/// extension's `undefined`).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub set: Map<String, Value>,
    pub unset: Vec<String>,
    /// Check a status change against the state machine (Zoo Code 3.80+); off for the rules of
    /// earlier releases, where statuses changed freely.
    pub check_status: bool,
}

impl Default for Change {
    fn default() -> Self {
        Change {
            set: Map::new(),
            unset: Vec::new(),
            check_status: true,
        }
    }
}

impl Change {
    /// The fields of `incoming` that differ from `known`, the record the writer last read: the
    /// change a writer makes when it hands over a whole record it edited.
    pub fn between(known: &Map<String, Value>, incoming: &Map<String, Value>) -> Change {
        let set = incoming
            .iter()
            .filter(|(k, v)| known.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Change {
            set,
            ..Change::default()
        }
    }
}

/// `change` applied to the record `disk` holds now. Without a usable record there (no file, not
/// JSON, not an object with an `id`) the writer's whole record `incoming` is written. A status
/// change is checked against the record's status now; refused, nothing changes. Fields keep their
/// place; new ones go at the end; `childIds` in both are united (the record's first).
pub fn merge_change(
    disk: Option<&Value>,
    incoming: &Map<String, Value>,
    change: &Change,
) -> Result<Map<String, Value>> {
    let Some(current) = disk
        .and_then(Value::as_object)
        .filter(|o| o.contains_key("id"))
    else {
        return Ok(incoming.clone());
    };
    let status = change.set.get("status").filter(|v| !v.is_null());
    if let Some(to) = status.filter(|_| change.check_status) {
        let from = status_of(disk.unwrap_or(&Value::Null));
        let to = match to {
            Value::String(s) => s.clone(),
            other => roo_js::to_string(other),
        };
        if to != from && check_transition(Some(from), &to).is_err() {
            return Err(StoreError::DeltaRejected {
                task_id: current.get("id").map(roo_js::to_string).unwrap_or_default(),
                disk_status: from.to_owned(),
                attempted_status: to,
            });
        }
    }
    let mut merged = current.clone();
    for (k, v) in &change.set {
        let united = match (k.as_str(), merged.get(k), v) {
            ("childIds", Some(Value::Array(old)), Value::Array(new)) => Some(union(old, new)),
            _ => None,
        };
        merged.insert(k.clone(), united.unwrap_or_else(|| v.clone()));
    }
    for k in &change.unset {
        merged.shift_remove(k);
    }
    Ok(merged)
}

/// `a` then the items of `b` it lacks, each once.
fn union(a: &[Value], b: &[Value]) -> Value {
    let mut seen = HashSet::new();
    Value::Array(
        a.iter()
            .chain(b)
            .filter(|v| seen.insert(v.to_string()))
            .cloned()
            .collect(),
    )
}

/// A held `proper-lockfile` lock on a file; released (its folder removed) when dropped.
#[derive(Debug)]
pub struct FileLock {
    dir: PathBuf,
}

impl FileLock {
    /// The lock folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The lock folder's modification time in ns (what tells this lock from one made after it).
    pub fn mtime_ns(&self) -> i64 {
        fs::metadata(&self.dir).map_or(0, |m| fsutil::mtime_ns(&m))
    }

    /// The lock folder of `file`: `<file>.lock`.
    pub fn path_for(file: &Path) -> PathBuf {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        PathBuf::from(name)
    }

    /// Take the lock of `file`, taking over one left behind, waiting on a fresh one as the
    /// extension does before giving up with [`StoreError::Busy`].
    pub fn acquire(file: &Path) -> Result<FileLock> {
        let dir = Self::path_for(file);
        let mut waits = LOCK_RETRY_WAITS_MS.iter();
        // A stale lock is removed and the folder made again at once; a lock that keeps coming
        // back stale (another process racing for it) still ends in a bounded number of tries.
        let mut takeovers = 0;
        loop {
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(FileLock { dir }),
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
                    return Err(StoreError::io("making the lock folder", &dir, e))
                }
                Err(_) => {}
            }
            let stale = match fs::metadata(&dir) {
                Ok(md) => is_stale(&md),
                // Released between the two calls: try again at once.
                Err(e) if e.kind() == io::ErrorKind::NotFound => true,
                Err(e) => return Err(StoreError::io("reading the lock folder", &dir, e)),
            };
            if stale && takeovers < 3 {
                takeovers += 1;
                match fs::remove_dir(&dir) {
                    Ok(()) => continue,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(StoreError::io("removing a stale lock", &dir, e)),
                }
            }
            match waits.next() {
                Some(ms) => std::thread::sleep(Duration::from_millis(*ms)),
                None => {
                    return Err(StoreError::Busy(format!(
                        "{} is being written by another process (its lock {} is held); try again",
                        file.display(),
                        dir.display()
                    )))
                }
            }
        }
    }
}

fn is_stale(md: &fs::Metadata) -> bool {
    md.modified()
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > Duration::from_millis(LOCK_STALE_MS))
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // A lock that cannot be removed goes stale and is taken over after LOCK_STALE_MS.
        let _ = fs::remove_dir(&self.dir);
    }
}

/// The record `file` holds, `None` when there is no file or it is not JSON (the extension then
/// writes the whole record). A byte-order mark or UTF-16 is read as the readers read them. A file
/// the readers refuse (not a regular file, over the size bound) is an error: nothing is written
/// over what cannot be read.
pub fn read_record(file: &Path) -> Result<Option<Value>> {
    let bytes = match read_task_file(file) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(d) => return Err(StoreError::InvalidPath(d.message)),
    };
    let text = decode_json_bytes(bytes, &mut Diags::for_file(""));
    Ok(serde_json::from_str(&text).ok())
}

/// The compact JSON text the extension writes for `record` (JavaScript's numbers and key order).
pub fn record_bytes(record: &Map<String, Value>) -> Vec<u8> {
    roo_js::json::stringify(&Value::Object(record.clone())).into_bytes()
}

/// Write into `file` under its lock (see the module): with a `change`, the record there now
/// with the change applied (or `incoming` whole when there is none); without one, `incoming`
/// whole (a writer that knows the whole record, such as a repair). Returns what was written.
/// Nothing is written when the change is refused.
pub fn update(
    file: &Path,
    incoming: &Map<String, Value>,
    change: Option<&Change>,
) -> Result<Map<String, Value>> {
    if let Some(dir) = file.parent() {
        fs::create_dir_all(dir).map_err(|e| StoreError::io("creating", dir, e))?;
    }
    let _lock = FileLock::acquire(file)?;
    let merged = match change {
        Some(change) => merge_change(read_record(file)?.as_ref(), incoming, change)?,
        None => incoming.clone(),
    };
    fsutil::write_atomic(file, &record_bytes(&merged))
        .map_err(|e| StoreError::io("writing", file, e))?;
    Ok(merged)
}

/// Write `record` into `file` under its lock unless the file holds a usable record (an object
/// with an `id`) by then: `true` when written. For writers that only fill in missing records.
pub fn create_if_missing(file: &Path, record: &Map<String, Value>) -> Result<bool> {
    let lock = FileLock::acquire(file)?;
    create_if_missing_locked(&lock, file, record)
}

/// [`create_if_missing`] with the file's lock already held (a writer that notes the locks it
/// holds takes it first).
pub fn create_if_missing_locked(
    _lock: &FileLock,
    file: &Path,
    record: &Map<String, Value>,
) -> Result<bool> {
    let usable = read_record(file)?
        .as_ref()
        .and_then(Value::as_object)
        .is_some_and(|o| o.contains_key("id"));
    if usable {
        return Ok(false);
    }
    fsutil::write_atomic(file, &record_bytes(record))
        .map_err(|e| StoreError::io("writing", file, e))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn transitions_follow_the_state_machine() {
        for (from, to) in [
            (None, "delegated"),
            (Some("active"), "completed"),
            (Some("active"), "interrupted"),
            (Some("delegated"), "active"),
            (Some("interrupted"), "completed"),
        ] {
            assert!(check_transition(from, to).is_ok(), "{from:?} → {to}");
        }
        for (from, to) in [
            (Some("delegated"), "completed"),
            (Some("delegated"), "delegated"),
            (Some("completed"), "active"),
            (Some("interrupted"), "active"),
            (None, "active"),
            (Some("paused"), "active"),
            (Some("active"), "paused"),
        ] {
            let err = check_transition(from, to).expect_err("refused");
            assert_eq!(
                err.to_string(),
                format!(
                    "Invalid task status transition: {} → {to}",
                    from.unwrap_or("active")
                )
            );
        }
    }

    #[test]
    fn a_change_keeps_what_a_peer_wrote_and_unites_children() {
        let disk =
            json!({"id": "t", "status": "completed", "totalCost": 1, "childIds": ["a", "b"]});
        let change = Change {
            set: obj(json!({"totalCost": 2.5, "childIds": ["b", "c"], "mode": "code"})),
            unset: vec!["missing".into()],
            ..Change::default()
        };
        let merged = merge_change(Some(&disk), &Map::new(), &change).expect("merged");
        assert_eq!(
            Value::Object(merged),
            json!({"id": "t", "status": "completed", "totalCost": 2.5, "childIds": ["a", "b", "c"], "mode": "code"})
        );
    }

    #[test]
    fn a_refused_status_changes_nothing() {
        let disk = json!({"id": "t", "status": "completed"});
        let change = Change {
            set: obj(json!({"status": "delegated", "awaitingChildId": "c"})),
            ..Change::default()
        };
        let err = merge_change(Some(&disk), &Map::new(), &change).expect_err("refused");
        assert_eq!(err.code(), "DELTA_REJECTED");
        assert_eq!(
            err.to_string(),
            "Delta rejected for task t: disk status completed rejects transition to delegated"
        );
        // The same status again is no transition.
        let same = Change {
            set: obj(json!({"status": "completed", "tokensIn": 3})),
            ..Change::default()
        };
        assert!(merge_change(Some(&disk), &Map::new(), &same).is_ok());
    }

    #[test]
    fn removed_fields_go_and_the_order_stays() {
        let disk = json!({"id": "t", "parentTaskId": "p", "rootTaskId": "p", "ts": 5});
        let change = Change {
            set: obj(json!({"status": "interrupted"})),
            unset: vec!["parentTaskId".into(), "rootTaskId".into()],
            ..Change::default()
        };
        let merged = merge_change(Some(&disk), &Map::new(), &change).expect("merged");
        let keys: Vec<&str> = merged.keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "ts", "status"]);
    }

    #[test]
    fn without_a_usable_record_the_whole_one_is_written() {
        let incoming = obj(json!({"id": "t", "task": "x"}));
        let change = Change {
            set: obj(json!({"task": "x"})),
            ..Change::default()
        };
        for disk in [None, Some(json!("text")), Some(json!({"task": "no id"}))] {
            let merged = merge_change(disk.as_ref(), &incoming, &change).expect("merged");
            assert_eq!(merged, incoming);
        }
    }

    #[test]
    fn update_merges_under_the_lock_and_leaves_no_lock() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("t").join("history_item.json");
        let first = obj(json!({"id": "t", "ts": 1, "status": "active"}));
        let written = update(&file, &first, None).expect("created");
        assert_eq!(written, first);
        // A peer completes the task; our change of the cost keeps the peer's status.
        fs::write(&file, br#"{"id":"t","ts":1,"status":"completed"}"#).expect("peer");
        let change = Change::between(
            &first,
            &obj(json!({"id": "t", "ts": 1, "status": "active", "totalCost": 0.5})),
        );
        update(&file, &first, Some(&change)).expect("merged");
        let on_disk = read_record(&file).expect("read").expect("record");
        assert_eq!(
            on_disk,
            json!({"id": "t", "ts": 1, "status": "completed", "totalCost": 0.5})
        );
        assert!(!FileLock::path_for(&file).exists());
        // A refused change leaves the file as it was.
        let bad = Change {
            set: obj(json!({"status": "active"})),
            ..Change::default()
        };
        assert!(update(&file, &first, Some(&bad)).is_err());
        assert_eq!(read_record(&file).expect("read"), Some(on_disk));
        assert!(!FileLock::path_for(&file).exists());
    }

    #[test]
    fn a_fresh_lock_is_waited_for_and_a_stale_one_taken_over() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("history_item.json");
        let lock = FileLock::path_for(&file);
        fs::create_dir(&lock).expect("peer's lock");
        let err = FileLock::acquire(&file).expect_err("busy");
        assert_eq!(err.code(), "STORE_BUSY");
        assert!(lock.is_dir(), "a fresh lock is not ours to remove");
        let old = SystemTime::now() - Duration::from_millis(LOCK_STALE_MS + 5_000);
        fs::File::open(&lock)
            .and_then(|f| f.set_modified(old))
            .expect("age the lock");
        let held = FileLock::acquire(&file).expect("taken over");
        assert!(lock.is_dir());
        drop(held);
        assert!(!lock.exists());
    }

    #[test]
    fn nothing_is_written_over_what_cannot_be_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("history_item.json");
        fs::create_dir(&file).expect("a folder in the file's place");
        let rec = obj(json!({"id": "t"}));
        assert_eq!(
            create_if_missing(&file, &rec).expect_err("refused").code(),
            "INVALID_PATH"
        );
        assert!(update(&file, &rec, Some(&Change::default())).is_err());
        assert!(file.is_dir());
        assert!(!FileLock::path_for(&file).exists());
    }

    #[test]
    fn create_if_missing_never_replaces_a_record() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("history_item.json");
        let rec = obj(json!({"id": "t", "task": "ours"}));
        assert!(create_if_missing(&file, &rec).expect("written"));
        let theirs = obj(json!({"id": "t", "task": "theirs"}));
        assert!(!create_if_missing(&file, &theirs).expect("kept"));
        assert_eq!(read_record(&file).expect("read"), Some(Value::Object(rec)));
        fs::write(&file, b"{not json").expect("damage");
        assert!(create_if_missing(&file, &theirs).expect("replaced"));
    }
}
