//! A damaged skeleton cache never drops or alters a task: every kind of damage of issue 36 (a
//! file cut short, a zeroed block, a flipped byte, swapped offsets, a re-pointed journal line) is
//! caught by the checksums, the damaged tasks are read again from their folders, the build and the
//! handle say so, `cache_status` (and so `diagnose`) counts it, and the next build finds nothing
//! more to repair.

mod common;

use roo_store::cache::{build_skeleton_cache, cache_file_for, cache_status, BuildOptions};
use roo_store::diagnose::{diagnose, DiagnoseOptions, Target};
use roo_store::task_store::{OpenOptions, TaskStore};
use roo_store::HostEnv;
use std::fs;
use std::path::{Path, PathBuf};

fn build(tasks: &Path, cache: &Path) -> roo_store::cache::BuildReport {
    build_skeleton_cache(&[tasks.to_path_buf()], &BuildOptions::new(cache)).expect("build")
}

fn setup(n: usize) -> (tempfile::TempDir, PathBuf, PathBuf, Vec<String>) {
    common::temp_store(n)
}

fn open(tasks: &Path, cache: &Path) -> TaskStore {
    TaskStore::open(
        &HostEnv::current(),
        &OpenOptions {
            tasks_dirs: vec![tasks.to_path_buf()],
            cache_root: Some(cache.to_path_buf()),
            ignore_stored_links: false,
            every_file: false,
        },
    )
    .expect("open")
}

/// Where the data section starts (after the header and entry lines).
fn data_start(bytes: &[u8]) -> usize {
    let first = bytes.iter().position(|&b| b == b'\n').expect("header line");
    let second = bytes[first + 1..]
        .iter()
        .position(|&b| b == b'\n')
        .expect("entry line");
    first + 1 + second + 1
}

