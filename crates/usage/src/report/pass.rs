//! The sums of a report over blocks of the handle's tasks, and the blocks kept between reports.
//!
//! A report is the ordered merge of its blocks: tasks `0..BLOCK`, `BLOCK..2*BLOCK`, … of the
//! handle, each summed alone (a task's records never straddle two blocks). The same options
//! over the same tasks give the same blocks, so the index keeps the last report's blocks
//! ([`Memo`]) and a report after a refresh sums again only the blocks holding a task whose files
//! changed; every report, kept blocks or not, adds the same numbers in the same order.

use super::{
    input_below_cache, Activity, Breakdown, FileOps, Group, HistoryDisagreement, HistoryFigures,
    NoCostTask, ReportOptions, Sums,
};
use crate::activity::{EventKind, HistoryTotals, Totals};
use crate::prices::PriceTable;
use crate::records::TaskUsage;
use crate::records::{RecordKind, UsageRecord};
use crate::zone::{date_text, DayCache};
use crate::UsageIndex;
use roo_condense::calculate_api_cost_for_protocol;
use roo_state::hierarchy::WorkspaceQuery;
use roo_state::ConversationSkeleton;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use super::CostMode;

/// A block as a memo keeps it.
pub(super) type Summed = Arc<Partial<Arc<str>>>;

/// Tasks per block.
pub(super) const BLOCK: usize = 1024;

/// A key of a group: while summing it borrows its text (`&str`, no string built per record); a
/// block kept between reports owns it (`Arc<str>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Key<S> {
    Num(i64),
    Text(S),
}

impl<S: AsRef<str>> Key<S> {
    /// The row key a report shows.
    pub(super) fn text(&self, group: Group) -> String {
        match (group, self) {
            (Group::Monthly, Key::Num(n)) => {
                format!("{:04}-{:02}", n.div_euclid(12), n.rem_euclid(12) + 1)
            }
            (Group::Yearly, Key::Num(y)) => format!("{y:04}"),
            (_, Key::Num(day)) => date_text(*day),
            (_, Key::Text(t)) => t.as_ref().to_owned(),
        }
    }
}

impl Key<&str> {
    fn owned(self) -> Key<Arc<str>> {
        match self {
            Key::Num(n) => Key::Num(n),
            Key::Text(t) => Key::Text(Arc::from(t)),
        }
    }
}

/// The sums of one row.
#[derive(Clone)]
pub(super) struct Acc<S> {
    pub(super) sums: Sums,
    pub(super) activity: Activity,
    pub(super) files: FileOps,
    pub(super) tasks: u64,
    last_task: Option<usize>,
    pub(super) models: Vec<(S, Sums)>,
}

impl<S> Default for Acc<S> {
    fn default() -> Self {
        Acc {
            sums: Sums::default(),
            activity: Activity::default(),
            files: FileOps::default(),
            tasks: 0,
            last_task: None,
            models: Vec::new(),
        }
    }
}

impl<S: Clone + PartialEq> Acc<S> {
    fn see_task(&mut self, t: usize) {
        if self.last_task != Some(t) {
            self.tasks += 1;
            self.last_task = Some(t);
        }
    }

    /// Adds the sums of another block's row (its tasks are other tasks).
    fn absorb(&mut self, o: &Acc<S>) {
        self.sums.merge(&o.sums);
        self.activity.merge(&o.activity);
        self.files.merge(&o.files);
        self.tasks += o.tasks;
        for (model, sums) in &o.models {
            match self.models.iter_mut().find(|(m, _)| m == model) {
                Some((_, s)) => s.merge(sums),
                None => self.models.push((model.clone(), *sums)),
            }
        }
    }
}

impl Acc<&str> {
    fn owned(self) -> Acc<Arc<str>> {
        Acc {
            sums: self.sums,
            activity: self.activity,
            files: self.files,
            tasks: self.tasks,
            last_task: None,
            models: self
                .models
                .into_iter()
                .map(|(m, s)| (Arc::from(m), s))
                .collect(),
        }
    }
}

