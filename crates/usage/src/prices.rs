//! The price table of the `calculate` cost mode: data kept in the crate (`data/prices.json`,
//! dated), or a file of the same shape given by the user, whose entries come first.
//!
//! A model id is looked up lower-cased, without a `provider/` prefix (`anthropic/claude-…` of a
//! router) or a Bedrock `anthropic.` prefix: the entry whose `match` text is the longest prefix
//! of it wins; among entries with that text, the one with the latest `from` date on or before
//! the request's day (the earliest entry for an older request: the table knows no older price).
//!
//! Nothing in a table is taken on faith: an entry with a price (any `…Price` or `…Multiplier`
//! number, tiers included) that is negative or above [`MAX_PRICE`], or whose `from` date is after
//! today, is refused and said in [`PriceTable::refused`] (a report lists it in its notes); the
//! others are used. A price file is read only when it is a regular file of at most
//! [`MAX_PRICE_FILE_BYTES`] (never a FIFO, a device or a sparse giant).

use crate::UsageError;
use roo_condense::cost::ModelInfo;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// The highest price a table may give, in USD per million tokens (or as a multiplier): some
/// hundred times the dearest model listed anywhere.
pub const MAX_PRICE: f64 = 1e4;

/// The largest price file read (the bundled table is some 5 KiB).
pub const MAX_PRICE_FILE_BYTES: u64 = 4 << 20;

const BUNDLED: &str = include_str!("../data/prices.json");

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(rename = "match")]
    matches: Vec<String>,
    #[serde(default)]
    from: Option<String>,
    #[serde(flatten)]
    info: ModelInfo,
}

#[derive(Debug, Clone, Deserialize)]
struct TableFile {
    #[serde(default)]
    updated: Option<String>,
    models: Vec<Entry>,
}

/// One priced match: its text, first day, prices.
#[derive(Debug, Clone)]
struct Price {
    text: String,
    /// 0: the user's file, 1: the bundled table (a user's entry beats a bundled one).
    rank: u8,
    from_day: i64,
    info: ModelInfo,
}

/// The price table.
#[derive(Debug, Clone)]
pub struct PriceTable {
    /// The bundled table's date, and the override file's path when one was given.
    pub updated: String,
    pub override_file: Option<String>,
    prices: Vec<Price>,
    /// A hash of the texts the table was read from (see [`PriceTable::fingerprint`]).
    fingerprint: u64,
    /// The entries refused (see the [module documentation](self)), each said in a sentence.
    pub refused: Vec<String>,
}

/// Today, in days since the epoch (UTC).
fn today() -> i64 {
    roo_js::now_ms().div_euclid(86_400_000)
}

