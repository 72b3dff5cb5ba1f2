//! Which host family writes which message kinds, and what a task's own files say of its host.
//!
//! Three families write task folders: Roo Code (continued as Zoo Code), Cline (once Claude Dev) and
//! Kilo Code (a Roo Code fork with its own additions). They share `ClineMessage` but each has kinds of
//! its own; a kind one family writes is normal data in that family's tasks, not an anomaly. The
//! tables below list, per family, the `ask`/`say` values its current public types declare.
//!
//! A task folder found outside a known extension path can still be placed by its content: kinds or
//! fields only one family writes, and Cline's task ids (the creation time in milliseconds).

use crate::ui::{ClineMessage, MessageKind};
use std::path::Path;

/// The labels a task's host carries (`metadata.source`, report rows, filters), one per product.
/// The TypeScript union `HostSource` and the CLI's list are generated from it (crates/ts).
pub const SOURCES: [&str; 4] = ["roo", "zoo-code", "cline", "kilo-code"];

/// An extension (or a build of one) that keeps task folders: the one table of hosts. Builds of a
/// product (a nightly build, a port to another IDE) are entries of their own, with the product's
/// `source`. Adding a host is adding an entry here (docs/checklists.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host {
    /// The lower-case id VS Code uses for `globalStorage/<id>`.
    pub id: &'static str,
    /// The key of its `globalState` row in `state.vscdb` (publisher.name as published).
    pub state_key: &'static str,
    /// Configuration namespace of its settings (`<ns>.customStoragePath`): the extension's
    /// `name` in its `package.json`.
    pub settings_ns: &'static str,
    /// Its label, one of [`SOURCES`].
    pub source: &'static str,
    /// The product's name, as people know it.
    pub name: &'static str,
    /// The family whose message kinds its tasks hold.
    pub family: HostFamily,
    /// Its task files are replaced by a rename (a new file), so a folder's modification time
    /// stands for its files' (the cache's fast path); Cline writes in place.
    pub writes_by_rename: bool,
    /// Where it keeps its list of tasks.
    pub task_list: TaskList,
}

/// Where a host keeps its list of tasks (what a rebuild must write for it to list them again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskList {
    /// `history_item.json` per task with `tasks/_index.json` beside them (Roo Code 3.49–3.52;
    /// before, the editor's `state.vscdb`).
    Index,
    /// The `history_item.json` files alone, read as they change (Zoo Code 3.80+).
    HistoryItems,
    /// The editor's `state.vscdb` (`taskHistory` of its global state).
    GlobalState,
}

#[expect(
    clippy::too_many_arguments,
    reason = "one row of the hosts table, read as a row"
)]
const fn host(
    id: &'static str,
    state_key: &'static str,
    settings_ns: &'static str,
    source: &'static str,
    name: &'static str,
    family: HostFamily,
    writes_by_rename: bool,
    task_list: TaskList,
) -> Host {
    Host {
        id,
        state_key,
        settings_ns,
        source,
        name,
        family,
        writes_by_rename,
        task_list,
    }
}

/// Every host this version knows.
#[rustfmt::skip]
pub const HOSTS: [Host; 6] = [
    host("rooveterinaryinc.roo-cline", "RooVeterinaryInc.roo-cline", "roo-cline", "roo", "Roo Code", HostFamily::Roo, true, TaskList::Index),
    host("zoocodeorganization.zoo-code", "ZooCodeOrganization.zoo-code", "zoo-code", "zoo-code", "Zoo Code", HostFamily::Roo, true, TaskList::HistoryItems),
    // Zoo Code's nightly build: its package is renamed `zoo-code-nightly`, settings included.
    host("zoocodeorganization.zoo-code-nightly", "ZooCodeOrganization.zoo-code-nightly", "zoo-code-nightly", "zoo-code", "Zoo Code", HostFamily::Roo, true, TaskList::HistoryItems),
    // Zoo Code in JetBrains IDEs: the plugin runs the extension with its own storage root
    // (`~/.zoo-code/globalStorage/`).
    host("wecode-ai.zoo-code", "wecode-ai.zoo-code", "zoo-code", "zoo-code", "Zoo Code", HostFamily::Roo, true, TaskList::HistoryItems),
    host("saoudrizwan.claude-dev", "saoudrizwan.claude-dev", "cline", "cline", "Cline", HostFamily::Cline, false, TaskList::GlobalState),
    host("kilocode.kilo-code", "kilocode.Kilo-Code", "kilo-code", "kilo-code", "Kilo Code", HostFamily::Kilo, true, TaskList::GlobalState),
];

