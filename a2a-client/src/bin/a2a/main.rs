//! `a2a`: a command-line A2A client (any agent, protocol 0.3 or 1.0, JSON-RPC or HTTP+JSON).
//!
//! A thin layer over the `a2a_client` library: it parses flags, builds an [`A2aClient`] (card
//! discovery and interface selection, or a forced binding/version), calls one operation and
//! prints the result: readable text by default (streams print each event as it arrives), or the
//! 1.0 JSON with `--json` (one JSON document per line for streams).

mod args;
mod output;
mod request;

use std::process::ExitCode;
use std::time::Duration;

use a2a_client::auth::{ApiKeyLocation, Credential};
use a2a_client::select::{SelectedInterface, Version};
use a2a_client::{A2aClient, ClientBuilder};
use a2a_types::v1;
use anyhow::{Context, Result, anyhow, bail};
use clap::Parser;

use args::{Cli, Command, Global, KeyIn, PushCmd, TaskCmd};
use output::Out;
use request::{parse_state, send_request};

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