/// The text of the price file `path`: a regular file of at most [`MAX_PRICE_FILE_BYTES`], opened
/// without blocking (a FIFO or a device is refused before a byte is read).
fn read_price_file(path: &Path) -> Result<String, UsageError> {
    use std::io::Read as _;
    let bad =
        |why: String| UsageError::InvalidArgument(format!("price table {}: {why}", path.display()));
    let file = roo_formats::read::open_nonblocking(path).map_err(|e| bad(e.to_string()))?;
    let md = file.metadata().map_err(|e| bad(e.to_string()))?;
    if !md.is_file() {
        return Err(bad(
            "not a regular file (a FIFO, a device or a folder); it was not read".into(),
        ));
    }
    if md.len() > MAX_PRICE_FILE_BYTES {
        return Err(bad(format!(
            "{} bytes, more than the {MAX_PRICE_FILE_BYTES} a price table may hold; it was not read",
            md.len()
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_PRICE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(e.to_string()))?;
    if bytes.len() as u64 > MAX_PRICE_FILE_BYTES {
        return Err(bad(format!(
            "it grew past the {MAX_PRICE_FILE_BYTES} bytes a price table may hold while it was read"
        )));
    }
    String::from_utf8(bytes).map_err(|_| bad("not UTF-8 text".into()))
}

fn hash_text(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Why a price entry cannot be used: a price out of bounds, or a `from` day after `today`.
fn entry_problem(e: &Entry, from_day: i64, today: i64) -> Option<String> {
    if from_day > today {
        return Some(format!(
            "it is dated {}, after today",
            e.from.as_deref().unwrap_or_default()
        ));
    }
    let info = serde_json::to_value(&e.info).ok()?;
    let mut stack = vec![(String::new(), &info)];
    while let Some((key, v)) = stack.pop() {
        match v {
            Value::Object(o) => stack.extend(o.iter().map(|(k, v)| (k.clone(), v))),
            Value::Array(a) => stack.extend(a.iter().map(|v| (key.clone(), v))),
            Value::Number(n) if key.contains("Price") || key.contains("Multiplier") => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                if !(0.0..=MAX_PRICE).contains(&x) {
                    return Some(format!(
                        "its {key} is {x}, not a price from 0 to {MAX_PRICE}"
                    ));
                }
            }
            _ => {}
        }
    }
    None
}

fn entries(
    file: TableFile,
    rank: u8,
    today: i64,
    into: &mut Vec<Price>,
    refused: &mut Vec<String>,
) -> Result<Option<String>, UsageError> {
    for e in file.models {
        let from_day = match e.from.as_deref() {
            Some(d) => crate::zone::parse_date(d).ok_or_else(|| {
                UsageError::InvalidArgument(format!("price table: bad `from` date {d:?}"))
            })?,
            None => i64::MIN,
        };
        if let Some(why) = entry_problem(&e, from_day, today) {
            refused.push(format!(
                "the price entry for {} was refused: {why}",
                e.matches.join(", ")
            ));
            continue;
        }
        for m in e.matches {
            into.push(Price {
                text: m.to_lowercase(),
                rank,
                from_day,
                info: e.info.clone(),
            });
        }
    }
    Ok(file.updated)
}

impl PriceTable {
    /// The bundled table.
    pub fn bundled() -> PriceTable {
        static TABLE: std::sync::OnceLock<PriceTable> = std::sync::OnceLock::new();
        TABLE
            .get_or_init(|| {
                let mut prices = Vec::new();
                let mut refused = Vec::new();
                // The bundled file is checked by a test; a broken one gives an empty table.
                let updated = serde_json::from_str::<TableFile>(BUNDLED)
                    .ok()
                    .and_then(|f| {
                        entries(f, 1, today(), &mut prices, &mut refused)
                            .ok()
                            .flatten()
                    })
                    .unwrap_or_default();
                PriceTable {
                    updated,
                    override_file: None,
                    prices,
                    fingerprint: hash_text(BUNDLED),
                    refused,
                }
            })
            .clone()
    }

    /// The bundled table with the entries of `path` (same shape) in front of it.
    pub fn with_file(path: &Path) -> Result<PriceTable, UsageError> {
        let text = read_price_file(path)?;
        let file: TableFile = serde_json::from_str(&text).map_err(|e| {
            UsageError::InvalidArgument(format!("price table {}: {e}", path.display()))
        })?;
        let mut prices = Vec::new();
        let mut refused = Vec::new();
        entries(file, 0, today(), &mut prices, &mut refused)?;
        let mut table = PriceTable::bundled();
        table.refused.splice(0..0, refused);
        prices.append(&mut table.prices);
        table.prices = prices;
        table.override_file = Some(path.display().to_string());
        table.fingerprint ^= hash_text(&text).rotate_left(1);
        Ok(table)
    }

    /// Equal for tables read from the same texts: what a kept report's prices are checked by.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The prices of `model` on local day `day`, if the table knows the model.
    pub fn lookup(&self, model: &str, day: i64) -> Option<&ModelInfo> {
        let id = normalise(model);
        let mut best: Option<&Price> = None;
        for p in &self.prices {
            // A match ends at the id's end or before a `-`, `:` or `@` (a date, a variant, a
            // version tag): `gpt-5` does not price `gpt-5.4`, nor `claude-sonnet-4` `…-4.5`.
            let boundary = id
                .get(p.text.len()..)
                .and_then(|rest| rest.chars().next())
                .is_none_or(|c| matches!(c, '-' | ':' | '@'));
            if !id.starts_with(p.text.as_str()) || !boundary {
                continue;
            }
            best = match best {
                None => Some(p),
                Some(b) if p.text.len() > b.text.len() => Some(p),
                Some(b) if p.text.len() == b.text.len() && p.rank < b.rank => Some(p),
                Some(b)
                    if p.text == b.text
                        && p.rank == b.rank
                        && better_date(p.from_day, b.from_day, day) =>
                {
                    Some(p)
                }
                keep => keep,
            };
        }
        best.map(|p| &p.info)
    }
}

/// Whether an entry from `a` suits `day` better than one from `b`: on or before the day and
/// later, or (both after the day) earlier.
fn better_date(a: i64, b: i64, day: i64) -> bool {
    match (a <= day, b <= day) {
        (true, true) => a > b,
        (true, false) => true,
        (false, true) => false,
        (false, false) => a < b,
    }
}

fn normalise(model: &str) -> String {
    let lower = model.trim().to_lowercase();
    let last = lower.rsplit('/').next().unwrap_or(&lower);
    let last = last.strip_prefix("anthropic.").unwrap_or(last);
    last.replace(':', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_table_reads_and_matches_longest() {
        let file: TableFile = serde_json::from_str(BUNDLED).expect("the bundled table parses");
        assert!(!file.models.is_empty());
        let t = PriceTable::bundled();
        let day = crate::zone::parse_date("2026-01-10").unwrap_or_default();
        let sonnet45 = t.lookup("claude-sonnet-4-5-20250929", day).expect("priced");
        assert_eq!(sonnet45.cache_reads_price, Some(0.3));
        let opus45 = t.lookup("anthropic/claude-opus-4.5", day).expect("priced");
        assert_eq!(opus45.input_price, Some(5.0));
        let opus4 = t.lookup("claude-opus-4-20250514", day).expect("priced");
        assert_eq!(opus4.input_price, Some(15.0));
        assert_eq!(
            t.lookup("gpt-5-mini-2025-08-07", day)
                .and_then(|m| m.input_price),
            Some(0.25)
        );
        assert!(t.lookup("llama-local", day).is_none());
        // A different version is not a variant of the one listed.
        assert!(t.lookup("gpt-5.4", day).is_none());
        assert_eq!(
            t.lookup("claude-sonnet-4.5", day)
                .and_then(|m| m.cache_reads_price),
            Some(0.3)
        );
    }

    #[test]
    fn dated_entries_and_overrides() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("prices.json");
        let body = r#"{"models":[
            {"match":["my-model"],"from":"2025-01-01","inputPrice":1,"outputPrice":2},
            {"match":["my-model"],"from":"2025-06-01","inputPrice":3,"outputPrice":4},
            {"match":["claude-sonnet-4-5"],"inputPrice":9,"outputPrice":9}]}"#;
        std::fs::write(&path, body).expect("write");
        let t = PriceTable::with_file(&path).expect("table");
        let d = |s: &str| crate::zone::parse_date(s).unwrap_or_default();
        assert_eq!(
            t.lookup("my-model", d("2025-03-01"))
                .and_then(|m| m.input_price),
            Some(1.0)
        );
        assert_eq!(
            t.lookup("my-model", d("2025-07-01"))
                .and_then(|m| m.input_price),
            Some(3.0)
        );
        assert_eq!(
            t.lookup("my-model", d("2024-07-01"))
                .and_then(|m| m.input_price),
            Some(1.0)
        );
        assert_eq!(
            t.lookup("claude-sonnet-4-5", d("2026-01-01"))
                .and_then(|m| m.input_price),
            Some(9.0)
        );
    }
}
