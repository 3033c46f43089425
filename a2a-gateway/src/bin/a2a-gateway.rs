//! `a2a-gateway`: serve the governed A2A gateway, run the demo, or manage the registry.

/// jemalloc instead of the system allocator: glibc malloc/free was the largest single cost in
/// the profile of an echo request (docs/benchmarks.md, "Allocator").
#[cfg(all(feature = "jemalloc", unix, not(target_env = "musl")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's start-up options (its `malloc_conf`; `_RJEM_MALLOC_CONF` in the environment still
/// applies on top): a background thread returns freed pages to the system over jemalloc's decay
/// times. Without it, pages are only returned when their arena allocates again, so a gateway
/// that went idle after a burst of large messages kept the burst's memory.
#[cfg(all(feature = "jemalloc", unix, not(target_env = "musl")))]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static MALLOC_CONF: &[u8; 23] = b"background_thread:true\0";

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};

use a2a_gateway::cli::serve::ServeArgs;
use a2a_gateway::config::Config;
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
    /// Manage workspaces, agents, keys and the audit log directly in the database (a SQLite
    /// file or a PostgreSQL URL); `admin migrate-store` copies a SQLite file to PostgreSQL.
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
struct DemoArgs {
    /// Port of the gateway on 127.0.0.1 (0 = any free port) [default: 8080, or a free port
    /// when 8080 is taken].
    #[arg(long, env = "A2A_GATEWAY_DEMO_PORT")]
    port: Option<u16>,
    /// SQLite file of the demo (the demo runs on SQLite only, never a PostgreSQL URL)
    /// [default: a fresh file in the system temp directory, removed on exit].
    #[arg(long)]
    database: Option<PathBuf>,
    /// A2A version the built-in echo agent speaks (the gateway translates for the other).
    #[arg(long, default_value = "1.0", value_parser = ["0.3", "1.0"])]
    echo_version: String,
    /// On SIGTERM/SIGINT, how long calls may finish (whole seconds) before open streams end
    /// with an a2a_shutting_down error event and waiting calls are answered with it.
    #[arg(long, default_value = "5s", env = "A2A_GATEWAY_SHUTDOWN_GRACE")]
    shutdown_grace: a2a_gateway::config::Dur,
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
    // A SQLite file: this process serves it alone. A PostgreSQL URL: every store there.
    let store = match config.postgres_url() {
        Some(_) => None,
        None => Some(open_sqlite(&config)?),
    };
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("binding {}", config.listen))?;
    let addr = listener.local_addr()?;
    // Cards name the bound address when no public URL is set (`--listen 127.0.0.1:0` included).
    config.listen = addr;
    let console = a2a_gateway::console::enabled(&config);
    let shutdown = a2a_agent::listen::shutdown_signal();
    tokio::pin!(shutdown);
    let handle = match store {
        Some(store) => {
            let handle = Gateway::new(config, store)
                .map_err(anyhow::Error::msg)?
                .serve(listener)
                .await?;
            println!("LISTENING http://{addr}");
            handle
        }
        // On PostgreSQL the replica serves at once, also while the database cannot be
        // reached (503 until it can; docs/replicas.md, "Failures").
        None => {
            let starting = Gateway::serve_on_postgres(config, listener).await?;
            println!("LISTENING http://{addr}");
            tokio::select! {
                h = starting.ready() => h.map_err(anyhow::Error::msg)?,
                _ = &mut shutdown => return Ok(()),
            }
        }
    };
    let audit = handle.state().audit.clone();
    if console {
        println!("CONSOLE http://{addr}/console (log in with the admin token)");
    }
    // The runtime's size (the `workers` setting, or one per CPU).
    println!(
        "WORKERS {}",
        tokio::runtime::Handle::current().metrics().num_workers()
    );
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = hangups.recv() => match reload(&handle, (&boot, &before), &reread, log_flag) {
                Ok((after, done)) => {
                    a2a_agent::cli_tools::report_reload(Ok(&done));
                    before = after;
                }
                Err(e) => a2a_agent::cli_tools::report_reload(Err(&format!("{e:#}"))),
            },
        }
    }
    handle.shutdown().await;
    // Completion records queued for the audit writer's next batch commit before we exit.
    a2a_gateway::store::backend::AuditStore::flushed(&audit).await;
    Ok(())
}

/// The SQLite file of `config.database`, with its intent journal opened: this process serves
/// the file, so intent and completion records go through the journal (a write each instead of
/// a commit); what a killed predecessor journaled is recovered first.
fn open_sqlite(config: &Config) -> Result<Store> {
    let store = Store::open(&config.database)
        .with_context(|| format!("opening {}", config.database.display()))?;
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
    Ok(store)
}

