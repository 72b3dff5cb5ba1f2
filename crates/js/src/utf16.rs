//! Strings measured and cut in UTF-16 code units, as JavaScript measures them.

use std::borrow::Cow;

/// `s.length`: the number of UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of at most `max` UTF-16 code units that does not split a character.
pub fn truncate_utf16(s: &str, max: usize) -> &str {
    let mut units = 0usize;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &s[..i];
        }
    }
    s
}

/// `s.substring(0, n)`. Where unit `n` falls inside a surrogate pair, the high surrogate that
/// JavaScript would keep alone becomes U+FFFD.
pub fn utf16_prefix(s: &str, n: usize) -> Cow<'_, str> {
    let mut units = 0usize;
    for (i, c) in s.char_indices() {
        let next = units + c.len_utf16();
        if next > n {
            return if units < n {
                Cow::Owned(format!("{}\u{FFFD}", &s[..i]))
            } else {
                Cow::Borrowed(&s[..i])
            };
        }
        units = next;
    }
    Cow::Borrowed(s)
}

/// `s.substring(start)`. Where `start` falls inside a surrogate pair, the low surrogate that
/// JavaScript would keep alone becomes U+FFFD.
pub fn utf16_suffix_from(s: &str, start: usize) -> Cow<'_, str> {
    let mut units = 0usize;
    for (i, c) in s.char_indices() {
        if units >= start {
            return Cow::Borrowed(&s[i..]);
        }
        units += c.len_utf16();
        if units > start {
            return Cow::Owned(format!("\u{FFFD}{}", &s[i + c.len_utf8()..]));
        }
    }
    Cow::Borrowed("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cuts_count_code_units() {
        assert_eq!(utf16_len("ab😀c"), 5);
        assert_eq!(utf16_len(""), 0);
        assert_eq!(truncate_utf16("a😀b", 2), "a");
        assert_eq!(truncate_utf16("a😀b", 3), "a😀");
        assert_eq!(utf16_prefix("ab😀c", 3), "ab\u{FFFD}");
        assert_eq!(utf16_prefix("ab😀c", 4), "ab😀");
        assert_eq!(utf16_prefix("ab😀c", 2), "ab");
        assert_eq!(utf16_prefix("ab", 10), "ab");
        assert_eq!(utf16_suffix_from("ab😀c", 3), "\u{FFFD}c");
        assert_eq!(utf16_suffix_from("ab😀c", 2), "😀c");
        assert_eq!(utf16_suffix_from("ab😀c", 0), "ab😀c");
        assert_eq!(utf16_suffix_from("ab😀c", 9), "");
    }

    /// `substring` over the code units, lone surrogates replaced: what the functions must give.
    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    proptest! {
        #[test]
        fn prefix_and_suffix_are_substring(s in "[a-z😀é]{0,12}", n in 0usize..30) {
            let u = units(&s);
            let cut = n.min(u.len());
            prop_assert_eq!(utf16_len(&s), u.len());
            prop_assert_eq!(utf16_prefix(&s, n).into_owned(), String::from_utf16_lossy(&u[..cut]));
            prop_assert_eq!(utf16_suffix_from(&s, n).into_owned(), String::from_utf16_lossy(&u[cut..]));
            let t = truncate_utf16(&s, n);
            prop_assert!(utf16_len(t) <= n && s.starts_with(t));
        }
    }
}
