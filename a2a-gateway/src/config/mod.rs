//! Gateway configuration: defaults, overlaid by a TOML file, then by `A2A_GATEWAY_*`
//! environment variables and command-line flags (see the binary's `serve --help`).

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

mod compat;
mod names;
mod units;

pub use a2a_agent::settings::Dur;
pub use compat::{CardBindings, DEFAULT_ERROR_DOMAIN, DVARA_ERROR_DOMAIN, PeerGrpc};
pub use names::{ALIASES, SWITCHES};
pub use units::{Age, ByteSize};

/// Largest request body the gateway reads.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// 50,000 characters of outbound message text.
pub const DEFAULT_MAX_MESSAGE_CHARS: usize = 50_000;
/// 16 MiB per peer answer or card.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;
/// 64 MiB per stream.
pub const DEFAULT_MAX_STREAM_BYTES: u64 = 64 * 1024 * 1024;
/// 1 MiB per incoming push body.
pub const DEFAULT_MAX_PUSH_BYTES: u64 = 1024 * 1024;
/// 4 MiB of text a PII scan reads per request.
pub const DEFAULT_MAX_SCANNED_BYTES: usize = 4 * 1024 * 1024;

/// HTTP status policy for refusals on JSON-RPC calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorStatusMode {
    /// HTTP 200 with the JSON-RPC error (what the official SDKs read), except 401 for keys.
    #[default]
    Ok,
    /// The refusal's own status (403 policy/scope, 404 target, 413 size, 502 peer ...).
    Refusal,
}

/// What a hop gets when no policy rule decides it (`policy_default`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyDefault {
    /// Allowed (existing deployments keep working).
    #[default]
    Allow,
    /// Refused with `a2a_policy_denied` (rule `default`): every workspace needs a policy that
    /// allows its hops.
    Deny,
}

/// Request and response limits.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Characters of text across an outbound message (413 `a2a_message_too_large`).
    pub max_message_chars: usize,
    /// Bytes of a whole peer answer (502 `a2a_response_too_large`).
    pub max_response_bytes: u64,
    /// Bytes of a peer Agent Card (`a2a_card_unavailable` when no cached card).
    pub max_card_bytes: u64,
    /// Bytes of one stream (the stream ends with an error event).
    pub max_stream_bytes: u64,
    /// Bytes of an incoming push-notification body (413 `a2a_push_too_large`).
    pub max_push_bytes: u64,
    /// Bytes of text a PII scan reads in one request (text parts, file names, data parts,
    /// metadata, inline textual files decoded), in a workspace with PII rules (413
    /// `a2a_message_too_large`).
    pub max_scanned_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_chars: DEFAULT_MAX_MESSAGE_CHARS,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_card_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_stream_bytes: DEFAULT_MAX_STREAM_BYTES,
            max_push_bytes: DEFAULT_MAX_PUSH_BYTES,
            max_scanned_bytes: DEFAULT_MAX_SCANNED_BYTES,
        }
    }
}