/// The rows being summed: a record of a task usually falls in the row of the record before it
/// (records are in time order), which is then found without hashing its key.
pub(super) struct Groups<S> {
    pub(super) slots: Vec<(Key<S>, Acc<S>)>,
    index: HashMap<Key<S>, usize>,
    last: Option<(Key<S>, usize)>,
}

impl<S> Default for Groups<S> {
    fn default() -> Self {
        Groups {
            slots: Vec::new(),
            index: HashMap::new(),
            last: None,
        }
    }
}

impl<S: Clone + Eq + Hash> Groups<S> {
    fn get(&mut self, key: Key<S>) -> &mut Acc<S> {
        let at = match &self.last {
            Some((k, i)) if *k == key => *i,
            _ => {
                let n = self.slots.len();
                let i = *self.index.entry(key.clone()).or_insert(n);
                if i == n {
                    self.slots.push((key.clone(), Acc::default()));
                }
                self.last = Some((key, i));
                i
            }
        };
        &mut self.slots[at].1
    }
}

/// The sums of a range of tasks: one block, or the merge of every block.
pub(super) struct Partial<S> {
    pub(super) groups: Groups<S>,
    pub(super) totals: Acc<S>,
    pub(super) unpriced: Vec<String>,
    pub(super) no_cost: Vec<NoCostTask>,
    /// Per task (by position in the handle), for a conversations report.
    pub(super) task_costs: Vec<(usize, Sums)>,
    pub(super) history: Vec<HistoryDisagreement>,
    pub(super) input_below_cache: u64,
    /// Records in range refused (see `records::record_problem`), and why for the first few.
    pub(super) refused: u64,
    pub(super) refused_why: Vec<String>,
}

/// Refused records whose reason a report repeats.
const REFUSED_SHOWN: usize = 3;

impl<S> Default for Partial<S> {
    fn default() -> Self {
        Partial {
            groups: Groups::default(),
            totals: Acc::default(),
            unpriced: Vec::new(),
            no_cost: Vec::new(),
            task_costs: Vec::new(),
            history: Vec::new(),
            input_below_cache: 0,
            refused: 0,
            refused_why: Vec::new(),
        }
    }
}

impl Partial<Arc<str>> {
    /// Adds `later`, the block after the ones merged so far.
    fn absorb(&mut self, later: &Partial<Arc<str>>) {
        for (key, acc) in &later.groups.slots {
            match self.groups.index.get(key) {
                Some(&i) => self.groups.slots[i].1.absorb(acc),
                None => {
                    self.groups
                        .index
                        .insert(key.clone(), self.groups.slots.len());
                    self.groups.slots.push((key.clone(), acc.clone()));
                }
            }
        }
        self.totals.absorb(&later.totals);
        for model in &later.unpriced {
            if !self.unpriced.contains(model) {
                self.unpriced.push(model.clone());
            }
        }
        self.no_cost.extend_from_slice(&later.no_cost);
        self.task_costs.extend_from_slice(&later.task_costs);
        self.history.extend_from_slice(&later.history);
        self.input_below_cache += later.input_below_cache;
        self.refused += later.refused;
        let room = REFUSED_SHOWN.saturating_sub(self.refused_why.len());
        self.refused_why
            .extend(later.refused_why.iter().take(room).cloned());
    }
}

impl Partial<&str> {
    /// The block as the memo keeps it (its rows need no index: merging builds its own).
    fn owned(self) -> Partial<Arc<str>> {
        Partial {
            groups: Groups {
                slots: self
                    .groups
                    .slots
                    .into_iter()
                    .map(|(k, a)| (k.owned(), a.owned()))
                    .collect(),
                index: HashMap::new(),
                last: None,
            },
            totals: self.totals.owned(),
            unpriced: self.unpriced,
            no_cost: self.no_cost,
            task_costs: self.task_costs,
            history: self.history,
            input_below_cache: self.input_below_cache,
            refused: self.refused,
            refused_why: self.refused_why,
        }
    }
}

