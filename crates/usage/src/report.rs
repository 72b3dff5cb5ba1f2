//! Aggregation of the usage records into a report: its options, its rows and their shape.
//!
//! The JSON shape (camelCase) is the one the binding, the CLI, the MCP tools and a web view
//! read: `{group, timeZone, since, until, costMode, prices, rows, totals, noRecordedCost,
//! unpricedModels, notes, sync}`; every row is `{key, label, sums…, files, models?,
//! conversation?}` (see [`UsageRow`]).

use crate::prices::PriceTable;
use crate::records::{FileOpKind, Outcome, RecordKind, UsageRecord};
use crate::zone::{date_text, parse_date, DayCache, Zone};
use crate::{SyncReport, UsageError, UsageIndex};
use roo_condense::calculate_api_cost_for_protocol;
use roo_store::task_store::TaskStore;
use serde::Serialize;
use std::collections::HashMap;

mod conversation;

pub use conversation::{ConversationDetail, ConversationTask, ShareRow};

/// What the rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Group {
    Daily,
    Weekly,
    Monthly,
    Tasks,
    Conversations,
    Models,
    Workspaces,
    Hosts,
    Modes,
}

impl Group {
    pub fn parse(s: &str) -> Result<Group, UsageError> {
        Ok(match s {
            "daily" | "day" => Group::Daily,
            "weekly" | "week" => Group::Weekly,
            "monthly" | "month" => Group::Monthly,
            "tasks" | "task" => Group::Tasks,
            "conversations" | "conversation" => Group::Conversations,
            "models" | "model" => Group::Models,
            "workspaces" | "workspace" => Group::Workspaces,
            "hosts" | "host" => Group::Hosts,
            "modes" | "mode" => Group::Modes,
            other => {
                return Err(UsageError::InvalidArgument(format!(
                    "unknown report {other:?}: daily, weekly, monthly, tasks, conversations, models, workspaces, hosts or modes"
                )))
            }
        })
    }
}

/// Which cost a record counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum CostMode {
    /// What the extension recorded (0 where it recorded nothing).
    Recorded,
    /// From the tokens, with the extension's cost functions and the price table.
    Calculate,
    /// Recorded, else calculated.
    Auto,
}

impl CostMode {
    pub fn parse(s: &str) -> Result<CostMode, UsageError> {
        Ok(match s {
            "recorded" | "display" => CostMode::Recorded,
            "calculate" => CostMode::Calculate,
            "auto" => CostMode::Auto,
            other => {
                return Err(UsageError::InvalidArgument(format!(
                    "unknown cost mode {other:?}: recorded, calculate or auto"
                )))
            }
        })
    }
}

/// The options of a report.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    pub group: Group,
    pub zone: Zone,
    /// First local day counted (`YYYY-MM-DD`), inclusive.
    pub since: Option<String>,
    /// Last local day counted, inclusive.
    pub until: Option<String>,
    pub cost_mode: CostMode,
    pub prices: PriceTable,
    /// Per-model sums in each row.
    pub breakdown: bool,
    /// Only tasks of this workspace (compared as the handle compares workspaces).
    pub workspace: Option<String>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            group: Group::Daily,
            zone: Zone::utc(),
            since: None,
            until: None,
            cost_mode: CostMode::Auto,
            prices: PriceTable::bundled(),
            breakdown: false,
            workspace: None,
        }
    }
}

/// Token and cost sums.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sums {
    /// API requests (condense operations are not requests; their cost is in `cost`).
    pub requests: u64,
    pub tokens_in: f64,
    pub tokens_out: f64,
    pub cache_writes: f64,
    pub cache_reads: f64,
    /// Input, output and cache tokens, each counted once (records whose `tokensIn` already
    /// holds the cache tokens do not add them again).
    pub total_tokens: f64,
    /// USD, by the report's cost mode.
    pub cost: f64,
    /// Requests the user cancelled (counted with what they recorded, as the extension does).
    pub cancelled: u64,
    /// Requests whose stream failed (counted likewise).
    pub failed: u64,
    /// Requests counted whose record holds no cost.
    pub without_cost: u64,
}