/// Full gateway configuration (the TOML file's shape).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Listen address.
    pub listen: SocketAddr,
    /// Log filter (`info`, `warn,a2a_gateway=debug`, ...); `--log-level` and
    /// `A2A_GATEWAY_LOG_LEVEL` win over it, it wins over `RUST_LOG`. Unset: `warn`.
    pub log_level: Option<String>,
    /// Public base URL written on governed cards (default: `http://<listen>`).
    pub public_url: Option<String>,
    /// Honour a reverse proxy's `X-Forwarded-Host` and `X-Forwarded-Proto` in the console's
    /// Origin check and cookie choice. Off: only `public_url` (when set) or `Host` count.
    pub console_trusted_proxy: bool,
    /// The console's OpenID Connect provider (its issuer URL, e.g.
    /// `https://login.example.com/realms/ops`): operators log in there (authorization code
    /// with PKCE) and get their roles from a claim; the admin token's login stays. Needs
    /// `console_oidc_client_id` and `console_oidc_client_secret` (docs/console.md).
    pub console_oidc_issuer: Option<String>,
    /// The console's client id at the OpenID Connect provider.
    pub console_oidc_client_id: Option<String>,
    /// The console's client secret at the OpenID Connect provider (better in the environment:
    /// `A2A_GATEWAY_CONSOLE_OIDC_CLIENT_SECRET`).
    pub console_oidc_client_secret: Option<String>,
    /// The ID token claim holding the operator's console roles (`viewer`, `approver`,
    /// `approver:WORKSPACE`, `admin`): a list or a space-separated string; a dotted name
    /// reads a nested claim (`realm_access.roles`).
    pub console_oidc_roles_claim: String,
    /// The database: a SQLite file's path (embedded, one process per file), or a PostgreSQL
    /// URL (`postgres://user:pass@host:port/db`, or `postgresql://…`): every store of the
    /// gateway on that database, shared by every replica started with the same URL
    /// (docs/replicas.md).
    pub database: PathBuf,
    /// PostgreSQL only: connections of the replica's pool at most (the notification listeners
    /// take one connection each beside it).
    pub database_pool_size: usize,
    /// PostgreSQL only: longest wait to open a connection or to get one from the pool; a
    /// request that cannot get one in time is answered 503 `a2a_store_unavailable`.
    /// TOML key `database_timeout`, a duration (`"3s"`) held here in whole seconds.
    #[serde(rename = "database_timeout", with = "a2a_agent::settings::secs")]
    pub database_timeout_secs: u64,
    /// PostgreSQL only: the server cancels a statement running longer (0: no limit).
    /// TOML key `database_statement_timeout`, a duration (`"30s"`) held here in whole seconds.
    #[serde(
        rename = "database_statement_timeout",
        with = "a2a_agent::settings::secs"
    )]
    pub database_statement_timeout_secs: u64,
    /// Bearer token of the admin API (and the console login); both are off when unset.
    pub admin_token: Option<String>,
    /// Serve A2A 1.0 (false holds the gateway at 0.3: `a2a.protocol.serve-v1`).
    pub serve_v1: bool,
    /// Streaming on (`a2a.streaming.enabled`).
    pub streaming_enabled: bool,
    /// Serve the A2A 1.0 gRPC binding to callers on the same port (`content-type:
    /// application/grpc*`; the request's `tenant` names the agent); needs `serve_v1`.
    pub serve_grpc: bool,
    /// HTTP status of JSON-RPC refusals (`a2a.protocol.json-rpc-error-status`).
    pub json_rpc_error_status: ErrorStatusMode,
    /// Status of a refused stream in `refusal` mode: `refusal` (its own), or `ok` (200, DVARA).
    pub stream_refusal_status: ErrorStatusMode,
    /// gRPC peers: `call` them, or `refuse` them as the DVARA API does.
    pub peer_grpc: PeerGrpc,
    /// Bindings the governed card lists: `all`, or `jsonrpc` as the DVARA API's card.
    pub card_bindings: CardBindings,
    /// `ErrorInfo.domain` of the gateway's own refusals (DVARA: `dvarahq.com`).
    pub error_domain: String,
    /// Answer headers also under DVARA's `x-dvara-*` names (requests take them always).
    pub dvara_headers: bool,
    /// Development mode: plain http peers and loopback peers allowed.
    pub dev_mode: bool,
    /// Seconds to wait for a peer answer (and between stream events before a stall error).
    /// TOML key `peer_timeout`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "peer_timeout", with = "a2a_agent::settings::secs")]
    pub peer_timeout_secs: u64,
    /// Limits.
    pub limits: Limits,
    /// On SIGTERM/SIGINT: stop accepting and let calls finish for this long; then every open
    /// stream ends with an `a2a_shutting_down` error event and every waiting call is answered
    /// with it, and the process exits 0.
    /// TOML key `shutdown_grace`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "shutdown_grace", with = "a2a_agent::settings::secs")]
    pub shutdown_grace_secs: u64,
    /// Seconds for a request's headers to arrive (slowloris; a connection's first request:
    /// from the accept); the connection is closed beyond.
    /// TOML key `header_read_timeout`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "header_read_timeout", with = "a2a_agent::settings::secs")]
    pub header_read_timeout_secs: u64,
    /// Seconds for a request's whole body to arrive; 408 beyond.
    /// TOML key `body_read_timeout`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "body_read_timeout", with = "a2a_agent::settings::secs")]
    pub body_read_timeout_secs: u64,
    /// Seconds a keep-alive connection with no request in flight stays open.
    /// TOML key `idle_timeout`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "idle_timeout", with = "a2a_agent::settings::secs")]
    pub idle_timeout_secs: u64,
    /// Open connections at most (0 = from the fd limit); beyond it new connections get 503 and
    /// are closed. Always kept below `RLIMIT_NOFILE` minus a margin.
    pub max_connections: usize,
    /// Base URL of the gateway's push callbacks (`a2a.push.callback-base-url`): peers are given
    /// `{base}/a2a/{agentId}/push:notify/{callback}` instead of the caller's webhook. Unset:
    /// push configs are refused (503 `a2a_push_not_available`) except for direct workspaces.
    pub push_callback_base_url: Option<String>,
    /// Deprecated: set `a2a.push.delivery` per workspace (admin API) instead. Workspaces whose
    /// push configs are forwarded to the peer as given (direct delivery: the peer posts to the
    /// caller's webhook itself) when their own setting is unset.
    pub push_direct_workspaces: Vec<String>,
    /// Serve `GET /a2a/.well-known/ard.json`, the agents a caller's key may use as an ARD
    /// manifest (experimental; off by default).
    pub ard_enabled: bool,
    /// Milliseconds a sealed callback still accepts notifications after its push config was
    /// deleted: the peer may have sent them before it saw the delete [default: 10000].
    /// TOML key `push_delete_grace`, a duration (`"30s"`) held here in milliseconds.
    #[serde(rename = "push_delete_grace", with = "a2a_agent::settings::millis")]
    pub push_delete_grace_ms: u64,
    /// Decision for a hop no policy rule decides (`allow`, or `deny` for default-deny).
    pub policy_default: PolicyDefault,
    /// Longest delegation chain (agents, the target included); longer hops are refused with
    /// `a2a_delegation_depth_exceeded`.
    pub max_delegation_depth: usize,
    /// Secret of the delegation chain's HMAC. Unset: a random key per process (chains do not
    /// survive a restart and are not shared between gateway instances: set it for either).
    pub delegation_key: Option<String>,
    /// Seconds a hop held for approval waits for a decision before `a2a_approval_expired`.
    /// TOML key `approval_ttl`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "approval_ttl", with = "a2a_agent::settings::secs")]
    pub approval_ttl_secs: u64,
    /// Seconds a blocking send held for approval waits for the decision before it is answered
    /// with the gateway task (0: at once).
    /// TOML key `approval_wait`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "approval_wait", with = "a2a_agent::settings::secs")]
    pub approval_wait_secs: u64,
    /// Seconds a send's `messageId` is remembered per workspace and agent: a repeat within it
    /// is answered from the first send and not forwarded again (0: off).
    /// TOML key `idempotency_window`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "idempotency_window", with = "a2a_agent::settings::secs")]
    pub idempotency_window_secs: u64,
    /// Require verified peer card signatures for every workspace (`a2a.cards.require-signed`;
    /// a workspace can also require them alone: `PUT /admin/workspaces/{ws}/card-trust`).
    pub require_signed_cards: bool,
    /// Secret (at least 32 bytes) the gateway's card signing keys are encrypted with at rest
    /// (`A2A_GATEWAY_CARD_KEY_SECRET`). Unset, and no `card_key_file`: no signing keys.
    pub card_key_secret: Option<String>,
    /// File holding that secret (`A2A_GATEWAY_CARD_KEY_FILE`), when `card_key_secret` is unset.
    pub card_key_file: Option<PathBuf>,
    /// Seconds a retired card signing key stays in `/a2a/.well-known/jwks.json` (at least
    /// [`MIN_SIGNING_KEY_GRACE_SECS`], the longest a signed card or the key set is cached).
    /// TOML key `signing_key_grace`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "signing_key_grace", with = "a2a_agent::settings::secs")]
    pub signing_key_grace_secs: u64,
    /// PEM file of extra root certificates trusted for peers' TLS (a private CA), beside the
    /// platform's roots, on every binding (cards, JSON-RPC, HTTP+JSON, `https` gRPC).
    pub peer_ca_file: Option<PathBuf>,
    /// Audit rows older than this are deleted by a background task, a small batch per
    /// transaction (`30d`, `12h`, `90m`, `45s`; `0`: kept whatever their age). Export them
    /// first to keep them (`admin audit-export`, docs/gateway.md "Audit retention").
    pub audit_retention: Age,
    /// While the database's pages in use pass this many bytes the oldest audit rows are deleted
    /// (`1GiB`, `500MB`, or bytes; `0`: no bound). Freed pages are reused by later rows, so the
    /// file stays about this size.
    pub audit_max_bytes: ByteSize,
    /// Seconds between two checks of the audit retention (each deletes what the two rules no
    /// longer keep, in batches of 500 rows).
    /// TOML key `audit_retention_check`, a duration (`"30s"`) held here in whole seconds.
    #[serde(rename = "audit_retention_check", with = "a2a_agent::settings::secs")]
    pub audit_retention_check_secs: u64,
    /// The records of a task the gateway has heard nothing of for this long (no answer, event
    /// or notification naming it) are deleted by the same background task: its ownership
    /// binding, status record and push callbacks; it then answers TaskNotFound like a task
    /// the gateway never saw (`30d`, `12h`, `90m`, `45s`; `0`: kept forever).
    pub task_retention: Age,
    /// Threads of the async runtime that serves requests (0: one per CPU the process may use).
    /// On a machine shared with the agents behind the gateway or a load generator, fewer
    /// threads spend less CPU per hop (docs/benchmarks.md, "fifth round").
    pub workers: usize,
    /// OTLP trace export: the collector's base URL (`http://host:4318`; `/v1/traces` is added
    /// for http/protobuf). Unset here and in `OTEL_EXPORTER_OTLP_ENDPOINT` /
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`: no export (docs/operations.md, "Traces").
    pub otlp_endpoint: Option<String>,
    /// OTLP transport: `http/protobuf` or `grpc` (unset: `OTEL_EXPORTER_OTLP_PROTOCOL`, else
    /// http/protobuf).
    pub otlp_protocol: Option<String>,
    /// Headers of each OTLP export, `k=v,k2=v2` (unset: `OTEL_EXPORTER_OTLP_HEADERS`).
    pub otlp_headers: Option<String>,
    /// The exported spans' `service.name` (unset: `OTEL_SERVICE_NAME`, else `a2a-gateway`).
    pub service_name: Option<String>,
    /// Workspaces (and, apart, agents) given a label value of their own in `/metrics`, the
    /// first ones seen; later ones are counted under `other` (docs/operations.md, "Metrics").
    pub metrics_label_cap: usize,
}

impl Config {
    /// The PostgreSQL URL `database` names (`postgres://…` or `postgresql://…`), or `None`
    /// for a SQLite file.
    pub fn postgres_url(&self) -> Option<&str> {
        postgres_url(&self.database)
    }

    /// The console's OpenID Connect settings are all set or all unset, and the issuer is an
    /// `https` URL (plain `http` only on loopback, for tests and local providers).
    pub fn check_console_oidc(&self) -> Result<(), String> {
        let set = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
        let n = [
            &self.console_oidc_issuer,
            &self.console_oidc_client_id,
            &self.console_oidc_client_secret,
        ]
        .into_iter()
        .filter(|v| set(v))
        .count();
        if n == 0 {
            return Ok(());
        }
        if n != 3 {
            return Err("console_oidc_issuer, console_oidc_client_id and \
                 console_oidc_client_secret are set together (or none of them)"
                .into());
        }
        let issuer = self.console_oidc_issuer.as_deref().unwrap_or_default();
        let url = url::Url::parse(issuer)
            .map_err(|e| format!("console_oidc_issuer {issuer:?} is not a URL: {e}"))?;
        let loopback = match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(d)) => d == "localhost",
            None => false,
        };
        if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
            return Err(format!(
                "console_oidc_issuer {issuer:?} must be https (http only on loopback)"
            ));
        }
        Ok(())
    }

    /// The PostgreSQL pool's settings (`database_pool_size`, `database_timeout`,
    /// `database_statement_timeout`).
    pub fn pool_options(&self) -> a2a_pg::PoolOptions {
        let wait = std::time::Duration::from_secs(self.database_timeout_secs.max(1));
        a2a_pg::PoolOptions {
            max_size: self.database_pool_size.max(1),
            connect_timeout: wait,
            wait_timeout: wait,
            statement_timeout: (self.database_statement_timeout_secs > 0)
                .then(|| std::time::Duration::from_secs(self.database_statement_timeout_secs)),
            application_name: "a2a-gateway".into(),
        }
    }

    /// The trace settings of this configuration (`a2a_agent::otel`).
    pub fn otlp(&self) -> a2a_agent::otel::Settings<'_> {
        a2a_agent::otel::Settings {
            endpoint: self.otlp_endpoint.as_deref(),
            protocol: self.otlp_protocol.as_deref(),
            headers: self.otlp_headers.as_deref(),
            service_name: self.service_name.as_deref(),
        }
    }
}

