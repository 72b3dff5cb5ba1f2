//! `grepTasks`: every occurrence of a literal or a regular expression in the dialogue of every
//! task (roo-search's `grep`).

use crate::error::{CodedError, ErrorCode};
use crate::job::Job;
use crate::search::SearchDateRange;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use roo_search::grep::{Kind, Kinds};
use roo_search::{GrepOptions, GrepReport};
use std::path::PathBuf;

#[napi(object, object_to_js = false)]
pub struct GrepTasksOptions {
    pub pattern: String,
    /// A regular expression (Rust `regex` syntax, linear time); default: a literal.
    pub regex: Option<bool>,
    pub ignore_case: Option<bool>,
    /// The texts searched; default all four.
    #[napi(ts_type = "GrepKind[]")]
    pub kinds: Option<Vec<String>>,
    /// Lines of the same message before and after each match (default 0, at most 20).
    pub context: Option<u32>,
    /// Matches returned at most (default 1 000, at most 100 000).
    pub max_matches: Option<u32>,
    /// `tasks/` folders; default: every store found on this machine.
    pub tasks_dirs: Option<Vec<String>>,
    /// A workspace path (separators and case normalised) or a bare folder name.
    pub workspace: Option<String>,
    /// Host: a label of the hosts table (`HostSource`).
    pub host: Option<String>,
    /// Messages whose time is within the range (inclusive; a bare end date covers its day).
    pub date_range: Option<SearchDateRange>,
    /// Only this task (id or unique prefix) and its descendants.
    pub task: Option<String>,
    /// Read every task from its folder instead of the text store kept in our cache (default:
    /// the store, renewed for the tasks that changed).
    pub no_text_store: Option<bool>,
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<crate::job::Signal>,
}

impl TryFrom<GrepTasksOptions> for GrepOptions {
    type Error = CodedError;

    fn try_from(o: GrepTasksOptions) -> Result<Self, CodedError> {
        let kinds = match o.kinds {
            None => Kinds::default(),
            Some(list) => list.iter().try_fold(Kinds::none(), |acc, k| {
                Kind::parse(k).map(|k| acc.with(k)).ok_or_else(|| {
                    CodedError::new(
                        ErrorCode::InvalidArgument,
                        format!(
                            "kinds: '{k}' is not one of 'user', 'assistant', 'toolInput', 'toolResult'"
                        ),
                    )
                })
            })?,
        };
        let (start_date, end_date) = o
            .date_range
            .map_or((None, None), |r| (r.start_date, r.end_date));
        Ok(GrepOptions {
            pattern: o.pattern,
            regex: o.regex.unwrap_or(false),
            ignore_case: o.ignore_case.unwrap_or(false),
            kinds,
            context: o.context.unwrap_or(0) as usize,
            max_matches: o.max_matches.map(|m| m as usize),
            tasks_dirs: o
                .tasks_dirs
                .unwrap_or_default()
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            workspace: o.workspace,
            host: o.host,
            start_date,
            end_date,
            task: o.task,
            no_text_store: o.no_text_store.unwrap_or(false),
        })
    }
}

/// Every line of the tasks' dialogue where the pattern stands, newest task first.
#[napi(catch_unwind, ts_return_type = "Promise<GrepTasksResult>")]
pub fn grep_tasks(options: GrepTasksOptions) -> AsyncTask<Job<GrepReport>> {
    let mut o = options;
    let signal = o.signal.take();
    // Refused options are reported when the job runs.
    let opts = GrepOptions::try_from(o);
    Job::spawn(signal, move |cancel| {
        roo_search::grep_tasks(&opts?, Some(cancel)).map_err(|e| CodedError::core(e.code(), e))
    })
}