/// Blocks of a report summed again, and blocks taken as the last report left them.
#[derive(Debug, Clone, Copy, Default)]
pub struct BlockCounts {
    pub summed: u32,
    pub kept: u32,
}

impl BlockCounts {
    /// The counts of two passes.
    pub fn plus(self, o: BlockCounts) -> BlockCounts {
        BlockCounts {
            summed: self.summed + o.summed,
            kept: self.kept + o.kept,
        }
    }
}

/// The blocks of the last report and the options they were summed with.
pub(crate) struct Memo {
    /// The options' fingerprint ([`memo_key`]).
    key: String,
    /// The handle's layout ([`roo_store::task_store::TaskStore::layout`]) they were summed over.
    layout: u64,
    blocks: Vec<Option<Summed>>,
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memo")
            .field("key", &self.key)
            .field("layout", &self.layout)
            .field("kept", &self.blocks.iter().filter(|b| b.is_some()).count())
            .field("blocks", &self.blocks.len())
            .finish()
    }
}

impl Memo {
    /// A memo of the blocks of options `key` over the handle's layout `layout`: those given,
    /// the others to be summed.
    pub(super) fn of(key: String, layout: u64, blocks: Vec<Option<Summed>>) -> Memo {
        Memo {
            key,
            layout,
            blocks,
        }
    }

    /// The options' fingerprint, the layout, and every block when the memo holds them all.
    pub(super) fn whole(&self) -> Option<(&str, u64, Vec<Summed>)> {
        let blocks: Option<Vec<_>> = self.blocks.iter().cloned().collect();
        Some((&self.key, self.layout, blocks?))
    }

    /// The blocks it does not hold: the ones a report sums.
    pub(super) fn missing(&self) -> impl Iterator<Item = usize> + '_ {
        (self.blocks.iter().enumerate())
            .filter(|(_, b)| b.is_none())
            .map(|(k, _)| k)
    }

    /// Forget the blocks holding the tasks at `positions` (their records were read again).
    pub(crate) fn forget(&mut self, positions: &[usize]) {
        for &p in positions {
            if let Some(b) = self.blocks.get_mut(p / BLOCK) {
                *b = None;
            }
        }
    }
}

/// What identifies the options of kept blocks; `None`: this report keeps none. A conversations
/// report depends on every task's root (any relink changes it) and a tasks report has a row per
/// task (its blocks would hold the whole report again): both are summed whole each time.
pub(super) fn memo_key(opts: &ReportOptions) -> Option<String> {
    if matches!(opts.group, Group::Conversations | Group::Tasks) {
        return None;
    }
    Some(format!(
        "{:?}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:x}",
        opts.group,
        opts.zone.name(),
        opts.since,
        opts.until,
        opts.cost_mode,
        opts.breakdown_by(),
        opts.workspace,
        opts.hosts,
        opts.prices.fingerprint(),
    ))
}

/// What one pass over a range of the store's tasks reads.
pub(super) struct Pass<'a> {
    pub(super) skeletons: &'a [ConversationSkeleton],
    pub(super) index: &'a UsageIndex,
    pub(super) opts: &'a ReportOptions,
    pub(super) since: Option<i64>,
    pub(super) until: Option<i64>,
    /// Each task's root (a conversations report) or workspace key (a workspaces report,
    /// [`workspace_key`]), by position.
    pub(super) roots: &'a [String],
    pub(super) ws: Option<&'a WorkspaceQuery>,
}

