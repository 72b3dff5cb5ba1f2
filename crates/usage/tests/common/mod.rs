//! What the integration tests share: the bundled fixture stores and a handle over one of them.

use roo_store::task_store::{OpenOptions, TaskStore};
use roo_store::HostEnv;
use std::path::{Path, PathBuf};

pub fn stores_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/stores")
}

/// A handle over one tasks folder, read without a cache.
pub fn open(tasks: &Path) -> TaskStore {
    TaskStore::open(
        &HostEnv::current(),
        &OpenOptions {
            tasks_dirs: vec![tasks.to_path_buf()],
            cache_root: None,
            ignore_stored_links: false,
            every_file: false,
        },
    )
    .expect("open the store")
}

/// Equal up to the rounding of a different order of additions.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}
