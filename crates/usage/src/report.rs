//! Aggregation of the usage records into a report: its options, its rows and their shape.
//!
//! The JSON shape (camelCase) is the one the binding, the CLI, the MCP tools and a web view
//! read: `{group, timeZone, since, until, costMode, prices, rows, totals, noRecordedCost,
//! unpricedModels, notes, sync}`; every row is `{key, label, sums…, files, models?,
//! conversation?}` (see [`UsageRow`]).

use crate::prices::PriceTable;
use crate::records::{FileOpKind, Outcome, RecordKind, UsageRecord};
use crate::zone::{parse_date, Zone};
use crate::{SyncReport, UsageError, UsageIndex};
use pass::{Acc, Key, Pass};
use roo_store::task_store::TaskStore;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

mod conversation;
pub(crate) mod kept_blocks;
mod kinds;
mod pass;

pub(crate) use pass::Memo;

pub use conversation::{ConversationDetail, ConversationTask, ShareRow};
pub use kinds::{Breakdown, CostMode, Group, Order};

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
    /// Per-mode sums in each row instead (`modes`).
    pub by_mode: bool,
    /// Only tasks of this workspace (compared as the handle compares workspaces).
    pub workspace: Option<String>,
    /// Only tasks of these hosts (labels of `roo_formats::host::SOURCES`: a task's `source`);
    /// empty: every host.
    pub hosts: Vec<String>,
    /// The order of the rows (`None`: [`Order::default_for`] the group).
    pub order: Option<Order>,
    /// Periods only: the last `n` periods that hold usage (the totals are theirs).
    pub last: Option<usize>,
    /// The zone was not given but taken from the environment (said in the report).
    pub local_zone: bool,
}

impl ReportOptions {
    /// What the rows are broken down by.
    pub fn breakdown_by(&self) -> Breakdown {
        match (self.by_mode, self.breakdown) {
            (true, _) => Breakdown::Mode,
            (false, true) => Breakdown::Model,
            (false, false) => Breakdown::None,
        }
    }
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
            by_mode: false,
            workspace: None,
            hosts: Vec::new(),
            order: None,
            last: None,
            local_zone: false,
        }
    }
}

/// Token and cost sums.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageSums"))]
pub struct Sums {
    /// API requests (condense operations are not requests; their cost is in `cost`).
    pub requests: u64,
    /// Input tokens neither written to nor read from the cache: `tokensIn`, less the cache
    /// tokens where a record's `tokensIn` holds them (at 0 where it holds fewer). `input`,
    /// `tokensOut`, `cacheWrites` and `cacheReads` add up to `totalTokens`.
    pub input: f64,
    /// Input tokens as recorded: with the cache tokens on records of the OpenAI protocol (and the
    /// Anthropic one from v3.29.5), without them on older ones.
    pub tokens_in: f64,
    pub tokens_out: f64,
    pub cache_writes: f64,
    pub cache_reads: f64,
    /// `input + tokensOut + cacheWrites + cacheReads`: every token counted once.
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
        let input = input_of(r);
        self.input += input;
        self.tokens_in += r.tokens_in;
        self.tokens_out += r.tokens_out;
        self.cache_writes += r.cache_writes;
        self.cache_reads += r.cache_reads;
        self.total_tokens += input + r.tokens_out + r.cache_writes + r.cache_reads;
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
        self.input += o.input;
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

/// The input of a record that was neither written to nor read from the cache.
pub(crate) fn input_of(r: &UsageRecord) -> f64 {
    if r.input_includes_cache {
        (r.tokens_in - r.cache_writes - r.cache_reads).max(0.0)
    } else {
        r.tokens_in
    }
}

/// Whether a record's `tokensIn`, said to hold its cache tokens, holds fewer than them.
pub(crate) fn input_below_cache(r: &UsageRecord) -> bool {
    r.input_includes_cache && r.tokens_in < r.cache_writes + r.cache_reads
}

/// What the person and the tools did in a row, besides requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageActivity"))]
pub struct Activity {
    /// Messages of the person: the opening message of a task with no parent, answers and
    /// feedback.
    pub user_messages: u64,
    /// Conversations (tasks with no parent) started, counted where their first task was created.
    pub conversations: u64,
    /// Tool calls, commands included.
    pub tool_calls: u64,
    /// Terminal commands.
    pub commands: u64,
}

impl Activity {
    fn merge(&mut self, o: &Activity) {
        self.user_messages += o.user_messages;
        self.conversations += o.conversations;
        self.tool_calls += o.tool_calls;
        self.commands += o.commands;
    }
}

/// File operations of tool calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageFileOps"))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageModelRow"))]
pub struct ModelRow {
    pub model: String,
    #[serde(flatten)]
    pub sums: Sums,
}

/// One mode's sums within a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageModeRow"))]
pub struct ModeRow {
    pub mode: String,
    #[serde(flatten)]
    pub sums: Sums,
}

/// One row of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
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
    #[serde(flatten)]
    pub activity: Activity,
    pub files: FileOps,
    /// Per-model sums (with `breakdown`), most expensive first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<ModelRow>>,
    /// Per-mode sums (with `byMode`), most expensive first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modes: Option<Vec<ModeRow>>,
    /// For `conversations`: the tasks of the conversation and the share of each task and mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ConversationDetail>,
}

