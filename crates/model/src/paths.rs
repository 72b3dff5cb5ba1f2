//! The per-user data directory, where the model (and roo-search's index) live.

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
