//! When each governed card last changed: its `Last-Modified`, beside its ETag.
//!
//! A governed card is made on every request from the peer's card, the registration, the
//! workspace's settings and the signing key, so it has no stored date of its own. The gateway
//! keeps, per card (workspace, agent and form), the ETag it last served and the second that ETag
//! was first served: `Last-Modified` is that second. After a restart every card dates from its
//! first request (later than before: a cache revalidates once and gets the card again).
//!
//! `If-Modified-Since` (honoured only without `If-None-Match`, RFC 9110 §13.1.3) answers 304
//! when the card is not newer than the date given. Dates have whole seconds: when a card changed
//! within the second of its previous date, that second no longer proves anything, and a request
//! naming it gets the card.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

/// Cards remembered at most; past it the dates start over (they only move later).
const MAX_CARDS: usize = 100_000;

/// One card's ETag, the second it was first served, and whether the card it replaced dates
/// from that same second.
#[derive(Debug, Clone)]
struct Dated {
    etag: String,
    since: i64,
    shared_second: bool,
}

/// The dates of governed cards (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct CardDates {
    cards: Mutex<HashMap<String, Dated>>,
}

/// A card's `Last-Modified` second, and whether an `If-Modified-Since` of exactly that second
/// proves the caller has this card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Modified {
    /// Unix seconds.
    pub(crate) at: i64,
    exact: bool,
}

impl Modified {
    /// Whether a caller whose copy dates from `since` (unix seconds) has this card.
    pub(crate) fn unchanged_since(self, since: i64) -> bool {
        since > self.at || (since == self.at && self.exact)
    }
}

fn unix(t: SystemTime) -> i64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl CardDates {
    /// The date of the card `key` served now with `etag`.
    pub(crate) fn modified(&self, key: &str, etag: &str, now: SystemTime) -> Modified {
        let now = unix(now);
        let mut cards = match self.cards.lock() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        };
        let prev = cards.get(key);
        if let Some(d) = prev
            && d.etag == etag
        {
            return Modified {
                at: d.since,
                exact: !d.shared_second,
            };
        }
        let since = prev.map_or(now, |d| now.max(d.since));
        let shared_second = prev.is_some_and(|d| d.since == since);
        if cards.len() >= MAX_CARDS && prev.is_none() {
            cards.clear();
        }
        cards.insert(
            key.to_owned(),
            Dated {
                etag: etag.to_owned(),
                since,
                shared_second,
            },
        );
        Modified {
            at: since,
            exact: !shared_second,
        }
    }
}

/// The HTTP date format (RFC 9110 IMF-fixdate).
fn imf_fixdate() -> Option<&'static [time::format_description::BorrowedFormatItem<'static>]> {
    static FORMAT: std::sync::OnceLock<Vec<time::format_description::BorrowedFormatItem<'static>>> =
        std::sync::OnceLock::new();
    let f = FORMAT.get_or_init(|| {
        time::format_description::parse_borrowed::<2>(
            "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT",
        )
        .unwrap_or_default()
    });
    (!f.is_empty()).then_some(f.as_slice())
}

/// `secs` as an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub(crate) fn http_date(secs: i64) -> Option<String> {
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()?
        .format(imf_fixdate()?)
        .ok()
}

/// An HTTP date (IMF-fixdate) as unix seconds; `None` when it is not one (then it is ignored).
pub(crate) fn parse_http_date(s: &str) -> Option<i64> {
    time::PrimitiveDateTime::parse(s.trim(), imf_fixdate()?)
        .ok()
        .map(|t| t.assume_utc().unix_timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn a_card_keeps_its_date_until_its_etag_changes() {
        let d = CardDates::default();
        let m = d.modified("k", "\"a\"", at(1000));
        assert_eq!(m.at, 1000);
        assert_eq!(d.modified("k", "\"a\"", at(2000)).at, 1000);
        assert!(m.unchanged_since(1000) && m.unchanged_since(1500));
        assert!(!m.unchanged_since(999));
        let n = d.modified("k", "\"b\"", at(3000));
        assert_eq!(n.at, 3000);
        assert!(!n.unchanged_since(1000));
        // Another card has its own date.
        assert_eq!(d.modified("other", "\"a\"", at(5000)).at, 5000);
    }

    #[test]
    fn a_change_within_the_same_second_is_never_hidden() {
        let d = CardDates::default();
        let first = d.modified("k", "\"a\"", at(1000));
        assert!(first.unchanged_since(1000));
        let second = d.modified("k", "\"b\"", at(1000));
        assert_eq!(second.at, 1000);
        // A caller holding the first card (dated 1000) must get the second one.
        assert!(!second.unchanged_since(1000));
        assert!(second.unchanged_since(1001));
    }

    #[test]
    fn http_dates_round_trip() {
        assert_eq!(
            http_date(784_111_777).as_deref(),
            Some("Sun, 06 Nov 1994 08:49:37 GMT")
        );
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("yesterday"), None);
    }
}
