//! XML exports: every document validates with xmllint against schemas/*.xsd (the seed profile,
//! the default) and, with `schemaProfile: extended`, against schemas/extended/*.xsd; reading a
//! document back gives the counts of the skeletons it came from.

mod common;

use common::*;
use roo_export::source::SkeletonSource;
use roo_export::xml::SchemaProfile;
use roo_export::{
    export_conversation_xml, export_project_xml, export_task_xml, ConversationRequest, Output,
    ProjectRequest, TaskXmlRequest, TasksDirSource,
};
use roo_state::hierarchy::descendants;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;

fn no_cancel() -> AtomicBool {
    AtomicBool::new(false)
}

fn pretty(p: bool) -> Output {
    Output {
        pretty_print: Some(p),
        ..Output::default()
    }
}

fn headers(dir: &Path) -> Vec<roo_state::ConversationSkeleton> {
    TasksDirSource::new(dir)
        .expect("store")
        .headers(&no_cancel())
        .expect("headers")
}

#[test]
fn schemas_share_their_types() {
    let block = |name: &str| {
        let s = std::fs::read_to_string(schema(name)).expect("schema");
        let a = s.find("<!-- SHARED TYPES BEGIN -->").expect("begin");
        let b = s.find("<!-- SHARED TYPES END -->").expect("end");
        s[a..b].to_owned()
    };
    assert_eq!(block("task.xsd"), block("conversation.xsd"));
    assert_eq!(
        block("extended/task.xsd"),
        block("extended/conversation.xsd")
    );
}

/// Both profiles on the real pair and its project: each document validates against its own
/// profile's schema, and the extended documents carry additions the seed schemas refuse.
#[test]
fn seed_by_default_and_extended_on_request() {
    let Some(real_tasks) = real_tasks("seed_by_default_and_extended_on_request") else {
        return;
    };
    isolate_config();
    let with = |profile: Option<SchemaProfile>| Output {
        schema_profile: profile,
        ..Output::default()
    };
    let dir = Some(real_tasks.display().to_string());
    let task = |profile| {
        export_task_xml(
            &TaskXmlRequest {
                task_id: CHILD.into(),
                tasks_dir: dir.clone(),
                output: with(profile),
                ..TaskXmlRequest::default()
            },
            &no_cancel(),
        )
        .expect("task")
        .content
        .expect("content")
    };
    let conversation = |profile| {
        export_conversation_xml(
            &ConversationRequest {
                conversation_id: PARENT.into(),
                tasks_dir: dir.clone(),
                max_depth: Some(1),
                output: with(profile),
                ..ConversationRequest::default()
            },
            &no_cancel(),
        )
        .expect("conversation")
        .content
        .expect("content")
    };
    let ws = headers(&real_tasks)
        .into_iter()
        .find_map(|h| h.metadata.workspace)
        .expect("a workspace");
    let project = |profile| {
        export_project_xml(
            &ProjectRequest {
                project_path: Some(ws.clone()),
                tasks_dir: dir.clone(),
                output: with(profile),
                ..ProjectRequest::default()
            },
            &no_cancel(),
        )
        .expect("project")
        .content
        .expect("content")
    };
    for (name, make) in [
        (
            "task.xsd",
            &task as &dyn Fn(Option<SchemaProfile>) -> String,
        ),
        ("conversation.xsd", &conversation),
        ("project.xsd", &project),
    ] {
        let default = make(None);
        xmllint(name, &default);
        xmllint(name, &make(Some(SchemaProfile::Seed)));
        let extended = make(Some(SchemaProfile::Extended));
        xmllint(&format!("extended/{name}"), &extended);
        assert!(
            !validates(name, &extended),
            "{name}: the extended document should carry additions the seed schema refuses"
        );
        // The seed schemas' documents are valid extended documents too.
        xmllint(&format!("extended/{name}"), &default);
    }
    assert!(!task(None).contains("<workspace>"));
    assert!(task(Some(SchemaProfile::Extended)).contains("<workspace>"));
    assert!(!conversation(None).contains("omittedChildren"));
    assert!(conversation(Some(SchemaProfile::Extended)).contains("omittedChildren=\"1\""));
}

