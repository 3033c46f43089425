//! `a2a-gateway`: serve the governed A2A gateway, run the demo, or manage the registry.

/// jemalloc instead of the system allocator: glibc malloc/free was the largest single cost in
/// the profile of an echo request (docs/benchmarks.md, "Allocator").
#[cfg(all(feature = "jemalloc", unix, not(target_env = "musl")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};

use a2a_gateway::config::{Config, ErrorStatusMode, PolicyDefault};
use a2a_gateway::errors::Version;
use a2a_gateway::keys;
use a2a_gateway::server::Gateway;
use a2a_gateway::store::{Agent, Store};

/// Governed A2A gateway: workspace keys, scopes, limits, version translation (0.3 <-> 1.0),
/// governed Agent Cards and an audit log in front of registered peer agents.
#[derive(Parser)]
#[command(name = "a2a-gateway", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the gateway. Settings come from defaults, then the TOML file, then A2A_GATEWAY_*
    /// environment variables, then flags.
    Serve(Box<ServeArgs>),
    /// Start a gateway with a demo workspace, key and the built-in echo agent registered, on an
    /// embedded SQLite file, and print working curl commands.
    Demo(DemoArgs),
    /// Manage workspaces, agents, keys and the audit log directly in the SQLite file.
    Admin(AdminArgs),
}

