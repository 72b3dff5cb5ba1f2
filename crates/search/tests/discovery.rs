//! With no tasks folder given, indexing works on the stores that storage discovery finds, as the
//! skeleton cache and the CLI do: here the one named by `ROO_STATE_STORAGE`.

use roo_search::{index_tasks, EmbedderConfig, IndexOptions, StoreConfig};
use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

#[test]
fn indexing_without_a_folder_uses_storage_discovery() {
    let work = tempfile::tempdir().expect("tmp");
    let storage = work.path().join("custom-storage");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/stores/history-item-v3.50/tasks");
    copy_dir(&fixtures, &storage.join("tasks"));
    // The only test of this binary: the process environment is its own.
    std::env::set_var("HOME", work.path().join("home"));
    std::env::set_var("ROO_STATE_STORAGE", &storage);

    let report = index_tasks(&IndexOptions {
        index_dir: Some(work.path().join("index")),
        embedder: EmbedderConfig::None,
        store: StoreConfig::Memory { path: None },
        ..IndexOptions::default()
    })
    .expect("index the discovered store");
    let tasks_dir = storage.join("tasks");
    let tasks_dir = std::fs::canonicalize(&tasks_dir).unwrap_or(tasks_dir);
    let seen: Vec<String> = report.tasks_dirs.clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(
        std::fs::canonicalize(&seen[0]).expect("indexed folder exists"),
        tasks_dir
    );
    assert_eq!(report.tasks_seen, 4);
    assert!(report.chunks_embedded > 0);
}
