//! `cargo xtask setup`: what the tests need besides Rust, installed when missing: the Python
//! venvs of the interop suites (`interop/setup_venvs.py`), and Debian's `chromium`,
//! `chromium-driver` ([`crate::browser`]) and `postgresql` ([`crate::postgres`]) in one
//! apt-get run (as root, non-interactive).
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
    if wanted.is_empty() {
        return Ok(());
    }
    let uid = Command::new("id").arg("-u").output()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        bail!(
            "the console browser tests and the PostgreSQL tests need {}: run `sudo apt-get \
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
    Ok(())
}
