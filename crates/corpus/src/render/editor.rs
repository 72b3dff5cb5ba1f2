//! What the editor shows the model: open tabs, files in context (`task_metadata.json`) and the
//! `<environment_details>` block of each user turn.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::Gen;
use crate::text;
use crate::time::iso;

impl Gen<'_> {
    pub(super) fn abs_path(&self, rel: &str) -> String {
        if self.ws.native.contains('\\') {
            format!("{}\\{}", self.ws.native, rel.replace('/', "\\"))
        } else {
            format!("{}/{}", self.ws.native, rel)
        }
    }

    pub(super) fn touch(&mut self, path: &str) {
        self.tabs.retain(|t| t != path);
        self.tabs.push(path.to_string());
        if self.tabs.len() > 14 {
            self.tabs.remove(0);
        }
    }

    pub(super) fn track_file(&mut self, path: &str, ts: u64, edited: bool) {
        if !self.st.metadata {
            return;
        }
        for f in self.files.iter_mut() {
            if f["path"] == path && f["record_state"] == "active" {
                f["record_state"] = "stale".into();
            }
        }
        self.files.push(json!({
            "path": path,
            "record_state": "active",
            "record_source": if edited { "roo_edited" } else { "read_tool" },
            "roo_read_date": ts,
            "roo_edit_date": if edited { Value::from(ts) } else { Value::Null },
            "user_edit_date": Value::Null,
        }));
    }

    pub(super) fn env_details(&mut self, ts: u64) -> String {
        let st = self.st;
        let mut s = String::with_capacity(1024);
        s.push_str("# VSCode Visible Files\n");
        s.push_str(
            self.tabs
                .last()
                .map_or("(No visible files)", |t| t.as_str()),
        );
        s.push_str("\n\n# VSCode Open Tabs\n");
        if self.tabs.is_empty() {
            s.push_str("(No open tabs)");
        } else {
            s.push_str(&self.tabs.join(if st.tabs_comma { "," } else { "\n" }));
        }
        s.push('\n');
        if st.env_extras && self.rng.chance(0.3) {
            let n = self.rng.between(3, 30);
            let (cmd, out) = text::dev_server(self.ws, &mut self.rng, n);
            let _ = write!(
                s,
                "\n# Actively Running Terminals\n## Terminal 2 (Active)\n### Working Directory: `{}`\n### Original command: `{cmd}`\n### New Output\n{out}",
                self.ws.posix
            );
        }
        if st.env_extras && self.rng.chance(0.1) && !self.tabs.is_empty() {
            let _ = write!(s, "\n# Recently Modified Files\nThese files have been modified since you last accessed them (file was just edited so you may need to re-read it before editing):\n{}\n", self.tabs[0]);
        }
        if st.env_extras {
            let z = self.ws.zone;
            if st.time_iso {
                let _ = write!(s, "\n# Current Time\nCurrent time in ISO 8601 UTC format: {}\nUser time zone: {}, {}\n", iso(ts), z.name, z.utc_label(ts));
            } else {
                let _ = write!(
                    s,
                    "\n# Current Time\n{} ({}, {})\n",
                    z.local_us(ts),
                    z.name,
                    z.utc_label(ts)
                );
            }
            let _ = write!(s, "\n# Current Cost\n${:.2}\n", self.cost);
            let _ = write!(
                s,
                "\n# Current Mode\n<slug>{}</slug>\n<name>{}</name>\n<model>{}</model>\n",
                self.p.mode.slug(),
                self.p.mode.name(),
                self.model.id
            );
        }
        if self.first_turn {
            let _ = write!(
                s,
                "\n\n# Current {} Directory ({}) Files\n{}\n",
                if st.working_header {
                    "Working"
                } else {
                    "Workspace"
                },
                self.ws.posix,
                self.ws.files.join("\n")
            );
        }
        let mut out = String::with_capacity(s.len() + 512);
        out.push_str("<environment_details>\n");
        out.push_str(s.trim());
        if st.todos {
            out.push('\n');
            if self.todos.is_empty() {
                out.push_str("You have not created a todo list yet. Create one with `update_todo_list` if your task is complicated or involves multiple steps.");
            } else {
                out.push_str("====\n\nREMINDERS\n\nBelow is your current list of reminders for this task. Keep them updated as you progress.\n\n| # | Content | Status |\n|---|---------|--------|\n");
                for (i, (c, status)) in self.todos.iter().enumerate() {
                    let label = match *status {
                        "completed" => "Completed",
                        "in_progress" => "In Progress",
                        _ => "Pending",
                    };
                    let _ = writeln!(out, "| {} | {} | {} |", i + 1, c, label);
                }
                out.push_str("\n\nIMPORTANT: When task status changes, remember to call the `update_todo_list` tool to update your progress.\n");
            }
        }
        out.push_str("\n</environment_details>");
        out
    }
}