/// The host whose id appears in `path` (any case, either slash), if any: the longest such id, as
/// a nightly build's folder contains its release's id.
pub fn host_of_path(path: &Path) -> Option<&'static Host> {
    let p = path.to_string_lossy().to_lowercase();
    HOSTS
        .iter()
        .filter(|h| p.contains(h.id))
        .max_by_key(|h| h.id.len())
}

/// The host with this id (case-insensitive), label or published key.
pub fn host_by_name(name: &str) -> Option<&'static Host> {
    let n = name.to_lowercase();
    HOSTS
        .iter()
        .find(|h| h.id == n || h.source == n || h.state_key.to_lowercase() == n)
}

/// A family of hosts sharing one on-disk task format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostFamily {
    /// Roo Code and its continuation Zoo Code.
    Roo,
    /// Cline (and Claude Dev before its rename).
    Cline,
    /// Kilo Code.
    Kilo,
}

impl HostFamily {
    /// The `source` label of a task of this family.
    pub fn source(self) -> &'static str {
        match self {
            HostFamily::Roo => "roo",
            HostFamily::Cline => "cline",
            HostFamily::Kilo => "kilo-code",
        }
    }
}

const ROO_ASKS: &[&str] = &[
    "followup",
    "command",
    "command_output",
    "completion_result",
    "tool",
    "api_req_failed",
    "resume_task",
    "resume_completed_task",
    "mistake_limit_reached",
    "browser_action_launch",
    "use_mcp_server",
    "auto_approval_max_req_reached",
];

/// Kilo Code: Roo Code's asks plus these.
const KILO_EXTRA_ASKS: &[&str] = &[
    "payment_required_prompt",
    "invalid_model",
    "report_bug",
    "condense",
    "checkpoint_restore",
];

const CLINE_ASKS: &[&str] = &[
    "followup",
    "plan_mode_respond",
    "act_mode_respond",
    "command",
    "command_output",
    "completion_result",
    "tool",
    "api_req_failed",
    "resume_task",
    "resume_completed_task",
    "mistake_limit_reached",
    "browser_action_launch",
    "use_mcp_server",
    "new_task",
    "condense",
    "summarize_task",
    "report_bug",
    "use_subagents",
];

/// Roo Code / Zoo Code and Kilo Code write the same `say` values.
const ROO_SAYS: &[&str] = &[
    "error",
    "api_req_started",
    "api_req_finished",
    "api_req_retried",
    "api_req_retry_delayed",
    "api_req_rate_limit_wait",
    "api_req_deleted",
    "text",
    "image",
    "reasoning",
    "completion_result",
    "user_feedback",
    "user_feedback_diff",
    "command_output",
    "shell_integration_warning",
    "browser_action",
    "browser_action_result",
    "browser_session_status",
    "mcp_server_request_started",
    "mcp_server_response",
    "subtask_result",
    "checkpoint_saved",
    "rooignore_error",
    "diff_error",
    "condense_context",
    "condense_context_error",
    "sliding_window_truncation",
    "codebase_search_result",
    "user_edit_todos",
    "too_many_tools_warning",
    "tool",
];

