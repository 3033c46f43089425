//! `cargo xtask docs-check`: every command block of `docs/getting-started.md` marked runnable
//! runs as printed.
//!
//! A runnable block is a fenced ```` ```sh ```` block whose first line is `# check`. Each one is
//! run with `sh -e` in its own empty temporary folder, with the freshly built debug binaries
//! (`a2a-gateway`, `a2a-agent`, `a2a`) first on `PATH`, in its own process group (whatever it
//! left running is stopped afterwards), within [`BLOCK_TIMEOUT`]. The ports the guide names
//! (8080, 9000) are replaced by free ones, the same in the whole block, so that the check never
//! meets a port in use. A block that exits non-zero fails the check with its output.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::release::target_dir;
use crate::{cargo, root, run};

/// The guide whose blocks are checked.
pub const GUIDE: &str = "docs/getting-started.md";

/// The marker on the first line of a runnable block.
const MARKER: &str = "# check";

/// Longest a block may run.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(120);

/// Ports the guide uses, replaced by free ones when a block runs.
const PORTS: &[&str] = &["8080", "9000"];

/// A runnable block: the line of its opening fence (1-based) and its text.
#[derive(Debug, PartialEq)]
pub struct Block {
    /// Line of the opening fence.
    pub line: usize,
    /// The script (the fence lines excluded).
    pub script: String,
}

/// The runnable blocks of `markdown`.
pub fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(usize, bool, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match &mut open {
            None if fence => {
                let lang = line.trim_start().trim_start_matches('`').trim();
                open = Some((i + 1, lang == "sh", String::new()));
            }
            None => {}
            Some((start, is_sh, text)) if fence => {
                if *is_sh && text.lines().next().map(str::trim) == Some(MARKER) {
                    out.push(Block {
                        line: *start,
                        script: std::mem::take(text),
                    });
                }
                open = None;
            }
            Some((_, _, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    out
}

/// Builds the binaries and runs every runnable block of the guide.
pub fn docs_check() -> Result<()> {
    let mut b = cargo();
    // The set `cargo xtask conformance` builds, so CI builds it once.
    b.args(["build", "--workspace", "--bins", "--quiet"]);
    run("cargo build --workspace --bins (docs-check)", b)?;
    let bins = target_dir().join("debug");
    let guide = root().join(GUIDE);
    let text =
        std::fs::read_to_string(&guide).with_context(|| format!("read {}", guide.display()))?;
    let blocks = blocks(&text);
    if blocks.is_empty() {
        bail!("{GUIDE} has no runnable block (```sh starting with `{MARKER}`)");
    }
    let mut failed = Vec::new();
    for block in &blocks {
        let started = Instant::now();
        match run_block(block, &bins) {
            Ok(()) => eprintln!(
                "docs-check: {GUIDE}:{} ok ({:.1}s)",
                block.line,
                started.elapsed().as_secs_f64()
            ),
            Err(e) => {
                eprintln!("docs-check: {GUIDE}:{} FAILED: {e:#}", block.line);
                failed.push(block.line);
            }
        }
    }
    if !failed.is_empty() {
        bail!("{GUIDE}: the blocks at lines {failed:?} failed");
    }
    eprintln!("docs-check: {} blocks of {GUIDE} ran", blocks.len());
    Ok(())
}

/// A free port on loopback (bound, then released).
fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Runs one block in a fresh folder; its output in the error when it fails.
fn run_block(block: &Block, bins: &Path) -> Result<()> {
    let dir = std::env::temp_dir().join(format!(
        "a2a-docs-check-{}-{}",
        std::process::id(),
        block.line
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let mut script = block.script.clone();
    for port in PORTS {
        script = script.replace(port, &free_port()?.to_string());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths: Vec<PathBuf> = vec![bins.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    let log = dir.join(".docs-check-output");
    let mut cmd = Command::new("sh");
    cmd.arg("-e")
        .arg("-c")
        .arg(&script)
        .current_dir(&dir)
        .env("PATH", std::env::join_paths(paths)?)
        .env_remove("A2A_BEARER")
        .env_remove("A2A_API_KEY")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log)?)
        .stderr(std::fs::File::create(dir.join(".docs-check-stderr"))?);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("A2A_GATEWAY_")
            || k.to_string_lossy().starts_with("A2A_AGENT_")
        {
            cmd.env_remove(k);
        }
    }
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().context("start sh")?;
    let deadline = Instant::now() + BLOCK_TIMEOUT;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever the block left running (a server it did not stop, or all of it on a timeout).
    let _ = Command::new("kill")
        .args(["-TERM", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.wait();
    let output = |name: &str| {
        let mut s = String::new();
        let _ = std::fs::File::open(dir.join(name)).and_then(|mut f| f.read_to_string(&mut s));
        s
    };
    let result = match status {
        Some(s) if s.success() => Ok(()),
        Some(s) => Err(anyhow::anyhow!(
            "{s}\n--- script\n{script}--- stdout\n{}--- stderr\n{}",
            output(".docs-check-output"),
            output(".docs-check-stderr")
        )),
        None => Err(anyhow::anyhow!(
            "still running after {}s\n--- stdout\n{}--- stderr\n{}",
            BLOCK_TIMEOUT.as_secs(),
            output(".docs-check-output"),
            output(".docs-check-stderr")
        )),
    };
    if result.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_marked_sh_blocks_are_runnable() {
        let md = "text\n```sh\n# check\necho a\n```\n```sh\necho not marked\n```\n```text\n# check\nno\n```\n\n```sh\n# check\necho b\necho c\n```\n";
        assert_eq!(
            blocks(md),
            vec![
                Block {
                    line: 2,
                    script: "# check\necho a\n".into()
                },
                Block {
                    line: 14,
                    script: "# check\necho b\necho c\n".into()
                },
            ]
        );
    }

    #[test]
    fn the_guide_has_runnable_blocks() {
        let text = std::fs::read_to_string(root().join(GUIDE)).unwrap();
        assert!(blocks(&text).len() >= 3);
    }
}
