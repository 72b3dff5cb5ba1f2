//! Calendar helpers (proleptic Gregorian, UTC) for timestamps and the "Current Time" section.

/// Unix ms at midnight UTC of a civil date.
pub fn ms(y: i64, m: u32, d: u32) -> u64 {
    (roo_js::days_from_civil(y, m, d) * 86_400_000) as u64
}

struct Parts {
    y: i64,
    mo: u32,
    d: u32,
    h: u64,
    mi: u64,
    s: u64,
}

fn parts(ms: i64) -> Parts {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000) as u64;
    let (y, mo, d) = roo_js::civil_from_days(days);
    Parts {
        y,
        mo,
        d,
        h: rem / 3_600_000,
        mi: rem / 60_000 % 60,
        s: rem / 1000 % 60,
    }
}

/// `2026-01-27T13:31:08.264Z`
pub fn iso(ms: u64) -> String {
    roo_js::iso_from_ms(ms as i64)
}

/// A time zone with a crude DST rule (April–October), enough for plausible env details.
#[derive(Clone, Copy, Debug)]
pub struct Zone {
    pub name: &'static str,
    pub std_minutes: i64,
    pub dst: bool,
}

pub const ZONES: &[Zone] = &[
    Zone {
        name: "Europe/Paris",
        std_minutes: 60,
        dst: true,
    },
    Zone {
        name: "America/New_York",
        std_minutes: -300,
        dst: true,
    },
    Zone {
        name: "Europe/London",
        std_minutes: 0,
        dst: true,
    },
    Zone {
        name: "America/Los_Angeles",
        std_minutes: -480,
        dst: true,
    },
    Zone {
        name: "Asia/Tokyo",
        std_minutes: 540,
        dst: false,
    },
];

impl Zone {
    /// Offset from UTC in minutes at `ms`.
    pub fn offset(&self, ms: u64) -> i64 {
        let p = parts(ms as i64);
        let summer = self.dst && (4..=10).contains(&p.mo);
        self.std_minutes + if summer { 60 } else { 0 }
    }

    /// `UTC+2:00`
    pub fn utc_label(&self, ms: u64) -> String {
        let o = self.offset(ms);
        let sign = if o < 0 { '-' } else { '+' };
        format!("UTC{}{}:{:02}", sign, o.abs() / 60, o.abs() % 60)
    }

    /// `4/8/2025, 4:02:41 PM` in local time (the pre-v3.4x format).
    pub fn local_us(&self, ms: u64) -> String {
        let p = parts(ms as i64 + self.offset(ms) * 60_000);
        let (h12, ampm) = match p.h {
            0 => (12, "AM"),
            1..=11 => (p.h, "AM"),
            12 => (12, "PM"),
            _ => (p.h - 12, "PM"),
        };
        format!(
            "{}/{}/{}, {}:{:02}:{:02} {}",
            p.mo, p.d, p.y, h12, p.mi, p.s, ampm
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_formats() {
        assert_eq!(ms(1970, 1, 1), 0);
        assert_eq!(iso(1_769_520_668_264), "2026-01-27T13:31:08.264Z");
        let paris = ZONES[0];
        assert_eq!(paris.local_us(1_744_120_961_342), "4/8/2025, 4:02:41 PM");
        assert_eq!(paris.utc_label(1_744_120_961_342), "UTC+2:00");
    }
}
