//! The agent's PostgreSQL schema: every table of [`super::PostgresStore`] and of the replay,
//! send and push-config logs that share its pool, as versioned migrations applied once across
//! replicas ([`a2a_pg::migrate`], component `agent`).
//!
//! The tables are named `agent_*` so that an agent and a gateway can share one database. Task
//! ids compare byte-wise (`COLLATE "C"`), as SQLite compares them, so listings page alike on
//! every store. `runner` is the replica that wrote an unfinished task or a due notice: rows of
//! a replica that is gone are taken over by another ([`super::postgres`]). A task's `version`
//! grows at every write: a follow-up turn begins only on the version its replica last saw.
//!
//! `agent_replicas` (migration 2) holds each replica's lease (its id and when the lease ends,
//! in the database's clock): the replica renews it, for all its rows at once, every third of
//! the lease time; the rows of a runner whose lease has ended (or, without a lease row, whose
//! liveness lock is free) are taken over by another replica (`pg_lease`). `cancel_requested`
//! marks a task another replica was asked to cancel: its runner cancels it (told by `NOTIFY`,
//! or finding the mark when it polls). `seq` is the number of the last event the stored task
//! includes (NULL: not known), so that another replica's snapshot of it names the right event.

use std::time::Duration;

/// The lease time unless set (`PostgresStore::set_lease`; the agent's `replica_lease`).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// How often a lease of `lease` is renewed (and gone replicas looked for): a third of it.
pub(crate) fn renew_every(lease: Duration) -> Duration {
    (lease / 3).max(Duration::from_millis(50))
}

/// The channel on which a replica announces each event it adds to the replay log (payload:
/// `SEQ TASK_ID`, never the event).
pub(crate) const EVENTS_CHANNEL: &str = "a2a_agent_events";
/// The channel on which a replica asks the runner of a task to cancel it (payload: the id).
pub(crate) const CANCELS_CHANNEL: &str = "a2a_agent_cancels";
/// The channel on which a replica announces a push config it stored (payload: the task id).
pub(crate) const PUSH_CONFIGS_CHANNEL: &str = "a2a_agent_push_configs";

/// The replicas' leases (`a2a_pg::lease`: renewed, given up and asked through it).
pub(super) const REPLICAS: &str = "agent_replicas";

/// The component name of the agent's migrations (row `a2a_schema('agent')`).
pub(crate) const COMPONENT: &str = "agent";

/// The condition of an unfinished task (SUBMITTED or WORKING), as the partial index and the
/// start-up read both write it.
macro_rules! open_states {
    () => {
        "state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')"
    };
}
pub(crate) use open_states;

/// The migrations, oldest first (never edit one that was released: add another).
pub(crate) const MIGRATIONS: &[&str] = &[
    concat!(
        r#"
CREATE TABLE agent_tasks (
    id TEXT COLLATE "C" PRIMARY KEY,
    owner TEXT NOT NULL,
    context_id TEXT,
    state TEXT NOT NULL,
    ts BIGINT NOT NULL,
    runner TEXT NOT NULL DEFAULT '',
    version BIGINT NOT NULL DEFAULT 0,
    body TEXT NOT NULL
);
CREATE INDEX agent_tasks_owner_ts ON agent_tasks (owner, ts DESC, id DESC);
CREATE INDEX agent_tasks_open ON agent_tasks (runner) WHERE "#,
        open_states!(),
        r#";
CREATE TABLE agent_push_outbox (
    seq BIGSERIAL PRIMARY KEY,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    content_type TEXT NOT NULL,
    body BYTEA NOT NULL,
    runner TEXT NOT NULL DEFAULT ''
);
CREATE TABLE agent_push_configs (
    seq BIGSERIAL PRIMARY KEY,
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    owner TEXT NOT NULL,
    version TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (task_id, id)
);
CREATE TABLE agent_sends (
    owner TEXT NOT NULL,
    message_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    target TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (owner, message_id)
);
CREATE INDEX agent_sends_at ON agent_sends (at);
CREATE TABLE agent_replay_events (
    task_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
);
"#
    ),
    // 2: leases and cancel requests (several replicas: docs/agent.md "Several replicas").
    r#"
CREATE TABLE agent_replicas (
    id TEXT PRIMARY KEY,
    expires TIMESTAMPTZ NOT NULL
);
ALTER TABLE agent_tasks ADD COLUMN cancel_requested BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE agent_tasks ADD COLUMN seq BIGINT;
CREATE INDEX agent_tasks_cancel ON agent_tasks (runner) WHERE cancel_requested;
"#,
];

#[cfg(test)]
mod tests {
    use crate::model::TaskState;

    #[test]
    fn the_open_states_are_the_unfinished_states_as_stored() {
        assert_eq!(
            open_states!(),
            format!(
                "state IN ('{}', '{}')",
                TaskState::Submitted.as_str(),
                TaskState::Working.as_str()
            )
        );
    }
}
