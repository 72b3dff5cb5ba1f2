//! The text store against the task folders: the same matches whether a task's texts come from the
//! store or its folder, through changes, removals and a damaged or cut store file.

use super::texts::{self, TextStore};
use super::*;
use std::path::{Path, PathBuf};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy");
        }
    }
}

/// The tasks of several bundled stores, every era, in one tasks folder.
fn tasks(root: &Path) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/stores");
    let tasks = root.join("tasks");
    for s in [
        "history-item-v3.50",
        "native-tools-v3.45",
        "cline-v3.4x",
        "v2-wrapper",
        "claude-dev-2024",
        "stack-era-v3.20",
        "zoo-code-2026",
    ] {
        copy_dir(&fixtures.join(s).join("tasks"), &tasks);
    }
    tasks
}

fn open(tasks: &Path) -> TaskStore {
    TaskStore::open(
        &roo_store::HostEnv::current(),
        &roo_store::task_store::OpenOptions {
            tasks_dirs: vec![tasks.to_path_buf()],
            ..Default::default()
        },
    )
    .expect("store")
}

type Seen = Vec<(String, u32, u32, String, Kind)>;

fn seen(r: &GrepReport) -> Seen {
    let mut v: Seen = r
        .matches
        .iter()
        .map(|m| {
            (
                m.task_id.clone(),
                m.message_index,
                m.line_number,
                m.line.clone(),
                m.kind,
            )
        })
        .collect();
    v.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));
    v
}

/// The grep through the text store under `cache`, and the same grep over the folders.
fn both(store: &TaskStore, cache: &Path, o: &GrepOptions) -> (GrepReport, GrepReport) {
    let m = Matcher::new(&o.pattern, o.regex, o.ignore_case).expect("pattern");
    let sel = select_tasks(store, o, None, None).expect("select");
    let files = grep_selected(&sel, &m, o, (None, None), None).expect("files");
    let through = grep_through_texts(store, sel, cache, &m, o, (None, None), None).expect("texts");
    (through, files)
}

fn opts(pattern: &str, regex: bool, ignore_case: bool) -> GrepOptions {
    GrepOptions {
        pattern: pattern.to_owned(),
        regex,
        ignore_case,
        context: 1,
        max_matches: Some(100_000),
        ..Default::default()
    }
}

#[test]
fn bodies_round_trip() {
    let mut body = Vec::new();
    texts::push_text(&mut body, Kind::User, Some(-5), 0, "héllo\nworld");
    texts::push_skipped(&mut body, "/t/ui_messages.json", "it is not JSON");
    texts::push_text(&mut body, Kind::ToolResult, None, 7, "");
    let (got, skipped) = texts::texts(&body).expect("reads");
    assert_eq!(
        got,
        vec![
            (Kind::User, Some(-5), 0, "héllo\nworld".as_bytes()),
            (Kind::ToolResult, None, 7, b"".as_slice())
        ]
    );
    assert_eq!(
        skipped,
        vec![(
            "/t/ui_messages.json".to_owned(),
            "it is not JSON".to_owned()
        )]
    );
    assert!(texts::texts(&body[..body.len() - 1]).is_none());
    assert_eq!(texts::text_str(got[0].3), Some("héllo\nworld"));
    assert_eq!(texts::text_str(b"\xff\xfe"), None);
}

