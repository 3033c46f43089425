//! `LISTEN/NOTIFY`: one connection of its own that listens on a few channels, reconnects by
//! itself, and says when it was away.
//!
//! PostgreSQL delivers a notification only to sessions listening when it is committed, so a
//! listener that lost its connection may have missed some: after every (re)connection the
//! listener sends [`Event::Connected`], on which its user re-reads whatever it caches. While it
//! is disconnected, [`Listener::is_connected`] is false: its user polls instead (and says so in
//! its metrics).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::broadcast;
use tokio_postgres::{AsyncMessage, NoTls};

use crate::PgError;

/// What a [`Listener`] hands out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The listener is (again) connected and listening: notifications may have been missed
    /// before this; re-read what is cached.
    Connected,
    /// A notification.
    Notification {
        /// The channel.
        channel: String,
        /// Its payload (up to 8000 bytes, PostgreSQL's limit).
        payload: String,
    },
}

/// A connection that listens on channels (see the module doc). Dropping it stops it.
pub struct Listener {
    events: broadcast::Sender<Event>,
    connected: Arc<AtomicBool>,
    reconnects: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether `name` can be a channel name as written (lower-case letters, digits, `_`).
fn valid_channel(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl Listener {
    /// Starts listening on `channels` with the settings `config` (see [`crate::pg_config`]);
    /// a lost connection is retried every `retry`. Channel names are lower-case letters,
    /// digits and `_`.
    pub fn start(
        config: tokio_postgres::Config,
        channels: &[&str],
        retry: Duration,
    ) -> Result<Listener, PgError> {
        if let Some(bad) = channels.iter().find(|c| !valid_channel(c)) {
            return Err(PgError::Setup(format!("bad channel name {bad:?}")));
        }
        let listen: String = channels.iter().map(|c| format!("LISTEN {c};")).collect();
        let (events, _) = broadcast::channel(4096);
        let connected = Arc::new(AtomicBool::new(false));
        let reconnects = Arc::new(AtomicU64::new(0));
        let task = tokio::spawn(run(
            config,
            listen,
            retry,
            events.clone(),
            connected.clone(),
            reconnects.clone(),
        ));
        Ok(Listener {
            events,
            connected,
            reconnects,
            task,
        })
    }

    /// A receiver of the events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Whether the listener is connected and listening now.
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Acquire)
    }

    /// How many times the listener connected (1 after the first connection).
    pub fn connections(&self) -> u64 {
        self.reconnects.load(Ordering::Acquire)
    }
}

async fn run(
    config: tokio_postgres::Config,
    listen: String,
    retry: Duration,
    events: broadcast::Sender<Event>,
    connected: Arc<AtomicBool>,
    count: Arc<AtomicU64>,
) {
    loop {
        match config.connect(NoTls).await {
            Ok((client, mut conn)) => {
                // The connection's messages (notifications among them) come out of polling it;
                // a task drives it while this one issues LISTEN.
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let driver = tokio::spawn(async move {
                    let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
                    while let Some(m) = messages.next().await {
                        match m {
                            Ok(AsyncMessage::Notification(n)) => {
                                let _ = tx.send(Event::Notification {
                                    channel: n.channel().to_owned(),
                                    payload: n.payload().to_owned(),
                                });
                            }
                            Ok(_) => {}
                            Err(e) => {
                                tracing::warn!("postgres listener connection: {e}");
                                break;
                            }
                        }
                    }
                });
                match client.batch_execute(&listen).await {
                    Ok(()) => {
                        connected.store(true, Ordering::Release);
                        count.fetch_add(1, Ordering::AcqRel);
                        let _ = events.send(Event::Connected);
                        while let Some(ev) = rx.recv().await {
                            let _ = events.send(ev);
                        }
                    }
                    Err(e) => tracing::warn!("postgres LISTEN: {e}"),
                }
                connected.store(false, Ordering::Release);
                driver.abort();
                tracing::warn!("postgres listener disconnected; retrying");
            }
            Err(e) => tracing::debug!("postgres listener connect: {e}"),
        }
        tokio::time::sleep(retry).await;
    }
}

/// Sends `payload` on `channel` (delivered when the surrounding transaction commits, or at
/// once outside one).
pub async fn notify(
    client: &tokio_postgres::Client,
    channel: &str,
    payload: &str,
) -> Result<(), PgError> {
    client
        .execute("SELECT pg_notify($1, $2)", &[&channel, &payload])
        .await?;
    Ok(())
}
