//! Placeholder filling: `{F}`, `{f}`, `{m}`, `{n}` and the other keys of the text banks, with values drawn
//! from a workspace.

use std::fmt::Write as _;

use super::workspace::{pascal, Workspace, NOUNS, VERBS};
use crate::rng::Rng;

/// Per-call slot filler: replaces `{X}` placeholders with workspace-aware values.
pub struct Slots<'a> {
    pub ws: &'a Workspace,
}

impl Slots<'_> {
    fn slot(&self, key: &str, rng: &mut Rng, out: &mut String) {
        let ws = self.ws;
        match key {
            "F" => out.push_str(&ws.source(rng)),
            "T" => out.push_str(&ws.test(rng)),
            "f" | "g" => out.push_str(&ws.func(rng)),
            "m" => out.push_str(rng.pick(&ws.modules)),
            "n" => {
                let _ = write!(out, "{}", rng.range(2, 400));
            }
            "N" => {
                let _ = write!(out, "{}", rng.range(100, 99_999));
            }
            "k" => out.push_str(rng.pick(NOUNS)),
            "v" => out.push_str(rng.pick(VERBS)),
            "E" => {
                out.push_str(&pascal(rng.pick(NOUNS)));
                out.push_str("Error");
            }
            "C" => out.push_str(&pascal(rng.pick(NOUNS))),
            "lib" => out.push_str(ws.lib(rng)),
            "cmd" => out.push_str(ws.test_cmd()),
            "w" => out.push_str(&ws.name),
            "ext" => out.push_str(ws.ext()),
            _ => {
                out.push('{');
                out.push_str(key);
                out.push('}');
            }
        }
    }

    /// Appends `template` with its placeholders filled.
    pub fn fill_into(&self, template: &str, rng: &mut Rng, out: &mut String) {
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) if close <= 4 => {
                    self.slot(&after[..close], rng, out);
                    rest = &after[close + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
    }

    pub fn fill(&self, template: &str, rng: &mut Rng) -> String {
        let mut s = String::with_capacity(template.len() + 32);
        self.fill_into(template, rng, &mut s);
        s
    }
}