#[test]
fn the_text_store_gives_what_the_folders_give() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tasks(tmp.path());
    let cache = tmp.path().join("cache");
    let mut store = open(&tasks);
    let n = store.skeletons().len();
    assert!(n >= 15, "{n} tasks");
    let file = texts::store_file(&cache, &tasks);

    // The first grep builds the store from the folders; the next ones read it.
    let (first, files) = both(&store, &cache, &opts("the", false, false));
    assert_eq!(seen(&first), seen(&files));
    assert!(first.matches.len() > 50, "{} matches", first.matches.len());
    assert_eq!(first.tasks_from_text_store, 0);
    assert!(file.is_file());
    for (p, regex, ci) in [
        ("Get-ChildItem", false, false),
        ("ERROR", false, true),
        (r"\b[a-z]+\.(ts|rs|md)\b", true, false),
        ("é", false, false),
        ("\"", false, false),
    ] {
        let (through, files) = both(&store, &cache, &opts(p, regex, ci));
        assert_eq!(seen(&through), seen(&files), "{p}");
        assert_eq!(
            (through.files_parsed, through.tasks_from_text_store),
            (0, n),
            "{p}"
        );
    }
    let mut only_users = opts("the", false, false);
    only_users.kinds = Kinds::none().with(Kind::User);
    let (through, files) = both(&store, &cache, &only_users);
    assert_eq!(seen(&through), seen(&files));

    // A task changes: it alone is read from its folder, and the store is renewed.
    let id = store
        .skeletons()
        .iter()
        .map(|s| s.task_id.clone())
        .find(|id| {
            store
                .task_dir(id)
                .is_some_and(|d| d.join("ui_messages.json").is_file())
        })
        .expect("a task with a UI record");
    let dir = store.task_dir(&id).expect("dir");
    let ui = dir.join("ui_messages.json");
    {
        let text = std::fs::read_to_string(&ui).expect("read");
        let msg = r#"{"ts":1767225600000,"type":"say","say":"text","text":"zebra-unmistakable"}"#;
        let grown = match text.trim_end().strip_suffix(']') {
            Some(head) => format!("{head},{msg}]"),
            None => text,
        };
        std::fs::write(&ui, grown).expect("write");
        store.refresh().expect("refresh");
        let (through, files) = both(&store, &cache, &opts("zebra-unmistakable", false, false));
        assert_eq!(seen(&through), seen(&files));
        assert_eq!(through.matches.len(), 1);
        assert_eq!(
            (through.files_parsed, through.tasks_from_text_store),
            (1, n - 1)
        );
        let (again, _) = both(&store, &cache, &opts("zebra", false, false));
        assert_eq!(again.files_parsed, 0);
    }

    // A body damaged on disk: that task is read from its folder, said, and the store repaired.
    let mut bytes = std::fs::read(&file).expect("read store");
    let mid = bytes.len() / 3;
    bytes[mid] ^= 0x55;
    std::fs::write(&file, &bytes).expect("damage");
    let (through, files) = both(&store, &cache, &opts("the", false, false));
    assert_eq!(seen(&through), seen(&files));
    assert!(through.files_parsed >= 1);
    assert!(
        through.notes.iter().any(|n| n.contains("damaged")),
        "{:?}",
        through.notes
    );
    let (again, _) = both(&store, &cache, &opts("the", false, false));
    assert_eq!((again.files_parsed, again.tasks_from_text_store), (0, n));

    // A store file cut short is not used, said, and written again.
    let bytes = std::fs::read(&file).expect("read store");
    std::fs::write(&file, &bytes[..bytes.len() - 10]).expect("cut");
    let (through, files) = both(&store, &cache, &opts("the", false, false));
    assert_eq!(seen(&through), seen(&files));
    assert_eq!(
        through.files_parsed,
        files.files_parsed.max(through.files_parsed)
    );
    assert!(
        through
            .notes
            .iter()
            .any(|n| n.contains("could not be used")),
        "{:?}",
        through.notes
    );
    assert!(TextStore::open(&file).problem.is_none());

    removed_task_leaves_the_store(&mut store, &cache, &file, &id, &dir);
}

/// A task removed leaves the store file.
fn removed_task_leaves_the_store(
    store: &mut TaskStore,
    cache: &Path,
    file: &Path,
    id: &str,
    dir: &Path,
) {
    let position = store
        .skeletons()
        .iter()
        .position(|s| s.task_id == id)
        .expect("position");
    let sig = texts::sig_hash(&store.signature(position).expect("sig"));
    assert!(TextStore::open(file).holds(id, sig));
    std::fs::remove_dir_all(dir).expect("rm");
    store.refresh().expect("refresh");
    let (through, files) = both(store, cache, &opts("the", false, false));
    assert_eq!(seen(&through), seen(&files));
    let kept = TextStore::open(file);
    assert!(kept.problem.is_none());
    assert!(!kept.holds(id, sig));
    let sigs: std::collections::HashMap<String, u64> = store
        .skeletons()
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((s.task_id.clone(), texts::sig_hash(&store.signature(i)?))))
        .collect();
    assert_eq!(kept.outdated(&sigs), 0);
}

#[test]
fn a_few_changed_tasks_are_read_from_their_folders_until_one_in_fifty() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tmp.path().join("tasks");
    let write = |n: usize, word: &str| {
        let dir = tasks.join(format!("019b0000-0000-7000-8000-{n:012}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let ui = serde_json::json!([
            {"ts": 1_767_225_600_000i64 + n as i64, "type": "say", "say": "text", "text": format!("task {n} says {word}")},
        ]);
        std::fs::write(dir.join("ui_messages.json"), ui.to_string()).expect("write");
    };
    for n in 0..120 {
        write(n, "alpha");
    }
    let cache = tmp.path().join("cache");
    let mut store = open(&tasks);
    let file = texts::store_file(&cache, &tasks);
    let (first, _) = both(&store, &cache, &opts("says", false, false));
    assert_eq!((first.matches.len(), first.files_parsed), (120, 120));
    let written = std::fs::read(&file).expect("store");

    // One task changes: read from its folder, the file left as it is.
    write(7, "beta-gamma");
    store.refresh().expect("refresh");
    let (through, files) = both(&store, &cache, &opts("beta-gamma", false, false));
    assert_eq!(seen(&through), seen(&files));
    assert_eq!(
        (through.files_parsed, through.tasks_from_text_store),
        (1, 119)
    );
    assert_eq!(std::fs::read(&file).expect("store"), written);

    // Three changed: more than one in fifty, the file is written again.
    write(8, "beta-gamma");
    write(9, "beta-gamma");
    store.refresh().expect("refresh");
    let (through, files) = both(&store, &cache, &opts("beta-gamma", false, false));
    assert_eq!(seen(&through), seen(&files));
    assert_eq!(through.matches.len(), 3);
    assert_ne!(std::fs::read(&file).expect("store"), written);
    let (again, _) = both(&store, &cache, &opts("beta-gamma", false, false));
    assert_eq!((again.files_parsed, again.tasks_from_text_store), (0, 120));
}
