//! Approvals (held requests) and session kills behind one trait with two backends (issue 32,
//! docs/replicas.md), in the registry's design ([`super::RegistryStore`]): async methods
//! returning `Send` futures, an enum ([`Holds`]) chosen at start.
//!
//! The rows (`gov_approvals`, `gov_approval_requests`, `gov_kills`) have the same rules on
//! both backends: counts and lists never read a held request; a decision moves only a pending
//! approval; a kill is recorded once.
//!
//! What replicas need beyond rows is to hear of a change made elsewhere:
//! - [`HoldStore::decision`] waits until an approval is decided (or a time passes): the replica
//!   holding a caller's stream wakes when another replica's admin API decides it;
//! - [`HoldStore::kill_events`] is a stream of the kills made from now on, by any replica, so
//!   each one ends its open streams of a killed context or task.
//!
//! On PostgreSQL a trigger raises a notification when an approval's state changes (channel
//! [`APPROVALS_CHANNEL`], the approval id) or a kill is recorded ([`KILLS_CHANNEL`]); each
//! replica listens (`a2a_pg::Listener`). Notifications sent while a listener was away are
//! lost, so after every (re)connection waiters re-read, and while it is away they re-read every
//! [`POLL`]. On SQLite (one process) the handle's own writes wake its waiters, and they re-read
//! every [`POLL`] for writes made by another process (the admin CLI on the same file).

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::rows::{Approval, ApprovalSummary, Kill};
use super::{PgHolds, SqliteHolds};
use crate::store::StoreError;

/// The channel an approval's change of state is announced on (payload: the approval id).
pub const APPROVALS_CHANNEL: &str = "a2a_approvals";

/// The channel a new kill is announced on (payload: the workspace id).
pub const KILLS_CHANNEL: &str = "a2a_kills";

/// How often a waiter re-reads when it cannot rely on being told (see the module doc).
pub const POLL: Duration = Duration::from_secs(1);

/// How far back (seconds) the kill stream re-reads kills it may have missed: kills are stamped
/// by the clock of the replica that made them, so this covers their clocks' skew.
pub const KILL_MARGIN: i64 = 300;

