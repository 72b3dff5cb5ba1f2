//! The skeleton cache is trusted while `ENGINE_VERSION` stays the same: a change of what a
//! skeleton holds that forgets to bump it would serve users their old caches. This test holds the
//! two together: it records, beside the version, a hash of every skeleton (links and evidence
//! included) the task store builds from each bundled fixture store, and of the files it built
//! them from, and fails when a store's skeletons change while its files and the version did not.
//! (A fixture that changes is recorded anew; it says nothing about the engine.)
//!
//! After a deliberate change: bump `ENGINE_VERSION` (crates/store/src/lib.rs), then record the
//! new hash with `ROO_STATE_UPDATE_ENGINE_HASH=1 cargo test -p roo-store --test engine_version`.

mod common;

use roo_store::task_store::{OpenOptions, TaskStore};
use roo_store::{HostEnv, ENGINE_VERSION};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

const RECORD: &str = "tests/engine_version.txt";

fn fixture_stores() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/stores");
    let mut stores: Vec<PathBuf> = fs::read_dir(&root)
        .expect("fixtures/stores")
        .flatten()
        .map(|e| e.path().join("tasks"))
        .filter(|p| p.is_dir())
        .collect();
    stores.sort();
    stores
}

/// A skeleton as JSON, without what depends on the checkout rather than on the engine: paths
/// (written relative to the fixtures) and file modification times (a date taken from them).
fn stable(v: &mut Value, root: &str) {
    match v {
        Value::String(s) if s.contains(root) => *s = s.replace(root, "<fixtures>"),
        Value::Array(items) => items.iter_mut().for_each(|x| stable(x, root)),
        Value::Object(map) => {
            let from_files = map
                .get("metadata")
                .and_then(|m| m.get("datesFrom"))
                .is_some_and(|d| d == "fileTimes");
            if from_files {
                for k in ["createdAtMs", "lastActivityMs"] {
                    map.remove(k);
                }
                if let Some(Value::Object(m)) = map.get_mut("metadata") {
                    m.remove("createdAt");
                    m.remove("lastActivity");
                }
            }
            map.values_mut().for_each(|x| stable(x, root));
        }
        _ => {}
    }
}

/// The hash of every file under `dir` (relative names and bytes): what the engine was given.
fn input_hash(dir: &Path) -> String {
    let files = common::files_under(dir);
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for f in files {
        h.update(
            f.strip_prefix(dir)
                .unwrap_or(&f)
                .to_string_lossy()
                .as_bytes(),
        );
        h.update(&fs::read(&f).unwrap_or_default());
    }
    format!("{:016x}", h.digest())
}

/// The hash of the skeletons a handle over `stores` builds.
fn output_hash(stores: &[PathBuf]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/stores")
        .canonicalize()
        .expect("fixtures")
        .display()
        .to_string();
    let store = TaskStore::open(
        &HostEnv::current(),
        &OpenOptions {
            tasks_dirs: stores.to_vec(),
            cache_root: None,
            ignore_stored_links: false,
            every_file: false,
        },
    )
    .expect("open the fixture stores");
    let mut lines: Vec<String> = store
        .skeletons()
        .iter()
        .map(|s| {
            let mut v = serde_json::to_value(s).expect("skeleton as JSON");
            stable(&mut v, &root);
            v.to_string()
        })
        .collect();
    lines.sort();
    format!(
        "{:016x}",
        xxhash_rust::xxh3::xxh3_64(lines.join("\n").as_bytes())
    )
}

/// One line per fixture store (`name input output`), then the stores together (`* input output`:
/// links and copies across stores).
fn record_lines() -> Vec<String> {
    let stores = fixture_stores();
    let name = |p: &Path| {
        p.parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut lines: Vec<String> = stores
        .iter()
        .map(|s| {
            format!(
                "{} {} {}",
                name(s),
                input_hash(s),
                output_hash(std::slice::from_ref(s))
            )
        })
        .collect();
    let all_inputs: Vec<String> = stores.iter().map(|s| input_hash(s)).collect();
    let together = format!(
        "{:016x}",
        xxhash_rust::xxh3::xxh3_64(all_inputs.join(" ").as_bytes())
    );
    lines.push(format!("* {together} {}", output_hash(&stores)));
    lines
}

#[test]
fn skeleton_output_does_not_change_without_the_engine_version() {
    let now = record_lines();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RECORD);
    if std::env::var_os("ROO_STATE_UPDATE_ENGINE_HASH").is_some() {
        fs::write(&path, format!("{ENGINE_VERSION}\n{}\n", now.join("\n"))).expect("record");
        return;
    }
    let recorded = fs::read_to_string(&path).unwrap_or_default();
    let mut lines = recorded.lines();
    let version = lines.next().unwrap_or_default();
    let before: Vec<&str> = lines.collect();
    let record_again = "record the hashes anew (see this file's top)";
    assert_eq!(
        version, ENGINE_VERSION,
        "ENGINE_VERSION changed since {RECORD} was recorded: {record_again}"
    );
    for line in &now {
        let mut f = line.split(' ');
        let (store, input, output) = (f.next().unwrap_or_default(), f.next(), f.next());
        let was = before.iter().find(|l| l.split(' ').next() == Some(store));
        let Some(was) = was else {
            panic!("a fixture store not recorded yet ({line}): {record_again}");
        };
        let mut w = was.split(' ').skip(1);
        let (was_input, was_output) = (w.next(), w.next());
        // Fixtures that changed make other skeletons, which says nothing about the engine.
        assert_eq!(
            was_input, input,
            "the fixture store {store:?} changed: {record_again}"
        );
        assert_eq!(
            was_output, output,
            "the skeletons of the fixture store {store:?} changed while its files did not, and \
             ENGINE_VERSION ({ENGINE_VERSION}) did not: bump it in crates/store/src/lib.rs, then \
             {record_again}"
        );
    }
}

#[test]
fn the_hashes_depend_on_the_files_and_skeletons_only() {
    // The same stores read twice give the same hashes (no order or time enters them).
    assert_eq!(record_lines(), record_lines());
    let _ = common::FIXTURE_STORES;
}
