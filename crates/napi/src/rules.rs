//! The core's small rules that the CLI and the MCP server apply to values they already hold.

use crate::error::{CodedError, ErrorCode};
use napi::Env;
use napi_derive::napi;
use roo_store::task_store::{ListKey, SortKey};

/// The core's workspace comparison key (`normalize_workspace`): `\` → `/`, `\\?\` and `file://`
/// prefixes removed, repeated separators collapsed, `/d:/` → `d:/`, lower case, no trailing
/// separator. Two workspaces are the same when their keys are equal.
#[napi(catch_unwind)]
pub fn normalize_workspace(path: String) -> String {
    roo_state::hierarchy::normalize_workspace(&path)
}

/// Whether a task of `workspace` is one a workspace filter names: a path names one workspace
/// (compared after `normalizeWorkspace`); a bare folder name names every workspace whose last
/// folder it is. The rule of the task lists (`TaskStore.list`, the CLI's `list`); trees compare the
/// whole key only.
#[napi(catch_unwind)]
pub fn workspace_matches(workspace: String, query: String) -> bool {
    roo_state::hierarchy::WorkspaceQuery::new(&query).matches(&workspace)
}

/// What task lists are sorted by, of one task (what `listOrder` compares).
#[napi(object)]
pub struct ListOrderKey {
    pub task_id: String,
    /// First and last message times, ms since the epoch (a header's `createdAtMs` /
    /// `lastActivityMs`).
    pub created_at_ms: Option<f64>,
    pub last_activity_ms: Option<f64>,
    pub title: Option<String>,
    pub message_count: Option<u32>,
    pub action_count: Option<u32>,
    pub total_size: Option<f64>,
    pub total_cost: Option<f64>,
}

/// The positions of `keys` in the order of task lists (`TaskStore.list`'s rule: dates newest
/// first, counts, size and cost largest first, titles A to Z, or `order` against that; ties by
/// task id). For merging the lists of several stores, or sorting headers held in JavaScript, the
/// same way the handle does.
#[napi(
    catch_unwind,
    ts_args_type = "keys: ListOrderKey[], sort?: 'lastActivity' | 'createdAt' | 'title' | 'messageCount' | 'actionCount' | 'totalSize' | 'totalCost', order?: 'asc' | 'desc'"
)]
pub fn list_order(
    env: Env,
    keys: Vec<ListOrderKey>,
    sort: Option<String>,
    order: Option<String>,
) -> napi::Result<Vec<u32>> {
    let (sort, ascending) =
        list_sort(sort.as_deref(), order.as_deref()).map_err(|e| e.into_napi(&env))?;
    let keys: Vec<ListKey<'_>> = keys
        .iter()
        .map(|k| ListKey {
            task_id: &k.task_id,
            last_activity_ms: k.last_activity_ms.map(|t| t as i64),
            created_at_ms: k.created_at_ms.map(|t| t as i64),
            title: k.title.as_deref(),
            message_count: k.message_count.unwrap_or(0),
            action_count: k.action_count.unwrap_or(0),
            total_size: k.total_size.map_or(0, |n| n as u64),
            total_cost: k.total_cost.unwrap_or(0.0),
        })
        .collect();
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_by(|&a, &b| sort.order(ascending, &keys[a as usize], &keys[b as usize]));
    Ok(order)
}

/// A list's sort key and direction from their JavaScript names (`None`: the key's own order).
pub(crate) fn list_sort(
    sort: Option<&str>,
    order: Option<&str>,
) -> Result<(SortKey, Option<bool>), CodedError> {
    let sort = match sort {
        None => SortKey::default(),
        Some(name) => SortKey::parse(name).ok_or_else(|| {
            CodedError::new(
                ErrorCode::InvalidArgument,
                format!("sort must be {}, not {name}", SortKey::NAMES),
            )
        })?,
    };
    let ascending = match order {
        None => None,
        Some("asc") => Some(true),
        Some("desc") => Some(false),
        Some(other) => {
            return Err(CodedError::new(
                ErrorCode::InvalidArgument,
                format!("order must be asc or desc, not {other}"),
            ))
        }
    };
    Ok((sort, ascending))
}
