//! A damaged embedded index neither crashes the process nor sticks: each damage of issue 36 is
//! met by `index` (which starts the index again, saying why) and by `index --rebuild` (which wipes
//! whatever it finds); a store that lost its segments is caught by the consistency check; and the
//! index is found by any name of its folder, and after the folder is copied.
#![cfg(feature = "edge")]

mod common;

use common::*;
use roo_search::{EmbedderConfig, IndexOptions, Mode, SearchOptions, StoreConfig};
use std::fs;
use std::path::{Path, PathBuf};

const QUERY: &str = "discount codes";

fn edge() -> StoreConfig {
    StoreConfig::Edge { path: None }
}

fn index(
    tasks: &[PathBuf],
    index_dir: &Path,
    rebuild: bool,
) -> roo_search::Result<roo_search::IndexReport> {
    roo_search::index_tasks(&IndexOptions {
        tasks_dirs: tasks.to_vec(),
        index_dir: Some(index_dir.to_path_buf()),
        embedder: EmbedderConfig::None,
        store: edge(),
        rebuild,
        ..Default::default()
    })
}

fn search(index_dir: &Path) -> roo_search::Result<roo_search::SearchResponse> {
    roo_search::search_tasks_semantic(&SearchOptions {
        query: QUERY.to_owned(),
        mode: Some(Mode::Lexical),
        index_dir: Some(index_dir.to_path_buf()),
        store: edge(),
        ..SearchOptions::default()
    })
}

fn find(index_dir: &Path) -> roo_search::Result<Vec<String>> {
    search(index_dir).map(|r| task_ids(&r))
}

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// A freshly indexed copy of the fixtures, closed (as after the process ended), and what the
/// query finds.
fn fresh(work: &Path) -> (Vec<PathBuf>, PathBuf, Vec<String>) {
    let tasks = copy_fixtures(&work.join("tasks"));
    let index_dir = work.join("index");
    index(&tasks, &index_dir, false).expect("index");
    let found = find(&index_dir).expect("search");
    assert!(!found.is_empty());
    roo_search::store::close_dir(&index_dir);
    (tasks, index_dir, found)
}

/// Damage the first file whose path matches `pick`; panics when none does (so a damage that no
/// longer applies is seen).
fn damage(index_dir: &Path, pick: &dyn Fn(&str) -> bool, how: &dyn Fn(&Path)) {
    let all = files(&index_dir.join("edge"));
    let target = all
        .iter()
        .find(|p| pick(&p.to_string_lossy().replace('\\', "/")))
        .unwrap_or_else(|| panic!("no file to damage among {all:#?}"));
    how(target);
}

fn truncate_half(p: &Path) {
    let bytes = fs::read(p).expect("read");
    fs::write(p, &bytes[..bytes.len() / 2]).expect("write");
}

fn zero(p: &Path) {
    let len = fs::metadata(p).expect("md").len() as usize;
    fs::write(p, vec![0u8; len]).expect("write");
}