#[derive(Args)]
struct ServeArgs {
    /// TOML configuration file (keys as in docs/gateway.md; every key optional).
    #[arg(long, env = "A2A_GATEWAY_CONFIG")]
    config: Option<PathBuf>,
    /// Listen address [default: 127.0.0.1:8080].
    #[arg(long, env = "A2A_GATEWAY_LISTEN")]
    listen: Option<SocketAddr>,
    /// Public base URL written on governed cards [default: http://<listen>].
    #[arg(long, env = "A2A_GATEWAY_PUBLIC_URL")]
    public_url: Option<String>,
    /// SQLite file [default: a2a-gateway.db].
    #[arg(long, env = "A2A_GATEWAY_DATABASE")]
    database: Option<PathBuf>,
    /// Bearer token of the admin API, also the operator console's login (/console)
    /// [default: none = admin API and console off].
    #[arg(long, env = "A2A_GATEWAY_ADMIN_TOKEN")]
    admin_token: Option<String>,
    /// Serve A2A 1.0 as well as 0.3 (a2a.protocol.serve-v1) [default: true].
    #[arg(long, env = "A2A_GATEWAY_SERVE_V1")]
    serve_v1: Option<bool>,
    /// Serve the A2A 1.0 gRPC binding to callers on the same port; the request's `tenant` is
    /// the agent id (needs --serve-v1) [default: false].
    #[arg(long, env = "A2A_GATEWAY_SERVE_GRPC")]
    serve_grpc: Option<bool>,
    /// Allow message:stream and tasks:resubscribe (a2a.streaming.enabled) [default: true].
    #[arg(long, env = "A2A_GATEWAY_STREAMING")]
    streaming: Option<bool>,
    /// HTTP status of JSON-RPC refusals: `ok` = 200 (401 stays 401), `refusal` = the
    /// refusal's own status (a2a.protocol.json-rpc-error-status) [default: ok].
    #[arg(long, env = "A2A_GATEWAY_JSON_RPC_ERROR_STATUS", value_enum)]
    json_rpc_error_status: Option<ErrorStatusMode>,
    /// Development mode: allow plain http peers and loopback peer addresses [default: false].
    #[arg(long, env = "A2A_GATEWAY_DEV")]
    dev: Option<bool>,
    /// Seconds to wait for a peer answer, and between stream events [default: 30].
    #[arg(long, env = "A2A_GATEWAY_PEER_TIMEOUT_SECS")]
    peer_timeout_secs: Option<u64>,
    /// Characters of text across an outbound message (413 a2a_message_too_large) [default: 50000].
    #[arg(long, env = "A2A_GATEWAY_MAX_MESSAGE_CHARS")]
    max_message_chars: Option<usize>,
    /// Bytes of a whole peer answer (502 a2a_response_too_large) [default: 16777216 = 16 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_RESPONSE_BYTES")]
    max_response_bytes: Option<u64>,
    /// Bytes of a peer Agent Card [default: 16777216 = 16 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_CARD_BYTES")]
    max_card_bytes: Option<u64>,
    /// Bytes of one stream; the stream then ends with an error event [default: 67108864 = 64 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_STREAM_BYTES")]
    max_stream_bytes: Option<u64>,
    /// Bytes of an incoming push-notification body (413 a2a_push_too_large) [default: 1048576 = 1 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_PUSH_BYTES")]
    max_push_bytes: Option<u64>,
    /// On SIGTERM/SIGINT, seconds calls may finish before open streams end with an
    /// a2a_shutting_down error event and waiting calls are answered with it [default: 5].
    #[arg(long, env = "A2A_GATEWAY_SHUTDOWN_GRACE_SECS")]
    shutdown_grace_secs: Option<u64>,
    /// Seconds for a request's headers to arrive; the connection is closed beyond [default: 10].
    #[arg(long, env = "A2A_GATEWAY_HEADER_READ_TIMEOUT_SECS")]
    header_read_timeout_secs: Option<u64>,
    /// Seconds for a request's whole body to arrive; 408 beyond [default: 30].
    #[arg(long, env = "A2A_GATEWAY_BODY_READ_TIMEOUT_SECS")]
    body_read_timeout_secs: Option<u64>,
    /// Seconds an idle keep-alive connection stays open [default: 60].
    #[arg(long, env = "A2A_GATEWAY_IDLE_TIMEOUT_SECS")]
    idle_timeout_secs: Option<u64>,
    /// Open connections at most, 503 beyond (0 = from the fd limit; always kept below
    /// RLIMIT_NOFILE minus a margin) [default: 10000].
    #[arg(long, env = "A2A_GATEWAY_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Base URL of push callbacks (a2a.push.callback-base-url): peers post notifications to
    /// `{base}/a2a/{agentId}/push:notify/{callback}` [default: none = push refused].
    #[arg(long, env = "A2A_GATEWAY_PUSH_CALLBACK_BASE_URL")]
    push_callback_base_url: Option<String>,
    /// Milliseconds a deleted push config's callback still accepts the peer's notifications
    /// (sent before the peer saw the delete) [default: 10000].
    #[arg(long, env = "A2A_GATEWAY_PUSH_DELETE_GRACE_MS")]
    push_delete_grace_ms: Option<u64>,
    /// Deprecated: set a2a.push.delivery per workspace (`admin settings-set --push-delivery`, or
    /// PATCH /admin/workspaces/{ws}/settings). Workspaces with direct push delivery when their
    /// own setting is unset (comma-separated) [default: none].
    #[arg(
        long,
        env = "A2A_GATEWAY_PUSH_DIRECT_WORKSPACES",
        value_delimiter = ','
    )]
    push_direct_workspaces: Option<Vec<String>>,
    /// Serve GET /a2a/.well-known/ard.json, the agents a key may use as an ARD manifest
    /// (experimental) [default: false].
    #[arg(long, env = "A2A_GATEWAY_ARD")]
    ard: Option<bool>,
    /// Decision for a hop no policy rule decides: `allow`, or `deny` (default-deny: every
    /// workspace needs a policy that allows its hops) [default: allow].
    #[arg(long, env = "A2A_GATEWAY_POLICY_DEFAULT", value_enum)]
    policy_default: Option<PolicyDefault>,
    /// Longest delegation chain (agents, the target included); beyond it
    /// a2a_delegation_depth_exceeded [default: 8].
    #[arg(long, env = "A2A_GATEWAY_MAX_DELEGATION_DEPTH")]
    max_delegation_depth: Option<usize>,
    /// Secret of the delegation chain's HMAC; set it when several gateway instances serve the
    /// same agents or chains must survive a restart [default: random per process].
    #[arg(long, env = "A2A_GATEWAY_DELEGATION_KEY", hide_env_values = true)]
    delegation_key: Option<String>,
    /// Seconds a hop held for approval waits for a person before a2a_approval_expired
    /// [default: 3600].
    #[arg(long, env = "A2A_GATEWAY_APPROVAL_TTL_SECS")]
    approval_ttl_secs: Option<u64>,
    /// Seconds a blocking send held for approval waits for the decision before it is answered
    /// with the gateway task (0 = at once) [default: 10].
    #[arg(long, env = "A2A_GATEWAY_APPROVAL_WAIT_SECS")]
    approval_wait_secs: Option<u64>,
    /// Seconds a send's messageId is remembered per workspace and agent: a repeat within it is
    /// answered from the first send, not forwarded again (0 = off) [default: 600].
    #[arg(long, env = "A2A_GATEWAY_IDEMPOTENCY_WINDOW_SECS")]
    idempotency_window_secs: Option<u64>,
    /// Require verified peer card signatures in every workspace (502 a2a_card_signature_invalid
    /// for an unsigned or unverifiable card) [default: false].
    #[arg(long, env = "A2A_GATEWAY_REQUIRE_SIGNED_CARDS")]
    require_signed_cards: Option<bool>,
    /// Secret (at least 32 bytes) that encrypts the gateway's card signing keys at rest.
    #[arg(long, env = "A2A_GATEWAY_CARD_KEY_SECRET", hide_env_values = true)]
    card_key_secret: Option<String>,
    /// File holding that secret (when --card-key-secret is not given).
    #[arg(long, env = "A2A_GATEWAY_CARD_KEY_FILE")]
    card_key_file: Option<PathBuf>,
    /// Seconds a retired card signing key stays in /a2a/.well-known/jwks.json (at least 360)
    /// [default: 2592000, 30 days].
    #[arg(long, env = "A2A_GATEWAY_SIGNING_KEY_GRACE_SECS")]
    signing_key_grace_secs: Option<u64>,
}

