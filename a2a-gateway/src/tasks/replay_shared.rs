//! Resumes on any replica: the relayed streams of peers that number no events, kept in
//! PostgreSQL ([`PgStreams`]) as well as in the relaying replica's memory (`super::replay`).
//!
//! The replica reading the peer queues each event (and the end) for its writer, which
//! commits them in batches; the caller of that replica reads from memory and never waits for
//! the database. A caller that resumes on another replica with `Last-Event-ID: g<s>.<n>` is
//! served from the table: the events after `n`, then the live rest as the relaying replica
//! writes it (woken by the notification of each batch, re-reading every second anyway, every
//! 200 ms while the listener is away), until the stream's end. The rows must match the
//! caller's workspace, agent, task and version: another workspace reads nothing. Events no
//! longer kept (retention, or a batch the writer had to drop) give the gap marker.
//!
//! A follower whose stream's relaying replica died (its lease, `gateway_replicas`, ended:
//! [`PgStreams::relay_gone`], asked at most every [`RELAY_CHECK`] while no event comes) reads
//! what that replica committed, then ends its caller's stream with the error event
//! `a2a_stream_relay_lost` instead of waiting for events nobody relays.

use std::time::{Duration, Instant};

use futures::stream::BoxStream;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::protocol::errors::{Origin, Refusal};
use crate::store::backend::{PgStreams, STREAM_BATCH, StreamKey, StreamRow};

type Item = Result<Value, Refusal>;

/// How long a resume waits for the relaying replica to write the event it names (its writer
/// commits within milliseconds; a stream still unknown after this is not resumed here).
pub const WRITE_WAIT: Duration = Duration::from_secs(2);
/// How often a follower re-reads without a notification (while listening).
pub const FOLLOW_POLL: Duration = Duration::from_secs(1);
/// How often it re-reads while the listener is away.
pub const FALLBACK_POLL: Duration = Duration::from_millis(200);
/// How often, at most, a follower waiting for events asks whether the relaying replica is
/// still there (its lease).
pub const RELAY_CHECK: Duration = Duration::from_secs(1);

/// A stream number for a replica sharing its streams: random (below 2^53, so any JSON reader
/// keeps it exact), so replicas never hand out the same one.
pub(crate) fn stream_number() -> u64 {
    fastrand::u64(1..(1u64 << 53))
}

/// The row of a stream's end after event `last`, with its error event if any.
pub(crate) fn end_row(last: u64, err: Option<&Refusal>) -> StreamRow {
    StreamRow {
        seq: last + 1,
        end: true,
        body: err.map(refusal_text).unwrap_or_default(),
    }
}

fn refusal_text(r: &Refusal) -> String {
    json!({
        "rpcCode": r.rpc_code, "code": r.code, "reason": r.reason,
        "spec": r.origin == Origin::Spec, "status": r.status, "message": r.message,
        "type": r.type_name, "extra": r.extra, "field": r.field,
    })
    .to_string()
}

fn refusal_of(text: &str) -> Option<Refusal> {
    let v: Value = serde_json::from_str(text).ok()?;
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
    Some(Refusal {
        rpc_code: v["rpcCode"].as_i64()?,
        code: s("code"),
        reason: s("reason"),
        origin: if v["spec"] == true {
            Origin::Spec
        } else {
            Origin::Gateway
        },
        status: u16::try_from(v["status"].as_u64()?).ok()?,
        message: s("message"),
        type_name: s("type"),
        extra: v["extra"].as_object().cloned().unwrap_or_default(),
        field: v["field"].as_str().map(str::to_owned),
    })
}

