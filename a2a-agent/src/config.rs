//! Runtime configuration (also the TOML schema of the binary's `--config` file).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Every option of the runtime, with the seed's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case", deny_unknown_fields)]
pub struct AgentConfig {
    /// Path prefix of every endpoint (JSON-RPC is `POST {base_path}/`). Default: "" (root).
    pub base_path: String,
    /// Require authentication on operations (the card stays public). Default: true. With no
    /// security scheme in the card every operation is refused (fail closed).
    pub validate_auth: bool,
    /// The API key accepted by an `apiKey` scheme.
    pub api_key: Option<String>,
    /// Header carrying the API key when the scheme names none. Default: `Authorization`.
    pub api_key_header: String,
    /// The static bearer token accepted by an HTTP bearer scheme.
    pub bearer_token: Option<String>,
    /// Endpoint default for sends: return the SUBMITTED task at once. Default: false.
    pub return_immediately: bool,
    /// A task running longer fails (ms). Default: 300000.
    pub async_timeout_ms: u64,
    /// Maximum concurrently running tasks, 0 = unlimited. Default: 0.
    pub max_concurrent_tasks: usize,
    /// Queue for async sends when every slot is busy, 0 = no queue. Default: 0.
    pub task_queue_size: usize,
    /// Maximum request body (bytes). Default: 6291456 (6 MiB).
    pub max_payload_size: usize,
    /// SSE heartbeat comment interval (ms). Default: 15000.
    pub sse_heartbeat_interval_ms: u64,
    /// Events queued per SSE connection; a client further behind gets the task snapshot and its
    /// stream ends. Default: 1000.
    pub sse_queue_capacity: usize,
    /// Bytes queued per streaming connection (JSON size of the events), 0 = unlimited; a client
    /// that falls further behind gets the task snapshot and its stream ends. Default: 4194304.
    pub sse_queue_max_bytes: usize,
    /// CORS allowed origins; empty = CORS off, `*` = any. Default: empty.
    pub cors_allowed_origins: Vec<String>,
    /// `Cache-Control: max-age` of the agent card (s). Default: 300.
    pub card_max_age_s: u64,
    /// SQLite database for tasks; unset = the bounded in-memory store.
    pub sqlite_path: Option<PathBuf>,
    /// In-memory store capacity (tasks). Default: 10000.
    pub memory_store_cap: usize,
    /// How long terminal tasks stay in the in-memory store (s). Default: 3600.
    pub terminal_task_ttl_s: u64,
    /// In-memory store bound in bytes (JSON size of every task), 0 = unlimited. Oldest terminal
    /// tasks are evicted first; a new task is refused (ResourceExhausted) while unfinished tasks
    /// fill it. Default: 268435456 (256 MiB).
    pub memory_store_max_bytes: usize,
    /// Largest task in bytes (JSON size), 0 = unlimited; a message that would exceed it is
    /// refused with InvalidParams before it is stored (any store). Default: 16777216 (16 MiB).
    pub max_task_bytes: usize,
    /// Most messages kept in a task's history (oldest dropped first), 0 = unlimited.
    /// Default: 1000.
    pub max_history_length: usize,
    /// On shutdown, how long running tasks may finish before they fail (ms). Default: 10000.
    pub shutdown_grace_ms: u64,
    /// Time allowed for a request's headers to arrive (ms); the connection is closed beyond.
    /// Default: 10000.
    pub header_read_timeout_ms: u64,
    /// Time allowed for a request's whole body to arrive (ms); 408 beyond. Default: 30000.
    pub body_read_timeout_ms: u64,
    /// A keep-alive connection with no request in flight is closed after this (ms). Default: 60000.
    pub idle_timeout_ms: u64,
    /// Open connections at most (0 = derived from the fd limit); beyond it new connections get
    /// 503 and are closed. Always kept below `RLIMIT_NOFILE` minus a margin. Default: 10000.
    pub max_connections: usize,
    /// Public base URL written into the card's interfaces; unset = the listening address.
    pub public_url: Option<String>,
    /// Push delivery retries after the first attempt (5xx and I/O errors only). Default: 3.
    pub push_retry_attempts: u32,
    /// Push retry base backoff (ms); retry n waits `backoff x 2^n`. Default: 1000.
    pub push_retry_backoff_ms: u64,
    /// Timeout of one push delivery attempt (ms). Default: 10000.
    pub push_timeout_ms: u64,
    /// Permit loopback webhook URLs, plain http allowed (development only). Default: false.
    pub allow_local_webhook_urls: bool,
    /// OAuth/OIDC: expected token issuer; its discovery document gives the JWKS.
    pub oidc_issuer: Option<String>,
    /// OAuth/OIDC: JWKS URL (instead of discovery).
    pub oidc_jwks_url: Option<String>,
    /// OAuth/OIDC: accepted audiences; empty = not checked.
    pub oidc_audience: Vec<String>,
    /// RFC 7662 introspection endpoint for opaque tokens.
    pub oidc_introspection_url: Option<String>,
    /// Client id for introspection (HTTP Basic).
    pub oidc_client_id: Option<String>,
    /// Client secret for introspection.
    pub oidc_client_secret: Option<String>,
    /// Minimum interval between JWKS fetches (ms). Default: 30000.
    pub oidc_min_refresh_ms: u64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            base_path: String::new(),
            validate_auth: true,
            api_key: None,
            api_key_header: "Authorization".into(),
            bearer_token: None,
            return_immediately: false,
            async_timeout_ms: 300_000,
            max_concurrent_tasks: 0,
            task_queue_size: 0,
            max_payload_size: 6_291_456,
            sse_heartbeat_interval_ms: 15_000,
            sse_queue_capacity: 1000,
            sse_queue_max_bytes: 4 * 1024 * 1024,
            cors_allowed_origins: Vec::new(),
            card_max_age_s: 300,
            sqlite_path: None,
            memory_store_cap: 10_000,
            terminal_task_ttl_s: 3600,
            memory_store_max_bytes: 256 * 1024 * 1024,
            max_task_bytes: 16 * 1024 * 1024,
            max_history_length: 1000,
            shutdown_grace_ms: 10_000,
            header_read_timeout_ms: 10_000,
            body_read_timeout_ms: 30_000,
            idle_timeout_ms: 60_000,
            max_connections: 10_000,
            public_url: None,
            push_retry_attempts: 3,
            push_retry_backoff_ms: 1000,
            push_timeout_ms: 10_000,
            allow_local_webhook_urls: false,
            oidc_issuer: None,
            oidc_jwks_url: None,
            oidc_audience: Vec::new(),
            oidc_introspection_url: None,
            oidc_client_id: None,
            oidc_client_secret: None,
            oidc_min_refresh_ms: 30_000,
        }
    }
}

