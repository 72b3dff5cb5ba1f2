//! Where things live: the data directory, the index directory, the extensions' task folders.

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

/// Extension ids whose global storage holds a `tasks/` folder.
const EXTENSION_IDS: [&str; 4] = [
    "rooveterinaryinc.roo-cline",
    "zoocodeorganization.zoo-code",
    "saoudrizwan.claude-dev",
    "kilocode.kilo-code",
];

/// The `tasks/` folders of the extensions found under the usual VS Code user directories.
pub fn discover_tasks_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    let editors = ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"];
    let config_base = if cfg!(windows) {
        env_path("APPDATA")
    } else if cfg!(target_os = "macos") {
        home().map(|h| h.join("Library").join("Application Support"))
    } else {
        env_path("XDG_CONFIG_HOME").or_else(|| home().map(|h| h.join(".config")))
    };
    if let Some(base) = config_base {
        for e in editors {
            roots.push(base.join(e).join("User").join("globalStorage"));
        }
    }
    if let Some(h) = home() {
        for server in [".vscode-server", ".vscode-server-insiders"] {
            roots.push(
                h.join(server)
                    .join("data")
                    .join("User")
                    .join("globalStorage"),
            );
        }
    }
    let mut found = Vec::new();
    for root in roots {
        for id in EXTENSION_IDS {
            let tasks = root.join(id).join("tasks");
            if tasks.is_dir() {
                found.push(tasks);
            }
        }
    }
    found
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
