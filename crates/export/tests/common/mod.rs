#![allow(dead_code)]
//! Helpers shared by the export tests.

use quick_xml::events::Event;
use quick_xml::Reader;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub const PARENT: &str = "ac8aa7b4-319c-4925-a139-4f4adca81921";
pub const CHILD: &str = "bc93a6f7-cd2e-4686-a832-46e3cd14d338";

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/fixtures/legacy-tasks/<set>`, or `None` after `test` says on stderr that it skips
/// (a failure instead with `ROO_STATE_REQUIRE_SHARED=1`).
pub fn legacy_set(set: &str, test: &str) -> Option<PathBuf> {
    roo_corpus::shared::shared_fixture(&format!("fixtures/legacy-tasks/{set}"), test)
}

/// The real parent/child pair of the legacy fixtures, when ../shared is there.
pub fn real_tasks(test: &str) -> Option<PathBuf> {
    legacy_set("real-tasks", test)
}

pub fn schema(name: &str) -> PathBuf {
    repo().join("schemas").join(name)
}

/// Every tasks directory the tests export from.
pub fn stores() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("fixtures/stores"))
        .expect("fixtures/stores")
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("tasks"))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    for set in ["real-tasks", "controlled-hierarchy", "test-task-123"] {
        if let Some(p) = legacy_set(set, "the export stores (legacy trees)") {
            v.push(p);
        }
    }
    v
}

/// Point the configuration at an empty temporary directory (once per test process).
pub fn isolate_config() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().expect("tempdir");
        std::env::set_var("ROO_STATE_CONFIG_DIR", d.path());
        d
    })
    .path()
}

/// Whether `xml` validates against `schema` (xmllint; panics when xmllint is missing).
pub fn validates(schema_name: &str, xml: &str) -> bool {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("export.xml");
    std::fs::write(&file, xml).expect("write xml");
    Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema(schema_name))
        .arg(&file)
        .output()
        .unwrap_or_else(|e| {
            panic!("xmllint could not be run ({e}); install it: apt-get install -y libxml2-utils")
        })
        .status
        .success()
}

/// Validate `xml` against `schema` with xmllint. Panics (never skips) when xmllint is missing:
/// CI installs it (Debian's libxml2-utils).
pub fn xmllint(schema_name: &str, xml: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("export.xml");
    std::fs::write(&file, xml).expect("write xml");
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema(schema_name))
        .arg(&file)
        .output()
        .unwrap_or_else(|e| {
            panic!("xmllint could not be run ({e}); install it: apt-get install -y libxml2-utils")
        });
    if !out.status.success() {
        let keep = std::env::temp_dir().join(format!("failed-export-{}.xml", std::process::id()));
        let _ = std::fs::write(&keep, xml);
        panic!(
            "{} does not validate against {schema_name} (kept in {}): {}",
            file.display(),
            keep.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// What an XML export holds, read back with quick-xml.
#[derive(Debug, Default, Clone)]
pub struct Parsed {
    /// taskId → (metadata messageCount, actionCount, <message> seen, <action> seen, parentTaskId).
    pub tasks: BTreeMap<String, TaskCounts>,
    /// Task ids in document order with their depth (root = 0).
    pub order: Vec<(String, usize)>,
    pub messages: usize,
    pub actions: usize,
    pub truncated: usize,
    /// Message texts in order.
    pub texts: Vec<String>,
    /// Summary fields of a project export.
    pub summary: BTreeMap<String, String>,
    /// `<conversation>` entries of a project export: rootTaskId → taskCount.
    pub conversations: Vec<(String, usize)>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct TaskCounts {
    pub message_count: usize,
    pub action_count: usize,
    pub messages: usize,
    pub actions: usize,
    pub parent: Option<String>,
    pub depth: usize,
}

pub fn parse(xml: &str) -> Parsed {
    let mut reader = Reader::from_str(xml);
    let mut p = Parsed::default();
    let mut stack: Vec<String> = Vec::new();
    let mut task_stack: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut in_message = false;
    loop {
        let ev = reader.read_event().expect("well-formed XML");
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).expect("utf8 name");
                let attr = |k: &str| {
                    e.attributes()
                        .filter_map(|a| a.ok())
                        .find(|a| a.key.as_ref() == k.as_bytes())
                        .map(|a| a.unescape_value().expect("attr").into_owned())
                };
                let empty = matches!(ev, Event::Empty(_));
                match name.as_str() {
                    "task" | "rootTask" => {
                        let id = attr("taskId").expect("taskId");
                        p.order.push((id.clone(), task_stack.len()));
                        p.tasks.insert(
                            id.clone(),
                            TaskCounts {
                                parent: attr("parentTaskId"),
                                depth: task_stack.len(),
                                ..Default::default()
                            },
                        );
                        task_stack.push(id);
                    }
                    "message" => {
                        p.messages += 1;
                        if attr("isTruncated").as_deref() == Some("true") {
                            p.truncated += 1;
                        }
                        if let Some(t) = task_stack.last().and_then(|id| p.tasks.get_mut(id)) {
                            t.messages += 1;
                        }
                        text.clear();
                        in_message = !empty;
                        if empty {
                            p.texts.push(String::new());
                        }
                    }
                    "action" => {
                        p.actions += 1;
                        if let Some(t) = task_stack.last().and_then(|id| p.tasks.get_mut(id)) {
                            t.actions += 1;
                        }
                    }
                    "conversation" if attr("rootTaskId").is_some() => {
                        p.conversations.push((
                            attr("rootTaskId").expect("root"),
                            attr("taskCount").expect("count").parse().expect("number"),
                        ));
                    }
                    "dateRange" => {
                        if let Some(s) = attr("start") {
                            p.summary.insert("start".into(), s);
                        }
                        if let Some(s) = attr("end") {
                            p.summary.insert("end".into(), s);
                        }
                    }
                    _ => {}
                }
                if !empty {
                    stack.push(name);
                }
            }
            Event::Text(ref t) => {
                let s = t.decode().expect("text").into_owned();
                let s = quick_xml::escape::unescape(&s)
                    .expect("unescape")
                    .into_owned();
                handle_text(&mut p, &stack, &task_stack, &s, in_message, &mut text);
            }
            Event::GeneralRef(ref r) => {
                let name = r.decode().expect("ref").into_owned();
                let s = match name.as_str() {
                    "amp" => "&".to_owned(),
                    "lt" => "<".to_owned(),
                    "gt" => ">".to_owned(),
                    "quot" => "\"".to_owned(),
                    "apos" => "'".to_owned(),
                    n if n.starts_with("#x") => {
                        char::from_u32(u32::from_str_radix(&n[2..], 16).expect("hex"))
                            .expect("char")
                            .to_string()
                    }
                    n if n.starts_with('#') => char::from_u32(n[1..].parse().expect("dec"))
                        .expect("char")
                        .to_string(),
                    other => panic!("unknown entity {other}"),
                };
                handle_text(&mut p, &stack, &task_stack, &s, in_message, &mut text);
            }
            Event::End(ref e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).expect("utf8");
                stack.pop();
                match name.as_str() {
                    "task" | "rootTask" => {
                        task_stack.pop();
                    }
                    "message" => {
                        in_message = false;
                        p.texts.push(std::mem::take(&mut text));
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    p
}

fn handle_text(
    p: &mut Parsed,
    stack: &[String],
    task_stack: &[String],
    s: &str,
    in_message: bool,
    text: &mut String,
) {
    if in_message {
        text.push_str(s);
        return;
    }
    let Some(el) = stack.last() else { return };
    let in_metadata = stack.len() >= 2 && stack[stack.len() - 2] == "metadata";
    if in_metadata {
        if let Some(t) = task_stack.last().and_then(|id| p.tasks.get_mut(id)) {
            match el.as_str() {
                "messageCount" => t.message_count = s.trim().parse().expect("count"),
                "actionCount" => t.action_count = s.trim().parse().expect("count"),
                _ => {}
            }
        }
    }
    if stack.len() >= 2 && stack[stack.len() - 2] == "summary" {
        p.summary
            .entry(el.clone())
            .and_modify(|v| v.push_str(s))
            .or_insert_with(|| s.to_owned());
    }
}