/// Where the prices of `calculate` came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "UsagePrices"),
    ts(optional_fields)
)]
pub struct PricesInfo {
    /// The bundled table's date.
    pub updated: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// A task that recorded no cost for some of its requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageNoCostTask"))]
pub struct NoCostTask {
    pub task_id: String,
    pub requests: u64,
}

/// A task whose `history_item.json` states totals its request records do not add up to (a repair
/// tool may have estimated them): the report counts the records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "UsageHistoryDisagreement")
)]
pub struct HistoryDisagreement {
    pub task_id: String,
    /// The fields that disagree (`tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads`,
    /// `totalCost`).
    pub fields: Vec<String>,
    /// What `history_item.json` states, field by field (`null` where it states nothing).
    pub history: HistoryFigures,
    /// What the task's request records add up to (what the report counts).
    pub records: HistoryFigures,
}

/// Tokens and cost as a task's history item states them or its records add up to.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageHistoryFigures"))]
pub struct HistoryFigures {
    pub tokens_in: Option<f64>,
    pub tokens_out: Option<f64>,
    pub cache_writes: Option<f64>,
    pub cache_reads: Option<f64>,
    pub total_cost: Option<f64>,
}

/// A report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct UsageReport {
    pub group: Group,
    pub time_zone: String,
    /// The zone was not given: the local one (`TZ`, else the system's).
    pub local_zone: bool,
    pub order: Order,
    /// Periods only: how many of the last periods the report was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<u32>,
    /// Only these hosts' tasks were counted (none: every host).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub hosts: Vec<String>,
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
    /// Tasks whose `history_item.json` totals disagree with their request records (which are
    /// counted).
    pub history_disagreements: Vec<HistoryDisagreement>,
    /// Counted requests whose `tokensIn`, said to hold the cache tokens, holds fewer than them
    /// (their `input` is counted as 0).
    pub input_below_cache: u64,
    /// Records in range refused and not counted: tokens or a cost negative, not finite or past
    /// belief (their reasons are in `notes`).
    pub refused_records: u64,
    /// How the figures were counted, and what was refused.
    pub notes: Vec<String>,
    /// What went wrong on the way without changing the figures: kept records that did not
    /// check out (their tasks were read again from their folders) or could not be written.
    pub warnings: Vec<String>,
    /// What the index read again before this report.
    pub sync: SyncReport,
}

fn day_bound(text: Option<&str>, what: &str) -> Result<Option<i64>, UsageError> {
    text.map(|t| {
        parse_date(t).ok_or_else(|| {
            UsageError::InvalidArgument(format!("--{what} takes a date YYYY-MM-DD, not {t:?}"))
        })
    })
    .transpose()
}

