//! Finding every task store on the machine.
//!
//! Looked at, in this order:
//! 1. `ROO_STATE_STORAGE` (a path list with the platform's separator). When set it **replaces**
//!    the automatic search: only its entries and `extra_roots` are used.
//! 2. `extra_roots` given by the caller.
//! 3. For each editor build (Code, Code - Insiders, Code - OSS, VSCodium, Cursor, Windsurf) under the
//!    platform's configuration directory (`%APPDATA%`, `~/Library/Application Support`,
//!    `$XDG_CONFIG_HOME` or `~/.config`): the `customStoragePath` setting of each extension in
//!    `User/settings.json`, then `User/globalStorage/<extension id>/`.
//! 4. Server-side installs: `~/.vscode-server`, `~/.vscode-server-insiders`, `~/.vscodium-server`,
//!    `~/.cursor-server`, `~/.windsurf-server` (`data/User/...`), on every platform.
//! 5. IDE ports that keep an extension's storage under the home folder: Zoo Code's JetBrains
//!    plugin (`~/.zoo-code/globalStorage/wecode-ai.zoo-code/`).
//!
//! Extensions ([`HOSTS`]): `rooveterinaryinc.roo-cline` (Roo Code), `zoocodeorganization.zoo-code`
//! (Zoo Code) with its nightly build `zoocodeorganization.zoo-code-nightly` and its JetBrains
//! plugin `wecode-ai.zoo-code`, `saoudrizwan.claude-dev` (Cline), `kilocode.kilo-code` (Kilo
//! Code). A location counts when it has a `tasks/` directory. Paths met twice (after resolving
//! links) are reported once.

use crate::env::{HostEnv, STORAGE_ENV};
use crate::fsutil;
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub use roo_formats::host::{host_by_name, host_of_path, Host, HOSTS};

/// Desktop editor builds (their user-data directory names).
pub const EDITORS: [&str; 6] = [
    "Code",
    "Code - Insiders",
    "Code - OSS",
    "VSCodium",
    "Cursor",
    "Windsurf",
];

/// Server-side installs: (directory under home, editor name).
pub const SERVERS: [(&str, &str); 5] = [
    (".vscode-server", "Code (server)"),
    (".vscode-server-insiders", "Code - Insiders (server)"),
    (".vscodium-server", "VSCodium (server)"),
    (".cursor-server", "Cursor (server)"),
    (".windsurf-server", "Windsurf (server)"),
];

/// IDE ports that keep an extension's storage under the home folder: (the folder under home
/// holding `globalStorage/`, editor).
pub const PORTS: [(&str, &str); 1] = [(".zoo-code", "JetBrains (Zoo Code plugin)")];

/// The host an extension folder of `globalStorage/` belongs to: its id, else the longest id it
/// starts with followed by `-` (a build the table does not name).
fn host_of_folder(name: &str) -> Option<&'static Host> {
    HOSTS.iter().find(|h| name == h.id).or_else(|| {
        HOSTS
            .iter()
            .filter(|h| name.starts_with(h.id) && name.as_bytes().get(h.id.len()) == Some(&b'-'))
            .max_by_key(|h| h.id.len())
    })
}

/// How a location was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum LocationKind {
    /// `<editor user data>/User/globalStorage/<id>`.
    Standard,
    /// A server-side install (`~/.vscode-server/data/...`).
    Server,
    /// The extension's `customStoragePath` setting.
    Custom,
    /// `ROO_STATE_STORAGE`.
    Env,
    /// Passed by the caller.
    Extra,
}

/// One task store.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StorageLocation {
    /// The storage base (parent of `tasks/`).
    pub path: String,
    pub tasks_dir: String,
    /// Extension id, when known.
    pub host: Option<String>,
    /// The host's label (a `HostSource` of `roo_formats::host::SOURCES`), or `unknown`.
    #[cfg_attr(feature = "ts", ts(type = "HostSource | \"unknown\""))]
    pub source: String,
    /// Editor build (`Code`, `Cursor`, `Code (server)`, …), when known.
    pub editor: Option<String>,
    pub kind: LocationKind,
    pub task_count: u32,
    /// Bytes under `tasks/` (every file, checkpoints included); absent when not measured.
    pub size_bytes: Option<u64>,
    /// The editor's `state.vscdb`, when it exists.
    pub state_db: Option<String>,
    /// `tasks/_index.json` exists (the extension's v3.49+ history index).
    pub has_history_index: bool,
}

/// Options of [`discover_storage`].
#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// More roots to look at: a storage base, a `tasks/` folder, or a `globalStorage` folder.
    pub extra_roots: Vec<PathBuf>,
    /// Measure each location's size (walks every file, checkpoints included).
    pub measure_size: bool,
}

