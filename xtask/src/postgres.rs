//! The PostgreSQL server binaries of the tests that run a throwaway cluster
//! (`a2a_pg::testing::TempCluster`: `initdb` into a temporary directory, `pg_ctl` on a loopback
//! port): Debian's `postgresql` package (installed by [`crate::packages`] when missing). The
//! package's own cluster and service are not created: the tests never use a system service.

use std::path::Path;

use anyhow::Result;

/// Whether `initdb` is where `TempCluster` looks: `$A2A_PG_BIN`, `/usr/lib/postgresql/*/bin`,
/// `PATH`.
pub fn present() -> bool {
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

/// Before Debian's package is installed: no `main` cluster (and so no service started for it),
/// the tests make their own.
pub fn before_install() -> Result<()> {
    std::fs::create_dir_all("/etc/postgresql-common")?;
    std::fs::write(
        "/etc/postgresql-common/createcluster.conf",
        "create_main_cluster = false\n",
    )?;
    Ok(())
}
