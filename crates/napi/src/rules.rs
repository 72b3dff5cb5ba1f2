//! The core's small rules that the CLI and the MCP server apply to values they already hold.

use napi_derive::napi;

/// The core's workspace comparison key (`normalize_workspace`): `\` → `/`, `\\?\` and `file://`
/// prefixes removed, repeated separators collapsed, `/d:/` → `d:/`, lower case, no trailing
/// separator. Two workspaces are the same when their keys are equal.
#[napi]
pub fn normalize_workspace(path: String) -> String {
    roo_state::hierarchy::normalize_workspace(&path)
}

/// Whether a task of `workspace` is one a workspace filter names: a path names one workspace
/// (compared after `normalizeWorkspace`); a bare folder name names every workspace whose last
/// folder it is. The rule of the task lists (`TaskStore.list`, the CLI's `list`); trees compare the
/// whole key only.
#[napi]
pub fn workspace_matches(workspace: String, query: String) -> bool {
    roo_state::hierarchy::WorkspaceQuery::new(&query).matches(&workspace)
}
