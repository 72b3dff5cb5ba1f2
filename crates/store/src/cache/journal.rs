//! The journal of small changes beside a cache file, and the hierarchy note that goes with it.

use super::*;

/// The journal beside a cache file: entries changed since the file was written, one JSON line
/// each, whose skeleton lines were appended to the cache file's data section. A small change
/// (one task edited, a task added) appends to both files instead of rewriting the cache.
pub const JOURNAL_FILE: &str = "journal.jsonl";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct JournalLine {
    /// The generation of the cache file the line applies to.
    #[serde(rename = "gen")]
    generation: u64,
    /// The task's folder is gone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    removed: bool,
    #[serde(flatten)]
    entry: Entry,
}

pub(super) fn journal_path(cache_file: &Path) -> PathBuf {
    cache_file.with_file_name(JOURNAL_FILE)
}

/// Apply the journal's lines of `generation` to `entries`, in order. A line cut short by a crash
/// (no newline) ends the journal; so does a complete line whose checksum fails, which is damage
/// and is returned as a sentence (the entries it and the lines after it would have changed keep
/// their old signatures, so their tasks are read again).
pub(super) fn apply_journal(
    cache_file: &Path,
    generation: u64,
    entries: &mut Vec<Entry>,
) -> Option<String> {
    let Ok(bytes) = fs::read(journal_path(cache_file)) else {
        return None;
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut damage = None;
    let mut at = Positions::of(entries);
    let mut removed: HashSet<String> = HashSet::new();
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if !line.ends_with('\n') {
            break;
        }
        let Some(j) =
            unsealed(line).and_then(|json| serde_json::from_str::<JournalLine>(json).ok())
        else {
            damage = Some(format!(
                "line {} of its journal failed its checksum and was dropped with the lines after it",
                n + 1
            ));
            break;
        };
        if j.generation != generation {
            continue;
        }
        if j.removed {
            removed.insert(j.entry.id);
            continue;
        }
        removed.remove(&j.entry.id);
        match at.get(entries, &j.entry.id) {
            Some(i) => entries[i] = j.entry,
            None => {
                at.added.insert(j.entry.id.clone(), entries.len());
                entries.push(j.entry);
            }
        }
    }
    if !removed.is_empty() {
        entries.retain(|e| !removed.contains(&e.id));
    }
    damage
}

/// Where each entry's id is, for [`apply_journal`]: the entries as the file holds them are
/// searched (a build writes them in id order; otherwise they are mapped), those the journal adds
/// are mapped. A journal of a few lines then costs no map of all 50 000 ids.
struct Positions {
    /// The entries are in strict id order up to here.
    sorted: usize,
    /// Beyond it: every entry of the file (out of order), then those the journal added.
    added: HashMap<String, usize>,
}

impl Positions {
    fn of(entries: &[Entry]) -> Positions {
        let in_order = entries.windows(2).all(|w| w[0].id < w[1].id);
        let (sorted, added) = match in_order {
            true => (entries.len(), HashMap::new()),
            false => (
                0,
                (entries.iter().enumerate())
                    .map(|(i, e)| (e.id.clone(), i))
                    .collect(),
            ),
        };
        Positions { sorted, added }
    }

    fn get(&self, entries: &[Entry], id: &str) -> Option<usize> {
        let sorted = entries.get(..self.sorted)?;
        match sorted.binary_search_by(|e| e.id.as_str().cmp(id)) {
            Ok(i) => Some(i),
            Err(_) => self.added.get(id).copied(),
        }
    }
}

/// A fresh generation number (time and process, never 0).
pub(super) fn new_generation() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (nanos ^ (u64::from(std::process::id()) << 48)) | 1
}

/// A journal line as written: the JSON, a tab and the JSON's checksum in hex (serde_json never
/// writes a raw tab, so the last one ends the JSON).
fn sealed_line(out: &mut Vec<u8>, line: &JournalLine) -> Result<()> {
    let start = out.len();
    serde_json::to_writer(&mut *out, line)
        .map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
    let sum = line_hash(&out[start..]);
    out.extend_from_slice(format!("\t{sum:016x}\n").as_bytes());
    Ok(())
}

