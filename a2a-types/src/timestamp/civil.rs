//! Proleptic Gregorian calendar arithmetic on Unix time (the algorithms of Howard Hinnant's
//! "chrono-Compatible Low-Level Date Algorithms"), for the years -9999 to 9999.

/// Nanoseconds per second.
pub(super) const NANOS: i128 = 1_000_000_000;
const DAY: i64 = 86_400;

/// The first instant of -9999-01-01 in Unix seconds (the `time` crate's range, kept so that
/// the same values are accepted as before).
pub(super) const MIN_SECS: i64 = -377_705_116_800;
/// The last second of 9999-12-31 in Unix seconds.
pub(super) const MAX_SECS: i64 = 253_402_300_799;

/// Whether `year` has a February 29.
fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// The number of days of `month` (1-12) in `year`.
pub(super) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a valid date.
pub(super) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day counted from 1970-01-01: (year, month 1-12, day 1-31).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The parts of an instant in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Parts {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub nanosecond: u32,
}

impl Parts {
    /// The UTC parts of `nanos` nanoseconds since the Unix epoch.
    pub(super) fn of(nanos: i128) -> Self {
        let secs = nanos.div_euclid(NANOS) as i64;
        let nanosecond = nanos.rem_euclid(NANOS) as u32;
        let (year, month, day) = civil_from_days(secs.div_euclid(DAY));
        let sod = secs.rem_euclid(DAY) as u32;
        Parts {
            year,
            month,
            day,
            hour: sod / 3600,
            minute: sod / 60 % 60,
            second: sod % 60,
            nanosecond,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_ends_are_the_first_and_last_days() {
        assert_eq!(days_from_civil(-9999, 1, 1) * DAY, MIN_SECS);
        assert_eq!(days_from_civil(9999, 12, 31) * DAY + DAY - 1, MAX_SECS);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn every_day_round_trips() {
        let mut expected = (-9999i64, 1u32, 1u32);
        for days in days_from_civil(-9999, 1, 1)..=days_from_civil(9999, 12, 31) {
            assert_eq!(civil_from_days(days), expected, "{days}");
            assert_eq!(days_from_civil(expected.0, expected.1, expected.2), days);
            let (y, m, d) = expected;
            expected = if d < days_in_month(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
        }
    }

    #[test]
    fn leap_years() {
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(2025, 2), 28);
        assert_eq!(days_in_month(0, 2), 29);
        assert_eq!(days_in_month(-4, 2), 29);
        assert_eq!(days_in_month(-100, 2), 28);
    }
}