/// The ids and titles of the handle's tasks, from the cache or from the folders alone.
fn served(tasks: &Path, cache: Option<&Path>) -> Vec<(String, String)> {
    let store = match cache {
        Some(c) => open(tasks, c),
        None => TaskStore::open(
            &HostEnv::current(),
            &OpenOptions {
                tasks_dirs: vec![tasks.to_path_buf()],
                cache_root: None,
                ignore_stored_links: false,
                every_file: false,
            },
        )
        .expect("open"),
    };
    store
        .skeletons()
        .iter()
        .map(|s| {
            (
                s.task_id.clone(),
                s.metadata.title.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Damage the cache with `damage`, then check: the handle serves every task as the folders say,
/// names the damage, and a later build has nothing left to repair.
fn check_repaired(n: usize, damage: impl Fn(&Path)) {
    let (_tmp, tasks, cache, _ids) = setup(n);
    build(&tasks, &cache);
    let truth = served(&tasks, None);
    assert_eq!(truth.len(), n);
    let file = cache_file_for(&cache, &tasks);
    damage(&file);
    let status = cache_status(&cache, &tasks);
    assert!(
        status.damaged > 0 || status.unusable.is_some() || status.journal_damage.is_some(),
        "cache_status sees no damage: {status:?}"
    );
    // diagnose reports the damage of a cache not yet repaired.
    if status.damaged > 0 {
        let report = diagnose(
            &[Target::from_tasks_dir(&tasks)],
            &DiagnoseOptions::new(&cache),
        );
        let said = report.locations[0]
            .reasons
            .iter()
            .any(|r| r.message.contains("skeleton cache is damaged"));
        assert!(said, "{:?}", report.locations[0].reasons);
    }
    let handle = open(&tasks, &cache);
    let got: Vec<(String, String)> = handle
        .skeletons()
        .iter()
        .map(|s| {
            (
                s.task_id.clone(),
                s.metadata.title.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        got, truth,
        "the handle does not serve what the folders hold"
    );
    // Damage of single lines is named by the handle; a whole file that does not check out is
    // rebuilt (and the build says why).
    if status.damaged > 0 {
        let named = handle
            .diagnostics()
            .iter()
            .any(|d| d.message.contains("skeleton cache was damaged"));
        assert!(named, "no diagnostic: {:?}", handle.diagnostics());
    }
    let again = build(&tasks, &cache);
    assert_eq!(again.stores[0].repaired, 0);
    assert!(!again.stores[0].written, "{again:?}");
    assert_eq!(cache_status(&cache, &tasks).damaged, 0);
    assert_eq!(served(&tasks, Some(&cache)), truth);
}

#[test]
fn a_cache_cut_to_sixty_percent_is_repaired() {
    check_repaired(40, |file| {
        let bytes = fs::read(file).expect("read");
        fs::write(file, &bytes[..bytes.len() * 6 / 10]).expect("write");
    });
}

#[test]
fn a_zeroed_block_inside_the_data_is_repaired() {
    check_repaired(40, |file| {
        let mut bytes = fs::read(file).expect("read");
        let start = data_start(&bytes) + 2048;
        let end = (start + 4096).min(bytes.len() - 1);
        bytes[start..end].fill(0);
        fs::write(file, &bytes).expect("write");
    });
}

#[test]
fn one_flipped_byte_in_a_skeleton_is_repaired() {
    let (_tmp, tasks, cache, _ids) = setup(6);
    build(&tasks, &cache);
    let file = cache_file_for(&cache, &tasks);
    let mut bytes = fs::read(&file).expect("read");
    // A digit of a count inside the first skeleton line: still valid JSON, a different value.
    let start = data_start(&bytes);
    let at = bytes[start..]
        .windows(b"\"messageCount\":".len())
        .position(|w| w == b"\"messageCount\":")
        .map(|p| start + p + b"\"messageCount\":".len())
        .expect("a message count");
    bytes[at] = if bytes[at] == b'7' { b'8' } else { b'7' };
    fs::write(&file, &bytes).expect("write");
    assert_eq!(cache_status(&cache, &tasks).damaged, 1);
    let r = build(&tasks, &cache);
    assert_eq!(r.stores[0].repaired, 1);
    assert_eq!(r.stores[0].built, 1);
    assert!(r
        .diagnostics
        .iter()
        .any(|d| d.message.contains("failed their checksum")));
    assert_eq!(cache_status(&cache, &tasks).damaged, 0);
}

#[test]
fn swapped_offsets_are_repaired_and_a_flipped_entry_list_rebuilds() {
    // Offsets swapped with the entry list's checksum made to match: the lines' own checksums
    // catch it.
    check_repaired(8, |file| {
        let text = fs::read_to_string(file).expect("read");
        let mut parts = text.splitn(3, '\n');
        let (header, entries, data) = (
            parts.next().expect("h"),
            parts.next().expect("e"),
            parts.next().expect("d"),
        );
        let mut e: serde_json::Value = serde_json::from_str(entries).expect("entries");
        let (o2, o5) = (e[2]["off"].clone(), e[5]["off"].clone());
        e[2]["off"] = o5;
        e[5]["off"] = o2;
        let entries = e.to_string();
        let mut h: serde_json::Value = serde_json::from_str(header).expect("header");
        h["entriesHash"] = serde_json::json!(xxhash_rust::xxh3::xxh3_64(entries.as_bytes()));
        fs::write(file, format!("{h}\n{entries}\n{data}")).expect("write");
    });
    // The same swap without the checksum: the entry list does not check out, all is rebuilt.
    let (_tmp, tasks, cache, _ids) = setup(8);
    build(&tasks, &cache);
    let file = cache_file_for(&cache, &tasks);
    let text = fs::read_to_string(&file).expect("read");
    fs::write(&file, text.replacen("\"off\":0,", "\"off\":1,", 1)).expect("write");
    assert!(cache_status(&cache, &tasks).unusable.is_some());
    let r = build(&tasks, &cache);
    assert_eq!(r.stores[0].built, 8);
    assert!(r.diagnostics.iter().any(|d| d.message.contains("checksum")));
}

#[test]
fn a_re_pointed_journal_line_is_caught() {
    let (_tmp, tasks, cache, ids) = setup(10);
    let mut handle = open(&tasks, &cache);
    common::touch(
        &tasks.join(&ids[3]).join("api_conversation_history.json"),
        5,
    );
    let r = handle.refresh().expect("refresh");
    assert_eq!(r.cache, "appended");
    drop(handle);
    let journal = cache_file_for(&cache, &tasks).with_file_name("journal.jsonl");
    let text = fs::read_to_string(&journal).expect("journal");
    assert!(text.contains("\"off\":"), "{text}");
    // The task's line pointed at the first skeleton of the data section instead.
    let off_at = text.find("\"off\":").expect("off") + "\"off\":".len();
    let end = off_at + text[off_at..].find(',').expect("comma");
    let re_pointed = format!("{}0{}", &text[..off_at], &text[end..]);
    fs::write(&journal, re_pointed).expect("write");
    let status = cache_status(&cache, &tasks);
    assert!(status.journal_damage.is_some(), "{status:?}");
    let truth = served(&tasks, None);
    assert_eq!(served(&tasks, Some(&cache)), truth);
    let again = build(&tasks, &cache);
    assert!(!again.stores[0].written);
}
