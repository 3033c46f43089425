//! What every Python child process shares: its environment and the kept tail of its stderr.

use std::collections::VecDeque;
use std::process::Command;
use std::sync::{Arc, Mutex};

use super::sdk::repo_root;

/// How many stderr lines of a child are kept for error messages.
pub(super) const STDERR_TAIL: usize = 200;

pub(super) fn python_env(cmd: &mut Command) {
    cmd.env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(repo_root());
}

pub(super) type Tail = Arc<Mutex<VecDeque<String>>>;

pub(super) fn push_tail(tail: &Tail, line: String) {
    if let Ok(mut t) = tail.lock() {
        if t.len() == STDERR_TAIL {
            t.pop_front();
        }
        t.push_back(line);
    }
}

pub(super) fn tail_text(tail: &Tail) -> String {
    tail.lock()
        .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}
