//! One replica of an agent whose replicas share a PostgreSQL database (docs/agent.md, "Several
//! replicas"): any replica serves any operation on any task, a task's events reach subscribers
//! on every replica, a CancelTask on one replica stops the handler running on another, and the
//! tasks of a replica that dies are ended by the others once its lease ends.
//!
//! The handler counts: `count N` emits `1`, `2`, ... `N` one second apart, then completes (a
//! cancel stops it). Start two replicas on one database (any PostgreSQL 13 or later the user
//! may create tables in; the first replica creates them):
//!
//! ```sh
//! export A2A_AGENT_STORE=postgres://user:pass@127.0.0.1:5432/agents
//! cargo run -p a2ars-agent --features postgres --example replicated -- --port 8001 &
//! cargo run -p a2ars-agent --features postgres --example replicated -- --port 8002 &
//! ```
//!
//! No load balancer is needed to try it: send on one replica, subscribe on the other.
//!
//! ```sh
//! H='-H A2A-Version:1.0 -H content-type:application/json'
//! curl -s $H localhost:8001/ -d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{
//!   "message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"count 20"}]},
//!   "configuration":{"returnImmediately":true}}}'          # prints the task: note its id
//! curl -sN $H localhost:8002/ -d '{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask",
//!   "params":{"id":"TASK_ID"}}'                             # the task, then 1, 2, ... from 8001
//! curl -s $H localhost:8002/ -d '{"jsonrpc":"2.0","id":3,"method":"CancelTask",
//!   "params":{"id":"TASK_ID"}}'                             # stops the handler on 8001
//! ```
//!
//! Kill the replica running a task (`kill -9`) and the other fails it (status message
//! `a2a_agent::REPLICA_LOST`) within about 1⅓ lease times (`--lease 3s` here; default 10s).
//!
//! Flags: `--store URL` (else `A2A_AGENT_STORE`), `--port N` (default 0: any free port),
//! `--lease DURATION` (`500ms`, `3s`). Prints `LISTENING <url>` and this replica's id; stops on
//! Ctrl-C.

use std::time::Duration;

use a2a_agent::store::PoolOptions;
use a2a_agent::{AgentCard, AgentServer, PostgresStore, Reply, RequestContext, handler_fn};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut store = std::env::var("A2A_AGENT_STORE").ok();
    let mut port = 0u16;
    let mut lease = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| anyhow::anyhow!("{a} needs a value"))
        };
        match a.as_str() {
            "--store" => store = Some(value()?),
            "--port" => port = value()?.parse()?,
            "--lease" => lease = Some(duration(&value()?)?),
            _ => anyhow::bail!("unknown argument {a} (--store URL, --port N, --lease 3s)"),
        }
    }
    let Some(url) = store else {
        anyhow::bail!("give --store postgres://… or set A2A_AGENT_STORE");
    };
    let pg = PostgresStore::connect(&url, &PoolOptions::default()).await?;
    if let Some(l) = lease {
        pg.set_lease(l);
    }
    let replica = pg.replica_id().to_owned();

    let counter = handler_fn(|ctx: RequestContext| async move {
        let n: u32 = ctx
            .text()
            .split_whitespace()
            .find_map(|w| w.parse().ok())
            .unwrap_or(5)
            .min(600);
        for i in 1..=n {
            tokio::select! {
                _ = ctx.cancelled() => return Ok(Reply::text("stopped")),
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
            ctx.emit(i.to_string()).await;
        }
        Ok(Reply::text(format!("counted to {n}")))
    });
    let card = AgentCard::builder("counter", "counts, on any of its replicas", "1.0.0")
        .streaming(true)
        .build();
    let server = AgentServer::new(card, counter)
        .validate_auth(false) // a local demo: no authentication
        .postgres(pg)
        .serve(tokio::net::TcpListener::bind(("127.0.0.1", port)).await?)
        .await?;
    println!("LISTENING {}", server.url());
    println!("replica {replica}");
    tokio::signal::ctrl_c().await?;
    // Gives the lease up: what this replica leaves is taken over at once.
    server.shutdown().await;
    Ok(())
}

/// `500ms` or `3s`.
fn duration(s: &str) -> anyhow::Result<Duration> {
    if let Some(ms) = s.strip_suffix("ms") {
        return Ok(Duration::from_millis(ms.parse()?));
    }
    match s.strip_suffix('s') {
        Some(secs) => Ok(Duration::from_secs_f64(secs.parse()?)),
        None => anyhow::bail!("a duration is 500ms or 3s, not {s}"),
    }
}
