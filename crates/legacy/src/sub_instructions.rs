//! Two text readers of the legacy instruction index (compat's `TaskInstructionIndex`):
//!
//! * [`sub_instructions`], the splitter that cuts a parent task's text into the sub-instructions
//!   its children may start with, each registered under the parent;
//! * [`instruction_similarity`], the word-overlap score of its `calculateSimilarity` (and so of
//!   `searchSimilar`).
//!
//! The splitter's six patterns, each over the whole text, in this order, each match trimmed and
//! kept when longer than its minimum (UTF-16 units): a `<new_task …>` whose `<message>` follows
//! at once (only white space between, > 10), a fenced block with a language word (its body, > 20),
//! a `-`/`*`/`+` list item (> 10), a numbered item (> 10), a `<task>` block (> 10), and a line
//! indented by two white-space characters or more that does not start with `//` (> 10). Repeats
//! are dropped, the first kept.
//!
//! ECMAScript semantics: `\s` is JS white space (it crosses lines: a list marker's spaces may run
//! onto the next line), `\w` and `\d` are ASCII, `.` stops at `\n`, `\r`, U+2028 and U+2029, and a
//! multiline `^` stands at the start or after any of those four.

use crate::js::{compile, js_trim, JS_DOT, JS_LINE_END, JS_SPACE_CLASS};
use regex::Regex;
use roo_js::utf16_len;
use std::collections::HashSet;
use std::sync::LazyLock;

/// One pattern of the splitter: the group it keeps and the length a kept text must exceed.
struct Part {
    re: Option<Regex>,
    group: usize,
    min: usize,
    /// The indented-line pattern passes over comment lines.
    skip_comments: bool,
}

fn part(pattern: &str, group: usize, min: usize) -> Part {
    Part {
        re: compile(pattern),
        group,
        min,
        skip_comments: false,
    }
}

/// A multiline `^`: the start of the text, or the line end before it (consumed: a match of these
/// patterns never ends on a line end, so the one before the next line is always free).
fn line_start() -> String {
    format!(r"(?:\A|{JS_LINE_END})")
}

/// The patterns in the order the legacy splitter ran them. A multiline `$` after a greedy `.+` is
/// left out: that run stops only at a line end or the end of the text, where `$` holds.
static PARTS: LazyLock<[Part; 6]> = LazyLock::new(|| {
    let (ws, dot, bol) = (JS_SPACE_CLASS, JS_DOT, line_start());
    [
        part(
            &format!(r"<new_task[^>]*>{ws}*<message>((?s:.)*?)</message>"),
            1,
            10,
        ),
        part(&format!(r"```([0-9A-Za-z_]+){ws}*((?s:.)*?)```"), 2, 20),
        part(&format!(r"{bol}[-*+]{ws}+({dot}+)"), 1, 10),
        part(&format!(r"{bol}[0-9]+\.{ws}+({dot}+)"), 1, 10),
        part(r"<task>((?s:.)*?)</task>", 1, 10),
        Part {
            skip_comments: true,
            ..part(&format!(r"{bol}(?:{ws}{{2,}}| {{2}})({dot}+)"), 1, 10)
        },
    ]
});

/// The sub-instructions of a parent task's text, in the order the legacy splitter found them.
pub fn sub_instructions(text: &str) -> Vec<String> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    for p in PARTS.iter() {
        let Some(re) = p.re.as_ref() else { continue };
        for c in re.captures_iter(text) {
            let v = js_trim(c.get(p.group).map_or("", |m| m.as_str()));
            if utf16_len(v) > p.min && !(p.skip_comments && v.starts_with("//")) && seen.insert(v) {
                out.push(v.to_owned());
            }
        }
    }
    out
}

/// The words the similarity compares: the lowercased text's runs of ASCII word characters, longer
/// than 3 and not a stop word, each once, in order.
fn words(text: &str) -> Vec<&str> {
    const STOP_WORDS: [&str; 19] = [
        "les", "des", "une", "est", "sont", "avec", "dans", "pour", "que", "qui", "sur", "par",
        "and", "the", "for", "are", "that", "this", "with",
    ];
    let mut seen = HashSet::new();
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() > 3 && !STOP_WORDS.contains(w) && seen.insert(*w))
        .collect()
}

