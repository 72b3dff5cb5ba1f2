//! Read-only metrics from an editor's `state.vscdb` (SQLite, table `ItemTable(key, value)`).
//!
//! The database is opened with the URI `file:<path>?mode=ro&immutable=1`: read-only, and immutable
//! so SQLite takes no lock and writes no journal, which cannot disturb a running editor. (The
//! price: a write in progress may be seen half done; the figures are a diagnosis, not a source of
//! truth.)

use crate::discover::Host;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use std::collections::HashSet;
use std::path::Path;

/// One key of the extension in `ItemTable`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StateKey {
    pub key: String,
    pub bytes: u64,
}

/// The extension's `taskHistory` list (in its globalState value) against the task folders.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TaskHistoryCheck {
    /// Entries of `taskHistory`.
    pub entries: u32,
    /// Task folders on disk.
    pub on_disk: u32,
    /// Entries whose folder exists.
    pub matched: u32,
    /// Folders with no entry: the extension's old list does not show them.
    pub only_on_disk: u32,
    /// Entries whose folder is gone.
    pub only_in_history: u32,
    /// Up to 20 ids of folders with no entry.
    pub sample_only_on_disk: Vec<String>,
}

/// What the database says about one extension.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StateDbReport {
    pub path: String,
    pub exists: bool,
    pub readable: bool,
    pub error: Option<String>,
    pub file_bytes: u64,
    /// Rows in `ItemTable`.
    pub total_keys: u64,
    /// Keys that start with the extension's id (compared without case).
    pub extension_keys: Vec<StateKey>,
    pub extension_bytes: u64,
    /// `None` when the extension's value has no `taskHistory` array.
    pub task_history: Option<TaskHistoryCheck>,
}

/// `file:` URI of a path, percent-encoding what SQLite's URI parser would misread.
pub fn sqlite_uri(path: &Path) -> String {
    let raw = path.to_string_lossy();
    let drive = raw.as_bytes().get(1) == Some(&b':');
    let raw = if cfg!(windows) || drive {
        raw.replace('\\', "/")
    } else {
        raw.into_owned()
    };
    let mut out = String::from("file:");
    if !raw.starts_with('/') {
        // `C:/x` → `file:///C:/x`.
        out.push_str("///");
    } else {
        out.push_str("//");
    }
    for b in raw.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out.push_str("?mode=ro&immutable=1");
    out
}

/// Open `path` read-only and immutable.
pub fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(
        sqlite_uri(path),
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
}

/// Metrics of `host` in the database at `path`, compared with the task ids on disk.
pub fn read_state_db(path: &Path, host: &Host, disk_ids: &HashSet<String>) -> StateDbReport {
    let mut r = StateDbReport {
        path: path.display().to_string(),
        ..StateDbReport::default()
    };
    let Ok(md) = std::fs::metadata(path) else {
        return r;
    };
    r.exists = true;
    r.file_bytes = md.len();
    match query(path, host, disk_ids, &mut r) {
        Ok(()) => r.readable = true,
        Err(e) => r.error = Some(format!("the database could not be read: {e}")),
    }
    r
}

fn query(
    path: &Path,
    host: &Host,
    disk_ids: &HashSet<String>,
    r: &mut StateDbReport,
) -> rusqlite::Result<()> {
    let conn = open_read_only(path)?;
    r.total_keys = conn.query_row("SELECT count(*) FROM ItemTable", [], |row| {
        row.get::<_, i64>(0)
    })? as u64;
    let mut stmt = conn.prepare(
        "SELECT key, length(CAST(value AS BLOB)) FROM ItemTable \
         WHERE substr(lower(key), 1, length(?1)) = lower(?1) ORDER BY key",
    )?;
    let keys = stmt.query_map([host.id], |row| {
        Ok(StateKey {
            key: row.get(0)?,
            bytes: row.get::<_, Option<i64>>(1)?.unwrap_or(0).max(0) as u64,
        })
    })?;
    for k in keys {
        let k = k?;
        r.extension_bytes += k.bytes;
        r.extension_keys.push(k);
    }
    let main: Option<Vec<u8>> = conn
        .query_row(
            "SELECT CAST(value AS BLOB) FROM ItemTable WHERE lower(key) = lower(?1) LIMIT 1",
            [host.id],
            |row| row.get::<_, Option<Vec<u8>>>(0),
        )
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    if let Some(bytes) = main {
        let value: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
        if let Some(list) = value
            .as_ref()
            .and_then(|v| v.get("taskHistory"))
            .and_then(|v| v.as_array())
        {
            let ids: HashSet<&str> = list
                .iter()
                .filter_map(|e| e.get("id").and_then(|i| i.as_str()))
                .collect();
            let matched = ids.iter().filter(|id| disk_ids.contains(**id)).count();
            let mut only_disk: Vec<&String> = disk_ids
                .iter()
                .filter(|id| !ids.contains(id.as_str()))
                .collect();
            only_disk.sort();
            r.task_history = Some(TaskHistoryCheck {
                entries: list.len() as u32,
                on_disk: disk_ids.len() as u32,
                matched: matched as u32,
                only_on_disk: only_disk.len() as u32,
                only_in_history: (ids.len() - matched) as u32,
                sample_only_on_disk: only_disk.into_iter().take(20).cloned().collect(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_encodes_spaces_and_marks() {
        assert_eq!(
            sqlite_uri(Path::new("/home/a b/Code - Insiders/state#1.vscdb")),
            "file:///home/a%20b/Code%20-%20Insiders/state%231.vscdb?mode=ro&immutable=1"
        );
        assert_eq!(
            sqlite_uri(Path::new(r"C:\Users\x\state.vscdb")),
            "file:///C:/Users/x/state.vscdb?mode=ro&immutable=1"
        );
    }
}