/// The PostgreSQL URL a `database` setting names (`postgres://…` or `postgresql://…`), or
/// `None` for a SQLite file's path.
pub fn postgres_url(database: &std::path::Path) -> Option<&str> {
    let text = database.to_str()?;
    is_postgres_url(text).then_some(text)
}

/// Whether `text` is a PostgreSQL URL (`postgres://…` or `postgresql://…`): the one rule the
/// `database` setting and [`crate::store::Store::open`]'s refusal share.
pub fn is_postgres_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// Default of `metrics_label_cap`.
pub const DEFAULT_METRICS_LABEL_CAP: usize = 100;

/// Shortest grace period of a retired signing key: the governed card's `max-age` (60 s) plus
/// the key set's (300 s).
pub const MIN_SIGNING_KEY_GRACE_SECS: u64 = 360;

/// Default idempotency window: 10 minutes.
pub const DEFAULT_IDEMPOTENCY_WINDOW_SECS: u64 = 600;

/// Default audit retention: 30 days.
pub const DEFAULT_AUDIT_RETENTION: std::time::Duration =
    std::time::Duration::from_secs(30 * 24 * 3600);

/// Default task retention: 30 days without news of a task.
pub const DEFAULT_TASK_RETENTION: std::time::Duration =
    std::time::Duration::from_secs(30 * 24 * 3600);

