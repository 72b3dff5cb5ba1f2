//! What a grep holds is bounded whatever the tasks hold, and every file it cannot read is said:
//! one huge line, lines by the hundred thousand with context, huge titles, and dialogue files
//! that are a FIFO, NULs, arrays nested 100 000 deep, links out of the store.

use super::tests_support::{run, run_through_texts};
use super::*;
use serde_json::json;
use std::path::Path;

fn lines(pattern: &str, text: &str, context: usize) -> Vec<LineMatch> {
    let m = Matcher::new(pattern, true, false).expect("pattern");
    let mut out = Vec::new();
    for_each_match_line(&m.regex, text, context, |l| out.push(l));
    out
}

#[test]
fn one_huge_line_gives_one_bounded_match() {
    // 8 MiB on one line: every character a match of `.`, every "ab" one of `(a|a)*b`.
    let text = "ab".repeat(4 << 20);
    for pattern in [".", "(a|a)*b"] {
        let got = lines(pattern, &text, 20);
        assert_eq!(got.len(), 1, "{pattern}");
        assert!(got[0].line.len() <= MAX_LINE_BYTES + 8, "{pattern}");
        assert!(got[0].ranges.len() <= MAX_SPANS, "{pattern}");
        assert!(got[0].before.is_empty() && got[0].after.is_empty());
    }
}

#[test]
fn context_lines_share_a_bound_and_a_marker_says_what_was_cut() {
    let line = "x".repeat(590);
    let text = format!(
        "{}needle\n{}",
        format!("{line}\n").repeat(30),
        format!("{line}\n").repeat(30)
    );
    let got = lines("needle", &text, 20);
    assert_eq!(got.len(), 1);
    let m = &got[0];
    let held: usize = m.before.iter().chain(&m.after).map(String::len).sum();
    assert!(held <= MAX_CONTEXT_BYTES + 200, "{held}");
    assert!(
        m.before[0].contains("more context line(s) cut"),
        "{:?}",
        m.before[0]
    );
    assert!(m
        .after
        .last()
        .is_some_and(|l| l.contains("more context line(s) cut")));
    // Short context lines are given whole, nearest last before and first after.
    let got = lines("c", "a\nb\nc\nd\ne", 2);
    assert_eq!(
        (got[0].before.clone(), got[0].after.clone()),
        (vec!["a".into(), "b".into()], vec!["d".into(), "e".into()])
    );
    let got = lines("a", "a\nb", 3);
    assert_eq!(
        (got[0].before.len(), got[0].after.clone()),
        (0, vec!["b".to_owned()])
    );
    let got = lines("b", "a\nb\n", 3);
    assert_eq!(
        (got[0].before.clone(), got[0].after.clone()),
        (vec!["a".to_owned()], vec![String::new()])
    );
}

fn task(tasks: &Path, id: &str, ui: &serde_json::Value) -> std::path::PathBuf {
    let dir = tasks.join(id);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("ui_messages.json"), ui.to_string()).expect("ui");
    dir
}

#[test]
fn titles_are_cut_and_the_answer_is_bounded() {
    let work = tempfile::tempdir().expect("tmp");
    let tasks = work.path().join("tasks");
    let ts = 1_767_225_600_000i64;
    // A title of 2 MiB, and 10 000 lines of 500 bytes each holding the pattern.
    let body = format!("{}\n", "y".repeat(495) + "hit").repeat(10_000);
    task(
        &tasks,
        "019b0000-0000-7000-8000-000000000010",
        &json!([
            {"ts": ts, "type": "say", "say": "text", "text": "t".repeat(2 << 20)},
            {"ts": ts + 1, "type": "say", "say": "text", "text": body},
        ]),
    );
    let r = run(&tasks, "hit", |o| o.max_matches = Some(100_000));
    assert_eq!((r.matches.len(), r.truncated), (10_000, false));
    assert!(r.matches.iter().all(|m| m
        .title
        .as_ref()
        .is_some_and(|t| t.chars().count() <= MAX_LABEL_CHARS + 1)));
    // With 20 lines of context each, the matches past the bound on the answer are left out.
    let r = run(&tasks, "hit", |o| {
        o.context = 20;
        o.max_matches = Some(100_000);
    });
    assert!(
        r.truncated && r.matches.len() < 10_000,
        "{}",
        r.matches.len()
    );
    let held: usize = r.matches.iter().map(held).sum();
    assert!(held <= MAX_ANSWER_BYTES + 64 * 1024, "{held}");
}

