//! Parent/child hierarchy: reconstruction, trees, ancestors and descendants.

use crate::error::{CodedError, ErrorCode};
use crate::job::Job;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use roo_state::hierarchy::{HierarchyOptions, TreeOptions};
use std::path::Path;

/// JavaScript numbers arrive as doubles; integral ones become integers again so that
/// millisecond timestamps deserialise into `i64` fields.
fn integral_numbers(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Number(n) => {
            let integral = n
                .as_f64()
                .filter(|f| !n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() < 9.0e15);
            if let Some(f) = integral {
                *n = serde_json::Number::from(f as i64);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        serde_json::Value::Object(map) => map.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// Skeletons from JavaScript, converted one element at a time: napi caps one `serde_json::Value`
/// conversion at a million values, which a whole store's array of headers passes at ~25 000
/// tasks, while one skeleton stays far below it.
fn skeletons_from_js(
    values: Vec<serde_json::Value>,
) -> napi::Result<Vec<roo_state::ConversationSkeleton>> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, mut value)| {
            integral_numbers(&mut value);
            serde_json::from_value(value).map_err(|e| {
                CodedError::new(
                    ErrorCode::InvalidArgument,
                    format!("skeleton [{i}] is not in the shape scanTasks returns: {e}"),
                )
                .into_sync()
            })
        })
        .collect()
}

#[napi(object)]
pub struct ReconstructHierarchyOptions {
    /// Only tasks of this workspace (compared after normalisation).
    pub workspace_filter: Option<String>,
    /// Honour stored links (history_item, childIds, task_metadata); default true.
    pub use_stored_links: Option<bool>,
}

impl From<ReconstructHierarchyOptions> for HierarchyOptions {
    fn from(o: ReconstructHierarchyOptions) -> Self {
        HierarchyOptions {
            workspace_filter: o.workspace_filter,
            use_stored_links: o.use_stored_links.unwrap_or(true),
        }
    }
}

#[derive(serde::Serialize)]
pub struct HierarchyOut {
    skeletons: Vec<roo_state::ConversationSkeleton>,
    metrics: roo_state::hierarchy::HierarchyMetrics,
}

/// Link every task to its parent: stored links first, instruction-prefix inference for tasks
/// without one; each link carries its evidence.
#[napi(
    catch_unwind,
    ts_args_type = "skeletons: ConversationSkeleton[], options?: ReconstructHierarchyOptions",
    ts_return_type = "Promise<HierarchyResult>"
)]
pub fn reconstruct_hierarchy(
    skeletons: Vec<serde_json::Value>,
    options: Option<ReconstructHierarchyOptions>,
) -> napi::Result<AsyncTask<Job<HierarchyOut>>> {
    let skeletons = skeletons_from_js(skeletons)?;
    let opts = options.map(HierarchyOptions::from).unwrap_or_default();
    Ok(Job::spawn(None, move |_| {
        let (skeletons, metrics) = roo_state::hierarchy::reconstruct_hierarchy(skeletons, &opts);
        Ok(HierarchyOut { skeletons, metrics })
    }))
}

/// Depth of `getTaskTree` when the caller gives none.
pub(crate) const DEFAULT_TREE_DEPTH: u32 = 256;

#[napi(object)]
#[derive(Default)]
pub struct TaskTreeOptions {
    pub root_id: Option<String>,
    pub workspace: Option<String>,
    /// Deepest level returned (0: the top nodes only); default 256.
    pub max_depth: Option<u32>,
}

impl From<TaskTreeOptions> for TreeOptions {
    fn from(o: TaskTreeOptions) -> Self {
        TreeOptions {
            root_id: o.root_id,
            workspace: o.workspace,
            // Bounded by default so that converting a pathological chain stays within the stack.
            max_depth: Some(o.max_depth.unwrap_or(DEFAULT_TREE_DEPTH)),
        }
    }
}

/// The nested task tree (roots, or the subtree of `rootId`), children in creation order; each
/// node carries the task's dates, counts, completion and parent, and a top node whose parent is
/// not among `skeletons` says so (`parentMissing`).
#[napi(
    catch_unwind,
    ts_args_type = "skeletons: ConversationSkeleton[], options?: TaskTreeOptions",
    ts_return_type = "TaskTreeNode[]"
)]
pub fn get_task_tree<'env>(
    env: &'env napi::Env,
    skeletons: Vec<serde_json::Value>,
    options: Option<TaskTreeOptions>,
) -> napi::Result<napi::Unknown<'env>> {
    let skeletons = skeletons_from_js(skeletons)?;
    let opts = TreeOptions::from(options.unwrap_or_default());
    crate::to_js(
        env,
        &roo_state::hierarchy::get_task_tree_view(&skeletons, &opts),
    )
}

/// Ancestors of a task, nearest first.
#[napi(
    catch_unwind,
    ts_args_type = "skeletons: ConversationSkeleton[], taskId: string"
)]
pub fn get_ancestors(
    skeletons: Vec<serde_json::Value>,
    task_id: String,
) -> napi::Result<Vec<String>> {
    Ok(roo_state::hierarchy::ancestors(
        &skeletons_from_js(skeletons)?,
        &task_id,
    ))
}

/// Descendants of a task, breadth first.
#[napi(
    catch_unwind,
    ts_args_type = "skeletons: ConversationSkeleton[], taskId: string"
)]
pub fn get_descendants(
    skeletons: Vec<serde_json::Value>,
    task_id: String,
) -> napi::Result<Vec<String>> {
    Ok(roo_state::hierarchy::descendants(
        &skeletons_from_js(skeletons)?,
        &task_id,
    ))
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyLink {
    child_id: String,
    parent_id: String,
}

/// The links the legacy engine finds on a tasks directory (legacy prefixes, exact-trie lookup),
/// for comparison suites.
#[napi(
    catch_unwind,
    ts_return_type = "Promise<Array<{ childId: string, parentId: string }>>"
)]
pub fn legacy_hierarchy_links(tasks_dir: String) -> AsyncTask<Job<Vec<LegacyLink>>> {
    Job::spawn(None, move |_| {
        Ok(roo_legacy::legacy_links(Path::new(&tasks_dir))
            .into_iter()
            .map(|(child_id, parent_id)| LegacyLink {
                child_id,
                parent_id,
            })
            .collect())
    })
}
