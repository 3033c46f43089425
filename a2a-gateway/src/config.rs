//! Gateway configuration: defaults, overlaid by a TOML file, then by `A2A_GATEWAY_*`
//! environment variables and command-line flags (see the binary's `serve --help`).

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
    /// Public base URL written on governed cards (default: `http://<listen>`).
    pub public_url: Option<String>,
    /// Honour a reverse proxy's `X-Forwarded-Host` and `X-Forwarded-Proto` in the console's
    /// Origin check and cookie choice. Off: only `public_url` (when set) or `Host` count.
    pub console_trusted_proxy: bool,
    /// SQLite file.
    pub database: PathBuf,
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
    /// Development mode: plain http peers and loopback peers allowed.
    pub dev_mode: bool,
    /// Seconds to wait for a peer answer (and between stream events before a stall error).
    pub peer_timeout_secs: u64,
    /// Limits.
    pub limits: Limits,
    /// On SIGTERM/SIGINT: stop accepting and let calls finish for this long; then every open
    /// stream ends with an `a2a_shutting_down` error event and every waiting call is answered
    /// with it, and the process exits 0.
    pub shutdown_grace_secs: u64,
    /// Seconds for a request's headers to arrive (slowloris; a connection's first request:
    /// from the accept); the connection is closed beyond.
    pub header_read_timeout_secs: u64,
    /// Seconds for a request's whole body to arrive; 408 beyond.
    pub body_read_timeout_secs: u64,
    /// Seconds a keep-alive connection with no request in flight stays open.
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
    pub approval_ttl_secs: u64,
    /// Seconds a blocking send held for approval waits for the decision before it is answered
    /// with the gateway task (0: at once).
    pub approval_wait_secs: u64,
    /// Seconds a send's `messageId` is remembered per workspace and agent: a repeat within it
    /// is answered from the first send and not forwarded again (0: off).
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
    pub signing_key_grace_secs: u64,
    /// PEM file of extra root certificates trusted for peers' TLS (a private CA), beside the
    /// platform's roots, on every binding (cards, JSON-RPC, HTTP+JSON, `https` gRPC).
    pub peer_ca_file: Option<PathBuf>,
    /// Threads of the async runtime that serves requests (0: one per CPU the process may use).
    /// On a machine shared with the agents behind the gateway or a load generator, fewer
    /// threads spend less CPU per hop (docs/benchmarks.md, "fifth round").
    pub workers: usize,
}

/// Shortest grace period of a retired signing key: the governed card's `max-age` (60 s) plus
/// the key set's (300 s).
pub const MIN_SIGNING_KEY_GRACE_SECS: u64 = 360;

/// Default idempotency window: 10 minutes.
pub const DEFAULT_IDEMPOTENCY_WINDOW_SECS: u64 = 600;

/// Default longest delegation chain.
pub const DEFAULT_MAX_DELEGATION_DEPTH: usize = 8;

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            public_url: None,
            console_trusted_proxy: false,
            database: PathBuf::from("a2a-gateway.db"),
            admin_token: None,
            serve_v1: true,
            streaming_enabled: true,
            serve_grpc: false,
            json_rpc_error_status: ErrorStatusMode::Ok,
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
            workers: 0,
        }
    }
}

impl Config {
    /// Reads a TOML file over the defaults.
    pub fn from_toml_str(s: &str) -> Result<Config, String> {
        toml::from_str(s).map_err(|e| format!("invalid gateway config: {e}"))
    }

    /// Reads a TOML file over the defaults.
    pub fn load(path: &std::path::Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::from_toml_str(&text)
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
            "serve_v1 = false\nserve_grpc = true\ndev_mode = true\nworkers = 2\n[limits]\nmax_message_chars = 10\n",
        )
        .unwrap();
        assert_eq!((c.workers, Config::default().workers), (2, 0));
        assert!(!c.serve_v1);
        assert!(c.serve_grpc && !Config::default().serve_grpc);
        assert!(c.dev_mode);
        assert_eq!(c.limits.max_message_chars, 10);
        assert_eq!(c.limits.max_stream_bytes, DEFAULT_MAX_STREAM_BYTES);
        assert!(Config::from_toml_str("bogus = 1").is_err());
    }
}
