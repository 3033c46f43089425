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

use a2a_gateway::config::{Age, ByteSize, Config, ErrorStatusMode, PolicyDefault};
use a2a_gateway::server::Gateway;
use a2a_gateway::store::{Agent, Store};

/// Governed A2A gateway: workspace keys, scopes, limits, version translation (0.3 <-> 1.0),
/// governed Agent Cards and an audit log in front of registered peer agents.
#[derive(Parser)]
#[command(name = "a2a-gateway", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Log line format: text or json [default: text].
    #[arg(long, global = true, env = "A2A_GATEWAY_LOG_FORMAT")]
    log_format: Option<a2a_agent::logs::LogFormat>,
    /// Log filter: a level (error, warn, info, debug, trace) or tracing directives such as
    /// `info,a2a_gateway=debug`; overrides RUST_LOG [default: warn].
    #[arg(long, global = true, env = "A2A_GATEWAY_LOG_LEVEL")]
    log_level: Option<String>,
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
    Admin(a2a_gateway::admin_cmd::AdminArgs),
    /// `config sample`: print a commented TOML file of every setting with its default.
    Config {
        /// What to print: `sample`.
        #[arg(value_parser = ["sample"])]
        what: String,
    },
    /// Exit 0 when the gateway answers 200 on /readyz, 1 otherwise: a container HEALTHCHECK
    /// without curl.
    Healthcheck(a2a_gateway::cli::ops::HealthArgs),
}

