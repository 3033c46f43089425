//! `cargo xtask dist`: one installable bundle per binary under `target/dist/`
//! (docs/operations.md, "Deploy"; docs/releases.md).
//!
//! `{bin}-{version}-{target}.tar.gz` unpacks to one folder `{bin}-{version}-{target}/` holding
//! `bin/{bin}` and `LICENSE`; the two servers' bundles also hold the sample settings
//! (`{bin}.toml`, printed by the binary's own `config sample`, so it lists every setting of the
//! build it ships with), a systemd unit, a Dockerfile, an empty `state/` folder (the image's state
//! directory) and a README, from the templates in `dist/{bin}/` (`@VERSION@`, `@TARGET@`
//! replaced); the gateway's also the sample load-balancer configurations `lb/nginx.conf` and
//! `lb/haproxy.cfg` (docs/replicas.md, "Load balancer"). The client's bundle holds `bin/a2a`, its crate README and the licence.
//!
//! The archives are written with the `tar` and `flate2` crates: entries sorted, owned by root,
//! modes 0755 (binaries, folders) and 0644, one modification time (`SOURCE_DATE_EPOCH`, else
//! now).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::release::{target_dir, version};
use crate::{cargo, root, run};

/// A bundle: the binary, the package that builds it, and whether it is a server (sample
/// settings, unit, Dockerfile from `dist/{bin}/`).
struct Bundle {
    bin: &'static str,
    package: &'static str,
    folder: &'static str,
    server: bool,
}

const BUNDLES: &[Bundle] = &[
    Bundle {
        bin: "a2a-gateway",
        package: "a2ars-gateway",
        folder: "a2a-gateway",
        server: true,
    },
    Bundle {
        bin: "a2a-agent",
        package: "a2ars-agent",
        folder: "a2a-agent",
        server: true,
    },
    Bundle {
        bin: "a2a",
        package: "a2ars-client",
        folder: "a2a-client",
        server: false,
    },
];

/// Options of `cargo xtask dist`.
pub struct Options {
    /// Cargo profile of the binaries (`release`, or `dev` for a quick bundle in tests).
    pub profile: String,
    /// Folder the archives go to (default: `target/dist`).
    pub out: Option<PathBuf>,
    /// Bundle the binaries already built for the profile instead of building them (the bundle
    /// test, after `cargo nextest` built them).
    pub no_build: bool,
}

/// Builds the binaries and writes one archive per binary; prints each archive's path.
pub fn dist(opts: &Options) -> Result<Vec<PathBuf>> {
    let host = crate::fuzz::host()?;
    let version = version()?;
    if !opts.no_build {
        let mut b = cargo();
        b.args(["build", "--locked", "--profile", &opts.profile]);
        for bundle in BUNDLES {
            b.args(["-p", bundle.package, "--bin", bundle.bin]);
        }
        // The binaries' features (`required-features`): every capability, jemalloc included
        // (the gateway's default).
        b.args(["--features", "a2ars-agent/cli a2ars-client/cli"]);
        run(&format!("cargo build --profile {} (dist)", opts.profile), b)?;
    }
    let bins = target_dir().join(match opts.profile.as_str() {
        "dev" | "test" => "debug",
        "release" | "bench" => "release",
        other => other,
    });
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| target_dir().join("dist"));
    std::fs::create_dir_all(&out).with_context(|| format!("create {}", out.display()))?;
    let mtime = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    let mut written = Vec::new();
    for bundle in BUNDLES {
        let stem = format!("{}-{version}-{host}", bundle.bin);
        let files = contents(bundle, &bins.join(bundle.bin), &version, &host)?;
        let archive = out.join(format!("{stem}.tar.gz"));
        write_archive(&archive, &stem, &files, mtime)?;
        let size = std::fs::metadata(&archive)?.len();
        println!("{} ({:.1} MB)", archive.display(), size as f64 / 1e6);
        written.push(archive);
    }
    Ok(written)
}

/// One entry of a bundle: its path inside the bundle folder, its bytes (`None`: a folder), and
/// whether it is executable.
struct Entry {
    path: String,
    bytes: Option<Vec<u8>>,
    exec: bool,
}

/// What `bundle` holds.
fn contents(bundle: &Bundle, binary: &Path, version: &str, host: &str) -> Result<Vec<Entry>> {
    let read = |p: &Path| std::fs::read(p).with_context(|| format!("read {}", p.display()));
    let file = |path: &str, bytes: Vec<u8>| Entry {
        path: path.to_owned(),
        bytes: Some(bytes),
        exec: false,
    };
    let mut entries = vec![
        Entry {
            path: format!("bin/{}", bundle.bin),
            bytes: Some(read(binary)?),
            exec: true,
        },
        file("LICENSE", read(&root().join("LICENSE"))?),
    ];
    if !bundle.server {
        entries.push(file(
            "README.md",
            read(&root().join(bundle.folder).join("README.md"))?,
        ));
        return Ok(entries);
    }
    let sample = Command::new(binary)
        .args(["config", "sample"])
        .output()
        .with_context(|| format!("run {} config sample", binary.display()))?;
    if !sample.status.success() {
        bail!(
            "{} config sample failed: {}",
            binary.display(),
            String::from_utf8_lossy(&sample.stderr)
        );
    }
    entries.push(file(&format!("{}.toml", bundle.bin), sample.stdout));
    let templates = root().join("dist").join(bundle.bin);
    for name in [
        "README.md".to_owned(),
        "Dockerfile".to_owned(),
        format!("{}.service", bundle.bin),
    ] {
        let text = String::from_utf8(read(&templates.join(&name))?)
            .with_context(|| format!("{name} is not UTF-8"))?;
        let text = text.replace("@VERSION@", version).replace("@TARGET@", host);
        entries.push(file(&name, text.into_bytes()));
    }
    if bundle.bin == "a2a-gateway" {
        for name in ["lb/nginx.conf", "lb/haproxy.cfg"] {
            entries.push(file(name, read(&templates.join(name))?));
        }
    }
    entries.push(Entry {
        path: "state".into(),
        bytes: None,
        exec: true,
    });
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// Writes `entries` under `stem/` into a gzip-compressed tar file at `archive`.
fn write_archive(archive: &Path, stem: &str, entries: &[Entry], mtime: u64) -> Result<()> {
    let file =
        std::fs::File::create(archive).with_context(|| format!("create {}", archive.display()))?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let header = |kind: tar::EntryType, size: u64, mode: u32| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(mode);
        h.set_mtime(mtime);
        h.set_uid(0);
        h.set_gid(0);
        h
    };
    let mut folders = vec![stem.to_owned()];
    for e in entries {
        if let Some((parent, _)) = e.path.rsplit_once('/') {
            folders.push(format!("{stem}/{parent}"));
        }
    }
    folders.sort();
    folders.dedup();
    for folder in folders {
        let mut h = header(tar::EntryType::Directory, 0, 0o755);
        tar.append_data(&mut h, format!("{folder}/"), std::io::empty())?;
    }
    for e in entries {
        let path = format!("{stem}/{}", e.path);
        match &e.bytes {
            None => {
                let mut h = header(tar::EntryType::Directory, 0, 0o755);
                tar.append_data(&mut h, format!("{path}/"), std::io::empty())?;
            }
            Some(bytes) => {
                let mode = if e.exec { 0o755 } else { 0o644 };
                let mut h = header(tar::EntryType::Regular, bytes.len() as u64, mode);
                tar.append_data(&mut h, &path, bytes.as_slice())?;
            }
        }
    }
    let mut gz = tar.into_inner()?;
    gz.flush()?;
    gz.finish()?;
    Ok(())
}
