//! Several `a2a-gateway serve` replicas on one throwaway PostgreSQL behind the loopback load
//! balancer of `lb.rs` (issue 32): what the chaos tests start and what `cargo xtask cluster`
//! shows (the example `cluster` includes this file). Real processes: PostgreSQL by
//! `a2a_pg::testing::TempCluster`, each replica an `a2a-gateway serve --database postgres://…`
//! child, the workspace seeded through `PgRegistry` (the admin CLI's operations).

use std::io::BufRead;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use a2a_pg::testing::{ClusterOptions, TempCluster};
use anyhow::{Context, Result, anyhow, bail};

use super::lb::Lb;

/// The workspace the cluster makes and the agent id the echo agent is registered under.
pub const WORKSPACE: &str = "demo";
/// The agent id of the registered agent (`/a2a/echo`).
pub const AGENT: &str = "echo";

/// One replica process.
pub struct Replica {
    /// The `serve` child (killed with SIGKILL by [`Cluster::kill`], stopped on drop).
    pub child: Child,
    /// Its listening address.
    pub addr: SocketAddr,
    /// Its stderr (logs).
    pub log: PathBuf,
}

impl Replica {
    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// A running cluster: PostgreSQL, the replicas, the load balancer in front of them.
pub struct Cluster {
    /// The replicas, in the load balancer's order.
    pub replicas: Vec<Replica>,
    /// The load balancer.
    pub lb: Lb,
    /// The gateway database's URL.
    pub database: String,
    /// A key of [`WORKSPACE`].
    pub key: String,
    /// The admin API's bearer token (every replica has it).
    pub admin_token: String,
    /// Where the replicas' logs are (removed on drop).
    pub logs: tempfile::TempDir,
    // Dropped last: stops PostgreSQL and removes its directory.
    pub pg: TempCluster,
}

/// Starts `cmd` (in its own process group: a terminal's Ctrl-C reaches only the caller, which
/// stops its children in order), its stderr to `log`, and waits up to 60 s for its
/// `LISTENING URL` line; stdout is then read to its end on a thread.
pub fn spawn_listening(cmd: &mut Command, log: &Path) -> Result<(Child, String)> {
    let err = std::fs::File::create(log)?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(err)
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    let out = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("LISTENING ")
                && let Some(tx) = tx.take()
            {
                let _ = tx.send(url.trim().to_owned());
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(url) => Ok((child, url)),
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            let text = std::fs::read_to_string(log).unwrap_or_default();
            bail!("{cmd:?} printed no LISTENING line:\n{text}")
        }
    }
}

/// Makes workspace [`WORKSPACE`] with `agent` registered as [`AGENT`] in the gateway database
/// at `url` (through the registry's library interface, which also applies the migrations) and
/// returns a new key of it.
async fn seed(url: &str, agent: &str) -> Result<String> {
    use a2a_gateway::store::Agent;
    use a2a_gateway::store::backend::{PgRegistry, RegistryStore};
    let registry = PgRegistry::connect(url, &a2a_pg::PoolOptions::default())
        .await
        .map_err(|e| anyhow!("connecting to {url}: {e}"))?;
    let err = |e: a2a_gateway::store::StoreError| anyhow!("seeding the registry: {e}");
    registry
        .create_workspace(WORKSPACE, "Cluster demo")
        .await
        .map_err(err)?;
    registry
        .upsert_agent(&Agent {
            workspace_id: WORKSPACE.into(),
            agent_id: AGENT.into(),
            endpoint: agent.into(),
            credential: None,
            skills: None,
            pinned_card_key: None,
        })
        .await
        .map_err(err)?;
    Ok(registry
        .create_key(WORKSPACE, &[], Some("cluster"), None)
        .await
        .map_err(err)?
        .1)
}

fn addr_of(url: &str) -> Result<SocketAddr> {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .with_context(|| format!("not an address: {url}"))
}

