//! The gateway's tables on PostgreSQL (issue 32, replicas): the same tables as the SQLite file
//! (`schema`, migrations 1-21), written fresh as PostgreSQL's migration 1, plus what replicas
//! share that one process kept in memory (console sessions, the page-token key, stream resume
//! events, rate and quota counters). Applied with [`a2a_pg::migrate`] under the component name
//! `gateway`, once across replicas.
//!
//! Differences from the SQLite file, each for the replicas:
//! - registry changes (workspaces, agents, keys, settings, policies, PII rules, kills, card
//!   trust and signing keys) raise a notification on channel [`REGISTRY_CHANNEL`] whose payload
//!   names the table, and move `registry_epoch`: a replica drops its cached reads on the
//!   notification, and polls the epoch while its listener is disconnected;
//! - `audit.seq` and `task_owners.seq` come from identities (no `AUTOINCREMENT`): numbers are
//!   unique across replicas and never reused, with gaps;
//! - the append-only rules are trigger functions raising the same messages;
//! - there is no intent journal: a hop's intent is durable once its replica's batch commits.

/// The channel registry changes are announced on.
pub const REGISTRY_CHANNEL: &str = "a2a_registry";

/// The component name of the gateway's migrations in `a2a_schema`.
pub const COMPONENT: &str = "gateway";

/// The gateway's PostgreSQL migrations, in order (the index + 1 is the version in
/// `a2a_schema`; a published migration is never edited, a fix is a new one).
pub const PG_MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6, V7, V8, V9, V10];

/// The table of the replicas' leases (`a2a_pg::lease`).
pub const REPLICAS_TABLE: &str = "gateway_replicas";

/// 7: the replicas' leases (`gateway_replicas`, renewed by each replica through
/// `a2a_pg::lease`), and which replica relays each stream kept in `stream_events` (`replica`):
/// a replica following a stream another one relays ends it once that replica's lease ended.
const V7: &str = r#"
CREATE TABLE gateway_replicas (
    id TEXT PRIMARY KEY,
    expires TIMESTAMPTZ NOT NULL
);
ALTER TABLE stream_events ADD COLUMN replica TEXT NOT NULL DEFAULT '';
"#;

/// 8: console operators (issue 35): a session names its operator (the column of migration 1,
/// which held `admin`) and keeps the roles the login gave (`console::roles`); sessions opened
/// before are the admin token's.
const V8: &str = r#"
ALTER TABLE console_sessions ADD COLUMN roles TEXT NOT NULL DEFAULT 'admin';
UPDATE console_sessions SET operator = 'admin-token' WHERE operator = 'admin';
"#;

/// 10: each owner's count of listed tasks in stripes (issue 32): the counting trigger adds to
/// the row of its backend's stripe (`pg_backend_pid() % 16`) instead of the owner's one row.
/// With one row, every transaction that bound a task of an owner held that row's lock until
/// it committed, so the writers of every replica (and a replica's batches in flight) took
/// turns, one commit each, for as long as one owner was busy (`bench/pg_floor.sh`). A count
/// is the sum of the owner's stripes (at most 16 rows, read by the primary key's prefix); a
/// stripe may go below zero when a task is counted in one and uncounted in another.
const V10: &str = r#"
ALTER TABLE task_owner_counts ADD COLUMN stripe BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_owner_counts DROP CONSTRAINT task_owner_counts_pkey;
ALTER TABLE task_owner_counts ADD PRIMARY KEY (workspace_id, agent_id, endpoint, stripe);
CREATE OR REPLACE FUNCTION a2a_task_owner_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s BIGINT := pg_backend_pid() % 16;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND NOT OLD.gone THEN
        INSERT INTO task_owner_counts AS c(workspace_id, agent_id, endpoint, stripe, listed)
            VALUES (OLD.workspace_id, OLD.agent_id, OLD.endpoint, s, -1)
            ON CONFLICT (workspace_id, agent_id, endpoint, stripe)
            DO UPDATE SET listed = c.listed - 1;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NOT NEW.gone THEN
        INSERT INTO task_owner_counts AS c(workspace_id, agent_id, endpoint, stripe, listed)
            VALUES (NEW.workspace_id, NEW.agent_id, NEW.endpoint, s, 1)
            ON CONFLICT (workspace_id, agent_id, endpoint, stripe)
            DO UPDATE SET listed = c.listed + 1;
    END IF;
    RETURN NULL;
