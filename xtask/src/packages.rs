//! `cargo xtask setup`: what the tests need besides Rust, installed when missing: the Python
//! venvs of the interop suites (`interop/setup_venvs.py`), and Debian's `chromium`,
//! `chromium-driver` ([`crate::browser`]), `postgresql` ([`crate::postgres`]), `nginx` and
//! `haproxy` (the sample load-balancer configurations' test, `tests/lb_configs.rs`) in one
//! apt-get run (as root, non-interactive, with no service started).
//!
//! Most of it waits on the network, so `cargo xtask test` runs it in the background beside the
//! lint step and joins it before the first step that needs it.

use std::process::Command;

use anyhow::{Result, bail};

use crate::{browser, postgres, run};

/// The venvs, then the system packages.
pub fn setup() -> Result<()> {
    crate::pyenv()?;
    system_packages()
}

/// Installs the browser and PostgreSQL packages that are missing, in one apt-get run.
fn system_packages() -> Result<()> {
    let mut wanted: Vec<&str> = Vec::new();
    if browser::present() {
        eprintln!(
            "xtask: {} and {} present",
            browser::CHROMIUM,
            browser::CHROMEDRIVER
        );
    } else {
        wanted.extend(["chromium", "chromium-driver"]);
    }
    if postgres::present() {
        eprintln!("xtask: PostgreSQL server binaries present");
    } else {
        wanted.push("postgresql");
    }
    for lb in LOAD_BALANCERS {
        if program(lb) {
            eprintln!("xtask: {lb} present");
        } else {
            wanted.push(lb);
        }
    }
    if wanted.is_empty() {
        return Ok(());
    }
    let uid = Command::new("id").arg("-u").output()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        bail!(
            "the console browser tests, the PostgreSQL tests and the load-balancer tests need {}: run `sudo apt-get \
             install {}` (Debian; for PostgreSQL, A2A_PG_BIN may name the directory holding \
             initdb and pg_ctl instead) and try again",
            wanted.join(", "),
            wanted.join(" ")
        );
    }
    if wanted.contains(&"postgresql") {
        postgres::before_install()?;
    }
    let mut update = Command::new("apt-get");
    update
        .args(["update", "-qq"])
        .env("DEBIAN_FRONTEND", "noninteractive");
    run("apt-get update", update)?;
    let mut install = Command::new("apt-get");
    install
        .args([
            "install",
            "-y",
            "-qq",
            "-o",
            "Dpkg::Options::=--force-confold",
        ])
        .args(&wanted)
        .env("DEBIAN_FRONTEND", "noninteractive");
    let _no_services = NoServices::new()?;
    run("apt-get install", install)?;
    if !browser::present() {
        bail!(
            "apt-get installed chromium and chromium-driver but {} or {} is missing",
            browser::CHROMIUM,
            browser::CHROMEDRIVER
        );
    }
    if !postgres::present() {
        bail!("apt-get installed postgresql but no initdb was found under /usr/lib/postgresql");
    }
    if let Some(lb) = LOAD_BALANCERS.iter().find(|lb| !program(lb)) {
        bail!("apt-get installed {lb} but it is not on PATH or in /usr/sbin");
    }
    Ok(())
}

/// The load balancers whose sample configurations (`dist/a2a-gateway/lb/`) the tests run.
const LOAD_BALANCERS: [&str; 2] = ["nginx", "haproxy"];

/// Whether `name` is on `PATH` or in `/usr/sbin` (where Debian puts the load balancers).
fn program(name: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([std::path::PathBuf::from("/usr/sbin")])
        .any(|d| d.join(name).exists())
}

/// While alive, Debian's package scripts start no service (`/usr/sbin/policy-rc.d` exits 101):
/// installing nginx or haproxy must not start a server on port 80 or anywhere else. A
/// `policy-rc.d` already there (container images ship one) is left as it is.
struct NoServices {
    made: bool,
}

impl NoServices {
    const PATH: &'static str = "/usr/sbin/policy-rc.d";

    fn new() -> Result<Self> {
        use std::os::unix::fs::PermissionsExt;
        if std::path::Path::new(Self::PATH).exists() {
            return Ok(NoServices { made: false });
        }
        std::fs::write(
            Self::PATH,
            "#!/bin/sh\n# cargo xtask setup: no service starts\nexit 101\n",
        )?;
        std::fs::set_permissions(Self::PATH, std::fs::Permissions::from_mode(0o755))?;
        Ok(NoServices { made: true })
    }
}

impl Drop for NoServices {
    fn drop(&mut self) {
        if self.made {
            let _ = std::fs::remove_file(Self::PATH);
        }
    }
}
