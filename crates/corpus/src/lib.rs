//! `roo-corpus`: synthetic Roo Code / Zoo Code task stores of any size, in every format era, with known truth.
//!
//! Used by the hierarchy-reconstruction tests (precision/recall on trees with traps) and by the benchmarks
//! (a 5 000-task store of ≈850 MiB, like a heavy user's). Generation is deterministic for a given
//! [`CorpusSpec`]: a cheap sequential planning pass (forest, eras, workspaces, instructions, traps, byte
//! budgets, timelines, ids) followed by parallel rendering of every task folder.
//!
//! Formats follow `specs/extension-formats.md` §0–4 and §9 (key orders, `ClineMessage`, `newTask` payloads,
//! `api_req_started`, API content blocks, environment details, XML-tool era, parent/child links by era,
//! `history_item.json` and `tasks/_index.json`) and the `{version:2, messages}` wrapper of
//! `specs/users-and-peers.md` §0.
//!
//! [`vocabulary`] writes stores whose tasks share a small vocabulary, with labelled exact phrases
//! (the phrase-search test bed).
//!
//! [`shared`] finds the optional legacy fixtures in `../shared` for the comparison suites.
//!
//! Traps (with [`CorpusSpec::traps`]), as labels in [`TaskTruth::traps`]:
//! * `identical_siblings` — two children of one parent with the same text (parent and both children);
//! * `shared_prefix_192` — two long child instructions sharing their first ≥192 characters;
//! * `escaped_mention` — parent content holds `\\@`, the child `\@`;
//! * `whitespace_variant` — parent content and child text differ only in whitespace;
//! * `html_entity_variant` — `&amp;`/`&lt;`/`&gt;` in the parent, `&`/`<`/`>` in the child;
//! * `parent_deleted` — the parent's folder is absent; truth still names it;
//! * `ui_truncated` (parent) / `parent_ui_truncated` (its children) — the parent's UI file ends right after
//!   its first `newTask` (invalid JSON; API history intact);
//! * `decoy_parent_after_child` — a look-alike parent issues the same instruction after the real child was
//!   created (labels: the real child, the decoy parent and the decoy's own child);
//! * `same_instruction_two_workspaces` — two children with the same text, at about the same time, under
//!   parents in two different workspaces.

#![forbid(unsafe_code)]

mod md5;
mod plan;
mod render;
mod rng;
pub mod shared;
mod text;
mod time;
pub mod vocabulary;

use std::fmt;
use std::fs;
use std::io;
use std::path::Path;
use std::str::FromStr;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Format era of a generated task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Era {
    /// claude-dev / early Cline, Aug–Oct 2024: `claude_messages.json` (before 2024-10-06) or
    /// `ui_messages.json`, `api_req_finished`, `say:"tool"`, API messages without `ts`. No subtasks.
    ClaudeDev2024,
    /// v3.11.11–v3.25: XML tools, `<task>`, `[new_task in 💻 Code mode: '…'] Result:`, `subtask_result`,
    /// `# Current Workspace Directory`, `task_metadata.json`. No stored links.
    StackXml,
    /// v3.3.6–v3.11.10: XML tools, `# Current Working Directory` header, subtask result as `say:"text"`.
    StackXmlOld,
    /// v3.42–v3.48: native `tool_use` (`new_task` with `{mode, message, todos}`), `<user_message>`,
    /// delegation (`Subtask <id> completed.` tool_result). No stored links.
    Native,
    /// v3.49+: as `Native` plus `history_item.json` (`parentTaskId`, `childIds`, delegation fields) and
    /// `tasks/_index.json`.
    HistoryItem,
    /// v3.49+ with the `{version:2, messages}` AI-SDK API-history wrapper (`tool-call`, `tool-result`,
    /// role `tool`, stand-alone reasoning items).
    V2Wrapper,
}

impl Era {
    /// Every era, oldest first.
    pub const ALL: [Era; 6] = [
        Era::ClaudeDev2024,
        Era::StackXmlOld,
        Era::StackXml,
        Era::Native,
        Era::HistoryItem,
        Era::V2Wrapper,
    ];

    /// Short CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Era::ClaudeDev2024 => "claude-dev",
            Era::StackXmlOld => "stack-old",
            Era::StackXml => "stack",
            Era::Native => "native",
            Era::HistoryItem => "history-item",
            Era::V2Wrapper => "v2",
        }
    }

    /// Parses a comma-separated list (`all` or names as accepted by [`FromStr`]).
    pub fn parse_list(s: &str) -> Result<Vec<Era>, String> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part.eq_ignore_ascii_case("all") {
                out.extend(Era::ALL);
            } else {
                out.push(part.parse()?);
            }
        }
        if out.is_empty() {
            return Err("empty era list".into());
        }
        Ok(out)
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Era {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "claude-dev" | "claude-dev-2024" | "claudedev2024" | "cline-2024" => Era::ClaudeDev2024,
            "stack" | "stack-xml" | "stackxml" | "xml" => Era::StackXml,
            "stack-old" | "stack-xml-old" | "stackxmlold" | "xml-old" => Era::StackXmlOld,
            "native" => Era::Native,
            "history-item" | "historyitem" | "history" | "v3.49" => Era::HistoryItem,
            "v2" | "v2-wrapper" | "v2wrapper" => Era::V2Wrapper,
            other => {
                return Err(format!(
                    "unknown era `{other}` (expected all, claude-dev, stack-old, stack, native, history-item, v2)"
                ))
            }
        })
    }
}