END $$;
"#;

/// 9: the console's overview for every replica (issue 35): each hop's split of its time, how
/// long it waited for its peer and the gateway's own time, in microseconds
/// (`AuditRecord::peer_us`, `overhead_us`); and each replica's open streams per workspace
/// (`gateway_open_streams`, rewritten by the replica when they change, read with the live
/// leases of `gateway_replicas`).
const V9: &str = r#"
ALTER TABLE audit ADD COLUMN peer_us BIGINT;
ALTER TABLE audit ADD COLUMN overhead_us BIGINT;
CREATE TABLE gateway_open_streams (
    replica TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    open BIGINT NOT NULL,
    PRIMARY KEY (replica, workspace_id)
);
"#;

/// 6: stream resume events as replicas share them (`store::backend::PgStreams`): a row names
/// the whole key a resume must match (workspace, agent, task, caller version), a stream's end
/// is a row of kind `end`; every insert statement announces the streams it added on channel
/// `a2a_stream_events` (payload: the stream id), so a replica following a stream wakes.
const V6: &str = r#"
ALTER TABLE stream_events ADD COLUMN agent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE stream_events ADD COLUMN caller_version TEXT NOT NULL DEFAULT '';
ALTER TABLE stream_events ADD COLUMN kind TEXT NOT NULL DEFAULT 'event';
CREATE INDEX stream_events_ended ON stream_events(created_at) WHERE kind = 'end';

CREATE FUNCTION a2a_stream_events_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('a2a_stream_events', s) FROM (SELECT DISTINCT stream_id AS s FROM added) d;
    RETURN NULL;
END $$;
CREATE TRIGGER stream_events_added AFTER INSERT ON stream_events
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_stream_events_added();
"#;

