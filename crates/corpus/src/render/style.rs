//! The switches that vary with the era (and, within the XML era, with the release date).

use crate::time::ms;
use crate::Era;

/// Era-dependent switches.
#[derive(Clone, Copy)]
pub(super) struct Style {
    pub(super) xml: bool,
    pub(super) request: bool,
    pub(super) finished_separate: bool,
    pub(super) api_ts: bool,
    pub(super) api_protocol: bool,
    pub(super) user_tag: &'static str,
    pub(super) working_header: bool,
    pub(super) subtask_as_text: bool,
    pub(super) delegation: bool,
    pub(super) metadata: bool,
    pub(super) history: bool,
    pub(super) v2: bool,
    pub(super) answered: bool,
    pub(super) protected: bool,
    pub(super) todos: bool,
    pub(super) checkpoint: u8,
    pub(super) env_extras: bool,
    pub(super) time_iso: bool,
    pub(super) tabs_comma: bool,
    pub(super) say_tool_readonly: bool,
    pub(super) tokens_total: bool,
}

/// The switches of a task of `era` started at `ts`.
pub(super) fn style(era: Era, ts: u64) -> Style {
    let base = Style {
        xml: true,
        request: true,
        finished_separate: false,
        api_ts: true,
        api_protocol: false,
        user_tag: "task",
        working_header: false,
        subtask_as_text: false,
        delegation: false,
        metadata: false,
        history: false,
        v2: false,
        answered: false,
        protected: false,
        todos: false,
        checkpoint: 1,
        env_extras: true,
        time_iso: false,
        tabs_comma: false,
        say_tool_readonly: false,
        tokens_total: false,
    };
    match era {
        Era::ClaudeDev2024 => Style {
            finished_separate: true,
            api_ts: false,
            working_header: true,
            checkpoint: 0,
            env_extras: false,
            say_tool_readonly: true,
            ..base
        },
        Era::StackXmlOld => Style {
            working_header: true,
            subtask_as_text: true,
            ..base
        },
        Era::StackXml => Style {
            api_protocol: ts >= ms(2025, 7, 8),
            metadata: true,
            protected: ts >= ms(2025, 6, 15),
            todos: ts >= ms(2025, 7, 1),
            ..base
        },
        Era::Native | Era::HistoryItem | Era::V2Wrapper => Style {
            xml: false,
            request: false,
            api_protocol: true,
            user_tag: "user_message",
            delegation: true,
            metadata: true,
            history: era != Era::Native,
            v2: era == Era::V2Wrapper,
            answered: true,
            protected: true,
            todos: true,
            checkpoint: 2,
            time_iso: true,
            tabs_comma: true,
            tokens_total: true,
            ..base
        },
    }
}
