//! The instruction key of the skeletons' legacy fields (`truncatedInstruction`,
//! `childTaskInstructionPrefixes`): `computeInstructionPrefix` of the compatibility target (spec:
//! legacy-server.md §4.1), written as a single-purpose scanner instead of a chain of regular
//! expressions. roo-legacy holds a regex-based transcription of the same steps and checks this one
//! against it by property tests. The matching key of the hierarchy is
//! [`crate::text::normalize_instruction`].

use roo_js::utf16_prefix;
use roo_js::{
    collapse_js_space, is_js_space, is_js_word, js_trim, js_trim_end, starts_with_ascii_ci,
};

/// The prefix length the legacy server uses everywhere (`K = 192`).
pub const DEFAULT_PREFIX_LEN: usize = 192;

/// The legacy normalisation of an instruction into a matching key, bit-identical to the TypeScript
/// `computeInstructionPrefix(raw, k)` (modulo the lone-surrogate policy below):
///
/// 1. a leading BOM is dropped;
/// 2. literal two-character escapes are unescaped in this order: `\r\n`, `\n`, `\t`, `\\`, `\"`, `\'`;
/// 3. numeric character references `&#NNN;` then `&#xHHH;` are decoded with `String.fromCharCode`
///    semantics (the code is reduced modulo 2^16); named entities (`&lt;`, `&amp;` …) are **not** decoded;
/// 4. the contents of `<task …>…</task>` blocks are collected (tags stripped, white space collapsed) and,
///    if any is non-empty, the blocks are cut out of the text — their contents are re-appended at the end;
/// 5. the contents of `<message …>…</message>` blocks are collected the same way but left in place, so
///    they end up twice in the key;
/// 6. a leading `content:` / `"content": "` prefix and one trailing quote are removed;
/// 7. `<task>`, `</task>`, `<new_task …>`, `</new_task>` become spaces, then 8. every remaining tag does;
/// 9. the collected contents are appended, separated by spaces;
/// 10. the text is lowercased (full Unicode, as JS `toLowerCase`), JS white-space runs become one space,
///     and the ends are trimmed;
/// 11. the result is cut to `k` UTF-16 code units and trimmed at the end.
///
/// Lone surrogates: where the legacy string would contain an unpaired surrogate (a `&#55357;`-style
/// reference, or a cut at `k` that splits a pair), the output has U+FFFD instead, i.e. the output equals
/// `legacy.toWellFormed()`. U+FFFD counts as one unit, so the `≤ k` units bound still holds.
pub fn compute_instruction_prefix(raw: &str, k: usize) -> String {
    if raw.is_empty() {
        return String::new();
    }
    crate::kept::with_kept(&PIPE, MAX_KEPT_PIPE, |pipe| key_through(pipe, raw, k))
}

/// The steps of [`compute_instruction_prefix`] on a non-empty text, each writing the whole text
/// again into the pipe's other buffer (or leaving it as it is when it changes nothing).
fn key_through(pipe: &mut Pipe, raw: &str, k: usize) -> String {
    // 1. BOM
    pipe.start(raw.strip_prefix('\u{FEFF}').unwrap_or(raw));
    // 2. literal escapes, one global pass each, in this order
    if pipe.text.contains('\\') {
        for (from, to) in LITERAL_ESCAPES {
            pipe.apply(|s, out| replace_into(s, from, to, out));
        }
    }
    // 3. numeric character references
    if pipe.text.contains("&#") {
        pipe.apply(|s, out| {
            out.push_str(&decode_numeric_references(s));
            true
        });
    }
    // 4. <task> blocks are moved to the end
    let task_blocks = find_blocks(&pipe.text, "task");
    let parent_instr: Vec<String> = task_blocks
        .iter()
        .map(|b| clean_capture(&pipe.text[b.inner.clone()]))
        .filter(|c| !c.is_empty())
        .collect();
    if !parent_instr.is_empty() {
        pipe.apply(|s, out| {
            replace_spans_into(s, task_blocks.iter().map(|b| b.outer.clone()), out);
            true
        });
    }
    // 5. <message> blocks are duplicated
    let msg_contents: Vec<String> = find_blocks(&pipe.text, "message")
        .iter()
        .map(|b| clean_capture(&pipe.text[b.inner.clone()]))
        .filter(|c| !c.is_empty())
        .collect();
    // 6. `content:` prefix and a trailing quote
    let prefix = pipe.text.len() - strip_content_prefix(&pipe.text).len();
    pipe.text.replace_range(..prefix, "");
    if pipe.text.ends_with(['"', '\'']) {
        pipe.text.pop();
    }
    // 7. task / new_task tags
    pipe.apply(|s, out| replace_tags_into(s, |t, p| match_simple_tag(t, p, "task", false), out));
    pipe.apply(|s, out| replace_tags_into(s, |t, p| match_simple_tag(t, p, "task", true), out));
    pipe.apply(|s, out| replace_tags_into(s, match_new_task_open, out));
    pipe.apply(|s, out| replace_tags_into(s, |t, p| match_simple_tag(t, p, "new_task", true), out));
    // 8. any other tag
    pipe.apply(|s, out| replace_tags_into(s, match_any_tag, out));
    // 9. re-inject the collected contents
    if !parent_instr.is_empty() || !msg_contents.is_empty() {
        pipe.text.push(' ');
        let all: Vec<&str> = parent_instr
            .iter()
            .chain(msg_contents.iter())
            .map(String::as_str)
            .collect();
        pipe.text.push_str(&all.join(" "));
    }
    // 10 and 11.
    lower_collapse_cut(&pipe.text, k)
}