/// What to generate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CorpusSpec {
    /// Number of task folders written to disk (deleted-parent traps come on top and are not written).
    pub tasks: usize,
    pub seed: u64,
    /// Eras to use; task counts are balanced across them. Repeating an era weights it. Empty = all.
    pub eras: Vec<Era>,
    /// Approximate total size of the task files; scales every task's byte budget. `None` = natural sizes
    /// (≈190 KB per task on average: 18 % big tasks of 0.5–1.5 MB, the rest 1.5–40 KB).
    pub target_bytes: Option<u64>,
    pub traps: bool,
    /// Leave `parentTaskId`, `childIds`, `delegatedToId` and `completedByChildId` out of
    /// `history_item.json` / `_index.json`.
    pub strip_stored_links: bool,
    /// Number of distinct workspaces (project folders).
    pub workspaces: usize,
}

impl Default for CorpusSpec {
    fn default() -> Self {
        CorpusSpec {
            tasks: 200,
            seed: 42,
            eras: Era::ALL.to_vec(),
            target_bytes: None,
            traps: false,
            strip_stored_links: false,
            workspaces: 12,
        }
    }
}

/// The known truth about one task on disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskTruth {
    pub task_id: String,
    /// The real parent (may be absent from disk for the `parent_deleted` trap).
    pub parent: Option<String>,
    pub era: Era,
    /// Native workspace path, as `HistoryItem.workspace` would hold it.
    pub workspace: String,
    /// Trap labels (see the crate documentation).
    pub traps: Vec<String>,
}

/// The known truth about a generated store (written as `truth.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truth {
    pub tasks: Vec<TaskTruth>,
}

/// Sizes of what was written.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Task folders written.
    pub tasks: usize,
    /// Total bytes of task files (excluding `_index.json` and `truth.json`).
    pub bytes: u64,
    /// Bytes per task, in the order of [`Truth::tasks`].
    pub task_bytes: Vec<u64>,
}

impl Stats {
    /// Share of all bytes held by the largest `fraction` of tasks.
    pub fn top_share(&self, fraction: f64) -> f64 {
        let mut v = self.task_bytes.clone();
        v.sort_unstable_by(|a, b| b.cmp(a));
        let n = ((v.len() as f64 * fraction).round() as usize).min(v.len());
        let top: u64 = v[..n].iter().sum();
        if self.bytes == 0 {
            0.0
        } else {
            top as f64 / self.bytes as f64
        }
    }
}

/// Generates a store under `out_dir` (`tasks/<id>/…`, `tasks/_index.json` when v3.49+ eras are present, and
/// `truth.json`). Existing files with the same names are overwritten; nothing else is removed.
pub fn generate(out_dir: &Path, spec: &CorpusSpec) -> io::Result<Truth> {
    generate_with_stats(out_dir, spec).map(|(t, _)| t)
}

/// [`generate`], also returning sizes.
pub fn generate_with_stats(out_dir: &Path, spec: &CorpusSpec) -> io::Result<(Truth, Stats)> {
    let (workspaces, plans) = plan::plan(spec);
    let tasks_dir = out_dir.join("tasks");
    fs::create_dir_all(&tasks_dir)?;
    let on_disk: Vec<usize> = (0..plans.len()).filter(|&i| !plans[i].deleted).collect();
    let rendered: Vec<render::Rendered> = on_disk
        .par_iter()
        .map(|&i| {
            render::render(
                &tasks_dir,
                &plans[i],
                &plans,
                &workspaces,
                spec.strip_stored_links,
            )
        })
        .collect::<io::Result<_>>()?;

    let mut items: Vec<Value> = rendered
        .iter()
        .filter_map(|r| r.history_item.clone())
        .collect();
    if !items.is_empty() {
        let ts = |v: &Value| v.get("ts").and_then(Value::as_u64).unwrap_or(0);
        items.sort_by_key(|v| std::cmp::Reverse(ts(v)));
        let updated = items.iter().map(ts).max().unwrap_or(0) + 1_500;
        let index = serde_json::json!({"version": 1, "updatedAt": updated, "entries": items});
        fs::write(tasks_dir.join("_index.json"), index.to_string())?;
    }

    let truth = Truth {
        tasks: on_disk
            .iter()
            .map(|&i| {
                let p = &plans[i];
                TaskTruth {
                    task_id: p.id.clone(),
                    parent: p.parent.map(|q| plans[q].id.clone()),
                    era: p.era,
                    workspace: workspaces[p.ws].native.clone(),
                    traps: p.traps.clone(),
                }
            })
            .collect(),
    };
    let json = serde_json::to_vec_pretty(&truth).map_err(io::Error::other)?;
    fs::write(out_dir.join("truth.json"), json)?;
    let task_bytes: Vec<u64> = rendered.iter().map(|r| r.bytes).collect();
    let stats = Stats {
        tasks: task_bytes.len(),
        bytes: task_bytes.iter().sum(),
        task_bytes,
    };
    Ok((truth, stats))
}