/// 5: console sessions, login links and signing keys as replicas share them
/// (`store::backend::SessionStore`, `TrustStore`): a session keeps its CSRF token (every
/// replica checks a form against it); a one-time login link, signed with the shared secret
/// `console_link_key`, is spent by one row (of two replicas redeeming it, one inserts); the
/// signing keys get an insertion order (SQLite's `rowid`, the tie-break of their listing).
const V5: &str = r#"
ALTER TABLE console_sessions ADD COLUMN csrf TEXT NOT NULL DEFAULT '';
CREATE TABLE console_links_spent (
    token_hash BYTEA PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
CREATE INDEX console_links_spent_expires ON console_links_spent(expires_at);
ALTER TABLE card_signing_keys ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY;
CREATE INDEX push_jwt_seen_expires ON push_jwt_seen(expires_at);
"#;

/// 4: approvals and kills reach every replica (`store::backend::HoldStore`): a change of an
/// approval's state is announced on channel `a2a_approvals` (payload: the approval id) and a
/// new kill on `a2a_kills` (payload: the workspace id), so a replica waiting for a decision
/// or holding a killed stream wakes; an approval page orders ids byte-wise (`COLLATE "C"`), as
/// SQLite does, from the queue index; the kill stream's re-read by time uses an index.
const V4: &str = r#"
CREATE FUNCTION a2a_approval_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('a2a_approvals', NEW.id);
    RETURN NULL;
END $$;
CREATE TRIGGER gov_approvals_changed AFTER UPDATE OF state ON gov_approvals
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION a2a_approval_changed();

CREATE FUNCTION a2a_kill_made() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('a2a_kills', NEW.workspace_id);
    RETURN NULL;
END $$;
CREATE TRIGGER gov_kills_made AFTER INSERT ON gov_kills
    FOR EACH ROW EXECUTE FUNCTION a2a_kill_made();

DROP INDEX gov_approvals_queue;
CREATE INDEX gov_approvals_queue
    ON gov_approvals(workspace_id, state, created_at DESC, id COLLATE "C" DESC);
CREATE INDEX gov_kills_made_at ON gov_kills(killed_at);
"#;

/// 3: the listing indexes of `task_owners` order task ids byte-wise (`COLLATE "C"`), as
/// SQLite does, whatever the database's collation: a listing's pages and cursors are the same
/// on both backends, and its `ORDER BY status_at DESC, task_id COLLATE "C"` reads an index.
const V3: &str = r#"
DROP INDEX task_owners_listed;
DROP INDEX task_owners_state;
DROP INDEX task_owners_context;
CREATE INDEX task_owners_listed
    ON task_owners(workspace_id, agent_id, endpoint, gone, status_at DESC, task_id COLLATE "C");
CREATE INDEX task_owners_state ON task_owners(workspace_id, agent_id, endpoint, gone, state,
    status_at DESC, task_id COLLATE "C");
CREATE INDEX task_owners_context ON task_owners(workspace_id, agent_id, endpoint, gone,
    context_id, status_at DESC, task_id COLLATE "C");
"#;

/// 2: the HTTP status of the audit rows as `BIGINT`, like every other integer column: the
/// store's Rust types are `i64` (SQLite's `INTEGER`), and `tokio-postgres` binds an `i64`
/// only to a `BIGINT`.
const V2: &str = r#"
ALTER TABLE audit ALTER COLUMN status TYPE BIGINT;
ALTER TABLE admin_audit ALTER COLUMN status TYPE BIGINT;
"#;

const V1: &str = r#"
CREATE FUNCTION a2a_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '%', TG_ARGV[0]; END $$;

CREATE TABLE registry_epoch (
    id INT PRIMARY KEY CHECK (id = 1),
    epoch BIGINT NOT NULL
);
INSERT INTO registry_epoch(id, epoch) VALUES (1, 0);

CREATE FUNCTION a2a_registry_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE registry_epoch SET epoch = epoch + 1 WHERE id = 1;
    PERFORM pg_notify('a2a_registry', TG_TABLE_NAME);
    RETURN NULL;
END $$;

CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    max_response_bytes BIGINT,
    max_stream_bytes BIGINT,
    max_card_bytes BIGINT
);

CREATE TABLE agents (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    credential TEXT,
    skill_allow TEXT,
    pinned_card_key TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, agent_id)
);

CREATE TABLE api_keys (
    key_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    hash BYTEA NOT NULL,
    scopes TEXT NOT NULL,
    label TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT
);

