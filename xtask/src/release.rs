//! Release chores: `cargo xtask package` (the CI packaging and semver checks). The release
//! archives (`cargo xtask dist`) are [`crate::dist`]. See `docs/releases.md`.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Result, bail};

use crate::{cargo, root, run};

/// The published packages in dependency order, with the binary each one installs.
pub const PUBLISHED: &[(&str, Option<&str>)] = &[
    ("a2ars-types", None),
    ("a2ars-pg", None),
    ("a2ars-translate", None),
    ("a2ars-client", Some("a2a")),
    ("a2ars-agent", Some("a2a-agent")),
    ("a2ars-gateway", Some("a2a-gateway")),
];

/// Workspace members that are never published (`publish = false`).
const UNPUBLISHED: &[&str] = &["conformance", "xtask"];

/// `cargo package` of every published crate, as `cargo publish` would upload it.
///
/// One `cargo package --workspace` call (cargo 1.90+): cargo packages the members in dependency
/// order and resolves each one's dependencies on not-yet-published siblings against a local
/// registry holding the siblings it just packaged, so `a2ars-gateway` is checked against the
/// packaged `a2ars-agent`, not the folder. With `verify`, each package is also built from its
/// `.crate` contents (what a user of crates.io gets); the dev profile of the workspace is passed
/// so the build reuses `target/debug`'s dependencies. Then the semver check (see [`semver`]).
pub fn package(verify: bool) -> Result<()> {
    forget_stale_extractions()?;
    let mut c = cargo();
    // --allow-dirty: `cargo xtask test` runs before a commit too; the packages are checked, not
    // uploaded (`cargo publish` itself still refuses a dirty tree).
    c.args(["package", "--workspace", "--allow-dirty"]);
    for p in UNPUBLISHED {
        c.args(["--exclude", p]);
    }
    if verify {
        // The packaged manifests carry no [profile]; the workspace's dev profile keeps the
        // verification builds on the artifacts `cargo build` / `cargo nextest` already made.
        c.args([
            "--config",
            "profile.dev.debug=\"line-tables-only\"",
            "--config",
            "profile.dev.package.\"*\".debug=false",
        ]);
    } else {
        c.arg("--no-verify");
    }
    run("cargo package --workspace", c)?;
    let dir = target_dir().join("package");
    for (name, _) in PUBLISHED {
        let krate = dir.join(format!("{name}-{}.crate", version()?));
        if !krate.exists() {
            bail!("{} was not written", krate.display());
        }
        eprintln!("xtask: packaged {}", krate.display());
    }
    semver()
}

/// `cargo package --workspace` verifies each package against the ones packaged before it
/// through a local registry, which cargo unpacks under `$CARGO_HOME/registry/src/<hash of the
/// checkout's path>/<name>-<version>` and reuses while that folder exists: a second run from the
/// same checkout with changed sources but the same version would verify against the first run's
/// sources. So the unpacked copies of our own packages from such local registries (not from
/// crates.io) are removed first.
fn forget_stale_extractions() -> Result<()> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry").join("src")) else {
        return Ok(());
    };
    let Ok(sources) = std::fs::read_dir(&src) else {
        return Ok(());
    };
    let version = version()?;
    for source in sources.flatten() {
        if source
            .file_name()
            .to_string_lossy()
            .starts_with("index.crates.io")
        {
            continue;
        }
        for (name, _) in PUBLISHED {
            let unpacked = source.path().join(format!("{name}-{version}"));
            if unpacked.is_dir() {
                std::fs::remove_dir_all(&unpacked)?;
                eprintln!(
                    "xtask: removed a stale unpacked copy: {}",
                    unpacked.display()
                );
            }
        }
    }
    Ok(())
}

/// `cargo semver-checks` of every published crate against the last `v*` tag, when there is one
/// and the tool is installed; otherwise says why it is skipped (CI does not install it).
pub fn semver() -> Result<()> {
    let out = Command::new("git")
        .current_dir(root())
        .args(["describe", "--tags", "--abbrev=0", "--match", "v*"])
        .output();
    let tag = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        _ => {
            eprintln!(
                "xtask: semver check skipped: no release tag `v*` yet (nothing published to compare with)"
            );
            return Ok(());
        }
    };
    let installed = cargo()
        .args(["semver-checks", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!(
            "xtask: semver check against {tag} skipped: cargo-semver-checks is not installed \
             (cargo install cargo-semver-checks --locked)"
        );
        return Ok(());
    }
    let mut c = cargo();
    c.args(["semver-checks", "check-release", "--baseline-rev", &tag]);
    for (name, _) in PUBLISHED {
        c.args(["-p", name]);
    }
    run(&format!("cargo semver-checks against {tag}"), c)
}

/// The cargo target directory (`CARGO_TARGET_DIR` or `target/`).
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_relative() { root().join(p) } else { p })
        .unwrap_or_else(|| root().join("target"))
}

/// The workspace version (`[workspace.package] version`).
pub(crate) fn version() -> Result<String> {
    let toml = std::fs::read_to_string(root().join("Cargo.toml"))?;
    let mut in_package = false;
    for line in toml.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_package = l == "[workspace.package]";
        } else if in_package && let Some(v) = l.strip_prefix("version") {
            let v = v
                .trim_start()
                .trim_start_matches('=')
                .trim()
                .trim_matches('"');
            return Ok(v.to_owned());
        }
    }
    bail!("no version in [workspace.package] of Cargo.toml")
}
