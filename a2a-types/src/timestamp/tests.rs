use super::*;

#[test]
fn now_is_the_current_millisecond_every_time() {
    for _ in 0..1000 {
        let before = now_nanos() / 1_000_000;
        let t = Timestamp::now();
        let after = now_nanos() / 1_000_000;
        let ms = t.unix_millis();
        assert!(before <= ms && ms <= after, "{before} {ms} {after}");
        assert_eq!(t.unix_nanos(), ms * 1_000_000);
        assert_eq!(t.text, format_utc(t.nanos, 3));
    }
}

#[test]
fn hand_written_digits_match_the_formatter() {
    for (secs, nanos) in [
        (0i64, 0u32),
        (1_764_000_000, 7_000_000),
        (1_764_000_059, 999_999_999),
        (253_402_300_799, 123_456_789),
        (-62_135_596_800, 1),
    ] {
        let t = i128::from(secs) * NANOS + i128::from(nanos);
        for digits in 0..=9 {
            assert_eq!(
                format_utc(t, digits),
                format_utc_slow(Parts::of(t), digits),
                "{t} {digits}"
            );
        }
    }
}

#[test]
fn z_form_is_kept_verbatim() {
    for s in [
        "2024-03-15T10:15:00Z",
        "2025-04-02T16:59:25.331Z",
        "2025-04-02T16:59:25.000Z",
    ] {
        assert_eq!(Timestamp::parse(s).unwrap().as_str(), s);
    }
}

#[test]
fn naive_is_utc() {
    let t = Timestamp::parse("2025-04-02T16:59:25.331844").unwrap();
    assert_eq!(t.as_str(), "2025-04-02T16:59:25.331844Z");
    assert_eq!(t.unix_nanos(), 1_743_613_165_331_844_000);
}

#[test]
fn offsets_are_normalized() {
    let t = Timestamp::parse("2025-04-02T18:59:25+02:00").unwrap();
    assert_eq!(t.as_str(), "2025-04-02T16:59:25Z");
    let t = Timestamp::parse("2025-04-02 10:00:00.5-0130").unwrap();
    assert_eq!(t.as_str(), "2025-04-02T11:30:00.5Z");
    assert_eq!(
        Timestamp::parse("2025-04-02T16:59:25.5z").unwrap(),
        Timestamp::parse("2025-04-02T16:59:25.500Z").unwrap()
    );
    // Across a month, a year and a leap day.
    let t = Timestamp::parse("2024-03-01T00:30:00+01").unwrap();
    assert_eq!(t.as_str(), "2024-02-29T23:30:00Z");
    let t = Timestamp::parse("2024-12-31T23:30:00-01:00").unwrap();
    assert_eq!(t.as_str(), "2025-01-01T00:30:00Z");
}

#[test]
fn leap_second_is_clamped() {
    // The canonical text is kept; the instant is the last nanosecond of 23:59:59.
    let t = Timestamp::parse("2016-12-31T23:59:60Z").unwrap();
    assert_eq!(t.as_str(), "2016-12-31T23:59:60Z");
    assert_eq!(
        t,
        Timestamp::parse("2016-12-31T23:59:59.999999999Z").unwrap()
    );
    let t = Timestamp::parse("2017-01-01T00:59:60.5+01:00").unwrap();
    assert_eq!(t.as_str(), "2016-12-31T23:59:59.9Z");
}

#[test]
fn garbage_is_refused() {
    for (s, reason) in [
        ("", "expected YYYY"),
        ("yesterday", "expected YYYY"),
        ("2025-13-01T00:00:00Z", "month out of range"),
        ("2025-00-01T00:00:00Z", "month out of range"),
        ("2025-02-30T00:00:00Z", "day out of range"),
        ("2025-02-29T00:00:00Z", "day out of range"),
        ("2025-04-00T00:00:00Z", "day out of range"),
        ("2025-01-01T25:00:00Z", "time out of range"),
        ("2025-01-01T00:60:00Z", "time out of range"),
        ("2025-01-01T00:00:61Z", "time out of range"),
        ("2025-01-01T00:00:00+26:00", "offset out of range"),
        ("2025-01-01T00:00:00ZZ", "unexpected trailing text"),
        ("2025-01-01T00:00:00.Z", "empty fraction"),
        ("2025-01-01", "expected 'T' between date and time"),
    ] {
        let e = Timestamp::parse(s).unwrap_err();
        assert_eq!((e.input.as_str(), e.reason), (s, reason));
    }
}

