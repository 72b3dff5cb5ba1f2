//! Where things live: the data directory, the index directory, the task folders found.

use std::path::PathBuf;

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn home() -> Option<PathBuf> {
    env_path("HOME").or_else(|| env_path("USERPROFILE"))
}

/// The platform's per-user data directory (`$XDG_DATA_HOME` or `~/.local/share` on Linux,
/// `~/Library/Application Support` on macOS, `%APPDATA%` on Windows).
fn platform_data_dir() -> PathBuf {
    if cfg!(windows) {
        if let Some(p) = env_path("APPDATA") {
            return p;
        }
    } else if cfg!(target_os = "macos") {
        if let Some(h) = home() {
            return h.join("Library").join("Application Support");
        }
    } else {
        if let Some(p) = env_path("XDG_DATA_HOME") {
            return p;
        }
        if let Some(h) = home() {
            return h.join(".local").join("share");
        }
    }
    std::env::temp_dir()
}

/// `$ROO_STATE_DATA_DIR`, else the platform data directory + `roo-state-core`.
pub fn data_dir() -> PathBuf {
    env_path("ROO_STATE_DATA_DIR").unwrap_or_else(|| platform_data_dir().join("roo-state-core"))
}

/// The default index directory: `<data dir>/search`.
pub fn default_index_dir() -> PathBuf {
    data_dir().join("search")
}

/// The `tasks/` folders of every store storage discovery finds on this machine
/// (`ROO_STATE_STORAGE` when set; else every extension under every editor, custom storage paths
/// and server installs), as the other entry points see them.
pub fn discover_tasks_dirs() -> Vec<PathBuf> {
    use roo_store::discover::{discover_storage, DiscoverOptions};
    discover_storage(&roo_store::HostEnv::current(), &DiscoverOptions::default())
        .locations
        .into_iter()
        .map(|l| PathBuf::from(l.tasks_dir))
        .collect()
}

/// This machine's name.
pub fn host_name() -> String {
    for var in ["HOSTNAME", "COMPUTERNAME"] {
        if let Ok(h) = std::env::var(var) {
            if !h.trim().is_empty() {
                return h.trim().to_owned();
            }
        }
    }
    if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        if !h.trim().is_empty() {
            return h.trim().to_owned();
        }
    }
    if let Ok(h) = std::fs::read_to_string("/etc/hostname") {
        if !h.trim().is_empty() {
            return h.trim().to_owned();
        }
    }
    "unknown-host".to_owned()
}

/// The user name, for the `user` field of the payload.
pub fn user_name() -> Option<String> {
    ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty())
}
