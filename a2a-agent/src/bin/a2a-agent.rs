//! `a2a-agent`: serve a command (`--exec`) or the built-in echo agent (`--echo`) as an A2A agent.

/// jemalloc instead of the system allocator: glibc malloc/free was the largest single cost in
/// the profile of an echo request (docs/benchmarks.md, "Allocator").
#[cfg(all(feature = "jemalloc", unix, not(target_env = "musl")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use a2a_agent::{AgentCard, AgentConfig, AgentServer, Handler};
use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "a2a-agent",
    version,
    about = "Serve a handler or a command as an A2A agent (0.3 and 1.0, JSON-RPC and HTTP+JSON)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve an agent.
    Serve(Box<Serve>),
}

#[derive(Args)]
struct Serve {
    /// Agent card JSON file (A2A 1.0 shape). Default: a card built from --name/--description/--agent-version.
    #[arg(long, env = "A2A_AGENT_CARD")]
    card: Option<PathBuf>,
    /// Command run per message through `sh -c` (text on stdin, message JSON in $A2A_MESSAGE;
    /// stderr lines are progress, stdout the answer).
    #[arg(long, env = "A2A_AGENT_EXEC", conflicts_with = "echo")]
    exec: Option<String>,
    /// Serve the built-in echo agent.
    #[arg(long)]
    echo: bool,
    /// TOML configuration file (keys as in the flags, snake_case). Flags and env override it.
    #[arg(long, env = "A2A_AGENT_CONFIG")]
    config: Option<PathBuf>,
    /// Interface to bind. Default: 127.0.0.1.
    #[arg(long, env = "A2A_AGENT_HOST", default_value = "127.0.0.1")]
    host: String,
    /// Port to bind (0 = any free port). Default: 8080.
    #[arg(long, env = "A2A_AGENT_PORT", default_value_t = 8080)]
    port: u16,
    /// Card name when no --card is given. Default: the command name, or "echo".
    #[arg(long)]
    name: Option<String>,
    /// Card description when no --card is given.
    #[arg(long)]
    description: Option<String>,
    /// Card version when no --card is given. Default: 1.0.0.
    #[arg(long)]
    agent_version: Option<String>,
    /// Path prefix of every endpoint. Default: "".
    #[arg(long, env = "A2A_AGENT_BASE_PATH")]
    base_path: Option<String>,
    /// Require authentication (true/false). Default: true (fails closed if the card has no
    /// scheme), except with --echo and no --card, where the local demo defaults to false.
    #[arg(long, env = "A2A_AGENT_VALIDATE_AUTH")]
    validate_auth: Option<bool>,
    /// API key accepted by the card's apiKey scheme.
    #[arg(long, env = "A2A_AGENT_API_KEY")]
    api_key: Option<String>,
    /// Header carrying the API key when the scheme names none. Default: Authorization.
    #[arg(long, env = "A2A_AGENT_API_KEY_HEADER")]
    api_key_header: Option<String>,
    /// Static bearer token accepted by the card's HTTP bearer scheme.
    #[arg(long, env = "A2A_AGENT_BEARER_TOKEN")]
    bearer_token: Option<String>,
    /// Endpoint default: sends return the SUBMITTED task at once (true/false). Default: false.
    #[arg(long, env = "A2A_AGENT_RETURN_IMMEDIATELY")]
    return_immediately: Option<bool>,
    /// A task running longer than this fails (ms). Default: 300000.
    #[arg(long, env = "A2A_AGENT_ASYNC_TIMEOUT_MS")]
    async_timeout_ms: Option<u64>,
    /// Maximum concurrently running tasks (0 = unlimited). Default: 0.
    #[arg(long, env = "A2A_AGENT_MAX_CONCURRENT_TASKS")]
    max_concurrent_tasks: Option<usize>,
    /// Queue for async sends when every slot is busy (0 = none). Default: 0.
    #[arg(long, env = "A2A_AGENT_TASK_QUEUE_SIZE")]
    task_queue_size: Option<usize>,
    /// Maximum request body in bytes. Default: 6291456.
    #[arg(long, env = "A2A_AGENT_MAX_PAYLOAD_SIZE")]
    max_payload_size: Option<usize>,
    /// SSE heartbeat interval (ms). Default: 15000.
    #[arg(long, env = "A2A_AGENT_SSE_HEARTBEAT_INTERVAL_MS")]
    sse_heartbeat_interval_ms: Option<u64>,
    /// Events buffered per SSE connection. Default: 1000.
    #[arg(long, env = "A2A_AGENT_SSE_QUEUE_CAPACITY")]
    sse_queue_capacity: Option<usize>,
    /// Bytes queued per streaming connection (0 = unlimited); a client further behind gets the
    /// task snapshot and its stream ends. Default: 4194304 (4 MiB).
    #[arg(long, env = "A2A_AGENT_SSE_QUEUE_MAX_BYTES")]
    sse_queue_max_bytes: Option<usize>,
    /// CORS allowed origin (repeatable; `*` = any). Default: CORS off.
    #[arg(
        long = "cors-origin",
        env = "A2A_AGENT_CORS_ORIGINS",
        value_delimiter = ','
    )]
    cors_allowed_origins: Vec<String>,
    /// Agent card Cache-Control max-age (s). Default: 300.
    #[arg(long, env = "A2A_AGENT_CARD_MAX_AGE_S")]
    card_max_age_s: Option<u64>,
    /// SQLite task database (tasks survive restarts). Default: bounded in-memory store.
    #[arg(long, env = "A2A_AGENT_SQLITE_PATH")]
    sqlite_path: Option<PathBuf>,
    /// In-memory store capacity. Default: 10000.
    #[arg(long, env = "A2A_AGENT_MEMORY_STORE_CAP")]
    memory_store_cap: Option<usize>,
    /// Terminal task TTL in the in-memory store (s). Default: 3600.
    #[arg(long, env = "A2A_AGENT_TERMINAL_TASK_TTL_S")]
    terminal_task_ttl_s: Option<u64>,
    /// In-memory store bound in bytes (0 = unlimited). Default: 268435456 (256 MiB).
    #[arg(long, env = "A2A_AGENT_MEMORY_STORE_MAX_BYTES")]
    memory_store_max_bytes: Option<usize>,
    /// Largest task in bytes; bigger messages are refused (0 = unlimited). Default: 16777216.
    #[arg(long, env = "A2A_AGENT_MAX_TASK_BYTES")]
    max_task_bytes: Option<usize>,
    /// Most messages kept in a task's history (0 = unlimited). Default: 1000.
    #[arg(long, env = "A2A_AGENT_MAX_HISTORY_LENGTH")]
    max_history_length: Option<usize>,
    /// On SIGTERM/SIGINT: stop accepting, let running tasks finish for this long, then fail
    /// the rest (streams get the FAILED event, blocking sends the FAILED task) and exit 0 (ms).
    /// Default: 10000.
    #[arg(long, env = "A2A_AGENT_SHUTDOWN_GRACE_MS")]
    shutdown_grace_ms: Option<u64>,
    /// Time allowed for a request's headers to arrive (ms). Default: 10000.
    #[arg(long, env = "A2A_AGENT_HEADER_READ_TIMEOUT_MS")]
    header_read_timeout_ms: Option<u64>,
    /// Time allowed for a request's whole body to arrive, 408 beyond (ms). Default: 30000.
    #[arg(long, env = "A2A_AGENT_BODY_READ_TIMEOUT_MS")]
    body_read_timeout_ms: Option<u64>,
    /// Close a keep-alive connection with no request in flight after (ms). Default: 60000.
    #[arg(long, env = "A2A_AGENT_IDLE_TIMEOUT_MS")]
    idle_timeout_ms: Option<u64>,
    /// Open connections at most, 503 beyond (0 = from the fd limit; always kept below
    /// RLIMIT_NOFILE minus a margin). Default: 10000.
    #[arg(long, env = "A2A_AGENT_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Public base URL for the card's interfaces. Default: the listening address.
    #[arg(long, env = "A2A_AGENT_PUBLIC_URL")]
    public_url: Option<String>,
    /// Serve Prometheus metrics at GET {base}/metrics.
    #[arg(long, env = "A2A_AGENT_METRICS")]
    metrics: bool,
    /// Log as JSON lines.
    #[arg(long, env = "A2A_AGENT_LOG_JSON")]
    log_json: bool,
}