impl ServeArgs {
    fn config(&self) -> Result<Config> {
        let mut c = match &self.config {
            Some(p) => Config::load(p).map_err(anyhow::Error::msg)?,
            None => Config::default(),
        };
        if let Some(v) = self.listen {
            c.listen = v;
        }
        if let Some(v) = &self.public_url {
            c.public_url = Some(v.clone());
        }
        if let Some(v) = &self.database {
            c.database = v.clone();
        }
        if let Some(v) = &self.admin_token {
            c.admin_token = Some(v.clone());
        }
        if let Some(v) = self.serve_v1 {
            c.serve_v1 = v;
        }
        if let Some(v) = self.serve_grpc {
            c.serve_grpc = v;
        }
        if let Some(v) = self.streaming {
            c.streaming_enabled = v;
        }
        if let Some(v) = self.json_rpc_error_status {
            c.json_rpc_error_status = v;
        }
        if let Some(v) = self.dev {
            c.dev_mode = v;
        }
        if let Some(v) = self.peer_timeout_secs {
            c.peer_timeout_secs = v;
        }
        if let Some(v) = self.shutdown_grace_secs {
            c.shutdown_grace_secs = v;
        }
        if let Some(v) = self.header_read_timeout_secs {
            c.header_read_timeout_secs = v;
        }
        if let Some(v) = self.body_read_timeout_secs {
            c.body_read_timeout_secs = v;
        }
        if let Some(v) = self.idle_timeout_secs {
            c.idle_timeout_secs = v;
        }
        if let Some(v) = self.max_connections {
            c.max_connections = v;
        }
        if let Some(v) = self.max_message_chars {
            c.limits.max_message_chars = v;
        }
        if let Some(v) = self.max_response_bytes {
            c.limits.max_response_bytes = v;
        }
        if let Some(v) = self.max_card_bytes {
            c.limits.max_card_bytes = v;
        }
        if let Some(v) = self.max_stream_bytes {
            c.limits.max_stream_bytes = v;
        }
        if let Some(v) = self.max_push_bytes {
            c.limits.max_push_bytes = v;
        }
        if let Some(v) = &self.push_callback_base_url {
            c.push_callback_base_url = Some(v.clone());
        }
        if let Some(v) = self.push_delete_grace_ms {
            c.push_delete_grace_ms = v;
        }
        if let Some(v) = &self.push_direct_workspaces {
            c.push_direct_workspaces = v.clone();
        }
        if let Some(v) = self.ard {
            c.ard_enabled = v;
        }
        if let Some(v) = self.policy_default {
            c.policy_default = v;
        }
        if let Some(v) = self.max_delegation_depth {
            c.max_delegation_depth = v;
        }
        if let Some(v) = &self.delegation_key {
            c.delegation_key = Some(v.clone());
        }
        if let Some(v) = self.approval_ttl_secs {
            c.approval_ttl_secs = v;
        }
        if let Some(v) = self.approval_wait_secs {
            c.approval_wait_secs = v;
        }
        if let Some(v) = self.idempotency_window_secs {
            c.idempotency_window_secs = v;
        }
        if let Some(v) = self.require_signed_cards {
            c.require_signed_cards = v;
        }
        if let Some(v) = &self.card_key_secret {
            c.card_key_secret = Some(v.clone());
        }
        if let Some(v) = &self.card_key_file {
            c.card_key_file = Some(v.clone());
        }
        if let Some(v) = self.signing_key_grace_secs {
            c.signing_key_grace_secs = v;
        }
        Ok(c)
    }
}

