//! Stream resume events on PostgreSQL (`stream_events`), so a caller whose relayed stream was
//! cut resumes on any replica (issue 32; the relay and the readers are `tasks::replay`).
//!
//! - Writes never hold up the relay: [`PgStreams::enqueue`] hands a row to this replica's
//!   writer task and returns. The writer takes everything queued (up to [`BATCH`] rows) and
//!   commits it as one `INSERT … SELECT FROM unnest(…)`, one batch after the other, so a
//!   stream's rows are committed in their order (a reader never sees event `n + 1` before
//!   `n`). A batch that fails is tried again (every [`RETRY`], for up to [`HOLD`]) before it is
//!   dropped with a warning: a reader then gets the gap marker.
//! - Each insert raises a notification on [`STREAM_EVENTS_CHANNEL`] (payload: the stream id,
//!   by a statement trigger of migration 6); readers wait on it, and re-read every second
//!   anyway ([`super::POLL`]), every 200 ms while the listener is away.
//! - Retention, by the writer every [`TRIM_EVERY`]: the rows of streams that ended more than
//!   `grace` ago, rows older than `max_age`, and each stream's events older than its newest
//!   `max_events`.
//! - Each row names the replica that relays its stream ([`PgStreams::replica`]), which holds a
//!   lease (`gateway_replicas`, renewed every third of [`LEASE`] through `a2a_pg::lease`): a
//!   replica following the stream asks [`PgStreams::relay_gone`] when no event comes, and
//!   ends its caller's stream once the relay's lease ended (`tasks::replay_shared`).

use std::sync::Arc;
use std::time::Duration;

use a2a_pg::tokio_postgres::types::ToSql;
use a2a_pg::{Event, Listener};
use a2a_pg::{Pool, PoolOptions};
use tokio::sync::{broadcast, mpsc};

use super::super::StoreError;
use super::super::pg_schema::{COMPONENT, PG_MIGRATIONS, REPLICAS_TABLE};

/// The channel new stream events are announced on (payload: the stream id).
pub const STREAM_EVENTS_CHANNEL: &str = "a2a_stream_events";
/// Rows committed at most per batch.
pub const BATCH: usize = 256;
/// How often a failed batch is tried again.
pub const RETRY: Duration = Duration::from_millis(250);
/// How long a failed batch is tried before it is dropped.
pub const HOLD: Duration = Duration::from_secs(10);
/// How often the writer trims old rows.
pub const TRIM_EVERY: Duration = Duration::from_secs(30);
/// A replica's lease: another replica takes it for gone (and ends the streams it follows of
/// that replica's relays) once it has not renewed it for this long.
pub const LEASE: Duration = Duration::from_secs(10);

/// Whose stream a row belongs to: a resume names all of it (another workspace, agent, task
/// or caller version reads nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamKey {
    /// The stream's number (the `g<stream>.<n>` of its event ids).
    pub stream: u64,
    /// Workspace.
    pub workspace: String,
    /// Agent id.
    pub agent: String,
    /// Task id.
    pub task: String,
    /// The caller's protocol version (`1.0`, `0.3`): the events are in its form.
    pub version: String,
}

/// One row of a stream: event `seq` (from 1), or its end (`end`, with the error event's
/// body when it ended with one).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamRow {
    /// The event's number in its stream.
    pub seq: u64,
    /// Whether this row is the stream's end.
    pub end: bool,
    /// The event (JSON text), or the end's error (empty: a clean end).
    pub body: String,
}

/// How long rows are kept (see the module doc).
#[derive(Debug, Clone, Copy)]
pub struct StreamBounds {
    /// Events kept per stream (the newest).
    pub max_events: u64,
    /// How long after its end a stream is kept.
    pub grace: Duration,
    /// How long a stream is kept at most.
    pub max_age: Duration,
}

