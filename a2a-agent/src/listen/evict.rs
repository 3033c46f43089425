//! Connections that have not yet delivered a request head, oldest first. When the connection
//! cap is full, the accept loop drops the oldest of them to make room for the new one instead of
//! refusing it: a flood of silent (or one-byte) connections then only displaces itself, while a
//! client that sends its request at once is past this stage within a round trip. Connections
//! with a request served or in flight are never displaced.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// The registry of connections still waiting for their first request head.
#[derive(Default)]
pub(super) struct Unserved {
    waiting: Mutex<BTreeMap<u64, CancellationToken>>,
    next: AtomicU64,
    displaced: AtomicU64,
}

/// A connection's place in [`Unserved`]; leaves it when dropped.
pub(super) struct Ticket {
    reg: Arc<Unserved>,
    id: u64,
    /// Cancelled when the connection is displaced.
    pub(super) evicted: CancellationToken,
}

impl Unserved {
    /// Registers a connection just accepted.
    fn admit(&self) -> (u64, CancellationToken) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let t = CancellationToken::new();
        self.lock().insert(id, t.clone());
        (id, t)
    }

    /// The connection `id` delivered a request head (or ended): it can no longer be displaced.
    fn leave(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Displaces the oldest waiting connection; false when there is none.
    pub(super) fn displace_oldest(&self) -> bool {
        let Some((_, t)) = self.lock().pop_first() else {
            return false;
        };
        t.cancel();
        self.displaced.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Connections displaced so far.
    pub(super) fn displaced(&self) -> u64 {
        self.displaced.load(Ordering::Relaxed)
    }

    /// A ticket that leaves the registry when dropped.
    pub(super) fn ticket(self: &Arc<Self>) -> Ticket {
        let (id, evicted) = self.admit();
        Ticket {
            reg: self.clone(),
            id,
            evicted,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, CancellationToken>> {
        // The map holds no invariant a panic elsewhere could break.
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Ticket {
    /// The connection delivered a request head: it can no longer be displaced.
    pub(super) fn served(&self) {
        self.reg.leave(self.id);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.reg.leave(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_waiting_connection_is_displaced_first() {
        let reg = Arc::new(Unserved::default());
        let a = reg.ticket();
        let b = reg.ticket();
        let c = reg.ticket();
        a.served();
        assert!(reg.displace_oldest());
        assert!(
            !a.evicted.is_cancelled(),
            "a served connection is never displaced"
        );
        assert!(b.evicted.is_cancelled());
        assert!(!c.evicted.is_cancelled());
        drop(c);
        assert!(
            !reg.displace_oldest(),
            "a connection that ended leaves the registry"
        );
        assert_eq!(reg.displaced(), 1);
    }
}
