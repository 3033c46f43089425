//! `a2a-gateway serve`'s flags: every setting of [`Config`] as a flag and an `A2A_GATEWAY_*`
//! environment variable, over the TOML file (`--config`).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::config::{
    Age, ByteSize, CardBindings, Config, Dur, ErrorStatusMode, PeerGrpc, PolicyDefault,
};
use a2a_agent::settings::Note;

/// `a2a-gateway serve`: the settings' flags and environment variables (each optional: unset
/// keeps the file's value, else the default).
#[derive(Args)]
pub struct ServeArgs {
    /// TOML configuration file (every key optional; `a2a-gateway config sample` prints them all;
    /// the DVARA API's dotted `a2a.*` settings are read as written, docs/settings-map.md).
    #[arg(long, env = "A2A_GATEWAY_CONFIG")]
    config: Option<PathBuf>,
    /// Check the settings (file, environment, flags) and exit: 0 and "config ok" when the
    /// gateway would start with them, 2 and the error otherwise. Opens no database.
    #[arg(long)]
    pub check_config: bool,
    /// Listen address [default: 127.0.0.1:8080].
    #[arg(long, env = "A2A_GATEWAY_LISTEN")]
    listen: Option<SocketAddr>,
    /// Public base URL written on governed cards [default: http://<listen>].
    #[arg(long, env = "A2A_GATEWAY_PUBLIC_URL")]
    public_url: Option<String>,
    /// Console behind a reverse proxy: honour its X-Forwarded-Host and X-Forwarded-Proto in
    /// the Origin check and the cookie choice [default: false].
    #[arg(long, env = "A2A_GATEWAY_CONSOLE_TRUSTED_PROXY")]
    console_trusted_proxy: Option<bool>,
    /// The console's OpenID Connect provider, its issuer URL: operators log in there and get
    /// their roles from a claim; needs the client id and secret [default: none = admin token
    /// login only].
    #[arg(long, env = "A2A_GATEWAY_CONSOLE_OIDC_ISSUER")]
    console_oidc_issuer: Option<String>,
    /// The console's client id at the OpenID Connect provider [default: none].
    #[arg(long, env = "A2A_GATEWAY_CONSOLE_OIDC_CLIENT_ID")]
    console_oidc_client_id: Option<String>,
    /// The console's client secret at the OpenID Connect provider (prefer the environment)
    /// [default: none].
    #[arg(
        long,
        env = "A2A_GATEWAY_CONSOLE_OIDC_CLIENT_SECRET",
        hide_env_values = true
    )]
    console_oidc_client_secret: Option<String>,
    /// The ID token claim with the operator's console roles (viewer, approver,
    /// approver:WORKSPACE, admin); dotted for a nested claim [default: roles].
    #[arg(long, env = "A2A_GATEWAY_CONSOLE_OIDC_ROLES_CLAIM")]
    console_oidc_roles_claim: Option<String>,
    /// The database: a SQLite file's path (embedded), or a PostgreSQL URL
    /// `postgres://user:pass@host:port/db` (every store there, shared by the replicas started
    /// with the same URL; no file is made) [default: a2a-gateway.db].
    #[arg(long, env = "A2A_GATEWAY_DATABASE")]
    database: Option<PathBuf>,
    /// PostgreSQL: connections of this replica's pool at most [default: 16].
    #[arg(long, env = "A2A_GATEWAY_DATABASE_POOL_SIZE")]
    database_pool_size: Option<usize>,
    /// PostgreSQL: longest wait to connect or for a pooled connection; a request that cannot
    /// get one in time is answered 503 a2a_store_unavailable [default: 3s].
    #[arg(long, env = "A2A_GATEWAY_DATABASE_TIMEOUT")]
    database_timeout: Option<Dur>,
    /// PostgreSQL: the server cancels a statement running longer (0 = no limit) [default: 30s].
    #[arg(long, env = "A2A_GATEWAY_DATABASE_STATEMENT_TIMEOUT")]
    database_statement_timeout: Option<Dur>,
    /// Bearer token of the admin API, also the operator console's login (/console)
    /// [default: none = admin API and console off].
    #[arg(long, env = "A2A_GATEWAY_ADMIN_TOKEN")]
    admin_token: Option<String>,
    /// Serve A2A 1.0 as well as 0.3 (a2a.protocol.serve-v1) [default: true].
    #[arg(long, env = "A2A_GATEWAY_SERVE_V1")]
    serve_v1: Option<bool>,
    /// Serve the A2A 1.0 gRPC binding to callers on the same port; the request's `tenant` is
    /// the agent id (needs --serve-v1) [default: false].
    #[arg(long, env = "A2A_GATEWAY_SERVE_GRPC")]
    serve_grpc: Option<bool>,
    /// Allow message:stream and tasks:resubscribe (a2a.streaming.enabled) [default: true].
    #[arg(long, env = "A2A_GATEWAY_STREAMING")]
    streaming: Option<bool>,
    /// HTTP status of JSON-RPC refusals: `ok` = 200 (401 stays 401), `refusal` = the
    /// refusal's own status (a2a.protocol.json-rpc-error-status) [default: ok].
    #[arg(long, env = "A2A_GATEWAY_JSON_RPC_ERROR_STATUS", value_enum)]
    json_rpc_error_status: Option<ErrorStatusMode>,
    /// With --json-rpc-error-status refusal, the status of a refused stream: `refusal` = its
    /// own, `ok` = 200 as DVARA keeps it [default: refusal].
    #[arg(long, env = "A2A_GATEWAY_STREAM_REFUSAL_STATUS", value_enum)]
    stream_refusal_status: Option<ErrorStatusMode>,
    /// gRPC peers: `call` a peer whose card offers only gRPC, or `refuse` gRPC entries as
    /// DVARA does (502 a2a_peer_protocol_unsupported) [default: call].
    #[arg(long, env = "A2A_GATEWAY_PEER_GRPC", value_enum)]
    peer_grpc: Option<PeerGrpc>,
    /// Bindings the governed Agent Card lists: `all` served, or `jsonrpc` only as DVARA's
    /// card [default: all].
    #[arg(long, env = "A2A_GATEWAY_CARD_BINDINGS", value_enum)]
    card_bindings: Option<CardBindings>,
    /// ErrorInfo domain of the gateway's own refusals (DVARA: dvarahq.com)
    /// [default: a2a-rs.dev].
    #[arg(long, env = "A2A_GATEWAY_ERROR_DOMAIN")]
    error_domain: Option<String>,
    /// Answer headers also under DVARA's x-dvara-* names (x-dvara-signature-trust ...);
    /// requests take x-dvara-* as x-a2a-* always [default: false].
    #[arg(long, env = "A2A_GATEWAY_DVARA_HEADERS")]
    dvara_headers: Option<bool>,
    /// Development mode: allow plain http peers and loopback peer addresses [default: false].
    #[arg(long, env = "A2A_GATEWAY_DEV")]
    dev: Option<bool>,
    /// How long to wait for a peer answer, and between stream events (whole seconds: 30s, 2m)
    /// [default: 30s].
    #[arg(long, env = "A2A_GATEWAY_PEER_TIMEOUT")]
    peer_timeout: Option<Dur>,
    /// Characters of text across an outbound message (413 a2a_message_too_large) [default: 50000].
    #[arg(long, env = "A2A_GATEWAY_MAX_MESSAGE_CHARS")]
    max_message_chars: Option<usize>,
    /// Bytes of a whole peer answer (502 a2a_response_too_large) [default: 16777216 = 16 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_RESPONSE_BYTES")]
    max_response_bytes: Option<u64>,
    /// Bytes of a peer Agent Card [default: 16777216 = 16 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_CARD_BYTES")]
    max_card_bytes: Option<u64>,
    /// Bytes of one stream; the stream then ends with an error event [default: 67108864 = 64 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_STREAM_BYTES")]
    max_stream_bytes: Option<u64>,
    /// Bytes of an incoming push-notification body (413 a2a_push_too_large) [default: 1048576 = 1 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_PUSH_BYTES")]
    max_push_bytes: Option<u64>,
    /// Bytes of text a PII scan reads in one request, in a workspace with PII rules (413
    /// a2a_message_too_large) [default: 4194304 = 4 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_SCANNED_BYTES")]
    max_scanned_bytes: Option<usize>,
    /// On SIGTERM/SIGINT, how long calls may finish before open streams end with an
    /// a2a_shutting_down error event and waiting calls are answered with it [default: 5s].
    #[arg(long, env = "A2A_GATEWAY_SHUTDOWN_GRACE")]
    shutdown_grace: Option<Dur>,
    /// Time for a request's headers to arrive (a connection's first request: from the
    /// accept); the connection is closed beyond [default: 10s].
    #[arg(long, env = "A2A_GATEWAY_HEADER_READ_TIMEOUT")]
    header_read_timeout: Option<Dur>,
    /// Time for a request's whole body to arrive; 408 beyond [default: 30s].
    #[arg(long, env = "A2A_GATEWAY_BODY_READ_TIMEOUT")]
    body_read_timeout: Option<Dur>,
    /// How long an idle keep-alive connection stays open [default: 1m].
    #[arg(long, env = "A2A_GATEWAY_IDLE_TIMEOUT")]
    idle_timeout: Option<Dur>,
    /// Open connections at most, 503 beyond (0 = from the fd limit; always kept below
    /// RLIMIT_NOFILE minus a margin) [default: 10000].
    #[arg(long, env = "A2A_GATEWAY_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Threads of the async runtime (0 = one per CPU the process may use); on a machine shared
    /// with the agents or a load generator, fewer spend less CPU per hop [default: 0].
    #[arg(long, env = "A2A_GATEWAY_WORKERS")]
    workers: Option<usize>,
    /// Base URL of push callbacks (a2a.push.callback-base-url): peers post notifications to
    /// `{base}/a2a/{agentId}/push:notify/{callback}` [default: none = push refused].
    #[arg(long, env = "A2A_GATEWAY_PUSH_CALLBACK_BASE_URL")]
    push_callback_base_url: Option<String>,
    /// How long a deleted push config's callback still accepts the peer's notifications
    /// (sent before the peer saw the delete) [default: 10s].
    #[arg(long, env = "A2A_GATEWAY_PUSH_DELETE_GRACE")]
    push_delete_grace: Option<Dur>,
    /// Deprecated: set a2a.push.delivery per workspace (`admin settings-set --push-delivery`, or
    /// PATCH /admin/workspaces/{ws}/settings). Workspaces with direct push delivery when their
    /// own setting is unset (comma-separated) [default: none].
    #[arg(
        long,
        env = "A2A_GATEWAY_PUSH_DIRECT_WORKSPACES",
        value_delimiter = ','
    )]
    push_direct_workspaces: Option<Vec<String>>,
    /// Serve GET /a2a/.well-known/ard.json, the agents a key may use as an ARD manifest
    /// (experimental) [default: false].
    #[arg(long, env = "A2A_GATEWAY_ARD")]
    ard: Option<bool>,
    /// Decision for a hop no policy rule decides: `allow`, or `deny` (default-deny: every
    /// workspace needs a policy that allows its hops) [default: allow].
    #[arg(long, env = "A2A_GATEWAY_POLICY_DEFAULT", value_enum)]
    policy_default: Option<PolicyDefault>,
    /// Longest delegation chain (agents, the target included); beyond it
    /// a2a_delegation_depth_exceeded [default: 8].
    #[arg(long, env = "A2A_GATEWAY_MAX_DELEGATION_DEPTH")]
    max_delegation_depth: Option<usize>,
    /// Secret of the delegation chain's HMAC; set it when several gateway instances serve the
    /// same agents or chains must survive a restart [default: random per process].
    #[arg(long, env = "A2A_GATEWAY_DELEGATION_KEY", hide_env_values = true)]
    delegation_key: Option<String>,
    /// How long a hop held for approval waits for a person before a2a_approval_expired
    /// [default: 1h].
    #[arg(long, env = "A2A_GATEWAY_APPROVAL_TTL")]
    approval_ttl: Option<Dur>,
    /// How long a blocking send held for approval waits for the decision before it is
    /// answered with the gateway task (0 = at once) [default: 10s].
    #[arg(long, env = "A2A_GATEWAY_APPROVAL_WAIT")]
    approval_wait: Option<Dur>,
    /// How long a send's messageId is remembered per workspace and agent: a repeat within it
    /// is answered from the first send, not forwarded again (0 = off) [default: 10m].
    #[arg(long, env = "A2A_GATEWAY_IDEMPOTENCY_WINDOW")]
    idempotency_window: Option<Dur>,
    /// Require verified peer card signatures in every workspace (502 a2a_card_signature_invalid
    /// for an unsigned or unverifiable card) [default: false].
    #[arg(long, env = "A2A_GATEWAY_REQUIRE_SIGNED_CARDS")]
    require_signed_cards: Option<bool>,
    /// Secret (at least 32 bytes) that encrypts the gateway's card signing keys at rest.
    #[arg(long, env = "A2A_GATEWAY_CARD_KEY_SECRET", hide_env_values = true)]
    card_key_secret: Option<String>,
    /// File holding that secret (when --card-key-secret is not given).
    #[arg(long, env = "A2A_GATEWAY_CARD_KEY_FILE")]
    card_key_file: Option<PathBuf>,
    /// How long a retired card signing key stays in /a2a/.well-known/jwks.json (at least 6m)
    /// [default: 30d].
    #[arg(long, env = "A2A_GATEWAY_SIGNING_KEY_GRACE")]
    signing_key_grace: Option<Dur>,
    /// Audit rows older than this are deleted in the background (30d, 12h, 90m, 45s; 0 =
    /// kept); export them first to keep them (admin audit-export) [default: 30d].
    #[arg(long, env = "A2A_GATEWAY_AUDIT_RETENTION")]
    audit_retention: Option<Age>,
    /// While the database's pages in use pass this size, the oldest audit rows are deleted
    /// (1GiB, 500MB, bytes; 0 = no bound) [default: 1GiB].
    #[arg(long, env = "A2A_GATEWAY_AUDIT_MAX_BYTES")]
    audit_max_bytes: Option<ByteSize>,
    /// Time between two checks of the audit retention [default: 10s].
    #[arg(long, env = "A2A_GATEWAY_AUDIT_RETENTION_CHECK")]
    audit_retention_check: Option<Dur>,
    /// Records of a task not heard of for this long (ownership, status, push callbacks) are
    /// deleted in the background; it then answers TaskNotFound (30d, 12h, 90m, 45s; 0 = kept)
    /// [default: 30d].
    #[arg(long, env = "A2A_GATEWAY_TASK_RETENTION")]
    task_retention: Option<Age>,
    /// OTLP trace export: the collector's base URL, e.g. http://127.0.0.1:4318 (/v1/traces is
    /// added for http/protobuf) [default: OTEL_EXPORTER_OTLP_ENDPOINT; none = no export].
    #[arg(long, env = "A2A_GATEWAY_OTLP_ENDPOINT")]
    otlp_endpoint: Option<String>,
    /// OTLP transport: http/protobuf or grpc [default: OTEL_EXPORTER_OTLP_PROTOCOL, else
    /// http/protobuf].
    #[arg(long, env = "A2A_GATEWAY_OTLP_PROTOCOL")]
    otlp_protocol: Option<String>,
    /// Headers of each OTLP export, k=v,k2=v2 [default: OTEL_EXPORTER_OTLP_HEADERS].
    #[arg(long, env = "A2A_GATEWAY_OTLP_HEADERS")]
    otlp_headers: Option<String>,
    /// service.name of the exported spans [default: OTEL_SERVICE_NAME, else a2a-gateway].
    #[arg(long, env = "A2A_GATEWAY_SERVICE_NAME")]
    service_name: Option<String>,
    /// Workspaces (and, apart, agents) labelled by name in /metrics, the first seen; later
    /// ones are counted under `other` [default: 100].
    #[arg(long, env = "A2A_GATEWAY_METRICS_LABEL_CAP")]
    metrics_label_cap: Option<usize>,
}

