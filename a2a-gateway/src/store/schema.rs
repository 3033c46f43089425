//! The schema: SQLite migrations of the gateway's database, in order.

use super::{hop_page, settings};

/// Schema migrations, applied in order; the index + 1 is the schema version.
pub const MIGRATIONS: &[&str] = &[
    // 1: registry, keys and audit
    r#"
    CREATE TABLE workspaces (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        max_response_bytes INTEGER,
        max_stream_bytes INTEGER,
        max_card_bytes INTEGER
    );
    CREATE TABLE agents (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        agent_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        credential TEXT,
        skill_allow TEXT,
        pinned_card_key TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (workspace_id, agent_id)
    );
    CREATE TABLE api_keys (
        key_id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        hash BLOB NOT NULL,
        scopes TEXT NOT NULL,
        label TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER
    );
    CREATE TABLE audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
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
        status INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        error_code TEXT
    );
    CREATE INDEX audit_ws_target ON audit(workspace_id, target);
    CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
    CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
    "#,
    // 2: sealed push callbacks (the caller's webhook, kept from the peer) and delivered bodies
    r#"
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
        created_at INTEGER NOT NULL
    );
    CREATE INDEX push_callbacks_task ON push_callbacks(workspace_id, agent_id, task_id);
    CREATE TABLE push_delivered (
        callback_id TEXT NOT NULL REFERENCES push_callbacks(callback_id) ON DELETE CASCADE,
        body_hash TEXT NOT NULL,
        delivered_at INTEGER NOT NULL,
        PRIMARY KEY (callback_id, body_hash)
    );
    "#,
    // 3: task ownership (see `crate::tasks::ownership`) and audit intent records: an intent row is
    // written before the peer call; the hop's final row names it in `intent_of`.
    r#"
    CREATE TABLE task_owners (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        endpoint TEXT NOT NULL,
        task_id TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX task_owners_task ON task_owners(endpoint, task_id);
    CREATE INDEX task_owners_owner ON task_owners(workspace_id, agent_id, endpoint, seq);
    ALTER TABLE audit ADD COLUMN phase TEXT;
    ALTER TABLE audit ADD COLUMN intent_of INTEGER;
    ALTER TABLE audit ADD COLUMN task_id TEXT;
    CREATE INDEX audit_intent_of ON audit(intent_of);
    "#,
    // 4: the intent journal's watermark (see `journal`): the highest journal number whose
    // intent row is committed.
    r#"
    CREATE TABLE journal_state (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        committed INTEGER NOT NULL
    );
    INSERT INTO journal_state(id, committed) VALUES (1, 0);
    "#,
    // 5: governance (issue 14): policies, PII rules, kills, and each hop's evidence in `audit`.
    GOVERNANCE,
    // 6: approvals (held hops).
    APPROVALS,
    // 7: idempotent sends (issue 16): the send records of `crate::hop::idempotency`.
    crate::store::sends::MIGRATION,
    // 8: the operator console's keyset pages (issue 18): audit indexes ending in `seq`.
    hop_page::MIGRATION,
    // 9: card trust (issue 15): own signing keys, workspaces requiring signed cards, push JWT
    // ids, and each hop's card trust state in `audit`.
    TRUST,
    // 10: per-workspace settings (issue 15): extension allow-list, push delivery.
    settings::MIGRATION,
    // 11: the admin audit log (issue 15): every admin action with the admin's identity.
    ADMIN_AUDIT,
    // 12: the extension URIs of a held hop (issue 15), sent when it is released.
    APPROVAL_EXTENSIONS,
    // 13: the intent link index without the intent rows (issue 11).
    hop_page::MIGRATION_INTENT_OF,
    // 14: the audit table without AUTOINCREMENT, the decision index without `allowed` rows
    // (issue 11; why seq numbers are still never reused: see the constant).
    hop_page::MIGRATION_AUDIT_REBUILD,
    // 15: the registry epoch the registry cache checks (issue 11: the audit writer's own
    // connection moves `PRAGMA data_version` with every batch).
    super::cache::MIGRATION_EPOCH,
    // 16: what the gateway last saw of each bound task's status (issue 40: ListTasks answered
    // from the owner's records, see `task_records`), and the indexes a listing page reads.
    TASK_RECORDS,
    // 17: the key a held hop was sent with, and the refusal of a released one the gateway did
    // not send (issue 39: releasing re-runs the session-kill and key checks).
    APPROVAL_KEY,
    // 18: the journal number of journaled intent rows (issue 40: hop outcomes recovered from
    // the journal find their intent) and audit retention (deletion below a forward-only mark).
    super::retention::MIGRATION,
    // 19: the index task retention reads (issue 40: task records bounded in time, see
    // `task_retention`).
    super::task_retention::MIGRATION,
    // 20: held requests apart from the approvals' facts (issue 39): counts and lists of
    // approvals read an index and small rows, never a request.
    APPROVAL_REQUESTS,
    // 21: each owner's count of listed tasks, kept by triggers (issue 40: a listing's
    // `totalSize` without counting the owner's rows on every call).
    super::task_records::COUNTS,
    // 22: each hop's split of its time (issue 35): peer time and the gateway's own, in
    // microseconds, for the console's overview per workspace.
    r#"
    ALTER TABLE audit ADD COLUMN peer_us INTEGER;
    ALTER TABLE audit ADD COLUMN overhead_us INTEGER;
    "#,
];

