//! The API models a task may use, with their prices and provider profiles, and which era uses which.

use crate::rng::Rng;
use crate::Era;

/// The models a task of an era may use: (id, anthropic protocol, USD per Mtok in/out/cache write/cache read,
/// provider profile name).
pub struct Model {
    pub id: &'static str,
    pub anthropic: bool,
    pub prices: [f64; 4],
    pub profile: &'static str,
}

pub const MODELS: &[Model] = &[
    Model {
        id: "claude-3-5-sonnet-20240620",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic",
    },
    Model {
        id: "claude-3-5-sonnet-20241022",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic",
    },
    Model {
        id: "claude-3-7-sonnet-20250219",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic-sonnet",
    },
    Model {
        id: "claude-sonnet-4-20250514",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic-sonnet",
    },
    Model {
        id: "google/gemini-2.5-pro",
        anthropic: false,
        prices: [1.25, 10.0, 0.0, 0.31],
        profile: "openrouter",
    },
    Model {
        id: "claude-sonnet-4-5",
        anthropic: true,
        prices: [3.0, 15.0, 3.75, 0.3],
        profile: "anthropic-sonnet",
    },
    Model {
        id: "gpt-5.4",
        anthropic: false,
        prices: [1.25, 10.0, 0.0, 0.125],
        profile: "openai-gpt5",
    },
    Model {
        id: "qwen3:32b",
        anthropic: false,
        prices: [0.0, 0.0, 0.0, 0.0],
        profile: "local-qwen",
    },
];

pub(super) fn model_for(era: Era, rng: &mut Rng) -> usize {
    match era {
        Era::ClaudeDev2024 => 0,
        Era::StackXmlOld => rng.pick(&[1, 2, 2]),
        Era::StackXml => rng.pick(&[2, 3, 3, 4]),
        Era::Native | Era::HistoryItem | Era::V2Wrapper => rng.pick(&[5, 5, 6, 7]),
    }
}
