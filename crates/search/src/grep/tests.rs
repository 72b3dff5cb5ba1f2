//! Lines, ranges and context of matches, and a grep over a small store written here: kinds,
//! message boundaries, Unicode, filters.

use super::*;
use serde_json::json;
use std::path::Path;

fn lines(pattern: &str, regex: bool, text: &str, context: usize) -> Vec<LineMatch> {
    let m = Matcher::new(pattern, regex, false).expect("pattern");
    let mut out = Vec::new();
    for_each_match_line(&m.regex, text, context, |l| out.push(l));
    out
}

fn shown(l: &LineMatch) -> Vec<String> {
    let units: Vec<u16> = l.line.encode_utf16().collect();
    l.ranges
        .iter()
        .map(|[a, b]| String::from_utf16_lossy(&units[*a as usize..*b as usize]))
        .collect()
}

#[test]
fn lines_ranges_and_context() {
    let text = "one\ntwo cat cat\nthree\nfour cat\nfive";
    let got = lines("cat", false, text, 1);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].line_number, 2);
    assert_eq!(got[0].line, "two cat cat");
    assert_eq!(got[0].ranges, vec![[4, 7], [8, 11]]);
    assert_eq!(
        (got[0].before.clone(), got[0].after.clone()),
        (vec!["one".to_owned()], vec!["three".to_owned()])
    );
    assert_eq!(
        (got[1].line_number, got[1].after.clone()),
        (4, vec!["five".to_owned()])
    );
    // A match over two lines gives both.
    let got = lines(r"cat\nthree", true, text, 0);
    assert_eq!((got.len(), got[0].line.as_str()), (1, "two cat cat\nthree"));
    assert_eq!(shown(&got[0]), vec!["cat\nthree"]);
}

#[test]
fn unicode_ranges_are_utf16_and_long_lines_are_cut() {
    let got = lines("café", false, "un café ☕ puis 東京 café", 0);
    assert_eq!(shown(&got[0]), vec!["café", "café"]);
    let got = lines("東京都", false, "ログ: 東京都の設定 😀 東京都", 0);
    assert_eq!(shown(&got[0]), vec!["東京都", "東京都"]);
    let long = format!("{}needle{}", "é".repeat(2000), "x".repeat(2000));
    let got = lines("needle", false, &long, 0);
    assert!(got[0].line.len() < 700 && got[0].line.starts_with('…') && got[0].line.ends_with('…'));
    assert_eq!(shown(&got[0]), vec!["needle"]);
    // Case folding is Unicode's.
    let m = Matcher::new("ÉCHEC", false, true).expect("pattern");
    assert!(m.regex.is_match("un échec"));
}

fn write_task(tasks: &Path, id: &str, ws: &str, ts: i64, ui: serde_json::Value) {
    let dir = tasks.join(id);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("ui_messages.json"), ui.to_string()).expect("ui");
    let item = json!({"id": id, "number": 1, "ts": ts, "task": "t", "tokensIn": 1, "tokensOut": 1,
        "totalCost": 0, "workspace": ws});
    std::fs::write(dir.join("history_item.json"), item.to_string()).expect("item");
}

fn store(root: &Path) -> PathBuf {
    let tasks = root.join("tasks");
    let ts = 1_767_225_600_000i64; // 2026-01-01
    write_task(
        &tasks,
        "019b0000-0000-7000-8000-000000000001",
        "/w/alpha",
        ts,
        json!([
            {"ts": ts, "type": "say", "say": "text", "text": "Fix the build: it ends with\nnpm ERR! code E404"},
            {"ts": ts + 1, "type": "say", "say": "api_req_started", "text": "{\"request\":\"npm ERR! code E404\"}"},
            {"ts": ts + 2, "type": "ask", "type2": 0, "ask": "command", "text": "npm install left-pad"},
            {"ts": ts + 3, "type": "say", "say": "command_output", "text": "npm ERR! code E404\nnpm ERR! 404 Not Found"},
            {"ts": ts + 4, "type": "say", "say": "text", "text": "The package is gone; I'll pin \"left-pad\" to a fork."},
            {"ts": ts + 5, "type": "say", "say": "text", "text": "end of one"},
            {"ts": ts + 6, "type": "say", "say": "text", "text": "message two"},
        ]),
    );
    let later = ts + 40 * 86_400_000;
    write_task(
        &tasks,
        "019b0000-0000-7000-8000-000000000002",
        "/w/beta",
        later,
        json!([
            {"ts": later, "type": "say", "say": "text", "text": "Résumé des prévisions météo à 東京 — npm err! lower case"},
        ]),
    );
    tasks
}

