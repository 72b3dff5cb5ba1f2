//! The per-user configuration, cache and data folders of each platform: the one place the
//! crates find them (the store's cache and the editors' settings, the export configuration, the
//! model and the search index).
//!
//! | folder | Linux (and other Unixes) | macOS | Windows |
//! |---|---|---|---|
//! | config | `$XDG_CONFIG_HOME`, else `~/.config` | `~/Library/Application Support` | `%APPDATA%`, else `~\AppData\Roaming` |
//! | cache | `$XDG_CACHE_HOME`, else `~/.cache` | `~/Library/Caches` | `%LOCALAPPDATA%`, else `~\AppData\Local` |
//! | data | `$XDG_DATA_HOME`, else `~/.local/share` | `~/Library/Application Support` | `%APPDATA%`, else `~\AppData\Roaming` |
//!
//! A variable that is unset, blank or (for the XDG ones, as the XDG specification says)
//! relative is ignored. The platform and the environment are parameters, so tests can describe
//! any system; [`current`] reads the running one. (The `directories` crate gives the same
//! folders but reads Windows' known folders from the system rather than `%APPDATA%`, and cannot
//! be given another platform's conventions.)

use std::path::{Path, PathBuf};

/// The directory conventions to follow (not necessarily the running OS: tests use all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Windows,
    Macos,
    Linux,
}

impl Platform {
    /// The platform this binary runs on (other Unixes follow the Linux conventions).
    pub fn current() -> Self {
        if cfg!(windows) {
            Platform::Windows
        } else if cfg!(target_os = "macos") {
            Platform::Macos
        } else {
            Platform::Linux
        }
    }

    /// Separator of path lists such as `PATH` or `ROO_STATE_STORAGE`.
    pub fn path_list_separator(self) -> char {
        match self {
            Platform::Windows => ';',
            _ => ':',
        }
    }
}

/// Which per-user folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folder {
    Config,
    Cache,
    Data,
}

/// The per-user `folder` of `platform`, for the user whose home is `home`, with `var` giving the
/// environment's variables; `None` only when the variable is not set and there is no home.
pub fn folder(
    folder: Folder,
    platform: Platform,
    home: Option<&Path>,
    var: impl Fn(&str) -> Option<String>,
) -> Option<PathBuf> {
    let set = |name: &str| {
        var(name)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
    };
    let xdg = |name: &str| set(name).filter(|p| p.is_absolute());
    let under = |parts: &[&str]| home.map(|h| parts.iter().fold(h.to_path_buf(), |p, s| p.join(s)));
    match (platform, folder) {
        (Platform::Windows, Folder::Config | Folder::Data) => {
            set("APPDATA").or_else(|| under(&["AppData", "Roaming"]))
        }
        (Platform::Windows, Folder::Cache) => {
            set("LOCALAPPDATA").or_else(|| under(&["AppData", "Local"]))
        }
        (Platform::Macos, Folder::Config | Folder::Data) => {
            under(&["Library", "Application Support"])
        }
        (Platform::Macos, Folder::Cache) => under(&["Library", "Caches"]),
        (Platform::Linux, Folder::Config) => xdg("XDG_CONFIG_HOME").or_else(|| under(&[".config"])),
        (Platform::Linux, Folder::Cache) => xdg("XDG_CACHE_HOME").or_else(|| under(&[".cache"])),
        (Platform::Linux, Folder::Data) => {
            xdg("XDG_DATA_HOME").or_else(|| under(&[".local", "share"]))
        }
    }
}

/// The home directory in `var`: `%USERPROFILE%` (else `$HOME`) on Windows, `$HOME` (else
/// `%USERPROFILE%`) elsewhere; unset and blank values ignored.
pub fn home(platform: Platform, var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| {
        var(name)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
    };
    match platform {
        Platform::Windows => set("USERPROFILE").or_else(|| set("HOME")),
        _ => set("HOME").or_else(|| set("USERPROFILE")),
    }
}

/// The running process's per-user `folder`.
pub fn current(which: Folder) -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).and_then(|v| v.into_string().ok());
    let platform = Platform::current();
    folder(which, platform, home(platform, var).as_deref(), var)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn at(which: Folder, platform: Platform, vars: &[(&str, &str)]) -> Option<String> {
        let vars: BTreeMap<&str, &str> = vars.iter().copied().collect();
        let var = |k: &str| vars.get(k).map(|v| v.to_string());
        let home = home(platform, var);
        folder(which, platform, home.as_deref(), var).map(|p| p.display().to_string())
    }

    /// The folders the crates used before they shared this module, spelled out, so that a cache,
    /// a configuration and a model written before are found where they were.
    #[test]
    fn the_folders_are_where_they_were() {
        use Folder::*;
        use Platform::*;
        let home = [("HOME", "/home/u")];
        let s = |p: &str| Some(p.to_owned());
        assert_eq!(at(Cache, Linux, &home), s("/home/u/.cache"));
        assert_eq!(at(Config, Linux, &home), s("/home/u/.config"));
        assert_eq!(at(Data, Linux, &home), s("/home/u/.local/share"));
        let xdg = [
            ("HOME", "/home/u"),
            ("XDG_CACHE_HOME", "/x/cache"),
            ("XDG_CONFIG_HOME", "/x/config"),
            ("XDG_DATA_HOME", "/x/data"),
        ];
        assert_eq!(at(Cache, Linux, &xdg), s("/x/cache"));
        assert_eq!(at(Config, Linux, &xdg), s("/x/config"));
        assert_eq!(at(Data, Linux, &xdg), s("/x/data"));
        // Blank and relative XDG variables are ignored.
        let odd = [
            ("HOME", "/home/u"),
            ("XDG_CACHE_HOME", " "),
            ("XDG_CONFIG_HOME", "rel/config"),
        ];
        assert_eq!(at(Cache, Linux, &odd), s("/home/u/.cache"));
        assert_eq!(at(Config, Linux, &odd), s("/home/u/.config"));
        let mac = [("HOME", "/Users/u"), ("XDG_CACHE_HOME", "/x/cache")];
        assert_eq!(at(Cache, Macos, &mac), s("/Users/u/Library/Caches"));
        assert_eq!(
            at(Config, Macos, &mac),
            s("/Users/u/Library/Application Support")
        );
        assert_eq!(
            at(Data, Macos, &mac),
            s("/Users/u/Library/Application Support")
        );
        let win = [
            ("USERPROFILE", "C:/Users/u"),
            ("APPDATA", "C:/Users/u/AppData/Roaming"),
            ("LOCALAPPDATA", "D:/Local"),
        ];
        assert_eq!(at(Cache, Windows, &win), s("D:/Local"));
        assert_eq!(at(Config, Windows, &win), s("C:/Users/u/AppData/Roaming"));
        assert_eq!(at(Data, Windows, &win), s("C:/Users/u/AppData/Roaming"));
        let bare = [("USERPROFILE", "C:/Users/u"), ("HOME", "/c/other")];
        let joined = |parts: &[&str]| {
            Some(
                parts
                    .iter()
                    .fold(PathBuf::from("C:/Users/u"), |p, s| p.join(s))
                    .display()
                    .to_string(),
            )
        };
        assert_eq!(at(Cache, Windows, &bare), joined(&["AppData", "Local"]));
        assert_eq!(at(Config, Windows, &bare), joined(&["AppData", "Roaming"]));
        // No variable and no home: nothing.
        assert_eq!(at(Cache, Linux, &[]), None);
        assert_eq!(at(Config, Windows, &[]), None);
    }
}