impl ServeArgs {
    /// The settings: the defaults, then the TOML file, then these flags and variables.
    pub fn config(&self) -> Result<Config> {
        self.config_noting().map(|(c, _)| c)
    }

    /// The settings, with what the alias pass noticed in the file (deprecated names).
    pub fn config_noting(&self) -> Result<(Config, Vec<Note>)> {
        let (mut c, notes) = match &self.config {
            Some(p) => Config::load_noting(p).map_err(anyhow::Error::msg)?,
            None => (Config::default(), Vec::new()),
        };
        if let Some(v) = self.listen {
            c.listen = v;
        }
        if let Some(v) = &self.public_url {
            c.public_url = Some(v.clone());
        }
        if let Some(v) = self.console_trusted_proxy {
            c.console_trusted_proxy = v;
        }
        if let Some(v) = &self.console_oidc_issuer {
            c.console_oidc_issuer = Some(v.clone());
        }
        if let Some(v) = &self.console_oidc_client_id {
            c.console_oidc_client_id = Some(v.clone());
        }
        if let Some(v) = &self.console_oidc_client_secret {
            c.console_oidc_client_secret = Some(v.clone());
        }
        if let Some(v) = &self.console_oidc_roles_claim {
            c.console_oidc_roles_claim = v.clone();
        }
        if let Some(v) = &self.database {
            c.database = v.clone();
        }
        if let Some(v) = self.database_pool_size {
            c.database_pool_size = v;
        }
        if let Some(v) = self.database_timeout {
            c.database_timeout_secs = secs(v, "database_timeout")?;
        }
        if let Some(v) = self.database_statement_timeout {
            c.database_statement_timeout_secs = secs(v, "database_statement_timeout")?;
        }
        if let Some(v) = &self.admin_token {
            c.admin_token = Some(v.clone());
        }
        if let Some(v) = self.serve_v1 {
            c.serve_v1 = v;
        }
        if let Some(v) = self.serve_grpc {
            c.serve_grpc = v;
        }
        if let Some(v) = self.streaming {
            c.streaming_enabled = v;
        }
        if let Some(v) = self.json_rpc_error_status {
            c.json_rpc_error_status = v;
        }
        if let Some(v) = self.stream_refusal_status {
            c.stream_refusal_status = v;
        }
        if let Some(v) = self.peer_grpc {
            c.peer_grpc = v;
        }
        if let Some(v) = self.card_bindings {
            c.card_bindings = v;
        }
        if let Some(v) = &self.error_domain {
            c.error_domain = v.clone();
        }
        if let Some(v) = self.dvara_headers {
            c.dvara_headers = v;
        }
        if let Some(v) = self.dev {
            c.dev_mode = v;
        }
        if let Some(v) = self.peer_timeout {
            c.peer_timeout_secs = secs(v, "peer_timeout")?;
        }
        if let Some(v) = self.shutdown_grace {
            c.shutdown_grace_secs = secs(v, "shutdown_grace")?;
        }
        if let Some(v) = self.header_read_timeout {
            c.header_read_timeout_secs = secs(v, "header_read_timeout")?;
        }
        if let Some(v) = self.body_read_timeout {
            c.body_read_timeout_secs = secs(v, "body_read_timeout")?;
        }
        if let Some(v) = self.idle_timeout {
            c.idle_timeout_secs = secs(v, "idle_timeout")?;
        }
        if let Some(v) = self.max_connections {
            c.max_connections = v;
        }
        if let Some(v) = self.workers {
            c.workers = v;
        }
        if let Some(v) = self.max_message_chars {
            c.limits.max_message_chars = v;
        }
        if let Some(v) = self.max_response_bytes {
            c.limits.max_response_bytes = v;
        }
        if let Some(v) = self.max_card_bytes {
            c.limits.max_card_bytes = v;
        }
        if let Some(v) = self.max_stream_bytes {
            c.limits.max_stream_bytes = v;
        }
        if let Some(v) = self.max_push_bytes {
            c.limits.max_push_bytes = v;
        }
        if let Some(v) = self.max_scanned_bytes {
            c.limits.max_scanned_bytes = v;
        }
        if let Some(v) = &self.push_callback_base_url {
            c.push_callback_base_url = Some(v.clone());
        }
        if let Some(v) = self.push_delete_grace {
            c.push_delete_grace_ms = u64::try_from(v.get().as_millis())?;
        }
        if let Some(v) = &self.push_direct_workspaces {
            c.push_direct_workspaces = v.clone();
        }
        if let Some(v) = self.ard {
            c.ard_enabled = v;
        }
        if let Some(v) = self.policy_default {
            c.policy_default = v;
        }
        if let Some(v) = self.max_delegation_depth {
            c.max_delegation_depth = v;
        }
        if let Some(v) = &self.delegation_key {
            c.delegation_key = Some(v.clone());
        }
        if let Some(v) = self.approval_ttl {
            c.approval_ttl_secs = secs(v, "approval_ttl")?;
        }
        if let Some(v) = self.approval_wait {
            c.approval_wait_secs = secs(v, "approval_wait")?;
        }
        if let Some(v) = self.idempotency_window {
            c.idempotency_window_secs = secs(v, "idempotency_window")?;
        }
        if let Some(v) = self.require_signed_cards {
            c.require_signed_cards = v;
        }
        if let Some(v) = &self.card_key_secret {
            c.card_key_secret = Some(v.clone());
        }
        if let Some(v) = &self.card_key_file {
            c.card_key_file = Some(v.clone());
        }
        if let Some(v) = self.signing_key_grace {
            c.signing_key_grace_secs = secs(v, "signing_key_grace")?;
        }
        if let Some(v) = self.audit_retention {
            c.audit_retention = v;
        }
        if let Some(v) = self.audit_max_bytes {
            c.audit_max_bytes = v;
        }
        if let Some(v) = self.audit_retention_check {
            c.audit_retention_check_secs = secs(v, "audit_retention_check")?;
        }
        if let Some(v) = self.task_retention {
            c.task_retention = v;
        }
        for (set, v) in [
            (&mut c.otlp_endpoint, &self.otlp_endpoint),
            (&mut c.otlp_protocol, &self.otlp_protocol),
            (&mut c.otlp_headers, &self.otlp_headers),
            (&mut c.service_name, &self.service_name),
        ] {
            if v.is_some() {
                set.clone_from(v);
            }
        }
        if let Some(v) = self.metrics_label_cap {
            c.metrics_label_cap = v;
        }
        Ok((c, notes))
    }
}

/// The whole seconds of a flag's duration (`--peer-timeout 1500ms` is refused).
fn secs(v: Dur, flag: &str) -> Result<u64> {
    a2a_agent::settings::whole_secs(v)
        .map_err(|e| anyhow::anyhow!("--{}: {e}", flag.replace('_', "-")))
}
