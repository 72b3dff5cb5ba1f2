//! Discovery against fake home directories of each OS layout, host and editor.

mod common;

use roo_store::discover::{discover_storage, DiscoverOptions, LocationKind, EDITORS, HOSTS};
use roo_store::{HostEnv, Platform};
use std::fs;
use std::path::{Path, PathBuf};

fn store(base: &Path, tasks: usize) {
    let t = base.join("tasks");
    fs::create_dir_all(&t).expect("mkdir");
    common::make_tasks(&t, tasks);
}

fn user_dir(home: &Path, platform: Platform, editor: &str) -> PathBuf {
    match platform {
        Platform::Windows => home
            .join("AppData")
            .join("Roaming")
            .join(editor)
            .join("User"),
        Platform::Macos => home
            .join("Library")
            .join("Application Support")
            .join(editor)
            .join("User"),
        Platform::Linux => home.join(".config").join(editor).join("User"),
    }
}

fn opts() -> DiscoverOptions {
    DiscoverOptions {
        measure_size: true,
        ..DiscoverOptions::default()
    }
}

#[test]
fn every_host_and_editor_on_every_platform() {
    for platform in [Platform::Windows, Platform::Macos, Platform::Linux] {
        let home = tempfile::tempdir().expect("tmp");
        let mut expected = Vec::new();
        for (ei, editor) in EDITORS.iter().enumerate() {
            for (hi, host) in HOSTS.iter().enumerate() {
                // Not every pair, to keep it quick, but every editor and every host.
                if (ei + hi) % 2 != 0 {
                    continue;
                }
                let base = user_dir(home.path(), platform, editor)
                    .join("globalStorage")
                    .join(host.id);
                store(&base, 1 + hi);
                expected.push((editor.to_string(), host.id, 1 + hi));
            }
        }
        // An extension folder without tasks/ is not a store.
        fs::create_dir_all(
            user_dir(home.path(), platform, "Code")
                .join("globalStorage")
                .join("kilocode.kilo-code")
                .join("settings"),
        )
        .expect("mkdir");
        let env = HostEnv::fake(home.path(), platform);
        let found = discover_storage(&env, &opts());
        assert_eq!(
            found.locations.len(),
            expected.len(),
            "{platform:?}: {:#?}",
            found.locations
        );
        for (editor, host, n) in expected {
            let l = found
                .locations
                .iter()
                .find(|l| {
                    l.editor.as_deref() == Some(editor.as_str()) && l.host.as_deref() == Some(host)
                })
                .unwrap_or_else(|| panic!("{platform:?} {editor} {host} not found"));
            assert_eq!(l.task_count as usize, n);
            assert_eq!(l.kind, LocationKind::Standard);
            assert!(l.size_bytes.unwrap_or(0) > 0);
        }
    }
}

#[test]
fn platform_variables_are_honoured() {
    let home = tempfile::tempdir().expect("tmp");
    let appdata = home.path().join("elsewhere").join("Roaming");
    store(
        &appdata
            .join("Code")
            .join("User")
            .join("globalStorage")
            .join("rooveterinaryinc.roo-cline"),
        2,
    );
    let env = HostEnv::fake(home.path(), Platform::Windows)
        .with_var("APPDATA", appdata.display().to_string());
    let found = discover_storage(&env, &opts());
    assert_eq!(found.locations.len(), 1);
    assert_eq!(found.locations[0].source, "roo");

    let xdg = home.path().join("xdg");
    store(
        &xdg.join("Cursor")
            .join("User")
            .join("globalStorage")
            .join("zoocodeorganization.zoo-code"),
        1,
    );
    let env = HostEnv::fake(home.path(), Platform::Linux)
        .with_var("XDG_CONFIG_HOME", xdg.display().to_string());
    let found = discover_storage(&env, &opts());
    assert_eq!(found.locations.len(), 1);
    assert_eq!(found.locations[0].editor.as_deref(), Some("Cursor"));
    assert_eq!(found.locations[0].source, "zoo-code");
}

