//! The pattern of a grep: a literal or a regular expression of the `regex` crate, and the byte
//! pre-check that lets most task files go by without being parsed.
//!
//! Hostile patterns: the `regex` crate has no backtracking (no back-references, no look-around);
//! it runs finite automata, so a search costs at most time linear in the pattern's compiled size
//! times the text's length, whatever the pattern. `(a+)+$` on a long run of `a` is no slower
//! than `a+$`. The compiled size is bounded ([`SIZE_LIMIT`]), so a pattern that would blow up
//! (`\w{1000}{1000}`) is refused when it is built, not run.
//!
//! The pre-check: every match of the pattern starts with one of the literals `regex-syntax`
//! extracts from it (when that set is finite). A file holds its texts JSON-encoded, where a run of
//! characters other than `"`, `\`, `/` and control characters stands as it is, unless the writer
//! escaped it as `\uXXXX`. So a file that holds none of those runs and no `\u` cannot hold a
//! match, and is not parsed. Files that do not look like UTF-8 are always parsed.

use crate::error::{Error, Result};
use regex::bytes::Regex as BytesRegex;
use regex::{Regex, RegexBuilder};
use regex_syntax::hir::literal::{ExtractKind, Extractor};

/// Longest pattern taken, in bytes.
pub const MAX_PATTERN_BYTES: usize = 4096;
/// Bound on a compiled pattern (and on its lazy DFA's cache).
pub const SIZE_LIMIT: usize = 8 << 20;

/// A compiled grep pattern.
#[derive(Debug, Clone)]
pub struct Matcher {
    pub regex: Regex,
    /// `None`: every file must be parsed.
    precheck: Option<BytesRegex>,
}

impl Matcher {
    /// Compile `pattern`, a literal unless `is_regex`.
    pub fn new(pattern: &str, is_regex: bool, ignore_case: bool) -> Result<Matcher> {
        if pattern.is_empty() {
            return Err(Error::InvalidArgument("the pattern is empty".to_owned()));
        }
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(Error::InvalidArgument(format!(
                "the pattern is {} bytes long; at most {MAX_PATTERN_BYTES} are taken",
                pattern.len()
            )));
        }
        let source = if is_regex {
            pattern.to_owned()
        } else {
            regex::escape(pattern)
        };
        let regex = RegexBuilder::new(&source)
            .case_insensitive(ignore_case)
            .multi_line(true)
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(SIZE_LIMIT)
            .nest_limit(64)
            .build()
            .map_err(|e| Error::InvalidArgument(format!("the pattern is refused: {e}")))?;
        let precheck = precheck(&source, ignore_case);
        Ok(Matcher { regex, precheck })
    }

    /// Whether a file's bytes may hold a match in one of its texts.
    pub fn may_match(&self, bytes: &[u8]) -> bool {
        let Some(pre) = &self.precheck else {
            return true;
        };
        !looks_like_utf8(bytes) || pre.is_match(bytes)
    }

    /// Where the pre-check's literals stand in `bytes` (decoded text: every match starts at one of
    /// them); `None` when the pattern has no pre-check and every text must be searched.
    pub fn precheck_starts(&self, bytes: &[u8]) -> Option<Vec<usize>> {
        let pre = self.precheck.as_ref()?;
        Some(pre.find_iter(bytes).map(|m| m.start()).collect())
    }

    /// Whether the pre-check can rule files out (for reports and tests).
    pub fn has_precheck(&self) -> bool {
        self.precheck.is_some()
    }
}

/// UTF-16 files (with or without a byte-order mark) hold NUL bytes near the start.
fn looks_like_utf8(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4)];
    !head.contains(&0) && !head.starts_with(&[0xff, 0xfe]) && !head.starts_with(&[0xfe, 0xff])
}

/// A byte that a JSON writer may not write as it is in a string.
fn escapable(b: u8) -> bool {
    b == b'"' || b == b'\\' || b == b'/' || b < 0x20
}

