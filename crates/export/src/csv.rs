//! The task list as CSV (RFC 4180): one row per task, a header row, CRLF line ends, a cell quoted
//! when it holds a comma, a quote, a line break or leading/trailing spaces, quotes doubled.
//! `false` and `0` are written as such; empty cells mean "no value".

use crate::error::{ExportError, Result};
use crate::tree::{created_ms, in_project, last_ms, ProjectFilter};
use crate::xml::Written;
use roo_state::hierarchy::WorkspaceQuery;
use roo_state::skeleton::ConversationSkeleton;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;

/// The columns, in order.
pub const COLUMNS: [&str; 19] = [
    "taskId",
    "parentTaskId",
    "rootTaskId",
    "title",
    "workspace",
    "mode",
    "source",
    "isCompleted",
    "createdAt",
    "lastActivity",
    "messageCount",
    "actionCount",
    "childCount",
    "totalSize",
    "requests",
    "tokensIn",
    "tokensOut",
    "totalCost",
    "parentSource",
];

/// One cell, quoted when needed.
pub fn cell(value: &str) -> Cow<'_, str> {
    let needs =
        value.contains([',', '"', '\n', '\r']) || value.starts_with(' ') || value.ends_with(' ');
    if needs {
        Cow::Owned(format!("\"{}\"", value.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(value)
    }
}

fn number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// A cost in dollars: rounded to the micro-dollar (sums of doubles carry noise such as
/// `0.30950550000000004`), without trailing zeros; empty when no request recorded one (unknown is
/// not zero).
fn cost(t: &roo_state::skeleton::ApiTotalsOut) -> String {
    if t.requests == 0 && t.total_cost == 0.0 {
        return String::new();
    }
    let s = format!("{:.6}", t.total_cost);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

fn gen_err(e: std::io::Error) -> ExportError {
    ExportError::Generation(format!("the CSV could not be written: {e}"))
}

/// Write the task list: the tasks of `project` (all when `None`) whose activity meets the
/// filter's dates, oldest first.
pub fn write_task_list<W: Write>(
    mut sink: W,
    headers: &[ConversationSkeleton],
    project: Option<&str>,
    filter: &ProjectFilter,
) -> Result<(W, Written)> {
    let key = project.map(WorkspaceQuery::new);
    let mut children: HashMap<&str, usize> = HashMap::new();
    for h in headers {
        if let Some(p) = h.parent_task_id.as_deref() {
            *children.entry(p).or_default() += 1;
        }
    }
    let mut rows: Vec<&ConversationSkeleton> = headers
        .iter()
        .filter(|h| key.as_ref().is_none_or(|k| in_project(h, k)))
        .filter(|h| filter.start_ms.is_none_or(|s| last_ms(h) >= s))
        .filter(|h| filter.end_ms.is_none_or(|e| created_ms(h) <= e))
        .filter(|h| {
            filter
                .mode
                .as_deref()
                .is_none_or(|m| h.metadata.mode.as_deref() == Some(m))
        })
        .collect();
    rows.sort_by(|a, b| {
        created_ms(a)
            .cmp(&created_ms(b))
            .then_with(|| a.task_id.cmp(&b.task_id))
    });
    sink.write_all(COLUMNS.join(",").as_bytes())
        .map_err(gen_err)?;
    sink.write_all(b"\r\n").map_err(gen_err)?;
    let mut written = Written::default();
    for h in rows {
        let m = &h.metadata;
        let t = &h.api_totals;
        let values: [String; 19] = [
            h.task_id.clone(),
            h.parent_task_id.clone().unwrap_or_default(),
            h.root_task_id.clone().unwrap_or_default(),
            m.title.clone().unwrap_or_default(),
            m.workspace.clone().unwrap_or_default(),
            m.mode.clone().unwrap_or_default(),
            m.source.clone(),
            h.is_completed.to_string(),
            m.created_at.clone(),
            m.last_activity.clone(),
            m.message_count.to_string(),
            m.action_count.to_string(),
            children
                .get(h.task_id.as_str())
                .copied()
                .unwrap_or(0)
                .to_string(),
            m.total_size.to_string(),
            t.requests.to_string(),
            number(t.tokens_in),
            number(t.tokens_out),
            cost(t),
            h.parent_evidence
                .as_ref()
                .map(|e| e.source.clone())
                .unwrap_or_default(),
        ];
        let line: Vec<Cow<'_, str>> = values.iter().map(|v| cell(v)).collect();
        sink.write_all(line.join(",").as_bytes()).map_err(gen_err)?;
        sink.write_all(b"\r\n").map_err(gen_err)?;
        written.tasks += 1;
        written.messages += m.message_count;
        written.actions += m.action_count;
    }
    Ok((sink, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_are_rounded_and_unknown_is_empty() {
        let mut t = roo_state::skeleton::ApiTotalsOut {
            requests: 3,
            tokens_in: 1.0,
            tokens_out: 1.0,
            cache_writes: 0.0,
            cache_reads: 0.0,
            total_cost: 0.30950550000000004,
        };
        assert_eq!(cost(&t), "0.309506");
        t.total_cost = 0.0;
        assert_eq!(cost(&t), "0");
        t.total_cost = 2.5;
        assert_eq!(cost(&t), "2.5");
        t.requests = 0;
        t.total_cost = 0.0;
        assert_eq!(cost(&t), "");
    }

    #[test]
    fn cells() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("l1\nl2"), "\"l1\nl2\"");
        assert_eq!(cell(" pad"), "\" pad\"");
        assert_eq!(cell("false"), "false");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(0.25), "0.25");
    }
}
