//! `TaskStore.usageReport(options)`: usage and cost reports over the handle's tasks (roo-usage).
//! The handle keeps the usage records of its tasks between calls; a report reads again only the
//! tasks whose files changed since the last one (after a `refresh()`).

use crate::error::{CodedError, ErrorCode};
use crate::job::{Job, Signal};
use crate::task_store::TaskStore;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use roo_usage::prices::PriceTable;
use roo_usage::report::{CostMode, Group, Order, ReportOptions};
use roo_usage::zone::Zone;
use roo_usage::UsageReport;
use std::path::Path;

#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct UsageReportOptions {
    /// The rows (default `daily`; a week is keyed by its Monday).
    #[napi(ts_type = "UsageGroup")]
    pub group: Option<String>,
    /// An IANA name (`Europe/Paris`), `UTC` or a fixed offset (`+02:00`); default the local zone
    /// (`TZ`, else the system's; the report says which).
    pub time_zone: Option<String>,
    /// First local day counted, `YYYY-MM-DD` (inclusive).
    pub since: Option<String>,
    /// Last local day counted, `YYYY-MM-DD` (inclusive).
    pub until: Option<String>,
    /// `auto` (default): recorded, else calculated; `recorded`; `calculate`.
    #[napi(ts_type = "UsageCostMode")]
    pub cost_mode: Option<String>,
    /// A price table file (the shape of the bundled one) whose entries come first.
    pub price_file: Option<String>,
    /// Per-model sums in each row.
    pub breakdown: Option<bool>,
    /// Per-mode sums in each row (`modes`) instead.
    pub by_mode: Option<bool>,
    /// Only tasks of this workspace (a path, or a bare folder name).
    pub workspace: Option<String>,
    /// Only tasks of these hosts (`HostSource`).
    pub hosts: Option<Vec<String>>,
    /// `asc` (default for periods: oldest first) or `desc` (default otherwise: most expensive
    /// first).
    #[napi(ts_type = "UsageOrder")]
    pub order: Option<String>,
    /// Periods only: the last `n` periods that hold usage (the totals are theirs).
    pub last: Option<u32>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Signal>,
}

fn invalid(e: roo_usage::UsageError) -> CodedError {
    CodedError::new(ErrorCode::InvalidArgument, e.to_string())
}

impl TryFrom<&mut UsageReportOptions> for ReportOptions {
    type Error = CodedError;

    fn try_from(o: &mut UsageReportOptions) -> Result<Self, CodedError> {
        let (zone, local_zone) = match o.time_zone.as_deref() {
            Some(z) => (Zone::parse(z).map_err(invalid)?, false),
            None => (Zone::local(), true),
        };
        Ok(ReportOptions {
            group: Group::parse(o.group.as_deref().unwrap_or("daily")).map_err(invalid)?,
            zone,
            local_zone,
            since: o.since.take(),
            until: o.until.take(),
            cost_mode: CostMode::parse(o.cost_mode.as_deref().unwrap_or("auto"))
                .map_err(invalid)?,
            prices: match o.price_file.as_deref() {
                Some(f) => PriceTable::with_file(Path::new(f)).map_err(invalid)?,
                None => PriceTable::bundled(),
            },
            breakdown: o.breakdown.unwrap_or(false),
            by_mode: o.by_mode.unwrap_or(false),
            workspace: o.workspace.take(),
            hosts: o.hosts.take().unwrap_or_default(),
            order: o
                .order
                .as_deref()
                .map(Order::parse)
                .transpose()
                .map_err(invalid)?,
            last: o.last.map(|n| n as usize),
        })
    }
}

#[napi]
impl TaskStore {
    /// Usage and cost of the handle's tasks, aggregated as `options` asks (see `UsageReport`).
    #[napi(
        catch_unwind,
        ts_args_type = "options?: UsageReportOptions",
        ts_return_type = "Promise<UsageReport>"
    )]
    pub fn usage_report(
        &self,
        options: Option<UsageReportOptions>,
    ) -> napi::Result<AsyncTask<Job<UsageReport>>> {
        let mut o = options.unwrap_or_default();
        let signal = o.signal.take();
        let parsed = ReportOptions::try_from(&mut o);
        let inner = self.inner.clone();
        let usage = self.usage.clone();
        Ok(Job::spawn(signal, move |_| {
            let opts = parsed?;
            let store = inner.read().map_err(|_| {
                CodedError::new(ErrorCode::Internal, "the task store handle is unusable")
            })?;
            let mut index = usage
                .lock()
                .map_err(|_| CodedError::new(ErrorCode::Internal, "the usage index is unusable"))?;
            index.report(&store, &opts).map_err(invalid)
        }))
    }
}
