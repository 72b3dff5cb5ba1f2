//! The export configuration: `xml_export_config.json` in this library's configuration directory.
//!
//! `get` reads it (defaults when the file does not exist); `set` merges a partial configuration
//! into the current one (objects merge key by key, `null` removes a key so its default applies,
//! other values replace), validates the result and writes it atomically; `reset` writes the
//! defaults. A change that does not validate is refused with a message naming the setting, and
//! the file is left as it was.

use crate::error::{ExportError, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// File name of the configuration.
pub const CONFIG_FILE: &str = "xml_export_config.json";
/// Environment variable overriding the configuration directory.
pub const CONFIG_DIR_ENV: &str = "ROO_STATE_CONFIG_DIR";

/// Settings applied when an export call does not give them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExportDefaults {
    pub pretty_print: bool,
    pub include_content: bool,
    /// Only `none` is supported.
    #[cfg_attr(feature = "ts", ts(type = "\"none\""))]
    pub compression: String,
    /// With `includeContent: false`, message content is cut to this many UTF-16 units.
    pub content_preview_length: u32,
    /// With `includeContent: true`, longer content is cut in the middle (0 = never).
    pub max_content_length: u32,
    /// Depth of conversation exports when the call gives none (`null` = all).
    pub max_depth: Option<u32>,
    /// Replace existing files.
    pub overwrite: bool,
    /// Directory exports are written into (`null` = the current directory).
    pub output_root: Option<String>,
}

impl Default for ExportDefaults {
    fn default() -> Self {
        Self {
            pretty_print: true,
            include_content: false,
            compression: "none".into(),
            content_preview_length: 100,
            max_content_length: 100_000,
            max_depth: None,
            overwrite: false,
            output_root: None,
        }
    }
}

/// A named selection of fields (kept for callers; the exports do not read templates yet).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExportTemplate {
    pub format: String,
    pub fields: Vec<String>,
}

/// A named filter for project exports and the task list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ExportFilter {
    /// ISO 8601 date or date-time, or `now-7d` (`m`, `h`, `d`, `w`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_date: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_date: Option<String>,
    /// Keep conversations whose root task ran in this mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExportConfig {
    pub defaults: ExportDefaults,
    pub templates: BTreeMap<String, ExportTemplate>,
    pub filters: BTreeMap<String, ExportFilter>,
}

/// The configuration directory: `$ROO_STATE_CONFIG_DIR`, else the platform's configuration
/// directory ([`roo_dirs`]: `$XDG_CONFIG_HOME` or `~/.config` on Linux, `~/Library/Application
/// Support` on macOS, `%APPDATA%` on Windows) + `roo-state-core`.
pub fn config_dir() -> Result<PathBuf> {
    if let Some(d) = std::env::var_os(CONFIG_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    let base = roo_dirs::current(roo_dirs::Folder::Config);
    base.map(|b| b.join("roo-state-core")).ok_or_else(|| {
        ExportError::InvalidConfig(format!(
            "no configuration directory: set {CONFIG_DIR_ENV} (or HOME) to a directory"
        ))
    })
}

/// Path of the configuration file.
pub fn config_path() -> Result<PathBuf> {
    Ok(config_dir()?.join(CONFIG_FILE))
}

/// What is on disk.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: ExportConfig,
    pub path: PathBuf,
    /// `file` or `defaults` (no file yet, or a file that could not be read).
    pub from: &'static str,
    pub warnings: Vec<String>,
}

/// Read the configuration. A missing file gives the defaults; a damaged one gives the defaults and
/// a warning (the file is left for the user to fix or `reset`).
pub fn load() -> Result<Loaded> {
    let path = config_path()?;
    Ok(load_from(&path))
}

fn load_from(path: &Path) -> Loaded {
    let mut loaded = Loaded {
        config: ExportConfig::default(),
        path: path.to_path_buf(),
        from: "defaults",
        warnings: Vec::new(),
    };
    match read_file(path) {
        Ok(None) => {}
        Ok(Some(config)) => {
            loaded.config = config;
            loaded.from = "file";
        }
        Err(why) => loaded.warnings.push(format!(
            "{why}; the defaults are in use until it is fixed or reset"
        )),
    }
    loaded
}

