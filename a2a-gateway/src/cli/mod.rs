//! The `a2a-gateway admin` command line: the registry (workspaces, agents, keys, limits),
//! governance (policy, PII, kills, approvals), trust (signing keys, card trust) and audit
//! export, on the SQLite file directly (approvals of a running gateway through its admin API).
//! Every change is recorded in the admin audit log with the CLI user ([`crate::admin::audit`]).

pub mod admin;
mod admin_pg;
pub mod demo;
pub mod demo_text;
pub mod ops;
pub mod serve;
pub mod trust;

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

use crate::keys;
use crate::{store::Agent, store::Store};

/// `a2a-gateway admin`: the database and one command.
#[derive(Args)]
pub struct AdminArgs {
    /// The database: a SQLite file's path, or a PostgreSQL URL `postgres://…` (the database
    /// of `serve --database postgres://…`; the offline `trust` commands need a SQLite file).
    #[arg(long, env = "A2A_GATEWAY_DATABASE", default_value = "a2a-gateway.db")]
    database: PathBuf,
    #[command(subcommand)]
    cmd: AdminCmd,
}

#[derive(Subcommand)]
enum AdminCmd {
    /// Create a workspace.
    WorkspaceCreate {
        /// Workspace id.
        id: String,
        /// Display name [default: the id].
        #[arg(long)]
        name: Option<String>,
    },
    /// List workspaces.
    WorkspaceList,
    /// Set per-workspace response limits (omit a flag to use the gateway default).
    WorkspaceLimits {
        /// Workspace id.
        id: String,
        /// Peer answer limit in bytes.
        #[arg(long)]
        max_response_bytes: Option<u64>,
        /// Stream limit in bytes.
        #[arg(long)]
        max_stream_bytes: Option<u64>,
        /// Card limit in bytes.
        #[arg(long)]
        max_card_bytes: Option<u64>,
    },
    /// Register or replace an agent.
    AgentAdd {
        /// Workspace id.
        workspace: String,
        /// Agent id used in /a2a/{agentId}.
        agent_id: String,
        /// The peer's registered A2A endpoint.
        endpoint: String,
        /// Outbound bearer credential sent to the peer.
        #[arg(long)]
        credential: Option<String>,
        /// Skill allow-list (repeatable); none = all skills.
        #[arg(long = "skill")]
        skills: Vec<String>,
        /// Trusted key of the peer's card signatures and signed push notifications: a public
        /// JWK or JWK Set as JSON text. With it, only a card whose signature verifies is used
        /// (502 a2a_card_signature_invalid otherwise) and push notifications need a signed JWT.
        #[arg(long, conflicts_with = "card_jwks_url")]
        pinned_card_key: Option<String>,
        /// Like --pinned-card-key, from the peer's JWKS URL (https; fetched and cached like cards).
        #[arg(long)]
        card_jwks_url: Option<String>,
        /// Save even when the peer's Agent Card offers no binding the gateway can call (the
        /// card is read first; the reasons are printed).
        #[arg(long)]
        force: bool,
        /// Read the card as `serve --dev` would: plain-http and loopback peers allowed.
        #[arg(long, env = "A2A_GATEWAY_DEV")]
        dev: bool,
    },
    /// List agents of a workspace.
    AgentList {
        /// Workspace id.
        workspace: String,
    },
    /// Remove an agent.
    AgentRemove {
        /// Workspace id.
        workspace: String,
        /// Agent id.
        agent_id: String,
    },
    /// Create an API key; the key is printed once.
    KeyCreate {
        /// Workspace id.
        workspace: String,
        /// Scopes (repeatable): a2a:read, a2a:send; none = unrestricted.
        #[arg(long = "scope")]
        scopes: Vec<String>,
        /// Label.
        #[arg(long)]
        label: Option<String>,
        /// Lifetime in seconds [default: no expiry].
        #[arg(long)]
        ttl_secs: Option<i64>,
    },
    /// List keys of a workspace (metadata only).
    KeyList {
        /// Workspace id.
        workspace: String,
    },
    /// Revoke a key.
    KeyRevoke {
        /// Key id.
        key_id: String,
    },
    #[command(flatten)]
    Settings(crate::cli::admin::Cmd),
    /// Export the audit log as JSON lines on stdout, oldest first. Audit retention deletes old
    /// rows (serve --audit-retention, --audit-max-bytes): export before to keep them.
    AuditExport {
        /// Only this workspace.
        #[arg(long)]
        workspace: Option<String>,
        /// Only records after this seq (the last seq of the previous export) [default: 0].
        #[arg(long, default_value_t = 0)]
        after: i64,
    },
    /// Set a workspace's policy from a JSON file (`-` = stdin); validated and compiled first.
    /// A running gateway sees it within 5 s (at once through the admin API).
    PolicySet {
        /// Workspace id.
        workspace: String,
        /// Policy document (docs/gateway/governance.md, "Policy").
        file: PathBuf,
    },
    /// Print a workspace's policy.
    PolicyGet {
        /// Workspace id.
        workspace: String,
    },
    /// Remove a workspace's policy (the operator default decides again).
    PolicyDelete {
        /// Workspace id.
        workspace: String,
    },
    /// Which rule of the workspace's policy decides a hop (dry run).
    PolicyExplain {
        /// Workspace id.
        workspace: String,
        /// The hop's attributes as JSON, over a plain SendMessage, e.g.
        /// '{"agent":{"id":"billing"},"skill":"refund"}'.
        #[arg(long, default_value = "{}")]
        hop: String,
    },
    /// Set a workspace's PII rules (JSON, e.g.
    /// '{"default_action":"record","actions":{"EMAIL":"redact","SECRET":"block"}}').
    PiiSet {
        /// Workspace id.
        workspace: String,
        /// The rules (docs/pii.md).
        rules: String,
    },
    /// Print a workspace's PII rules.
    PiiGet {
        /// Workspace id.
        workspace: String,
    },
    /// Remove a workspace's PII rules (PII scanning off).
    PiiDelete {
        /// Workspace id.
        workspace: String,
    },
    /// Kill a context or a task: further sends naming it are refused (a running gateway within
    /// 5 s). Ending open streams and canceling the peer task needs the running gateway: use
    /// `POST /admin/workspaces/{ws}/kill`.
    Kill {
        /// Workspace id.
        workspace: String,
        /// `context` or `task`.
        #[arg(value_parser = ["context", "task"])]
        kind: String,
        /// Context id or task id.
        id: String,
        /// Reason, kept with the kill.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Lift a kill: requests naming the context or task are served again (a running gateway
    /// within 5 s; `DELETE /admin/workspaces/{ws}/kills/{kind}/{id}` at once).
    KillLift {
        /// Workspace id.
        workspace: String,
        /// `context` or `task`.
        #[arg(value_parser = ["context", "task"])]
        kind: String,
        /// Context id or task id.
        id: String,
    },
    /// List a workspace's kills.
    KillList {
        /// Workspace id.
        workspace: String,
    },
    /// List a workspace's approvals (redacted previews, not the requests), newest first,
    /// optionally in one state.
    ApprovalList {
        /// Workspace id.
        workspace: String,
        /// pending, approved, denied, expired or withdrawn.
        #[arg(long)]
        state: Option<String>,
    },
    /// Approve a pending approval. The running gateway sends the held request, so this calls
    /// its admin API (`POST {gateway}/admin/workspaces/{ws}/approvals/{id}/approve`) with the
    /// admin token; it prints the decided approval.
    ApprovalApprove {
        /// Workspace id.
        workspace: String,
        /// Approval id.
        id: String,
        /// Who approves it.
        #[arg(long)]
        approver: String,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
        /// Base URL of the running gateway, e.g. `http://127.0.0.1:8080`.
        #[arg(long, env = "A2A_GATEWAY_URL")]
        gateway: String,
        /// The gateway's admin token (`admin_token`).
        #[arg(long, env = "A2A_GATEWAY_ADMIN_TOKEN", hide_env_values = true)]
        admin_token: Option<String>,
    },
    #[command(flatten)]
    Trust(crate::cli::trust::TrustCmd),
    /// Copy a SQLite deployment's state (stop its gateway first) into an empty PostgreSQL
    /// database, in batches and one transaction, and print each table's rows in the file and
    /// in PostgreSQL; refused when the target holds data or any count differs.
    MigrateStore {
        /// The SQLite file.
        #[arg(long)]
        from: PathBuf,
        /// The PostgreSQL URL (`postgres://…`), an empty database.
        #[arg(long)]
        to: String,
    },
    /// Deny a pending approval (in the database; a running gateway sees it at once).
    ApprovalDeny {
        /// Workspace id.
        workspace: String,
        /// Approval id.
        id: String,
        /// Who denies it.
        #[arg(long)]
        approver: String,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
    },
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// Runs one `a2a-gateway admin` command.
pub async fn run(args: AdminArgs) -> Result<()> {
    if let AdminCmd::ApprovalApprove {
        workspace,
        id,
        approver,
        reason,
        gateway,
        admin_token,
    } = args.cmd
    {
        return approve_remote(&gateway, admin_token, &workspace, &id, &approver, reason).await;
    }
    if let AdminCmd::MigrateStore { from, to } = &args.cmd {
        return migrate_store(from, to).await;
    }
    // Every change is recorded with the CLI user (reads are not).
    let argv: Vec<String> = std::env::args()
        .skip_while(|a| a != "admin")
        .skip(1)
        .collect();
    if let Some(url) = crate::config::postgres_url(&args.database) {
        return admin_pg::run(url, args.cmd, &argv).await;
    }
    let store = Store::open(&args.database)
        .with_context(|| format!("opening {}", args.database.display()))?;
    let result = admin_on(&store, args.cmd).await;
    let error = result.as_ref().err().map(|e| format!("{e:#}"));
    crate::admin::audit::record_cli(&store, &argv, error.as_deref());
    result
}

async fn admin_on(store: &Store, cmd: AdminCmd) -> Result<()> {
    match cmd {
        AdminCmd::WorkspaceCreate { id, name } => {
            print_json(&store.create_workspace(&id, name.as_deref().unwrap_or(&id))?)?
        }
        AdminCmd::WorkspaceList => print_json(&store.list_workspaces()?)?,
        AdminCmd::WorkspaceLimits {
            id,
            max_response_bytes,
            max_stream_bytes,
            max_card_bytes,
        } => {
            store.set_workspace_limits(
                &id,
                max_response_bytes,
                max_stream_bytes,
                max_card_bytes,
            )?;
            print_json(&store.workspace(&id)?)?
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
            let pinned_card_key = pinned_card_key.or(card_jwks_url);
            let a = Agent {
                workspace_id: workspace,
                agent_id,
                endpoint,
                credential,
                skills: (!skills.is_empty()).then_some(skills),
                pinned_card_key,
            };
            let shown = crate::cli::admin::add_agent(store, &a, force, dev)
                .await
                .map_err(anyhow::Error::msg)?;
            print_json(&shown)?
        }
        AdminCmd::Settings(c) => crate::cli::admin::run(store, c).map_err(anyhow::Error::msg)?,
        AdminCmd::AgentList { workspace } => print_json(&store.list_agents(&workspace)?)?,
        AdminCmd::AgentRemove {
            workspace,
            agent_id,
        } => store.delete_agent(&workspace, &agent_id)?,
        AdminCmd::KeyCreate {
            workspace,
            scopes,
            label,
            ttl_secs,
        } => {
            let scopes = keys::parse_scopes(&scopes.join(" ")).map_err(anyhow::Error::msg)?;
            let expires = ttl_secs.map(|t| time::OffsetDateTime::now_utc().unix_timestamp() + t);
            let (info, secret) =
                store.create_key(&workspace, &scopes, label.as_deref(), expires)?;
            print_json(&info)?;
            eprintln!("API key (shown only once):");
            println!("{secret}");
        }
        AdminCmd::KeyList { workspace } => print_json(&store.list_keys(&workspace)?)?,
        AdminCmd::KeyRevoke { key_id } => store.revoke_key(&key_id)?,
        AdminCmd::AuditExport { workspace, after } => {
            let mut out = std::io::stdout();
            // The same pages the admin API's export reads (`store::backend::export_jsonl`).
            let audit = crate::store::backend::SqliteAudit::new(store.clone());
            crate::store::backend::export_jsonl(&audit, workspace.as_deref(), after, &mut out)
                .await?;
        }
        AdminCmd::Trust(cmd) => {
            print_json(&crate::cli::trust::run(store, cmd).map_err(anyhow::Error::msg)?)?
        }
        cmd => {
            let gov = crate::store::backend::SqliteGovDocs::new(store.clone());
            let holds = crate::store::backend::SqliteHolds::new(store.clone());
            governance_admin(&gov, &holds, cmd).await?
        }
    }
    Ok(())
}

/// `admin migrate-store`: the copy, and its counts printed one table a line.
async fn migrate_store(from: &std::path::Path, to: &str) -> Result<()> {
    if crate::config::postgres_url(std::path::Path::new(to)).is_none() {
        bail!("--to: a PostgreSQL URL (postgres://…)");
    }
    if !from.is_file() {
        bail!("--from {}: no such SQLite file", from.display());
    }
    let copied = crate::store::migrate::migrate_store(from, to)
        .await
        .with_context(|| format!("migrating {}", from.display()))?;
    println!("{:<24} {:>10} {:>10}", "table", "sqlite", "postgres");
    for c in &copied {
        println!("{:<24} {:>10} {:>10}", c.table, c.sqlite, c.postgres);
    }
    println!("migrated: every count matches");
    Ok(())
}

/// `admin approval-approve`: through the running gateway's admin API, which sends the held
/// request.
async fn approve_remote(
    gateway: &str,
    admin_token: Option<String>,
    workspace: &str,
    id: &str,
    approver: &str,
    reason: Option<String>,
) -> Result<()> {
    let mut url = url::Url::parse(gateway).with_context(|| format!("--gateway {gateway:?}"))?;
    url.path_segments_mut()
        .map_err(|_| anyhow::anyhow!("--gateway {gateway:?} cannot be a base URL"))?
        .pop_if_empty()
        .extend(["admin", "workspaces", workspace, "approvals", id, "approve"]);
    let mut req = reqwest::Client::new()
        .post(url.clone())
        .json(&serde_json::json!({"approver": approver, "reason": reason}));
    if let Some(t) = admin_token.filter(|t| !t.is_empty()) {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.with_context(|| format!("calling {url}"))?;
    let status = resp.status();
    let body: serde_json::Value = resp.json().await.unwrap_or(serde_json::Value::Null);
    if !status.is_success() {
        bail!("{url} answered {status}: {body}");
    }
    print_json(&body)
}

/// The governance subcommands of `admin` (policies, PII rules, kills), on the database.
async fn governance_admin(
    gov: &impl crate::store::backend::GovDocStore,
    holds: &impl crate::store::backend::HoldStore,
    cmd: AdminCmd,
) -> Result<()> {
    use crate::governance::policy::Policy;
    use crate::store::backend::{ApprovalSummary, Kill, MAX_PAGE};
    match cmd {
        AdminCmd::PolicySet { workspace, file } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("reading {}", file.display()))?
            };
            let p = Policy::from_json(&text).map_err(anyhow::Error::msg)?;
            gov.put_policy(&workspace, &serde_json::to_string(p.doc())?)
                .await?;
            print_json(p.doc())?
        }
        AdminCmd::PolicyGet { workspace } => match gov.policy(&workspace).await? {
            Some(t) => print_json(&serde_json::from_str::<serde_json::Value>(&t)?)?,
            None => bail!("workspace {workspace} has no policy"),
        },
        AdminCmd::PolicyDelete { workspace } => {
            if !gov.delete_policy(&workspace).await? {
                bail!("workspace {workspace} has no policy");
            }
        }
        AdminCmd::PolicyExplain { workspace, hop } => {
            let Some(text) = gov.policy(&workspace).await? else {
                bail!("workspace {workspace} has no policy: the operator default decides");
            };
            let p = Policy::from_json(&text).map_err(anyhow::Error::msg)?;
            let over: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&hop).context("--hop: a JSON object")?;
            let facts = crate::governance::policy::sample_facts(&workspace, &over)
                .map_err(anyhow::Error::msg)?;
            let o = p.evaluate(&facts, crate::governance::policy::PolicyDecision::Allow);
            print_json(&o)?
        }
        AdminCmd::PiiSet { workspace, rules } => {
            let r: crate::pii::PiiRules = serde_json::from_str(&rules).context("PII rules")?;
            gov.put_pii_rules(&workspace, &serde_json::to_string(&r)?)
                .await?;
            print_json(&r)?
        }
        AdminCmd::PiiGet { workspace } => match gov.pii_rules(&workspace).await? {
            Some(t) => print_json(&serde_json::from_str::<serde_json::Value>(&t)?)?,
            None => bail!("workspace {workspace} has no PII rules (scanning off)"),
        },
        AdminCmd::PiiDelete { workspace } => {
            if !gov.delete_pii_rules(&workspace).await? {
                bail!("workspace {workspace} has no PII rules");
            }
        }
        AdminCmd::Kill {
            workspace,
            kind,
            id,
            reason,
        } => {
            let k = Kill {
                workspace_id: workspace,
                kind,
                id,
                agent_id: None,
                reason,
                killed_at: time::OffsetDateTime::now_utc().unix_timestamp(),
            };
            holds.add_kill(&k).await?;
            print_json(&k)?
        }
        AdminCmd::KillLift {
            workspace,
            kind,
            id,
        } => {
            if !holds.lift_kill(&workspace, &kind, &id).await? {
                bail!("no kill of {kind} {id} in workspace {workspace}");
            }
        }
        AdminCmd::KillList { workspace } => print_json(&holds.kills(&workspace).await?)?,
        AdminCmd::ApprovalList { workspace, state } => {
            // Newest first, a page at a time: the facts and previews, never the requests.
            let mut all = Vec::new();
            loop {
                let after = all.last().map(|a: &ApprovalSummary| a.id.clone());
                let page = holds
                    .summaries(&workspace, state.as_deref(), after.as_deref(), MAX_PAGE)
                    .await?;
                let last = page.len() < MAX_PAGE as usize;
                all.extend(page);
                if last {
                    break;
                }
            }
            print_json(&all)?
        }
        AdminCmd::ApprovalDeny {
            workspace,
            id,
            approver,
            reason,
        } => {
            if !holds
                .decide(
                    &workspace,
                    &id,
                    "denied",
                    Some(&approver),
                    reason.as_deref(),
                )
                .await?
            {
                bail!("approval {id} is not pending in workspace {workspace}");
            }
            print_json(&holds.approval_summary(&workspace, &id).await?)?
        }
        _ => bail!("not a governance command"),
    }
    Ok(())
}