impl Sums {
    fn add(&mut self, r: &UsageRecord, cost: f64, cost_known: bool) {
        if r.kind != RecordKind::Condense {
            self.requests += 1;
        }
        self.tokens_in += r.tokens_in;
        self.tokens_out += r.tokens_out;
        self.cache_writes += r.cache_writes;
        self.cache_reads += r.cache_reads;
        self.total_tokens += r.tokens_in + r.tokens_out;
        if !r.input_includes_cache {
            self.total_tokens += r.cache_writes + r.cache_reads;
        }
        self.cost += cost;
        match r.outcome {
            Outcome::Completed => {}
            Outcome::Cancelled => self.cancelled += 1,
            Outcome::Failed => self.failed += 1,
        }
        if !cost_known {
            self.without_cost += 1;
        }
    }

    fn merge(&mut self, o: &Sums) {
        self.requests += o.requests;
        self.tokens_in += o.tokens_in;
        self.tokens_out += o.tokens_out;
        self.cache_writes += o.cache_writes;
        self.cache_reads += o.cache_reads;
        self.total_tokens += o.total_tokens;
        self.cost += o.cost;
        self.cancelled += o.cancelled;
        self.failed += o.failed;
        self.without_cost += o.without_cost;
    }
}

/// File operations of tool calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileOps {
    pub reads: u64,
    pub writes: u64,
    pub edits: u64,
    pub creates: u64,
    pub deletes: u64,
    /// Lines written or changed, where the records hold them.
    pub lines: u64,
}

impl FileOps {
    fn add(&mut self, kind: FileOpKind, lines: Option<u32>) {
        match kind {
            FileOpKind::Read => self.reads += 1,
            FileOpKind::Write => self.writes += 1,
            FileOpKind::Edit => self.edits += 1,
            FileOpKind::Create => self.creates += 1,
            FileOpKind::Delete => self.deletes += 1,
        }
        self.lines += u64::from(lines.unwrap_or(0));
    }

    fn merge(&mut self, o: &FileOps) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.edits += o.edits;
        self.creates += o.creates;
        self.deletes += o.deletes;
        self.lines += o.lines;
    }
}

/// One model's sums within a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRow {
    pub model: String,
    #[serde(flatten)]
    pub sums: Sums,
}

/// One row of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    /// The group's key: `YYYY-MM-DD` (a day; a week by its Monday), `YYYY-MM`, a task id, a root
    /// task id, a model, a workspace, a host or a mode (`unknown` / `none` when not recorded).
    pub key: String,
    /// The title of a task (`tasks`) or of a conversation's root task (`conversations`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(flatten)]
    pub sums: Sums,
    /// Tasks with at least one record in the row.
    pub tasks: u64,
    pub files: FileOps,
    /// Per-model sums (with `breakdown`), most expensive first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<ModelRow>>,
    /// For `conversations`: the tasks of the conversation and the share of each task and mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ConversationDetail>,
}

/// Where the prices of `calculate` came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PricesInfo {
    /// The bundled table's date.
    pub updated: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// A task that recorded no cost for some of its requests.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NoCostTask {
    pub task_id: String,
    pub requests: u64,
}

/// A report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    pub group: Group,
    pub time_zone: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    pub cost_mode: CostMode,
    pub prices: PricesInfo,
    pub rows: Vec<UsageRow>,
    pub totals: UsageRow,
    /// Tasks with requests that recorded no cost (in range), with how many.
    pub no_recorded_cost: Vec<NoCostTask>,
    /// Models of counted requests that the price table does not know (`calculate`, `auto`).
    pub unpriced_models: Vec<String>,
    /// How the figures were counted.
    pub notes: Vec<String>,
    /// What the index read again before this report.
    pub sync: SyncReport,
}

/// A key of a group while aggregating (no string built per record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key<'a> {
    Num(i64),
    Text(&'a str),
}

#[derive(Default)]
struct Acc<'a> {
    sums: Sums,
    files: FileOps,
    tasks: u64,
    last_task: Option<usize>,
    models: Vec<(&'a str, Sums)>,
}