/// The longest run of `lit` that a JSON string holds verbatim (see the module documentation).
fn verbatim_run(lit: &[u8]) -> &[u8] {
    lit.split(|&b| escapable(b))
        .max_by_key(|r| r.len())
        .unwrap_or(&[])
}

/// The pre-check of a pattern: any of its literals' verbatim runs, or a `\u` escape.
fn precheck(source: &str, ignore_case: bool) -> Option<BytesRegex> {
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .multi_line(true)
        .nest_limit(64)
        .build()
        .parse(source)
        .ok()?;
    let mut ex = Extractor::new();
    ex.kind(ExtractKind::Prefix).limit_total(256);
    let seq = ex.extract(&hir);
    let lits = seq.literals()?;
    if lits.is_empty() {
        return None;
    }
    let mut alts: Vec<String> = Vec::with_capacity(lits.len() + 1);
    for lit in lits {
        let run = verbatim_run(lit.as_bytes());
        // A run inside a character the file may have replaced (invalid UTF-8) is no evidence.
        let run = std::str::from_utf8(run).ok()?;
        if run.is_empty() || run.contains('\u{fffd}') {
            return None;
        }
        alts.push(regex::escape(run));
    }
    alts.sort();
    alts.dedup();
    alts.push(r"\\u".to_owned());
    regex::bytes::RegexBuilder::new(&alts.join("|"))
        .unicode(false)
        .size_limit(SIZE_LIMIT)
        .build()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_skip_files_without_them() {
        let m = Matcher::new("npm ERR! code", false, false).expect("literal");
        assert!(m.has_precheck());
        assert!(m.may_match(br#"[{"text":"npm ERR! code E404"}]"#));
        assert!(!m.may_match(br#"[{"text":"all good"}]"#));
        // Escaped in the file: `\u0045` is `E`.
        assert!(m.may_match(br#"[{"text":"npm \u0045RR! code"}]"#));
        // A quote in the pattern is escaped in the file: the run beside it is checked.
        let m = Matcher::new(r#"say "hi there""#, false, false).expect("literal");
        assert!(m.may_match(br#"[{"text":"say \"hi there\""}]"#));
        assert!(!m.may_match(br#"[{"text":"say hi"}]"#));
    }

    #[test]
    fn regexes_get_a_precheck_when_their_literals_are_finite() {
        let m = Matcher::new(r"ERR_[A-Z]+_NOT_FOUND", true, false).expect("regex");
        assert!(m.has_precheck());
        assert!(!m.may_match(b"nothing here"));
        assert!(m.may_match(b"ERR_MODULE_NOT_FOUND"));
        let m = Matcher::new(r"\w+ failed", true, false).expect("regex");
        assert!(!m.has_precheck());
        assert!(m.may_match(b"anything"));
        let m = Matcher::new("timeout", false, true).expect("case-insensitive");
        assert!(m.may_match(b"TimeOut"));
        assert!(m.may_match(&[0xff, 0xfe, b't', 0]));
    }

    #[test]
    fn hostile_patterns_run_in_linear_time_or_are_refused() {
        // Nested quantifiers: exponential for a backtracking engine, linear here.
        let text = format!("{}!", "a".repeat(100_000));
        for p in [r"(a+)+$", r"(a|a)*b", r"(a*)*(b|c)", r"^(\w+\s?)*$"] {
            let m = Matcher::new(p, true, false).expect(p);
            assert!(!m.regex.is_match(&text), "{p}");
        }
        for p in [r"\w{1000}{1000}", r"(a", r"(?<=a)b", r"(a)\1"] {
            let e = Matcher::new(p, true, false).expect_err(p);
            assert_eq!(e.code(), "INVALID_ARGUMENT", "{p}: {e}");
        }
        let long = "x".repeat(MAX_PATTERN_BYTES + 1);
        assert!(Matcher::new(&long, false, false).is_err());
        assert!(Matcher::new("", false, false).is_err());
    }

    #[test]
    fn literals_are_not_regexes() {
        let m = Matcher::new("a.b(c)*", false, false).expect("literal");
        assert!(m.regex.is_match("x a.b(c)* y"));
        assert!(!m.regex.is_match("aXbcc"));
    }
}