#[test]
fn server_side_installs() {
    for platform in [Platform::Linux, Platform::Macos, Platform::Windows] {
        let home = tempfile::tempdir().expect("tmp");
        store(
            &home
                .path()
                .join(".vscode-server/data/User/globalStorage/rooveterinaryinc.roo-cline"),
            2,
        );
        store(
            &home
                .path()
                .join(".vscode-server-insiders/data/User/globalStorage/saoudrizwan.claude-dev"),
            1,
        );
        let found = discover_storage(&HostEnv::fake(home.path(), platform), &opts());
        assert_eq!(found.locations.len(), 2, "{platform:?}");
        assert!(found
            .locations
            .iter()
            .all(|l| l.kind == LocationKind::Server));
        let cline = found
            .locations
            .iter()
            .find(|l| l.source == "cline")
            .expect("cline");
        assert_eq!(cline.editor.as_deref(), Some("Code - Insiders (server)"));
    }
}

#[test]
fn custom_storage_path_from_settings() {
    let home = tempfile::tempdir().expect("tmp");
    let custom = home.path().join("my tasks store");
    store(&custom, 3);
    let user = user_dir(home.path(), Platform::Linux, "Code");
    fs::create_dir_all(user.join("globalStorage")).expect("mkdir");
    fs::write(
        user.join("settings.json"),
        format!(
            "{{\n  // Roo keeps its tasks elsewhere\n  \"roo-cline.customStoragePath\": {},\n  \"editor.fontSize\": 14,\n}}\n",
            serde_json::to_string(&custom.display().to_string()).expect("json")
        ),
    )
    .expect("write");
    // The default place also has a store: both are found.
    store(
        &user
            .join("globalStorage")
            .join("rooveterinaryinc.roo-cline"),
        1,
    );
    let found = discover_storage(&HostEnv::fake(home.path(), Platform::Linux), &opts());
    assert_eq!(found.locations.len(), 2);
    let c = found
        .locations
        .iter()
        .find(|l| l.kind == LocationKind::Custom)
        .expect("custom");
    assert_eq!(c.task_count, 3);
    assert_eq!(c.host.as_deref(), Some("rooveterinaryinc.roo-cline"));
    assert_eq!(c.editor.as_deref(), Some("Code"));
}

#[test]
fn env_override_replaces_the_search_and_extra_roots_add() {
    let home = tempfile::tempdir().expect("tmp");
    store(
        &user_dir(home.path(), Platform::Linux, "Code")
            .join("globalStorage/rooveterinaryinc.roo-cline"),
        1,
    );
    let a = home.path().join("a");
    store(&a, 2);
    // A tasks folder given directly.
    let b = home.path().join("b").join("tasks");
    fs::create_dir_all(&b).expect("mkdir");
    common::make_tasks(&b, 4);
    // A globalStorage folder given directly.
    let g = home.path().join("g");
    store(&g.join("kilocode.kilo-code"), 1);
    let missing = home.path().join("nothing-here");
    let list = [&a, &b, &g, &missing]
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    let env = HostEnv::fake(home.path(), Platform::Linux).with_var("ROO_STATE_STORAGE", list);
    let found = discover_storage(&env, &opts());
    let counts: Vec<u32> = found.locations.iter().map(|l| l.task_count).collect();
    assert_eq!(counts, vec![2, 4, 1], "{:#?}", found.locations);
    assert!(found.locations.iter().all(|l| l.kind == LocationKind::Env));
    assert_eq!(found.locations[2].source, "kilo-code");
    assert_eq!(found.warnings.len(), 1, "{:?}", found.warnings);

    // Windows separator.
    let env = HostEnv::fake(home.path(), Platform::Windows).with_var(
        "ROO_STATE_STORAGE",
        format!("{};{}", a.display(), g.display()),
    );
    assert_eq!(discover_storage(&env, &opts()).locations.len(), 2);

    // extraRoots add to the automatic search; the same store twice is reported once.
    let env = HostEnv::fake(home.path(), Platform::Linux);
    let found = discover_storage(
        &env,
        &DiscoverOptions {
            extra_roots: vec![a.clone(), a.join("tasks")],
            measure_size: false,
        },
    );
    assert_eq!(found.locations.len(), 2);
    assert_eq!(found.locations[0].kind, LocationKind::Extra);
    assert_eq!(found.locations[0].size_bytes, None);
}