impl<'a> Acc<'a> {
    fn see_task(&mut self, t: usize) {
        if self.last_task != Some(t) {
            self.tasks += 1;
            self.last_task = Some(t);
        }
    }
}

/// The rows being summed: a record of a task usually falls in the row of the record before it
/// (records are in time order), which is then found without hashing its key.
#[derive(Default)]
struct Groups<'a> {
    slots: Vec<(Key<'a>, Acc<'a>)>,
    index: HashMap<Key<'a>, usize>,
    last: Option<(Key<'a>, usize)>,
}

impl<'a> Groups<'a> {
    fn get(&mut self, key: Key<'a>) -> &mut Acc<'a> {
        let at = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let n = self.slots.len();
                let i = *self.index.entry(key).or_insert(n);
                if i == n {
                    self.slots.push((key, Acc::default()));
                }
                self.last = Some((key, i));
                i
            }
        };
        &mut self.slots[at].1
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
    task: &'a roo_state::ConversationSkeleton,
    root: &'a str,
) -> Key<'a> {
    match group {
        Group::Daily => Key::Num(day),
        // 1970-01-01 was a Thursday: the Monday on or before `day`.
        Group::Weekly => Key::Num(day - (day + 3).rem_euclid(7)),
        Group::Monthly => {
            let (y, m, _) = roo_js::date::civil_from_days(day);
            Key::Num(y * 12 + i64::from(m) - 1)
        }
        Group::Tasks => Key::Text(&task.task_id),
        Group::Conversations => Key::Text(root),
        Group::Models => Key::Text(r.and_then(|r| r.model.as_deref()).unwrap_or("unknown")),
        Group::Workspaces => Key::Text(task.metadata.workspace.as_deref().unwrap_or("none")),
        Group::Hosts => Key::Text(&task.metadata.source),
        Group::Modes => Key::Text(r.and_then(|r| r.mode.as_deref()).unwrap_or("unknown")),
    }
}

fn key_text(group: Group, key: Key<'_>) -> String {
    match (group, key) {
        (Group::Monthly, Key::Num(n)) => {
            format!("{:04}-{:02}", n.div_euclid(12), n.rem_euclid(12) + 1)
        }
        (_, Key::Num(day)) => date_text(day),
        (_, Key::Text(t)) => t.to_owned(),
    }
}

fn day_bound(text: Option<&str>, what: &str) -> Result<Option<i64>, UsageError> {
    text.map(|t| {
        parse_date(t).ok_or_else(|| {
            UsageError::InvalidArgument(format!("--{what} takes a date YYYY-MM-DD, not {t:?}"))
        })
    })
    .transpose()
}

/// Build the report of `opts` over the records `index` holds for `store`'s tasks.
/// What one pass over a range of the store's tasks reads.
struct Pass<'a> {
    skeletons: &'a [roo_state::ConversationSkeleton],
    index: &'a UsageIndex,
    opts: &'a ReportOptions,
    since: Option<i64>,
    until: Option<i64>,
    roots: &'a [String],
    ws: Option<&'a roo_state::hierarchy::WorkspaceQuery>,
}

/// The sums of one range of tasks.
#[derive(Default)]
struct Partial<'a> {
    groups: Groups<'a>,
    totals: Acc<'a>,
    unpriced: Vec<String>,
    no_cost: Vec<NoCostTask>,
    task_costs: Vec<(usize, Sums)>,
}

impl<'a> Acc<'a> {
    /// Adds the sums of another range's row (its tasks are other tasks).
    fn absorb(&mut self, o: Acc<'a>) {
        self.sums.merge(&o.sums);
        self.files.merge(&o.files);
        self.tasks += o.tasks;
        for (model, sums) in o.models {
            match self.models.iter_mut().find(|(m, _)| *m == model) {
                Some((_, s)) => s.merge(&sums),
                None => self.models.push((model, sums)),
            }
        }
    }
}