macro_rules! overlay {
    ($cfg:ident, $s:ident, $($f:ident),*) => {
        $( if let Some(v) = $s.$f.clone() { $cfg.$f = v.into(); } )*
    };
}

fn build_config(s: &Serve) -> anyhow::Result<AgentConfig> {
    let mut cfg = match &s.config {
        Some(p) => AgentConfig::from_toml(&std::fs::read_to_string(p)?)
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?,
        None => AgentConfig::default(),
    };
    overlay!(
        cfg,
        s,
        base_path,
        validate_auth,
        api_key_header,
        return_immediately,
        async_timeout_ms,
        max_concurrent_tasks,
        task_queue_size,
        max_payload_size,
        sse_heartbeat_interval_ms,
        sse_queue_capacity,
        sse_queue_max_bytes,
        card_max_age_s,
        memory_store_cap,
        terminal_task_ttl_s,
        memory_store_max_bytes,
        max_task_bytes,
        max_history_length,
        shutdown_grace_ms,
        header_read_timeout_ms,
        body_read_timeout_ms,
        idle_timeout_ms,
        max_connections
    );
    if s.api_key.is_some() {
        cfg.api_key = s.api_key.clone();
    }
    if s.bearer_token.is_some() {
        cfg.bearer_token = s.bearer_token.clone();
    }
    if s.sqlite_path.is_some() {
        cfg.sqlite_path = s.sqlite_path.clone();
    }
    if s.public_url.is_some() {
        cfg.public_url = s.public_url.clone();
    }
    if !s.cors_allowed_origins.is_empty() {
        cfg.cors_allowed_origins = s.cors_allowed_origins.clone();
    }
    Ok(cfg)
}

