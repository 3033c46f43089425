//! The other names a gateway setting is read by (one table, applied where the TOML file, the
//! environment and the flags are read: [`a2a_agent::settings`]): our former names of the
//! durations (read for one release, with a warning at start) and the DVARA API's operator
//! settings as written (`a2a.protocol.serve-v1`, in TOML's dotted form `[a2a.protocol]
//! serve-v1 = true` or quoted `"a2a.protocol.serve-v1" = true`). docs/settings-map.md lists them.

use a2a_agent::settings::{Alias, Origin, Value};

/// The boolean flags, switches on the command line (`--dev`, `--no-dev`), by argument id.
pub const SWITCHES: &[&str] = &[
    "console_trusted_proxy",
    "serve_v1",
    "serve_grpc",
    "streaming",
    "dev",
    "ard",
    "require_signed_cards",
    "dvara_headers",
];

const fn old(name: &'static str, ours: &'static str, value: Value) -> Alias {
    Alias::old(name, ours, value)
}

const fn dvara(name: &'static str, ours: &'static str, value: Value) -> Alias {
    Alias::foreign(Origin::Dvara, name, ours, value)
}

/// Every other name of a gateway setting.
pub const ALIASES: &[Alias] = &[
    old("peer_timeout_secs", "peer_timeout", Value::Secs),
    old("shutdown_grace_secs", "shutdown_grace", Value::Secs),
    old(
        "header_read_timeout_secs",
        "header_read_timeout",
        Value::Secs,
    ),
    old("body_read_timeout_secs", "body_read_timeout", Value::Secs),
    old("idle_timeout_secs", "idle_timeout", Value::Secs),
    old("push_delete_grace_ms", "push_delete_grace", Value::Millis),
    old("approval_ttl_secs", "approval_ttl", Value::Secs),
    old("approval_wait_secs", "approval_wait", Value::Secs),
    old("idempotency_window_secs", "idempotency_window", Value::Secs),
    old("signing_key_grace_secs", "signing_key_grace", Value::Secs),
    old(
        "audit_retention_check_secs",
        "audit_retention_check",
        Value::Secs,
    ),
    dvara("a2a.protocol.serve-v1", "serve_v1", Value::Bool),
    dvara(
        "a2a.protocol.json-rpc-error-status",
        "json_rpc_error_status",
        Value::Map(&[("200", "ok"), ("ok", "ok"), ("refusal", "refusal")]),
    ),
    dvara("a2a.streaming.enabled", "streaming_enabled", Value::Bool),
    dvara(
        "a2a.push.callback-base-url",
        "push_callback_base_url",
        Value::Same,
    ),
    dvara(
        "a2a.extensions.allowed",
        "",
        Value::EmptyOnly(
            "extensions are allowed per workspace here, not in the file: `a2a-gateway admin \
             settings-set WS --allow-extension URI` or PATCH /admin/workspaces/{ws}/settings \
             {\"a2a.extensions.allowed\": [...]} (an empty list, the default, is accepted)",
        ),
    ),
];
