//! `cargo xtask dist --debug`: each server bundle unpacks into a temporary folder, its binary
//! starts there with the bundle's sample settings, answers 200 on `/readyz` (probed with its own
//! `healthcheck` command, as the Dockerfile does), survives a SIGHUP (`systemctl reload`) and
//! stops on SIGTERM with status 0. The systemd units are checked with `systemd-analyze verify`
//! when it is installed.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The debug binaries' folder (`CARGO_TARGET_DIR` or the workspace's `target/`).
fn debug_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_relative() { root.join(p) } else { p })
        .unwrap_or_else(|| root.join("target"))
        .join("debug")
}

/// Runs `cargo xtask dist --debug --out DIR` once; the archives it wrote. Under `cargo nextest
/// run --workspace` the binaries are already built (the servers' integration tests need them),
/// so they are bundled as they are (`--no-build`): building them again alone would compile with
/// another feature set. Missing ones are built first.
fn build_bundles(out: &Path) -> Vec<PathBuf> {
    let built = ["a2a-gateway", "a2a-agent", "a2a"]
        .iter()
        .all(|b| debug_dir().join(b).exists());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    cmd.args(["dist", "--debug", "--out"]).arg(out);
    if built {
        cmd.arg("--no-build");
    }
    let status = cmd.stdout(Stdio::null()).status().expect("xtask runs");
    assert!(status.success(), "cargo xtask dist --debug failed");
    let mut archives: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    archives.sort();
    archives
}

/// Unpacks `archive` into `into`; the one folder it holds and the listing (path, mode).
fn unpack(archive: &Path, into: &Path) -> (PathBuf, Vec<(String, u32)>) {
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(archive).unwrap());
    let mut tar = tar::Archive::new(gz);
    std::fs::create_dir_all(into).unwrap();
    let mut listing = Vec::new();
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        listing.push((path, entry.header().mode().unwrap()));
        assert!(entry.unpack_in(into).unwrap(), "entry escapes the folder");
    }
    let stem = archive
        .file_name()
        .unwrap()
        .to_string_lossy()
        .trim_end_matches(".tar.gz")
        .to_owned();
    (into.join(stem), listing)
}

/// Starts `cmd` (stdout piped) and returns it with the URL of its `LISTENING` line.
fn start(mut cmd: Command) -> (Child, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("LISTENING ") {
                let _ = tx.send(url.trim().to_owned());
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(url) => (child, url),
        Err(_) => {
            let _ = child.kill();
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("no LISTENING line: {err}");
        }
    }
}

/// Runs `bin healthcheck --url {url}/readyz` until it exits 0 (30 s at most).
fn wait_ready(bin: &Path, url: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = Command::new(bin)
            .args(["healthcheck", "--url", &format!("{url}/readyz")])
            .output()
            .unwrap();
        if out.status.success() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "never ready: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// SIGHUP keeps it serving; SIGTERM ends it with status 0 within 30 s.
fn hup_then_term(mut child: Child, bin: &Path, url: &str) {
    signal(&child, "-HUP");
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "SIGHUP ended it");
    wait_ready(bin, url);
    signal(&child, "-TERM");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "still running 30 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit after SIGTERM: {status}");
    // Not ready any more: nothing answers.
    let probe = Command::new(bin)
        .args(["healthcheck", "--url", &format!("{url}/readyz")])
        .output()
        .unwrap();
    assert_eq!(probe.status.code(), Some(1));
}

/// `systemd-analyze verify` of the unit, its binary paths pointed at the unpacked bundle.
fn verify_unit(dir: &Path, name: &str) {
    let available = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        eprintln!("systemd-analyze not installed: {name}.service not verified");
        return;
    }
    let unit = std::fs::read_to_string(dir.join(format!("{name}.service"))).unwrap();
    let bin = dir.join("bin").join(name);
    let local = unit.replace(&format!("/usr/local/bin/{name}"), bin.to_str().unwrap());
    let check = dir.join("verify");
    std::fs::create_dir_all(&check).unwrap();
    std::fs::write(check.join(format!("{name}.service")), local).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(check.join(format!("{name}.service")))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    // Outside a booted systemd (containers, CI) verify also reports the host's own units and
    // the missing user; only lines about our unit's contents count.
    let ours: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(&format!("{name}.service:")))
        .collect();
    assert!(ours.is_empty(), "systemd-analyze verify: {text}");
}