/// What [`discover_storage`] found and where it looked.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "StorageDiscovery"))]
pub struct Discovery {
    pub locations: Vec<StorageLocation>,
    /// Every directory looked at, in order.
    pub searched: Vec<String>,
    /// Roots given explicitly that hold no task store, and settings that could not be used.
    pub warnings: Vec<String>,
}

struct Candidate {
    base: PathBuf,
    tasks_dir: PathBuf,
    host: Option<&'static Host>,
    /// The extension folder's own name, when it is not the host's id (a build the table does
    /// not name): shown as the location's host.
    folder: Option<String>,
    editor: Option<String>,
    kind: LocationKind,
    state_db: Option<PathBuf>,
}

/// Every task store on the machine described by `env`.
pub fn discover_storage(env: &HostEnv, opts: &DiscoverOptions) -> Discovery {
    let mut out = Discovery::default();
    let mut cands: Vec<Candidate> = Vec::new();

    let env_roots = env
        .var(STORAGE_ENV)
        .map(|v| env.split_path_list(v))
        .unwrap_or_default();
    for root in &env_roots {
        explicit_root(root, LocationKind::Env, &mut cands, &mut out);
    }
    for root in &opts.extra_roots {
        explicit_root(root, LocationKind::Extra, &mut cands, &mut out);
    }
    if env_roots.is_empty() {
        let config = env.config_dir();
        for editor in EDITORS {
            let user = config.join(editor).join("User");
            editor_user_dir(&user, editor, LocationKind::Standard, &mut cands, &mut out);
        }
        for (dir, editor) in SERVERS {
            let user = env.home.join(dir).join("data").join("User");
            editor_user_dir(&user, editor, LocationKind::Server, &mut cands, &mut out);
        }
        for (dir, editor) in PORTS {
            let user = env.home.join(dir);
            editor_user_dir(&user, editor, LocationKind::Standard, &mut cands, &mut out);
        }
    }

    let mut seen: HashSet<PathBuf> = HashSet::new();
    for c in cands {
        let key = fsutil::canonical(&c.tasks_dir);
        if !seen.insert(key) {
            continue;
        }
        let task_count =
            roo_state::scan::list_task_dirs(&c.tasks_dir).map_or(0, |(dirs, _)| dirs.len() as u32);
        let size_bytes = opts.measure_size.then(|| fsutil::tree_size(&c.tasks_dir).1);
        let host = c.host.or_else(|| host_of_path(&c.base));
        out.locations.push(StorageLocation {
            path: c.base.display().to_string(),
            tasks_dir: c.tasks_dir.display().to_string(),
            host: c.folder.or_else(|| host.map(|h| h.id.to_owned())),
            source: host.map_or("unknown", |h| h.source).to_owned(),
            editor: c.editor,
            kind: c.kind,
            task_count,
            size_bytes,
            state_db: c
                .state_db
                .filter(|p| p.is_file())
                .map(|p| p.display().to_string()),
            has_history_index: c.tasks_dir.join("_index.json").is_file(),
        });
    }
    out
}