pub(super) fn run(tasks: &Path, pattern: &str, f: impl FnOnce(&mut GrepOptions)) -> GrepReport {
    let mut o = GrepOptions {
        pattern: pattern.to_owned(),
        tasks_dirs: vec![tasks.to_path_buf()],
        ..Default::default()
    };
    f(&mut o);
    let tasks_dir = o.tasks_dirs[0].clone();
    let store = TaskStore::open(
        &roo_store::HostEnv::current(),
        &roo_store::task_store::OpenOptions {
            tasks_dirs: vec![tasks_dir],
            ..Default::default()
        },
    )
    .expect("store");
    let m = Matcher::new(&o.pattern, o.regex, o.ignore_case).expect("pattern");
    let (from, to) = date_bounds(o.start_date.as_deref(), o.end_date.as_deref()).expect("dates");
    let sel = select_tasks(&store, &o, from, to).expect("select");
    grep_selected(&sel, &m, &o, (from, to), None).expect("grep")
}

#[test]
fn kinds_are_told_apart_and_selectable() {
    let work = tempfile::tempdir().expect("tmp");
    let tasks = store(work.path());
    let r = run(&tasks, "npm ERR! code", |_| {});
    let kinds: Vec<(Kind, u32)> = r.matches.iter().map(|m| (m.kind, m.line_number)).collect();
    // The API request record is not dialogue; the lower-case one is another case.
    assert_eq!(kinds, vec![(Kind::User, 2), (Kind::ToolResult, 1)]);
    assert_eq!(
        r.matches[0].timestamp.as_deref(),
        Some("2026-01-01T00:00:00.000Z")
    );
    let r = run(&tasks, "npm ERR! code", |o| {
        o.kinds = Kinds::none().with(Kind::ToolResult)
    });
    assert_eq!(r.matches.len(), 1);
    let r = run(&tasks, "npm install", |o| {
        o.kinds = Kinds::none().with(Kind::ToolInput)
    });
    assert_eq!(r.matches.len(), 1);
    // Two lines of the command output, the user's line, the lower-case one.
    assert_eq!(
        run(&tasks, "npm err!", |o| o.ignore_case = true)
            .matches
            .len(),
        4
    );
    // Quotes and backslashes are escaped in the file, and found in the text.
    let r = run(&tasks, r#"pin "left-pad""#, |_| {});
    assert_eq!((r.matches.len(), r.matches[0].kind), (1, Kind::Assistant));
    assert_eq!(
        run(&tasks, r#"pin "left"#, |o| o.regex = false)
            .matches
            .len(),
        1
    );
    assert!(run(&tasks, r"E\d{3}", |o| o.regex = true).matches.len() >= 2);
}

#[test]
fn a_match_never_spans_two_messages() {
    let work = tempfile::tempdir().expect("tmp");
    let tasks = store(work.path());
    assert_eq!(run(&tasks, "of one", |_| {}).matches.len(), 1);
    assert_eq!(run(&tasks, "message two", |_| {}).matches.len(), 1);
    assert_eq!(run(&tasks, "one\nmessage", |_| {}).matches.len(), 0);
    assert_eq!(
        run(&tasks, r"one\s+message", |o| o.regex = true)
            .matches
            .len(),
        0
    );
    assert_eq!(
        run(&tasks, r"one[\s\S]*two", |o| o.regex = true)
            .matches
            .len(),
        0
    );
}

#[test]
fn unicode_and_filters() {
    let work = tempfile::tempdir().expect("tmp");
    let tasks = store(work.path());
    for p in ["prévisions météo", "東京", "Résumé"] {
        let r = run(&tasks, p, |_| {});
        assert_eq!(r.matches.len(), 1, "{p}");
        assert_eq!(r.matches[0].workspace.as_deref(), Some("/w/beta"));
    }
    // Accents are not folded by grep: it finds what was written.
    assert_eq!(run(&tasks, "previsions", |_| {}).matches.len(), 0);
    assert_eq!(
        run(&tasks, "npm", |o| o.workspace = Some("alpha".into())).tasks_matched,
        1
    );
    assert_eq!(
        run(&tasks, "npm", |o| o.workspace = Some("gamma".into())).tasks_searched,
        0
    );
    let r = run(&tasks, "npm", |o| o.start_date = Some("2026-02-01".into()));
    assert_eq!((r.tasks_searched, r.matches.len()), (1, 1));
    let r = run(&tasks, "npm", |o| o.end_date = Some("2026-01-01".into()));
    assert_eq!(r.tasks_matched, 1);
    let r = run(&tasks, "npm", |o| {
        o.task = Some("019b0000-0000-7000-8000-000000000002".into())
    });
    assert_eq!((r.tasks_searched, r.matches.len()), (1, 1));
    let r = run(&tasks, "npm", |o| o.max_matches = Some(2));
    assert_eq!((r.matches.len(), r.truncated), (2, true));
    // The file without the literal is not parsed.
    let r = run(&tasks, "left-pad", |_| {});
    assert_eq!((r.tasks_searched, r.files_parsed), (2, 1));
}