async fn serve(s: Serve) -> anyhow::Result<()> {
    let mut cfg = build_config(&s)?;
    let auth_set = s.validate_auth.is_some()
        || s.config
            .as_ref()
            .is_some_and(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("validate_auth")));
    if s.echo && s.card.is_none() && !auth_set {
        cfg.validate_auth = false;
        tracing::warn!(
            "--echo demo: operations are served without authentication (local use only)"
        );
    }
    let (handler, default_name): (Arc<dyn Handler>, String) = match (&s.exec, s.echo) {
        (Some(cmd), _) => (
            Arc::new(a2a_agent::exec::ExecHandler::new(cmd.clone())),
            cmd.split_whitespace().next().unwrap_or("agent").to_string(),
        ),
        (None, true) => (Arc::new(a2a_agent::demo::echo_handler()), "echo".into()),
        (None, false) => anyhow::bail!("give --exec 'CMD ARGS' or --echo"),
    };
    let card = match &s.card {
        Some(p) => AgentCard::from_file(p)?,
        None if s.echo && s.name.is_none() => a2a_agent::demo::echo_card(),
        None => AgentCard::builder(
            s.name.as_deref().unwrap_or(&default_name),
            s.description
                .as_deref()
                .unwrap_or("An A2A agent served by a2a-agent"),
            s.agent_version.as_deref().unwrap_or("1.0.0"),
        )
        .build(),
    };
    let listener = tokio::net::TcpListener::bind((s.host.as_str(), s.port)).await?;
    let mut server = AgentServer::with_handler(card, handler).config(cfg);
    if s.metrics {
        let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
            .install_recorder()
            .map_err(|e| anyhow::anyhow!("metrics: {e}"))?;
        server = server.metrics(handle);
    }
    let server = server.serve(listener).await?;
    let url = server.url().to_string();
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "LISTENING {url}")?;
        writeln!(
            out,
            "try: curl -s -X POST {url}/ -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
             -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{{\"message\":{{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{{\"text\":\"hello\"}}]}}}}}}'"
        )?;
        out.flush()?;
    }
    a2a_agent::listen::shutdown_signal().await;
    tracing::info!("shutting down");
    server.shutdown().await;
    Ok(())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let Cmd::Serve(s) = cli.cmd;
    let filter = tracing_subscriber::EnvFilter::try_from_env("A2A_AGENT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if s.log_json {
        builder.json().init();
    } else {
        builder.init();
    }
    match serve(*s).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("a2a-agent: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