#[derive(Args)]
struct ServeArgs {
    /// TOML configuration file (every key optional; `a2a-gateway config sample` prints them all).
    #[arg(long, env = "A2A_GATEWAY_CONFIG")]
    config: Option<PathBuf>,
    /// Check the settings (file, environment, flags) and exit: 0 and "config ok" when the
    /// gateway would start with them, 2 and the error otherwise. Opens no database.
    #[arg(long)]
    check_config: bool,
    /// Listen address [default: 127.0.0.1:8080].
    #[arg(long, env = "A2A_GATEWAY_LISTEN")]
    listen: Option<SocketAddr>,
    /// Public base URL written on governed cards [default: http://<listen>].
    #[arg(long, env = "A2A_GATEWAY_PUBLIC_URL")]
    public_url: Option<String>,
    /// Console behind a reverse proxy: honour its X-Forwarded-Host and X-Forwarded-Proto in
    /// the Origin check and the cookie choice [default: false].
    #[arg(long, env = "A2A_GATEWAY_CONSOLE_TRUSTED_PROXY")]
    console_trusted_proxy: Option<bool>,
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
    /// Bytes of text a PII scan reads in one request, in a workspace with PII rules (413
    /// a2a_message_too_large) [default: 4194304 = 4 MiB].
    #[arg(long, env = "A2A_GATEWAY_MAX_SCANNED_BYTES")]
    max_scanned_bytes: Option<usize>,
    /// On SIGTERM/SIGINT, seconds calls may finish before open streams end with an
    /// a2a_shutting_down error event and waiting calls are answered with it [default: 5].
    #[arg(long, env = "A2A_GATEWAY_SHUTDOWN_GRACE_SECS")]
    shutdown_grace_secs: Option<u64>,
    /// Seconds for a request's headers to arrive (a connection's first request: from the
    /// accept); the connection is closed beyond [default: 10].
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
    /// Threads of the async runtime (0 = one per CPU the process may use); on a machine shared
    /// with the agents or a load generator, fewer spend less CPU per hop [default: 0].
    #[arg(long, env = "A2A_GATEWAY_WORKERS")]
    workers: Option<usize>,
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
    /// Audit rows older than this are deleted in the background (30d, 12h, 90m, 45s; 0 =
    /// kept); export them first to keep them (admin audit-export) [default: 30d].
    #[arg(long, env = "A2A_GATEWAY_AUDIT_RETENTION")]
    audit_retention: Option<Age>,
    /// While the database's pages in use pass this size, the oldest audit rows are deleted
    /// (1GiB, 500MB, bytes; 0 = no bound) [default: 1GiB].
    #[arg(long, env = "A2A_GATEWAY_AUDIT_MAX_BYTES")]
    audit_max_bytes: Option<ByteSize>,
    /// Seconds between two checks of the audit retention [default: 10].
    #[arg(long, env = "A2A_GATEWAY_AUDIT_RETENTION_CHECK_SECS")]
    audit_retention_check_secs: Option<u64>,
    /// Records of a task not heard of for this long (ownership, status, push callbacks) are
    /// deleted in the background; it then answers TaskNotFound (30d, 12h, 90m, 45s; 0 = kept)
    /// [default: 30d].
    #[arg(long, env = "A2A_GATEWAY_TASK_RETENTION")]
    task_retention: Option<Age>,
    /// OTLP trace export: the collector's base URL, e.g. http://127.0.0.1:4318 (/v1/traces is
    /// added for http/protobuf) [default: OTEL_EXPORTER_OTLP_ENDPOINT; none = no export].
    #[arg(long, env = "A2A_GATEWAY_OTLP_ENDPOINT")]
    otlp_endpoint: Option<String>,
    /// OTLP transport: http/protobuf or grpc [default: OTEL_EXPORTER_OTLP_PROTOCOL, else
    /// http/protobuf].
    #[arg(long, env = "A2A_GATEWAY_OTLP_PROTOCOL")]
    otlp_protocol: Option<String>,
    /// Headers of each OTLP export, k=v,k2=v2 [default: OTEL_EXPORTER_OTLP_HEADERS].
    #[arg(long, env = "A2A_GATEWAY_OTLP_HEADERS")]
    otlp_headers: Option<String>,
    /// service.name of the exported spans [default: OTEL_SERVICE_NAME, else a2a-gateway].
    #[arg(long, env = "A2A_GATEWAY_SERVICE_NAME")]
    service_name: Option<String>,
    /// Workspaces (and, apart, agents) labelled by name in /metrics, the first seen; later
    /// ones are counted under `other` [default: 100].
    #[arg(long, env = "A2A_GATEWAY_METRICS_LABEL_CAP")]
    metrics_label_cap: Option<usize>,
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
        if let Some(v) = self.console_trusted_proxy {
            c.console_trusted_proxy = v;
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
        if let Some(v) = self.workers {
            c.workers = v;
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
        if let Some(v) = self.max_scanned_bytes {
            c.limits.max_scanned_bytes = v;
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
        if let Some(v) = self.audit_retention {
            c.audit_retention = v;
        }
        if let Some(v) = self.audit_max_bytes {
            c.audit_max_bytes = v;
        }
        if let Some(v) = self.audit_retention_check_secs {
            c.audit_retention_check_secs = v;
        }
        if let Some(v) = self.task_retention {
            c.task_retention = v;
        }
        for (set, v) in [
            (&mut c.otlp_endpoint, &self.otlp_endpoint),
            (&mut c.otlp_protocol, &self.otlp_protocol),
            (&mut c.otlp_headers, &self.otlp_headers),
            (&mut c.service_name, &self.service_name),
        ] {
            if v.is_some() {
                set.clone_from(v);
            }
        }
        if let Some(v) = self.metrics_label_cap {
            c.metrics_label_cap = v;
        }
        Ok(c)
    }
}

#[derive(Args)]
struct DemoArgs {
    /// Port of the gateway on 127.0.0.1 (0 = any free port) [default: 8080, or a free port
    /// when 8080 is taken].
    #[arg(long, env = "A2A_GATEWAY_DEMO_PORT")]
    port: Option<u16>,
    /// SQLite file of the demo [default: a fresh file in the system temp directory, removed on
    /// exit].
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

/// Serves until SIGTERM/SIGINT; each SIGHUP reads the settings again (`reread`: the file, the
/// environment and the flags) and applies them (`a2a_gateway::reload`). `log_flag`: the log
/// level came from `--log-level`/`A2A_GATEWAY_LOG_LEVEL`, which the file's does not override.
async fn serve(
    mut config: Config,
    reread: impl Fn() -> Result<Config>,
    log_flag: bool,
) -> Result<()> {
    let mut hangups = a2a_agent::listen::Hangups::new().context("catching SIGHUP")?;
    let boot = config.clone();
    let mut before = config.clone();
    let store = Store::open(&config.database)
        .with_context(|| format!("opening {}", config.database.display()))?;
    // This process serves the database: intent and completion records go through the journal
    // (a write each instead of a commit); what a killed predecessor journaled is recovered first.
    let recovered = store.open_intent_journal().with_context(|| {
        format!(
            "opening the intent journal of {}",
            config.database.display()
        )
    })?;
    if recovered.intents + recovered.outcomes > 0 {
        eprintln!(
            "recovered {} intent record(s) and {} hop outcome(s) journaled by a previous process",
            recovered.intents, recovered.outcomes
        );
    }
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("binding {}", config.listen))?;
    let addr = listener.local_addr()?;
    // Cards name the bound address when no public URL is set (`--listen 127.0.0.1:0` included).
    config.listen = addr;
    let audit = store.clone();
    let console = a2a_gateway::console::enabled(&config);
    let gateway = Gateway::new(config, store).map_err(anyhow::Error::msg)?;
    let handle = gateway.serve(listener).await?;
    println!("LISTENING http://{addr}");
    if console {
        println!("CONSOLE http://{addr}/console (log in with the admin token)");
    }
    // The runtime's size (the `workers` setting, or one per CPU).
    println!(
        "WORKERS {}",
        tokio::runtime::Handle::current().metrics().num_workers()
    );
    let shutdown = a2a_agent::listen::shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = hangups.recv() => match reload(&handle, (&boot, &before), &reread, log_flag) {
                Ok((after, done)) => {
                    eprintln!("config reloaded: {done}");
                    tracing::info!(%done, "config reloaded");
                    before = after;
                }
                Err(e) => {
                    // One line (a TOML error spans several).
                    let why = format!("{e:#}");
                    let why: Vec<&str> =
                        why.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
                    let why = why.join(" | ");
                    eprintln!("config reload refused: {why}; the running settings stay");
                    tracing::error!("config reload refused: {why}");
                }
            },
        }
    }
    handle.shutdown().await;
    // Completion records queued for the audit writer's next batch commit before we exit.
    audit.flush_audit();
    Ok(())
}