/// Step 2's literal escapes, in the order they are replaced.
const LITERAL_ESCAPES: [(&str, &str); 6] = [
    ("\\r\\n", "\n"),
    ("\\n", "\n"),
    ("\\t", "\t"),
    ("\\\\", "\\"),
    ("\\\"", "\""),
    ("\\'", "'"),
];

/// The text of an instruction key in the making, in one of two buffers: a step writes the next
/// text into the other one. Both are kept by the thread between keys (while neither is over
/// [`MAX_KEPT_PIPE`] bytes), so the keys of a scan's long instructions, each written again
/// by every step, do not allocate and free a buffer of the instruction's size each time.
#[derive(Default)]
struct Pipe {
    text: String,
    spare: String,
}

impl crate::kept::Kept for Pipe {
    fn kept_bytes(&self) -> usize {
        self.text.capacity().max(self.spare.capacity())
    }
}

impl Pipe {
    fn start(&mut self, text: &str) {
        self.text.clear();
        self.text.push_str(text);
    }

    /// One step: `step` writes the new text into its second argument and says whether it
    /// changed anything (when not, what it wrote is ignored).
    fn apply(&mut self, step: impl FnOnce(&str, &mut String) -> bool) {
        self.spare.clear();
        if step(&self.text, &mut self.spare) {
            std::mem::swap(&mut self.text, &mut self.spare);
        }
    }
}

/// The largest buffer a thread keeps for its next key (a pipe with a larger one is freed).
const MAX_KEPT_PIPE: usize = 1 << 20;

thread_local! {
    static PIPE: std::cell::Cell<Pipe> = std::cell::Cell::new(Pipe::default());
}

/// `s.replace(from, to)` written into `out`; false (and `out` untouched) when `from` is not in `s`.
fn replace_into(s: &str, from: &str, to: &str, out: &mut String) -> bool {
    let mut last = 0;
    for at in memchr::memmem::find_iter(s.as_bytes(), from.as_bytes()) {
        out.push_str(&s[last..at]);
        out.push_str(to);
        last = at + from.len();
    }
    if last == 0 {
        return false;
    }
    out.push_str(&s[last..]);
    true
}

/// Steps 10 and 11: the text lower-cased, its JS white-space runs made one space, trimmed, cut to
/// `k` UTF-16 units and trimmed at the end; built only as far as the cut, which is certain once
/// more than `k` units end on a character that is not a space. (A `Σ` takes the whole-text path:
/// its lower case depends on the letters around it.)
fn lower_collapse_cut(s: &str, k: usize) -> String {
    if s.contains('Σ') {
        let lowered = s.to_lowercase();
        let collapsed = collapse_js_space(&lowered);
        return js_trim_end(&utf16_prefix(js_trim(&collapsed), k)).to_owned();
    }
    let mut out = String::with_capacity(s.len().min(4 * k + 8));
    let mut units = 0usize;
    // True at the start too, so the leading white space is dropped (the trim).
    let mut in_space = true;
    for c in s.chars() {
        for lower in c.to_lowercase() {
            if is_js_space(lower) {
                if !in_space {
                    out.push(' ');
                    units += 1;
                    in_space = true;
                }
            } else {
                out.push(lower);
                units += lower.len_utf16();
                in_space = false;
                if units > k {
                    return js_trim_end(&utf16_prefix(&out, k)).to_owned();
                }
            }
        }
    }
    js_trim_end(&utf16_prefix(&out, k)).to_owned()
}

