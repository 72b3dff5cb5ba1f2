//! Where things live: the data directory, the index directory, the task folders found.

use std::path::PathBuf;

pub use roo_model::data_dir;

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