impl<'a> Pass<'a> {
    /// The sums of every block, taken from `memo` where it holds them for these options and
    /// this layout, merged in order; `memo` then holds every block of this report. Also says how
    /// many blocks were summed again and how many were kept.
    pub(super) fn run(
        &self,
        layout: u64,
        memo: &mut Option<Memo>,
    ) -> (Partial<Arc<str>>, BlockCounts) {
        use rayon::prelude::*;
        let n = self.skeletons.len().div_ceil(BLOCK);
        let key = memo_key(self.opts);
        let kept: Vec<Option<Summed>> = match (memo.take(), &key) {
            (Some(m), Some(k)) if m.key == *k && m.layout == layout && m.blocks.len() == n => {
                m.blocks
            }
            _ => vec![None; n],
        };
        let summed = kept.iter().filter(|b| b.is_none()).count() as u32;
        let counts = BlockCounts {
            summed,
            kept: n as u32 - summed,
        };
        let blocks: Vec<Summed> = kept
            .into_par_iter()
            .enumerate()
            .map(|(b, k)| {
                k.unwrap_or_else(|| {
                    let end = ((b + 1) * BLOCK).min(self.skeletons.len());
                    Arc::new(self.sum(b * BLOCK..end).owned())
                })
            })
            .collect();
        let mut out = Partial::default();
        for b in &blocks {
            out.absorb(b);
        }
        *memo = key.map(|key| Memo {
            key,
            layout,
            blocks: blocks.into_iter().map(Some).collect(),
        });
        (out, counts)
    }

    /// Whether task `task` is one the options count (workspace, hosts).
    fn selected(&self, task: &ConversationSkeleton) -> bool {
        let ws_ok = self.ws.is_none_or(|q| {
            task.metadata
                .workspace
                .as_deref()
                .is_some_and(|w| q.matches(w))
        });
        let hosts = &self.opts.hosts;
        ws_ok && (hosts.is_empty() || hosts.contains(&task.metadata.source))
    }

    fn in_range(&self, day: i64) -> bool {
        !(self.since.is_some_and(|s| day < s) || self.until.is_some_and(|u| day > u))
    }

