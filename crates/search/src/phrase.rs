//! Word order: exact phrases (`"…"` in a query) and the in-order boost of a plain query.
//!
//! BM25 and the embeddings ignore word order, so a search only finds candidate chunks; this module
//! checks their text. A text is read as a sequence of words: runs of letters, digits and `_`,
//! folded (lower case, accents removed), each CJK ideograph, kana or hangul syllable a word of its
//! own (those scripts put no spaces between words). A phrase is found where its words stand next
//! to each other, in order, whatever separates them (spaces, punctuation, line ends).
//!
//! Quoting: `"…"` marks a phrase; `\"` is a quote character that marks nothing (inside a phrase
//! or out); a quote left open marks nothing either.

use crate::lexical::fold;

/// A word of a text: its folded form and where it stands (byte offsets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub folded: String,
    pub start: usize,
    pub end: usize,
}

/// Scripts written without spaces: one character is one word.
fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30ff      // hiragana, katakana
        | 0x3400..=0x4dbf    // CJK extension A
        | 0x4e00..=0x9fff    // CJK unified ideographs
        | 0xac00..=0xd7af    // hangul syllables
        | 0xf900..=0xfaff    // CJK compatibility ideographs
        | 0x20000..=0x2ffff) // CJK extensions B and later
}

fn is_word_char(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_unspaced(c)
}

/// The words of a text, in order.
pub fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let close = |s: usize, e: usize, out: &mut Vec<Word>| {
        let folded = fold(&text[s..e]);
        if !folded.is_empty() {
            out.push(Word {
                folded,
                start: s,
                end: e,
            });
        }
    };
    for (i, c) in text.char_indices() {
        if is_word_char(c) {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            close(s, i, &mut out);
        }
        if is_unspaced(c) {
            close(i, i + c.len_utf8(), &mut out);
        }
    }
    if let Some(s) = start {
        close(s, text.len(), &mut out);
    }
    out
}

/// What a query asks about word order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhraseQuery {
    /// The quoted phrases, as folded words (empty phrases left out).
    pub phrases: Vec<Vec<String>>,
    /// Every word of the query, in order (for the in-order boost of a plain query).
    pub all: Vec<String>,
}

impl PhraseQuery {
    /// Read a query (see the [module documentation](self) for quoting).
    pub fn parse(query: &str) -> Self {
        let mut phrases = Vec::new();
        let mut outside = String::new();
        let mut current: Option<String> = None;
        let mut chars = query.chars().peekable();
        while let Some(c) = chars.next() {
            let escaped_quote = c == '\\' && chars.peek() == Some(&'"');
            if escaped_quote {
                chars.next();
            }
            match (c, escaped_quote, current.as_mut()) {
                ('"', false, None) => current = Some(String::new()),
                ('"', false, Some(p)) => {
                    let ws: Vec<String> = words(p).into_iter().map(|w| w.folded).collect();
                    outside.push(' ');
                    outside.push_str(p);
                    outside.push(' ');
                    if !ws.is_empty() {
                        phrases.push(ws);
                    }
                    current = None;
                }
                (_, true, Some(p)) => p.push('"'),
                (_, true, None) => outside.push('"'),
                (c, false, Some(p)) => p.push(c),
                (c, false, None) => outside.push(c),
            }
        }
        if let Some(open) = current {
            outside.push_str(&open);
        }
        let all = words(&outside).into_iter().map(|w| w.folded).collect();
        PhraseQuery { phrases, all }
    }

    /// Whether the query says anything about order: a phrase, or several words.
    pub fn is_active(&self) -> bool {
        !self.phrases.is_empty() || self.all.len() > 1
    }

    /// The word sequences a chunk is checked for: the phrases, or the whole plain query.
    fn sequences(&self) -> Vec<&[String]> {
        if self.phrases.is_empty() {
            if self.all.len() > 1 {
                vec![self.all.as_slice()]
            } else {
                Vec::new()
            }
        } else {
            self.phrases.iter().map(Vec::as_slice).collect()
        }
    }

    /// How well a text meets the order the query asks for: 2 when it holds every quoted phrase
    /// (or, for a plain query of several words, the whole query in order), 1 when it holds some
    /// of several phrases, 0 otherwise.
    pub fn tier(&self, text: &str) -> u8 {
        let seqs = self.sequences();
        if seqs.is_empty() {
            return 0;
        }
        let ws = words(text);
        let found = seqs.iter().filter(|s| !find(&ws, s).is_empty()).count();
        if found == seqs.len() {
            2
        } else {
            u8::from(found > 0)
        }
    }

