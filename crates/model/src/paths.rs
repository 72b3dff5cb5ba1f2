//! The per-user data directory, where the model (and roo-search's index) live.

use std::path::PathBuf;

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The platform's per-user data directory ([`roo_dirs`]: `$XDG_DATA_HOME` or `~/.local/share`
/// on Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on Windows), else the
/// temporary directory.
fn platform_data_dir() -> PathBuf {
    roo_dirs::current(roo_dirs::Folder::Data).unwrap_or_else(std::env::temp_dir)
}

/// `$ROO_STATE_DATA_DIR`, else the platform data directory + `roo-state-core`.
pub fn data_dir() -> PathBuf {
    env_path("ROO_STATE_DATA_DIR").unwrap_or_else(|| platform_data_dir().join("roo-state-core"))
}
