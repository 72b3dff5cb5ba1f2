//! Lexical vectors: BM25-style sparse vectors stored beside the dense ones, so identifiers, file
//! names and error strings are findable, and search works with no model at all.
//!
//! Terms are folded (lower case, accents removed, so `prévisions` matches `previsions`), a light
//! plural fold is applied, and identifiers are kept whole *and* in parts: `ERR_MODULE_NOT_FOUND`
//! gives `err_module_not_found`, `err`, `module`, `found`; `src/services/cart.js` gives the path,
//! `cart.js`, `services`, `cart`; `parseArgs` gives `parseargs`, `parse`, `args`. A document term
//! weighs `tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))`; the store multiplies by the inverse
//! document frequency it keeps (`Modifier::Idf` in Qdrant), which makes the dot product a BM25
//! score.

use std::collections::BTreeMap;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

const K1: f32 = 1.2;
const B: f32 = 0.75;
/// Average chunk length in terms, used for length normalisation (chunks are about 800 characters).
const AVG_LEN: f32 = 110.0;

/// A sparse vector: sorted, distinct indices and their weights.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct SparseVec {
    pub indices: Vec<u32>,
    pub values: Vec<f32>,
}

impl SparseVec {
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Dot product with another sparse vector, weighting each shared term with `idf`.
    pub fn dot_weighted(&self, other: &SparseVec, idf: impl Fn(u32) -> f32) -> f32 {
        let (mut i, mut j, mut sum) = (0usize, 0usize, 0f32);
        while i < self.indices.len() && j < other.indices.len() {
            match self.indices[i].cmp(&other.indices[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    sum += self.values[i] * other.values[j] * idf(self.indices[i]);
                    i += 1;
                    j += 1;
                }
            }
        }
        sum
    }
}

/// Short words of English and French that carry no meaning for search.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "but",
    "by",
    "can",
    "could",
    "do",
    "does",
    "for",
    "from",
    "has",
    "have",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "it's",
    "let",
    "me",
    "my",
    "no",
    "not",
    "of",
    "on",
    "or",
    "so",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "this",
    "to",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "i'll",
    "i'm",
    "user",
    "assistant",
    "au",
    "aux",
    "avec",
    "ce",
    "ces",
    "cette",
    "dans",
    "de",
    "des",
    "du",
    "elle",
    "en",
    "est",
    "et",
    "il",
    "je",
    "la",
    "le",
    "les",
    "leur",
    "lui",
    "ma",
    "mais",
    "me",
    "mes",
    "mon",
    "ne",
    "nous",
    "on",
    "ou",
    "par",
    "pas",
    "pour",
    "qu",
    "que",
    "qui",
    "sa",
    "se",
    "ses",
    "son",
    "sur",
    "ta",
    "te",
    "tes",
    "ton",
    "tu",
    "un",
    "une",
    "vos",
    "votre",
    "vous",
    "y",
    "c",
    "d",
    "j",
    "l",
    "m",
    "n",
    "s",
    "t",
    "est-ce",
    "quoi",
    "comment",
    "pourquoi",
];

fn is_stopword(w: &str) -> bool {
    STOPWORDS.contains(&w)
}

/// Lower case without accents.
pub(crate) fn fold(s: &str) -> String {
    s.nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// A light plural fold: `codes` → `code`, `réponses` → `reponse`, `tests` → `test`.
fn stem(w: &str) -> &str {
    if w.len() > 3 && w.is_char_boundary(w.len() - 1) {
        if let Some(base) = w.strip_suffix('s') {
            if !base.ends_with('s') && !base.ends_with('u') && !base.ends_with('i') {
                return base;
            }
        }
        if let Some(base) = w.strip_suffix('x') {
            if base.ends_with("au") || base.ends_with("eu") {
                return base;
            }
        }
    }
    w
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Characters that join the parts of an identifier, a path or a version (`a.b`, `a-b`, `a/b`).
fn is_joiner(c: char) -> bool {
    matches!(c, '.' | '-' | '/' | '\\' | ':' | '@' | '#' | '\'')
}

/// Split a word on camelCase boundaries (`parseArgs` → `parse`, `Args`; `HTTPServer` → `HTTP`,
/// `Server`).
fn camel_parts(w: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = w.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0usize;
    for k in 1..chars.len() {
        let (b, c) = chars[k];
        let prev = chars[k - 1].1;
        let next = chars.get(k + 1).map(|x| x.1);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_alphabetic() && c.is_numeric())
            || (prev.is_numeric() && c.is_alphabetic())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase));
        if boundary {
            parts.push(&w[start..b]);
            start = b;
        }
    }
    parts.push(&w[start..]);
    parts
}

/// The terms of a text, in order (a term may repeat).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0usize;
    while i < chars.len() {
        if !is_word_char(chars[i]) {
            i += 1;
            continue;
        }
        // A compound: word characters, joined by single joiners between word characters.
        let start = i;
        let mut end = i;
        while end < chars.len() {
            let joins = is_joiner(chars[end])
                && end + 1 < chars.len()
                && is_word_char(chars[end + 1])
                && end > start;
            if is_word_char(chars[end]) || joins {
                end += 1;
            } else {
                break;
            }
        }
        i = end.max(start + 1);
        let compound: String = chars[start..end].iter().collect();
        emit_compound(&compound, &mut out);
    }
    out
}

