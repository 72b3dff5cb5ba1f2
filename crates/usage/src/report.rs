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
use serde::Serialize;
use std::sync::Arc;

mod conversation;
mod pass;

pub(crate) use pass::Memo;

pub use conversation::{ConversationDetail, ConversationTask, ShareRow};

/// What the rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageGroup"))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageCostMode"))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageSums"))]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageNoCostTask"))]
pub struct NoCostTask {
    pub task_id: String,
    pub requests: u64,
}

/// A report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
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
    /// Records in range refused and not counted: tokens or a cost negative, not finite or past
    /// belief (their reasons are in `notes`).
    pub refused_records: u64,
    /// How the figures were counted, and what was refused.
    pub notes: Vec<String>,
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
pub(crate) fn build(
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
    let (
        pass::Partial {
            groups,
            mut totals,
            unpriced,
            no_cost,
            task_costs,
            refused,
            refused_why,
        },
        blocks,
    ) = pass.run(store.layout(), memo);
    // Every record is in exactly one row: the totals are the rows' sums.
    for (_, acc) in &groups.slots {
        totals.sums.merge(&acc.sums);
    }
    let mut rows: Vec<UsageRow> = groups
        .slots
        .into_iter()
        .map(|(k, acc)| row_of(opts, &k, acc))
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
    let mut report = assemble(
        opts,
        rows,
        row_of(opts, &Key::Text(Arc::from("total")), totals),
        no_cost,
        unpriced,
    );
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
        refused_records: 0,
        notes: notes(opts),
        sync: SyncReport::default(),
    }
}

fn row_of(opts: &ReportOptions, k: &Key<Arc<str>>, acc: Acc<Arc<str>>) -> UsageRow {
    let models = opts.breakdown.then(|| {
        let mut m: Vec<ModelRow> = acc
            .models
            .into_iter()
            .map(|(model, sums)| ModelRow {
                model: model.to_string(),
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
        key: k.text(opts.group),
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
