//! The tool calls the legacy trace-summary exporter reads from a message's text (its JSON `full`
//! and CSV `messages` / `tools` summaries): each `[NAME] Result: …` up to the next line that
//! opens with `[` or the end, then each `<use_mcp_tool>` block with a `<tool_name>`.
//!
//! In `legacy` form the name takes everything up to `]` (so ` for 'path'` stays in it and no path
//! is found, as the legacy exporter did); in `fixed` form it stops before ` for '…'` and the path
//! is read. The caller cuts results to 500 UTF-16 units and parses MCP arguments as JSON.

use crate::js::{
    compile, compile_fancy, fancy_captures, first_capture, js_trim, JS_DOT, JS_SPACE_CLASS,
};
use fancy_regex::Regex as FancyRegex;
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

/// One tool call found in a message's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct TraceToolCall {
    pub tool_name: String,
    /// `[NAME for 'PATH'] Result:`'s path (never in `legacy` form; absent when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The result, trimmed (whole; empty for an MCP call).
    pub result: String,
    /// Neither `error` nor `failed` in the lowercased result (always true for an MCP call).
    pub success: bool,
    /// An MCP call's `<server_name>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// An MCP call's `<arguments>` text, still to be parsed (absent without the tag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_arguments: Option<String>,
    /// Whether this is an MCP call (`<use_mcp_tool>`).
    pub mcp: bool,
}

/// `/\[([^\]]+)(?:\s+for\s+['"]([^'"]*?)['"])?\]\s*Result:([\s\S]*?)(?=\n\[|$)/g`, with the name
/// lazy (`[^\]]+?`) in `fixed` form.
fn result_pattern(lazy: bool) -> Option<FancyRegex> {
    let ws = JS_SPACE_CLASS;
    let q = if lazy { "?" } else { "" };
    compile_fancy(&format!(
        r#"\[([^\]]+{q})(?:{ws}+for{ws}+['"]([^'"]*?)['"])?\]{ws}*Result:((?s:.)*?)(?=\n\[|$)"#
    ))
}

static RESULT_LEGACY: LazyLock<Option<FancyRegex>> = LazyLock::new(|| result_pattern(false));
static RESULT_FIXED: LazyLock<Option<FancyRegex>> = LazyLock::new(|| result_pattern(true));

static MCP_USE: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"<use_mcp_tool>((?s:.)*?)</use_mcp_tool>"));
static SERVER_NAME: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(&format!("<server_name>({JS_DOT}*?)</server_name>")));
static TOOL_NAME: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(&format!("<tool_name>({JS_DOT}*?)</tool_name>")));
static ARGUMENTS: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"<arguments>((?s:.)*?)</arguments>"));

/// The tool calls of `text`, in the exporter's order (results first, then MCP calls).
pub fn trace_tool_calls(text: &str, fixed: bool) -> Vec<TraceToolCall> {
    let mut out = Vec::new();
    let results = if fixed { &RESULT_FIXED } else { &RESULT_LEGACY };
    for c in fancy_captures(results, text) {
        let group = |i| c.get(i).map_or("", |g| g.as_str());
        let result = js_trim(group(3)).to_owned();
        let low = result.to_lowercase();
        out.push(TraceToolCall {
            tool_name: group(1).to_owned(),
            path: Some(group(2)).filter(|p| !p.is_empty()).map(str::to_owned),
            success: !low.contains("error") && !low.contains("failed"),
            result,
            server_name: None,
            mcp_arguments: None,
            mcp: false,
        });
    }
    if let Some(re) = MCP_USE.as_ref() {
        for c in re.captures_iter(text) {
            let block = c.get(1).map_or("", |g| g.as_str());
            if let Some(tool_name) = first_capture(&TOOL_NAME, block, 1).map(str::to_owned) {
                out.push(TraceToolCall {
                    tool_name,
                    path: None,
                    result: String::new(),
                    success: true,
                    server_name: first_capture(&SERVER_NAME, block, 1).map(str::to_owned),
                    mcp_arguments: first_capture(&ARGUMENTS, block, 1).map(str::to_owned),
                    mcp: true,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert!(RESULT_LEGACY.is_some() && RESULT_FIXED.is_some());
        assert!(MCP_USE.is_some() && SERVER_NAME.is_some() && TOOL_NAME.is_some());
        assert!(ARGUMENTS.is_some());
    }

    #[test]
    fn a_result_runs_to_the_next_bracket_line() {
        let text = "[read_file for 'src/a.ts'] Result: line one\nline two\n[write_to_file] Result: Error: denied";
        let legacy = trace_tool_calls(text, false);
        assert_eq!(legacy.len(), 2);
        assert_eq!(legacy[0].tool_name, "read_file for 'src/a.ts'");
        assert_eq!(legacy[0].path, None);
        assert_eq!(legacy[0].result, "line one\nline two");
        assert!(legacy[0].success);
        assert_eq!(
            (legacy[1].tool_name.as_str(), legacy[1].success),
            ("write_to_file", false)
        );
        let fixed = trace_tool_calls(text, true);
        assert_eq!(fixed[0].tool_name, "read_file");
        assert_eq!(fixed[0].path.as_deref(), Some("src/a.ts"));
    }

    #[test]
    fn an_mcp_call_needs_its_tool_name() {
        let text = "<use_mcp_tool><server_name>git</server_name><tool_name>log</tool_name>\
                    <arguments>{\"n\": 3}</arguments></use_mcp_tool>\
                    <use_mcp_tool><server_name>x</server_name></use_mcp_tool>";
        let calls = trace_tool_calls(text, false);
        assert_eq!(calls.len(), 1);
        assert!(calls[0].mcp);
        assert_eq!(calls[0].server_name.as_deref(), Some("git"));
        assert_eq!(calls[0].mcp_arguments.as_deref(), Some("{\"n\": 3}"));
    }
}