/// Migration of the listing columns of `task_owners` (see `super::task_records`). Every index
/// begins with the owner, so a listing reads none of the peer's or other owners' tasks; the
/// order is newest status first, then by id.
const TASK_RECORDS: &str = r#"
    ALTER TABLE task_owners ADD COLUMN context_id TEXT;
    ALTER TABLE task_owners ADD COLUMN state TEXT;
    ALTER TABLE task_owners ADD COLUMN status_at INTEGER NOT NULL DEFAULT -1;
    ALTER TABLE task_owners ADD COLUMN open INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE task_owners ADD COLUMN gone INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE task_owners ADD COLUMN checked_at INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX task_owners_listed
        ON task_owners(workspace_id, agent_id, endpoint, gone, status_at DESC, task_id);
    CREATE INDEX task_owners_state
        ON task_owners(workspace_id, agent_id, endpoint, gone, state, status_at DESC, task_id);
    CREATE INDEX task_owners_context
        ON task_owners(workspace_id, agent_id, endpoint, gone, context_id, status_at DESC, task_id);
    CREATE INDEX task_owners_open
        ON task_owners(workspace_id, agent_id, endpoint, open, checked_at);
"#;

/// Migration of the governance tables (applied with the store's migrations).
const GOVERNANCE: &str = r#"
    CREATE TABLE gov_policies (
        workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
        document TEXT NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE TABLE gov_pii_rules (
        workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
        rules TEXT NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE TABLE gov_kills (
        workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        agent_id TEXT,
        reason TEXT,
        killed_at INTEGER NOT NULL,
        PRIMARY KEY (workspace_id, kind, id)
    );
    ALTER TABLE audit ADD COLUMN governance TEXT;
"#;

/// Migration of the approvals table.
const APPROVALS: &str = r#"
    CREATE TABLE gov_approvals (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        agent_id TEXT NOT NULL,
        caller_version TEXT NOT NULL,
        params TEXT NOT NULL,
        preview TEXT NOT NULL,
        context_id TEXT NOT NULL,
        state TEXT NOT NULL,
        rule TEXT,
        approver TEXT,
        reason TEXT,
        peer_task_id TEXT,
        chain TEXT NOT NULL DEFAULT '[]',
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
    );
    CREATE INDEX gov_approvals_ws ON gov_approvals(workspace_id, state);
"#;

/// Migration: the extension URIs a held hop forwards.
const APPROVAL_EXTENSIONS: &str =
    "ALTER TABLE gov_approvals ADD COLUMN extensions TEXT NOT NULL DEFAULT '[]';";

/// Migration: the key of a held hop and the refusal of a release that was not sent.
const APPROVAL_KEY: &str = r#"
    ALTER TABLE gov_approvals ADD COLUMN key_id TEXT;
    ALTER TABLE gov_approvals ADD COLUMN refusal TEXT;
"#;

/// Migration: each held request in a table of its own (the approvals' rows keep the facts and
/// the preview, bounded to 32 KiB: a larger preview written before the bound keeps the
/// operation and size), and the index of the queue's pages (workspace, state, newest first).
const APPROVAL_REQUESTS: &str = r#"
    CREATE TABLE gov_approval_requests (
        id TEXT PRIMARY KEY REFERENCES gov_approvals(id) ON DELETE CASCADE,
        params TEXT NOT NULL
    );
    INSERT INTO gov_approval_requests(id, params) SELECT id, params FROM gov_approvals;
    ALTER TABLE gov_approvals DROP COLUMN params;
    UPDATE gov_approvals SET preview = CASE WHEN json_valid(preview)
        THEN json_object('operation', json_extract(preview, '$.operation'),
            'bytes', json_extract(preview, '$.bytes'), 'previewOmittedBytes', length(preview))
        ELSE json_object('previewOmittedBytes', length(preview)) END
    WHERE length(preview) > 32768;
    DROP INDEX gov_approvals_ws;
    CREATE INDEX gov_approvals_queue ON gov_approvals(workspace_id, state, created_at, id);
"#;

/// Migration of the trust tables (applied with the store's migrations).
const TRUST: &str = r#"
    CREATE TABLE card_signing_keys (
        kid TEXT PRIMARY KEY,
        alg TEXT NOT NULL,
        public_jwk TEXT NOT NULL,
        sealed_private BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        retired_at INTEGER
    );
    CREATE TABLE workspace_card_trust (
        workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
        require_signed_cards INTEGER NOT NULL
    );
    CREATE TABLE push_jwt_seen (
        issuer TEXT NOT NULL,
        jti TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (issuer, jti)
    );
    ALTER TABLE audit ADD COLUMN signature_trust TEXT;
"#;

/// Migration of the admin audit table (append-only, like the hop audit).
const ADMIN_AUDIT: &str = r#"
    CREATE TABLE admin_audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT NOT NULL,
        actor_kind TEXT NOT NULL,
        actor_subject TEXT NOT NULL,
        actor_remote TEXT,
        action TEXT NOT NULL,
        workspace_id TEXT,
        status INTEGER NOT NULL,
        detail TEXT NOT NULL
    );
    CREATE INDEX admin_audit_ws ON admin_audit(workspace_id, seq);
    CREATE TRIGGER admin_audit_no_update BEFORE UPDATE ON admin_audit
        BEGIN SELECT RAISE(ABORT, 'admin audit is append-only'); END;
    CREATE TRIGGER admin_audit_no_delete BEFORE DELETE ON admin_audit
        BEGIN SELECT RAISE(ABORT, 'admin audit is append-only'); END;
"#;
