//! `a2a-agent`: serve a command (`--exec`) or the built-in echo agent (`--echo`) as an A2A agent.

/// jemalloc instead of the system allocator: glibc malloc/free was the largest single cost in
/// the profile of an echo request (docs/benchmarks.md, "Allocator").
#[cfg(all(feature = "jemalloc", unix, not(target_env = "musl")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's start-up options (its `malloc_conf`; `_RJEM_MALLOC_CONF` in the environment still
/// applies on top): each thread's cache is trimmed after every 1 MiB allocated instead of every
/// 64 KiB. The trims were about 3.5 % of an echo request's instructions; the cache each thread
/// may keep between trims stays bounded by jemalloc's per-size limits (docs/benchmarks.md,
/// "the echo path without the router").
#[cfg(all(feature = "jemalloc", unix, not(target_env = "musl")))]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static MALLOC_CONF: &[u8; 29] = b"tcache_gc_incr_bytes:1048576\0";

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
    /// Check the settings (file, environment, flags, card) and exit: 0 and "config ok" when
    /// the agent would start with them, 2 and the error otherwise. Opens no store.
    #[arg(long)]
    check_config: bool,
    /// Agent card JSON file (A2A 1.0 shape). Default: a card built from --name/--description/--agent-version.
    #[arg(long, env = "A2A_AGENT_CARD")]
    card: Option<PathBuf>,
    /// Command run per message through `sh -c` (text on stdin, message JSON in $A2A_MESSAGE;
    /// stderr lines are progress, stdout the answer).
    #[arg(long, env = "A2A_AGENT_EXEC", conflicts_with = "echo")]
    exec: Option<String>,
    /// How the --exec program's stdout is read: `text` (all of it is the answer) or `jsonl` (each
    /// line a JSON event: status, artifact, message, final; see docs/agent.md). Default: text.
    #[arg(long, env = "A2A_AGENT_EXEC_EVENTS", default_value = "text")]
    exec_events: a2a_agent::exec::ExecEvents,
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
    /// Card name (overrides the --card file's `name`). Default: the command name, or "echo".
    #[arg(long)]
    name: Option<String>,
    /// Card description (overrides the --card file's `description`).
    #[arg(long)]
    description: Option<String>,
    /// Card version (overrides the --card file's `version`). Default: 1.0.0.
    #[arg(long)]
    agent_version: Option<String>,
    /// Every `AgentConfig` field: a flag, an env var (`A2A_AGENT_<FIELD>`) and a TOML key.
    #[command(flatten)]
    cfg: a2a_agent::config::ConfigArgs,
    /// Serve Prometheus metrics at GET {base}/metrics.
    #[arg(long, env = "A2A_AGENT_METRICS")]
    metrics: bool,
    /// Log as JSON lines (the same as --log-format json).
    #[arg(long, env = "A2A_AGENT_LOG_JSON")]
    log_json: bool,
    /// Log line format: text or json [default: text].
    #[arg(long, env = "A2A_AGENT_LOG_FORMAT")]
    log_format: Option<a2a_agent::logs::LogFormat>,
    /// Log filter: a level (error, warn, info, debug, trace) or tracing directives such as
    /// `info,a2a_agent=debug`; overrides A2A_AGENT_LOG [default: info].
    #[arg(long)]
    log_level: Option<String>,
}

fn build_config(s: &Serve) -> anyhow::Result<AgentConfig> {
    let mut cfg = match &s.config {
        Some(p) => AgentConfig::from_toml(&std::fs::read_to_string(p)?)
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?,
        None => AgentConfig::default(),
    };
    s.cfg.apply(&mut cfg);
    Ok(cfg)
}

async fn serve(s: Serve, mut cfg: AgentConfig) -> anyhow::Result<()> {
    let auth_set = s.cfg.validate_auth.is_some()
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
            Arc::new(a2a_agent::exec::ExecHandler::new(cmd.clone()).events(s.exec_events)),
            cmd.split_whitespace().next().unwrap_or("agent").to_string(),
        ),
        (None, true) => (Arc::new(a2a_agent::demo::echo_handler()), "echo".into()),
        (None, false) => anyhow::bail!("give --exec 'CMD ARGS' or --echo"),
    };
    let card = match &s.card {
        // --name/--description/--agent-version override the file's fields (the Camel guide).
        Some(p) => {
            let mut j = AgentCard::from_file(p)?.json().clone();
            for (k, v) in [
                ("name", &s.name),
                ("description", &s.description),
                ("version", &s.agent_version),
            ] {
                if let Some(v) = v {
                    j[k] = serde_json::Value::String(v.clone());
                }
            }
            AgentCard::from_json(j)?
        }
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
        let handle = a2a_agent::metrics::install().map_err(|e| anyhow::anyhow!("metrics: {e}"))?;
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
        // The runtime's size (the `workers` setting, or one per CPU).
        let workers = tokio::runtime::Handle::current().metrics().num_workers();
        writeln!(out, "WORKERS {workers}")?;
        out.flush()?;
    }
    a2a_agent::listen::shutdown_signal().await;
    tracing::info!("shutting down");
    server.shutdown().await;
    Ok(())
}

fn main() -> std::process::ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let cmd = Cli::command().mut_subcommand("serve", a2a_agent::config::ConfigArgs::with_env);
    let cli = match Cli::from_arg_matches(&cmd.get_matches()) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let Cmd::Serve(s) = cli.cmd;
    let filter = match a2a_agent::logs::filter(s.log_level.as_deref(), "A2A_AGENT_LOG", "info") {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let format = match (s.log_format, s.log_json) {
        (Some(f), _) => f,
        (None, true) => a2a_agent::logs::LogFormat::Json,
        (None, false) => a2a_agent::logs::LogFormat::Text,
    };
    a2a_agent::logs::init(format, filter);
    if s.check_config {
        let checked = build_config(&s).and_then(|_| {
            if s.exec.is_none() && !s.echo {
                anyhow::bail!("give --exec 'CMD ARGS' or --echo");
            }
            if let Some(p) = &s.card {
                AgentCard::from_file(p)?;
            }
            Ok(())
        });
        return match checked {
            Ok(()) => {
                println!("config ok");
                std::process::ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("config error: {e:#}");
                std::process::ExitCode::from(2)
            }
        };
    }
    // The settings are read before the runtime exists: they size it (`workers`).
    let done = build_config(&s).and_then(|cfg| {
        let rt = a2a_agent::listen::runtime(cfg.workers)?;
        rt.block_on(serve(*s, cfg))
    });
    match done {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("a2a-agent: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