/// Build the report of `opts` over the records `index` holds for `store`'s tasks, summing again
/// only the blocks `memo` does not hold (see [`pass`]); `memo` then holds this report's blocks.
/// With `last`, the report of the last periods that hold usage: the periods of the whole range
/// first, then the report again from the first of the last ones.
pub(crate) fn build(
    store: &TaskStore,
    index: &UsageIndex,
    memo: &mut Option<Memo>,
    opts: &ReportOptions,
) -> Result<(UsageReport, pass::BlockCounts), UsageError> {
    let Some(last) = opts.last else {
        return build_once(store, index, memo, opts);
    };
    if !opts.group.is_time() || last == 0 {
        return Err(UsageError::InvalidArgument(
            "last takes a number of periods (1 or more) of a daily, weekly, monthly or yearly report"
                .into(),
        ));
    }
    let (mut whole, mut blocks) = build_once(store, index, memo, opts)?;
    let mut keys: Vec<&str> = whole.rows.iter().map(|r| r.key.as_str()).collect();
    keys.sort_unstable();
    if keys.len() > last {
        let first = period_start(keys[keys.len() - last]);
        let since = match &opts.since {
            Some(s) if *s > first => s.clone(),
            _ => first,
        };
        let narrowed = ReportOptions {
            since: Some(since),
            last: None,
            ..opts.clone()
        };
        let (r, b) = build_once(store, index, memo, &narrowed)?;
        (whole, blocks) = (r, b.plus(blocks));
    }
    whole.last = u32::try_from(last).ok();
    Ok((whole, blocks))
}

/// The first day of a period's key (`YYYY-MM-DD`, `YYYY-MM`, `YYYY`).
fn period_start(key: &str) -> String {
    match key.len() {
        4 => format!("{key}-01-01"),
        7 => format!("{key}-01"),
        _ => key.to_owned(),
    }
}