/// The legacy index's similarity of two texts, in `[0, 1]`: the share of distinct words in common
/// (over the larger list), plus 0.1 for each common word longer than 4, capped at 1. Equal texts
/// score 1, a text with no word 0.
pub fn instruction_similarity(a: &str, b: &str) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if a == b {
        return 1.0;
    }
    // Lowercased first: U+212A (Kelvin) becomes `k`, U+0130 an `i` and a combining mark.
    let (la, lb) = (a.to_lowercase(), b.to_lowercase());
    let (w1, w2) = (words(&la), words(&lb));
    if w1.is_empty() || w2.is_empty() {
        return 0.0;
    }
    let larger = w1.len().max(w2.len()) as f64;
    let set2: HashSet<&str> = w2.into_iter().collect();
    let common: Vec<&str> = w1.into_iter().filter(|w| set2.contains(w)).collect();
    let long = common.iter().filter(|w| w.len() > 4).count() as f64;
    (common.len() as f64 / larger + 0.1 * long).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Texts made of the pieces the patterns look for, in any order.
    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("<new_task x>"),
            Just("<message>"),
            Just("</message>"),
            Just("<task>"),
            Just("</task>"),
            Just("```"),
            Just("```ts "),
            Just("- "),
            Just("* "),
            Just("1. "),
            Just("  "),
            Just("\t\t"),
            Just("\u{a0}"),
            Just("//"),
            Just("\n"),
            Just("\r"),
            Just("\u{2028}"),
            Just("word"),
            Just("a longer phrase"),
            Just("😀"),
            Just("é"),
            Just("\u{212A}"),
            Just("İ"),
            Just("_9"),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn pieces_are_distinct_trimmed_parts_of_the_text(t in text()) {
            let pieces = sub_instructions(&t);
            let distinct: HashSet<&String> = pieces.iter().collect();
            prop_assert_eq!(distinct.len(), pieces.len());
            for p in &pieces {
                prop_assert!(t.contains(p.as_str()));
                prop_assert_eq!(js_trim(p), p.as_str());
                prop_assert!(utf16_len(p) > 10);
            }
        }

        #[test]
        fn similarity_is_a_symmetric_share(a in text(), b in text()) {
            let s = instruction_similarity(&a, &b);
            prop_assert!((0.0..=1.0).contains(&s));
            prop_assert_eq!(s, instruction_similarity(&b, &a));
            if !a.is_empty() {
                prop_assert_eq!(instruction_similarity(&a, &a), 1.0);
            }
        }
    }

    #[test]
    fn every_pattern_compiles() {
        assert!(PARTS.iter().all(|p| p.re.is_some()));
    }

    #[test]
    fn each_kind_of_part_is_found_once() {
        let text = "<task>Analyse the repository</task>\n- Analyse the repository\n\
                    1. Write the migration scripts\n```sh\nnpm run build && npm publish\n```\n\
                    <new_task mode=\"x\">\n<message>Tag the release commit</message>\n\
                    \x20   // a comment line passed over\n    an indented note line";
        assert_eq!(
            sub_instructions(text),
            [
                "Tag the release commit",
                "npm run build && npm publish",
                "Analyse the repository",
                "Write the migration scripts",
                "an indented note line",
            ]
        );
    }

    #[test]
    fn lengths_are_utf16_units_and_lines_end_as_in_javascript() {
        // Five emoji and a letter are 11 units; four and a letter are 9.
        let text =
            "- 😀😀😀😀😀x\n- 😀😀😀😀x\r- list after a lone CR\u{2028}  indented after U+2028";
        assert_eq!(
            sub_instructions(text),
            [
                "😀😀😀😀😀x",
                "list after a lone CR",
                "indented after U+2028"
            ]
        );
    }

    #[test]
    fn similarity_counts_distinct_ascii_words() {
        assert_eq!(instruction_similarity("same text", "same text"), 1.0);
        assert_eq!(instruction_similarity("", "x"), 0.0);
        assert_eq!(instruction_similarity("the that with", "the that"), 0.0);
        // {alpha, beta, gamma} against {alpha, beta, delta}: 2/3 + 0.1 (alpha).
        let s = instruction_similarity("alpha alpha beta gamma", "alpha beta beta delta");
        assert_eq!(s, 2.0 / 3.0 + 0.1);
        // The Kelvin sign lowercases to `k`; `İ` to `i` and a combining mark that splits the word.
        assert_eq!(
            instruction_similarity("\u{212A}elvin İstanbul", "kelvin stanbul"),
            1.0
        );
    }
}
