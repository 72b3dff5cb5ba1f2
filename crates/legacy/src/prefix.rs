//! `computeInstructionPrefix` of the compatibility target (spec: legacy-server.md §4.1). The scanner
//! itself is `roo_formats::instruction_key` (the skeletons' `truncatedInstruction` and child prefixes
//! use it); here a regex-based transcription of the same steps checks it by property tests.

pub use roo_formats::instruction_key::{compute_instruction_prefix, DEFAULT_PREFIX_LEN};

#[cfg(test)]
pub(crate) mod reference {
    //! The same algorithm transcribed step by step with the `regex` crate (explicit JS classes, no
    //! `(?i)`), used to cross-check the scanner.
    use crate::js::{ci_pattern, JS_SPACE_CLASS};
    use regex::{Captures, Regex};
    use roo_js::utf16_prefix;

    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<String, Regex>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }

    fn re(p: &str) -> Regex {
        CACHE.with(|c| {
            c.borrow_mut()
                .entry(p.to_owned())
                .or_insert_with(|| match Regex::new(p) {
                    Ok(r) => r,
                    Err(e) => panic!("bad reference pattern {p}: {e}"),
                })
                .clone()
        })
    }

    /// Surrogate code units produced by step 3 are carried through the `&str` regex steps as characters
    /// of the private-use block U+E000..U+E7FF (inputs of the property tests avoid that block).
    fn unit_to_char(u: u16) -> String {
        if (0xD800..0xE000).contains(&u) {
            char::from_u32(0xE000 + u32::from(u - 0xD800))
                .map(String::from)
                .unwrap_or_default()
        } else {
            String::from_utf16_lossy(&[u])
        }
    }

    fn char_code(d: &str, radix: u32) -> u16 {
        let v = if radix == 16 {
            let sig = d.trim_start_matches('0');
            if sig.len() > 32 {
                return 0;
            }
            u128::from_str_radix(if sig.is_empty() { "0" } else { sig }, 16)
                .map(|v| v as f64)
                .unwrap_or(f64::NAN)
        } else {
            d.parse::<f64>().unwrap_or(f64::NAN)
        };
        if v.is_finite() {
            (v.trunc() % 65536.0) as u16
        } else {
            0
        }
    }

    pub(crate) fn compute(raw: &str, k: usize) -> String {
        if raw.is_empty() {
            return String::new();
        }
        let ws = JS_SPACE_CLASS;
        let mut s = re("^\u{FEFF}").replace(raw, "").into_owned();
        for (pat, rep) in [
            (r"\\r\\n", "\n"),
            (r"\\n", "\n"),
            (r"\\t", "\t"),
            (r"\\\\", "\\"),
            (r#"\\""#, "\""),
            (r"\\'", "'"),
        ] {
            s = re(pat).replace_all(&s, rep).into_owned();
        }
        s = re("&#([0-9]+);")
            .replace_all(&s, |c: &Captures| unit_to_char(char_code(&c[1], 10)))
            .into_owned();
        s = re("&#x([0-9a-fA-F]+);")
            .replace_all(&s, |c: &Captures| unit_to_char(char_code(&c[1], 16)))
            .into_owned();
        let units: Vec<u16> = s
            .chars()
            .flat_map(|c| {
                let cp = c as u32;
                if (0xE000..0xE800).contains(&cp) {
                    vec![(0xD800 + cp - 0xE000) as u16]
                } else {
                    let mut b = [0u16; 2];
                    c.encode_utf16(&mut b).to_vec()
                }
            })
            .collect();
        s = String::from_utf16_lossy(&units);

        let tag_any = re("<[^>]+>");
        let spaces = re(&format!("{ws}+"));
        let clean = |c: &str| -> String {
            let a = tag_any.replace_all(c, " ");
            let b = spaces.replace_all(&a, " ");
            b.trim_matches(crate::js::is_js_space).to_owned()
        };
        let block = |name: &str| {
            // `\b` after the name, spelled without assertions: either `>` right away, or a non-word
            // non-`>` character followed by `[^>]*>`.
            re(&format!(
                "<{ws}*{n}(?:>|[^A-Za-z0-9_>][^>]*>)((?s:.)*?)<{ws}*/{ws}*{n}{ws}*>",
                n = ci_pattern(name)
            ))
        };
        let task_re = block("task");
        let parent: Vec<String> = task_re
            .captures_iter(&s)
            .map(|c| clean(&c[1]))
            .filter(|c| !c.is_empty())
            .collect();
        if !parent.is_empty() {
            s = task_re.replace_all(&s, " ").into_owned();
        }
        let msgs: Vec<String> = block("message")
            .captures_iter(&s)
            .map(|c| clean(&c[1]))
            .filter(|c| !c.is_empty())
            .collect();
        s = re(&format!(
            "^[\"']?{}[\"']?{ws}*:{ws}*[\"']?",
            ci_pattern("content")
        ))
        .replace(&s, "")
        .into_owned();
        s = re("[\"']$").replace(&s, "").into_owned();
        let t = ci_pattern("task");
        let nt = ci_pattern("new_task");
        for pat in [
            format!("<{ws}*{t}{ws}*>"),
            format!("<{ws}*/{ws}*{t}{ws}*>"),
            format!("<{ws}*{nt}(?:>|[^A-Za-z0-9_>][^>]*>)"),
            format!("<{ws}*/{ws}*{nt}{ws}*>"),
        ] {
            s = re(&pat).replace_all(&s, " ").into_owned();
        }
        s = tag_any.replace_all(&s, " ").into_owned();
        if !parent.is_empty() || !msgs.is_empty() {
            let all: Vec<String> = parent.into_iter().chain(msgs).collect();
            s = format!("{s} {}", all.join(" "));
        }
        let s = s.to_lowercase();
        let s = spaces.replace_all(&s, " ");
        let s = s.trim_matches(crate::js::is_js_space);
        utf16_prefix(s, k)
            .trim_end_matches(crate::js::is_js_space)
            .to_owned()
    }
}
#[cfg(test)]
mod examples {
    use super::*;