impl AgentConfig {
    /// Parse a TOML document.
    pub fn from_toml(s: &str) -> Result<Self, toml::de::Error> {
        toml::from_str(s)
    }

    /// The normalized base path (`""` or `/x`).
    pub fn base(&self) -> String {
        let b = self.base_path.trim_end_matches('/');
        if b.is_empty() {
            String::new()
        } else if b.starts_with('/') {
            b.to_string()
        } else {
            format!("/{b}")
        }
    }

    /// The token validation settings, when any OAuth/OIDC option is set.
    pub fn oidc(&self) -> Option<crate::oidc::OidcConfig> {
        (self.oidc_issuer.is_some()
            || self.oidc_jwks_url.is_some()
            || self.oidc_introspection_url.is_some())
        .then(|| crate::oidc::OidcConfig {
            issuer: self.oidc_issuer.clone(),
            jwks_url: self.oidc_jwks_url.clone(),
            audience: self.oidc_audience.clone(),
            introspection_url: self.oidc_introspection_url.clone(),
            client_id: self.oidc_client_id.clone(),
            client_secret: self.oidc_client_secret.clone(),
            min_refresh_interval: Duration::from_millis(self.oidc_min_refresh_ms),
            ..Default::default()
        })
    }

    /// The connection-level limits of [`crate::listen`].
    pub fn listen(&self) -> crate::listen::ListenConfig {
        crate::listen::ListenConfig {
            header_read_timeout: Duration::from_millis(self.header_read_timeout_ms.max(1)),
            body_read_timeout: Duration::from_millis(self.body_read_timeout_ms.max(1)),
            idle_timeout: Duration::from_millis(self.idle_timeout_ms.max(1)),
            max_connections: self.max_connections,
            max_buffered_body: self.max_payload_size,
        }
    }

    /// The byte and history bounds of stored tasks.
    pub fn store_limits(&self) -> crate::bounds::StoreLimits {
        crate::bounds::StoreLimits {
            max_task_bytes: self.max_task_bytes,
            max_history_length: self.max_history_length,
        }
    }

    pub(crate) fn async_timeout(&self) -> Duration {
        Duration::from_millis(self.async_timeout_ms)
    }
}
