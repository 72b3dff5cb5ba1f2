//! Output path safety: hostile paths are refused and nothing is written outside the root.

use roo_export::paths::{resolve_output, AtomicFile, OutputPolicy};
use std::io::Write;
use std::path::{Path, PathBuf};

fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d)
            .expect("read_dir")
            .filter_map(|e| e.ok())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let md = std::fs::symlink_metadata(&p).expect("lstat");
            // Directory times change when an entry is created and removed again: not compared.
            let time = if md.is_dir() {
                None
            } else {
                md.modified().ok()
            };
            out.push(format!(
                "{} {} {:?}",
                p.strip_prefix(dir).expect("inside").display(),
                md.len(),
                time
            ));
            if md.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
    store: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(tmp.path()).expect("canonical");
    let root = base.join("root");
    let outside = base.join("outside");
    let store = root.join("store").join("tasks");
    std::fs::create_dir_all(&store).expect("store");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::create_dir(root.join("existing-dir")).expect("dir");
    std::fs::write(root.join("existing.xml"), "keep").expect("file");
    std::fs::write(outside.join("target.xml"), "outside").expect("file");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, root.join("link")).expect("link");
        std::os::unix::fs::symlink(outside.join("target.xml"), root.join("filelink.xml"))
            .expect("link");
        std::os::unix::fs::symlink(root.join("existing-dir"), root.join("inner-link"))
            .expect("link");
        std::os::unix::fs::symlink(base.join("nowhere"), root.join("broken")).expect("link");
    }
    Fixture {
        _tmp: tmp,
        base,
        root,
        outside,
        store,
    }
}

fn policy(f: &Fixture, overwrite: bool) -> OutputPolicy {
    OutputPolicy {
        root: f.root.clone(),
        overwrite,
        forbidden: vec![f.store.clone()],
    }
}

#[test]
fn hostile_paths_are_refused_and_nothing_is_written() {
    let f = fixture();
    let before = listing(&f.base);
    let root = f.root.display().to_string();
    let outside = f.outside.display().to_string();
    let long = format!("{}.xml", "a".repeat(300));
    let hostile: Vec<(String, bool)> = vec![
        ("../escape.xml".into(), false),
        ("../../../../../../../etc/passwd".into(), true),
        ("sub/../../escape.xml".into(), false),
        ("sub/../inside-but-dotdot.xml".into(), false),
        ("..\\escape.xml".into(), false),
        ("sub\\..\\..\\escape.xml".into(), false),
        ("/etc/passwd".into(), true),
        (format!("{outside}/abs.xml"), true),
        (format!("{root}/../outside/dotdot.xml"), true),
        (format!("{root}extra/sibling.xml"), true),
        ("link/through-link.xml".into(), true),
        ("link/deeper/dir/x.xml".into(), true),
        ("filelink.xml".into(), true),
        ("broken/x.xml".into(), true),
        ("a\0b.xml".into(), false),
        ("CON".into(), false),
        ("nul.xml".into(), false),
        ("sub/COM1.txt".into(), false),
        ("LPT9".into(), false),
        ("aux .txt".into(), false),
        ("C:escape.xml".into(), false),
        ("C:\\Windows\\escape.xml".into(), false),
        ("c:/escape.xml".into(), false),
        ("\\\\?\\C:\\escape.xml".into(), false),
        ("\\\\.\\PhysicalDrive0".into(), false),
        ("\\\\server\\share\\escape.xml".into(), false),
        ("file.xml:stream".into(), false),
        ("trailing.xml.".into(), false),
        ("trailing.xml ".into(), false),
        ("".into(), false),
        ("   ".into(), false),
        (".".into(), false),
        ("./".into(), false),
        (root.clone(), true),
        ("existing.xml".into(), false),
        ("existing-dir".into(), true),
        (long, false),
        ("new\nline.xml".into(), false),
        ("tab\there.xml".into(), false),
        ("file:///etc/passwd".into(), false),
        ("wild*.xml".into(), false),
        ("what?.xml".into(), false),
        ("store/tasks/t1/export.xml".into(), true),
        ("store/tasks".into(), true),
        (format!("{root}/store/tasks/x.xml"), true),
    ];
    assert!(hostile.len() >= 20);
    for (path, overwrite) in &hostile {
        let err = match resolve_output(path, &policy(&f, *overwrite)) {
            Ok(r) => panic!("{path:?} was accepted as {}", r.path.display()),
            Err(e) => e,
        };
        assert_eq!(err.code(), "INVALID_PATH", "{path:?}");
        assert!(!err.to_string().is_empty());
    }
    assert_eq!(listing(&f.base), before, "something was written");
}

#[test]
fn harmless_paths_are_written_atomically() {
    let f = fixture();
    let cases = [
        ("plain.xml", f.root.join("plain.xml")),
        ("./sub//deep/./x.xml", f.root.join("sub/deep/x.xml")),
        (
            &*format!("{}/abs.xml", f.root.display()),
            f.root.join("abs.xml"),
        ),
        (
            "inner-link/through-inner.xml",
            f.root.join("existing-dir/through-inner.xml"),
        ),
        ("con-tent.xml", f.root.join("con-tent.xml")),
        (
            "~/tilde-is-a-name.xml",
            f.root.join("~/tilde-is-a-name.xml"),
        ),
    ];
    for (path, expected) in cases {
        let resolved =
            resolve_output(path, &policy(&f, false)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(resolved.path, expected, "{path}");
        let mut file = AtomicFile::create(resolved).expect("create");
        file.write_all(b"<x/>").expect("write");
        // Nothing visible until finished.
        assert!(!expected.exists());
        let (written, bytes) = file.finish().expect("finish");
        assert_eq!(written, expected);
        assert_eq!(bytes, 4);
        assert_eq!(std::fs::read(&expected).expect("read"), b"<x/>");
    }
    // No temporary file is left anywhere.
    assert!(listing(&f.base).iter().all(|l| !l.contains(".roo-export-")));
    // Overwrite only when asked.
    assert!(resolve_output("plain.xml", &policy(&f, false)).is_err());
    let mut again = AtomicFile::create(resolve_output("plain.xml", &policy(&f, true)).expect("ok"))
        .expect("create");
    again.write_all(b"<y/>").expect("write");
    again.finish().expect("finish");
    assert_eq!(
        std::fs::read(f.root.join("plain.xml")).expect("read"),
        b"<y/>"
    );
}

#[test]
fn abandoned_export_leaves_nothing() {
    let f = fixture();
    let before = listing(&f.base);
    let resolved = resolve_output("new/dirs/out.xml", &policy(&f, false)).expect("ok");
    let mut file = AtomicFile::create(resolved).expect("create");
    file.write_all(b"partial").expect("write");
    drop(file);
    assert_eq!(listing(&f.base), before);
}

#[test]
fn missing_root_is_reported() {
    let f = fixture();
    let p = OutputPolicy {
        root: f.base.join("no-such-root"),
        overwrite: false,
        forbidden: vec![],
    };
    let err = resolve_output("x.xml", &p).expect_err("missing root");
    assert_eq!(err.code(), "INVALID_PATH");
    assert!(err.to_string().contains("not an existing directory"));
}
