//! The kinds of a report's options: what the rows are ([`Group`]), which cost a record counts
//! ([`CostMode`]), the rows' order and what each row is broken down by. Each has its names, which
//! the JavaScript registry of the CLI is generated from (crates/ts).

use crate::UsageError;
use serde::Serialize;

/// What the rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageGroup"))]
pub enum Group {
    Daily,
    Weekly,
    Monthly,
    Yearly,
    Tasks,
    Conversations,
    Models,
    Workspaces,
    Hosts,
    Modes,
}

impl Group {
    /// Every group, in the order the CLI and the web view offer them.
    pub const ALL: [Group; 10] = [
        Group::Daily,
        Group::Weekly,
        Group::Monthly,
        Group::Yearly,
        Group::Tasks,
        Group::Conversations,
        Group::Models,
        Group::Workspaces,
        Group::Hosts,
        Group::Modes,
    ];

    /// The group's name (what `parse` takes and a report says).
    pub fn name(self) -> &'static str {
        match self {
            Group::Daily => "daily",
            Group::Weekly => "weekly",
            Group::Monthly => "monthly",
            Group::Yearly => "yearly",
            Group::Tasks => "tasks",
            Group::Conversations => "conversations",
            Group::Models => "models",
            Group::Workspaces => "workspaces",
            Group::Hosts => "hosts",
            Group::Modes => "modes",
        }
    }

    /// Rows of periods of time (days, weeks, months, years).
    pub fn is_time(self) -> bool {
        matches!(
            self,
            Group::Daily | Group::Weekly | Group::Monthly | Group::Yearly
        )
    }

    pub fn parse(s: &str) -> Result<Group, UsageError> {
        Ok(match s {
            "daily" | "day" => Group::Daily,
            "weekly" | "week" => Group::Weekly,
            "monthly" | "month" => Group::Monthly,
            "yearly" | "year" => Group::Yearly,
            "tasks" | "task" => Group::Tasks,
            "conversations" | "conversation" => Group::Conversations,
            "models" | "model" => Group::Models,
            "workspaces" | "workspace" => Group::Workspaces,
            "hosts" | "host" => Group::Hosts,
            "modes" | "mode" => Group::Modes,
            other => {
                return Err(UsageError::InvalidArgument(format!(
                    "unknown report {other:?}: daily, weekly, monthly, yearly, tasks, conversations, models, workspaces, hosts or modes"
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
    /// Every cost mode, the default (`auto`) first.
    pub const ALL: [CostMode; 3] = [CostMode::Auto, CostMode::Recorded, CostMode::Calculate];

    /// The mode's name (what `parse` takes).
    pub fn name(self) -> &'static str {
        match self {
            CostMode::Recorded => "recorded",
            CostMode::Calculate => "calculate",
            CostMode::Auto => "auto",
        }
    }

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

/// The order of the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageOrder"))]
pub enum Order {
    /// Periods oldest first; other rows cheapest first.
    Asc,
    /// Periods newest first; other rows most expensive first.
    Desc,
}

impl Order {
    pub fn parse(s: &str) -> Result<Order, UsageError> {
        match s {
            "asc" => Ok(Order::Asc),
            "desc" => Ok(Order::Desc),
            other => Err(UsageError::InvalidArgument(format!(
                "unknown order {other:?}: asc or desc"
            ))),
        }
    }

    /// The order a group's rows take when none is asked for.
    pub fn default_for(group: Group) -> Order {
        if group.is_time() {
            Order::Asc
        } else {
            Order::Desc
        }
    }
}

/// What each row is broken down by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Breakdown {
    #[default]
    None,
    /// Per-model sums (`models`).
    Model,
    /// Per-mode sums (`modes`).
    Mode,
}

#[cfg(test)]
mod names_tests {
    use super::*;

    /// Each name parses back to its value, and serde writes the same name (the JSON a report
    /// carries).
    #[test]
    fn every_group_and_cost_mode_is_named_as_it_parses_and_serialises() {
        for g in Group::ALL {
            assert_eq!(Group::parse(g.name()).ok(), Some(g));
            assert_eq!(serde_json::to_value(g).ok(), Some(g.name().into()));
        }
        for c in CostMode::ALL {
            assert_eq!(CostMode::parse(c.name()).ok(), Some(c));
            assert_eq!(serde_json::to_value(c).ok(), Some(c.name().into()));
        }
    }
}
