//! Throwaway PostgreSQL clusters for tests, benchmarks and demos: `initdb` into a temporary
//! directory, `pg_ctl` on a free loopback port (and a Unix socket in that directory), stopped
//! and removed when the [`TempCluster`] is dropped. Never a system service.
//!
//! The server binaries are looked for in `$A2A_PG_BIN`, then the newest
//! `/usr/lib/postgresql/*/bin` (Debian's `postgresql` package; `cargo xtask test` installs it
//! when missing), then `PATH`. PostgreSQL refuses to run as root: as root the cluster is
//! created and run as the `postgres` user (which Debian's package creates).

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::PgError;

/// How a cluster is started.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// `fsync` (off by default: throwaway data; benchmarks that compare stores turn it on).
    pub fsync: bool,
    /// `max_connections`.
    pub max_connections: u32,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            fsync: false,
            max_connections: 200,
        }
    }
}

/// A running throwaway cluster (see the module doc).
pub struct TempCluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    opts: ClusterOptions,
    owner: Option<(u32, u32)>,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

fn io(msg: String) -> PgError {
    PgError::Cluster(std::io::Error::other(msg))
}

/// The directory holding `initdb` and `pg_ctl` (see the module doc).
pub fn server_bin() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("A2A_PG_BIN") {
        return Some(PathBuf::from(d));
    }
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    debian.sort();
    if let Some((_, bin)) = debian.pop() {
        return Some(bin);
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p).find(|d| d.join("initdb").exists() && d.join("pg_ctl").exists())
    })
}

/// The `postgres` user's uid and gid when this process is root (from `/etc/passwd`).
fn run_as() -> Result<Option<(u32, u32)>, PgError> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd")?;
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&"postgres") && f.len() > 3)
                .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
                .flatten()
        })
        .map(Some)
        .ok_or_else(|| {
            io("running as root and there is no `postgres` user to run the cluster as".into())
        })
}

impl TempCluster {
    /// Creates and starts a cluster with the default options.
    pub fn start() -> Result<TempCluster, PgError> {
        Self::start_with(ClusterOptions::default())
    }

    /// Creates and starts a cluster.
    pub fn start_with(opts: ClusterOptions) -> Result<TempCluster, PgError> {
        let bin =
            server_bin().ok_or_else(|| {
                io("no PostgreSQL server binaries (initdb, pg_ctl): install Debian's `postgresql` \
                package (cargo xtask test does) or set A2A_PG_BIN"
                .into())
            })?;
        let owner = run_as()?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("a2a-pg-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))?;
        }
        let mut c = TempCluster {
            dir,
            bin,
            port: 0,
            opts,
            owner,
        };
        let data = c.data();
        c.run(
            "initdb",
            &[
                "-D",
                path_str(&data)?,
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ],
        )?;
        // A port taken between the probe and the server's bind: try another.
        let mut last = None;
        for _ in 0..5 {
            c.port = free_port()?;
            match c.start_again() {
                Ok(()) => return Ok(c),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io("could not start".into())))
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The URL of the `postgres` database as the `postgres` superuser (trust authentication,
    /// loopback only).
    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// The URL of database `db`.
    pub fn url_of(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// The port the cluster listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Creates database `name` (a fresh database per test that shares a cluster).
    pub fn create_database(&self, name: &str) -> Result<(), PgError> {
        let port = self.port.to_string();
        self.run(
            "createdb",
            &["-h", "127.0.0.1", "-p", &port, "-U", "postgres", name],
        )
    }

    /// Starts the cluster again after [`TempCluster::stop`] (same port and data).
    pub fn start_again(&self) -> Result<(), PgError> {
        let data = self.data();
        let log = self.dir.join("server.log");
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync={} -c max_connections={}",
            self.port,
            path_str(&self.dir)?,
            if self.opts.fsync { "on" } else { "off" },
            self.opts.max_connections
        );
        self.run(
            "pg_ctl",
            &[
                "-D",
                path_str(&data)?,
                "-l",
                path_str(&log)?,
                "-w",
                "-t",
                "60",
                "-o",
                &opts,
                "start",
            ],
        )
    }

    /// Stops the cluster (fast shutdown: sessions are cut, committed data kept).
    pub fn stop(&self) -> Result<(), PgError> {
        let data = self.data();
        self.run(
            "pg_ctl",
            &["-D", path_str(&data)?, "-w", "-m", "fast", "stop"],
        )
    }

    fn run(&self, tool: &str, args: &[&str]) -> Result<(), PgError> {
        let mut cmd = Command::new(self.bin.join(tool));
        cmd.args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .env("LC_ALL", "C");
        if let Some((uid, gid)) = self.owner {
            cmd.uid(uid).gid(gid);
        }
        let out = cmd.output()?;
        if out.status.success() {
            return Ok(());
        }
        let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        Err(io(format!(
            "{tool} failed ({}): {}{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            log.lines().rev().take(20).collect::<Vec<_>>().join("\n")
        )))
    }
}

impl Drop for TempCluster {
    fn drop(&mut self) {
        if let Ok(data) = path_str(&self.data()) {
            let _ = self.run("pg_ctl", &["-D", data, "-w", "-m", "immediate", "stop"]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn path_str(p: &Path) -> Result<&str, PgError> {
    p.to_str()
        .ok_or_else(|| io(format!("not a UTF-8 path: {}", p.display())))
}

fn free_port() -> Result<u16, PgError> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