#[test]
fn an_offset_past_year_9999_is_refused() {
    let e = Timestamp::parse("9999-12-31T23:30:00-01:00").unwrap_err();
    assert_eq!(e.reason, "out of range");
    assert_eq!(
        Timestamp::parse("9999-12-31T23:30:00+01:00")
            .unwrap()
            .as_str(),
        "9999-12-31T22:30:00Z"
    );
}

#[test]
fn built_values_have_millis() {
    let t = Timestamp::from_unix_seconds(0).unwrap();
    assert_eq!(t.as_str(), "1970-01-01T00:00:00.000Z");
    assert_eq!(Timestamp::now().as_str().len(), 24);
    let t = Timestamp::from_unix_millis(1_743_613_165_331).unwrap();
    assert_eq!(t.as_str(), "2025-04-02T16:59:25.331Z");
    assert_eq!(t.unix_millis(), 1_743_613_165_331);
    let t = Timestamp::from_unix_millis(-1).unwrap();
    assert_eq!(t.as_str(), "1969-12-31T23:59:59.999Z");
}

#[test]
fn unix_values_outside_the_years_are_refused() {
    assert!(Timestamp::from_unix_seconds(civil::MAX_SECS).is_ok());
    assert!(Timestamp::from_unix_seconds(civil::MIN_SECS).is_ok());
    assert!(Timestamp::from_unix_seconds(civil::MAX_SECS + 1).is_err());
    assert!(Timestamp::from_unix_seconds(civil::MIN_SECS - 1).is_err());
    assert!(Timestamp::from_unix_millis(civil::MAX_SECS * 1000 + 999).is_ok());
    assert!(Timestamp::from_unix_millis(civil::MAX_SECS * 1000 + 1000).is_err());
    assert_eq!(
        Timestamp::from_unix_seconds(civil::MAX_SECS)
            .unwrap()
            .as_str(),
        "9999-12-31T23:59:59.000Z"
    );
}

/// The calendar arithmetic agrees with the `time` crate (the dependency it replaced) on
/// instants spread over the whole range, and the conversions round-trip.
#[cfg(feature = "time")]
#[test]
fn agrees_with_the_time_crate() {
    use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};
    let (lo, hi) = (
        i128::from(civil::MIN_SECS) * NANOS,
        i128::from(civil::MAX_SECS + 1) * NANOS,
    );
    let step = (hi - lo) / 200_003;
    let mut n = lo;
    while n < hi {
        let ours = Parts::of(n);
        let theirs = OffsetDateTime::from_unix_timestamp_nanos(n).unwrap();
        assert_eq!(
            (
                ours.year,
                ours.month,
                ours.day,
                ours.hour,
                ours.minute,
                ours.second,
                ours.nanosecond
            ),
            (
                i64::from(theirs.year()),
                u32::from(u8::from(theirs.month())),
                u32::from(theirs.day()),
                u32::from(theirs.hour()),
                u32::from(theirs.minute()),
                u32::from(theirs.second()),
                theirs.nanosecond()
            ),
            "{n}"
        );
        if (0..=9999).contains(&ours.year) {
            let text = format_utc(n, 9);
            assert_eq!(Timestamp::parse(&text).unwrap().unix_nanos(), n, "{text}");
            // The same wall time at an offset of -05:30.
            let off = UtcOffset::from_hms(-5, -30, 0).unwrap();
            let local = theirs.to_offset(off);
            let text = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}-05:30",
                local.year(),
                u8::from(local.month()),
                local.day(),
                local.hour(),
                local.minute(),
                local.second(),
                local.nanosecond()
            );
            if (0..=9999).contains(&local.year()) {
                let back = PrimitiveDateTime::new(
                    Date::from_calendar_date(
                        local.year(),
                        Month::try_from(u8::from(local.month())).unwrap(),
                        local.day(),
                    )
                    .unwrap(),
                    Time::from_hms_nano(
                        local.hour(),
                        local.minute(),
                        local.second(),
                        local.nanosecond(),
                    )
                    .unwrap(),
                )
                .assume_offset(off);
                assert_eq!(
                    Timestamp::parse(&text).unwrap().unix_nanos(),
                    back.unix_timestamp_nanos(),
                    "{text}"
                );
            }
        }
        let ts = Timestamp::from_offset_date_time(theirs);
        assert_eq!(ts.unix_millis(), n.div_euclid(1_000_000));
        assert_eq!(
            ts.to_offset_date_time().unix_timestamp_nanos(),
            n.div_euclid(1_000_000) * 1_000_000
        );
        n += step;
    }
}
