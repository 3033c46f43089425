//! The headless browser of the gateway console's end-to-end tests (`a2a-gateway/tests/
//! console_browser.rs`): Debian's `chromium` and `chromium-driver`, installed with apt-get
//! when missing (as root, non-interactive).

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

/// Where the tests look for the browser and its driver.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// The WebDriver server for it.
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Installs chromium and chromium-driver unless both are there.
pub fn ensure() -> Result<()> {
    if Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists() {
        eprintln!("xtask: {CHROMIUM} and {CHROMEDRIVER} present");
        return Ok(());
    }
    let uid = Command::new("id").arg("-u").output()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        bail!(
            "the console browser tests need {CHROMIUM} and {CHROMEDRIVER}: run \
             `sudo apt-get install chromium chromium-driver` (Debian) and try again"
        );
    }
    for args in [
        &["update", "-qq"][..],
        &["install", "-y", "-qq", "chromium", "chromium-driver"][..],
    ] {
        let mut c = Command::new("apt-get");
        c.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        super::run("apt-get", c)?;
    }
    if !Path::new(CHROMEDRIVER).exists() {
        bail!("apt-get installed chromium-driver but {CHROMEDRIVER} is missing");
    }
    Ok(())
}