#[test]
fn server_bundles_unpack_start_with_their_sample_and_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("dist");
    let archives = build_bundles(&out);
    let names: Vec<String> = archives
        .iter()
        .map(|a| a.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    for bin in ["a2a-gateway", "a2a-agent", "a2a"] {
        assert!(
            names
                .iter()
                .any(|n| n.starts_with(&format!("{bin}-{version}-")) && n.ends_with(".tar.gz")),
            "no {bin} bundle in {names:?}"
        );
    }
    for bin in ["a2a-gateway", "a2a-agent"] {
        let archive = archives
            .iter()
            .find(|a| {
                a.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("{bin}-{version}"))
            })
            .unwrap();
        let unpacked = tmp.path().join(format!("unpacked-{bin}"));
        let (dir, listing) = unpack(archive, &unpacked);
        let stem = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<(String, u32)> = listing
            .iter()
            .map(|(p, m)| (p.trim_start_matches(&format!("{stem}/")).to_owned(), *m))
            .collect();
        files.sort();
        assert!(
            listing
                .iter()
                .all(|(p, _)| p.starts_with(&format!("{stem}/"))),
            "one folder: {listing:?}"
        );
        let expected = [
            (String::new(), 0o755),
            ("Dockerfile".into(), 0o644),
            ("LICENSE".into(), 0o644),
            ("README.md".into(), 0o644),
            (format!("{bin}.service"), 0o644),
            (format!("{bin}.toml"), 0o644),
            ("bin/".into(), 0o755),
            (format!("bin/{bin}"), 0o755),
            ("state/".into(), 0o755),
        ];
        let mut expected = expected.to_vec();
        if bin == "a2a-gateway" {
            expected.extend([
                ("lb/".into(), 0o755),
                ("lb/haproxy.cfg".into(), 0o644),
                ("lb/nginx.conf".into(), 0o644),
            ]);
        }
        expected.sort();
        assert_eq!(files, expected, "{bin} bundle contents");
        let docker = std::fs::read_to_string(dir.join("Dockerfile")).unwrap();
        for needle in [
            "FROM gcr.io/distroless/cc-debian12:nonroot",
            "USER 65532",
            "EXPOSE 8080",
            "HEALTHCHECK",
            &format!("\"/usr/local/bin/{bin}\", \"healthcheck\""),
        ] {
            assert!(docker.contains(needle), "{bin} Dockerfile lacks {needle}");
        }
        assert!(!docker.contains("@VERSION@") && docker.contains(version));
        let sample = std::fs::read_to_string(dir.join(format!("{bin}.toml"))).unwrap();
        assert!(sample.starts_with(&format!("# {bin} settings")), "{sample}");
        verify_unit(&dir, bin);

        let binary = dir.join("bin").join(bin);
        let mut cmd = Command::new(&binary);
        cmd.current_dir(&dir)
            .arg("serve")
            .arg("--config")
            .arg(dir.join(format!("{bin}.toml")));
        if bin == "a2a-gateway" {
            cmd.args(["--listen", "127.0.0.1:0"]);
        } else {
            cmd.args(["--echo", "--port", "0"]);
        }
        let (child, url) = start(cmd);
        wait_ready(&binary, &url);
        // The Dockerfile's HEALTHCHECK: no flags, the address from the image's environment
        // (listening on every interface, probed on loopback).
        let port = url
            .rsplit(':')
            .next()
            .unwrap()
            .trim_end_matches('/')
            .to_owned();
        let mut probe = Command::new(&binary);
        probe.arg("healthcheck");
        if bin == "a2a-gateway" {
            probe.env("A2A_GATEWAY_LISTEN", format!("0.0.0.0:{port}"));
        } else {
            probe
                .env("A2A_AGENT_HOST", "0.0.0.0")
                .env("A2A_AGENT_PORT", &port);
        }
        let out = probe.output().unwrap();
        assert!(
            out.status.success(),
            "{bin} healthcheck from the environment: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if bin == "a2a-gateway" {
            // The sample's relative database path is the working directory's.
            assert!(dir.join("a2a-gateway.db").exists());
        }
        hup_then_term(child, &binary, &url);
    }
}
