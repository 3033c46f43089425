//! `a2a-gateway admin` subcommands of issue 15 (workspace settings, the admin audit log) and
//! the registration check of `agent-add`; the binary flattens [`Cmd`] into its admin commands.

use clap::Subcommand;

use crate::config::Config;
use crate::{admin::registration, admin::registration::Check};
use crate::{store::Agent, store::PushDelivery, store::Store};

/// Admin subcommands on the database file.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Print a workspace's settings (a2a.extensions.allowed, a2a.push.delivery).
    SettingsGet {
        /// Workspace id.
        workspace: String,
    },
    /// Change a workspace's settings; a running gateway uses them from its next request.
    SettingsSet {
        /// Workspace id.
        workspace: String,
        /// Allow an extension URI (repeatable; a2a.extensions.allowed). Nothing is allowed
        /// until an operator allows it.
        #[arg(long = "allow-extension")]
        allow: Vec<String>,
        /// Stop allowing an extension URI (repeatable).
        #[arg(long = "disallow-extension")]
        disallow: Vec<String>,
        /// Push delivery (a2a.push.delivery): `direct` (the peer posts to the caller's webhook)
        /// or `gateway` (sealed gateway callbacks).
        #[arg(long, value_enum)]
        push_delivery: Option<PushDelivery>,
        /// Unset a2a.push.delivery (the deprecated push_direct_workspaces list, else gateway).
        #[arg(long, conflicts_with = "push_delivery")]
        reset_push_delivery: bool,
    },
    /// Print the admin audit log (who changed what) as JSON lines.
    AdminAudit {
        /// Only this workspace.
        #[arg(long)]
        workspace: Option<String>,
        /// Only rows after this sequence number.
        #[arg(long, default_value_t = 0)]
        after: i64,
    },
}

/// Runs one of [`Cmd`] on `store`, printing its result.
pub fn run(store: &Store, cmd: Cmd) -> Result<(), String> {
    let print = |v: &serde_json::Value| {
        println!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
    };
    match cmd {
        Cmd::SettingsGet { workspace } => {
            if store
                .workspace(&workspace)
                .map_err(|e| e.to_string())?
                .is_none()
            {
                return Err(format!("workspace {workspace} not found"));
            }
            let s = store
                .workspace_settings(&workspace)
                .map_err(|e| e.to_string())?;
            print(&serde_json::to_value(&s).unwrap_or_default());
        }
        Cmd::SettingsSet {
            workspace,
            allow,
            disallow,
            push_delivery,
            reset_push_delivery,
        } => {
            let mut s = store
                .workspace_settings(&workspace)
                .map_err(|e| e.to_string())?;
            for u in allow {
                if !s.extensions_allowed.contains(&u) {
                    s.extensions_allowed.push(u);
                }
            }
            s.extensions_allowed.retain(|u| !disallow.contains(u));
            if push_delivery.is_some() {
                s.push_delivery = push_delivery;
            }
            if reset_push_delivery {
                s.push_delivery = None;
            }
            store
                .put_workspace_settings(&workspace, &s)
                .map_err(|e| e.to_string())?;
            print(&serde_json::to_value(&s).unwrap_or_default());
        }
        Cmd::AdminAudit { workspace, after } => {
            let mut after = after;
            loop {
                let rows = store
                    .admin_audit(workspace.as_deref(), after, 1000)
                    .map_err(|e| e.to_string())?;
                let Some(last) = rows.last() else { break };
                after = last.seq;
                for r in &rows {
                    println!("{}", serde_json::to_string(r).unwrap_or_default());
                }
            }
        }
    }
    Ok(())
}

/// `agent-add`: the registration check ([`check_agent`]), then the save (refused without
/// `force` when no binding can be called; a card that cannot be read is a warning). Returns the
/// agent as shown, with `registrationCheck` and `forced`.
pub async fn add_agent(
    store: &Store,
    agent: &Agent,
    force: bool,
    dev: bool,
) -> Result<serde_json::Value, String> {
    let check = check_agent(store, agent, dev).await?;
    if let Check::Refused { passed_over } = &check
        && !force
    {
        return Err(refused_text(passed_over));
    }
    store.upsert_agent(agent).map_err(|e| e.to_string())?;
    // Said only once the registration is saved.
    if let Check::CardUnreadable { detail } = &check {
        eprintln!(
            "warning: the peer's Agent Card could not be read ({detail}); saved without the \
             binding check"
        );
    }
    let mut shown = serde_json::to_value(agent).map_err(|e| e.to_string())?;
    shown["registrationCheck"] = serde_json::to_value(&check).map_err(|e| e.to_string())?;
    shown["forced"] = serde_json::json!(force);
    Ok(shown)
}

/// The registration check of `agent-add` (the admin API's, [`registration::check`]): `dev`
/// allows plain-http and loopback peers as `serve --dev` does.
pub async fn check_agent(store: &Store, agent: &Agent, dev: bool) -> Result<Check, String> {
    let config = Config {
        dev_mode: dev,
        ..Config::default()
    };
    let gw = crate::app::Gateway::new(config, store.clone())?;
    Ok(registration::check(gw.state(), agent).await)
}

/// The CLI's text for a refused registration (the reasons, one per line).
pub fn refused_text(passed_over: &[String]) -> String {
    let mut out = String::from(
        "the peer's Agent Card offers no binding this gateway can call \
         (add --force to register it anyway):",
    );
    for r in passed_over {
        out.push_str("\n  - ");
        out.push_str(r);
    }
    out
}
