//! The time zone a report counts its days in: `UTC`, a fixed offset (`+02:00`, `-0530`, `+2`) or
//! an IANA name (`Europe/Paris`, from the time zone database compiled into the crate, so every
//! machine gives the same days); by default the local zone ([`Zone::local`]: `TZ`, else the
//! system's, as other usage trackers count days). Local dates are computed once per quarter hour of records
//! (every offset change in the database falls on a quarter hour since 1970).

use crate::UsageError;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use std::collections::HashMap;

/// A parsed time zone.
#[derive(Debug, Clone)]
pub struct Zone {
    name: String,
    tz: Option<TimeZone>,
    fixed_seconds: i32,
}

impl Zone {
    /// `UTC`.
    pub fn utc() -> Zone {
        Zone {
            name: "UTC".into(),
            tz: None,
            fixed_seconds: 0,
        }
    }

    /// Parse `UTC`, `Z`, a fixed offset or an IANA name.
    pub fn parse(text: &str) -> Result<Zone, UsageError> {
        let t = text.trim();
        if t.is_empty() || t.eq_ignore_ascii_case("utc") || t == "Z" {
            return Ok(Zone::utc());
        }
        if let Some(seconds) = fixed_offset(t) {
            return Ok(Zone {
                name: offset_name(seconds),
                tz: None,
                fixed_seconds: seconds,
            });
        }
        match jiff::tz::db().get(t) {
            Ok(tz) => Ok(Zone {
                name: t.to_owned(),
                tz: Some(tz),
                fixed_seconds: 0,
            }),
            Err(_) => Err(UsageError::InvalidArgument(format!(
                "unknown time zone {t:?}: give an IANA name (Europe/Paris), UTC or an offset (+02:00)"
            ))),
        }
    }

    /// The local zone: as `TZ` says (an IANA name, a POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`,
    /// a TZif file), else as the system says (`/etc/localtime`, Windows' setting); UTC when
    /// neither says. Named by its IANA name when it has one, else by `TZ` as given.
    pub fn local() -> Zone {
        let Ok(tz) = TimeZone::try_system() else {
            return Zone::utc();
        };
        let name = match tz.iana_name() {
            Some(n) => n.to_owned(),
            None => std::env::var("TZ")
                .ok()
                .map(|t| t.trim_start_matches(':').to_owned())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "local".to_owned()),
        };
        if matches!(
            name.as_str(),
            "UTC" | "Etc/UTC" | "Etc/UCT" | "UCT" | "Zulu" | "Etc/Zulu"
        ) {
            return Zone::utc();
        }
        Zone {
            name,
            tz: Some(tz),
            fixed_seconds: 0,
        }
    }

    /// The name the report shows (`UTC`, `+05:30`, `Europe/Paris`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The offset from UTC in seconds at `ms`.
    pub fn offset_seconds(&self, ms: i64) -> i32 {
        match &self.tz {
            None => self.fixed_seconds,
            Some(tz) => match Timestamp::from_millisecond(ms) {
                Ok(t) => tz.to_offset(t).seconds(),
                Err(_) => 0,
            },
        }
    }

    /// The local day of `ms` (days since 1970-01-01).
    pub fn day(&self, ms: i64) -> i64 {
        let local = ms + i64::from(self.offset_seconds(ms)) * 1000;
        local.div_euclid(86_400_000)
    }

    /// The UTC millisecond at which local day `day` starts.
    pub fn day_start_ms(&self, day: i64) -> i64 {
        let local = day * 86_400_000;
        // The offset at the local midnight, found from the offset a day's guess gives.
        let guess = local - i64::from(self.offset_seconds(local)) * 1000;
        local - i64::from(self.offset_seconds(guess)) * 1000
    }
}

/// Local days of many times in one zone, the offset looked up once per quarter hour.
pub struct DayCache<'z> {
    zone: &'z Zone,
    offsets: HashMap<i64, i32>,
    /// The quarter hour looked up last and its offset.
    last: (i64, i32),
}

impl<'z> DayCache<'z> {
    pub fn new(zone: &'z Zone) -> Self {
        DayCache {
            zone,
            offsets: HashMap::new(),
            last: (i64::MIN, 0),
        }
    }

    pub fn day(&mut self, ms: i64) -> i64 {
        let offset = if self.zone.tz.is_none() {
            self.zone.fixed_seconds
        } else {
            let bucket = ms.div_euclid(900_000);
            if self.last.0 != bucket {
                let zone = self.zone;
                let offset = *self
                    .offsets
                    .entry(bucket)
                    .or_insert_with(|| zone.offset_seconds(ms));
                self.last = (bucket, offset);
            }
            self.last.1
        };
        (ms + i64::from(offset) * 1000).div_euclid(86_400_000)
    }
}

fn fixed_offset(t: &str) -> Option<i32> {
    let t = t
        .strip_prefix("UTC")
        .or_else(|| t.strip_prefix("GMT"))
        .unwrap_or(t);
    let (sign, rest) = match t.as_bytes().first()? {
        b'+' => (1, &t[1..]),
        b'-' => (-1, &t[1..]),
        _ => return None,
    };
    let (h, m) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        None if rest.len() == 4 => rest.split_at(2),
        None => (rest, "0"),
    };
    if h.is_empty() || h.len() > 2 || m.is_empty() || m.len() > 2 {
        return None;
    }
    let h: i32 = h.parse().ok()?;
    let m: i32 = m.parse().ok()?;
    (h <= 18 && m < 60).then_some(sign * (h * 3600 + m * 60))
}

fn offset_name(seconds: i32) -> String {
    if seconds == 0 {
        return "UTC".into();
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let a = seconds.abs();
    format!("{sign}{:02}:{:02}", a / 3600, (a % 3600) / 60)
}

/// `YYYY-MM-DD` of a day number.
pub fn date_text(day: i64) -> String {
    let (y, m, d) = roo_js::date::civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The day number of `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.trim().splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let d: u32 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let day = roo_js::date::days_from_civil(y, m, d);
    // Reject dates such as 2026-02-31 (which would roll over).
    (roo_js::date::civil_from_days(day) == (y, m, d)).then_some(day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_names() {
        assert_eq!(
            Zone::parse("+05:30").map(|z| z.name().to_owned()).ok(),
            Some("+05:30".into())
        );
        assert_eq!(fixed_offset("-0800"), Some(-8 * 3600));
        assert_eq!(fixed_offset("UTC+2"), Some(7200));
        assert_eq!(fixed_offset("+25"), None);
        assert!(Zone::parse("Mars/Olympus").is_err());
    }

    #[test]
    fn paris_days_follow_summer_time() {
        let paris = Zone::parse("Europe/Paris").expect("Paris is in the database");
        // 2026-03-29 00:30 UTC is 01:30 in Paris (UTC+1); 2026-07-01 22:30 UTC is 00:30 on July 2
        // (UTC+2).
        let march = 1_774_744_200_000;
        assert_eq!(date_text(paris.day(march)), "2026-03-29");
        let july = 1_782_945_000_000;
        assert_eq!(date_text(paris.day(july)), "2026-07-02");
        assert_eq!(date_text(Zone::utc().day(july)), "2026-07-01");
        let mut cache = DayCache::new(&paris);
        assert_eq!(cache.day(july), paris.day(july));
        let start = paris.day_start_ms(paris.day(july));
        assert_eq!(start, 1_782_943_200_000);
    }

    #[test]
    fn dates_round_trip() {
        assert_eq!(parse_date("2026-02-31"), None);
        let d = parse_date("2024-02-29").expect("a leap day");
        assert_eq!(date_text(d), "2024-02-29");
    }
}