const CLINE_SAYS: &[&str] = &[
    "task",
    "error",
    "error_retry",
    "api_req_started",
    "api_req_finished",
    "text",
    "reasoning",
    "completion_result",
    "user_feedback",
    "user_feedback_diff",
    "api_req_retried",
    "command",
    "command_output",
    "tool",
    "shell_integration_warning",
    "shell_integration_warning_with_suggestion",
    "browser_action_launch",
    "browser_action",
    "browser_action_result",
    "mcp_server_request_started",
    "mcp_server_response",
    "mcp_notification",
    "use_mcp_server",
    "diff_error",
    "deleted_api_reqs",
    "clineignore_error",
    "command_permission_denied",
    "checkpoint_created",
    "load_mcp_documentation",
    "generate_explanation",
    "info",
    "task_progress",
    "hook_status",
    "hook_output_stream",
    "subagent",
    "use_subagents",
    "subagent_usage",
    "conditional_rules_applied",
];

/// True when `family` writes this `ask` (`is_ask`) or `say` value.
pub fn writes(family: HostFamily, is_ask: bool, value: &str) -> bool {
    match (family, is_ask) {
        (HostFamily::Roo, true) => ROO_ASKS.contains(&value),
        (HostFamily::Kilo, true) => ROO_ASKS.contains(&value) || KILO_EXTRA_ASKS.contains(&value),
        (HostFamily::Cline, true) => CLINE_ASKS.contains(&value),
        (HostFamily::Roo | HostFamily::Kilo, false) => ROO_SAYS.contains(&value),
        (HostFamily::Cline, false) => CLINE_SAYS.contains(&value),
    }
}

/// The families that write a message's kind (empty for a kind no current family writes).
pub fn writers(kind: &MessageKind) -> Vec<HostFamily> {
    let (is_ask, value) = match kind {
        MessageKind::Ask(a) => (true, a.as_str()),
        MessageKind::Say(s) => (false, s.as_str()),
        MessageKind::Other(_) => return Vec::new(),
    };
    [HostFamily::Roo, HostFamily::Cline, HostFamily::Kilo]
        .into_iter()
        .filter(|f| writes(*f, is_ask, value))
        .collect()
}

/// The one family a message points to, when its kind or its fields belong to one family only.
pub fn family_hint(msg: &ClineMessage) -> Option<HostFamily> {
    if msg
        .extra
        .get("metadata")
        .and_then(|m| m.get("kiloCode"))
        .is_some()
    {
        return Some(HostFamily::Kilo);
    }
    if msg.extra.contains_key("lastCheckpointHash") || msg.extra.contains_key("modelInfo") {
        return Some(HostFamily::Cline);
    }
    match writers(&msg.kind).as_slice() {
        [only] => Some(*only),
        _ => None,
    }
}

/// Counts of the family hints met while reading one task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostEvidence {
    pub cline: u32,
    pub kilo: u32,
    pub roo: u32,
}

impl HostEvidence {
    pub fn see(&mut self, msg: &ClineMessage) {
        match family_hint(msg) {
            Some(HostFamily::Cline) => self.cline += 1,
            Some(HostFamily::Kilo) => self.kilo += 1,
            Some(HostFamily::Roo) => self.roo += 1,
            None => {}
        }
    }

    /// The family the content points to, if one clearly dominates.
    pub fn family(&self) -> Option<HostFamily> {
        let mut best = [
            (self.cline, HostFamily::Cline),
            (self.kilo, HostFamily::Kilo),
            (self.roo, HostFamily::Roo),
        ];
        best.sort_by_key(|b| std::cmp::Reverse(b.0));
        (best[0].0 > 0 && best[0].0 > best[1].0).then_some(best[0].1)
    }
}

/// True for a Cline task id: the task's creation time in milliseconds since the epoch (13 digits,
/// between 2020 and 2100), where Roo Code and Kilo Code use UUIDs.
pub fn is_millisecond_task_id(id: &str) -> bool {
    ms_from_task_id(id).is_some()
}

