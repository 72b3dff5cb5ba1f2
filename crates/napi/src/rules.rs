//! The core's small rules that the CLI and the MCP server apply to values they already hold.

use napi_derive::napi;

/// The core's workspace comparison key (`normalize_workspace`): `\` → `/`, `\\?\` and `file://`
/// prefixes removed, repeated separators collapsed, `/d:/` → `d:/`, lower case, no trailing
/// separator. Two workspaces are the same when their keys are equal.
#[napi]
pub fn normalize_workspace(path: String) -> String {
    roo_state::hierarchy::normalize_workspace(&path)
}