#[cfg(unix)]
#[test]
fn every_file_a_grep_cannot_read_is_counted_and_named() {
    let work = tempfile::tempdir().expect("tmp");
    let tasks = work.path().join("tasks");
    let ts = 1_767_225_600_000i64;
    let ok = json!([{"ts": ts, "type": "say", "say": "text", "text": "needle here"}]);
    task(&tasks, "a-fine", &ok);
    // A FIFO, NULs, 100 000-deep arrays, a file and a folder linked out of the store.
    let fifo = task(&tasks, "b-fifo", &ok).join("ui_messages.json");
    std::fs::remove_file(&fifo).expect("rm");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    let nul = task(&tasks, "c-nul", &ok).join("ui_messages.json");
    std::fs::File::create(&nul)
        .and_then(|f| f.set_len(1 << 20))
        .expect("nul");
    let deep = task(&tasks, "d-deep", &ok).join("ui_messages.json");
    std::fs::write(
        &deep,
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .expect("deep");
    let outside = work.path().join("outside");
    std::fs::create_dir_all(outside.join("t1")).expect("mkdir");
    std::fs::write(outside.join("t1").join("ui_messages.json"), ok.to_string()).expect("write");
    std::fs::write(outside.join("secret.json"), ok.to_string()).expect("write");
    let linked = task(&tasks, "e-linked-file", &ok).join("ui_messages.json");
    std::fs::remove_file(&linked).expect("rm");
    std::os::unix::fs::symlink(outside.join("secret.json"), &linked).expect("link");
    std::os::unix::fs::symlink(outside.join("t1"), tasks.join("f-linked-folder")).expect("link");

    for through_texts in [false, true, true] {
        let r = if through_texts {
            run_through_texts(&tasks, work.path(), "needle")
        } else {
            run(&tasks, "needle", |_| {})
        };
        // Only the fine task's needle; the one outside the store is never shown.
        assert_eq!(r.matches.len(), 1, "{through_texts}: {:?}", r.matches);
        let said: Vec<&str> = r.skipped.iter().map(|s| s.file.as_str()).collect();
        let expect = if through_texts { 4 } else { 3 };
        // Without the text store, a file whose bytes cannot hold the pattern is not parsed (the
        // deep one): its damage is not looked at.
        assert!(r.files_skipped >= expect, "{through_texts}: {said:?}");
        for name in ["b-fifo", "c-nul", "e-linked-file"] {
            assert!(
                said.iter().any(|f| f.contains(name)),
                "{through_texts}: {name} not in {said:?}"
            );
        }
        if through_texts {
            assert!(said.iter().any(|f| f.contains("d-deep")), "{said:?}");
        }
        let reasons = r
            .skipped
            .iter()
            .map(|s| s.reason.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            reasons.contains("not a regular file")
                && reasons.contains("not JSON")
                && reasons.contains("outside its store"),
            "{reasons}"
        );
    }
}

#[test]
fn json_starts() {
    for ok in [
        &b"[{}]"[..],
        b"  \n[",
        b"\xEF\xBB\xBF[",
        b"{\"a\":1}\n{",
        b"[\0{\0",
        b"\0[\0{",
        b"\xFF\xFE[\0",
        b"",
    ] {
        assert_eq!(dialogue::json_start_problem(ok), None, "{ok:?}");
    }
    for bad in [&b"\0\0\0\0"[..], b"garbage", b"\x89PNG"] {
        assert!(dialogue::json_start_problem(bad).is_some(), "{bad:?}");
    }
}
