//! Compares `analyze_task_legacy` with what the legacy server produced on the 17 fixture tasks
//! (`shared/fixtures/legacy-outputs/tasks/<taskId>.json`).

use roo_legacy::{
    analyze_task_legacy, compute_instruction_prefix, LegacyInstructionIndex, DEFAULT_PREFIX_LEN,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `../shared/fixtures`, or `None` (the test skips, saying why) when it is absent.
fn shared(test: &str) -> Option<PathBuf> {
    roo_corpus::shared::shared_fixture("fixtures", test)
}

fn task_dirs(fixtures: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for set in ["real-tasks", "controlled-hierarchy"] {
        let base = fixtures.join("legacy-tasks").join(set);
        let Ok(rd) = std::fs::read_dir(&base) else {
            panic!("missing fixture folder {}", base.display());
        };
        for e in rd.flatten() {
            if e.path().is_dir() {
                dirs.push(e.path());
            }
        }
    }
    dirs.sort();
    dirs
}

fn expected(fixtures: &Path, task_id: &str) -> Value {
    let p = fixtures
        .join("legacy-outputs/tasks")
        .join(format!("{task_id}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Tasks whose legacy dates come from the directory's birth time / mtime (legacy-baseline.md §3).
const DATES_FROM_DIRECTORY: [&str; 7] = [
    "03deadab-c123-4d56-ef78-9012345678ab",
    "38948ef0-abcd-4321-fedc-ba0987654321",
    "8a1b2c3d-e4f5-6789-0abc-def123456789",
    "c5d6e7f8-9012-3456-789a-bcdef0123456",
    "d7e8f9a0-1234-5678-9abc-def012345678",
    "leaf_b1a-test-id",
    "leaf_b1b-test-id",
];

fn opt_str(v: &Value) -> Option<&str> {
    v.as_str()
}

fn first_200_units(s: &str) -> String {
    let units: Vec<u16> = s.encode_utf16().take(200).collect();
    String::from_utf16_lossy(&units)
}

#[test]
fn all_seventeen_fixture_tasks_match_legacy_output() {
    let Some(fixtures) = shared("all_seventeen_fixture_tasks_match_legacy_output") else {
        return;
    };
    let dirs = task_dirs(&fixtures);
    assert_eq!(dirs.len(), 17, "expected 17 fixture task folders");
    let mut failures = Vec::new();
    let mut prefixes_compared = 0usize;
    let mut with_main_instruction = 0usize;
    for dir in &dirs {
        let task_id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let want = expected(&fixtures, &task_id);
        let Some(got) = analyze_task_legacy(dir) else {
            failures.push(format!("{task_id}: analysis returned None"));
            continue;
        };
        let mut check = |field: &str, ok: bool, detail: String| {
            if !ok {
                failures.push(format!("{task_id}: {field} differs: {detail}"));
            }
        };
        let want_prefixes: Vec<&str> = want["childTaskInstructionPrefixes"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        check(
            "childTaskInstructionPrefixes",
            got.child_task_instruction_prefixes == want_prefixes,
            format!(
                "got {:#?}\nwant {:#?}",
                got.child_task_instruction_prefixes, want_prefixes
            ),
        );
        prefixes_compared += want_prefixes.len();
        let got_main = got.truncated_instruction.as_deref().map(first_200_units);
        with_main_instruction += usize::from(got_main.is_some());
        check(
            "mainInstruction",
            got_main.as_deref() == opt_str(&want["mainInstruction"]),
            format!("got {got_main:?} want {}", want["mainInstruction"]),
        );
        check(
            "messageCount",
            want["messageCount"].as_u64() == Some(u64::from(got.message_count)),
            format!("got {} want {}", got.message_count, want["messageCount"]),
        );
        check(
            "actionCount",
            want["actionCount"].as_u64() == Some(u64::from(got.action_count)),
            format!("got {} want {}", got.action_count, want["actionCount"]),
        );
        check(
            "sequenceLength",
            want["sequenceLength"].as_u64() == Some(u64::from(got.sequence_length)),
            format!(
                "got {} want {}",
                got.sequence_length, want["sequenceLength"]
            ),
        );
        check(
            "totalSize",
            want["totalSize"].as_u64() == Some(got.total_size),
            format!("got {} want {}", got.total_size, want["totalSize"]),
        );
        check(
            "workspace",
            got.workspace.as_deref() == opt_str(&want["workspace"]),
            format!("got {:?} want {}", got.workspace, want["workspace"]),
        );
        check(
            "title",
            got.title.as_deref() == opt_str(&want["title"]),
            format!("got {:?} want {}", got.title, want["title"]),
        );
        check(
            "mode",
            got.mode.as_deref() == opt_str(&want["mode"]),
            format!("got {:?} want {}", got.mode, want["mode"]),
        );
        check(
            "isCompleted",
            want["isCompleted"].as_bool() == Some(got.is_completed),
            format!("got {} want {}", got.is_completed, want["isCompleted"]),
        );
        check(
            "parentTaskId",
            got.parent_task_id.as_deref() == opt_str(&want["parentTaskIdFromMetadata"]),
            format!(
                "got {:?} want {}",
                got.parent_task_id, want["parentTaskIdFromMetadata"]
            ),
        );
        let want_oversized: Vec<&str> = want["oversizedFiles"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        check(
            "oversizedFiles",
            got.oversized_files == want_oversized,
            format!("got {:?}", got.oversized_files),
        );
        check_dates(&task_id, &got, &want, &mut check);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Guard against a vacuous comparison: 25 + 7 + 11 prefixes, 3 tasks with a main instruction.
    assert_eq!(prefixes_compared, 43);
    assert_eq!(with_main_instruction, 3);
}

/// The dates of one task against the legacy output (none where the legacy server fell back to the
/// directory's times).
fn check_dates(
    task_id: &str,
    got: &roo_legacy::LegacyAnalysis,
    want: &Value,
    check: &mut impl FnMut(&str, bool, String),
) {
    if DATES_FROM_DIRECTORY.contains(&task_id) {
        check(
            "dates (directory fallback expected)",
            got.created_at_ms.is_none() && got.last_activity_ms.is_none(),
            format!("got {:?} {:?}", got.created_at_ms, got.last_activity_ms),
        );
    } else {
        let created = got.created_at_ms.and_then(roo_js::to_iso_string);
        let last = got.last_activity_ms.and_then(roo_js::to_iso_string);
        check(
            "createdAt",
            created.as_deref() == opt_str(&want["createdAt"]),
            format!("got {created:?} want {}", want["createdAt"]),
        );
        check(
            "lastActivity",
            last.as_deref() == opt_str(&want["lastActivity"]),
            format!("got {last:?} want {}", want["lastActivity"]),
        );
    }
}

fn real_task(fixtures: &Path, id: &str) -> PathBuf {
    fixtures.join("legacy-tasks/real-tasks").join(id)
}

#[test]
fn real_pair_resolves_through_the_index() {
    let Some(fixtures) = shared("real_pair_resolves_through_the_index") else {
        return;
    };
    let parent = analyze_task_legacy(&real_task(
        &fixtures,
        "ac8aa7b4-319c-4925-a139-4f4adca81921",
    ));
    let child = analyze_task_legacy(&real_task(
        &fixtures,
        "bc93a6f7-cd2e-4686-a832-46e3cd14d338",
    ));
    let (Some(parent), Some(child)) = (parent, child) else {
        panic!("real fixtures did not analyse");
    };
    let mut index = LegacyInstructionIndex::new();
    for p in &parent.child_task_instruction_prefixes {
        index.add_instruction(&parent.task_id, p);
    }
    assert_eq!(index.len(), 25);
    let Some(query) = child.truncated_instruction.as_deref() else {
        panic!("child has no truncated instruction");
    };
    let hits = index.search_exact_prefix(query, DEFAULT_PREFIX_LEN);
    assert_eq!(
        hits,
        vec![(
            "ac8aa7b4-319c-4925-a139-4f4adca81921".to_owned(),
            query.to_owned()
        )]
    );
    // The key is the parent's last prefix, and the raw main instruction normalises to it.
    assert_eq!(
        parent
            .child_task_instruction_prefixes
            .last()
            .map(String::as_str),
        Some(query)
    );
    let raw = child.main_instruction.as_deref().unwrap_or_default();
    assert_eq!(compute_instruction_prefix(raw, DEFAULT_PREFIX_LEN), query);
}

#[test]
fn real_tasks_raw_instruction_counts_and_modes() {
    let Some(fixtures) = shared("real_tasks_raw_instruction_counts_and_modes") else {
        return;
    };
    let child = analyze_task_legacy(&real_task(
        &fixtures,
        "bc93a6f7-cd2e-4686-a832-46e3cd14d338",
    ));
    let Some(child) = child else {
        panic!("bc93a6f7 did not analyse");
    };
    let modes: Vec<&str> = child.instructions.iter().map(|i| i.mode.as_str()).collect();
    assert_eq!(
        modes,
        vec![
            "task",
            "architect",
            "debug",
            "debug mode",
            "code",
            "debug",
            "debug mode",
            "code",
            "code mode",
            "architect"
        ]
    );
    let parent = analyze_task_legacy(&real_task(
        &fixtures,
        "ac8aa7b4-319c-4925-a139-4f4adca81921",
    ));
    assert_eq!(parent.map(|p| p.instructions.len()), Some(38));
    // Self-contamination: the first prefix is the task's own truncated instruction.
    assert_eq!(
        child.child_task_instruction_prefixes.first(),
        child.truncated_instruction.as_ref()
    );
}
