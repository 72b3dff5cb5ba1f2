//! Dates as JavaScript's `Date` reads and writes them, in the proleptic Gregorian calendar (UTC).

const MS_PER_DAY: i64 = 86_400_000;

/// ECMAScript `TimeClip`: NaN beyond ±8.64e15 ms (±100,000,000 days) or when not finite, else the
/// integer part (`-0` as `0`).
pub fn time_clip(t: f64) -> f64 {
    if !t.is_finite() || t.abs() > 8.64e15 {
        f64::NAN
    } else {
        t.trunc() + 0.0
    }
}

/// Days since 1970-01-01 of a civil date (`month` 1–12; a day past the month's end rolls over).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (m, d) = (i64::from(month), i64::from(day));
    let y = if m <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month 1–12, day 1–31) of a count of days since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Milliseconds since the epoch in the form of `Date#toISOString`
/// (`1758114661175` → `2025-09-17T13:11:01.175Z`; years outside 0–9999 as `±YYYYYY`), for any
/// `i64`, also beyond the range a `Date` holds (see [`to_iso_string`]).
pub fn iso_from_ms(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(MS_PER_DAY));
    let in_day = ms.rem_euclid(MS_PER_DAY);
    let (h, min) = (in_day / 3_600_000, in_day / 60_000 % 60);
    let (s, millis) = (in_day / 1000 % 60, in_day % 1000);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    format!("{year}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{millis:03}Z")
}

/// `Date.now()`: milliseconds since the epoch (0 on a clock set before it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `new Date(ms).toISOString()`; `None` where JavaScript throws `RangeError: Invalid time value`
/// (NaN, infinite, or beyond ±8.64e15).
pub fn to_iso_string(ms: f64) -> Option<String> {
    let t = time_clip(ms);
    (!t.is_nan()).then(|| iso_from_ms(t as i64))
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, n: usize) -> Option<i64> {
        let s = self.b.get(self.i..self.i + n)?;
        let mut v = 0i64;
        for &c in s {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(c - b'0');
        }
        self.i += n;
        Some(v)
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
}

/// `Date.parse(s)` for the ECMAScript date-time string format
/// (`YYYY[-MM[-DD]][THH:mm[:ss[.sss]]][Z|±HH:mm]`, and `±YYYYYY` years); NaN for anything else.
/// V8 falls back to a permissive parser for other shapes, which is not reproduced, and reads a
/// date-time without an offset in the host's zone, read here as UTC (the same on a UTC host).
pub fn date_parse(s: &str) -> f64 {
    parse_iso(s).unwrap_or(f64::NAN)
}