#[test]
fn an_empty_home_finds_nothing_and_says_where_it_looked() {
    let home = tempfile::tempdir().expect("tmp");
    let found = discover_storage(&HostEnv::fake(home.path(), Platform::Macos), &opts());
    assert!(found.locations.is_empty());
    assert!(found
        .searched
        .iter()
        .any(|s| s.contains("Application Support")));
}

/// What a location says: host, source, editor, kind, tasks.
type Seen<'a> = (Option<&'a str>, &'a str, Option<&'a str>, LocationKind, u32);

#[test]
fn zoo_code_nightly_custom_path_and_jetbrains_plugin() {
    for platform in [Platform::Linux, Platform::Macos, Platform::Windows] {
        let home = tempfile::tempdir().expect("tmp");
        let user = user_dir(home.path(), platform, "Code");
        // The release and the nightly build side by side.
        store(
            &user
                .join("globalStorage")
                .join("zoocodeorganization.zoo-code"),
            1,
        );
        store(
            &user
                .join("globalStorage")
                .join("zoocodeorganization.zoo-code-nightly"),
            2,
        );
        // The nightly build's own setting (its package is renamed zoo-code-nightly).
        let custom = home.path().join("zoo nightly tasks");
        store(&custom, 3);
        fs::write(
            user.join("settings.json"),
            format!(
                "{{ \"zoo-code-nightly.customStoragePath\": {} }}",
                serde_json::to_string(&custom.display().to_string()).expect("json")
            ),
        )
        .expect("write");
        // The JetBrains plugin's own root under the home folder.
        store(
            &home
                .path()
                .join(".zoo-code")
                .join("globalStorage")
                .join("wecode-ai.zoo-code"),
            4,
        );
        let found = discover_storage(&HostEnv::fake(home.path(), platform), &opts());
        let mut got: Vec<Seen<'_>> = found
            .locations
            .iter()
            .map(|l| {
                (
                    l.host.as_deref(),
                    l.source.as_str(),
                    l.editor.as_deref(),
                    l.kind,
                    l.task_count,
                )
            })
            .collect();
        got.sort_by_key(|g| g.4);
        assert_eq!(
            got,
            vec![
                (
                    Some("zoocodeorganization.zoo-code"),
                    "zoo-code",
                    Some("Code"),
                    LocationKind::Standard,
                    1
                ),
                (
                    Some("zoocodeorganization.zoo-code-nightly"),
                    "zoo-code",
                    Some("Code"),
                    LocationKind::Standard,
                    2
                ),
                (
                    Some("zoocodeorganization.zoo-code-nightly"),
                    "zoo-code",
                    Some("Code"),
                    LocationKind::Custom,
                    3
                ),
                (
                    Some("wecode-ai.zoo-code"),
                    "zoo-code",
                    Some("JetBrains (Zoo Code plugin)"),
                    LocationKind::Standard,
                    4
                ),
            ],
            "{platform:?}"
        );
    }
    // Labels from a path alone: the longest id wins (a nightly folder contains the release's id).
    let nightly =
        Path::new("/h/.config/Code/User/globalStorage/zoocodeorganization.zoo-code-nightly/tasks");
    let host = roo_store::discover::host_of_path(nightly).expect("a host");
    assert_eq!(
        (host.id, host.source),
        ("zoocodeorganization.zoo-code-nightly", "zoo-code")
    );
    let jetbrains = Path::new("/h/.zoo-code/globalStorage/wecode-ai.zoo-code/tasks");
    let host = roo_store::discover::host_of_path(jetbrains).expect("a host");
    assert_eq!((host.id, host.source), ("wecode-ai.zoo-code", "zoo-code"));
    assert_eq!(roo_state::skeleton::source_from_path(jetbrains), "zoo-code");
    // A build the table does not name is placed by the release it extends, and shown as it is.
    let home = tempfile::tempdir().expect("tmp");
    let other = user_dir(home.path(), Platform::Linux, "VSCodium")
        .join("globalStorage")
        .join("kilocode.kilo-code-preview");
    store(&other, 1);
    let found = discover_storage(&HostEnv::fake(home.path(), Platform::Linux), &opts());
    assert_eq!(found.locations.len(), 1);
    assert_eq!(found.locations[0].source, "kilo-code");
    assert_eq!(
        found.locations[0].host.as_deref(),
        Some("kilocode.kilo-code-preview")
    );
}
