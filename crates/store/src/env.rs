//! The machine as this crate sees it: home directory, platform conventions and environment
//! variables, passed as a value so tests can describe any operating system.

use std::collections::BTreeMap;
use std::path::PathBuf;

use roo_dirs::Folder;
pub use roo_dirs::Platform;

/// Home directory, platform and environment.
#[derive(Debug, Clone)]
pub struct HostEnv {
    pub home: PathBuf,
    pub platform: Platform,
    pub vars: BTreeMap<String, String>,
}

/// Environment variable naming a list of task stores; when set it replaces the automatic search.
pub const STORAGE_ENV: &str = "ROO_STATE_STORAGE";
/// Environment variable naming our cache directory.
pub const CACHE_ENV: &str = "ROO_STATE_CACHE_DIR";
/// Subdirectory of the platform cache directory that holds our cache.
pub const CACHE_SUBDIR: &str = "roo-state-core";

impl HostEnv {
    /// The running process's home, platform and environment.
    pub fn current() -> Self {
        let vars: BTreeMap<String, String> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let platform = Platform::current();
        let home = roo_dirs::home(platform, |k| vars.get(k).cloned())
            .unwrap_or_else(|| PathBuf::from("."));
        HostEnv {
            home,
            platform,
            vars,
        }
    }

    /// A fake machine for tests.
    pub fn fake(home: impl Into<PathBuf>, platform: Platform) -> Self {
        HostEnv {
            home: home.into(),
            platform,
            vars: BTreeMap::new(),
        }
    }

    pub fn with_var(mut self, key: &str, value: impl Into<String>) -> Self {
        self.vars.insert(key.to_owned(), value.into());
        self
    }

    /// A variable's value when set and not blank.
    pub fn var(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// Where editors keep their per-user data (`<this>/<Editor>/User/...`): the platform's
    /// configuration folder ([`roo_dirs`]).
    pub fn config_dir(&self) -> PathBuf {
        self.folder(Folder::Config)
    }

    /// The platform cache directory (`$XDG_CACHE_HOME` or `~/.cache`, `~/Library/Caches`,
    /// `%LOCALAPPDATA%`: [`roo_dirs`]).
    pub fn platform_cache_dir(&self) -> PathBuf {
        self.folder(Folder::Cache)
    }

    fn folder(&self, which: Folder) -> PathBuf {
        let var = |k: &str| self.var(k).map(str::to_owned);
        // With a home (always set here) there always is a folder.
        roo_dirs::folder(which, self.platform, Some(&self.home), var)
            .unwrap_or_else(|| self.home.clone())
    }

    /// Our cache root: the `cacheDir` option, else `ROO_STATE_CACHE_DIR`, else
    /// `<platform cache dir>/roo-state-core`.
    pub fn cache_root(&self, option: Option<&std::path::Path>) -> PathBuf {
        if let Some(p) = option {
            return p.to_path_buf();
        }
        if let Some(p) = self.var(CACHE_ENV) {
            return PathBuf::from(p);
        }
        self.platform_cache_dir().join(CACHE_SUBDIR)
    }

    /// Split a path list on the platform's separator, dropping blanks.
    pub fn split_path_list(&self, list: &str) -> Vec<PathBuf> {
        list.split(self.platform.path_list_separator())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect()
    }
}
