//! The rows of the registry and the audit log, as the store hands them out.

use jsonwebtoken::jwk::JwkSet;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::keys::Scope;

/// A sealed push callback: the caller's webhook, which the peer never sees.
#[derive(Debug, Clone, PartialEq)]
pub struct PushCallback {
    /// Random id in the callback URL given to the peer.
    pub callback_id: String,
    /// Owning workspace.
    pub workspace_id: String,
    /// Target agent.
    pub agent_id: String,
    /// Task the config belongs to.
    pub task_id: String,
    /// The config id (as the peer answered it), when known.
    pub config_id: Option<String>,
    /// The caller's webhook URL.
    pub url: String,
    /// The caller's notification token.
    pub token: Option<String>,
    /// The caller's authentication scheme (`Bearer` ...).
    pub auth_scheme: Option<String>,
    /// The caller's authentication credentials.
    pub auth_credentials: Option<String>,
    /// Version the caller created the config in (`0.3`/`1.0`).
    pub caller_version: String,
    /// Version the peer speaks (`0.3`/`1.0`).
    pub peer_version: String,
    /// Token the peer must send in `X-A2A-Notification-Token`.
    pub notify_token: String,
}

/// A workspace: the unit that owns agents and keys.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    /// Stable identifier.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Per-workspace override of the peer answer/card limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// Per-workspace override of the per-stream limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stream_bytes: Option<u64>,
    /// Per-workspace override of the peer card limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_card_bytes: Option<u64>,
}

/// A registered peer agent inside a workspace.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// Workspace that owns the registration.
    #[serde(default)]
    pub workspace_id: String,
    /// The agent id callers use in `/a2a/{agentId}`.
    pub agent_id: String,
    /// The registered A2A endpoint of the peer (the base its card is read from).
    pub endpoint: String,
    /// Outbound credential sent to the peer as `Authorization: Bearer ...`, if any.
    #[serde(default, skip_serializing)]
    pub credential: Option<String>,
    /// Skill allow-list; `None` allows every skill of the peer's card.
    #[serde(default)]
    pub skills: Option<Vec<String>>,
    /// Trusted keys for the peer's card signatures and signed push notifications: a public
    /// JWK or JWK Set (JSON text; the admin API also takes the object itself), or a JWKS URL
    /// (see [`KeySource`]).
    #[serde(default, deserialize_with = "deserialize_key_source")]
    pub pinned_card_key: Option<String>,
}

/// Metadata of a workspace API key (never the secret).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KeyInfo {
    /// Public key id (also the prefix of the key).
    pub key_id: String,
    /// Owning workspace.
    pub workspace_id: String,
    /// Scopes; empty = unrestricted.
    pub scopes: Vec<Scope>,
    /// Free-text label.
    pub label: Option<String>,
    /// Creation time, Unix seconds.
    pub created_at: i64,
    /// Expiry, Unix seconds.
    pub expires_at: Option<i64>,
    /// Revocation time, Unix seconds.
    pub revoked_at: Option<i64>,
}

/// A key that authenticated successfully.
#[derive(Debug, Clone, PartialEq)]
pub struct Principal {
    /// Key id.
    pub key_id: String,
    /// Workspace the key belongs to.
    pub workspace_id: String,
    /// Scopes; empty = unrestricted.
    pub scopes: Vec<Scope>,
    /// The registry version the key was read at: the hop's later lookups pass it back
    /// ([`Store::agent_seen`] and friends) to read the registry as of the hop's start.
    pub registry_version: Option<i64>,
}

/// Why a presented key was not accepted (all answered 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRejection {
    /// No key, malformed key, unknown key id or wrong secret.
    Invalid,
    /// The key has expired.
    Expired,
    /// The key was revoked.
    Revoked,
}