    /// The sums of the tasks at `range` of the store.
    fn sum(&self, range: std::ops::Range<usize>) -> Partial<&'a str> {
        let mut days = DayCache::new(&self.opts.zone);
        let mut p = Partial::default();
        let skeletons: &'a [ConversationSkeleton] = self.skeletons;
        for t in range {
            let Some(task) = skeletons.get(t).filter(|task| self.selected(task)) else {
                continue;
            };
            let Some(usage) = self.index.task_at(t, &task.task_id) else {
                continue;
            };
            for r in &usage.refused {
                if !self.in_range(days.day(r.ts)) {
                    continue;
                }
                p.refused += 1;
                if p.refused_why.len() < REFUSED_SHOWN {
                    p.refused_why.push(r.why.clone());
                }
            }
            self.sum_records(t, task, usage, &mut days, &mut p);
            self.sum_activity(t, task, usage, &mut days, &mut p);
        }
        p
    }

    /// The requests and condense costs of task `t`.
    fn sum_records(
        &self,
        t: usize,
        task: &'a ConversationSkeleton,
        usage: &'a TaskUsage,
        days: &mut DayCache,
        p: &mut Partial<&'a str>,
    ) {
        let opts = self.opts;
        let root = self.roots.get(t).map_or("", String::as_str);
        let per_task = opts.group == Group::Conversations;
        let breakdown = opts.breakdown_by();
        let mut task_sums = Sums::default();
        let mut missing = 0u64;
        let mut counted = false;
        for r in &usage.records {
            let day = days.day(r.ts);
            if !self.in_range(day) {
                continue;
            }
            if r.cost.is_none() && r.kind != RecordKind::Condense {
                missing += 1;
            }
            if input_below_cache(r) {
                p.input_below_cache += 1;
            }
            let (cost, known) = cost_of(r, opts.cost_mode, &opts.prices, day, &mut p.unpriced);
            let acc = p.groups.get(key_of(opts.group, day, Some(r), task, root));
            acc.sums.add(r, cost, known);
            acc.see_task(t);
            let part = match breakdown {
                Breakdown::None => None,
                Breakdown::Model => Some(r.model.as_deref().unwrap_or("unknown")),
                Breakdown::Mode => Some(r.mode.as_deref().unwrap_or("unknown")),
            };
            if let Some(part) = part {
                match acc.models.iter_mut().find(|(m, _)| *m == part) {
                    Some((_, s)) => s.add(r, cost, known),
                    None => {
                        let mut s = Sums::default();
                        s.add(r, cost, known);
                        acc.models.push((part, s));
                    }
                }
            }
            counted = true;
            if per_task {
                task_sums.add(r, cost, known);
            }
        }
        if counted {
            p.totals.see_task(t);
            if let Some(h) = &usage.history {
                p.history.push(disagreement(&task.task_id, h, usage));
            }
        }
        if missing > 0 {
            p.no_cost.push(NoCostTask {
                task_id: task.task_id.clone(),
                requests: missing,
            });
        }
        if per_task {
            p.task_costs.push((t, task_sums));
        }
    }

    /// The file operations, messages, tool calls and conversation start of task `t`. By model or
    /// mode, a file operation, tool call or command counts in the row of the request the task
    /// made last before it (its first, when none was earlier); the person's messages and the
    /// conversations started belong to no request and are in the totals only.
    fn sum_activity(
        &self,
        t: usize,
        task: &'a ConversationSkeleton,
        usage: &'a TaskUsage,
        days: &mut DayCache,
        p: &mut Partial<&'a str>,
    ) {
        let group = self.opts.group;
        let root = self.roots.get(t).map_or("", String::as_str);
        let by_request = matches!(group, Group::Models | Group::Modes);
        let request = |ts: i64| by_request.then(|| request_at(&usage.records, ts)).flatten();
        for op in &usage.file_ops {
            let day = days.day(op.ts);
            if !self.in_range(day) {
                continue;
            }
            let acc = p.groups.get(key_of(group, day, request(op.ts), task, root));
            acc.files.add(op.kind, op.lines);
            acc.see_task(t);
            p.totals.files.add(op.kind, op.lines);
        }
        // `row`: the activity counts in a row too (not only in the totals).
        let mut add =
            |day: i64, row: bool, r: Option<&'a UsageRecord>, f: &dyn Fn(&mut Activity)| {
                if !self.in_range(day) {
                    return;
                }
                if row {
                    let acc = p.groups.get(key_of(group, day, r, task, root));
                    f(&mut acc.activity);
                    acc.see_task(t);
                }
                f(&mut p.totals.activity);
            };
        // A task with no parent: its opening message is the person's, and a conversation starts.
        if let (None, Some(created)) = (&task.parent_task_id, task.created_at_ms) {
            add(days.day(created), !by_request, None, &|a: &mut Activity| {
                a.user_messages += 1;
                a.conversations += 1;
            });
        }
        for e in &usage.events {
            let own = e.kind != EventKind::UserMessage;
            add(
                days.day(e.ts),
                own || !by_request,
                request(e.ts),
                &|a: &mut Activity| match e.kind {
                    EventKind::UserMessage => a.user_messages += 1,
                    EventKind::ToolCall => a.tool_calls += 1,
                    EventKind::Command => {
                        a.tool_calls += 1;
                        a.commands += 1;
                    }
                },
            );
        }
    }
}

/// The request of `records` made last at or before `ts`, else the first one: whose model and
/// mode a file operation or tool call of that time counts under. Condense operations are not
/// requests.
fn request_at(records: &[UsageRecord], ts: i64) -> Option<&UsageRecord> {
    let requests = || records.iter().filter(|r| r.kind != RecordKind::Condense);
    (requests().filter(|r| r.ts <= ts).max_by_key(|r| r.ts))
        .or_else(|| requests().min_by_key(|r| r.ts))
}

/// A workspace as the extension compares two: separators made `/`, no trailing one, and a Windows
/// path (a drive letter, or a UNC path) in lower case, as Windows compares paths; `none` when
/// the task has none.
pub(super) fn workspace_key(ws: Option<&str>) -> String {
    let Some(ws) = ws.map(str::trim).filter(|w| !w.is_empty()) else {
        return "none".into();
    };
    let b = ws.as_bytes();
    let windows =
        (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':') || ws.starts_with("\\\\");
    let mut key = ws.replace('\\', "/");
    while key.len() > 1 && key.ends_with('/') && !key.ends_with(":/") {
        key.pop();
    }
    if windows {
        key = key.to_lowercase();
    }
    key
}