fn read_file(path: &Path) -> std::result::Result<Option<ExportConfig>, String> {
    let text = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{} cannot be read: {e}", path.display())),
    };
    let text = String::from_utf8_lossy(&text);
    let text = text.trim_start_matches('\u{feff}');
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("{} is not valid JSON ({e})", path.display()))?;
    let value = fill_defaults(value);
    validate(&value)
        .map_err(|e| format!("{} is not a valid configuration: {e}", path.display()))?;
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| format!("{} is not a valid configuration: {e}", path.display()))
}

/// The defaults as a JSON value, merged under `value` (missing keys take their defaults).
fn fill_defaults(value: Value) -> Value {
    let mut base = serde_json::to_value(ExportConfig::default()).unwrap_or(Value::Null);
    merge_patch(&mut base, &value);
    base
}

/// Deep merge: objects merge key by key, `null` removes, anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(t) = target {
        for (k, v) in patch_map {
            if v.is_null() {
                t.remove(k);
            } else {
                merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

fn object<'a>(v: &'a Value, at: &str) -> std::result::Result<&'a Map<String, Value>, String> {
    v.as_object().ok_or_else(|| {
        format!(
            "{at} must be an object, got {} ({})",
            roo_js::kind_of(v),
            show(v)
        )
    })
}