/// The resume of `key` after event `after` from the table, when the table keeps that event
/// (waiting up to [`WRITE_WAIT`] for the relaying replica's writer); `None`: not kept here (the
/// peer is asked). A database that cannot be reached is the stream's one error event (503).
/// A follower gives up `max_age` after the resume began (a stream whose relaying replica
/// died without writing its end).
pub(crate) async fn resume(
    pg: PgStreams,
    key: StreamKey,
    after: u64,
    max_age: Duration,
) -> Option<BoxStream<'static, Item>> {
    let deadline = Instant::now() + WRITE_WAIT;
    loop {
        match pg.bounds(&key).await {
            Err(e) => {
                let r = Refusal::store("stream resume", &e);
                return Some(Box::pin(futures::stream::once(async move { Err(r) })));
            }
            Ok(Some((_, last, _))) if after <= last => break,
            Ok(Some((_, _, true))) => return None,
            Ok(_) if Instant::now() >= deadline => return None,
            Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    Some(follow(pg, key, after, Instant::now() + max_age))
}

/// The events of `key` after `after`, then the live rest until the end (or `until`).
fn follow(
    pg: PgStreams,
    key: StreamKey,
    mut after: u64,
    until: Instant,
) -> BoxStream<'static, Item> {
    let mut changes = pg.changes();
    let id = key.stream.to_string();
    Box::pin(async_stream::stream! {
        // The relaying replica (read once), when its lease was last asked, and whether it is
        // gone (then what it committed is read once more before the end).
        let (mut relay, mut checked, mut lost) = (None::<String>, Instant::now(), false);
        loop {
            let rows = match pg.after(&key, after, STREAM_BATCH).await {
                Ok(r) => r,
                Err(e) => { yield Err(Refusal::store("stream resume", &e)); break; }
            };
            if rows.first().is_some_and(|r| r.seq > after + 1) {
                let mut marker = serde_json::Map::new();
                crate::tasks::resume::mark_gap(&mut marker, &format!("g{id}.{after}"));
                yield Ok(Value::Object(marker));
            }
            let none = rows.is_empty();
            for row in rows {
                if row.end {
                    if let Some(r) = refusal_of(&row.body) { yield Err(r) }
                    return;
                }
                after = row.seq;
                let Ok(mut ev) = serde_json::from_str::<Value>(&row.body) else { continue };
                crate::tasks::resume::tag_id(&mut ev, format!("g{id}.{}", row.seq));
                yield Ok(ev);
            }
            if !none {
                continue;
            }
            if lost {
                yield Err(Refusal::stream_relay_lost());
                break;
            }
            if Instant::now() > until {
                break;
            }
            if checked.elapsed() >= RELAY_CHECK {
                checked = Instant::now();
                let gone = match &relay {
                    Some(r) => pg.relay_gone(r).await,
                    None => match pg.relay(&key).await {
                        Ok(Some(r)) => {
                            let g = pg.relay_gone(&r).await;
                            relay = Some(r);
                            g
                        }
                        Ok(None) => Ok(false),
                        Err(e) => Err(e),
                    },
                };
                match gone {
                    Ok(true) => {
                        lost = true;
                        continue;
                    }
                    Ok(false) => {}
                    Err(e) => { yield Err(Refusal::store("stream resume", &e)); break; }
                }
            }
            let wait = if pg.listening() { FOLLOW_POLL } else { FALLBACK_POLL };
            let _ = tokio::time::timeout(wait, async {
                loop {
                    match changes.recv().await {
                        Ok(a2a_pg::Event::Notification { payload, .. }) if payload == id => return,
                        Ok(a2a_pg::Event::Connected) | Err(RecvError::Lagged(_)) => return,
                        Ok(_) => {}
                        Err(RecvError::Closed) => {
                            tokio::time::sleep(wait).await;
                            return;
                        }
                    }
                }
            })
            .await;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_end_keeps_its_error_event() {
        let r = Refusal::store_unavailable().with("k", json!("v"));
        let row = end_row(4, Some(&r));
        assert_eq!((row.seq, row.end), (5, true));
        assert_eq!(refusal_of(&row.body), Some(r));
        assert_eq!(refusal_of(&end_row(0, None).body), None);
        assert!(stream_number() < 1 << 53);
    }
}