#[derive(Args)]
struct DemoArgs {
    /// Port of the gateway on 127.0.0.1 (0 = any free port).
    #[arg(long, default_value_t = 8080, env = "A2A_GATEWAY_DEMO_PORT")]
    port: u16,
    /// SQLite file of the demo [default: a fresh file in the system temp directory].
    #[arg(long)]
    database: Option<PathBuf>,
    /// A2A version the built-in echo agent speaks (the gateway translates for the other).
    #[arg(long, default_value = "1.0", value_parser = ["0.3", "1.0"])]
    echo_version: String,
    /// On SIGTERM/SIGINT, seconds calls may finish before open streams end with an
    /// a2a_shutting_down error event and waiting calls are answered with it.
    #[arg(long, default_value_t = 5, env = "A2A_GATEWAY_SHUTDOWN_GRACE_SECS")]
    shutdown_grace_secs: u64,
}

#[derive(Args)]
struct AdminArgs {
    /// SQLite file.
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
    Settings(a2a_gateway::admin_cli::Cmd),
    /// Export the audit log as JSON lines on stdout.
    AuditExport {
        /// Only this workspace.
        #[arg(long)]
        workspace: Option<String>,
    },
    /// Set a workspace's policy from a JSON file (`-` = stdin); validated and compiled first.
    /// A running gateway sees it within 5 s (at once through the admin API).
    PolicySet {
        /// Workspace id.
        workspace: String,
        /// Policy document (docs/gateway.md, "Policy").
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
    /// List a workspace's kills.
    KillList {
        /// Workspace id.
        workspace: String,
    },
    /// List a workspace's approvals (redacted previews), optionally in one state.
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
    Trust(a2a_gateway::trust::cli::TrustCmd),
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

async fn admin(args: AdminArgs) -> Result<()> {
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
    let store = Store::open(&args.database)
        .with_context(|| format!("opening {}", args.database.display()))?;
    let result = admin_on(&store, args.cmd).await;
    // Every change is recorded with the CLI user (reads are not).
    let argv: Vec<String> = std::env::args()
        .skip_while(|a| a != "admin")
        .skip(1)
        .collect();
    let error = result.as_ref().err().map(|e| format!("{e:#}"));
    a2a_gateway::admin_audit::record_cli(&store, &argv, error.as_deref());
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
            let shown = a2a_gateway::admin_cli::add_agent(store, &a, force, dev)
                .await
                .map_err(anyhow::Error::msg)?;
            print_json(&shown)?
        }
        AdminCmd::Settings(c) => {
            a2a_gateway::admin_cli::run(store, c).map_err(anyhow::Error::msg)?
        }
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
        AdminCmd::AuditExport { workspace } => {
            let mut out = std::io::stdout().lock();
            store.export_audit_jsonl(workspace.as_deref(), &mut out)?;
        }
        AdminCmd::Trust(cmd) => {
            print_json(&a2a_gateway::trust::cli::run(store, cmd).map_err(anyhow::Error::msg)?)?
        }
        cmd => governance_admin(store, cmd)?,
    }
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
fn governance_admin(store: &Store, cmd: AdminCmd) -> Result<()> {
    use a2a_gateway::governance::policy::Policy;
    use a2a_gateway::governance::store::{GovStore, Kill, SqliteGov};
    let gov = SqliteGov::new(store.clone());
    match cmd {
        AdminCmd::PolicySet { workspace, file } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("reading {}", file.display()))?
            };
            let p = Policy::from_json(&text).map_err(anyhow::Error::msg)?;
            gov.put_policy(&workspace, &serde_json::to_string(p.doc())?)?;
            print_json(p.doc())?
        }
        AdminCmd::PolicyGet { workspace } => match gov.policy(&workspace)? {
            Some(t) => print_json(&serde_json::from_str::<serde_json::Value>(&t)?)?,
            None => bail!("workspace {workspace} has no policy"),
        },
        AdminCmd::PolicyDelete { workspace } => {
            if !gov.delete_policy(&workspace)? {
                bail!("workspace {workspace} has no policy");
            }
        }
        AdminCmd::PolicyExplain { workspace, hop } => {
            let Some(text) = gov.policy(&workspace)? else {
                bail!("workspace {workspace} has no policy: the operator default decides");
            };
            let p = Policy::from_json(&text).map_err(anyhow::Error::msg)?;
            let over: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&hop).context("--hop: a JSON object")?;
            let facts = a2a_gateway::governance::policy::sample_facts(&workspace, &over)
                .map_err(anyhow::Error::msg)?;
            let o = p.evaluate(
                &facts,
                a2a_gateway::governance::policy::PolicyDecision::Allow,
            );
            print_json(&o)?
        }
        AdminCmd::PiiSet { workspace, rules } => {
            let r: a2a_gateway::pii::PiiRules =
                serde_json::from_str(&rules).context("PII rules")?;
            gov.put_pii_rules(&workspace, &serde_json::to_string(&r)?)?;
            print_json(&r)?
        }
        AdminCmd::PiiGet { workspace } => match gov.pii_rules(&workspace)? {
            Some(t) => print_json(&serde_json::from_str::<serde_json::Value>(&t)?)?,
            None => bail!("workspace {workspace} has no PII rules (scanning off)"),
        },
        AdminCmd::PiiDelete { workspace } => {
            if !gov.delete_pii_rules(&workspace)? {
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
            gov.add_kill(&k)?;
            print_json(&k)?
        }
        AdminCmd::KillList { workspace } => print_json(&gov.kills(&workspace)?)?,
        AdminCmd::ApprovalList { workspace, state } => {
            use a2a_gateway::governance::approval::{ApprovalStore, SqliteApprovals};
            let list = SqliteApprovals::new(store.clone()).list(&workspace, state.as_deref())?;
            print_json(&list)?
        }
        AdminCmd::ApprovalDeny {
            workspace,
            id,
            approver,
            reason,
        } => {
            use a2a_gateway::governance::approval::{ApprovalStore, SqliteApprovals};
            let approvals = SqliteApprovals::new(store.clone());
            if !approvals.decide(
                &workspace,
                &id,
                "denied",
                Some(&approver),
                reason.as_deref(),
            )? {
                bail!("approval {id} is not pending in workspace {workspace}");
            }
            print_json(&approvals.get(&workspace, &id)?)?
        }
        _ => bail!("not a governance command"),
    }
    Ok(())
}