/// The creation time a Cline task id carries.
pub fn ms_from_task_id(id: &str) -> Option<i64> {
    if id.len() != 13 || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ms: i64 = id.parse().ok()?;
    // 2020-01-01 .. 2100-01-01
    (1_577_836_800_000..4_102_444_800_000)
        .contains(&ms)
        .then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::{Ask, Say};

    #[test]
    fn each_family_writes_its_own_kinds() {
        assert_eq!(
            writers(&MessageKind::Say(Say::Task)),
            vec![HostFamily::Cline]
        );
        assert_eq!(
            writers(&MessageKind::Say(Say::CheckpointSaved)),
            vec![HostFamily::Roo, HostFamily::Kilo]
        );
        assert_eq!(
            writers(&MessageKind::Ask(Ask::Condense)),
            vec![HostFamily::Cline, HostFamily::Kilo]
        );
        assert_eq!(
            writers(&MessageKind::Ask(Ask::CheckpointRestore)),
            vec![HostFamily::Kilo]
        );
        assert!(writers(&MessageKind::Say(Say::ApiCost)).is_empty());
        assert_eq!(writers(&MessageKind::Say(Say::Text)).len(), 3);
    }

    #[test]
    fn every_listed_value_is_known_to_the_reader() {
        for v in ROO_ASKS.iter().chain(KILO_EXTRA_ASKS).chain(CLINE_ASKS) {
            let a = Ask::parse(v);
            assert!(!a.is_unknown() && !a.is_retired(), "ask {v}");
        }
        for v in ROO_SAYS.iter().chain(CLINE_SAYS) {
            let s = Say::parse(v);
            assert!(!s.is_unknown() && !s.is_retired(), "say {v}");
        }
    }

    /// A value added to `Ask` or `Say` is written by some family: else the family lists were
    /// skipped, and every task holding it would be reported as of no known host.
    #[test]
    fn every_current_value_is_written_by_a_family() {
        for v in Ask::ALL_TEXTS {
            let a = Ask::parse(v);
            let current = !a.is_retired();
            assert_eq!(
                !writers(&MessageKind::Ask(a)).is_empty(),
                current,
                "ask {v}"
            );
        }
        for v in Say::ALL_TEXTS {
            let s = Say::parse(v);
            let current = !s.is_retired();
            assert_eq!(
                !writers(&MessageKind::Say(s)).is_empty(),
                current,
                "say {v}"
            );
        }
    }

    #[test]
    fn evidence_needs_a_clear_majority() {
        let mut e = HostEvidence::default();
        assert_eq!(e.family(), None);
        e.cline = 2;
        assert_eq!(e.family(), Some(HostFamily::Cline));
        e.kilo = 2;
        assert_eq!(e.family(), None);
    }

    #[test]
    fn cline_task_ids_are_creation_times() {
        assert_eq!(ms_from_task_id("1770000000000"), Some(1_770_000_000_000));
        assert_eq!(
            ms_from_task_id("019bffa6-9e68-7cb6-8ef5-2d29a6c2b475"),
            None
        );
        assert_eq!(ms_from_task_id("0000000000001"), None);
        assert_eq!(ms_from_task_id("17700000000000"), None);
    }
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    /// The table holds together: every host's label is one of the labels and every label has a
    /// host, a family's own label is one, ids are unique and each is found in a path under it.
    #[test]
    fn every_host_has_a_known_label_and_is_found_by_its_folder() {
        for h in &HOSTS {
            assert!(SOURCES.contains(&h.source), "{}: {}", h.id, h.source);
            let path = Path::new("/home/u/.config/Code/User/globalStorage")
                .join(h.id)
                .join("tasks");
            assert_eq!(host_of_path(&path).map(|f| f.id), Some(h.id));
            assert_eq!(HOSTS.iter().filter(|o| o.id == h.id).count(), 1);
        }
        for s in SOURCES {
            assert!(HOSTS.iter().any(|h| h.source == s), "{s} has no host");
        }
        for f in [HostFamily::Roo, HostFamily::Cline, HostFamily::Kilo] {
            assert!(SOURCES.contains(&f.source()));
        }
        assert_eq!(
            host_of_path(Path::new(r"C:\Users\u\AppData\Roaming\Code\User\globalStorage\ZooCodeOrganization.Zoo-Code\tasks"))
                .map(|h| h.source),
            Some("zoo-code")
        );
    }
}
