//! Date bounds of exports, and `xs:dateTime` values.

use roo_formats::text::parse_iso_ms;

const DAY_MS: i64 = 86_400_000;

/// A date bound in milliseconds: an ISO 8601 date or date-time (no offset = UTC), or `now`,
/// `now-15m`, `now-12h`, `now-7d`, `now-2w`. A date without a time as an end bound means the end
/// of that day.
pub fn parse_date_bound(text: &str, is_end: bool, now_ms: i64) -> Option<i64> {
    let s = text.trim();
    if let Some(rest) = s.strip_prefix("now") {
        if rest.is_empty() {
            return Some(now_ms);
        }
        let rest = rest.strip_prefix('-')?;
        let unit = rest.chars().last()?;
        let n: i64 = rest.get(..rest.len() - unit.len_utf8())?.parse().ok()?;
        let per = match unit {
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => DAY_MS,
            'w' => 7 * DAY_MS,
            _ => return None,
        };
        return n.checked_mul(per).and_then(|d| now_ms.checked_sub(d));
    }
    let ms = parse_iso_ms(s)?;
    Some(if is_end && s.len() == 10 {
        ms + DAY_MS - 1
    } else {
        ms
    })
}

/// An ISO 8601 string as written in skeletons, as a valid `xs:dateTime` (XSD 1.0): years past 9999
/// lose JavaScript's `+` and leading zeros; years before 1 (which XSD 1.0 cannot express in the
/// same calendar) and unreadable values become `0001-01-01T00:00:00.000Z`.
pub fn xsd_datetime(iso: &str) -> String {
    const FLOOR: &str = "0001-01-01T00:00:00.000Z";
    if let Some(rest) = iso.strip_prefix('+') {
        let trimmed = rest.trim_start_matches('0');
        return if trimmed.find('-').unwrap_or(0) >= 4 {
            trimmed.to_owned()
        } else {
            FLOOR.to_owned()
        };
    }
    let ok = iso.len() >= 20
        && iso.as_bytes().get(4) == Some(&b'-')
        && iso
            .get(..4)
            .is_some_and(|y| y.bytes().all(|b| b.is_ascii_digit()) && y != "0000")
        && parse_iso_ms(iso).is_some();
    if ok {
        iso.to_owned()
    } else {
        FLOOR.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        assert_eq!(
            parse_date_bound("2025-09-01", false, 0),
            Some(1_756_684_800_000)
        );
        assert_eq!(
            parse_date_bound("2025-09-01", true, 0),
            Some(1_756_684_800_000 + DAY_MS - 1)
        );
        assert_eq!(
            parse_date_bound("now-7d", false, 10 * DAY_MS),
            Some(3 * DAY_MS)
        );
        assert_eq!(parse_date_bound("now", false, 5), Some(5));
        assert_eq!(parse_date_bound("now-7y", false, 0), None);
        assert_eq!(parse_date_bound("yesterday", false, 0), None);
    }

    #[test]
    fn xsd() {
        assert_eq!(
            xsd_datetime("2025-09-17T13:11:01.175Z"),
            "2025-09-17T13:11:01.175Z"
        );
        assert_eq!(
            xsd_datetime("+010000-01-01T00:00:00.000Z"),
            "10000-01-01T00:00:00.000Z"
        );
        assert_eq!(
            xsd_datetime("-000001-01-01T00:00:00.000Z"),
            "0001-01-01T00:00:00.000Z"
        );
        assert_eq!(
            xsd_datetime("0000-01-01T00:00:00.000Z"),
            "0001-01-01T00:00:00.000Z"
        );
        assert_eq!(xsd_datetime("garbage"), "0001-01-01T00:00:00.000Z");
    }
}