#[test]
fn every_task_of_every_store_validates_and_counts_match() {
    isolate_config();
    let mut checked = 0;
    for store in stores() {
        let source = TasksDirSource::new(&store).expect("store");
        for h in headers(&store) {
            for (include, pp) in [(false, true), (true, false)] {
                let req = TaskXmlRequest {
                    task_id: h.task_id.clone(),
                    tasks_dir: Some(store.display().to_string()),
                    include_content: Some(include),
                    output: pretty(pp),
                };
                let out = export_task_xml(&req, &no_cancel())
                    .unwrap_or_else(|e| panic!("{} {}: {e}", store.display(), h.task_id));
                let xml = out.content.expect("content");
                xmllint("task.xsd", &xml);
                let parsed = parse(&xml);
                let full = source
                    .full(
                        &h.task_id,
                        &roo_state::AnalyzeOptions {
                            include_sequence: true,
                            max_content_len: 0,
                        },
                    )
                    .expect("full");
                let t = &parsed.tasks[&h.task_id];
                assert_eq!(t.message_count, full.metadata.message_count as usize);
                assert_eq!(t.action_count, full.metadata.action_count as usize);
                assert_eq!(t.messages, t.message_count, "{}", h.task_id);
                assert_eq!(t.actions, t.action_count, "{}", h.task_id);
                assert_eq!(t.parent, h.parent_task_id, "{}", h.task_id);
                assert_eq!(out.written.messages as usize, t.messages);
                if include {
                    // Full content: the texts are the skeleton's, character for character.
                    let expected: Vec<String> = full
                        .sequence
                        .iter()
                        .flatten()
                        .filter_map(|i| match i {
                            roo_state::skeleton::SequenceItem::Message(m) => {
                                Some(m.content.clone())
                            }
                            _ => None,
                        })
                        .map(|c| c.replace('\u{0}', "\u{FFFD}"))
                        .collect();
                    let got: Vec<String> = parsed
                        .texts
                        .iter()
                        .map(|s| s.replace("\r\n", "\n"))
                        .collect();
                    let want: Vec<String> = expected
                        .iter()
                        .map(|s| {
                            s.chars()
                                .map(|c| match c {
                                    '\t' | '\n' | '\r' => c,
                                    c if (c as u32) < 0x20
                                        || c == '\u{FFFE}'
                                        || c == '\u{FFFF}' =>
                                    {
                                        '\u{FFFD}'
                                    }
                                    c => c,
                                })
                                .collect::<String>()
                                .replace("\r\n", "\n")
                        })
                        .collect();
                    if full.metadata.message_count > 0 && want.iter().all(|w| w.len() < 100_000) {
                        assert_eq!(got, want, "{}", h.task_id);
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "only {checked} exports checked");
}

#[test]
fn conversations_of_every_store_validate_and_hold_their_trees() {
    isolate_config();
    for store in stores() {
        let hs = headers(&store);
        for root in hs.iter().filter(|h| h.parent_task_id.is_none()) {
            let req = ConversationRequest {
                conversation_id: root.task_id.clone(),
                tasks_dir: Some(store.display().to_string()),
                ..ConversationRequest::default()
            };
            let out = export_conversation_xml(&req, &no_cancel()).expect("export");
            let xml = out.content.expect("content");
            xmllint("conversation.xsd", &xml);
            let parsed = parse(&xml);
            let mut want: BTreeSet<String> = descendants(&hs, &root.task_id).into_iter().collect();
            want.insert(root.task_id.clone());
            let got: BTreeSet<String> = parsed.tasks.keys().cloned().collect();
            assert_eq!(got, want, "{}", root.task_id);
            for (id, t) in &parsed.tasks {
                let h = hs.iter().find(|h| &h.task_id == id).expect("header");
                assert_eq!(t.messages, h.metadata.message_count as usize, "{id}");
                assert_eq!(t.actions, h.metadata.action_count as usize, "{id}");
                assert_eq!(t.parent, h.parent_task_id, "{id}");
            }
        }
    }
}

#[test]
fn real_pair_nests_the_child_under_the_parent_with_sequences() {
    let Some(real_tasks) = real_tasks("real_pair_nests_the_child_under_the_parent_with_sequences")
    else {
        return;
    };
    isolate_config();
    let req = ConversationRequest {
        conversation_id: PARENT.into(),
        tasks_dir: Some(real_tasks.display().to_string()),
        include_content: Some(false),
        ..ConversationRequest::default()
    };
    let out = export_conversation_xml(&req, &no_cancel()).expect("export");
    let xml = out.content.expect("content");
    xmllint("conversation.xsd", &xml);
    let parsed = parse(&xml);
    assert_eq!(
        parsed.order,
        vec![(PARENT.to_owned(), 0), (CHILD.to_owned(), 1)]
    );
    assert_eq!(parsed.tasks[CHILD].parent.as_deref(), Some(PARENT));
    for id in [PARENT, CHILD] {
        let t = &parsed.tasks[id];
        assert!(t.messages > 0 && t.actions > 0, "{id}: {t:?}");
        assert_eq!(t.messages, t.message_count);
        assert_eq!(t.actions, t.action_count);
    }
    assert!(!xml.contains("<sequence/>"));
    assert!(parsed.truncated > 0, "previews are marked isTruncated");
    // Depth 1: the parent alone, its child counted as omitted.
    let req = ConversationRequest {
        max_depth: Some(1),
        ..req
    };
    let xml = export_conversation_xml(&req, &no_cancel())
        .expect("export")
        .content
        .expect("content");
    xmllint("conversation.xsd", &xml);
    assert_eq!(parse(&xml).order.len(), 1);
    // The task export of the child names its reconstructed parent.
    let xml = export_task_xml(
        &TaskXmlRequest {
            task_id: CHILD.into(),
            tasks_dir: Some(real_tasks.display().to_string()),
            ..TaskXmlRequest::default()
        },
        &no_cancel(),
    )
    .expect("task")
    .content
    .expect("content");
    xmllint("task.xsd", &xml);
    assert_eq!(parse(&xml).tasks[CHILD].parent.as_deref(), Some(PARENT));
}

#[test]
fn projects_validate_and_add_up() {
    isolate_config();
    for store in stores() {
        let hs = headers(&store);
        let workspaces: BTreeSet<String> = hs
            .iter()
            .filter_map(|h| h.metadata.workspace.clone())
            .collect();
        for ws in workspaces {
            let req = ProjectRequest {
                project_path: Some(ws.clone()),
                tasks_dir: Some(store.display().to_string()),
                ..ProjectRequest::default()
            };
            let out = export_project_xml(&req, &no_cancel()).expect("project");
            let xml = out.content.expect("content");
            xmllint("project.xsd", &xml);
            let parsed = parse(&xml);
            let key = roo_state::hierarchy::normalize_workspace(&ws);
            let members: Vec<_> = hs
                .iter()
                .filter(|h| {
                    h.metadata
                        .workspace
                        .as_deref()
                        .map(roo_state::hierarchy::normalize_workspace)
                        == Some(key.clone())
                })
                .collect();
            let total: usize = parsed.conversations.iter().map(|c| c.1).sum();
            assert_eq!(total, members.len(), "{ws}");
            assert_eq!(parsed.summary["totalTasks"], members.len().to_string());
            assert_eq!(
                parsed.summary["conversationCount"],
                parsed.conversations.len().to_string()
            );
            let size: u64 = members.iter().map(|h| h.metadata.total_size).sum();
            assert_eq!(parsed.summary["totalSize"], size.to_string());
            // Backslashes, case and trailing separators do not split a project.
            let variant = format!("{}/", ws.replace('/', "\\").to_uppercase());
            let again = export_project_xml(
                &ProjectRequest {
                    project_path: Some(variant),
                    ..req.clone()
                },
                &no_cancel(),
            )
            .expect("variant");
            let again = again.content.expect("c");
            xmllint("project.xsd", &again);
            assert_eq!(parse(&again).conversations, parsed.conversations);
        }
        // An unknown project: a valid, empty export.
        let out = export_project_xml(
            &ProjectRequest {
                project_path: Some("/nowhere/at/all".into()),
                tasks_dir: Some(store.display().to_string()),
                ..ProjectRequest::default()
            },
            &no_cancel(),
        )
        .expect("empty project");
        let xml = out.content.expect("content");
        xmllint("project.xsd", &xml);
        assert_eq!(parse(&xml).summary["conversationCount"], "0");
    }
}

#[test]
fn project_dates_filter_conversations() {
    let Some(real_tasks) = real_tasks("project_dates_filter_conversations") else {
        return;
    };
    isolate_config();
    let store = real_tasks;
    let base = ProjectRequest {
        project_path: Some("d:/dev/roo-extensions".into()),
        tasks_dir: Some(store.display().to_string()),
        ..ProjectRequest::default()
    };
    let all = export_project_xml(&base, &no_cancel())
        .expect("all")
        .content
        .expect("c");
    xmllint("project.xsd", &all);
    let all = parse(&all);
    assert_eq!(all.conversations, vec![(PARENT.to_owned(), 2)]);
    let later = ProjectRequest {
        start_date: Some("2030-01-01".into()),
        ..base.clone()
    };
    let none = export_project_xml(&later, &no_cancel())
        .expect("later")
        .content
        .expect("c");
    xmllint("project.xsd", &none);
    let none = parse(&none);
    assert!(none.conversations.is_empty());
    let bad = ProjectRequest {
        start_date: Some("last tuesday".into()),
        ..base
    };
    let err = export_project_xml(&bad, &no_cancel()).expect_err("bad date");
    assert_eq!(err.code(), "INVALID_ARGUMENT");
}

#[test]
fn hostile_text_is_escaped_and_round_trips() {
    isolate_config();
    let dir = tempfile::tempdir().expect("tempdir");
    let task = dir.path().join("t1");
    std::fs::create_dir(&task).expect("mkdir");
    let texts = [
        "plain <b>bold</b> & \"quotes\" 'single' ]]> end",
        "controls \u{1}\u{8}\u{b}\u{c}\u{1f} and \u{fffe}\u{ffff} here",
        "crlf line\r\nnext\rlast",
        "emoji 😀 and astral 𝕏, RTL \u{202e}text",
        "</message><injected/>",
    ];
    let mut msgs = vec![
        serde_json::json!({"ts": 1_700_000_000_000i64, "type": "say", "say": "text", "text": "start the task"}),
    ];
    for (i, t) in texts.iter().enumerate() {
        msgs.push(serde_json::json!({"ts": 1_700_000_000_001i64 + i as i64, "type": "say", "say": "completion_result", "text": t}));
    }
    msgs.push(serde_json::json!({"ts": 1_700_000_000_100i64, "type": "ask", "ask": "tool", "text": "{\"tool\":\"readFile\",\"path\":\"a\\\"b<c>.rs\"}"}));
    std::fs::write(
        task.join("ui_messages.json"),
        serde_json::to_string(&msgs).expect("json"),
    )
    .expect("write");
    for pp in [true, false] {
        let out = export_task_xml(
            &TaskXmlRequest {
                task_id: "t1".into(),
                tasks_dir: Some(dir.path().display().to_string()),
                include_content: Some(true),
                output: pretty(pp),
            },
            &no_cancel(),
        )
        .expect("export");
        let xml = out.content.expect("content");
        xmllint("task.xsd", &xml);
        let parsed = parse(&xml);
        assert_eq!(parsed.texts.len(), 1 + texts.len());
        assert_eq!(parsed.texts[1], texts[0]);
        assert_eq!(
            parsed.texts[2],
            "controls \u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd} and \u{fffd}\u{fffd} here"
        );
        assert_eq!(parsed.texts[3], texts[2]);
        assert_eq!(parsed.texts[4], texts[3]);
        assert_eq!(parsed.texts[5], texts[4]);
        assert_eq!(parsed.actions, 1);
        assert!(xml.contains("filePath=\"a&quot;b&lt;c&gt;.rs\""));
    }
}

#[test]
fn big_message_is_cut_and_marked() {
    isolate_config();
    let dir = tempfile::tempdir().expect("tempdir");
    let task = dir.path().join("big");
    std::fs::create_dir(&task).expect("mkdir");
    let big = "x".repeat(300_000);
    let msgs = serde_json::json!([
        {"ts": 1_700_000_000_000i64, "type": "say", "say": "text", "text": "hello"},
        {"ts": 1_700_000_000_001i64, "type": "say", "say": "completion_result", "text": big},
    ]);
    std::fs::write(task.join("ui_messages.json"), msgs.to_string()).expect("write");
    let run = |include| {
        export_task_xml(
            &TaskXmlRequest {
                task_id: "big".into(),
                tasks_dir: Some(dir.path().display().to_string()),
                include_content: Some(include),
                output: pretty(true),
            },
            &no_cancel(),
        )
        .expect("export")
    };
    let preview = run(false);
    xmllint("task.xsd", preview.content.as_deref().expect("c"));
    let p = parse(preview.content.as_deref().expect("c"));
    assert_eq!(p.truncated, 1);
    assert_eq!(p.texts[1], format!("{}...", "x".repeat(100)));
    let full = run(true);
    let xml = full.content.expect("c");
    xmllint("task.xsd", &xml);
    let f = parse(&xml);
    // The default maxContentLength (100 000) cuts it, and says so.
    assert_eq!(f.truncated, 1);
    assert!(f.texts[1].len() <= 100_003);
    assert_eq!(full.written.truncated, 1);
}

#[test]
fn errors_have_codes() {
    let Some(real_tasks) = real_tasks("errors_have_codes") else {
        return;
    };
    isolate_config();
    let store = real_tasks.display().to_string();
    let err = export_task_xml(
        &TaskXmlRequest {
            task_id: "no-such-task".into(),
            tasks_dir: Some(store.clone()),
            ..TaskXmlRequest::default()
        },
        &no_cancel(),
    )
    .expect_err("missing");
    assert_eq!(err.code(), "TASK_NOT_FOUND");
    for bad_id in ["../real-tasks", "a/b", ""] {
        let err = export_task_xml(
            &TaskXmlRequest {
                task_id: bad_id.into(),
                tasks_dir: Some(store.clone()),
                ..TaskXmlRequest::default()
            },
            &no_cancel(),
        )
        .expect_err("bad id");
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{bad_id}");
    }
    let err = export_task_xml(
        &TaskXmlRequest {
            task_id: PARENT.into(),
            tasks_dir: Some("/no/such/dir".into()),
            ..TaskXmlRequest::default()
        },
        &no_cancel(),
    )
    .expect_err("no dir");
    assert_eq!(err.code(), "INVALID_PATH");
    let cancelled = AtomicBool::new(true);
    let err = export_conversation_xml(
        &ConversationRequest {
            conversation_id: PARENT.into(),
            tasks_dir: Some(store),
            ..ConversationRequest::default()
        },
        &cancelled,
    )
    .expect_err("aborted");
    assert_eq!(err.code(), "ABORTED");
}
