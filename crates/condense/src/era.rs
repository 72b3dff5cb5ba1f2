//! Which rules of the extension to follow: today's (the default) or those of an older release, so
//! that a task condensed by that release replays to the same answer.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An extension release, `major.minor.patch`. Rules switch at the releases listed in the methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Era(pub u32, pub u32, pub u32);

/// How the summary message is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SummaryShape {
    /// v3.17 – v3.28.0: assistant summary inserted before the last 3 messages; nothing removed.
    Inserted,
    /// v3.28.1 – v3.35.x: `[first, summary, last 3]`; the middle is deleted.
    Destructive,
    /// v3.36 – v3.42.x: assistant summary with `condenseId` before the last 3; the middle is tagged.
    Tagged,
    /// v3.43 and later: user summary appended; every earlier message tagged.
    FreshStart,
}

/// How `getEffectiveApiHistory` filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectiveHistory {
    /// Before v3.36: no filtering (messages were deleted instead).
    None,
    /// v3.36 – v3.42.x: drop messages whose condense/truncation parent exists.
    TagsOnly,
    /// v3.43 and later: everything from the last summary, orphan tool results dropped.
    FromLastSummary,
}

impl Era {
    /// The release the rules of this crate follow by default: Zoo Code 3.80.0, which continues
    /// Roo Code's release line (Roo Code stopped at 3.52.x; Zoo Code's releases are 3.53 and later).
    pub const HEAD: Era = Era(3, 80, 0);
    /// Roo Code's last release line (3.52.1), whose rules a caller may still ask for.
    pub const ROO_LAST: Era = Era(3, 52, 1);

    /// Parse `"3.28.1"`, `"v3.36"` or `"3"` (missing parts are 0).
    pub fn parse(s: &str) -> Option<Era> {
        let t = s.trim().trim_start_matches(['v', 'V']);
        let mut parts = t.split('.');
        let major = parts.next()?.trim().parse().ok()?;
        let minor = match parts.next() {
            Some(p) => p.trim().parse().ok()?,
            None => 0,
        };
        let patch = match parts.next() {
            Some(p) => p
                .trim()
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()?,
            None => 0,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(Era(major, minor, patch))
    }

    fn at_least(self, major: u32, minor: u32, patch: u32) -> bool {
        self >= Era(major, minor, patch)
    }

    /// LLM condensing exists (v3.17+); before, only the sliding window ran.
    pub fn has_condensing(self) -> bool {
        self.at_least(3, 17, 0)
    }

    /// Fresh-start condensing (v3.43+): no kept tail, summary appended as a user message.
    pub fn fresh_start(self) -> bool {
        self.at_least(3, 43, 0)
    }

    /// The "context grew" check (v3.19.0 – v3.42.x).
    pub fn context_grew_check(self) -> bool {
        self.at_least(3, 19, 0) && !self.fresh_start()
    }

    /// `getMessagesSinceLastSummary` puts the first message in front of a non-user summary
    /// (v3.19.1 – v3.42.x).
    pub fn first_message_before_summary(self) -> bool {
        self.at_least(3, 19, 1) && !self.fresh_start()
    }

    /// The first kept message joins the summarised slice when it answers tool calls from it
    /// (v3.35.0 – v3.42.x).
    pub fn keeps_tool_results_with_their_calls(self) -> bool {
        self.at_least(3, 35, 0) && !self.fresh_start()
    }

    /// The assistant summary starts with a synthetic reasoning block (v3.37 – v3.42.x).
    pub fn summary_reasoning_block(self) -> bool {
        self.at_least(3, 37, 0) && !self.fresh_start()
    }

    pub fn summary_shape(self) -> SummaryShape {
        if self.fresh_start() {
            SummaryShape::FreshStart
        } else if self.at_least(3, 36, 0) {
            SummaryShape::Tagged
        } else if self.at_least(3, 28, 1) {
            SummaryShape::Destructive
        } else {
            SummaryShape::Inserted
        }
    }

    pub fn effective_history(self) -> EffectiveHistory {
        if self.fresh_start() {
            EffectiveHistory::FromLastSummary
        } else if self.at_least(3, 36, 0) {
            EffectiveHistory::TagsOnly
        } else {
            EffectiveHistory::None
        }
    }

    /// The context size of an `api_req_started` record adds its cache tokens: before v3.29.5,
    /// for the Anthropic protocol (and for records without a protocol, older than v3.23.7).
    pub fn context_adds_cache(self, api_protocol: Option<&str>) -> bool {
        !self.at_least(3, 29, 5) && api_protocol != Some("openai")
    }

    /// A `maxTokens` of zero or below reserves the default 8 192 output tokens (v3.66+, where VS
    /// Code's language-model API reports -1); before, any non-zero value was reserved as it is.
    pub fn reserves_default_for_non_positive_max_tokens(self) -> bool {
        self.at_least(3, 66, 0)
    }

    /// Truncation tags and inserts a marker (v3.36+) instead of deleting.
    pub fn tagged_truncation(self) -> bool {
        self.at_least(3, 36, 0)
    }
}

impl Default for Era {
    fn default() -> Self {
        Era::HEAD
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

impl Serialize for Era {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Era {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Era::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "era {s:?} is not a release number such as \"3.28.1\""
            ))
        })
    }
}