impl Default for StreamBounds {
    /// The in-memory buffers' bounds: 512 events per stream, kept 60 s after the end and an
    /// hour at most.
    fn default() -> StreamBounds {
        StreamBounds {
            max_events: 512,
            grace: Duration::from_secs(60),
            max_age: Duration::from_secs(3600),
        }
    }
}

/// Stream events on PostgreSQL (see the module doc). Cheap to clone; the clones share one
/// pool, writer and listener.
#[derive(Clone)]
pub struct PgStreams {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    queue: mpsc::UnboundedSender<(StreamKey, StreamRow)>,
    listener: Listener,
    lease: a2a_pg::Lease,
}

fn now_ms() -> i64 {
    let ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn as_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl PgStreams {
    /// Connects to the database at `url`, applies the gateway's migrations (once across
    /// replicas), starts this replica's writer (trimming by `bounds`) and its listener.
    pub async fn connect(
        url: &str,
        opts: &PoolOptions,
        bounds: StreamBounds,
    ) -> Result<PgStreams, StoreError> {
        let pool = a2a_pg::pool(url, opts)?;
        {
            let mut c = pool.get().await?;
            a2a_pg::migrate(&mut c, COMPONENT, PG_MIGRATIONS).await?;
        }
        PgStreams::on(pool, a2a_pg::pg_config(url, opts)?, bounds)
    }

    /// On a migrated database's `pool`, listening with the connection settings `config`.
    pub(super) fn on(
        pool: Pool,
        config: a2a_pg::tokio_postgres::Config,
        bounds: StreamBounds,
    ) -> Result<PgStreams, StoreError> {
        let listener = Listener::start(config, &[STREAM_EVENTS_CHANNEL], Duration::from_secs(1))?;
        let (queue, rows) = mpsc::unbounded_channel();
        let replica = crate::ids::random_hex(16);
        let lease = a2a_pg::Lease::keep(pool.clone(), REPLICAS_TABLE, replica.clone(), LEASE);
        tokio::spawn(write(pool.clone(), rows, bounds, replica));
        Ok(PgStreams {
            inner: Arc::new(Inner {
                pool,
                queue,
                listener,
                lease,
            }),
        })
    }

    /// This replica's id: the relay its rows name (new at each start).
    pub fn replica(&self) -> &str {
        self.inner.lease.id()
    }

    /// The replica relaying stream `key` (`None`: no row of it).
    pub async fn relay(&self, key: &StreamKey) -> Result<Option<String>, StoreError> {
        let rows = self
            .query(
                "SELECT replica FROM stream_events WHERE stream_id = $1 AND workspace_id = $2
                 LIMIT 1",
                &[&key.stream.to_string(), &key.workspace],
            )
            .await?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    /// Whether replica `relay` is gone (its lease ended, or it gave it up); this one never is.
    pub async fn relay_gone(&self, relay: &str) -> Result<bool, StoreError> {
        if relay == self.replica() {
            return Ok(false);
        }
        Ok(a2a_pg::lease::gone(&self.inner.pool, REPLICAS_TABLE, relay).await?)
    }

    /// Queues a row for this replica's writer; never waits.
    pub fn enqueue(&self, key: &StreamKey, row: StreamRow) {
        if self.inner.queue.send((key.clone(), row)).is_err() {
            tracing::warn!("stream events writer is gone: event not kept");
        }
    }

    /// The notifications from now on (payload: a stream id; `Connected` after a reconnection).
    pub fn changes(&self) -> broadcast::Receiver<Event> {
        self.inner.listener.subscribe()
    }

    /// Whether new events are heard by notification now (false: readers poll faster).
    pub fn listening(&self) -> bool {
        self.inner.listener.is_connected()
    }

    /// What is kept of the stream `key`: its oldest row's number, its last event's number
    /// (0: none yet) and whether it ended (`None`: no row, or the stream is another
    /// workspace's, agent's, task's or caller version's).
    pub async fn bounds(&self, key: &StreamKey) -> Result<Option<(u64, u64, bool)>, StoreError> {
        let rows = self
            .query(
                "SELECT min(seq), max(seq) FILTER (WHERE kind = 'event'),
                   coalesce(bool_or(kind = 'end'), false)
                 FROM stream_events WHERE stream_id = $1
                   AND workspace_id = $2 AND agent_id = $3 AND task_id = $4
                   AND caller_version = $5",
                &[
                    &key.stream.to_string(),
                    &key.workspace,
                    &key.agent,
                    &key.task,
                    &key.version,
                ],
            )
            .await?;
        let Some(r) = rows.first() else {
            return Ok(None);
        };
        let (lo, hi, ended): (Option<i64>, Option<i64>, bool) = (r.get(0), r.get(1), r.get(2));
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(lo.map(|l| (n(l), hi.map(n).unwrap_or(0), ended)))
    }

    /// Up to `limit` rows of stream `key` after event `after`, in order.
    pub async fn after(
        &self,
        key: &StreamKey,
        after: u64,
        limit: usize,
    ) -> Result<Vec<StreamRow>, StoreError> {
        let rows = self
            .query(
                "SELECT seq, kind, event FROM stream_events WHERE stream_id = $1
                   AND workspace_id = $2 AND agent_id = $3 AND task_id = $4
                   AND caller_version = $5 AND seq > $6
                 ORDER BY seq LIMIT $7",
                &[
                    &key.stream.to_string(),
                    &key.workspace,
                    &key.agent,
                    &key.task,
                    &key.version,
                    &as_i64(after),
                    &as_i64(limit as u64),
                ],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| StreamRow {
                seq: u64::try_from(r.get::<_, i64>(0)).unwrap_or(0),
                end: r.get::<_, &str>(1) == "end",
                body: r.get(2),
            })
            .collect())
    }

    /// Replaces this replica's open-stream counts (`(workspace, open)`, see
    /// [`PgStreams::others_open_streams`]) in one transaction, and deletes the rows of replicas gone
    /// for more than a minute.
    pub async fn publish_open(&self, counts: &[(String, i64)]) -> Result<(), StoreError> {
        let mut c = self.inner.pool.get().await?;
        let tx = c.transaction().await?;
        let replica = self.replica();
        let (ws, n): (Vec<&str>, Vec<i64>) = counts.iter().map(|(w, n)| (w.as_str(), *n)).unzip();
        tx.execute(
            "DELETE FROM gateway_open_streams o WHERE o.replica = $1
               OR NOT EXISTS (SELECT 1 FROM gateway_replicas r
                              WHERE r.id = o.replica AND r.expires >= now() - interval '1 minute')",
            &[&replica],
        )
        .await?;
        tx.execute(
            "INSERT INTO gateway_open_streams(replica, workspace_id, open)
             SELECT $1, w, n FROM unnest($2::text[], $3::bigint[]) AS u(w, n)",
            &[&replica, &ws, &n],
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The streams open on every other replica whose lease is live, of `workspace` (`None`:
    /// every workspace), as each last published them ([`PgStreams::publish_open`]); this
    /// replica's own are its caller's to count, as they are now.
    pub async fn others_open_streams(&self, workspace: Option<&str>) -> Result<u64, StoreError> {
        let rows = self
            .query(
                "SELECT coalesce(sum(o.open), 0)::bigint FROM gateway_open_streams o
                 JOIN gateway_replicas r ON r.id = o.replica AND r.expires >= now()
                 WHERE o.replica <> $1 AND ($2::text IS NULL OR o.workspace_id = $2)",
                &[&self.replica(), &workspace],
            )
            .await?;
        Ok(rows
            .first()
            .map_or(0, |r| u64::try_from(r.get::<_, i64>(0)).unwrap_or(0)))
    }

    /// One retention pass now (the writer runs one every [`TRIM_EVERY`]).
    pub async fn trim(&self, bounds: StreamBounds) -> Result<(), StoreError> {
        trim_rows(&self.inner.pool, bounds).await
    }

    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<a2a_pg::tokio_postgres::Row>, StoreError> {
        let c = self.inner.pool.get().await?;
        let st = c.prepare_cached(sql).await?;
        Ok(c.query(&st, params).await?)
    }
}

/// The writer task (see the module doc): ends when every handle is dropped and the queue is
/// empty.
async fn write(
    pool: Pool,
    mut rows: mpsc::UnboundedReceiver<(StreamKey, StreamRow)>,
    bounds: StreamBounds,
    replica: String,
) {
    let mut trim = tokio::time::interval(TRIM_EVERY);
    trim.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let first = tokio::select! {
            r = rows.recv() => match r {
                Some(r) => r,
                None => return,
            },
            _ = trim.tick() => {
                if let Err(e) = trim_rows(&pool, bounds).await {
                    tracing::debug!("stream events retention: {e}");
                }
                continue;
            }
        };
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rows.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        let give_up = tokio::time::Instant::now() + HOLD;
        loop {
            match insert(&pool, &batch, &replica).await {
                Ok(()) => break,
                Err(e) if tokio::time::Instant::now() < give_up => {
                    tracing::debug!("stream events batch: {e}; trying again");
                    tokio::time::sleep(RETRY).await;
                }
                Err(e) => {
                    tracing::warn!(rows = batch.len(), "stream events dropped: {e}");
                    break;
                }
            }
        }
    }
}

async fn insert(
    pool: &Pool,
    batch: &[(StreamKey, StreamRow)],
    replica: &str,
) -> Result<(), StoreError> {
    let n = batch.len();
    let (mut ids, mut seqs, mut ws, mut agents, mut tasks, mut versions, mut kinds, mut bodies) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (k, r) in batch {
        ids.push(k.stream.to_string());
        seqs.push(as_i64(r.seq));
        ws.push(k.workspace.as_str());
        agents.push(k.agent.as_str());
        tasks.push(k.task.as_str());
        versions.push(k.version.as_str());
        kinds.push(if r.end { "end" } else { "event" });
        bodies.push(r.body.as_str());
    }
    let c = pool.get().await?;
    let st = c
        .prepare_cached(
            "INSERT INTO stream_events(stream_id, seq, workspace_id, agent_id, task_id,
               caller_version, kind, event, created_at, replica)
             SELECT s, q, w, a, t, v, k, e, $9, $10 FROM unnest($1::text[], $2::bigint[],
               $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
               AS x(s, q, w, a, t, v, k, e)
             ON CONFLICT (stream_id, seq) DO NOTHING",
        )
        .await?;
    c.execute(
        &st,
        &[
            &ids,
            &seqs,
            &ws,
            &agents,
            &tasks,
            &versions,
            &kinds,
            &bodies,
            &now_ms(),
            &replica,
        ],
    )
    .await?;
    Ok(())
}

/// One retention pass (see the module doc).
async fn trim_rows(pool: &Pool, bounds: StreamBounds) -> Result<(), StoreError> {
    let c = pool.get().await?;
    let now = now_ms();
    c.execute(
        "DELETE FROM stream_events WHERE created_at < $1",
        &[&now.saturating_sub(ms(bounds.max_age))],
    )
    .await?;
    c.execute(
        "DELETE FROM stream_events e USING (SELECT stream_id FROM stream_events
           WHERE kind = 'end' AND created_at < $1) d WHERE e.stream_id = d.stream_id",
        &[&now.saturating_sub(ms(bounds.grace))],
    )
    .await?;
    c.execute(
        "DELETE FROM stream_events e USING (SELECT stream_id, max(seq) AS top
           FROM stream_events GROUP BY stream_id) m
         WHERE e.stream_id = m.stream_id AND e.kind = 'event' AND e.seq <= m.top - $1",
        &[&as_i64(bounds.max_events)],
    )
    .await?;
    Ok(())
}