impl Cluster {
    /// Starts PostgreSQL, makes workspace [`WORKSPACE`] with `agent` registered as [`AGENT`]
    /// and a key, then `n` replicas of `gateway` (the binary) and the load balancer on
    /// `listen` (port 0: a free one); PostgreSQL started with `pg` (`fsync` is off by default).
    pub async fn start(
        gateway: &Path,
        n: usize,
        agent: &str,
        listen: SocketAddr,
        pg: ClusterOptions,
    ) -> Result<Self> {
        let pg = TempCluster::start_with(pg).map_err(|e| anyhow!("PostgreSQL: {e}"))?;
        pg.create_database("gateway")
            .map_err(|e| anyhow!("createdb: {e}"))?;
        let database = pg.url_of("gateway");
        let key = seed(&database, agent).await?;
        let admin_token = format!("admin-{:016x}", fastrand::u64(..));
        let logs = tempfile::Builder::new().prefix("a2a-cluster-").tempdir()?;
        let mut cluster = Cluster {
            replicas: Vec::new(),
            lb: Lb::start("127.0.0.1:0".parse()?, Vec::new()).await?,
            database,
            key,
            admin_token,
            logs,
            pg,
        };
        for i in 0..n {
            let r = cluster.spawn_replica(gateway, i)?;
            cluster.replicas.push(r);
        }
        let backends = cluster.replicas.iter().map(|r| r.addr).collect();
        cluster.lb = Lb::start(listen, backends).await?;
        Ok(cluster)
    }

    /// Starts replica number `i` (its log `replica-i.log`).
    fn spawn_replica(&self, gateway: &Path, i: usize) -> Result<Replica> {
        let log = self.logs.path().join(format!("replica-{i}.log"));
        let (child, url) = spawn_listening(
            Command::new(gateway)
                .args(["serve", "--listen", "127.0.0.1:0", "--dev"])
                .args(["--database", &self.database])
                .args(["--admin-token", &self.admin_token])
                .env("A2A_GATEWAY_LOG_LEVEL", "info"),
            &log,
        )?;
        Ok(Replica {
            child,
            addr: addr_of(&url)?,
            log,
        })
    }

    /// Registers `url` as agent `agent_id` of [`WORKSPACE`] (through the registry's library
    /// interface; every replica sees it by notification).
    pub async fn register(&self, agent_id: &str, url: &str) -> Result<()> {
        use a2a_gateway::store::Agent;
        use a2a_gateway::store::backend::{PgRegistry, RegistryStore};
        let registry = PgRegistry::connect(&self.database, &a2a_pg::PoolOptions::default())
            .await
            .map_err(|e| anyhow!("connecting to {}: {e}", self.database))?;
        registry
            .upsert_agent(&Agent {
                workspace_id: WORKSPACE.into(),
                agent_id: agent_id.into(),
                endpoint: url.into(),
                credential: None,
                skills: None,
                pinned_card_key: None,
            })
            .await
            .map_err(|e| anyhow!("registering {agent_id}: {e}"))
    }

    /// The index of the replica listening on `addr`.
    pub fn index_of(&self, addr: SocketAddr) -> Option<usize> {
        self.replicas.iter().position(|r| r.addr == addr)
    }

    /// `kill -9` of replica `i` (waits for the process to be gone).
    pub fn kill(&mut self, i: usize) {
        let r = &mut self.replicas[i];
        let _ = r.child.kill();
        let _ = r.child.wait();
    }

    /// Stops every replica (SIGTERM, then SIGKILL after 5 s).
    pub fn stop_replicas(&mut self) {
        for r in &mut self.replicas {
            if let Ok(None) = r.child.try_wait() {
                let _ = Command::new("kill")
                    .args(["-TERM", &r.child.id().to_string()])
                    .status();
            }
        }
        for r in &mut self.replicas {
            for _ in 0..50 {
                if !matches!(r.child.try_wait(), Ok(None)) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for r in &mut self.replicas {
            let _ = r.child.kill();
            let _ = r.child.wait();
        }
    }
}