/// Step 3 on UTF-16 code units, so that two references forming a surrogate pair combine as in JS;
/// whatever stays unpaired becomes U+FFFD when converting back.
fn decode_numeric_references(s: &str) -> String {
    let units: Vec<u16> = s.encode_utf16().collect();
    let units = decode_pass(&units, false);
    let units = decode_pass(&units, true);
    String::from_utf16_lossy(&units)
}

fn decode_pass(units: &[u16], hex: bool) -> Vec<u16> {
    let mut out = Vec::with_capacity(units.len());
    let mut i = 0;
    while i < units.len() {
        if units[i] == u16::from(b'&') && units.get(i + 1) == Some(&u16::from(b'#')) {
            let mut j = i + 2;
            let ok_x = !hex || units.get(j) == Some(&u16::from(b'x'));
            if ok_x {
                if hex {
                    j += 1;
                }
                let start = j;
                while j < units.len() && is_ref_digit(units[j], hex) {
                    j += 1;
                }
                if j > start && units.get(j) == Some(&u16::from(b';')) {
                    out.push(char_code(&units[start..j], hex));
                    i = j + 1;
                    continue;
                }
            }
        }
        out.push(units[i]);
        i += 1;
    }
    out
}

fn is_ref_digit(u: u16, hex: bool) -> bool {
    u < 128 && {
        let b = u as u8;
        if hex {
            b.is_ascii_hexdigit()
        } else {
            b.is_ascii_digit()
        }
    }
}

/// `String.fromCharCode(parseInt(digits, radix))`: the (correctly rounded) double, reduced with
/// `ToUint16` (non-finite → 0, otherwise truncated modulo 2^16).
fn char_code(digits: &[u16], hex: bool) -> u16 {
    let text: String = digits.iter().map(|&u| char::from(u as u8)).collect();
    let value = if hex {
        let sig = text.trim_start_matches('0');
        if sig.len() > 32 {
            // ≥ 2^128: the double is a multiple of 2^76 (or infinite) — either way 0 modulo 2^16.
            return 0;
        }
        match u128::from_str_radix(if sig.is_empty() { "0" } else { sig }, 16) {
            Ok(v) => v as f64,
            Err(_) => return 0,
        }
    } else {
        text.parse::<f64>().unwrap_or(f64::NAN)
    };
    if !value.is_finite() {
        return 0;
    }
    (value.trunc() % 65536.0) as u16
}

#[derive(Debug, Clone)]
struct Block {
    outer: std::ops::Range<usize>,
    inner: std::ops::Range<usize>,
}

fn skip_space(s: &str, mut i: usize) -> usize {
    while let Some(c) = s[i..].chars().next() {
        if !is_js_space(c) {
            break;
        }
        i += c.len_utf8();
    }
    i
}

/// `<\s*NAME\b[^>]*>` at `p` (which holds `<`); returns the end of the tag.
fn match_open(s: &str, p: usize, name: &str) -> Option<usize> {
    let mut i = skip_space(s, p + 1);
    if !starts_with_ascii_ci(&s[i..], name) {
        return None;
    }
    i += name.len();
    if s[i..].chars().next().is_some_and(is_js_word) {
        return None;
    }
    s[i..].find('>').map(|rel| i + rel + 1)
}

/// `<\s*NAME\s*>` (or `<\s*\/\s*NAME\s*>` when `closing`) at `p`; returns the end of the tag.
fn match_simple_tag(s: &str, p: usize, name: &str, closing: bool) -> Option<usize> {
    let mut i = skip_space(s, p + 1);
    if closing {
        if s.as_bytes().get(i) != Some(&b'/') {
            return None;
        }
        i = skip_space(s, i + 1);
    }
    if !starts_with_ascii_ci(&s[i..], name) {
        return None;
    }
    i = skip_space(s, i + name.len());
    (s.as_bytes().get(i) == Some(&b'>')).then_some(i + 1)
}

fn match_new_task_open(s: &str, p: usize) -> Option<usize> {
    match_open(s, p, "new_task")
}

/// `<[^>]+>` at `p`.
fn match_any_tag(s: &str, p: usize) -> Option<usize> {
    let rel = s[p + 1..].find('>')?;
    (rel > 0).then_some(p + 1 + rel + 1)
}