/// The JSON of a complete journal line whose checksum matches.
fn unsealed(line: &str) -> Option<&str> {
    let (json, sum) = line.strip_suffix('\n')?.rsplit_once('\t')?;
    let sum = u64::from_str_radix(sum, 16).ok()?;
    (line_hash(json.as_bytes()) == sum).then_some(json)
}

/// A change to record in a store's cache without rewriting it.
pub enum TaskUpdate<'a> {
    /// A task parsed again (or new): its signature, its header before the hierarchy (`None`: no
    /// skeleton, with `diagnostics`) and its links.
    Parsed {
        id: &'a str,
        sig: TaskSig,
        skeleton: Option<&'a ConversationSkeleton>,
        diagnostics: &'a [Diagnostic],
        link: Link,
        /// The folder's mark from the pass that took `sig`.
        folder: Option<FolderMark>,
    },
    /// An unchanged task whose links the hierarchy changed.
    Relinked { id: &'a str, link: Link },
    /// A task folder that is gone.
    Removed { id: &'a str },
}

/// Record `updates` in the cache of generation `generation`: new skeleton lines are appended to
/// the data section and the changed entries to the journal. Returns the journal's new length, or
/// `None`, writing nothing, when the cache on disk is another generation (another process rebuilt
/// it): the caller then rebuilds.
pub fn append_updates(
    cache_root: &Path,
    tasks_dir: &Path,
    generation: u64,
    updates: &[TaskUpdate<'_>],
) -> Result<Option<u64>> {
    use std::io::{Seek, Write};
    let tasks_dir = fsutil::canonical(tasks_dir);
    let store_dir = store_cache_dir(cache_root, &tasks_dir);
    let file = store_dir.join(CACHE_FILE);
    let _lock = DirLock::acquire(&store_dir, crate::lock::DEFAULT_WAIT, None)?;
    let index = match read_index(&file) {
        ReadOutcome::Ok(i) if i.header.generation == generation && generation != 0 => i,
        _ => return Ok(None),
    };
    let mut cache = fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(&file)
        .map_err(|e| StoreError::io("opening", &file, e))?;
    let current: HashMap<&str, &Entry> = index.entries.iter().map(|e| (e.id.as_str(), e)).collect();
    let end = cache
        .seek(std::io::SeekFrom::End(0))
        .map_err(|e| StoreError::io("reading", &file, e))?;
    let mut data: Vec<u8> = Vec::new();
    let mut journal: Vec<u8> = Vec::new();
    for u in updates {
        // New skeleton lines go after the current end of the data section.
        let base = end - index.data_start;
        let Some((entry, removed)) = journal_entry(u, &current, base, &mut data)? else {
            continue;
        };
        sealed_line(
            &mut journal,
            &JournalLine {
                generation,
                removed,
                entry,
            },
        )?;
    }
    // The skeleton lines first: a crash before the journal is written leaves bytes nothing points to.
    cache
        .write_all(&data)
        .and_then(|()| cache.flush())
        .map_err(|e| StoreError::io("appending to", &file, e))?;
    let jpath = journal_path(&file);
    let mut j = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&jpath)
        .map_err(|e| StoreError::io("opening", &jpath, e))?;
    j.write_all(&journal)
        .map_err(|e| StoreError::io("appending to", &jpath, e))?;
    let len = j
        .metadata()
        .map_err(|e| StoreError::io("reading", &jpath, e))?
        .len();
    Ok(Some(len))
}

/// The journal entry of one update (`true`: a removal), its skeleton line appended to `data`
/// (which starts `base` bytes into the data section); `None` for a relink of a task the cache
/// does not hold.
fn journal_entry(
    update: &TaskUpdate<'_>,
    current: &HashMap<&str, &Entry>,
    base: u64,
    data: &mut Vec<u8>,
) -> Result<Option<(Entry, bool)>> {
    let entry = match update {
        TaskUpdate::Parsed {
            id,
            sig,
            skeleton,
            diagnostics,
            link,
            folder,
        } => {
            let (off, len, h, ws) = match skeleton {
                Some(s) => {
                    let mut line = serde_json::to_vec(s)
                        .map_err(|e| StoreError::InvalidArgument(e.to_string()))?;
                    line.push(b'\n');
                    let off = base + data.len() as u64;
                    data.extend_from_slice(&line);
                    let ws = s.metadata.workspace.as_deref().map(normalize_workspace);
                    (off, line.len() as u64, Some(line_hash(&line)), ws)
                }
                None => (0, 0, None, None),
            };
            Entry {
                id: (*id).to_owned(),
                sig: *sig,
                off,
                len,
                h,
                ws,
                parent: link.0.clone(),
                root: link.1.clone(),
                evidence: link.2.clone(),
                diagnostics: diagnostics.to_vec(),
                folder: *folder,
            }
        }
        TaskUpdate::Relinked { id, link } => match current.get(id) {
            Some(e) => Entry {
                parent: link.0.clone(),
                root: link.1.clone(),
                evidence: link.2.clone(),
                ..(*e).clone()
            },
            // Not in the cache: nothing to relink.
            None => return Ok(None),
        },
        TaskUpdate::Removed { id } => {
            let entry = Entry {
                id: (*id).to_owned(),
                sig: [None; 5],
                off: 0,
                len: 0,
                h: None,
                ws: None,
                parent: None,
                root: None,
                evidence: None,
                diagnostics: Vec::new(),
                folder: None,
            };
            return Ok(Some((entry, true)));
        }
    };
    Ok(Some((entry, false)))
}

/// The hierarchy metrics of a cache whose journal has lines: written beside the journal after each
/// append, valid while the cache is the same generation and the journal the same length.
pub const HIERARCHY_NOTE_FILE: &str = "hierarchy.json";

#[derive(Serialize, Deserialize)]
struct HierarchyNote {
    #[serde(rename = "gen")]
    generation: u64,
    journal_bytes: u64,
    hierarchy: HierarchyMetrics,
}

/// Keep what the hierarchy pass found after an append (temp file and rename), so that the next
/// open of the store needs no hierarchy pass of its own. A note that cannot be written only costs
/// that pass.
pub fn write_hierarchy_note(
    cache_root: &Path,
    tasks_dir: &Path,
    generation: u64,
    journal_bytes: u64,
    hierarchy: &HierarchyMetrics,
) {
    let store_dir = store_cache_dir(cache_root, &fsutil::canonical(tasks_dir));
    let Ok(text) = serde_json::to_vec(&HierarchyNote {
        generation,
        journal_bytes,
        hierarchy: hierarchy.clone(),
    }) else {
        return;
    };
    let tmp = store_dir.join(format!("{HIERARCHY_NOTE_FILE}.{}.tmp", std::process::id()));
    if fs::write(&tmp, text).is_ok()
        && fs::rename(&tmp, store_dir.join(HIERARCHY_NOTE_FILE)).is_err()
    {
        let _ = fs::remove_file(&tmp);
    }
}

pub(super) fn read_hierarchy_note(
    cache_file: &Path,
    generation: u64,
    journal_bytes: u64,
) -> Option<HierarchyMetrics> {
    let text = fs::read(cache_file.with_file_name(HIERARCHY_NOTE_FILE)).ok()?;
    let note: HierarchyNote = serde_json::from_slice(&text).ok()?;
    (note.generation == generation && note.journal_bytes == journal_bytes).then_some(note.hierarchy)
}

#[cfg(test)]
mod positions_tests {
    use super::*;

    fn entries(ids: &[&str]) -> Vec<Entry> {
        let entry = |id: &&str| Entry {
            id: (*id).to_owned(),
            ..Entry::default()
        };
        ids.iter().map(entry).collect()
    }

    #[test]
    fn ids_are_found_in_order_or_mapped() {
        // In id order: searched; an id the journal adds is mapped once added.
        let mut list = entries(&["a", "c", "e"]);
        let mut at = Positions::of(&list);
        assert_eq!((at.get(&list, "c"), at.get(&list, "b")), (Some(1), None));
        at.added.insert("b".into(), list.len());
        list.extend(entries(&["b"]));
        assert_eq!((at.get(&list, "b"), at.get(&list, "e")), (Some(3), Some(2)));
        // Out of order: every id mapped.
        let list = entries(&["c", "a", "e"]);
        let at = Positions::of(&list);
        assert_eq!((at.get(&list, "a"), at.get(&list, "c")), (Some(1), Some(0)));
        assert_eq!(at.get(&list, "b"), None);
    }
}
