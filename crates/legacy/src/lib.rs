//! # roo-legacy — compatibility mode
//!
//! Reproduces, bit for bit, what the legacy TypeScript MCP server `roo-state-manager` computes from a
//! Roo Code task folder, so that its maintainers can compare old and new output and keep their old
//! cache keys:
//!
//! * [`compute_instruction_prefix`] — the legacy normalisation of an instruction into a matching key;
//! * [`analyze_task_legacy`] — what the legacy skeleton builder (`analyzeWithOldSystem`, production
//!   hierarchy on) derives from one task directory: child-instruction prefixes (including the legacy
//!   self-contamination and artefacts), main instruction, counts, sizes, workspace, dates, …;
//! * [`extract_new_task_instructions_legacy`] — the legacy 7-extractor chain over `ui_messages.json`;
//! * [`LegacyInstructionIndex`] — the legacy in-memory prefix index with its exact-trie lookup semantics;
//! * [`legacy_links`] — the parent links the legacy engine finds by content alone on a tasks folder;
//! * [`reconstruct_shaped`] — the project's own hierarchy over legacy-shaped skeletons (the compat
//!   layer's `fixed` mode).
//!
//! Nothing on the project's main path depends on this crate: the instruction key the skeletons carry
//! is `roo_formats::instruction_key` (re-exported here as [`compute_instruction_prefix`]).
//!
//! Everything here is deliberately *faithful*, quirks included; it is not the way the rest of this
//! project reads task files. All functions are panic-free on arbitrary input.
//!
//! JavaScript semantics are reproduced where they matter: UTF-16 lengths and cuts, the ECMAScript `\s`
//! and `\w` classes, full-Unicode `toLowerCase`, `JSON.parse`/`JSON.stringify`, `Date` parsing and the
//! V8 sort. One policy is ours, because a Rust `String` cannot hold an unpaired surrogate: wherever the
//! legacy string would contain one, ours has U+FFFD (ECMAScript's `toWellFormed()`), see
//! [below](crate#lone-surrogates).
//!
//! ## Lone surrogates
//!
//! A cut at a UTF-16 position that splits a surrogate pair (prefix length `k`, the 197-unit message cut,
//! the 200-unit `<task>` cut, the 200 + 200 sequence cut), a numeric reference such as `&#55357;` or
//! `&#x1F600;`'s 16-bit truncation landing in the surrogate range, or a `"\ud83d"` escape in a JSON file
//! all produce U+FFFD where JS would hold the lone surrogate. U+FFFD is one UTF-16 unit, not white
//! space, not a word character and caseless, so lengths, trimming and matching are otherwise unchanged.

#![forbid(unsafe_code)]

mod analysis;
mod engine;
mod extract;
mod folder;
mod index;
mod js;
mod links;
mod name_walk;
mod prefix;
mod sequence;
mod shaped;
mod sub_instructions;
mod tool_calls;

pub use analysis::{
    analyze_task_legacy, analyze_task_legacy_files, extract_new_task_instructions_legacy,
    read_legacy_task_files, read_regular_file, LegacyAnalysis, LegacyFile, LegacyTaskFiles,
    MAX_CONVERSATION_FILE_SIZE, MAX_SIDE_FILE_SIZE,
};
pub use engine::{engine_candidates, EngineCandidate, EngineError, Kind as EngineCandidateKind};
pub use extract::{
    extract_from_messages, main_instruction, parse_ui_for_instructions, run_chain, ChainResult,
    LegacyInstruction, PATTERN_NAMES,
};
pub use folder::{FixedFolder, LegacyFolder};
pub use index::{LegacyInstructionIndex, SearchTrace};
pub use js::json_parse;
pub use links::legacy_links;
pub use name_walk::entries_named_with_prefixes;
pub use prefix::{compute_instruction_prefix, DEFAULT_PREFIX_LEN};
pub use shaped::{reconstruct_shaped, ShapedLink, ShapedLinks};
pub use sub_instructions::{instruction_similarity, sub_instructions};
pub use tool_calls::{trace_tool_calls, TraceToolCall};
