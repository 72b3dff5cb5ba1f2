//! The limits every reader of a task file keeps: regular files only (a FIFO is never opened
//! blocking, a device never read), at most `max_file_bytes`, and a diagnostic for every file
//! left unread.
#![cfg(unix)]

use roo_formats::read::{max_file_bytes, read_task_file, read_ui_messages};
use std::path::Path;
use std::time::Duration;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"))
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(status.success(), "mkfifo failed");
}

/// Run `f` on another thread and give its result, or `None` if it has not returned after a
/// generous grace period (a reader blocked on a FIFO never returns).
fn within_grace<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(30)).ok()
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = tmp();
    let fifo = dir.path().join("ui_messages.json");
    mkfifo(&fifo);
    let got = within_grace(move || read_task_file(&fifo)).expect("the read blocked on a FIFO");
    let err = got.expect_err("a FIFO is not read");
    assert!(
        err.message.contains("not a regular file"),
        "{}",
        err.message
    );
}

#[test]
fn a_device_is_refused_and_a_link_to_one_is_a_link_out_of_the_store() {
    // The device itself: not a regular file.
    let err = read_task_file(std::path::Path::new("/dev/zero")).expect_err("not read");
    assert!(
        err.message.contains("not a regular file"),
        "{}",
        err.message
    );
    // A task file linked to it leads out of its store: refused before it is opened.
    let dir = tmp();
    let task = dir.path().join("tasks").join("t1");
    std::fs::create_dir_all(&task).unwrap_or_else(|e| panic!("{e}"));
    let link = task.join("ui_messages.json");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap_or_else(|e| panic!("{e}"));
    let err = read_task_file(&link).expect_err("/dev/zero is not read");
    assert!(err.message.contains("outside its store"), "{}", err.message);
    // The typed reader reports it too, and reads nothing.
    let r = read_ui_messages(&link);
    assert!(r.value.is_empty());
    assert!(r
        .diagnostics
        .iter()
        .any(|d| d.message.contains("outside its store")));
}

#[test]
fn a_file_over_the_cap_is_refused_unread() {
    let dir = tmp();
    let big = dir.path().join("api_conversation_history.json");
    let f = std::fs::File::create(&big).unwrap_or_else(|e| panic!("{e}"));
    // Sparse: no block is written.
    f.set_len(max_file_bytes() + 1)
        .unwrap_or_else(|e| panic!("{e}"));
    let err = read_task_file(&big).expect_err("too big");
    assert!(err.message.contains("more than the"), "{}", err.message);
    assert!(
        err.message.contains("ROO_STATE_MAX_FILE_BYTES"),
        "{}",
        err.message
    );
}

#[test]
fn a_link_loop_and_a_dangling_link_are_reported() {
    let dir = tmp();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::os::unix::fs::symlink(&b, &a).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&a, &b).unwrap_or_else(|e| panic!("{e}"));
    assert!(read_task_file(&a).is_err());
    let dangling = dir.path().join("c.json");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(read_task_file(&dangling).is_err());
    // A file that is simply absent is not a problem.
    assert_eq!(
        read_task_file(&dir.path().join("absent.json")).ok(),
        Some(None)
    );
    // A regular file is read whole.
    let ok = dir.path().join("ok.json");
    std::fs::write(&ok, b"[]").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read_task_file(&ok).ok(), Some(Some(b"[]".to_vec())));
}