    /// The byte ranges of `text` where a phrase (or the whole plain query) stands, in order.
    pub fn highlights(&self, text: &str) -> Vec<(usize, usize)> {
        let seqs = self.sequences();
        if seqs.is_empty() {
            return Vec::new();
        }
        let ws = words(text);
        let mut out: Vec<(usize, usize)> = seqs.iter().flat_map(|s| find(&ws, s)).collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Where `seq` stands in `ws`: the byte range of each occurrence.
fn find(ws: &[Word], seq: &[String]) -> Vec<(usize, usize)> {
    if seq.is_empty() || seq.len() > ws.len() {
        return Vec::new();
    }
    ws.windows(seq.len())
        .filter(|w| w.iter().zip(seq).all(|(a, b)| a.folded == *b))
        .filter_map(|w| Some((w.first()?.start, w.last()?.end)))
        .collect()
}

/// Put the chunks that meet the query's order first (stable: the ranking is kept within each
/// tier).
pub fn rerank<T>(q: &PhraseQuery, hits: Vec<T>, text: impl Fn(&T) -> &str) -> Vec<T> {
    if !q.is_active() {
        return hits;
    }
    let mut keyed: Vec<(u8, T)> = hits.into_iter().map(|h| (q.tier(text(&h)), h)).collect();
    // A stable sort: equal tiers keep their order.
    keyed.sort_by_key(|k| std::cmp::Reverse(k.0));
    keyed.into_iter().map(|(_, h)| h).collect()
}

/// A byte range of `text` as UTF-16 code units (what a JavaScript string indexes).
pub fn utf16_range(text: &str, (start, end): (usize, usize)) -> [u32; 2] {
    let s = roo_js::utf16::utf16_len(text.get(..start).unwrap_or(""));
    let len = roo_js::utf16::utf16_len(text.get(start..end).unwrap_or(""));
    [s as u32, (s + len) as u32]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_mark_phrases_and_escapes_do_not() {
        let q = PhraseQuery::parse(r#"cache "Refresh the  TOKEN" now"#);
        assert_eq!(q.phrases, vec![vec!["refresh", "the", "token"]]);
        assert_eq!(q.all, vec!["cache", "refresh", "the", "token", "now"]);
        let q = PhraseQuery::parse(r#"say \"hello world\" twice"#);
        assert!(q.phrases.is_empty(), "{q:?}");
        assert_eq!(q.all, vec!["say", "hello", "world", "twice"]);
        let q = PhraseQuery::parse(r#""an \"inner\" quote""#);
        assert_eq!(q.phrases, vec![vec!["an", "inner", "quote"]]);
        let q = PhraseQuery::parse(r#"open "quote never closed"#);
        assert!(q.phrases.is_empty());
        assert_eq!(q.all.len(), 4);
        assert!(PhraseQuery::parse(r#""" word"#).phrases.is_empty());
    }

    #[test]
    fn order_matters_and_separators_do_not() {
        let q = PhraseQuery::parse(r#""deploy the staging cluster""#);
        assert_eq!(q.tier("Then: deploy, the staging-cluster!"), 2);
        assert_eq!(q.tier("the staging cluster deploy"), 0);
        let plain = PhraseQuery::parse("staging cluster");
        assert_eq!(plain.tier("a staging cluster"), 2);
        assert_eq!(plain.tier("cluster staging"), 0);
        assert!(!PhraseQuery::parse("cluster").is_active());
    }

    #[test]
    fn accents_case_and_cjk() {
        let q = PhraseQuery::parse(r#""Prévisions MÉTÉO""#);
        assert_eq!(q.tier("les previsions meteo du jour"), 2);
        let text = "ログを確認してください。東京都の設定";
        let q = PhraseQuery::parse(r#""東京都""#);
        assert_eq!(q.tier(text), 2);
        let hl = q.highlights(text);
        assert_eq!(hl.len(), 1);
        assert_eq!(&text[hl[0].0..hl[0].1], "東京都");
        assert_eq!(PhraseQuery::parse(r#""京東""#).tier(text), 0);
        assert_eq!(utf16_range("é😀ab", (6, 8)), [3, 5]);
    }

    #[test]
    fn rerank_is_stable_within_tiers() {
        let q = PhraseQuery::parse(r#""red fox""#);
        let hits = rerank(
            &q,
            vec!["fox red", "a red fox", "red", "the red fox ran"],
            |h| h,
        );
        assert_eq!(hits, vec!["a red fox", "the red fox ran", "fox red", "red"]);
        let many: Vec<String> = (0..50)
            .map(|i| {
                if i % 7 == 3 {
                    format!("{i} red fox")
                } else {
                    format!("{i} fox")
                }
            })
            .collect();
        let want: Vec<String> = many
            .iter()
            .filter(|s| s.contains("red"))
            .chain(many.iter().filter(|s| !s.contains("red")))
            .cloned()
            .collect();
        assert_eq!(rerank(&q, many, |h| h.as_str()), want);
    }
}