/// All non-overlapping matches of `<\s*NAME\b[^>]*>([\s\S]*?)<\s*\/\s*NAME\s*>` (case-insensitive).
fn find_blocks(s: &str, name: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(rel) = s[pos..].find('<') {
        let p = pos + rel;
        if let Some(open_end) = match_open(s, p, name) {
            // The lazy body ends at the first closing tag after the opening one.
            let mut q = open_end;
            let mut found = None;
            while let Some(r) = s[q..].find('<') {
                let c = q + r;
                if let Some(end) = match_simple_tag(s, c, name, true) {
                    found = Some((c, end));
                    break;
                }
                q = c + 1;
            }
            match found {
                Some((close_start, close_end)) => {
                    out.push(Block {
                        outer: p..close_end,
                        inner: open_end..close_start,
                    });
                    pos = close_end;
                    continue;
                }
                // No closing tag after this opening one, hence none after any later one either.
                None => break,
            }
        }
        pos = p + 1;
    }
    out
}

/// `c.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim()`.
fn clean_capture(c: &str) -> String {
    let untagged = replace_tags(c, match_any_tag);
    js_trim(&collapse_js_space(&untagged)).to_owned()
}

/// Writes `s` into `out` with the given (sorted, disjoint) byte ranges replaced by a single space
/// each.
fn replace_spans_into(
    s: &str,
    spans: impl Iterator<Item = std::ops::Range<usize>>,
    out: &mut String,
) {
    let mut last = 0;
    for r in spans {
        out.push_str(&s[last..r.start]);
        out.push(' ');
        last = r.end;
    }
    out.push_str(&s[last..]);
}

/// A global `replace(re, ' ')` where `matcher(s, p)` says whether the pattern matches at the `<` at `p`.
fn replace_tags(s: &str, matcher: impl Fn(&str, usize) -> Option<usize>) -> String {
    let mut out = String::new();
    if replace_tags_into(s, matcher, &mut out) {
        out
    } else {
        s.to_owned()
    }
}

/// [`replace_tags`] written into `out`; false (and `out` untouched) when nothing matches.
fn replace_tags_into(
    s: &str,
    matcher: impl Fn(&str, usize) -> Option<usize>,
    out: &mut String,
) -> bool {
    let mut last = 0;
    let mut pos = 0;
    let mut matched = false;
    while let Some(rel) = memchr::memchr(b'<', &s.as_bytes()[pos..]) {
        let p = pos + rel;
        if let Some(end) = matcher(s, p) {
            out.push_str(&s[last..p]);
            out.push(' ');
            last = end;
            pos = end;
            matched = true;
        } else {
            pos = p + 1;
        }
    }
    if matched {
        out.push_str(&s[last..]);
    }
    matched
}