/// One audit record: one hop (a caller request and, if made, the peer call).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// Sequence number (assigned on insert).
    #[serde(default)]
    pub seq: i64,
    /// RFC 3339 time.
    #[serde(default)]
    pub ts: String,
    /// Trace id (W3C, 32 hex).
    pub trace_id: String,
    /// Workspace (None when refused before authentication).
    pub workspace_id: Option<String>,
    /// Key id.
    pub key_id: Option<String>,
    /// Target agent id.
    pub target: Option<String>,
    /// Operation, by its A2A 0.3 method name.
    pub operation: Option<String>,
    /// Method name the client sent (or the route it used).
    pub client_method: Option<String>,
    /// Method name sent to the peer.
    pub peer_method: Option<String>,
    /// A2A version of the caller.
    pub client_version: Option<String>,
    /// Binding of the caller (`JSONRPC`, `HTTP+JSON`).
    pub client_binding: Option<String>,
    /// A2A version used with the peer.
    pub peer_version: Option<String>,
    /// Binding used with the peer.
    pub peer_binding: Option<String>,
    /// `allowed` or `refused`.
    pub decision: String,
    /// HTTP status of the refusal's kind (e.g. 403), or 200.
    pub status: i64,
    /// Latency in milliseconds.
    pub latency_ms: i64,
    /// Of the hop's time, how long it waited for its peer (microseconds; a stream: for
    /// the answer's head), when the peer was called: what `a2a_peer_duration_seconds` records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_us: Option<i64>,
    /// Of the hop's time, the gateway's own (microseconds: the hop's time less its peer
    /// call's), when the peer was called: what `a2a_gateway_overhead_seconds` records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_us: Option<i64>,
    /// Gateway error code, if refused.
    pub error_code: Option<String>,
    /// The task the hop concerned or created, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Sequence number of the hop's intent record (written before the peer call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_seq: Option<i64>,
    /// `incomplete` on an intent record whose hop never finished (the gateway stopped
    /// between the peer call and the answer); absent on finished hops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// The hop's governance evidence (JSON: decisions with rule ids, PII types and counts,
    /// delegation chain, approval), when a governance step ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governance: Option<Value>,
    /// Trust state of the peer card behind the hop (`verified`, `unsigned`, `invalid`,
    /// `untrusted-key`; see `crate::trust`), when it was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_trust: Option<String>,
}

/// Where an agent's trusted card keys come from (the registration's `pinnedCardKey`).
#[derive(Debug, Clone)]
pub enum KeySource {
    /// A pinned public key (JWK) or key set (JWKS document).
    Pinned(JwkSet),
    /// A JWKS URL, fetched like cards.
    Url(String),
}

impl KeySource {
    /// The static checks of a JWKS URL (https, or http in development; no credentials; public
    /// literal addresses), as an error message.
    pub fn check_url(url: &str, dev_mode: bool) -> Result<url::Url, String> {
        a2a_agent::net_guard::NetGuard::new(dev_mode)
            .check_url(url)
            .map_err(|e| format!("JWKS URL {url:?}: {e}"))
    }

    /// Reads a registration value: JSON text of a JWK or a JWK Set, or an https JWKS URL
    /// (http and loopback in development mode).
    pub fn parse(s: &str, dev_mode: bool) -> Result<KeySource, String> {
        let t = s.trim();
        if t.starts_with('{') {
            let v: Value =
                serde_json::from_str(t).map_err(|e| format!("pinnedCardKey: not JSON ({e})"))?;
            let private = |k: &Value| k.get("d").is_some() || k.get("k").is_some();
            let keys = v.get("keys").and_then(Value::as_array);
            if private(&v) || keys.is_some_and(|ks| ks.iter().any(private)) {
                return Err("pinnedCardKey: a private or symmetric key; pin the public key".into());
            }
            let set =
                a2a_client::signing::key_set(&v).map_err(|e| format!("pinnedCardKey: {e}"))?;
            if set.keys.is_empty() {
                return Err("pinnedCardKey: the key set is empty".into());
            }
            return Ok(KeySource::Pinned(set));
        }
        KeySource::check_url(t, dev_mode)
            .map(|u| KeySource::Url(u.to_string()))
            .map_err(|e| format!("pinnedCardKey: neither a JWK nor a usable {e}"))
    }
}

/// Reads `pinnedCardKey`: a string (JWK JSON text or JWKS URL), a JWK / JWK Set object (kept
/// as its JSON text), or null.
pub fn deserialize_key_source<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    match <Option<Value> as serde::Deserialize>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v @ Value::Object(_)) => Ok(Some(v.to_string())),
        Some(_) => Err(serde::de::Error::custom(
            "pinnedCardKey: a JWK (object or JSON text) or a JWKS URL",
        )),
    }
}