/// One reload: the settings read again; the process's part (log filter, trace export) and the
/// gateway's checked, then applied. Nothing changes when any part is refused.
fn reload(
    handle: &a2a_gateway::server::ServerHandle,
    (boot, before): (&Config, &Config),
    reread: &impl Fn() -> Result<Config>,
    log_flag: bool,
) -> Result<(Config, a2a_gateway::reload::Reloaded)> {
    use a2a_agent::cli_tools::{LogLevel, stage_reload};
    let after = reread()?;
    let (b, a) = (before, &after);
    let log = (!log_flag && a.log_level != b.log_level).then_some(LogLevel {
        level: a.log_level.as_deref(),
        env_var: "RUST_LOG",
        default: "warn",
    });
    let traced = a.otlp() != b.otlp();
    let process =
        stage_reload(log, traced.then(|| (a.otlp(), "a2a-gateway"))).map_err(anyhow::Error::msg)?;
    let done = handle
        .reload(boot, before, &after)
        .map_err(anyhow::Error::msg)?;
    process.commit().map_err(anyhow::Error::msg)?;
    Ok((after, done))
}

async fn demo(args: DemoArgs) -> Result<()> {
    let temporary = args.database.is_none();
    let db = match args.database {
        Some(p) => p,
        None => a2a_gateway::cli::demo::temporary_database(&std::env::temp_dir()),
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
    let holds = a2a_gateway::store::backend::SqliteHolds::new(store.clone());
    a2a_gateway::governance::demo::install(
        &a2a_gateway::store::backend::SqliteGovDocs::new(store.clone()),
        &holds,
        "demo",
    )
    .await?;
    a2a_gateway::governance::demo::install_approvals(&holds, "demo", "echo").await?;
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
        shutdown_grace_secs: a2a_agent::settings::whole_secs(args.shutdown_grace)
            .map_err(|e| anyhow::anyhow!("--shutdown-grace: {e}"))?,
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
    demo_ends().await;
    handle.shutdown().await;
    for a in ext_agents {
        a.shutdown().await;
    }
    let _ = echo_stop().await;
    if temporary {
        a2a_gateway::cli::demo::remove_database(&db);
    }
    Ok(())
}

/// The demo runs until Ctrl-C, SIGTERM or SIGHUP (its terminal closed): each ends it cleanly,
/// removing its temporary database.
async fn demo_ends() {
    #[cfg(unix)]
    if let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        tokio::select! {
            _ = a2a_agent::listen::shutdown_signal() => {}
            _ = hup.recv() => {}
        }
        return;
    }
    a2a_agent::listen::shutdown_signal().await;
}

/// The command line's parser, the boolean settings of `serve` as switches (`--dev`,
/// `--no-dev`).
fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command().mut_subcommand("serve", |c| {
        a2a_agent::settings::switches(c, a2a_gateway::config::SWITCHES)
    })
}

fn main() -> Result<()> {
    use a2a_gateway::config::{ALIASES, SWITCHES};
    use clap::FromArgMatches;
    // Deprecated names (environment and flags) read as ours, before anything else runs.
    // SAFETY: no other thread yet.
    let mut notes = unsafe { a2a_agent::settings::rewrite_env("A2A_GATEWAY_", ALIASES) };
    let args: Vec<String> = std::env::args().collect();
    let args = if args.iter().any(|a| a == "serve" || a == "demo") {
        let switches: Vec<String> = SWITCHES.iter().map(|s| s.replace('_', "-")).collect();
        let switches: Vec<&str> = switches.iter().map(String::as_str).collect();
        let (args, arg_notes) = a2a_agent::settings::rewrite_args(args, ALIASES, &switches);
        notes.extend(arg_notes);
        args
    } else {
        args
    };
    let cli = Cli::from_arg_matches(&command().get_matches_from(args)).unwrap_or_else(|e| e.exit());
    // `serve` reads its settings first: the file may set the log level.
    let serving = match &cli.cmd {
        Cmd::Serve(a) if !a.check_config => {
            let (config, file_notes) = a.config_noting()?;
            notes.extend(file_notes);
            Some(config)
        }
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
        a2a_agent::settings::log_notes(&notes);
        return match cli.cmd {
            Cmd::Serve(a) => check_config(&a),
            Cmd::Demo(a) => runtime(0)?.block_on(demo(a)),
            Cmd::Admin(a) => runtime(0)?.block_on(a2a_gateway::admin_cmd::run(a)),
            Cmd::Config { .. } => {
                let cli = command();
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
    let workers = config.workers;
    let main = async move {
        a2a_agent::settings::log_notes(&notes);
        serve(config, move || a.config(), log_flag).await
    };
    // SAFETY: no other thread yet.
    unsafe { a2a_agent::cli_tools::serve_traced(export, workers, format, filter, main) }
        .context("starting the async runtime")?
}

/// `serve --check-config`: 0 and "config ok" when the gateway would start with the settings,
/// 2 and the error otherwise.
fn check_config(a: &ServeArgs) -> Result<()> {
    let checked = a.config_noting().and_then(|(c, notes)| {
        a2a_agent::settings::log_notes(&notes);
        a2a_agent::logs::filter(c.log_level.as_deref(), "RUST_LOG", "warn")
            .map_err(anyhow::Error::msg)?;
        a2a_agent::otel::Export::from_env(&c.otlp(), "a2a-gateway").map_err(anyhow::Error::msg)?;
        if let Some(url) = c.postgres_url() {
            a2a_pg::pg_config(url, &c.pool_options()).map_err(anyhow::Error::msg)?;
        }
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
