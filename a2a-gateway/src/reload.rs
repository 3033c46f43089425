//! Configuration reload (SIGHUP on the binary): the settings that can change while the gateway
//! runs take their new values for the next request, without dropping a connection; the others
//! are reported as needing a restart and keep their running values.
//!
//! A reload compares the settings read now with those read last (file, environment and flags,
//! before the gateway changed anything, such as a `listen` port 0 made the bound port), so only
//! what the operator changed counts. [`LIVE`] lists what changes live; anything else (the
//! listen address, database, workers, connection cap, gRPC serving, served versions, card
//! signing and delegation keys, public URL, development mode, retention) needs a restart. The
//! comparison and the report are shared with the agent (`a2a_agent::settings::reload`).

use std::sync::Arc;

use serde_json::Value;

use crate::config::Config;
use crate::state::GatewayState;

/// The top-level settings (TOML keys) a reload applies live.
pub const LIVE: &[&str] = &[
    "limits",
    "peer_timeout",
    "header_read_timeout",
    "body_read_timeout",
    "idle_timeout",
    "shutdown_grace",
    "policy_default",
    "max_delegation_depth",
    "approval_ttl",
    "approval_wait",
    "idempotency_window",
    "push_delete_grace",
    "push_direct_workspaces",
    "peer_ca_file",
    "json_rpc_error_status",
    "streaming_enabled",
    "ard_enabled",
    "console_trusted_proxy",
    "admin_token",
    "log_level",
    // The trace export (the binary swaps its exporter: `a2a_agent::cli_tools::Staged`).
    "otlp_endpoint",
    "otlp_protocol",
    "otlp_headers",
    "service_name",
];

use a2a_agent::settings::reload as shared;
pub use a2a_agent::settings::reload::Reloaded;

/// Whether a change of `key` from `before` to `after` applies live.
fn live(key: &str, before: &Value, after: &Value) -> bool {
    // The console's routes exist only when it was on at the start: turning the admin token
    // on or off needs a restart, changing it does not.
    let toggled = key == "admin_token" && (before.is_null() || after.is_null());
    LIVE.contains(&key) && !toggled
}

/// The settings that differ between `before` and `after`, split into live and restart-only.
pub fn diff(before: &Config, after: &Config) -> Result<Reloaded, String> {
    shared::diff(before, after, &live)
}

/// What a reload to `after` does: the live settings changed since the last read (`before`),
/// and every setting changed since the start (`boot`) that needs a restart, reported at each
/// reload until the restart.
pub fn plan(boot: &Config, before: &Config, after: &Config) -> Result<Reloaded, String> {
    shared::plan(boot, before, after, &live)
}

/// Applies a reload (see [`plan`]; each of `boot`, `before` and `after` as read from the file,
/// environment and flags) to the running gateway. Nothing changes when an applied setting is
/// refused (an unreadable `peer_ca_file`, say).
pub(crate) fn apply(
    st: &GatewayState,
    listening: &a2a_agent::listen::Listening,
    boot: &Config,
    before: &Config,
    after: &Config,
) -> Result<Reloaded, String> {
    let changes = plan(boot, before, after)?;
    let next: Config = shared::merge(&**st.config(), after, &changes.applied)?;
    let peers = if changes.applied.iter().any(|k| k == "peer_ca_file") {
        Some(crate::peer::clients::PeerClients::build(&next)?)
    } else {
        None
    };
    if let Some(p) = peers {
        st.trust.set_http(p.http.clone());
        st.peer_clients.store(Arc::new(p));
    }
    st.governance.set_settings(&next.governance());
    let l = next.listen();
    listening.set_timeouts(l.header_read_timeout, l.body_read_timeout, l.idle_timeout);
    st.settings.store(Arc::new(next));
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_live_key_is_a_setting() {
        let m = shared::members(&Config::default()).unwrap();
        for k in LIVE {
            assert!(m.contains_key(*k), "{k} is not a setting");
        }
    }

    #[test]
    fn changes_split_into_live_and_restart() {
        let before = Config::default();
        let mut after = Config::default();
        after.limits.max_message_chars = 10;
        after.peer_timeout_secs = 3;
        after.listen = "127.0.0.1:9999".parse().unwrap();
        after.database = "other.db".into();
        let d = diff(&before, &after).unwrap();
        assert_eq!(d.applied, vec!["limits", "peer_timeout"]);
        assert_eq!(d.restart, vec!["database", "listen"]);
        // Turning the admin token on needs a restart; changing it does not.
        after = before.clone();
        after.admin_token = Some("t".into());
        assert_eq!(diff(&before, &after).unwrap().restart, vec!["admin_token"]);
        let mut on = before.clone();
        on.admin_token = Some("s".into());
        assert_eq!(diff(&on, &after).unwrap().applied, vec!["admin_token"]);
    }

    #[test]
    fn a_restart_stays_reported_until_done() {
        let boot = Config::default();
        let mut first = boot.clone();
        first.listen = "127.0.0.1:9999".parse().unwrap();
        let mut second = first.clone();
        second.peer_timeout_secs = 3;
        let p = plan(&boot, &first, &second).unwrap();
        assert_eq!(
            (p.applied, p.restart),
            (vec!["peer_timeout".to_owned()], vec!["listen".to_owned()])
        );
        // An admin token set after a start without one is not applied (the console is off).
        let mut token = second.clone();
        token.admin_token = Some("t".into());
        let mut rotated = token.clone();
        rotated.admin_token = Some("u".into());
        let p = plan(&boot, &token, &rotated).unwrap();
        assert!(
            p.applied.is_empty() && p.restart.contains(&"admin_token".to_owned()),
            "{p:?}"
        );
    }
}