fn push_term(t: &str, out: &mut Vec<String>) {
    let f = fold(t);
    let f = f.trim_matches(|c: char| c == '_' || c == '\'');
    if f.is_empty() || is_stopword(f) {
        return;
    }
    // Identifiers (paths, snake_case, camelCase) are kept as written; plain words get the
    // plural fold.
    let identifier =
        !f.chars().all(char::is_alphabetic) || t.chars().skip(1).any(char::is_uppercase);
    if !identifier {
        out.push(stem(f).to_owned());
    } else {
        out.push(f.to_owned());
    }
}

fn emit_compound(compound: &str, out: &mut Vec<String>) {
    // French elisions: `l'alias` → `alias`; English `don't` stays one term.
    let compound = match compound.find('\'') {
        Some(at) if at <= 2 && compound[..at].chars().all(char::is_alphabetic) => {
            &compound[at + 1..]
        }
        _ => compound,
    };
    let pieces: Vec<&str> = compound
        .split(|c: char| is_joiner(c) || c == '_')
        .filter(|p| !p.is_empty())
        .collect();
    let mut sub: Vec<&str> = Vec::new();
    for p in &pieces {
        let cp = camel_parts(p);
        if cp.len() > 1 && pieces.len() > 1 {
            sub.push(p);
        }
        sub.extend(cp);
    }
    let is_compound = pieces.len() > 1 || sub.len() > pieces.len();
    if is_compound {
        push_term(compound, out);
        // The last two parts of a path or a dotted name (`cart.js` of `src/services/cart.js`).
        if pieces.len() > 2 {
            let cut = compound.rfind(['/', '\\']);
            if let Some(b) = cut {
                push_term(&compound[b + 1..], out);
            }
        }
    }
    for s in sub {
        push_term(s, out);
    }
}

/// The index of a term in the sparse space.
pub fn term_index(term: &str) -> u32 {
    (xxhash_rust::xxh3::xxh3_64(term.as_bytes()) & 0xffff_ffff) as u32
}

/// The BM25 document vector of a text (idf excluded: the store applies it).
pub fn document_vector(text: &str) -> SparseVec {
    let ts = terms(text);
    let len = ts.len() as f32;
    let mut tf: BTreeMap<u32, f32> = BTreeMap::new();
    for t in &ts {
        *tf.entry(term_index(t)).or_default() += 1.0;
    }
    let norm = K1 * (1.0 - B + B * len / AVG_LEN);
    let (indices, values) = tf
        .into_iter()
        .map(|(i, f)| (i, f * (K1 + 1.0) / (f + norm)))
        .unzip();
    SparseVec { indices, values }
}

/// The query vector of a text: each distinct term once, weight 1.
pub fn query_vector(text: &str) -> SparseVec {
    let mut idx: Vec<u32> = terms(text).iter().map(|t| term_index(t)).collect();
    idx.sort_unstable();
    idx.dedup();
    let values = vec![1.0; idx.len()];
    SparseVec {
        indices: idx,
        values,
    }
}

/// Inverse document frequency as Qdrant computes it for `Modifier::Idf`.
pub fn idf(docs: u64, docs_with_term: u64) -> f32 {
    let n = docs as f32;
    let df = docs_with_term as f32;
    ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_kept_whole_and_in_parts() {
        let t = terms("Cannot find module '@/components/Header' in src/services/cart.js");
        for want in [
            "cannot",
            "find",
            "module",
            "component",
            "header",
            "src/services/cart.js",
            "cart.js",
            "cart",
            "js",
        ] {
            assert!(t.contains(&want.to_owned()), "{want} missing from {t:?}");
        }
        let t = terms("ERR_MODULE_NOT_FOUND and parseArgs()");
        assert!(t.contains(&"err_module_not_found".to_owned()), "{t:?}");
        assert!(t.contains(&"parseargs".to_owned()), "{t:?}");
        assert!(
            t.contains(&"parse".to_owned()) && t.contains(&"arg".to_owned()),
            "{t:?}"
        );
    }

    #[test]
    fn accents_case_and_plurals_fold() {
        assert_eq!(terms("Prévisions"), terms("previsions"));
        assert_eq!(terms("les réponses"), vec!["reponse".to_owned()]);
        assert_eq!(terms("l'alias"), terms("alias"));
        assert_eq!(
            terms("discount codes"),
            vec!["discount".to_owned(), "code".to_owned()]
        );
    }

    #[test]
    fn bm25_prefers_rare_matching_terms() {
        let d1 = document_vector("the cache of forecasts expires after ten minutes");
        let d2 = document_vector("discount codes in the checkout");
        let q = query_vector("forecast cache");
        assert!(q.dot_weighted(&d1, |_| 1.0) > 0.0);
        assert_eq!(q.dot_weighted(&d2, |_| 1.0), 0.0);
        assert!(idf(100, 1) > idf(100, 50));
    }
}