type Damage = (&'static str, Box<dyn Fn(&str) -> bool>, Box<dyn Fn(&Path)>);

fn d(
    name: &'static str,
    pick: impl Fn(&str) -> bool + 'static,
    how: impl Fn(&Path) + 'static,
) -> Damage {
    (name, Box::new(pick), Box::new(how))
}

fn damages() -> Vec<Damage> {
    let wal = |p: &str| p.contains("/wal/") && !p.ends_with(".lock");
    vec![
        d(
            "status.dat cut",
            |p| p.ends_with("status.dat"),
            truncate_half,
        ),
        d("WAL cut", wal, truncate_half),
        d("WAL zeroed", wal, zero),
        d(
            "segment.json deleted",
            |p| p.ends_with("segment.json"),
            |p| fs::remove_file(p).expect("rm"),
        ),
        d("id tracker zeroed", |p| p.contains("id_tracker"), zero),
        d(
            "edge_config.json garbage",
            |p| p.ends_with("edge_config.json"),
            |p| fs::write(p, b"{garbage").expect("write"),
        ),
        d(
            "gridstore page cut",
            |p| p.contains("page_") && p.ends_with(".dat"),
            truncate_half,
        ),
    ]
}

#[test]
fn every_damage_is_met_by_index_and_by_rebuild() {
    for (what, pick, how) in damages() {
        for rebuild in [false, true] {
            let work = tempfile::tempdir().expect("tmp");
            let (tasks, index_dir, found) = fresh(work.path());
            damage(&index_dir, &*pick, &*how);
            // A search of the damaged index answers (an error or results), it does not end the
            // process.
            let _ = find(&index_dir);
            roo_search::store::close_dir(&index_dir);
            let report = index(&tasks, &index_dir, rebuild)
                .unwrap_or_else(|e| panic!("{what} (rebuild {rebuild}): index failed: {e}"));
            // A rebuild reads everything again; an update may find the damage harmless (a WAL
            // already flushed into its segments), but what it serves must be whole (below).
            if rebuild {
                assert!(
                    report.tasks_indexed > 0,
                    "{what}: the rebuild indexed nothing: {report:?}"
                );
            }
            assert_eq!(
                find(&index_dir).unwrap_or_else(|e| panic!("{what}: search failed: {e}")),
                found,
                "{what} (rebuild {rebuild})"
            );
            roo_search::store::close_dir(&index_dir);
        }
    }
}

/// The score of each task the query finds, sorted.
fn scores(index_dir: &Path) -> Vec<String> {
    let r = search(index_dir).expect("search");
    let mut v: Vec<String> = r
        .results
        .iter()
        .map(|t| format!("{} {:.5}", t.task_id, t.score))
        .collect();
    v.sort();
    v
}

#[test]
fn a_vector_page_damaged_in_place_is_found_by_index_and_repaired() {
    let work = tempfile::tempdir().expect("tmp");
    let (tasks, index_dir, _) = fresh(work.path());
    let want = scores(&index_dir);
    roo_search::store::close_dir(&index_dir);
    // Nothing changed: the next run finds the vectors as it left them.
    let report = index(&tasks, &index_dir, false).expect("index");
    assert_eq!(report.rebuilt, None, "{report:?}");
    roo_search::store::close_dir(&index_dir);
    // A zeroed page loads without an error and changes the scores without a word.
    damage(
        &index_dir,
        &|p| p.contains("/vector_storage") && p.contains("/store/page_") && p.ends_with(".dat"),
        &zero,
    );
    assert_ne!(scores(&index_dir), want);
    roo_search::store::close_dir(&index_dir);
    let report = index(&tasks, &index_dir, false).expect("index");
    assert!(
        report
            .rebuilt
            .as_deref()
            .is_some_and(|r| r.contains("damaged page")),
        "{report:?}"
    );
    assert_eq!(scores(&index_dir), want);
    roo_search::store::close_dir(&index_dir);
}

#[test]
fn a_store_whose_segments_are_gone_is_indexed_again() {
    let work = tempfile::tempdir().expect("tmp");
    let (tasks, index_dir, found) = fresh(work.path());
    let shard = index_dir.join("edge").join(roo_search::store::COLLECTION);
    fs::remove_dir_all(shard.join("segments")).expect("rm segments");
    let report = index(&tasks, &index_dir, false).expect("index");
    assert!(
        report
            .rebuilt
            .as_deref()
            .is_some_and(|r| r.contains("chunks the index state lists")),
        "{report:?}"
    );
    assert!(report.tasks_indexed > 0);
    assert_eq!(find(&index_dir).expect("search"), found);
    roo_search::store::close_dir(&index_dir);
}

#[test]
fn the_index_is_found_by_any_name_and_after_a_copy() {
    let work = tempfile::tempdir().expect("tmp");
    let (tasks, index_dir, found) = fresh(work.path());
    // Through `..`: the same folder.
    let roundabout = index_dir.join("..").join("index");
    assert_eq!(find(&roundabout).expect("search"), found);
    roo_search::store::close_dir(&index_dir);
    // A copy of the folder is an index of its own, found as it is.
    let copy = work.path().join("copy");
    copy_dir(&index_dir, &copy);
    for lock in files(&copy)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "lock"))
    {
        let _ = fs::remove_file(lock);
    }
    assert_eq!(find(&copy).expect("search the copy"), found);
    let again = index(&tasks, &copy, false).expect("index the copy");
    assert_eq!(again.tasks_indexed, 0, "{again:?}");
    roo_search::store::close_dir(&copy);
}
