//! `cargo xtask cluster [--release] [--replicas N] [--port P]`: the demo of several gateway
//! replicas on one PostgreSQL (issue 32, docs/replicas.md "Try it"). Builds `a2a-gateway`,
//! `a2a-agent` and the gateway's example `cluster` (debug by default: quick to build; `--release`
//! for figures), then replaces this process with the example (`exec`), which starts a throwaway
//! PostgreSQL, the echo agent, the replicas and a loopback load balancer, prints the addresses,
//! a key and commands to try, and stops everything on Ctrl-C or SIGTERM. The work is in the
//! example so that xtask stays free of tokio and PostgreSQL's client.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use anyhow::{Result, bail};

/// Builds the binaries and runs the example in place of this process.
pub fn cluster(release: bool, replicas: usize, port: u16) -> Result<()> {
    if !crate::postgres::present() {
        bail!("no PostgreSQL server binaries (initdb): run `cargo xtask setup` (as root) first");
    }
    let mut b = crate::cargo();
    b.arg("build");
    if release {
        b.arg("--release");
    }
    b.args([
        "-p",
        "a2ars-gateway",
        "--bin",
        "a2a-gateway",
        "--example",
        "cluster",
        "-p",
        "a2ars-agent",
        "--bin",
        "a2a-agent",
    ]);
    crate::run("build for the cluster", b)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::root().join("target"))
        .join(if release { "release" } else { "debug" });
    let err = std::process::Command::new(target.join("examples/cluster"))
        .arg("--gateway")
        .arg(target.join("a2a-gateway"))
        .arg("--agent")
        .arg(target.join("a2a-agent"))
        .args([
            "--replicas",
            &replicas.to_string(),
            "--port",
            &port.to_string(),
        ])
        .exec();
    bail!("could not start the cluster example: {err}")
}
