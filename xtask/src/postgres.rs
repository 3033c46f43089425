//! The PostgreSQL server binaries of the tests that run a throwaway cluster
//! (`a2a_pg::testing::TempCluster`: `initdb` into a temporary directory, `pg_ctl` on a loopback
//! port): Debian's `postgresql` package, installed with apt-get when missing (as root,
//! non-interactive). The package's own cluster and service are not created: the tests never use
//! a system service.

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

/// Whether `initdb` is where `TempCluster` looks: `$A2A_PG_BIN`, `/usr/lib/postgresql/*/bin`,
/// `PATH`.
fn present() -> bool {
    if let Some(d) = std::env::var_os("A2A_PG_BIN") {
        return Path::new(&d).join("initdb").exists();
    }
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.path().join("bin").join("initdb").exists());
    debian
        || std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("initdb").exists()))
}

/// Installs Debian's `postgresql` unless its server binaries are there.
pub fn ensure() -> Result<()> {
    if present() {
        eprintln!("xtask: PostgreSQL server binaries present");
        return Ok(());
    }
    let uid = Command::new("id").arg("-u").output()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        bail!(
            "the PostgreSQL tests need initdb and pg_ctl: run `sudo apt-get install postgresql` \
             (Debian) or set A2A_PG_BIN to the directory holding them, and try again"
        );
    }
    // No `main` cluster (and so no service started for it): the tests make their own.
    std::fs::create_dir_all("/etc/postgresql-common")?;
    std::fs::write(
        "/etc/postgresql-common/createcluster.conf",
        "create_main_cluster = false\n",
    )?;
    for args in [
        &["update", "-qq"][..],
        &[
            "install",
            "-y",
            "-qq",
            "-o",
            "Dpkg::Options::=--force-confold",
            "postgresql",
        ][..],
    ] {
        let mut c = Command::new("apt-get");
        c.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        super::run("apt-get", c)?;
    }
    if !present() {
        bail!("apt-get installed postgresql but no initdb was found under /usr/lib/postgresql");
    }
    Ok(())
}
