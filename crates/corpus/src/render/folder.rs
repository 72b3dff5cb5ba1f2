//! Writes a rendered task's folder: the UI file (truncated for the trap), the API history (bare array or
//! `{version:2}` wrapper), `task_metadata.json` and `history_item.json`.

use std::fs;
use std::io;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::{num, Gen, Rendered};
use crate::time::ms;
use crate::Era;

/// Writes `name` in `dir` as a host of the task's time did: in place, or beside it and renamed.
fn write_file(dir: &Path, name: &str, bytes: &[u8], by_rename: bool) -> io::Result<()> {
    if !by_rename {
        return fs::write(dir.join(name), bytes);
    }
    let tmp = dir.join(format!(".{name}.tmp"));
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, dir.join(name))
}

impl Gen<'_> {
    /// Writes the task folder `dir`; returns the history item (v3.49+ eras) and the bytes written.
    pub(super) fn finish(mut self, dir: &Path, strip_links: bool) -> io::Result<Rendered> {
        let p = self.p;
        fs::create_dir_all(dir)?;
        // Roo Code writes each task file to a temporary file beside it and renames it over the
        // old one since its release of 2025-06-25 (Zoo and Kilo Code inherit it); before, and in
        // Cline, files are written in place. The folder's modification time tells: a rename
        // moves it.
        let by_rename = p.start_ts >= ms(2025, 6, 25);
        let put = |name: &str, bytes: &[u8]| write_file(dir, name, bytes, by_rename);
        let mut ui = std::mem::take(&mut self.ui);
        let mut bytes = 0u64;
        let ui_file = if p.era == Era::ClaudeDev2024 && p.start_ts < ms(2024, 10, 6) {
            "claude_messages.json"
        } else {
            "ui_messages.json"
        };
        let mut framed = Vec::with_capacity(ui.len() + 2);
        framed.push(b'[');
        match self.trunc_at {
            Some(n) if p.ui_truncated => {
                ui.truncate(n);
                framed.extend_from_slice(&ui);
            }
            _ => {
                framed.extend_from_slice(&ui);
                framed.push(b']');
            }
        }
        drop(ui);
        put(ui_file, &framed)?;
        bytes += framed.len() as u64;
        drop(framed);
        let api = std::mem::take(&mut self.api);
        let mut framed = Vec::with_capacity(api.len() + 32);
        if self.st.v2 {
            framed.extend_from_slice(br#"{"version":2,"messages":["#);
            framed.extend_from_slice(&api);
            framed.extend_from_slice(b"]}");
        } else {
            framed.push(b'[');
            framed.extend_from_slice(&api);
            framed.push(b']');
        }
        drop(api);
        put("api_conversation_history.json", &framed)?;
        bytes += framed.len() as u64;
        drop(framed);
        if self.st.metadata {
            let meta = json!({"files_in_context": std::mem::take(&mut self.files)}).to_string();
            put("task_metadata.json", meta.as_bytes())?;
            bytes += meta.len() as u64;
        }
        let history_item = if self.st.history {
            let v = self.history_item(bytes, strip_links);
            let s = v.to_string();
            put("history_item.json", s.as_bytes())?;
            bytes += s.len() as u64;
            Some(v)
        } else {
            None
        };
        Ok(Rendered {
            history_item,
            bytes,
        })
    }

    /// `history_item.json` (v3.49+): the task's header, with the stored parent/child links unless
    /// `strip_links`; `size` is the bytes of the files written before it.
    fn history_item(&self, size: u64, strip_links: bool) -> Value {
        let p = self.p;
        let mut m = Map::new();
        m.insert("id".into(), p.id.clone().into());
        if let (Some(parent), false) = (p.parent, strip_links) {
            m.insert("parentTaskId".into(), self.all[parent].id.clone().into());
        }
        m.insert("number".into(), 1.into());
        m.insert("ts".into(), p.end_ts.into());
        m.insert("task".into(), p.instruction.trim().into());
        m.insert("tokensIn".into(), self.sums[0].into());
        m.insert("tokensOut".into(), self.sums[1].into());
        m.insert("cacheWrites".into(), self.sums[2].into());
        m.insert("cacheReads".into(), self.sums[3].into());
        m.insert("totalCost".into(), num(self.cost));
        m.insert("size".into(), size.into());
        m.insert("workspace".into(), self.ws.native.clone().into());
        m.insert("mode".into(), p.mode.slug().into());
        m.insert("apiConfigName".into(), self.model.profile.into());
        m.insert(
            "status".into(),
            if p.parent.is_some() {
                "completed"
            } else {
                "active"
            }
            .into(),
        );
        if let Some(&last) = p.kids.last() {
            if !strip_links {
                m.insert("delegatedToId".into(), self.all[last].id.clone().into());
                let ids: Vec<Value> = p
                    .kids
                    .iter()
                    .map(|&k| Value::from(self.all[k].id.clone()))
                    .collect();
                m.insert("childIds".into(), Value::Array(ids));
                m.insert(
                    "completedByChildId".into(),
                    self.all[last].id.clone().into(),
                );
            }
            m.insert(
                "completionResultSummary".into(),
                self.all[last].result.clone().into(),
            );
        }
        Value::Object(m)
    }
}
