//! What ECMAScript string methods and regular-expression classes treat as white space and word
//! characters, and the string operations built on them (`trim`, `/\\s+/g`, an ASCII `/i` prefix).

/// ECMAScript `WhiteSpace ∪ LineTerminator`, i.e. what `\s` matches without the `u` flag and what
/// `String.prototype.trim` removes. Note: U+FEFF is included, U+0085 is not (unlike Rust's
/// `char::is_whitespace`).
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// `\w` without the `u` flag: `[A-Za-z0-9_]`.
pub fn is_js_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `String.prototype.trim`.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// `String.prototype.trimEnd`.
pub fn js_trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_space)
}

/// `.replace(/\s+/g, ' ')`.
pub fn collapse_js_space(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_space = false;
    for c in s.chars() {
        if is_js_space(c) {
            if !in_space {
                out.push(' ');
                in_space = true;
            }
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

/// ASCII-case-insensitive `starts_with` (what a JS `/i` regex without `u` does for ASCII literals:
/// its canonicalisation never folds a non-ASCII character onto an ASCII one).
pub fn starts_with_ascii_ci(s: &str, lit: &str) -> bool {
    s.len() >= lit.len() && s.as_bytes()[..lit.len()].eq_ignore_ascii_case(lit.as_bytes())
}