impl<'a> Partial<'a> {
    /// `self` followed by `later`, the range after it.
    fn merged(mut self, later: Partial<'a>) -> Partial<'a> {
        for (key, acc) in later.groups.slots {
            match self.groups.index.get(&key) {
                Some(&i) => self.groups.slots[i].1.absorb(acc),
                None => {
                    self.groups.index.insert(key, self.groups.slots.len());
                    self.groups.slots.push((key, acc));
                }
            }
        }
        self.totals.absorb(later.totals);
        for model in later.unpriced {
            if !self.unpriced.contains(&model) {
                self.unpriced.push(model);
            }
        }
        self.no_cost.extend(later.no_cost);
        self.task_costs.extend(later.task_costs);
        self
    }
}

impl<'a> Pass<'a> {
    /// The sums of the tasks at `range` of the store.
    fn sum(&self, range: std::ops::Range<usize>) -> Partial<'a> {
        let (opts, since, until) = (self.opts, self.since, self.until);
        let mut days = DayCache::new(&opts.zone);
        let mut p = Partial::default();
        let skeletons: &'a [roo_state::ConversationSkeleton] = self.skeletons;
        for t in range {
            let Some(task) = skeletons.get(t) else {
                continue;
            };
            if let Some(q) = self.ws {
                if !task
                    .metadata
                    .workspace
                    .as_deref()
                    .is_some_and(|w| q.matches(w))
                {
                    continue;
                }
            }
            let Some(usage) = self.index.task_at(t, &task.task_id) else {
                continue;
            };
            let root = self.roots.get(t).map_or("", String::as_str);
            let mut task_sums = Sums::default();
            let per_task = opts.group == Group::Conversations;
            let mut missing = 0u64;
            let mut counted = false;
            for r in &usage.records {
                let day = days.day(r.ts);
                if since.is_some_and(|s| day < s) || until.is_some_and(|u| day > u) {
                    continue;
                }
                if r.cost.is_none() && r.kind != RecordKind::Condense {
                    missing += 1;
                }
                let (cost, known) = cost_of(r, opts.cost_mode, &opts.prices, day, &mut p.unpriced);
                let acc = p.groups.get(key_of(opts.group, day, Some(r), task, root));
                acc.sums.add(r, cost, known);
                acc.see_task(t);
                if opts.breakdown {
                    let model = r.model.as_deref().unwrap_or("unknown");
                    match acc.models.iter_mut().find(|(m, _)| *m == model) {
                        Some((_, s)) => s.add(r, cost, known),
                        None => {
                            let mut s = Sums::default();
                            s.add(r, cost, known);
                            acc.models.push((model, s));
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
            }
            for op in &usage.file_ops {
                let day = days.day(op.ts);
                if since.is_some_and(|s| day < s) || until.is_some_and(|u| day > u) {
                    continue;
                }
                // A file operation belongs to no request: by model or mode, it is in the totals only.
                if !matches!(opts.group, Group::Models | Group::Modes) {
                    let acc = p.groups.get(key_of(opts.group, day, None, task, root));
                    acc.files.add(op.kind, op.lines);
                    acc.see_task(t);
                }
                p.totals.files.add(op.kind, op.lines);
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
        p
    }
}

pub fn build(
    store: &TaskStore,
    index: &UsageIndex,
    opts: &ReportOptions,
) -> Result<UsageReport, UsageError> {
    let since = day_bound(opts.since.as_deref(), "since")?;
    let until = day_bound(opts.until.as_deref(), "until")?;
    let skeletons = store.skeletons();
    // Only a conversations report needs each task's root.
    let roots = if opts.group == Group::Conversations {
        conversation::roots(skeletons)
    } else {
        Vec::new()
    };
    let ws = opts
        .workspace
        .as_deref()
        .map(roo_state::hierarchy::WorkspaceQuery::new);
    let pass = Pass {
        skeletons,
        index,
        opts,
        since,
        until,
        roots: &roots,
        ws: ws.as_ref(),
    };
    // The two halves of the store are summed at once, then merged in order: each half's rows
    // come out as if summed alone (a task's records never straddle the halves).
    let mid = skeletons.len() / 2;
    let (first, second) = rayon::join(|| pass.sum(0..mid), || pass.sum(mid..skeletons.len()));
    let Partial {
        groups,
        mut totals,
        unpriced,
        no_cost,
        task_costs,
    } = first.merged(second);
    // Every record is in exactly one row: the totals are the rows' sums.
    for (_, acc) in &groups.slots {
        totals.sums.merge(&acc.sums);
    }
    let mut rows: Vec<UsageRow> = groups
        .slots
        .into_iter()
        .map(|(k, acc)| row_of(opts, k, acc))
        .collect();
    sort_rows(opts.group, &mut rows);
    if opts.group == Group::Conversations {
        conversation::detail(&mut rows, skeletons, &roots, &task_costs);
    }
    if opts.group == Group::Tasks {
        for row in &mut rows {
            if let Some(Ok(s)) = store.header(&row.key) {
                row.label = s.metadata.title.clone();
            }
        }
    }
    Ok(assemble(
        opts,
        rows,
        row_of(opts, Key::Text("total"), totals),
        no_cost,
        unpriced,
    ))
}

fn assemble(
    opts: &ReportOptions,
    rows: Vec<UsageRow>,
    totals: UsageRow,
    no_cost: Vec<NoCostTask>,
    mut unpriced: Vec<String>,
) -> UsageReport {
    unpriced.sort();
    UsageReport {
        group: opts.group,
        time_zone: opts.zone.name().to_owned(),
        since: opts.since.clone(),
        until: opts.until.clone(),
        cost_mode: opts.cost_mode,
        prices: PricesInfo {
            updated: opts.prices.updated.clone(),
            file: opts.prices.override_file.clone(),
        },
        rows,
        totals,
        no_recorded_cost: no_cost,
        unpriced_models: if opts.cost_mode == CostMode::Recorded {
            Vec::new()
        } else {
            unpriced
        },
        notes: notes(opts),
        sync: SyncReport::default(),
    }
}

fn row_of(opts: &ReportOptions, k: Key<'_>, acc: Acc<'_>) -> UsageRow {
    let models = opts.breakdown.then(|| {
        let mut m: Vec<ModelRow> = acc
            .models
            .into_iter()
            .map(|(model, sums)| ModelRow {
                model: model.to_owned(),
                sums,
            })
            .collect();
        m.sort_by(|a, b| {
            b.sums
                .cost
                .total_cmp(&a.sums.cost)
                .then(a.model.cmp(&b.model))
        });
        m
    });
    UsageRow {
        key: key_text(opts.group, k),
        label: None,
        sums: acc.sums,
        tasks: acc.tasks,
        files: acc.files,
        models,
        conversation: None,
    }
}

fn sort_rows(group: Group, rows: &mut [UsageRow]) {
    match group {
        Group::Daily | Group::Weekly | Group::Monthly => rows.sort_by(|a, b| a.key.cmp(&b.key)),
        _ => rows.sort_by(|a, b| {
            b.sums
                .cost
                .total_cmp(&a.sums.cost)
                .then(b.sums.total_tokens.total_cmp(&a.sums.total_tokens))
                .then(a.key.cmp(&b.key))
        }),
    }
}

fn notes(opts: &ReportOptions) -> Vec<String> {
    let mut n = vec![
        "Cancelled and failed requests are counted with the tokens and cost they recorded, as the extension's totals count them.".to_owned(),
        "A condense operation's cost is counted in the cost (it is not a request).".to_owned(),
    ];
    match opts.cost_mode {
        CostMode::Recorded => n.push("Cost as recorded; a request that recorded none counts 0.".into()),
        CostMode::Calculate => n.push(format!(
            "Cost calculated from tokens with the extension's cost functions and the price table of {}.",
            opts.prices.updated
        )),
        CostMode::Auto => n.push("Cost as recorded, else calculated from tokens.".into()),
    }
    n
}

impl Sums {
    /// Add another row's sums (for callers merging reports).
    pub fn merged(mut self, o: &Sums) -> Sums {
        self.merge(o);
        self
    }
}

impl FileOps {
    /// Add another row's file operations.
    pub fn merged(mut self, o: &FileOps) -> FileOps {
        self.merge(o);
        self
    }
}
