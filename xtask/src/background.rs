//! Jobs `cargo xtask test` runs in the background while CPU-bound steps go on: a child
//! process whose output goes to a file, joined (waited for, its output shown when it failed)
//! before the steps that need it, stopped when an earlier step fails.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// A started job: what it is, the child and the file holding its output.
pub struct Job {
    what: &'static str,
    child: Child,
    log: PathBuf,
}

/// Starts `cmd` in the background, its stdout and stderr to `log`.
pub fn start(what: &'static str, mut cmd: Command, log: PathBuf) -> Result<Job> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    cmd.stdout(out.try_clone()?).stderr(out);
    eprintln!(
        "xtask: {what} started in the background ({})",
        log.display()
    );
    let child = cmd
        .spawn()
        .with_context(|| format!("could not start {what}"))?;
    Ok(Job { what, child, log })
}

/// Waits for the job in `slot`, if one was started; shows the tail of its output when it
/// failed, and fails.
pub fn join(slot: &Mutex<Option<Job>>) -> Result<()> {
    let started = slot.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.take();
    let Some(mut job) = started else {
        return Ok(());
    };
    let begun = Instant::now();
    let status = job
        .child
        .wait()
        .with_context(|| format!("waiting for {}", job.what))?;
    eprintln!(
        "xtask: {} ended ({status}; waited {:.1}s; output in {})",
        job.what,
        begun.elapsed().as_secs_f64(),
        job.log.display()
    );
    if !status.success() {
        let text = std::fs::read_to_string(&job.log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(60).collect();
        for l in tail.into_iter().rev() {
            eprintln!("{l}");
        }
        bail!(
            "{} failed ({status}); output in {}",
            job.what,
            job.log.display()
        );
    }
    Ok(())
}

/// Stops the job in `slot`, if one runs (a step before its join failed).
pub fn abandon(slot: &Mutex<Option<Job>>) {
    if let Ok(mut guard) = slot.lock()
        && let Some(mut job) = guard.take()
    {
        let _ = job.child.kill();
        let _ = job.child.wait();
    }
}