/// Approvals and kills, on either backend (see the module doc).
pub trait HoldStore: Clone + Send + Sync + 'static {
    /// Stores a new approval and its held request; a taken id is [`StoreError::Invalid`], a
    /// missing workspace [`StoreError::NotFound`].
    fn create_approval(&self, a: &Approval) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// One approval of `workspace`, with its request.
    fn approval(
        &self,
        workspace: &str,
        id: &str,
    ) -> impl Future<Output = Result<Option<Approval>, StoreError>> + Send;

    /// One approval of `workspace`, without its request.
    fn approval_summary(
        &self,
        workspace: &str,
        id: &str,
    ) -> impl Future<Output = Result<Option<ApprovalSummary>, StoreError>> + Send;

    /// How many approvals of `workspace` are in `state` (an index count: no row is read).
    fn approval_count(
        &self,
        workspace: &str,
        state: &str,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// The pending approvals of each workspace (one index count per workspace), by id.
    fn pending_by_workspace(
        &self,
    ) -> impl Future<Output = Result<Vec<(String, u64)>, StoreError>> + Send;

    /// A page of `workspace`'s approvals, newest first (then by id), optionally in one state:
    /// at most `limit` (up to [`super::MAX_PAGE`]), those after the approval `after` in that
    /// order. An `after` that is not an approval of `workspace` is [`StoreError::NotFound`].
    fn summaries(
        &self,
        workspace: &str,
        state: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<ApprovalSummary>, StoreError>> + Send;

    /// Marks the pending approvals of `workspace` whose hold ended by `now` expired; how many.
    fn expire_due(
        &self,
        workspace: &str,
        now: i64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Moves a pending approval to `state`; false when it was not pending (decided elsewhere
    /// first: of two replicas deciding at once exactly one gets true).
    fn decide(
        &self,
        workspace: &str,
        id: &str,
        state: &str,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Records the peer's task of an approved hop.
    fn set_peer_task(
        &self,
        workspace: &str,
        id: &str,
        task: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Moves an approved approval that has no peer task yet to `failed` with `refusal`; false
    /// when it was not in that state.
    fn fail(
        &self,
        workspace: &str,
        id: &str,
        refusal: &Value,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Waits until approval `id` of `workspace` is decided (whichever replica decides it) or
    /// `timeout` passes; returns it as it then stands (`None`: there is no such approval).
    fn decision(
        &self,
        workspace: &str,
        id: &str,
        timeout: Duration,
    ) -> impl Future<Output = Result<Option<ApprovalSummary>, StoreError>> + Send;

    /// The kills of `workspace`, oldest first.
    fn kills(&self, workspace: &str) -> impl Future<Output = Result<Vec<Kill>, StoreError>> + Send;

    /// The kills of every workspace made at or after `since` (Unix seconds), oldest first.
    fn kills_since(&self, since: i64)
    -> impl Future<Output = Result<Vec<Kill>, StoreError>> + Send;

    /// Records a kill (idempotent; `killed_at` 0: now); a missing workspace is
    /// [`StoreError::NotFound`].
    fn add_kill(&self, kill: &Kill) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Lifts the kill of context or task (`kind`) `id` in `workspace`: requests naming it are
    /// served again (what the kill ended stays ended). False when there was no such kill.
    fn lift_kill(
        &self,
        workspace: &str,
        kind: &str,
        id: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// A stream of the kills made from now on, by any replica (see [`Kills`]).
    fn kill_events(&self) -> impl Future<Output = Result<Kills<Self>, StoreError>> + Send;
}

/// A stream of the kills made after it started, by any replica (see
/// [`HoldStore::kill_events`]).
///
/// It re-reads the kills of the last [`KILL_MARGIN`] seconds before the newest it has seen
/// when told of a kill, after its listener (re)connected, when it fell behind, and every
/// poll; each kill is handed out once.
pub struct Kills<H> {
    store: H,
    signals: broadcast::Receiver<Signal>,
    poll: Poll,
    seen: HashSet<(String, String, String)>,
    newest: i64,
    queue: VecDeque<Kill>,
}

/// How long a waiter sleeps before re-reading (it may change with the listener's state).
pub(super) type Poll = Arc<dyn Fn() -> Duration + Send + Sync>;

fn key(k: &Kill) -> (String, String, String) {
    (k.workspace_id.clone(), k.kind.clone(), k.id.clone())
}

impl<H: HoldStore> Kills<H> {
    /// Starts the stream: what stands now is not news (read it with [`HoldStore::kills`]).
    pub(super) async fn start(
        store: H,
        signals: broadcast::Receiver<Signal>,
        poll: Poll,
    ) -> Result<Kills<H>, StoreError> {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let standing = store.kills_since(now - KILL_MARGIN).await?;
        Ok(Kills {
            store,
            signals,
            poll,
            seen: standing.iter().map(key).collect(),
            newest: now,
            queue: VecDeque::new(),
        })
    }

    /// The next kill made (here or on another replica). An error (the database away) leaves
    /// the stream usable: the next call waits and reads again.
    pub async fn next(&mut self) -> Result<Kill, StoreError> {
        loop {
            if let Some(k) = self.queue.pop_front() {
                return Ok(k);
            }
            let signals = &mut self.signals;
            let wake = async {
                loop {
                    match signals.recv().await {
                        Ok(Signal::Killed | Signal::Reread) | Err(RecvError::Lagged(_)) => return,
                        Ok(Signal::Decided(_)) => {}
                        Err(RecvError::Closed) => std::future::pending::<()>().await,
                    }
                }
            };
            tokio::select! {
                () = wake => {}
                () = tokio::time::sleep((self.poll)()) => {}
            }
            for k in self.store.kills_since(self.newest - KILL_MARGIN).await? {
                if self.seen.insert(key(&k)) {
                    self.newest = self.newest.max(k.killed_at);
                    self.queue.push_back(k);
                }
            }
        }
    }
}

/// What wakes a waiter of a backend.
#[derive(Debug, Clone)]
pub(super) enum Signal {
    /// An approval's state changed.
    Decided(String),
    /// A kill was recorded.
    Killed,
    /// Changes may have been missed (a (re)connection, dropped notifications): re-read.
    Reread,
}

/// Waits for approval `id` to be decided (see [`HoldStore::decision`]): reads it through
/// `read`, then again on each signal naming it or saying "re-read", every poll, and at the
/// deadline. `signals` is subscribed before the first read, so a decision between the two is
/// heard.
pub(super) async fn decision<R, F>(
    mut signals: broadcast::Receiver<Signal>,
    poll: Poll,
    id: &str,
    timeout: Duration,
    read: R,
) -> Result<Option<ApprovalSummary>, StoreError>
where
    R: Fn() -> F,
    F: Future<Output = Result<Option<ApprovalSummary>, StoreError>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let a = read().await?;
        if a.as_ref().is_none_or(ApprovalSummary::is_decided)
            || tokio::time::Instant::now() >= deadline
        {
            return Ok(a);
        }
        let wake = async {
            loop {
                match signals.recv().await {
                    Ok(Signal::Decided(d)) if d == id => return,
                    Ok(Signal::Reread) | Err(RecvError::Lagged(_)) => return,
                    Ok(_) => {}
                    Err(RecvError::Closed) => std::future::pending::<()>().await,
                }
            }
        };
        tokio::select! {
            () = wake => {}
            () = tokio::time::sleep(poll()) => {}
            () = tokio::time::sleep_until(deadline) => {}
        }
    }
}

/// Approvals and kills on the backend chosen at start (see the module doc).
#[derive(Clone)]
pub enum Holds {
    /// The embedded SQLite file (one process).
    Sqlite(SqliteHolds),
    /// PostgreSQL, shared by replicas.
    Postgres(PgHolds),
}

/// Calls the same method on whichever backend `self` is.
macro_rules! either {
    ($self:ident.$m:ident($($a:expr),*)) => {
        match $self {
            Holds::Sqlite(r) => r.$m($($a),*).await,
            Holds::Postgres(r) => r.$m($($a),*).await,
        }
    };
}

impl HoldStore for Holds {
    async fn create_approval(&self, a: &Approval) -> Result<(), StoreError> {
        either!(self.create_approval(a))
    }
    async fn approval(&self, workspace: &str, id: &str) -> Result<Option<Approval>, StoreError> {
        either!(self.approval(workspace, id))
    }
    async fn approval_summary(
        &self,
        workspace: &str,
        id: &str,
    ) -> Result<Option<ApprovalSummary>, StoreError> {
        either!(self.approval_summary(workspace, id))
    }
    async fn approval_count(&self, workspace: &str, state: &str) -> Result<u64, StoreError> {
        either!(self.approval_count(workspace, state))
    }
    async fn pending_by_workspace(&self) -> Result<Vec<(String, u64)>, StoreError> {
        either!(self.pending_by_workspace())
    }
    async fn summaries(
        &self,
        workspace: &str,
        state: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ApprovalSummary>, StoreError> {
        either!(self.summaries(workspace, state, after, limit))
    }
    async fn expire_due(&self, workspace: &str, now: i64) -> Result<u64, StoreError> {
        either!(self.expire_due(workspace, now))
    }
    async fn decide(
        &self,
        workspace: &str,
        id: &str,
        state: &str,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> Result<bool, StoreError> {
        either!(self.decide(workspace, id, state, approver, reason))
    }
    async fn set_peer_task(&self, workspace: &str, id: &str, task: &str) -> Result<(), StoreError> {
        either!(self.set_peer_task(workspace, id, task))
    }
    async fn fail(&self, workspace: &str, id: &str, refusal: &Value) -> Result<bool, StoreError> {
        either!(self.fail(workspace, id, refusal))
    }
    async fn decision(
        &self,
        workspace: &str,
        id: &str,
        timeout: Duration,
    ) -> Result<Option<ApprovalSummary>, StoreError> {
        either!(self.decision(workspace, id, timeout))
    }
    async fn kills(&self, workspace: &str) -> Result<Vec<Kill>, StoreError> {
        either!(self.kills(workspace))
    }
    async fn kills_since(&self, since: i64) -> Result<Vec<Kill>, StoreError> {
        either!(self.kills_since(since))
    }
    async fn add_kill(&self, kill: &Kill) -> Result<(), StoreError> {
        either!(self.add_kill(kill))
    }
    async fn lift_kill(&self, workspace: &str, kind: &str, id: &str) -> Result<bool, StoreError> {
        either!(self.lift_kill(workspace, kind, id))
    }
    async fn kill_events(&self) -> Result<Kills<Holds>, StoreError> {
        let (signals, poll) = match self {
            Holds::Sqlite(r) => r.signals(),
            Holds::Postgres(r) => r.signals(),
        };
        Kills::start(self.clone(), signals, poll).await
    }
}