/// Step 6: `/^["']?content["']?\s*:\s*["']?/i`.
fn strip_content_prefix(s: &str) -> &str {
    let mut i = usize::from(s.starts_with(['"', '\'']));
    if !starts_with_ascii_ci(&s[i..], "content") {
        return s;
    }
    i += "content".len();
    if s[i..].starts_with(['"', '\'']) {
        i += 1;
    }
    i = skip_space(s, i);
    if !s[i..].starts_with(':') {
        return s;
    }
    i = skip_space(s, i + 1);
    if s[i..].starts_with(['"', '\'']) {
        i += 1;
    }
    &s[i..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Steps 10 and 11 over the whole text, as the legacy code does them.
    fn whole_text(s: &str, k: usize) -> String {
        let lowered = s.to_lowercase();
        let collapsed = collapse_js_space(&lowered);
        js_trim_end(&utf16_prefix(js_trim(&collapsed), k)).to_owned()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Building only as far as the cut gives what the whole-text steps give, for any cut.
        #[test]
        fn the_early_cut_is_the_whole_text_cut(
            pieces in proptest::collection::vec(prop_oneof![
                "[a-zA-Z]{1,6}",
                Just(" ".to_owned()),
                Just("  \n\t".to_owned()),
                Just("\u{A0}\u{3000}\u{FEFF}".to_owned()),
                Just("😀".to_owned()),
                Just("İ".to_owned()),
                Just("ÉTÉ".to_owned()),
                Just("ΟΔΟΣ".to_owned()),
                Just("\u{0}".to_owned()),
            ], 0..40),
            k in 0usize..40,
        ) {
            let text = pieces.concat();
            prop_assert_eq!(lower_collapse_cut(&text, k), whole_text(&text, k), "{:?}", text);
        }
    }

    #[test]
    fn measured_examples() {
        let cases = [
            ("Hello   World\n\nfoo", "hello world foo"),
            (
                "&lt;task&gt; a &amp; b &#65;&#x42; \\n done",
                "&lt;task&gt; a &amp; b ab done",
            ),
            (
                "<task>\nMain  instruction here\n</task> trailing",
                "trailing main instruction here",
            ),
            ("\"content\": \"Bonjour le monde\"", "bonjour le monde"),
            (
                "<new_task><mode>code</mode><message>Do X thing please</message></new_task>",
                "code do x thing please do x thing please",
            ),
            ("\u{FEFF}İstanbul ÉTÉ", "i\u{307}stanbul été"),
        ];
        for (input, want) in cases {
            assert_eq!(
                compute_instruction_prefix(input, DEFAULT_PREFIX_LEN),
                want,
                "{input:?}"
            );
        }
    }

    #[test]
    fn empty_and_zero_length() {
        assert_eq!(compute_instruction_prefix("", 192), "");
        assert_eq!(compute_instruction_prefix("abc", 0), "");
        assert_eq!(compute_instruction_prefix("   \u{FEFF}\u{3000} ", 192), "");
    }

    #[test]
    fn truncation_counts_utf16_units_and_trims() {
        let long = "a".repeat(191) + " b";
        assert_eq!(compute_instruction_prefix(&long, 192), "a".repeat(191));
        // An emoji straddling unit 192: the dangling high surrogate becomes U+FFFD.
        let s = "a".repeat(191) + "😀";
        let out = compute_instruction_prefix(&s, 192);
        assert_eq!(out, "a".repeat(191) + "\u{FFFD}");
        assert_eq!(roo_js::utf16_len(&out), 192);
        let s = "a".repeat(190) + "😀";
        assert_eq!(compute_instruction_prefix(&s, 192), s);
    }

    #[test]
    fn numeric_references_follow_from_char_code() {
        // > 0xFFFF is truncated to 16 bits: 0x1F600 → 0xF600.
        assert_eq!(compute_instruction_prefix("&#x1F600;", 192), "\u{F600}");
        assert_eq!(compute_instruction_prefix("&#128512;", 192), "\u{F600}");
        // A pair spelled as two references combines, as in JS.
        assert_eq!(compute_instruction_prefix("&#55357;&#xDE00;", 192), "😀");
        // A lone one becomes U+FFFD.
        assert_eq!(compute_instruction_prefix("x&#55357;y", 192), "x\u{FFFD}y");
        // Decoding is two passes: the decimal pass can create a hex reference.
        assert_eq!(compute_instruction_prefix("&#38;#x41;", 192), "a");
        // 1e23 is a multiple of 2^24 as a double: code 0, a NUL that trimming keeps.
        assert_eq!(
            compute_instruction_prefix("&#99999999999999999999999;", 192),
            "\u{0}"
        );
        assert_eq!(compute_instruction_prefix("&#65537;", 192), "\u{1}");
        assert_eq!(compute_instruction_prefix("&#65", 192), "&#65");
        assert_eq!(compute_instruction_prefix("&#X41;", 192), "&#x41;");
    }

    #[test]
    fn tags_and_blocks() {
        assert_eq!(compute_instruction_prefix("<a <task> b>", 192), "");
        assert_eq!(
            compute_instruction_prefix("<TASK>abc</ Task > x", 192),
            "x abc"
        );
        assert_eq!(compute_instruction_prefix("<tasks>abc</tasks>", 192), "abc");
        assert_eq!(
            compute_instruction_prefix("<task a=1><b>in</b></task>tail", 192),
            "tail in"
        );
        assert_eq!(compute_instruction_prefix("<task></task> x", 192), "x");
        assert_eq!(compute_instruction_prefix("a <> b", 192), "a <> b");
        assert_eq!(compute_instruction_prefix("'Content' : 'Hi'", 192), "hi");
        assert_eq!(
            compute_instruction_prefix("contents: x", 192),
            "contents: x"
        );
    }

    #[test]
    fn final_sigma_and_special_lowercase() {
        assert_eq!(compute_instruction_prefix("ΟΔΟΣ ΟΔΟΣ", 192), "οδος οδος");
        assert_eq!(compute_instruction_prefix("ΣΑ", 192), "σα");
    }
}
