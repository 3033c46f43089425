//! Configuration reload of a running server ([`ServerHandle::reload`], the binary's SIGHUP):
//! the settings that can change while the agent runs take their new values for what starts
//! from now on, without dropping a connection; the others are reported as needing a restart
//! and keep their running values. The comparison and the report are the ones the gateway uses
//! ([`crate::settings::reload`]).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::ServerHandle;
use crate::config::AgentConfig;
use crate::push::PushSettings;
use crate::settings::reload::{Reloaded, merge, plan};
use crate::tasks::TaskLimits;

/// The settings (TOML keys) a reload applies live. `log_level` and the `otlp_*` /
/// `service_name` trace settings belong to the process: the `a2a-agent` binary applies them
/// (`a2a_agent::cli_tools::stage_reload`); a server embedded in another program reports them
/// and leaves them to it. `max_concurrent_tasks` is live while it stays above 0 (turning the
/// cap on or off needs a restart). Every other setting (the address, base path, bindings,
/// gRPC, card, authentication, stores, history length, idempotency window, connection cap,
/// CORS, webhook address rules, workers) needs a restart.
pub const LIVE: &[&str] = &[
    "return_immediately",
    "async_timeout",
    "max_concurrent_tasks",
    "task_queue_size",
    "max_payload_size",
    "sse_heartbeat_interval",
    "sse_queue_capacity",
    "sse_queue_max_bytes",
    "sse_overflow_policy",
    "card_max_age",
    "max_task_bytes",
    "shutdown_grace",
    "header_read_timeout",
    "body_read_timeout",
    "idle_timeout",
    "push_retry_attempts",
    "push_retry_backoff",
    "push_timeout",
    "rest_status_table",
    "log_level",
    "otlp_endpoint",
    "otlp_protocol",
    "otlp_headers",
    "service_name",
];

/// Whether a change of `key` from `before` to `after` applies live.
fn live(key: &str, before: &Value, after: &Value) -> bool {
    let toggled =
        key == "max_concurrent_tasks" && (before.as_u64() == Some(0) || after.as_u64() == Some(0));
    LIVE.contains(&key) && !toggled
}

/// The task manager's limits of `cfg`.
pub(super) fn task_limits(cfg: &AgentConfig) -> TaskLimits {
    TaskLimits {
        max_concurrent_tasks: cfg.max_concurrent_tasks,
        task_queue_size: cfg.task_queue_size,
        async_timeout: cfg.async_timeout(),
        sse_queue_capacity: cfg.sse_queue_capacity,
        sse_queue_max_bytes: cfg.sse_queue_max_bytes,
        sse_overflow_policy: cfg.sse_overflow_policy,
        store: cfg.store_limits(),
        idempotency_window: cfg.idempotency_window.get(),
        error_table: cfg.rest_status_table,
    }
}

/// The push delivery knobs of `cfg`.
pub(super) fn push_settings(cfg: &AgentConfig) -> PushSettings {
    PushSettings {
        retry_attempts: cfg.push_retry_attempts,
        retry_backoff: cfg.push_retry_backoff.get(),
        attempt_timeout: cfg.push_timeout.get().max(Duration::from_millis(1)),
    }
}

impl ServerHandle {
    /// Applies a configuration reload: `boot`, `before` and `after` are the settings as read
    /// at the start, at the last reload and now (before the server changed any, such as the
    /// echo demo's `validate_auth`). The [`LIVE`] settings changed since `before` apply to the
    /// requests, tasks, push attempts and connections that start from now on; every setting
    /// changed since `boot` that needs a restart is reported and keeps its running value.
    /// Nothing changes when an applied setting is refused.
    pub fn reload(
        &self,
        boot: &AgentConfig,
        before: &AgentConfig,
        after: &AgentConfig,
    ) -> Result<Reloaded, String> {
        let changes = plan(boot, before, after, &live)?;
        let next: AgentConfig = merge(&**self.app.cfg(), after, &changes.applied)?;
        if let Some(p) = &self.push {
            p.set_settings(push_settings(&next))
                .map_err(|e| e.message.clone())?;
        }
        self.manager.set_limits(task_limits(&next));
        let l = next.listen();
        self.listening
            .set_timeouts(l.header_read_timeout, l.body_read_timeout, l.idle_timeout);
        self.listening.set_max_buffered_body(l.max_buffered_body);
        self.app.settings.store(Arc::new(next));
        Ok(changes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::reload::members;

    #[test]
    fn every_live_key_is_a_setting() {
        let m = members(&AgentConfig::default()).unwrap();
        for k in LIVE {
            assert!(m.contains_key(*k), "{k} is not a setting");
        }
    }

    #[test]
    fn the_concurrency_cap_is_live_only_while_on() {
        let boot = AgentConfig {
            max_concurrent_tasks: 4,
            ..AgentConfig::default()
        };
        let after = AgentConfig {
            max_concurrent_tasks: 2,
            max_payload_size: 10,
            grpc: true,
            ..boot.clone()
        };
        let p = plan(&boot, &boot, &after, &live).unwrap();
        assert_eq!(p.applied, vec!["max_concurrent_tasks", "max_payload_size"]);
        assert_eq!(p.restart, vec!["grpc"]);
        let off = AgentConfig {
            max_concurrent_tasks: 0,
            ..boot.clone()
        };
        let p = plan(&boot, &boot, &off, &live).unwrap();
        assert_eq!(p.restart, vec!["max_concurrent_tasks"]);
    }
}
