//! Strings measured and cut in UTF-16 code units, as JavaScript measures them.

use std::borrow::Cow;

/// `s.length`: the number of UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    // Every byte that starts a character is one unit, and a 4-byte character (lead byte 0xF0 and
    // above) is a surrogate pair: one more. Counted byte by byte, which the compiler vectorises.
    s.bytes()
        .map(|b| usize::from((b & 0xC0) != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// `min(utf16_len(s), cap)`, without counting past what decides it: a text of more than `3 * cap`
/// bytes has more than `cap` units (no unit takes more than three bytes). For comparisons of a
/// possibly long text's `length` with a small bound.
pub fn utf16_len_upto(s: &str, cap: usize) -> usize {
    if s.len() / 3 >= cap {
        return cap;
    }
    utf16_len(s).min(cap)
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

/// `s.substring(s.length - n)`: the last `n` UTF-16 code units, found from the end. Where the cut
/// falls inside a surrogate pair, the low surrogate that JavaScript would keep alone becomes U+FFFD.
pub fn utf16_suffix_last(s: &str, n: usize) -> Cow<'_, str> {
    if n == 0 {
        return Cow::Borrowed("");
    }
    let mut units = 0usize;
    for (i, c) in s.char_indices().rev() {
        units += c.len_utf16();
        if units == n {
            return Cow::Borrowed(&s[i..]);
        }
        if units > n {
            return Cow::Owned(format!("\u{FFFD}{}", &s[i + c.len_utf8()..]));
        }
    }
    Cow::Borrowed(s)
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
        assert_eq!(utf16_suffix_last("ab😀c", 2), "\u{FFFD}c");
        assert_eq!(utf16_suffix_last("ab😀c", 3), "😀c");
        assert_eq!(utf16_suffix_last("ab😀c", 0), "");
        assert_eq!(utf16_suffix_last("ab😀c", 9), "ab😀c");
        assert_eq!(utf16_len("é€😀\u{0}"), 5);
    }

    /// `substring` over the code units, lone surrogates replaced: what the functions must give.
    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    proptest! {
        #[test]
        fn prefix_and_suffix_are_substring(s in "[a-z😀é€\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}]{0,12}", n in 0usize..30) {
            let u = units(&s);
            let cut = n.min(u.len());
            prop_assert_eq!(utf16_len(&s), u.len());
            prop_assert_eq!(utf16_len_upto(&s, n), u.len().min(n));
            prop_assert_eq!(utf16_prefix(&s, n).into_owned(), String::from_utf16_lossy(&u[..cut]));
            prop_assert_eq!(utf16_suffix_from(&s, n).into_owned(), String::from_utf16_lossy(&u[cut..]));
            prop_assert_eq!(utf16_suffix_last(&s, n).into_owned(), String::from_utf16_lossy(&u[u.len() - cut..]));
            let t = truncate_utf16(&s, n);
            prop_assert!(utf16_len(t) <= n && s.starts_with(t));
        }
    }
}