/// How a task's history item and its records disagree.
fn disagreement(task_id: &str, h: &HistoryTotals, usage: &TaskUsage) -> HistoryDisagreement {
    let sums = Totals::of(&usage.records);
    HistoryDisagreement {
        task_id: task_id.to_owned(),
        fields: h
            .disagreeing(&sums)
            .into_iter()
            .map(str::to_owned)
            .collect(),
        history: HistoryFigures {
            tokens_in: h.tokens_in,
            tokens_out: h.tokens_out,
            cache_writes: h.cache_writes,
            cache_reads: h.cache_reads,
            total_cost: h.cost,
        },
        records: HistoryFigures {
            tokens_in: Some(sums.tokens_in),
            tokens_out: Some(sums.tokens_out),
            cache_writes: Some(sums.cache_writes),
            cache_reads: Some(sums.cache_reads),
            total_cost: Some(sums.cost),
        },
    }
}

/// The cost of a record in `mode`, and whether a cost was found (recorded or priced).
fn cost_of(
    r: &UsageRecord,
    mode: CostMode,
    prices: &PriceTable,
    day: i64,
    unpriced: &mut Vec<String>,
) -> (f64, bool) {
    let calculated = |unpriced: &mut Vec<String>| -> Option<f64> {
        if r.kind == RecordKind::Condense {
            return None;
        }
        let model = r.model.as_deref().unwrap_or("unknown");
        let Some(info) = prices.lookup(model, day) else {
            if !unpriced.iter().any(|m| m == model) {
                unpriced.push(model.to_owned());
            }
            return None;
        };
        let protocol = r
            .protocol
            .as_deref()
            .unwrap_or(if model.contains("claude") {
                "anthropic"
            } else {
                "openai"
            });
        // The Anthropic formula takes the input without cache tokens.
        let input = if protocol != "openai" && r.input_includes_cache {
            (r.tokens_in - r.cache_writes - r.cache_reads).max(0.0)
        } else {
            r.tokens_in
        };
        let c = calculate_api_cost_for_protocol(
            protocol,
            info,
            input,
            r.tokens_out,
            Some(r.cache_writes),
            Some(r.cache_reads),
        );
        Some(c.total_cost)
    };
    match (mode, r.cost) {
        (CostMode::Recorded, c) => (c.unwrap_or(0.0), c.is_some()),
        (CostMode::Auto, Some(c)) => (c, true),
        // A condense operation records its cost and no tokens: that cost in every mode.
        (CostMode::Calculate, Some(c)) if r.kind == RecordKind::Condense => (c, true),
        (_, _) => match calculated(unpriced) {
            Some(c) => (c, true),
            None => (0.0, false),
        },
    }
}

fn key_of<'a>(
    group: Group,
    day: i64,
    r: Option<&'a UsageRecord>,
    task: &'a ConversationSkeleton,
    root: &'a str,
) -> Key<&'a str> {
    match group {
        Group::Daily => Key::Num(day),
        // 1970-01-01 was a Thursday: the Monday on or before `day`.
        Group::Weekly => Key::Num(day - (day + 3).rem_euclid(7)),
        Group::Monthly => {
            let (y, m, _) = roo_js::date::civil_from_days(day);
            Key::Num(y * 12 + i64::from(m) - 1)
        }
        Group::Yearly => Key::Num(roo_js::date::civil_from_days(day).0),
        Group::Tasks => Key::Text(&task.task_id),
        Group::Conversations => Key::Text(root),
        Group::Models => Key::Text(r.and_then(|r| r.model.as_deref()).unwrap_or("unknown")),
        Group::Workspaces => Key::Text(root),
        Group::Hosts => Key::Text(&task.metadata.source),
        Group::Modes => Key::Text(r.and_then(|r| r.mode.as_deref()).unwrap_or("unknown")),
    }
}