async fn serve(args: ServeArgs) -> Result<()> {
    let config = args.config()?;
    let store = Store::open(&config.database)
        .with_context(|| format!("opening {}", config.database.display()))?;
    // This process serves the database: intent records go through the journal (one write per
    // hop instead of a commit); intents a killed predecessor journaled are recovered first.
    let recovered = store.open_intent_journal().with_context(|| {
        format!(
            "opening the intent journal of {}",
            config.database.display()
        )
    })?;
    if recovered > 0 {
        eprintln!("recovered {recovered} intent record(s) journaled by a previous process");
    }
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("binding {}", config.listen))?;
    let addr = listener.local_addr()?;
    let audit = store.clone();
    let console = a2a_gateway::console::enabled(&config);
    let gateway = Gateway::new(config, store).map_err(anyhow::Error::msg)?;
    let handle = gateway.serve(listener).await?;
    println!("LISTENING http://{addr}");
    if console {
        println!("CONSOLE http://{addr}/console (log in with the admin token)");
    }
    a2a_agent::listen::shutdown_signal().await;
    handle.shutdown().await;
    // Completion records queued for the audit writer's next batch commit before we exit.
    audit.flush_audit();
    Ok(())
}

async fn demo(args: DemoArgs) -> Result<()> {
    let db = match args.database {
        Some(p) => p,
        None => std::env::temp_dir().join(format!("a2a-gateway-demo-{}.db", std::process::id())),
    };
    let store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    store
        .open_intent_journal()
        .with_context(|| format!("opening the intent journal of {}", db.display()))?;
    // The built-in echo agent of a2a-agent (JSON-RPC and HTTP+JSON, A2A 1.0 and 0.3), or the
    // gateway's own small echo peer speaking only A2A 0.3 (`--echo-version 0.3`).
    let echo_listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let (echo_url, echo_stop): (String, Box<dyn FnOnce() -> tokio::task::JoinHandle<()>>) =
        if args.echo_version == "0.3" {
            let echo = a2a_gateway::demo::start_echo(echo_listener, Version::V03, None).await?;
            let url = echo.url.clone();
            (url, Box::new(move || tokio::spawn(echo.shutdown())))
        } else {
            let server = a2a_agent::AgentServer::new(
                a2a_agent::demo::echo_card(),
                a2a_agent::demo::echo_handler(),
            )
            .validate_auth(false)
            .serve(echo_listener)
            .await
            .map_err(|e| anyhow::anyhow!("starting the echo agent: {e}"))?;
            let url = server.url().to_owned();
            (url, Box::new(move || tokio::spawn(server.shutdown())))
        };
    if store.workspace("demo")?.is_none() {
        store.create_workspace("demo", "Demo workspace")?;
    }
    store.upsert_agent(&Agent {
        workspace_id: "demo".into(),
        agent_id: "echo".into(),
        endpoint: echo_url.clone(),
        credential: None,
        skills: None,
        pinned_card_key: None,
    })?;
    // Two agents requiring an extension (the extension errors' conformance fixtures).
    let ext_agents = a2a_gateway::demo::start_extension_agents(&store, "demo")
        .await
        .map_err(anyhow::Error::msg)?;
    let (_, key) = store.create_key("demo", &[], Some("demo"), None)?;
    a2a_gateway::governance::demo::install(
        &a2a_gateway::governance::store::SqliteGov::new(store.clone()),
        "demo",
    )?;
    a2a_gateway::governance::demo::install_approvals(
        &a2a_gateway::governance::approval::SqliteApprovals::new(store.clone()),
        "demo",
        "echo",
    )?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .with_context(|| format!("binding 127.0.0.1:{}", args.port))?;
    let addr = listener.local_addr()?;
    let config = Config {
        listen: addr,
        database: db.clone(),
        dev_mode: true,
        push_callback_base_url: Some(format!("http://{addr}")),
        shutdown_grace_secs: args.shutdown_grace_secs,
        delegation_key: Some(a2a_gateway::governance::demo::DEMO_DELEGATION_KEY.into()),
        // The admin API, and so the console, with a token of this run only.
        admin_token: Some(a2a_gateway::server::random_token()),
        ..Config::default()
    };
    let admin_token = config.admin_token.clone().unwrap_or_default();
    let gateway = Gateway::new(config, store).map_err(anyhow::Error::msg)?;
    let base = format!("http://{addr}");
    let login = a2a_gateway::console::login_link(gateway.state(), &base);
    let handle = gateway.serve(listener).await?;
    if key.is_empty() {
        bail!("no demo key");
    }
    println!(
        "a2a-gateway demo: workspace `demo`, agent `echo` (built-in echo agent, A2A {}), database {}",
        args.echo_version,
        db.display()
    );
    println!();
    println!("export A2A_GATEWAY_KEY={key}");
    println!("LISTENING {base}");
    println!("# The echo agent itself (direct, no gateway): {echo_url}");
    println!();
    println!("# The governed Agent Card (A2A 1.0; add -H 'A2A-Version: 0.3' for the 0.3 card):");
    println!(
        "curl -s {base}/a2a/echo/.well-known/agent-card.json -H \"Authorization: Bearer $A2A_GATEWAY_KEY\""
    );
    println!();
    println!("# Send a message, A2A 0.3 (no version header):");
    println!(
        "curl -s {base}/a2a/echo -H \"Authorization: Bearer $A2A_GATEWAY_KEY\" -H 'Content-Type: application/json' \\"
    );
    println!(
        "  -d '{{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"message/send\",\"params\":{{\"message\":{{\"kind\":\"message\",\"messageId\":\"m-1\",\"role\":\"user\",\"parts\":[{{\"kind\":\"text\",\"text\":\"hello\"}}]}}}}}}'"
    );
    println!();
    println!("# Send a message, A2A 1.0:");
    println!(
        "curl -s {base}/a2a/echo -H \"Authorization: Bearer $A2A_GATEWAY_KEY\" -H 'A2A-Version: 1.0' -H 'Content-Type: application/json' \\"
    );
    println!(
        "  -d '{{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"SendMessage\",\"params\":{{\"message\":{{\"messageId\":\"m-1\",\"role\":\"ROLE_USER\",\"parts\":[{{\"text\":\"hello\"}}]}}}}}}'"
    );
    println!();
    println!("# Stream, over the HTTP+JSON binding (A2A 1.0):");
    println!(
        "curl -sN {base}/a2a/echo/v1/message:stream -H \"Authorization: Bearer $A2A_GATEWAY_KEY\" -H 'A2A-Version: 1.0' -H 'Content-Type: application/a2a+json' \\"
    );
    println!(
        "  -d '{{\"message\":{{\"messageId\":\"m-2\",\"role\":\"ROLE_USER\",\"parts\":[{{\"text\":\"hello\"}}]}}}}'"
    );
    println!();
    println!("# With the a2a CLI (a2a-client):");
    println!(
        "# (the CLI reads the governed card with the key and picks the first interface it speaks)"
    );
    println!("a2a --bearer \"$A2A_GATEWAY_KEY\" card {base}/a2a/echo");
    println!("a2a --bearer \"$A2A_GATEWAY_KEY\" send {base}/a2a/echo 'hello'");
    println!("a2a --bearer \"$A2A_GATEWAY_KEY\" send --stream {base}/a2a/echo 'stream hello'");
    println!(
        "a2a --bearer \"$A2A_GATEWAY_KEY\" --no-card --binding jsonrpc --a2a-version 0.3 send {base}/a2a/echo 'hello in 0.3'"
    );
    println!(
        "a2a --bearer \"$A2A_GATEWAY_KEY\" --no-card --binding rest --a2a-version 1.0 send {base}/a2a/echo/v1 'hello over HTTP+JSON'"
    );
    println!();
    println!(
        "# Governance (docs/gateway.md, \"Governance\"): metadata.skill \"demo-denied\" is denied by"
    );
    println!(
        "# policy, \"demo-approval\" needs approval; e-mails are redacted, secrets blocked; context"
    );
    println!(
        "# {} is killed; gateway tasks gw-approval-demo-denied and gw-approval-demo-expired are",
        a2a_gateway::governance::demo::DEMO_KILLED_CONTEXT
    );
    println!("# approvals a person denied / nobody decided in time.");
    println!("# Metrics: curl -s {base}/metrics");
    println!();
    println!("# The operator console (docs/console.md): {base}/console");
    println!("# One-time login link (valid 15 minutes): {login}");
    println!("# Or log in with the admin token: {admin_token}");
    println!("CONSOLE {base}/console");
    a2a_agent::listen::shutdown_signal().await;
    handle.shutdown().await;
    for a in ext_agents {
        a.shutdown().await;
    }
    let _ = echo_stop().await;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Serve(a) => serve(*a).await,
        Cmd::Demo(a) => demo(a).await,
        Cmd::Admin(a) => admin(a).await,
    }
}