CREATE TABLE workspace_settings (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    document TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE gov_policies (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    document TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE gov_pii_rules (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    rules TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE gov_kills (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    agent_id TEXT,
    reason TEXT,
    killed_at BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, kind, id)
);

CREATE TABLE workspace_card_trust (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    require_signed_cards BOOLEAN NOT NULL
);

CREATE TABLE card_signing_keys (
    kid TEXT PRIMARY KEY,
    alg TEXT NOT NULL,
    public_jwk TEXT NOT NULL,
    sealed_private BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    retired_at BIGINT
);

CREATE TRIGGER workspaces_changed AFTER INSERT OR UPDATE OR DELETE ON workspaces
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_registry_changed();
CREATE TRIGGER agents_changed AFTER INSERT OR UPDATE OR DELETE ON agents
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_registry_changed();
CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_registry_changed();
CREATE TRIGGER workspace_settings_changed AFTER INSERT OR UPDATE OR DELETE ON workspace_settings
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_registry_changed();
CREATE TRIGGER gov_policies_changed AFTER INSERT OR UPDATE OR DELETE ON gov_policies
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_registry_changed();
CREATE TRIGGER gov_pii_rules_changed AFTER INSERT OR UPDATE OR DELETE ON gov_pii_rules
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_registry_changed();
CREATE TRIGGER gov_kills_changed AFTER INSERT OR UPDATE OR DELETE ON gov_kills
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_registry_changed();
CREATE TRIGGER workspace_card_trust_changed AFTER INSERT OR UPDATE OR DELETE ON workspace_card_trust
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_registry_changed();
CREATE TRIGGER card_signing_keys_changed AFTER INSERT OR UPDATE OR DELETE ON card_signing_keys
    FOR EACH STATEMENT EXECUTE FUNCTION a2a_registry_changed();

CREATE TABLE audit_retention (
    id INT PRIMARY KEY CHECK (id = 1),
    deleted_below BIGINT NOT NULL,
    deleted_rows BIGINT NOT NULL,
    last_at TEXT
);
INSERT INTO audit_retention(id, deleted_below, deleted_rows) VALUES (1, 0, 0);

CREATE TABLE audit (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ts TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    workspace_id TEXT,
    key_id TEXT,
    target TEXT,
    operation TEXT,
    client_method TEXT,
    peer_method TEXT,
    client_version TEXT,
    client_binding TEXT,
    peer_version TEXT,
    peer_binding TEXT,
    decision TEXT NOT NULL,
    status INT NOT NULL,
    latency_ms BIGINT NOT NULL,
    error_code TEXT,
    phase TEXT,
    intent_of BIGINT,
    task_id TEXT,
    governance TEXT,
    signature_trust TEXT
);
CREATE INDEX audit_ws_seq ON audit(workspace_id, seq);
CREATE INDEX audit_ws_target_seq ON audit(workspace_id, target, seq);
CREATE INDEX audit_decision_seq ON audit(decision, seq) WHERE decision <> 'allowed';
CREATE INDEX audit_trace ON audit(trace_id);
CREATE INDEX audit_intent_of ON audit(intent_of) WHERE intent_of IS NOT NULL;

CREATE FUNCTION a2a_audit_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.seq >= (SELECT deleted_below FROM audit_retention WHERE id = 1) THEN
        RAISE EXCEPTION 'audit is append-only';
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    FOR EACH ROW EXECUTE FUNCTION a2a_refuse('audit is append-only');
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    FOR EACH ROW EXECUTE FUNCTION a2a_audit_delete();

CREATE FUNCTION a2a_retention_forward() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.deleted_below < OLD.deleted_below
       OR NEW.deleted_below > (SELECT coalesce(max(seq), 0) FROM audit) THEN
        RAISE EXCEPTION 'audit retention moves forward, never past the newest row';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER audit_retention_forward BEFORE UPDATE OF deleted_below ON audit_retention
    FOR EACH ROW EXECUTE FUNCTION a2a_retention_forward();
CREATE TRIGGER audit_retention_kept BEFORE DELETE ON audit_retention
    FOR EACH ROW EXECUTE FUNCTION a2a_refuse('audit retention mark is kept');

CREATE TABLE admin_audit (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ts TEXT NOT NULL,
    actor_kind TEXT NOT NULL,
    actor_subject TEXT NOT NULL,
    actor_remote TEXT,
    action TEXT NOT NULL,
    workspace_id TEXT,
    status INT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX admin_audit_ws ON admin_audit(workspace_id, seq);
CREATE TRIGGER admin_audit_no_update BEFORE UPDATE ON admin_audit
    FOR EACH ROW EXECUTE FUNCTION a2a_refuse('admin audit is append-only');
CREATE TRIGGER admin_audit_no_delete BEFORE DELETE ON admin_audit
    FOR EACH ROW EXECUTE FUNCTION a2a_refuse('admin audit is append-only');

CREATE TABLE task_owners (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint TEXT NOT NULL,
    task_id TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    context_id TEXT,
    state TEXT,
    status_at BIGINT NOT NULL DEFAULT -1,
    open BOOLEAN NOT NULL DEFAULT TRUE,
    gone BOOLEAN NOT NULL DEFAULT FALSE,
    checked_at BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX task_owners_task ON task_owners(endpoint, task_id);
CREATE INDEX task_owners_owner ON task_owners(workspace_id, agent_id, endpoint, seq);
CREATE INDEX task_owners_listed
    ON task_owners(workspace_id, agent_id, endpoint, gone, status_at DESC, task_id);
CREATE INDEX task_owners_state
    ON task_owners(workspace_id, agent_id, endpoint, gone, state, status_at DESC, task_id);
CREATE INDEX task_owners_context
    ON task_owners(workspace_id, agent_id, endpoint, gone, context_id, status_at DESC, task_id);
CREATE INDEX task_owners_open
    ON task_owners(workspace_id, agent_id, endpoint, open, checked_at);
CREATE INDEX task_owners_seen ON task_owners(GREATEST(created_at * 1000, checked_at));

CREATE TABLE task_owner_counts (
    workspace_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    listed BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, agent_id, endpoint)
);
CREATE FUNCTION a2a_task_owner_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND NOT OLD.gone THEN
        UPDATE task_owner_counts SET listed = listed - 1
            WHERE workspace_id = OLD.workspace_id AND agent_id = OLD.agent_id
              AND endpoint = OLD.endpoint;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NOT NEW.gone THEN
        INSERT INTO task_owner_counts AS c(workspace_id, agent_id, endpoint, listed)
            VALUES (NEW.workspace_id, NEW.agent_id, NEW.endpoint, 1)
            ON CONFLICT (workspace_id, agent_id, endpoint) DO UPDATE SET listed = c.listed + 1;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER task_owner_counts_insert AFTER INSERT OR DELETE ON task_owners
    FOR EACH ROW EXECUTE FUNCTION a2a_task_owner_count();
CREATE TRIGGER task_owner_counts_gone AFTER UPDATE OF gone ON task_owners
    FOR EACH ROW WHEN (OLD.gone IS DISTINCT FROM NEW.gone)
    EXECUTE FUNCTION a2a_task_owner_count();

CREATE TABLE gateway_sends (
    workspace_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    task_id TEXT,
    reply TEXT,
    PRIMARY KEY (workspace_id, agent_id, message_id)
);
CREATE INDEX gateway_sends_created ON gateway_sends(created_at);

CREATE TABLE push_callbacks (
    callback_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT,
    url TEXT NOT NULL,
    token TEXT,
    auth_scheme TEXT,
    auth_credentials TEXT,
    caller_version TEXT NOT NULL,
    peer_version TEXT NOT NULL,
    notify_token TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX push_callbacks_task ON push_callbacks(workspace_id, agent_id, task_id);

CREATE TABLE push_delivered (
    callback_id TEXT NOT NULL REFERENCES push_callbacks(callback_id) ON DELETE CASCADE,
    body_hash TEXT NOT NULL,
    delivered_at BIGINT NOT NULL,
    PRIMARY KEY (callback_id, body_hash)
);

CREATE TABLE push_jwt_seen (
    issuer TEXT NOT NULL,
    jti TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, jti)
);

CREATE TABLE gov_approvals (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL,
    caller_version TEXT NOT NULL,
    preview TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    rule TEXT,
    approver TEXT,
    reason TEXT,
    peer_task_id TEXT,
    chain TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    extensions TEXT NOT NULL DEFAULT '[]',
    key_id TEXT,
    refusal TEXT
);
CREATE INDEX gov_approvals_queue ON gov_approvals(workspace_id, state, created_at, id);

CREATE TABLE gov_approval_requests (
    id TEXT PRIMARY KEY REFERENCES gov_approvals(id) ON DELETE CASCADE,
    params TEXT NOT NULL
);

-- What one process kept in memory and replicas share.

CREATE TABLE console_sessions (
    token_hash BYTEA PRIMARY KEY,
    operator TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX console_sessions_expires ON console_sessions(expires_at);

CREATE TABLE gateway_secrets (
    name TEXT PRIMARY KEY,
    value BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE stream_events (
    stream_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    workspace_id TEXT NOT NULL,
    task_id TEXT,
    event TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (stream_id, seq)
);
CREATE INDEX stream_events_created ON stream_events(created_at);

CREATE TABLE rate_counters (
    bucket TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (bucket, window_start)
);
"#;