/// Default bound of the database's size through audit retention: 1 GiB.
pub const DEFAULT_AUDIT_MAX_BYTES: u64 = 1 << 30;

/// Audit rows deleted per transaction by the retention: a few milliseconds of writing, so the
/// audit writer's next batch (and any other write) waits at most that long.
pub const AUDIT_RETENTION_BATCH_ROWS: usize = 500;

/// What the audit retention keeps (from `audit_retention` and `audit_max_bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditRetention {
    /// Rows older than this are deleted (`None`: kept whatever their age).
    pub max_age: Option<std::time::Duration>,
    /// While the database's pages in use take more bytes than this, the oldest rows are
    /// deleted (`None`: no size bound).
    pub max_bytes: Option<u64>,
    /// Rows deleted at most per transaction.
    pub batch: usize,
}

/// Default longest delegation chain.
pub const DEFAULT_MAX_DELEGATION_DEPTH: usize = 8;

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            log_level: None,
            public_url: None,
            console_trusted_proxy: false,
            console_oidc_issuer: None,
            console_oidc_client_id: None,
            console_oidc_client_secret: None,
            console_oidc_roles_claim: "roles".into(),
            database: PathBuf::from("a2a-gateway.db"),
            database_pool_size: 16,
            database_timeout_secs: 3,
            database_statement_timeout_secs: 30,
            admin_token: None,
            serve_v1: true,
            streaming_enabled: true,
            serve_grpc: false,
            json_rpc_error_status: ErrorStatusMode::Ok,
            stream_refusal_status: ErrorStatusMode::Refusal,
            peer_grpc: PeerGrpc::Call,
            card_bindings: CardBindings::All,
            error_domain: DEFAULT_ERROR_DOMAIN.to_owned(),
            dvara_headers: false,
            dev_mode: false,
            peer_timeout_secs: 30,
            limits: Limits::default(),
            shutdown_grace_secs: 5,
            header_read_timeout_secs: 10,
            body_read_timeout_secs: 30,
            idle_timeout_secs: 60,
            max_connections: 10_000,
            push_callback_base_url: None,
            push_direct_workspaces: Vec::new(),
            ard_enabled: false,
            push_delete_grace_ms: 10_000,
            policy_default: PolicyDefault::Allow,
            max_delegation_depth: DEFAULT_MAX_DELEGATION_DEPTH,
            delegation_key: None,
            approval_ttl_secs: 3600,
            approval_wait_secs: 10,
            idempotency_window_secs: DEFAULT_IDEMPOTENCY_WINDOW_SECS,
            require_signed_cards: false,
            card_key_secret: None,
            card_key_file: None,
            signing_key_grace_secs: 30 * 24 * 3600,
            peer_ca_file: None,
            audit_retention: Age(DEFAULT_AUDIT_RETENTION),
            audit_max_bytes: ByteSize(DEFAULT_AUDIT_MAX_BYTES),
            audit_retention_check_secs: 10,
            task_retention: Age(DEFAULT_TASK_RETENTION),
            workers: 0,
            otlp_endpoint: None,
            otlp_protocol: None,
            otlp_headers: None,
            service_name: None,
            metrics_label_cap: DEFAULT_METRICS_LABEL_CAP,
        }
    }
}

