//! What a task holds besides its requests: the person's messages and the tool calls and
//! commands of its UI record (per day beside the requests), and the guard of its totals: a
//! `history_item.json` whose tokens or cost disagree with the task's own request records.
//!
//! A task's opening message (its instruction) is counted as a message of the person only in a
//! task with no parent: a subtask's opening message was written by the task that created it. That
//! depends on the task's link, so it is decided when a report is summed, from the handle's header
//! (`report::pass`), not stored here.

use crate::records::{RecordKind, UsageRecord};
use roo_formats::extract::ToolCall;
use roo_formats::read;
use std::path::Path;

/// What happened, besides a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The person answered or gave feedback (`user_feedback`, `user_feedback_diff`).
    UserMessage,
    /// A tool call (a file read, an edit, a search, an MCP call, …) other than a command.
    ToolCall,
    /// A terminal command (`execute_command`): a tool call too.
    Command,
}

/// One event, dated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub ts: i64,
    pub kind: EventKind,
}

/// The events of a task: the person's messages (times from the UI record) and the tool calls the
/// extractor found (a call still in progress is left out), in time order.
pub fn events(user: &[i64], calls: &[ToolCall], default_ts: i64) -> Vec<Event> {
    let mut out: Vec<Event> = user
        .iter()
        .map(|&ts| Event {
            ts,
            kind: EventKind::UserMessage,
        })
        .collect();
    out.extend(
        calls
            .iter()
            .filter(|c| c.status != "in_progress")
            .map(|c| Event {
                ts: c.ts.unwrap_or(default_ts),
                kind: if c.kind == "command" {
                    EventKind::Command
                } else {
                    EventKind::ToolCall
                },
            }),
    );
    out.sort_by_key(|e| e.ts);
    out
}

/// Tokens and cost of a task as one total.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub tokens_in: f64,
    pub tokens_out: f64,
    pub cache_writes: f64,
    pub cache_reads: f64,
    pub cost: f64,
}

impl Totals {
    /// The sums of a task's records as the extension sums them: each field on its own, condense
    /// costs in the cost.
    pub fn of(records: &[UsageRecord]) -> Totals {
        let mut t = Totals::default();
        for r in records {
            if r.kind == RecordKind::Request {
                t.tokens_in += r.tokens_in;
                t.tokens_out += r.tokens_out;
                t.cache_writes += r.cache_writes;
                t.cache_reads += r.cache_reads;
            }
            t.cost += r.cost.unwrap_or(0.0);
        }
        t
    }
}

/// The totals a task's `history_item.json` states (each field as given; `None` where absent).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HistoryTotals {
    pub tokens_in: Option<f64>,
    pub tokens_out: Option<f64>,
    pub cache_writes: Option<f64>,
    pub cache_reads: Option<f64>,
    pub cost: Option<f64>,
}

impl HistoryTotals {
    /// The names of the fields that disagree with `records` (the camelCase names of the file).
    pub fn disagreeing(&self, records: &Totals) -> Vec<&'static str> {
        let pairs = [
            ("tokensIn", self.tokens_in, records.tokens_in),
            ("tokensOut", self.tokens_out, records.tokens_out),
            ("cacheWrites", self.cache_writes, records.cache_writes),
            ("cacheReads", self.cache_reads, records.cache_reads),
            ("totalCost", self.cost, records.cost),
        ];
        pairs
            .into_iter()
            .filter(|(_, stated, summed)| stated.is_some_and(|s| differs(s, *summed)))
            .map(|(name, _, _)| name)
            .collect()
    }
}

/// Two sums of the same numbers differ by more than the rounding of another order of additions.
fn differs(a: f64, b: f64) -> bool {
    (a - b).abs() > 1e-6 * a.abs().max(b.abs()).max(1.0)
}

/// The totals of the task's `history_item.json` in `dir` when one of them disagrees with the sums
/// of its request records (`records`): a repair tool may have estimated them. The records win;
/// a report names the task.
pub fn history_disagreement(dir: &Path, records: &[UsageRecord]) -> Option<HistoryTotals> {
    let item = read::read_history_item(&dir.join("history_item.json")).value?;
    let stated = HistoryTotals {
        tokens_in: item.tokens_in,
        tokens_out: item.tokens_out,
        cache_writes: item.cache_writes,
        cache_reads: item.cache_reads,
        cost: item.total_cost,
    };
    let summed = Totals::of(records);
    (!stated.disagreeing(&summed).is_empty()).then_some(stated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_disagrees_beyond_rounding_only() {
        let records = Totals {
            tokens_in: 1000.0,
            tokens_out: 50.0,
            cost: 0.1 + 0.2,
            ..Totals::default()
        };
        let same = HistoryTotals {
            tokens_in: Some(1000.0),
            cost: Some(0.3),
            ..HistoryTotals::default()
        };
        assert!(same.disagreeing(&records).is_empty());
        let estimated = HistoryTotals {
            tokens_in: Some(1200.0),
            tokens_out: Some(50.0),
            cost: Some(0.31),
            ..HistoryTotals::default()
        };
        assert_eq!(estimated.disagreeing(&records), ["tokensIn", "totalCost"]);
    }
}