fn unknown_keys(
    map: &Map<String, Value>,
    known: &[&str],
    at: &str,
) -> std::result::Result<(), String> {
    for k in map.keys() {
        if !known.contains(&k.as_str()) {
            return Err(format!(
                "{at}.{k} is not a setting (known: {})",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

fn boolean(v: &Value, at: &str) -> std::result::Result<(), String> {
    if v.is_boolean() {
        Ok(())
    } else {
        Err(format!("{at} must be true or false, got {}", show(v)))
    }
}

fn integer(v: &Value, at: &str, max: u64) -> std::result::Result<(), String> {
    match v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= max as f64)
            .map(|f| f as u64)
    }) {
        Some(n) if n <= max => Ok(()),
        _ => Err(format!(
            "{at} must be a whole number from 0 to {max}, got {}",
            show(v)
        )),
    }
}

fn date_expr(v: &Value, at: &str) -> std::result::Result<(), String> {
    match v.as_str() {
        Some(s) if crate::dates::parse_date_bound(s, false, 0).is_some() => Ok(()),
        _ => Err(format!(
            "{at} must be an ISO 8601 date (2025-09-01, 2025-09-01T10:00:00Z) or a relative \
             date such as now-7d, got {}",
            show(v)
        )),
    }
}

/// Check a whole configuration value (after defaults are filled in). The message names the
/// setting at fault and what it must be.
pub fn validate(v: &Value) -> std::result::Result<(), String> {
    let top = object(v, "config")?;
    unknown_keys(top, &["defaults", "templates", "filters"], "config")?;
    if let Some(d) = top.get("defaults") {
        let d = object(d, "config.defaults")?;
        unknown_keys(
            d,
            &[
                "prettyPrint",
                "includeContent",
                "compression",
                "contentPreviewLength",
                "maxContentLength",
                "maxDepth",
                "overwrite",
                "outputRoot",
            ],
            "config.defaults",
        )?;
        for (k, val) in d {
            let at = format!("config.defaults.{k}");
            match k.as_str() {
                "prettyPrint" | "includeContent" | "overwrite" => boolean(val, &at)?,
                "compression" => match val.as_str() {
                    Some("none") => {}
                    Some(other) => {
                        return Err(format!(
                            "{at}: {other:?} is not supported; the only value is \"none\" \
                             (compressed exports are not implemented)"
                        ))
                    }
                    None => return Err(format!("{at} must be \"none\", got {}", show(val))),
                },
                "contentPreviewLength" => integer(val, &at, 1_000_000)?,
                "maxContentLength" => integer(val, &at, u32::MAX as u64)?,
                "maxDepth" if !val.is_null() => integer(val, &at, 10_000)?,
                "outputRoot" => match val {
                    Value::Null => {}
                    Value::String(s) if !s.trim().is_empty() && Path::new(s).is_absolute() => {}
                    _ => {
                        return Err(format!(
                            "{at} must be an absolute directory path (or null for the current \
                             directory), got {}",
                            show(val)
                        ))
                    }
                },
                _ => {}
            }
        }
    }
    if let Some(t) = top.get("templates") {
        for (name, tpl) in object(t, "config.templates")? {
            let at = format!("config.templates.{name}");
            if name.trim().is_empty() {
                return Err("config.templates: a template name is empty".into());
            }
            let tpl = object(tpl, &at)?;
            unknown_keys(tpl, &["format", "fields"], &at)?;
            if let Some(f) = tpl.get("format") {
                if f.as_str().is_none_or(|s| s.trim().is_empty()) {
                    return Err(format!(
                        "{at}.format must be a non-empty string, got {}",
                        show(f)
                    ));
                }
            }
            if let Some(f) = tpl.get("fields") {
                let ok = f
                    .as_array()
                    .is_some_and(|a| a.iter().all(|x| x.as_str().is_some_and(|s| !s.is_empty())));
                if !ok {
                    return Err(format!(
                        "{at}.fields must be an array of field names, got {}",
                        show(f)
                    ));
                }
            }
        }
    }
    if let Some(f) = top.get("filters") {
        for (name, filter) in object(f, "config.filters")? {
            let at = format!("config.filters.{name}");
            if name.trim().is_empty() {
                return Err("config.filters: a filter name is empty".into());
            }
            let filter = object(filter, &at)?;
            unknown_keys(filter, &["startDate", "endDate", "mode"], &at)?;
            for (k, val) in filter {
                let at = format!("{at}.{k}");
                match k.as_str() {
                    "startDate" | "endDate" => date_expr(val, &at)?,
                    _ => {
                        if val.as_str().is_none_or(|s| s.trim().is_empty()) {
                            return Err(format!(
                                "{at} must be a non-empty string, got {}",
                                show(val)
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Write `config` atomically (temporary file in the same directory, then rename).
fn write_config(path: &Path, config: &ExportConfig) -> Result<()> {
    let dir = path.parent().ok_or_else(|| {
        ExportError::InvalidConfig(format!("{} has no directory", path.display()))
    })?;
    std::fs::create_dir_all(dir).map_err(|e| {
        ExportError::InvalidConfig(format!(
            "the configuration directory {} could not be created: {e}",
            dir.display()
        ))
    })?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".xml_export_config-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| {
            ExportError::InvalidConfig(format!("{} is not writable: {e}", dir.display()))
        })?;
    let text = serde_json::to_string_pretty(config).map_err(|e| {
        ExportError::Generation(format!("the configuration could not be serialised: {e}"))
    })?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| tmp.write_all(b"\n"))
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| {
            ExportError::InvalidConfig(format!("the configuration could not be written: {e}"))
        })?;
    tmp.persist(path).map_err(|e| {
        ExportError::InvalidConfig(format!(
            "the configuration could not be saved to {}: {}",
            path.display(),
            e.error
        ))
    })?;
    Ok(())
}

/// `configureXmlExport` actions.
#[derive(Debug, Clone)]
pub enum ConfigAction {
    Get,
    Set(Value),
    Reset,
}

impl ConfigAction {
    /// `get`, `set` (with `config`) or `reset`.
    pub fn parse(action: &str, config: Option<Value>) -> Result<Self> {
        match (action, config) {
            ("get", _) => Ok(ConfigAction::Get),
            ("reset", _) => Ok(ConfigAction::Reset),
            ("set", Some(c)) => Ok(ConfigAction::Set(c)),
            ("set", None) => Err(ExportError::InvalidConfig(
                "action 'set' needs config: a partial configuration such as \
                 { defaults: { prettyPrint: false } }"
                    .into(),
            )),
            (other, _) => Err(ExportError::InvalidConfig(format!(
                "unknown action {other:?}; use 'get', 'set' or 'reset'"
            ))),
        }
    }
}

/// The outcome of [`configure`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "ConfigureXmlExportResult")
)]
pub struct ConfigOutcome {
    #[cfg_attr(feature = "ts", ts(type = "\"get\" | \"set\" | \"reset\""))]
    pub action: String,
    pub config: ExportConfig,
    pub path: String,
    /// `file` or `defaults`.
    #[cfg_attr(feature = "ts", ts(type = "\"file\" | \"defaults\""))]
    pub from: String,
    pub message: String,
    pub warnings: Vec<String>,
}

/// Run a configuration action on the file in [`config_dir`].
pub fn configure(action: ConfigAction) -> Result<ConfigOutcome> {
    configure_at(&config_path()?, action)
}

/// Run a configuration action on the file at `path`.
pub fn configure_at(path: &Path, action: ConfigAction) -> Result<ConfigOutcome> {
    let shown = path.display().to_string();
    match action {
        ConfigAction::Get => {
            let l = load_from(path);
            Ok(ConfigOutcome {
                action: "get".into(),
                message: if l.from == "file" {
                    format!("Configuration read from {shown}.")
                } else {
                    "Default configuration (no valid configuration file yet).".into()
                },
                config: l.config,
                path: shown,
                from: l.from.into(),
                warnings: l.warnings,
            })
        }
        ConfigAction::Set(patch) => {
            if !patch.is_object() {
                return Err(ExportError::InvalidConfig(format!(
                    "config must be an object such as {{ defaults: {{ prettyPrint: false }} }}, got {}",
                    roo_js::kind_of(&patch)
                )));
            }
            let current = match read_file(path) {
                Ok(c) => c.unwrap_or_default(),
                Err(why) => {
                    return Err(ExportError::InvalidConfig(format!(
                        "{why}; fix the file or run action 'reset' before 'set'"
                    )))
                }
            };
            let mut value = serde_json::to_value(&current).map_err(|e| {
                ExportError::Generation(format!("the configuration could not be serialised: {e}"))
            })?;
            merge_patch(&mut value, &patch);
            let value = fill_defaults(value);
            validate(&value).map_err(|e| {
                ExportError::InvalidConfig(format!("{e}; the configuration was not changed"))
            })?;
            let config: ExportConfig = serde_json::from_value(value).map_err(|e| {
                ExportError::InvalidConfig(format!("{e}; the configuration was not changed"))
            })?;
            write_config(path, &config)?;
            Ok(ConfigOutcome {
                action: "set".into(),
                config,
                path: shown.clone(),
                from: "file".into(),
                message: format!("Configuration updated in {shown}."),
                warnings: Vec::new(),
            })
        }
        ConfigAction::Reset => {
            let config = ExportConfig::default();
            write_config(path, &config)?;
            Ok(ConfigOutcome {
                action: "reset".into(),
                config,
                path: shown.clone(),
                from: "file".into(),
                message: format!("Configuration reset to the defaults in {shown}."),
                warnings: Vec::new(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_and_validate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(CONFIG_FILE);
        let got = configure_at(&path, ConfigAction::Get).expect("get");
        assert_eq!(got.config, ExportConfig::default());
        assert_eq!(got.from, "defaults");
        let set = configure_at(
            &path,
            ConfigAction::Set(json!({"defaults": {"prettyPrint": false}, "filters": {"week": {"startDate": "now-7d"}}})),
        )
        .expect("set");
        assert!(!set.config.defaults.pretty_print);
        assert!(!set.config.defaults.include_content);
        let before = std::fs::read(&path).expect("file");
        for bad in [
            json!({"defaults": {"prettyPrint": "yes"}}),
            json!({"defaults": {"prettyprint": true}}),
            json!({"defaults": {"compression": "zip"}}),
            json!({"filters": {"x": {"startDate": "yesterday"}}}),
            json!({"defaults": {"outputRoot": "relative/dir"}}),
            json!({"other": 1}),
        ] {
            let err = configure_at(&path, ConfigAction::Set(bad.clone())).expect_err("invalid");
            assert_eq!(err.code(), "INVALID_CONFIG", "{bad}");
            assert_eq!(std::fs::read(&path).expect("file"), before, "{bad}");
        }
        let removed = configure_at(&path, ConfigAction::Set(json!({"filters": {"week": null}})))
            .expect("set");
        assert!(removed.config.filters.is_empty());
        let reset = configure_at(&path, ConfigAction::Reset).expect("reset");
        assert_eq!(reset.config, ExportConfig::default());
    }
}
