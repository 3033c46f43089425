//! `a2a-gateway admin --database postgres://…`: the registry, settings, governance, audit
//! export and admin audit commands on a gateway's PostgreSQL database, through the same
//! backend traits a replica uses (a change governs every replica within a second, by the
//! registry's notification). The offline `trust` commands are refused there: a running
//! gateway's admin API manages signing keys and card trust on PostgreSQL.

use anyhow::{Context, Result, bail};

use super::{AdminCmd, governance_admin, print_json};
use crate::admin::registration::Check;
use crate::keys;
use crate::store::Agent;
use crate::store::backend::{AuditStore, PgAudit, PgRegistry, RegistryStore, export_jsonl};

/// Runs one admin command on the database at `url`, recording a change in its admin audit.
pub(super) async fn run(url: &str, cmd: AdminCmd, argv: &[String]) -> Result<()> {
    let opts = a2a_pg::PoolOptions {
        max_size: 2,
        application_name: "a2a-gateway admin".into(),
        ..a2a_pg::PoolOptions::default()
    };
    let pg = PgRegistry::connect(url, &opts)
        .await
        .context("connecting to the PostgreSQL database")?;
    let audit = pg.audit();
    let result = on(&pg, &audit, cmd).await;
    let error = result.as_ref().err().map(|e| format!("{e:#}"));
    if let Some(rec) = crate::admin::audit::cli_record(argv, error.as_deref())
        && let Err(e) = audit.append_admin(&rec).await
    {
        eprintln!("warning: the admin audit row was not written: {e}");
    }
    result
}

async fn on(pg: &PgRegistry, audit: &PgAudit, cmd: AdminCmd) -> Result<()> {
    use crate::cli::admin::Cmd;
    match cmd {
        AdminCmd::WorkspaceCreate { id, name } => print_json(
            &pg.create_workspace(&id, name.as_deref().unwrap_or(&id))
                .await?,
        )?,
        AdminCmd::WorkspaceList => print_json(&pg.list_workspaces().await?)?,
        AdminCmd::WorkspaceLimits {
            id,
            max_response_bytes,
            max_stream_bytes,
            max_card_bytes,
        } => {
            pg.set_workspace_limits(&id, max_response_bytes, max_stream_bytes, max_card_bytes)
                .await?;
            print_json(&pg.workspace(&id).await?)?
        }
        AdminCmd::AgentAdd {
            workspace,
            agent_id,
            endpoint,
            credential,
            skills,
            pinned_card_key,
            card_jwks_url,
            force,
            dev,
        } => {
            let a = Agent {
                workspace_id: workspace,
                agent_id,
                endpoint,
                credential,
                skills: (!skills.is_empty()).then_some(skills),
                pinned_card_key: pinned_card_key.or(card_jwks_url),
            };
            // The card check reads the peer only: a gateway on an empty in-memory store.
            let scratch = crate::store::Store::open_in_memory()?;
            let check = crate::cli::admin::check_agent(&scratch, &a, dev)
                .await
                .map_err(anyhow::Error::msg)?;
            if let Check::Refused { passed_over } = &check
                && !force
            {
                bail!(crate::cli::admin::refused_text(passed_over));
            }
            pg.upsert_agent(&a).await?;
            if let Check::CardUnreadable { detail } = &check {
                eprintln!(
                    "warning: the peer's Agent Card could not be read ({detail}); saved without \
                     the binding check"
                );
            }
            let mut shown = serde_json::to_value(&a)?;
            shown["registrationCheck"] = serde_json::to_value(&check)?;
            shown["forced"] = serde_json::json!(force);
            print_json(&shown)?
        }
        AdminCmd::AgentList { workspace } => print_json(&pg.list_agents(&workspace).await?)?,
        AdminCmd::AgentRemove {
            workspace,
            agent_id,
        } => pg.delete_agent(&workspace, &agent_id).await?,
        AdminCmd::KeyCreate {
            workspace,
            scopes,
            label,
            ttl_secs,
        } => {
            let scopes = keys::parse_scopes(&scopes.join(" ")).map_err(anyhow::Error::msg)?;
            let expires = ttl_secs.map(|t| time::OffsetDateTime::now_utc().unix_timestamp() + t);
            let (info, secret) = pg
                .create_key(&workspace, &scopes, label.as_deref(), expires)
                .await?;
            print_json(&info)?;
            eprintln!("API key (shown only once):");
            println!("{secret}");
        }
        AdminCmd::KeyList { workspace } => print_json(&pg.list_keys(&workspace).await?)?,
        AdminCmd::KeyRevoke { key_id } => pg.revoke_key(&key_id).await?,
        AdminCmd::AuditExport { workspace, after } => {
            let mut out = std::io::stdout();
            export_jsonl(audit, workspace.as_deref(), after, &mut out).await?;
        }
        AdminCmd::Settings(Cmd::SettingsGet { workspace }) => {
            if pg.workspace(&workspace).await?.is_none() {
                bail!("workspace {workspace} not found");
            }
            print_json(&pg.workspace_settings(&workspace).await?)?
        }
        AdminCmd::Settings(Cmd::SettingsSet {
            workspace,
            allow,
            disallow,
            push_delivery,
            reset_push_delivery,
        }) => {
            let mut s = pg.workspace_settings(&workspace).await?;
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
            pg.put_workspace_settings(&workspace, &s).await?;
            print_json(&s)?
        }
        AdminCmd::Settings(Cmd::AdminAudit { workspace, after }) => {
            let mut after = after;
            loop {
                let rows = audit
                    .admin_records(workspace.as_deref(), after, 1000)
                    .await?;
                let Some(last) = rows.last() else { break };
                after = last.seq;
                for r in &rows {
                    println!("{}", serde_json::to_string(r)?);
                }
            }
        }
        AdminCmd::Trust(_) => bail!(
            "the trust commands work on a SQLite file; on PostgreSQL use a running gateway's \
             admin API (POST /admin/signing-keys, PUT /admin/workspaces/{{ws}}/card-trust)"
        ),
        cmd => {
            let holds = pg.holds()?;
            governance_admin(&pg.gov_docs(), &holds, cmd).await?
        }
    }
    Ok(())
}
