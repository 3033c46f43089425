//! The headless browser of the gateway console's end-to-end tests (`a2a-gateway/tests/
//! console_browser.rs`): Debian's `chromium` and `chromium-driver` (installed by
//! [`crate::packages`] when missing).

use std::path::Path;

/// Where the tests look for the browser and its driver.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// The WebDriver server for it.
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Whether the browser and its driver are where the tests look.
pub fn present() -> bool {
    Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists()
}