/// `<user>/globalStorage/<host>/tasks` and the custom paths named in `<user>/settings.json`.
fn editor_user_dir(
    user: &Path,
    editor: &str,
    kind: LocationKind,
    cands: &mut Vec<Candidate>,
    out: &mut Discovery,
) {
    let global = user.join("globalStorage");
    out.searched.push(global.display().to_string());
    let state_db = global.join("state.vscdb");
    // Custom storage paths first: when set, the extension keeps its tasks there.
    let settings = user.join("settings.json");
    if let Ok(text) = std::fs::read_to_string(&settings) {
        match parse_jsonc(&text) {
            Some(serde_json::Value::Object(map)) => {
                for (i, host) in HOSTS.iter().enumerate() {
                    // A namespace two builds share is read once (the first build names it).
                    if HOSTS.iter().position(|h| h.settings_ns == host.settings_ns) != Some(i) {
                        continue;
                    }
                    let key = format!("{}.customStoragePath", host.settings_ns);
                    if let Some(p) = map.get(&key).and_then(|v| v.as_str()) {
                        let p = p.trim();
                        if p.is_empty() {
                            continue;
                        }
                        let base = PathBuf::from(p);
                        out.searched.push(base.display().to_string());
                        if base.join("tasks").is_dir() {
                            cands.push(Candidate {
                                tasks_dir: base.join("tasks"),
                                base,
                                host: Some(host),
                                folder: None,
                                editor: Some(editor.to_owned()),
                                kind: LocationKind::Custom,
                                state_db: Some(state_db.clone()),
                            });
                        } else {
                            out.warnings.push(format!(
                                "{}: {key} names {p}, which has no tasks/ folder",
                                settings.display()
                            ));
                        }
                    }
                }
            }
            _ => out.warnings.push(format!(
                "{} could not be read as JSON with comments; custom storage paths in it were not seen",
                settings.display()
            )),
        }
    }
    let Ok(entries) = std::fs::read_dir(&global) else {
        return;
    };
    let mut found: Vec<(PathBuf, &'static Host, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_lowercase();
            let host = host_of_folder(&name)?;
            Some((e.path(), host, name))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    for (base, host, name) in found {
        if base.join("tasks").is_dir() {
            cands.push(Candidate {
                tasks_dir: base.join("tasks"),
                base,
                host: Some(host),
                folder: (name != host.id).then_some(name),
                editor: Some(editor.to_owned()),
                kind,
                state_db: Some(state_db.clone()),
            });
        }
    }
}

/// A root given explicitly: a storage base, a `tasks/` folder, or a `globalStorage` folder.
fn explicit_root(root: &Path, kind: LocationKind, cands: &mut Vec<Candidate>, out: &mut Discovery) {
    out.searched.push(root.display().to_string());
    let parent_db = |p: &Path| p.parent().map(|g| g.join("state.vscdb"));
    if root.join("tasks").is_dir() {
        cands.push(Candidate {
            tasks_dir: root.join("tasks"),
            base: root.to_path_buf(),
            host: host_of_path(root),
            folder: None,
            editor: None,
            kind,
            state_db: parent_db(root),
        });
        return;
    }
    // A globalStorage folder: its extension folders.
    let mut any = false;
    if let Ok(entries) = std::fs::read_dir(root) {
        let mut subs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| host_of_path(p).is_some() && p.join("tasks").is_dir())
            .collect();
        subs.sort();
        for base in subs {
            any = true;
            cands.push(Candidate {
                tasks_dir: base.join("tasks"),
                host: host_of_path(&base),
                folder: None,
                editor: None,
                kind,
                state_db: Some(root.join("state.vscdb")),
                base,
            });
        }
    }
    if any {
        return;
    }
    // A tasks folder itself.
    let looks_like_tasks = root.file_name().is_some_and(|n| n == "tasks")
        || roo_state::scan::list_task_dirs(root).is_ok_and(|(dirs, _)| {
            dirs.iter().take(20).any(|(_, d)| {
                [
                    "ui_messages.json",
                    "api_conversation_history.json",
                    "history_item.json",
                    "task_metadata.json",
                    "claude_messages.json",
                ]
                .iter()
                .any(|f| d.join(f).is_file())
            })
        });
    if root.is_dir() && looks_like_tasks {
        let base = root.parent().unwrap_or(root).to_path_buf();
        cands.push(Candidate {
            state_db: parent_db(&base),
            host: host_of_path(root),
            folder: None,
            base,
            tasks_dir: root.to_path_buf(),
            editor: None,
            kind,
        });
    } else {
        out.warnings.push(format!(
            "{} holds no task store (no tasks/ folder, no extension folder, no task folders)",
            root.display()
        ));
    }
}

/// Parse VS Code's settings format: JSON with `//` and `/* */` comments and trailing commas.
pub fn parse_jsonc(text: &str) -> Option<serde_json::Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_str = false;
    let mut last_start = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_str {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_str = true;
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[last_start..i]);
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                last_start = i;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[last_start..i]);
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(bytes.len());
                last_start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(text.get(last_start..).unwrap_or(""));
    // Trailing commas: a comma followed (after white space) by `}` or `]`, outside strings.
    let b = out.as_bytes();
    let mut clean = String::with_capacity(out.len());
    let mut in_str = false;
    let mut j = 0;
    let mut seg = 0;
    while j < b.len() {
        let c = b[j];
        if in_str {
            if c == b'\\' {
                j += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            j += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
        } else if c == b',' {
            let mut k = j + 1;
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            if k < b.len() && (b[k] == b'}' || b[k] == b']') {
                clean.push_str(out.get(seg..j).unwrap_or(""));
                seg = j + 1;
            }
        }
        j += 1;
    }
    clean.push_str(out.get(seg..).unwrap_or(""));
    serde_json::from_str(&clean).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas() {
        let v = parse_jsonc(
            "\u{feff}{\n // a comment\n \"a\": \"http://x\", /* block */ \"b\": [1,2,],\n \"c\": \"// not\",\n}",
        )
        .expect("parses");
        assert_eq!(v["a"], "http://x");
        assert_eq!(v["b"], serde_json::json!([1, 2]));
        assert_eq!(v["c"], "// not");
    }
}
