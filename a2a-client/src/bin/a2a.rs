//! `a2a`: a command-line A2A client (any agent, protocol 0.3 or 1.0, JSON-RPC or HTTP+JSON).
//!
//! A thin layer over the `a2a_client` library: it parses flags, builds an [`A2aClient`] (card
//! discovery and interface selection, or a forced binding/version), calls one operation and
//! prints the result: readable text by default (streams print each event as it arrives), or the
//! 1.0 JSON with `--json` (one JSON document per line for streams).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use a2a_client::auth::{ApiKeyLocation, Credential};
use a2a_client::select::{Binding, SelectedInterface, Version};
use a2a_client::transport::EventStream;
use a2a_client::{A2aClient, ClientBuilder, ClientError};
use a2a_types::v1;
use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use futures_util::StreamExt;

/// Talk to an A2A agent from the command line.
///
/// URL is the agent's base URL: its card is fetched from URL/.well-known/agent-card.json and the
/// first interface this client can speak is used (force one with --binding / --a2a-version).
#[derive(Parser, Debug)]
#[command(name = "a2a", version)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Flags accepted by every command.
#[derive(Args, Debug)]
struct Global {
    /// Protocol version to speak: `1.0` or `0.3` (default: the card's first usable entry).
    #[arg(long = "a2a-version", global = true, value_name = "VERSION")]
    a2a_version: Option<String>,
    /// Binding to use: `jsonrpc`, `http+json` (alias `rest`) or `grpc` (1.0; TLS for `https` URLs).
    #[arg(long, global = true, value_enum)]
    binding: Option<BindingArg>,
    /// Do not fetch the card: URL is the interface itself (needs --binding and --a2a-version).
    #[arg(long, global = true)]
    no_card: bool,
    /// Tenant to send with --no-card (with a card, the selected entry's tenant is used).
    #[arg(long, global = true, value_name = "TENANT")]
    tenant: Option<String>,
    /// Extra request header `NAME:VALUE` (repeatable); replaces a header the client would set.
    #[arg(long = "header", short = 'H', global = true, value_name = "NAME:VALUE")]
    headers: Vec<String>,
    /// API key to send (see --api-key-name and --api-key-in).
    #[arg(
        long,
        global = true,
        env = "A2A_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    api_key: Option<String>,
    /// Name of the API key header, query parameter or cookie.
    #[arg(long, global = true, default_value = "X-API-Key", value_name = "NAME")]
    api_key_name: String,
    /// Where the API key goes.
    #[arg(long, global = true, value_enum, default_value = "header")]
    api_key_in: KeyIn,
    /// Bearer token (`Authorization: Bearer TOKEN`).
    #[arg(
        long,
        global = true,
        env = "A2A_BEARER",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    bearer: Option<String>,
    /// Extension URI to request via A2A-Extensions (repeatable).
    #[arg(long = "extension", global = true, value_name = "URI")]
    extensions: Vec<String>,
    /// Timeout of a unary call, in seconds (streams are not cut).
    #[arg(long, global = true, default_value_t = 100, value_name = "SECS")]
    timeout: u64,
    /// Print the raw 1.0 JSON result (one JSON document per line for streams).
    #[arg(long, global = true)]
    json: bool,
    /// Also trust the CA certificates of this PEM file (every binding: cards, JSON-RPC,
    /// HTTP+JSON and gRPC over TLS), beside the system's roots.
    #[arg(long, global = true, value_name = "PEM_FILE", env = "A2A_CACERT")]
    cacert: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum BindingArg {
    /// JSON-RPC 2.0.
    #[value(name = "jsonrpc")]
    JsonRpc,
    /// HTTP+JSON (REST).
    #[value(name = "http+json", alias = "rest")]
    HttpJson,
    /// gRPC (A2A 1.0; TLS for `https` interfaces, plaintext HTTP/2 for `http`).
    #[value(name = "grpc")]
    Grpc,
}

impl BindingArg {
    fn binding(self) -> Binding {
        match self {
            BindingArg::JsonRpc => Binding::JsonRpc,
            BindingArg::HttpJson => Binding::HttpJson,
            BindingArg::Grpc => Binding::Grpc,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum KeyIn {
    /// A request header.
    Header,
    /// A query parameter.
    Query,
    /// A cookie.
    Cookie,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Fetch and show the agent card (the selected interface is marked).
    Card {
        /// Agent base URL.
        url: String,
        /// Fetch the authenticated extended card instead.
        #[arg(long)]
        extended: bool,
    },
    /// Send a message (text plus optional data/file parts).
    Send(SendArgs),
    /// Task operations.
    #[command(subcommand)]
    Task(TaskCmd),
    /// Push notification config operations.
    #[command(subcommand)]
    Push(PushCmd),
}

#[derive(Args, Debug)]
struct SendArgs {
    /// Agent base URL.
    url: String,
    /// Message text.
    text: String,
    /// Stream the answer (SendStreamingMessage), printing events as they arrive.
    #[arg(long)]
    stream: bool,
    /// Add a data part with this JSON value.
    #[arg(long, value_name = "JSON")]
    data: Option<String>,
    /// Add a file part with this file's bytes.
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// Continue this task.
    #[arg(long, value_name = "ID")]
    task_id: Option<String>,
    /// Use this context.
    #[arg(long, value_name = "ID")]
    context_id: Option<String>,
    /// Return as soon as the task exists (returnImmediately / 0.3 blocking=false).
    #[arg(long)]
    no_wait: bool,
    /// At most this many history messages in the answer.
    #[arg(long, value_name = "N")]
    history_length: Option<i32>,
}

#[derive(Subcommand, Debug)]
enum TaskCmd {
    /// Get a task.
    Get {
        /// Agent base URL.
        url: String,
        /// Task id.
        id: String,
        /// At most this many history messages.
        #[arg(long, value_name = "N")]
        history_length: Option<i32>,
    },
    /// List tasks (1.0 only).
    List {
        /// Agent base URL.
        url: String,
        /// Only tasks of this context.
        #[arg(long, value_name = "ID")]
        context_id: Option<String>,
        /// Only tasks in this state (e.g. TASK_STATE_WORKING or working).
        #[arg(long, value_name = "STATE")]
        status: Option<String>,
        /// Page size (1-100).
        #[arg(long, value_name = "N")]
        page_size: Option<i32>,
        /// Page token from a previous page.
        #[arg(long, value_name = "TOKEN")]
        page_token: Option<String>,
    },
    /// Cancel a task.
    Cancel {
        /// Agent base URL.
        url: String,
        /// Task id.
        id: String,
    },
    /// Subscribe to a task's events (printed as they arrive).
    Subscribe {
        /// Agent base URL.
        url: String,
        /// Task id.
        id: String,
    },
}

#[derive(Subcommand, Debug)]
enum PushCmd {
    /// Create a push notification config for a task.
    Set {
        /// Agent base URL.
        url: String,
        /// Task id.
        task_id: String,
        /// Webhook URL the agent will POST to.
        webhook: String,
        /// Config id.
        #[arg(long, value_name = "ID")]
        id: Option<String>,
        /// Token the agent echoes to the webhook.
        #[arg(long, value_name = "TOKEN")]
        token: Option<String>,
        /// Authorization scheme the agent uses towards the webhook (e.g. Bearer).
        #[arg(long, value_name = "SCHEME")]
        auth_scheme: Option<String>,
        /// Credentials for --auth-scheme.
        #[arg(long, value_name = "CREDENTIALS", requires = "auth_scheme")]
        auth_credentials: Option<String>,
    },
    /// Get a push notification config.
    Get {
        /// Agent base URL.
        url: String,
        /// Task id.
        task_id: String,
        /// Config id.
        id: String,
    },
    /// List a task's push notification configs.
    List {
        /// Agent base URL.
        url: String,
        /// Task id.
        task_id: String,
    },
    /// Delete a push notification config.
    Delete {
        /// Agent base URL.
        url: String,
        /// Task id.
        task_id: String,
        /// Config id.
        id: String,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("a2a: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn version_of(s: &str) -> Result<Version> {
    match s.trim() {
        "1" | "1.0" => Ok(Version::V1),
        "0.3" | "0.3.0" => Ok(Version::V03),
        other => bail!("unsupported --a2a-version {other:?} (use 1.0 or 0.3)"),
    }
}

fn builder(g: &Global) -> Result<ClientBuilder> {
    let mut b = A2aClient::builder()
        .timeout(Some(Duration::from_secs(g.timeout)))
        .reconnect(a2a_client::resume::Reconnect {
            on_reconnect: Some(std::sync::Arc::new(|attempt, last| {
                if last.is_empty() {
                    eprintln!("a2a: stream broke before its first event; opening it again (attempt {attempt})");
                } else {
                    eprintln!("a2a: stream broke; reconnecting (attempt {attempt}) after event {last}");
                }
            })),
            ..Default::default()
        })
        .retry(a2a_client::retry::Retry {
            on_retry: Some(std::sync::Arc::new(|attempt, op, e| {
                eprintln!("a2a: {op} failed ({e}); retrying (attempt {attempt})");
            })),
            ..Default::default()
        });
    if let Some(v) = &g.a2a_version {
        b = b.version(version_of(v)?);
    }
    if let Some(path) = &g.cacert {
        let pem = std::fs::read(path).with_context(|| format!("--cacert {}", path.display()))?;
        b = b.root_certificates_pem(&pem)?;
    }
    if let Some(binding) = g.binding {
        b = b.binding(binding.binding());
    }
    for h in &g.headers {
        let (name, value) = h
            .split_once(':')
            .ok_or_else(|| anyhow!("--header {h:?}: expected NAME:VALUE"))?;
        b = b.header(name.trim(), value.trim())?;
    }
    if let Some(key) = &g.api_key {
        b = b.credential(Credential::ApiKey {
            location: match g.api_key_in {
                KeyIn::Header => ApiKeyLocation::Header,
                KeyIn::Query => ApiKeyLocation::Query,
                KeyIn::Cookie => ApiKeyLocation::Cookie,
            },
            name: g.api_key_name.clone(),
            value: key.clone(),
        });
    }
    if let Some(token) = &g.bearer {
        b = b.credential(Credential::Bearer(token.clone()));
    }
    for e in &g.extensions {
        b = b.extension(e.clone());
    }
    Ok(b)
}

async fn connect(g: &Global, url: &str) -> Result<A2aClient> {
    let b = builder(g)?;
    if g.no_card {
        let (Some(binding), Some(version)) = (g.binding, &g.a2a_version) else {
            bail!("--no-card needs --binding and --a2a-version");
        };
        let binding = binding.binding();
        let mut iface = SelectedInterface::direct(
            url.parse()
                .with_context(|| format!("invalid URL {url:?}"))?,
            binding,
            version_of(version)?,
        );
        if let Some(t) = &g.tenant {
            iface = iface.with_tenant(t.clone());
        }
        return Ok(b.from_interface(iface)?);
    }
    Ok(b.connect(url).await?)
}

async fn run(cli: Cli) -> Result<()> {
    let g = &cli.global;
    let mut out = Out { json: g.json };
    match &cli.command {
        Command::Card { url, extended } => {
            if *extended {
                let c = connect(g, url).await?;
                let card = c.extended_card().await?;
                out.card(&card, None)?;
            } else {
                let resolver = builder(g)?.card_resolver()?;
                let fetched = resolver.fetch(url).await?;
                if g.json {
                    let v: serde_json::Value = fetched.json()?;
                    out.json_line(&v)?;
                } else {
                    let chosen = builder(g)?.from_card(fetched.clone());
                    let card = a2a_client::client::card_v1(&fetched)?;
                    out.card(&card, Some(chosen.as_ref().map(|c| c.interface().clone())))?;
                }
            }
        }
        Command::Send(a) => {
            let c = connect(g, &a.url).await?;
            let req = send_request(a)?;
            if a.stream {
                out.events(c.stream(req).await?).await?;
            } else {
                match c.send(req).await? {
                    v1::SendMessageResponse::Task(t) => out.task(&t)?,
                    v1::SendMessageResponse::Message(m) => out.message(&m)?,
                }
            }
        }
        Command::Task(TaskCmd::Get {
            url,
            id,
            history_length,
        }) => {
            let c = connect(g, url).await?;
            out.task(&c.get_task(id, *history_length).await?)?;
        }
        Command::Task(TaskCmd::List {
            url,
            context_id,
            status,
            page_size,
            page_token,
        }) => {
            let c = connect(g, url).await?;
            let status = status.as_deref().map(parse_state).transpose()?;
            let req = v1::ListTasksRequest {
                context_id: context_id.clone(),
                status,
                page_size: *page_size,
                page_token: page_token.clone(),
                ..Default::default()
            };
            let list = c.list_tasks(req).await?;
            if g.json {
                out.json_line(&list)?;
            } else {
                for t in &list.tasks {
                    out.task(t)?;
                }
                println!(
                    "{} of {} task(s){}",
                    list.tasks.len(),
                    list.total_size,
                    if list.next_page_token.is_empty() {
                        String::new()
                    } else {
                        format!("; next page: --page-token {}", list.next_page_token)
                    }
                );
            }
        }
        Command::Task(TaskCmd::Cancel { url, id }) => {
            let c = connect(g, url).await?;
            out.task(&c.cancel_task(id).await?)?;
        }
        Command::Task(TaskCmd::Subscribe { url, id }) => {
            let c = connect(g, url).await?;
            out.events(c.subscribe(id).await?).await?;
        }
        Command::Push(PushCmd::Set {
            url,
            task_id,
            webhook,
            id,
            token,
            auth_scheme,
            auth_credentials,
        }) => {
            let c = connect(g, url).await?;
            let mut cfg = v1::TaskPushNotificationConfig::new(task_id.clone(), webhook.clone());
            cfg.id = id.clone();
            cfg.token = token.clone();
            cfg.authentication = auth_scheme.as_ref().map(|s| v1::AuthenticationInfo {
                scheme: s.clone(),
                credentials: auth_credentials.clone(),
            });
            out.push(&c.create_push_config(cfg).await?)?;
        }
        Command::Push(PushCmd::Get { url, task_id, id }) => {
            let c = connect(g, url).await?;
            out.push(&c.get_push_config(task_id, id).await?)?;
        }
        Command::Push(PushCmd::List { url, task_id }) => {
            let c = connect(g, url).await?;
            let list = c
                .list_push_configs(v1::ListTaskPushNotificationConfigsRequest {
                    task_id: task_id.clone(),
                    ..Default::default()
                })
                .await?;
            if g.json {
                out.json_line(&list)?;
            } else if list.configs.is_empty() {
                println!("no push notification configs");
            } else {
                for cfg in &list.configs {
                    out.push(cfg)?;
                }
            }
        }
        Command::Push(PushCmd::Delete { url, task_id, id }) => {
            let c = connect(g, url).await?;
            c.delete_push_config(task_id, id).await?;
            if g.json {
                out.json_line(&serde_json::json!({}))?;
            } else {
                println!("deleted push notification config {id} of task {task_id}");
            }
        }
    }
    Ok(())
}

fn parse_state(s: &str) -> Result<v1::TaskState> {
    let upper = s.trim().to_ascii_uppercase().replace('-', "_");
    let name = if upper.starts_with("TASK_STATE_") {
        upper
    } else {
        format!("TASK_STATE_{upper}")
    };
    serde_json::from_value(serde_json::Value::String(name.clone()))
        .map_err(|_| anyhow!("unknown task state {s:?}"))
}

fn media_type_of(path: &std::path::Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("txt") => "text/plain",
        Some("md") => "text/markdown",
        Some("json") => "application/json",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

fn send_request(a: &SendArgs) -> Result<v1::SendMessageRequest> {
    let mut msg = v1::Message::user_text(a.text.clone());
    if let Some(data) = &a.data {
        let value: serde_json::Value =
            serde_json::from_str(data).context("--data is not valid JSON")?;
        msg = msg.with_part(v1::Part::data(value));
    }
    if let Some(path) = &a.file {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let mut part = v1::Part::raw(bytes).with_media_type(media_type_of(path));
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            part = part.with_filename(name);
        }
        msg = msg.with_part(part);
    }
    if let Some(t) = &a.task_id {
        msg = msg.with_task_id(t.clone());
    }
    if let Some(c) = &a.context_id {
        msg = msg.with_context_id(c.clone());
    }
    let mut req = v1::SendMessageRequest::new(msg);
    if a.no_wait || a.history_length.is_some() {
        req = req.with_configuration(v1::SendMessageConfiguration {
            return_immediately: a.no_wait.then_some(true),
            history_length: a.history_length,
            ..Default::default()
        });
    }
    Ok(req)
}

/// Output formatting (readable or `--json`).
struct Out {
    json: bool,
}

fn state_name(s: v1::TaskState) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .map(|n| n.trim_start_matches("TASK_STATE_").to_ascii_lowercase())
        .unwrap_or_else(|| format!("{s:?}"))
}

fn parts_text(parts: &[v1::Part]) -> String {
    parts
        .iter()
        .map(|p| match &p.content {
            v1::PartContent::Text(t) => t.clone(),
            v1::PartContent::Data(d) => d.to_string(),
            v1::PartContent::Url(u) => format!("<{u}>"),
            v1::PartContent::Raw(b) => format!(
                "[{} {} bytes]",
                p.filename.as_deref().unwrap_or("file"),
                b.decode().map(|d| d.len()).unwrap_or(0)
            ),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Out {
    fn json_line<T: serde::Serialize>(&mut self, v: &T) -> Result<()> {
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer(&mut stdout, v)?;
        writeln!(stdout)?;
        stdout.flush()?;
        Ok(())
    }

    fn task(&mut self, t: &v1::Task) -> Result<()> {
        if self.json {
            return self.json_line(t);
        }
        println!(
            "task {} ({}){}",
            t.id,
            state_name(t.status.state),
            t.context_id
                .as_deref()
                .map(|c| format!(" context {c}"))
                .unwrap_or_default()
        );
        if let Some(m) = &t.status.message {
            println!("  status: {}", parts_text(&m.parts));
        }
        for a in &t.artifacts {
            println!(
                "  artifact {}: {}",
                a.name.as_deref().unwrap_or(&a.artifact_id),
                parts_text(&a.parts)
            );
        }
        Ok(())
    }

    fn message(&mut self, m: &v1::Message) -> Result<()> {
        if self.json {
            return self.json_line(m);
        }
        println!("{}", parts_text(&m.parts));
        Ok(())
    }

    fn push(&mut self, c: &v1::TaskPushNotificationConfig) -> Result<()> {
        if self.json {
            return self.json_line(c);
        }
        println!(
            "push config {} of task {} -> {}{}",
            c.id.as_deref().unwrap_or("-"),
            c.task_id.as_deref().unwrap_or("-"),
            c.url,
            c.authentication
                .as_ref()
                .map(|a| format!(" (auth {})", a.scheme))
                .unwrap_or_default()
        );
        Ok(())
    }

    fn card(
        &mut self,
        card: &v1::AgentCard,
        chosen: Option<Result<SelectedInterface, &ClientError>>,
    ) -> Result<()> {
        if self.json {
            return self.json_line(card);
        }
        println!("{} (version {})", card.name, card.version);
        if !card.description.is_empty() {
            println!("  {}", card.description);
        }
        println!("interfaces:");
        for i in &card.supported_interfaces {
            let mark = match &chosen {
                Some(Ok(sel))
                    if sel
                        .offer
                        .as_ref()
                        .map_or(sel.url.as_str(), |o| o.url.as_str())
                        .trim_end_matches('/')
                        == i.url.trim_end_matches('/')
                        && Some(sel.binding) == Binding::parse(&i.protocol_binding)
                        && Version::from_declared(&i.protocol_version) == Some(sel.version) =>
                {
                    "*"
                }
                _ => " ",
            };
            println!(
                " {mark} {} {} {}{}",
                i.protocol_binding,
                i.protocol_version,
                i.url,
                i.tenant
                    .as_deref()
                    .map(|t| format!(" tenant {t}"))
                    .unwrap_or_default()
            );
        }
        if let Some(Err(e)) = &chosen {
            println!("  (no usable interface: {e})");
        }
        let caps = &card.capabilities;
        println!(
            "capabilities: streaming={} pushNotifications={} extendedAgentCard={}",
            caps.streaming.unwrap_or(false),
            caps.push_notifications.unwrap_or(false),
            caps.extended_agent_card.unwrap_or(false)
        );
        if !card.skills.is_empty() {
            println!("skills:");
            for s in &card.skills {
                println!("  {}: {}", s.id, s.name);
            }
        }
        Ok(())
    }

    async fn events(&mut self, mut stream: EventStream) -> Result<()> {
        while let Some(ev) = stream.next().await {
            let ev = ev?;
            if self.json {
                self.json_line(&ev)?;
                continue;
            }
            match &ev {
                v1::StreamResponse::Task(t) => {
                    println!("[task] {} ({})", t.id, state_name(t.status.state));
                }
                v1::StreamResponse::Message(m) => println!("[message] {}", parts_text(&m.parts)),
                v1::StreamResponse::StatusUpdate(s) => println!(
                    "[status] {}{}",
                    state_name(s.status.state),
                    s.status
                        .message
                        .as_ref()
                        .map(|m| format!(": {}", parts_text(&m.parts)))
                        .unwrap_or_default()
                ),
                v1::StreamResponse::ArtifactUpdate(a) => println!(
                    "[artifact] {}{}: {}",
                    a.artifact
                        .name
                        .as_deref()
                        .unwrap_or(&a.artifact.artifact_id),
                    if a.is_append() { " (+)" } else { "" },
                    parts_text(&a.artifact.parts)
                ),
            }
            std::io::stdout().flush()?;
        }
        Ok(())
    }
}