/// One reload: the settings read again and applied, the log filter first checked and set.
fn reload(
    handle: &a2a_gateway::server::ServerHandle,
    (boot, before): (&Config, &Config),
    reread: &impl Fn() -> Result<Config>,
    log_flag: bool,
) -> Result<(Config, a2a_gateway::reload::Reloaded)> {
    let after = reread()?;
    let filter = (!log_flag && after.log_level != before.log_level)
        .then(|| a2a_agent::logs::filter(after.log_level.as_deref(), "RUST_LOG", "warn"))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let done = handle
        .reload(boot, before, &after)
        .map_err(anyhow::Error::msg)?;
    if let Some(f) = filter {
        a2a_agent::logs::set_filter(f).map_err(anyhow::Error::msg)?;
    }
    Ok((after, done))
}

async fn demo(args: DemoArgs) -> Result<()> {
    let temporary = args.database.is_none();
    let db = match args.database {
        Some(p) => p,
        None => std::env::temp_dir().join(format!("a2a-gateway-demo-{}.db", std::process::id())),
    };
    let store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    store
        .open_intent_journal()
        .with_context(|| format!("opening the intent journal of {}", db.display()))?;
    // The built-in echo agent of a2a-agent: its card lists JSON-RPC and HTTP+JSON in A2A 1.0
    // and 0.3, or (`--echo-version 0.3`) a single 0.3 JSON-RPC interface, so the gateway
    // translates every call for a 0.3 peer.
    let echo_listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let mut card = a2a_agent::demo::echo_card();
    if args.echo_version == "0.3" {
        let url = format!("http://{}", echo_listener.local_addr()?);
        let mut json = card.json().clone();
        json["supportedInterfaces"] = serde_json::json!([{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}]);
        card = a2a_agent::card::AgentCard::from_json(json)
            .map_err(|e| anyhow::anyhow!("the 0.3 echo card: {e}"))?;
    }
    let server = a2a_agent::AgentServer::new(card, a2a_agent::demo::echo_handler())
        .validate_auth(false)
        .serve(echo_listener)
        .await
        .map_err(|e| anyhow::anyhow!("starting the echo agent: {e}"))?;
    let echo_url = server.url().to_owned();
    let echo_stop = move || tokio::spawn(server.shutdown());
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
    let listener = match args.port {
        Some(port) => tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .with_context(|| format!("binding 127.0.0.1:{port}"))?,
        None => match tokio::net::TcpListener::bind(("127.0.0.1", 8080)).await {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                eprintln!("a2a-gateway demo: 127.0.0.1:8080 is taken; using a free port");
                tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?
            }
            Err(e) => return Err(e).context("binding 127.0.0.1:8080"),
        },
    };
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
        // gRPC callers too (the request's `tenant` is the agent id: `echo`).
        serve_grpc: true,
        ..Config::default()
    };
    let admin_token = config.admin_token.clone().unwrap_or_default();
    let gateway = Gateway::new(config, store).map_err(anyhow::Error::msg)?;
    let base = format!("http://{addr}");
    let login = gateway.console_login_link(&base);
    let handle = gateway.serve(listener).await?;
    if key.is_empty() {
        bail!("no demo key");
    }
    let text = a2a_gateway::cli::demo_text::DemoText {
        base: &base,
        echo_url: &echo_url,
        key: &key,
        echo_version: &args.echo_version,
        database: &db.display().to_string(),
        temporary,
        cli: &a2a_gateway::cli::demo_text::a2a_cli(),
    };
    print!("{}", text.render());
    println!();
    println!(
        "# Governance (docs/gateway/governance.md): metadata.skill \"demo-denied\" is denied by"
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
    if temporary {
        // The file and its companions (WAL, shared memory, intent journal).
        for suffix in ["", "-wal", "-shm", ".intents"] {
            let mut p = db.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    // `serve` reads its settings first: the file may set the log level.
    let serving = match &cli.cmd {
        Cmd::Serve(a) if !a.check_config => Some(a.config()?),
        _ => None,
    };
    let level = cli
        .log_level
        .clone()
        .or_else(|| serving.as_ref().and_then(|c| c.log_level.clone()));
    let filter = a2a_agent::logs::filter(level.as_deref(), "RUST_LOG", "warn")
        .map_err(anyhow::Error::msg)?;
    let format = cli.log_format.unwrap_or_default();
    let runtime =
        |workers| a2a_agent::listen::runtime(workers).context("starting the async runtime");
    if !matches!(&cli.cmd, Cmd::Serve(a) if !a.check_config) {
        a2a_agent::logs::init(format, filter, None);
        return match cli.cmd {
            Cmd::Serve(a) => check_config(&a),
            Cmd::Demo(a) => runtime(0)?.block_on(demo(a)),
            Cmd::Admin(a) => runtime(0)?.block_on(a2a_gateway::admin_cmd::run(a)),
            Cmd::Config { .. } => {
                let cli = <Cli as clap::CommandFactory>::command();
                let serve = cli.find_subcommand("serve").context("no serve command")?;
                print!(
                    "{}",
                    a2a_gateway::cli::ops::sample(serve).map_err(anyhow::Error::msg)?
                );
                Ok(())
            }
            Cmd::Healthcheck(a) => {
                if let Err(e) = a2a_gateway::cli::ops::healthcheck(&a) {
                    eprintln!("a2a-gateway healthcheck: {e}");
                    std::process::exit(1);
                }
                Ok(())
            }
        };
    }
    let Cmd::Serve(a) = cli.cmd else {
        bail!("not serve");
    };
    // `serve` reads its settings before the runtime exists: they size it (`workers`), and the
    // log setup waits for them (the trace export is a layer of the subscriber).
    let config = serving.context("settings not read")?;
    let log_flag = cli.log_level.is_some();
    let export = a2a_agent::otel::Export::from_env(&config.otlp(), "a2a-gateway")
        .map_err(anyhow::Error::msg)?;
    if export.is_some() {
        // SAFETY: no other thread yet (the runtime starts below).
        unsafe { a2a_agent::otel::Tracing::take_header_variables() };
    }
    let rt = runtime(config.workers)?;
    // Started inside the runtime (the gRPC exporter's channel lives there).
    let traces = match &export {
        Some(e) => Some(
            rt.block_on(async { a2a_agent::otel::Tracing::start(e) })
                .map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    a2a_agent::logs::init(format, filter, traces.as_ref());
    let done = rt.block_on(serve(config, move || a.config(), log_flag));
    // The spans still queued are sent before the process exits (SIGTERM included).
    if let Some(t) = traces {
        t.shutdown();
    }
    done
}

/// `serve --check-config`: 0 and "config ok" when the gateway would start with the settings,
/// 2 and the error otherwise.
fn check_config(a: &ServeArgs) -> Result<()> {
    let checked = a.config().and_then(|c| {
        a2a_agent::logs::filter(c.log_level.as_deref(), "RUST_LOG", "warn")
            .map_err(anyhow::Error::msg)?;
        a2a_agent::otel::Export::from_env(&c.otlp(), "a2a-gateway").map_err(anyhow::Error::msg)?;
        let store = Store::open_in_memory()?;
        Gateway::new(c, store).map_err(anyhow::Error::msg)?;
        Ok(())
    });
    match checked {
        Ok(()) => {
            println!("config ok");
            Ok(())
        }
        Err(e) => {
            eprintln!("config error: {e:#}");
            std::process::exit(2);
        }
    }
}