fn build_once(
    store: &TaskStore,
    index: &UsageIndex,
    memo: &mut Option<Memo>,
    opts: &ReportOptions,
) -> Result<(UsageReport, pass::BlockCounts), UsageError> {
    let since = day_bound(opts.since.as_deref(), "since")?;
    let until = day_bound(opts.until.as_deref(), "until")?;
    if let (Some(s), Some(u)) = (since, until) {
        if s > u {
            return Err(UsageError::InvalidArgument(format!(
                "the range is reversed: since {} is after until {}",
                opts.since.as_deref().unwrap_or_default(),
                opts.until.as_deref().unwrap_or_default()
            )));
        }
    }
    let skeletons = store.skeletons();
    // Only a conversations report needs each task's root, and a workspaces report each task's
    // workspace as the extension compares two.
    let roots = match opts.group {
        Group::Conversations => conversation::roots(skeletons),
        Group::Workspaces => (skeletons.iter())
            .map(|s| pass::workspace_key(s.metadata.workspace.as_deref()))
            .collect(),
        _ => Vec::new(),
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
    let (mut partial, blocks) = pass.run(store.layout(), memo);
    // Every record is in exactly one row: the totals' sums are the rows' sums.
    for (_, acc) in &partial.groups.slots {
        partial.totals.sums.merge(&acc.sums);
    }
    let slots = std::mem::take(&mut partial.groups.slots);
    let mut rows: Vec<UsageRow> = slots
        .into_iter()
        .map(|(k, acc)| row_of(opts, &k, acc))
        .collect();
    sort_rows(
        opts.group,
        opts.order.unwrap_or(Order::default_for(opts.group)),
        &mut rows,
    );
    if opts.group == Group::Conversations {
        conversation::detail(&mut rows, skeletons, &roots, &partial.task_costs);
    }
    if opts.group == Group::Tasks {
        for row in &mut rows {
            if let Some(Ok(s)) = store.header(&row.key) {
                row.label = s.metadata.title.clone();
            }
        }
    }
    let totals = row_of(
        opts,
        &Key::Text(Arc::from("total")),
        std::mem::take(&mut partial.totals),
    );
    let (refused, refused_why) = (partial.refused, std::mem::take(&mut partial.refused_why));
    let mut report = assemble(opts, rows, totals, partial);
    report.refused_records = refused;
    if refused > 0 {
        report.notes.push(format!(
            "{refused} record{} refused and not counted (tokens or a cost that are negative, not finite or beyond any real request): {}{}",
            if refused == 1 { "" } else { "s" },
            refused_why.join("; "),
            if refused as usize > refused_why.len() { "; …" } else { "" }
        ));
    }
    if opts.cost_mode != CostMode::Recorded {
        report.notes.extend(opts.prices.refused.iter().cloned());
    }
    Ok((report, blocks))
}

fn assemble(
    opts: &ReportOptions,
    rows: Vec<UsageRow>,
    totals: UsageRow,
    partial: pass::Partial<Arc<str>>,
) -> UsageReport {
    let mut unpriced = partial.unpriced;
    unpriced.sort();
    let mut history = partial.history;
    history.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    UsageReport {
        group: opts.group,
        time_zone: opts.zone.name().to_owned(),
        local_zone: opts.local_zone,
        order: opts.order.unwrap_or(Order::default_for(opts.group)),
        last: None,
        hosts: opts.hosts.clone(),
        since: opts.since.clone(),
        until: opts.until.clone(),
        cost_mode: opts.cost_mode,
        prices: PricesInfo {
            updated: opts.prices.updated.clone(),
            file: opts.prices.override_file.clone(),
        },
        rows,
        totals,
        no_recorded_cost: partial.no_cost,
        unpriced_models: if opts.cost_mode == CostMode::Recorded {
            Vec::new()
        } else {
            unpriced
        },
        history_disagreements: history,
        input_below_cache: partial.input_below_cache,
        refused_records: 0,
        notes: notes(opts),
        warnings: Vec::new(),
        sync: SyncReport::default(),
    }
}

fn row_of(opts: &ReportOptions, k: &Key<Arc<str>>, acc: Acc<Arc<str>>) -> UsageRow {
    let by = opts.breakdown_by();
    let mut parts: Vec<(String, Sums)> = acc
        .models
        .into_iter()
        .map(|(part, sums)| (part.to_string(), sums))
        .collect();
    parts.sort_by(|a, b| b.1.cost.total_cmp(&a.1.cost).then(a.0.cmp(&b.0)));
    let (models, modes) = match by {
        Breakdown::None => (None, None),
        Breakdown::Model => (
            Some(
                parts
                    .into_iter()
                    .map(|(model, sums)| ModelRow { model, sums })
                    .collect(),
            ),
            None,
        ),
        Breakdown::Mode => (
            None,
            Some(
                parts
                    .into_iter()
                    .map(|(mode, sums)| ModeRow { mode, sums })
                    .collect(),
            ),
        ),
    };
    UsageRow {
        key: k.text(opts.group),
        label: None,
        sums: acc.sums,
        tasks: acc.tasks,
        activity: acc.activity,
        files: acc.files,
        models,
        modes,
        conversation: None,
    }
}

fn sort_rows(group: Group, order: Order, rows: &mut [UsageRow]) {
    if group.is_time() {
        rows.sort_by(|a, b| a.key.cmp(&b.key));
    } else {
        rows.sort_by(|a, b| {
            a.sums
                .cost
                .total_cmp(&b.sums.cost)
                .then(a.sums.total_tokens.total_cmp(&b.sums.total_tokens))
                .then(b.key.cmp(&a.key))
        });
    }
    if order == Order::Desc {
        rows.reverse();
    }
}

fn notes(opts: &ReportOptions) -> Vec<String> {
    let mut n = vec![
        "Input counts the input tokens neither written to nor read from the cache: where a record's tokensIn holds the cache tokens (the OpenAI protocol, the Anthropic one from v3.29.5) they are taken out, so Input + Output + Cache write + Cache read = Total tokens.".to_owned(),
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