impl Config {
    /// Reads a TOML file over the defaults: our keys, the deprecated ones and the DVARA API's
    /// ([`ALIASES`]); what the alias pass notes is dropped ([`Config::read_toml`] returns it).
    pub fn from_toml_str(s: &str) -> Result<Config, String> {
        Self::read_toml(s).map(|(c, _)| c)
    }

    /// Reads a TOML file over the defaults, with what the alias pass noticed (deprecated names).
    pub fn read_toml(s: &str) -> Result<(Config, Vec<a2a_agent::settings::Note>), String> {
        let bad = |e: String| format!("invalid gateway config: {e}");
        let table: toml::Table = toml::from_str(s).map_err(|e| bad(e.to_string()))?;
        let (table, notes) =
            a2a_agent::settings::rename_table(table, ALIASES, &["a2a"]).map_err(bad)?;
        let config = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| bad(e.to_string()))?;
        Ok((config, notes))
    }

    /// Reads a TOML file over the defaults.
    pub fn load(path: &std::path::Path) -> Result<Config, String> {
        Self::load_noting(path).map(|(c, _)| c)
    }

    /// Reads a TOML file over the defaults, with what the alias pass noticed.
    pub fn load_noting(
        path: &std::path::Path,
    ) -> Result<(Config, Vec<a2a_agent::settings::Note>), String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::read_toml(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The public base URL (no trailing slash).
    pub fn public_base(&self) -> String {
        self.public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.listen))
            .trim_end_matches('/')
            .to_owned()
    }

    /// The connection-level limits of the shared edge ([`a2a_agent::listen`]).
    pub fn listen(&self) -> a2a_agent::listen::ListenConfig {
        use std::time::Duration;
        a2a_agent::listen::ListenConfig {
            header_read_timeout: Duration::from_secs(self.header_read_timeout_secs.max(1)),
            body_read_timeout: Duration::from_secs(self.body_read_timeout_secs.max(1)),
            idle_timeout: Duration::from_secs(self.idle_timeout_secs.max(1)),
            max_connections: self.max_connections,
            max_buffered_body: crate::config::MAX_REQUEST_BYTES,
        }
    }

    /// What the audit retention keeps (`None` when both rules are off).
    pub fn audit_retention(&self) -> Option<AuditRetention> {
        let max_age = Some(self.audit_retention.0).filter(|d| !d.is_zero());
        let max_bytes = Some(self.audit_max_bytes.0).filter(|b| *b > 0);
        (max_age.is_some() || max_bytes.is_some()).then_some(AuditRetention {
            max_age,
            max_bytes,
            batch: AUDIT_RETENTION_BATCH_ROWS,
        })
    }

    /// How long task records are kept without news of their task (`None`: forever).
    pub fn task_retention(&self) -> Option<std::time::Duration> {
        Some(self.task_retention.0).filter(|d| !d.is_zero())
    }

    /// The versions this gateway serves.
    pub fn served_versions(&self) -> &'static [&'static str] {
        if self.serve_v1 {
            &["0.3", "1.0"]
        } else {
            &["0.3"]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_overrides_defaults() {
        let c = Config::from_toml_str(
            "serve_v1 = false\nserve_grpc = true\ndev_mode = true\nworkers = 2\npeer_timeout = \"1m\"\n[limits]\nmax_message_chars = 10\n",
        )
        .unwrap();
        assert_eq!((c.workers, Config::default().workers), (2, 0));
        assert!(!c.serve_v1);
        assert!(c.serve_grpc && !Config::default().serve_grpc);
        assert!(c.dev_mode);
        assert_eq!(c.limits.max_message_chars, 10);
        assert_eq!(c.peer_timeout_secs, 60);
        assert!(Config::from_toml_str("peer_timeout = \"1500ms\"").is_err());
        assert_eq!(c.limits.max_stream_bytes, DEFAULT_MAX_STREAM_BYTES);
        assert!(Config::from_toml_str("bogus = 1").is_err());
    }

    #[test]
    fn retention_settings_read_units_and_numbers() {
        let c = Config::from_toml_str("audit_retention = \"12h\"\naudit_max_bytes = \"500MB\"\n")
            .unwrap();
        assert_eq!(c.audit_retention.0.as_secs(), 12 * 3600);
        assert_eq!(c.audit_max_bytes.0, 500_000_000);
        let c = Config::from_toml_str("audit_retention = 90\naudit_max_bytes = 4096\n").unwrap();
        assert_eq!(
            (c.audit_retention.0.as_secs(), c.audit_max_bytes.0),
            (90, 4096)
        );
        let d = Config::default();
        assert_eq!(
            (d.audit_retention.to_string(), d.audit_max_bytes.to_string()),
            ("30d".into(), "1GiB".into())
        );
        let rule = d.audit_retention().unwrap();
        assert_eq!(rule.max_bytes, Some(1 << 30));
        assert!(Config::from_toml_str("audit_retention = \"30 days\"").is_err());
        assert!(Config::from_toml_str("audit_max_bytes = \"1QB\"").is_err());
        assert_eq!("0".parse::<Age>().unwrap().0, std::time::Duration::ZERO);
        assert_eq!("2GiB".parse::<ByteSize>().unwrap().0, 2 << 30);
        let off = Config::from_toml_str("audit_retention = \"0\"\naudit_max_bytes = 0\n").unwrap();
        assert!(off.audit_retention().is_none());
    }
}