fn parse_iso(s: &str) -> Option<f64> {
    let mut c = Cursor {
        b: s.as_bytes(),
        i: 0,
    };
    let year = match c.peek()? {
        b'+' | b'-' => {
            let neg = c.peek() == Some(b'-');
            c.i += 1;
            let y = c.digits(6)?;
            if neg && y == 0 {
                return None;
            }
            if neg {
                -y
            } else {
                y
            }
        }
        _ => c.digits(4)?,
    };
    let mut month = 1;
    let mut day = 1;
    if c.eat(b'-') {
        month = c.digits(2)?;
        if c.eat(b'-') {
            day = c.digits(2)?;
        }
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let (mut h, mut mi, mut sec, mut ms) = (0i64, 0i64, 0i64, 0i64);
    let mut offset_min = 0i64;
    if c.eat(b'T') {
        h = c.digits(2)?;
        if !c.eat(b':') {
            return None;
        }
        mi = c.digits(2)?;
        if c.eat(b':') {
            sec = c.digits(2)?;
            if c.eat(b'.') {
                let start = c.i;
                let mut frac = 0i64;
                let mut n = 0;
                while let Some(d) = c.peek().filter(u8::is_ascii_digit) {
                    if n < 3 {
                        frac = frac * 10 + i64::from(d - b'0');
                    }
                    n += 1;
                    c.i += 1;
                }
                if c.i == start {
                    return None;
                }
                for _ in n..3 {
                    frac *= 10;
                }
                ms = frac;
            }
        }
        match c.peek() {
            Some(b'Z') => c.i += 1,
            Some(sign @ (b'+' | b'-')) => {
                c.i += 1;
                let oh = c.digits(2)?;
                if !c.eat(b':') {
                    return None;
                }
                let om = c.digits(2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                offset_min = (oh * 60 + om) * if sign == b'-' { -1 } else { 1 };
            }
            _ => {}
        }
        let valid_time =
            (h < 24 && mi < 60 && sec < 60) || (h == 24 && mi == 0 && sec == 0 && ms == 0);
        if !valid_time {
            return None;
        }
    }
    if c.i != c.b.len() {
        return None;
    }
    let days = days_from_civil(year, month as u32, day as u32);
    let t = (days * MS_PER_DAY) as f64 + (h * 3_600_000 + mi * 60_000 + sec * 1000 + ms) as f64
        - (offset_min * 60_000) as f64;
    Some(time_clip(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn iso_strings_match_javascript() {
        // Right-hand sides: `new Date(ms).toISOString()` in Node.
        let cases: &[(f64, &str)] = &[
            (0.0, "1970-01-01T00:00:00.000Z"),
            (-1.0, "1969-12-31T23:59:59.999Z"),
            (1_758_114_661_175.0, "2025-09-17T13:11:01.175Z"),
            (951_782_400_000.0, "2000-02-29T00:00:00.000Z"),
            (253_402_300_799_999.0, "9999-12-31T23:59:59.999Z"),
            (253_402_300_800_000.0, "+010000-01-01T00:00:00.000Z"),
            (-62_167_219_200_000.0, "0000-01-01T00:00:00.000Z"),
            (-62_198_755_200_000.0, "-000001-01-01T00:00:00.000Z"),
            (8.64e15, "+275760-09-13T00:00:00.000Z"),
            (-8.64e15, "-271821-04-20T00:00:00.000Z"),
            (1.9, "1970-01-01T00:00:00.001Z"),
            (-1.9, "1969-12-31T23:59:59.999Z"),
        ];
        for &(ms, want) in cases {
            assert_eq!(to_iso_string(ms).as_deref(), Some(want), "{ms}");
        }
        for bad in [f64::NAN, f64::INFINITY, 8.64e15 + 1.0, -8.64e15 - 1.0] {
            assert_eq!(to_iso_string(bad), None, "{bad}");
        }
        assert_eq!(
            iso_from_ms(8_640_000_000_000_001),
            "+275760-09-13T00:00:00.001Z"
        );
    }

    #[test]
    fn now_is_a_present_day_timestamp() {
        let now = now_ms();
        assert!(now > 1_735_689_600_000, "{now} is before 2025");
        assert!(to_iso_string(now as f64).is_some());
    }

    #[test]
    fn parses_the_date_time_format() {
        assert_eq!(date_parse("2025-09-17T13:28:34.892Z"), 1758115714892.0);
        assert_eq!(date_parse("2025-10-17"), 1760659200000.0);
        assert_eq!(date_parse("2025-10"), 1759276800000.0);
        assert_eq!(date_parse("2025-10-17T21:56:00+02:00"), 1760730960000.0);
        assert_eq!(
            date_parse("+010000-01-01T00:00:00.000Z"),
            253_402_300_800_000.0
        );
        assert_eq!(date_parse("2025-01-01T24:00:00Z"), 1735776000000.0);
        for bad in [
            "17/10/2025",
            "2025-13-01",
            "-000000-01-01",
            "2025-01-01T25:00Z",
            "2025-01-01T10:00:00.Z",
            "",
        ] {
            assert!(date_parse(bad).is_nan(), "{bad}");
        }
        assert!(time_clip(8.64e15 + 1.0).is_nan());
        assert_eq!(time_clip(-0.5).to_bits(), 0.0f64.to_bits());
    }

    proptest! {
        #[test]
        fn days_and_dates_round_trip(days in -100_000_000i64..=100_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert!((1..=12).contains(&m) && (1..=31).contains(&d));
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }

        #[test]
        fn iso_strings_read_back(ms in -8_640_000_000_000_000i64..=8_640_000_000_000_000) {
            let text = to_iso_string(ms as f64).expect("in range");
            prop_assert_eq!(date_parse(&text), ms as f64);
        }
    }
}
