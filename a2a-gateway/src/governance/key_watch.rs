//! Open streams by key (issue 39): a key revoked or past its expiry ends every stream it opened
//! (SendStreamingMessage, SubscribeToTask, a held send's stream) with the refusal a new request
//! with that key gets (`a2a_unauthorized`, 401) as the last event.
//!
//! [`KeyStreams::guard`] registers a stream answer under its key; while any is open, one
//! sweeper task reads the standing of their keys ([`RegistryStore::key_standing`], through the
//! registry cache) every [`SWEEP`], so a revocation by any path (admin API, console, CLI on the same
//! database) or an expiry ends them within that time. The admin API's revocation also ends
//! them at once ([`KeyStreams::end_key`]).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::protocol::answer::Answer;
use crate::protocol::errors::Refusal;
use crate::store::KeyRejection;
use crate::store::backend::{Registry, RegistryStore};

/// How often the keys of open streams are read.
pub const SWEEP: Duration = Duration::from_millis(500);

/// The refusal a request with a key in this standing gets.
pub fn refusal(why: KeyRejection) -> Refusal {
    match why {
        KeyRejection::Revoked => Refusal::unauthorized("was revoked"),
        KeyRejection::Expired => Refusal::unauthorized("has expired"),
        KeyRejection::Invalid => Refusal::unauthorized("is not valid"),
    }
}

/// One open stream of a key.
struct Watched {
    key: String,
    token: CancellationToken,
    why: Mutex<Option<Refusal>>,
}

#[derive(Default)]
struct Inner {
    open: Vec<Weak<Watched>>,
    /// A sweeper task is running.
    sweeping: bool,
}

/// The open streams of every key (weakly held: a stream that ends drops out).
#[derive(Default)]
pub struct KeyStreams {
    inner: Mutex<Inner>,
}

impl KeyStreams {
    /// `answer`, a stream, made to end with `key`'s refusal once the key is revoked or
    /// expires (a unary answer is returned as it is). Starts the sweeper when none runs.
    pub fn guard(
        self: &Arc<Self>,
        registry: &Registry,
        shutdown: &CancellationToken,
        key: &str,
        answer: Answer,
    ) -> Answer {
        let Answer::Stream(mut events) = answer else {
            return answer;
        };
        let w = Arc::new(Watched {
            key: key.to_owned(),
            token: CancellationToken::new(),
            why: Mutex::new(None),
        });
        let start = match self.inner.lock() {
            Ok(mut inner) => {
                inner.open.retain(|o| o.strong_count() > 0);
                inner.open.push(Arc::downgrade(&w));
                !std::mem::replace(&mut inner.sweeping, true)
            }
            Err(_) => false,
        };
        if start {
            tokio::spawn(sweep(self.clone(), registry.clone(), shutdown.clone()));
        }
        let s = async_stream::stream! {
            loop {
                tokio::select! {
                    biased;
                    _ = w.token.cancelled() => {
                        let r = w.why.lock().ok().and_then(|g| g.clone());
                        yield Err(r.unwrap_or_else(|| refusal(KeyRejection::Invalid)));
                        break;
                    }
                    ev = events.next() => match ev {
                        Some(ev) => yield ev,
                        None => break,
                    },
                }
            }
        };
        Answer::Stream(Box::pin(s))
    }

    /// Ends the open streams of `key` with `why`; returns how many.
    pub fn end_key(&self, key: &str, why: &Refusal) -> usize {
        let open: Vec<Arc<Watched>> = match self.inner.lock() {
            Ok(inner) => inner.open.iter().filter_map(Weak::upgrade).collect(),
            Err(_) => return 0,
        };
        let mut ended = 0;
        for w in open
            .iter()
            .filter(|w| w.key == key && !w.token.is_cancelled())
        {
            if let Ok(mut g) = w.why.lock() {
                *g = Some(why.clone());
            }
            w.token.cancel();
            ended += 1;
        }
        ended
    }

    /// The keys of the open streams; `None` (and the sweeper marked stopped) when there are
    /// none, under the same lock a new stream registers with.
    fn keys_or_stop(&self) -> Option<BTreeSet<String>> {
        let mut inner = self.inner.lock().ok()?;
        inner.open.retain(|o| o.strong_count() > 0);
        if inner.open.is_empty() {
            inner.sweeping = false;
            return None;
        }
        Some(
            inner
                .open
                .iter()
                .filter_map(Weak::upgrade)
                .map(|w| w.key.clone())
                .collect(),
        )
    }

    fn stopped(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.sweeping = false;
        }
    }
}

/// The sweeper: every [`SWEEP`] while streams are open, ends those of keys that no longer
/// stand. Stops when none is open (the next stream starts another) or at shutdown.
async fn sweep(reg: Arc<KeyStreams>, registry: Registry, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => { reg.stopped(); return; }
            _ = tokio::time::sleep(SWEEP) => {}
        }
        let Some(keys) = reg.keys_or_stop() else {
            return;
        };
        for k in keys {
            match registry.key_standing(&k).await {
                Ok(Some(why)) => {
                    let n = reg.end_key(&k, &refusal(why));
                    tracing::info!(key = %k, streams = n, "key no longer stands: its streams end");
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(key = %k, "key standing not read: {e}"),
            }
        }
    }
}
