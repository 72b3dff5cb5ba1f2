//! The kinds of a report's options: what the rows are ([`Group`]), which cost a record counts
//! ([`CostMode`]), the rows' order and what each row is broken down by. Each has its names, which
//! the JavaScript registry of the CLI is generated from (crates/ts).

use crate::UsageError;
use serde::Serialize;

/// An enum whose values are listed once, each with its name and the other spellings `parse`
/// takes: `ALL` (in the order given), `name` and `parse` all come from that one list, so a value
/// added there is offered, named and parsed everywhere (and the JavaScript registry follows).
macro_rules! named_values {
    (
        $(#[$meta:meta])*
        pub enum $enum:ident ($what:literal) {
            $($(#[$vmeta:meta])* $variant:ident = $name:literal $(| $alias:literal)*,)*
        }
    ) => {
        $(#[$meta])*
        pub enum $enum {
            $($(#[$vmeta])* $variant,)*
        }

        impl $enum {
            /// Every value, in the order the CLI and the web view offer them (the default first).
            pub const ALL: &'static [$enum] = &[$($enum::$variant,)*];

            /// The value's name (what `parse` takes and a report says).
            pub fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)*
                }
            }

            /// The value named `s`: its name or one of its other spellings.
            pub fn parse(s: &str) -> Result<$enum, UsageError> {
                match s {
                    $($name $(| $alias)* => Ok($enum::$variant),)*
                    other => Err(UsageError::InvalidArgument(format!(
                        "unknown {} {other:?}: {}",
                        $what,
                        Self::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ")
                    ))),
                }
            }
        }
    };
}

named_values! {
    /// What the rows are.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "camelCase")]
    #[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageGroup"))]
    pub enum Group ("report") {
        Daily = "daily" | "day",
        Weekly = "weekly" | "week",
        Monthly = "monthly" | "month",
        Yearly = "yearly" | "year",
        Tasks = "tasks" | "task",
        Conversations = "conversations" | "conversation",
        Models = "models" | "model",
        Workspaces = "workspaces" | "workspace",
        Hosts = "hosts" | "host",
        Modes = "modes" | "mode",
    }
}

impl Group {
    /// Rows of periods of time (days, weeks, months, years).
    pub fn is_time(self) -> bool {
        matches!(
            self,
            Group::Daily | Group::Weekly | Group::Monthly | Group::Yearly
        )
    }
}

named_values! {
    /// Which cost a record counts.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "camelCase")]
    #[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "UsageCostMode"))]
    pub enum CostMode ("cost mode") {
        /// Recorded, else calculated.
        Auto = "auto",
        /// What the extension recorded (0 where it recorded nothing).
        Recorded = "recorded" | "display",
        /// From the tokens, with the extension's cost functions and the price table.
        Calculate = "calculate",
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
        for &g in Group::ALL {
            assert_eq!(Group::parse(g.name()).ok(), Some(g));
            assert_eq!(serde_json::to_value(g).ok(), Some(g.name().into()));
        }
        for &c in CostMode::ALL {
            assert_eq!(CostMode::parse(c.name()).ok(), Some(c));
            assert_eq!(serde_json::to_value(c).ok(), Some(c.name().into()));
        }
    }
}