    /// The reference transcription on worked examples (the scanner's own are in roo-formats).
    #[test]
    fn reference_agrees_on_examples() {
        for input in [
            "Hello   World\n\nfoo",
            "&lt;task&gt; a &amp; b &#65;&#x42; \\n done",
            "<task>\nMain  instruction here\n</task> trailing",
            "\"content\": \"Bonjour le monde\"",
            "<new_task><mode>code</mode><message>Do X thing please</message></new_task>",
            "\u{FEFF}İstanbul ÉTÉ",
        ] {
            assert_eq!(
                reference::compute(input, DEFAULT_PREFIX_LEN),
                compute_instruction_prefix(input, DEFAULT_PREFIX_LEN),
                "{input:?}"
            );
        }
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use crate::js::is_js_space;
    use proptest::prelude::*;
    use roo_js::utf16_len;

    const FRAGMENTS: &[&str] = &[
        "<task>",
        "</task>",
        "< TASK a=1>",
        "</ Task >",
        "<tasks>",
        "<message>",
        "</message>",
        "< Message x>",
        "</ message >",
        "<new_task>",
        "</new_task>",
        "<NEW_TASK mode>",
        "<mode>",
        "</mode>",
        "<b>",
        "<>",
        "<",
        ">",
        "content:",
        "\"content\": \"",
        "'Content' : '",
        "&#65;",
        "&#x42;",
        "&#55357;",
        "&#xDE00;",
        "&#56832;",
        "&#128512;",
        "&#x1F600;",
        "&#38;#x41;",
        "&lt;",
        "&amp;",
        "&#;",
        "&#x;",
        "\\n",
        "\\r\\n",
        "\\t",
        "\\\\",
        "\\\"",
        "\\'",
        "'",
        "\"",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\u{A0}",
        "\u{2028}",
        "\u{FEFF}",
        "\u{85}",
        "\u{3000}",
        "\u{200B}",
        "İ",
        "Σ",
        "ΟΣ",
        "ß",
        "😀",
        "ǅ",
        "K",
        "ſ",
        "abc",
        "Hello World",
        "x",
    ];

    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            3 => proptest::sample::select(FRAGMENTS).prop_map(str::to_owned),
            1 => any::<String>(),
            1 => "[a-zA-Z ]{0,12}",
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    /// The reference carries step-3 surrogates through private-use characters; keep inputs out of
    /// that block so the two transcriptions see the same text.
    fn without_marker_block(s: &str) -> String {
        s.chars()
            .map(|c| {
                if ('\u{E000}'..'\u{E800}').contains(&c) {
                    'x'
                } else {
                    c
                }
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn output_invariants(s in text(), k in 0usize..260) {
            let out = compute_instruction_prefix(&s, k);
            prop_assert!(utf16_len(&out) <= k);
            prop_assert!(!out.starts_with(is_js_space) && !out.ends_with(is_js_space));
            prop_assert!(!out.contains("  "));
            prop_assert!(!out.chars().any(|c| is_js_space(c) && c != ' '));
        }

        #[test]
        fn scanner_agrees_with_regex_reference(s in text(), k in prop_oneof![Just(192usize), 0usize..260]) {
            let s = without_marker_block(&s);
            prop_assert_eq!(compute_instruction_prefix(&s, k), reference::compute(&s, k));
        }

        #[test]
        fn default_length_matches_reference_on_long_inputs(s in proptest::collection::vec(text(), 1..6)) {
            let s = without_marker_block(&s.concat());
            prop_assert_eq!(
                compute_instruction_prefix(&s, DEFAULT_PREFIX_LEN),
                reference::compute(&s, DEFAULT_PREFIX_LEN)
            );
        }
    }
}
