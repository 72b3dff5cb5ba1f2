//! Vocabularies and generators for plausible developer conversations (English and French): workspaces and
//! their file trees, instructions, assistant prose, reasoning, code, diffs, command output.
//!
//! Every generator draws from the caller's [`Rng`](crate::rng::Rng) only, in a fixed order, so that a seed
//! gives the same text.

mod code;
mod instructions;
mod prose;
mod slots;
mod workspace;

pub use code::{code, command_output, dev_server, diff, numbered, search_results};
pub use instructions::{child_instruction, question, result_text, root_instruction, todos};
pub use prose::{markdown, prose, reasoning};
pub use slots::Slots;
pub use workspace::{make_workspaces, Workspace};

/// Conversation language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    Fr,
}
