//! `cargo xtask cluster`: the demo of several replicas (issue 32, docs/replicas.md "Try it").
//! Starts a throwaway PostgreSQL (`a2a_pg::testing::TempCluster`: `initdb` into a temporary
//! directory, `pg_ctl` on a free loopback port), the echo agent (`a2a-agent serve --echo`),
//! a workspace with it registered and a key, three `a2a-gateway serve --database postgres://…`
//! replicas and a round-robin TCP load balancer in front of them (`tests/common/lb.rs`, shared
//! with the chaos tests); prints the addresses, the key and commands to try; on Ctrl-C or
//! SIGTERM stops everything and removes the temporary directories.
//!
//! Run: `cargo run -p a2ars-gateway --example cluster -- --gateway PATH (--agent PATH |
//! --agent-url URL) [--replicas N] [--port P] [--fsync]` (xtask builds the binaries and passes
//! their paths). Printed lines: `POSTGRES url`, `REPLICA i url pid log`, `AGENT url`,
//! `LOAD_BALANCER url`, `export` lines (the key, the admin token), commands, then `READY`.

// Shared with the chaos tests, which use all of it.
#[allow(dead_code)]
#[path = "../tests/common/cluster.rs"]
mod cluster;
#[allow(dead_code)]
#[path = "../tests/common/lb.rs"]
mod lb;

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::Parser;

/// Arguments.
#[derive(Parser)]
struct Args {
    /// The `a2a-gateway` binary.
    #[arg(long)]
    gateway: PathBuf,
    /// The `a2a-agent` binary (its built-in echo agent is registered as `echo`).
    #[arg(long, required_unless_present = "agent_url")]
    agent: Option<PathBuf>,
    /// An agent already running, registered as `echo` instead of starting one (the benchmark).
    #[arg(long, conflicts_with = "agent")]
    agent_url: Option<String>,
    /// PostgreSQL with `fsync=on` (off by default: throwaway data; the benchmark turns it on).
    #[arg(long)]
    fsync: bool,
    /// Number of gateway replicas.
    #[arg(long, default_value_t = 3)]
    replicas: usize,
    /// The load balancer's port on 127.0.0.1 (0: a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    if args.replicas == 0 {
        bail!("--replicas must be at least 1");
    }
    let dir = tempfile::Builder::new()
        .prefix("a2a-cluster-agent-")
        .tempdir()?;
    let (mut agent, agent_url) = match (&args.agent, args.agent_url) {
        (Some(bin), _) => {
            let (child, url) = cluster::spawn_listening(
                Command::new(bin).args(["serve", "--echo", "--host", "127.0.0.1", "--port", "0"]),
                &dir.path().join("agent.log"),
            )
            .context("starting the echo agent")?;
            (Some(child), url)
        }
        (None, Some(url)) => (None, url),
        (None, None) => bail!("--agent or --agent-url"),
    };
    let pg = a2a_pg::testing::ClusterOptions {
        fsync: args.fsync,
        ..Default::default()
    };
    let started = cluster::Cluster::start(
        &args.gateway,
        args.replicas,
        &agent_url,
        format!("127.0.0.1:{}", args.port).parse()?,
        pg,
    )
    .await;
    let mut c = match started {
        Ok(c) => c,
        Err(e) => {
            if let Some(mut a) = agent {
                let _ = a.kill();
                let _ = a.wait();
            }
            return Err(e);
        }
    };
    print_banner(&c, &agent_url);
    wait_for_signal().await?;
    eprintln!("stopping: replicas, echo agent, PostgreSQL");
    c.stop_replicas();
    if let Some(agent) = &mut agent {
        let _ = Command::new("kill")
            .args(["-TERM", &agent.id().to_string()])
            .status();
        let _ = agent.wait();
    }
    drop(c); // stops PostgreSQL, removes its directory and the logs
    drop(dir);
    eprintln!("stopped");
    Ok(())
}

fn print_banner(c: &cluster::Cluster, agent: &str) {
    let lb = c.lb.url();
    println!("POSTGRES {}", c.database);
    for (i, r) in c.replicas.iter().enumerate() {
        println!(
            "REPLICA {i} {} {} {}",
            r.url(),
            r.child.id(),
            r.log.display()
        );
    }
    println!("AGENT {agent}");
    println!("LOAD_BALANCER {lb}");
    println!("export A2A_GATEWAY_KEY={}", c.key);
    println!("export A2A_BEARER={}", c.key);
    println!("export A2A_GATEWAY_ADMIN_TOKEN={}", c.admin_token);
    println!();
    println!("Try it (each new connection goes to the next replica):");
    println!(
        "  a2a send {lb}/a2a/{} 'hello through three replicas'",
        cluster::AGENT
    );
    println!(
        "  curl -s {lb}/a2a/{} -H \"Authorization: Bearer $A2A_GATEWAY_KEY\" -H 'A2A-Version: 1.0' \
         -H 'content-type: application/json' -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\
         \"params\":{{\"message\":{{\"role\":\"ROLE_USER\",\"messageId\":\"m1\",\"parts\":[{{\"text\":\"hello\"}}]}}}}}}'",
        cluster::AGENT
    );
    println!(
        "  curl -s {lb}/admin/audit -H \"Authorization: Bearer $A2A_GATEWAY_ADMIN_TOKEN\"   # every replica's hops"
    );
    println!(
        "  kill -9 <a replica's pid, the third field of its REPLICA line>   # the load balancer skips it"
    );
    println!("READY (Ctrl-C stops everything)");
}

/// Waits for Ctrl-C (SIGINT) or SIGTERM.
async fn wait_for_signal() -> Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    Ok(())
}
