//! Byte bounds of stored tasks: the size of a task or message as stored (its JSON length,
//! counted without allocating) and the limits the task manager and the stores enforce.

use crate::model::{Message, Task};

/// Byte and length limits of stored tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    /// Largest task (JSON bytes: history, artifacts, status). A message that would make its
    /// task larger is refused with InvalidParams before it is stored. 0 = unlimited.
    pub max_task_bytes: usize,
    /// Most messages kept in a task's history; older ones are dropped first. 0 = unlimited.
    pub max_history_length: usize,
}

impl Default for StoreLimits {
    fn default() -> Self {
        StoreLimits {
            max_task_bytes: 16 * 1024 * 1024,
            max_history_length: 1000,
        }
    }
}

struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The JSON length of `v` in bytes (0 if it cannot be serialized).
pub fn json_len(v: &impl serde::Serialize) -> usize {
    let mut c = Counter(0);
    match serde_json::to_writer(&mut c, v) {
        Ok(()) => c.0,
        Err(_) => 0,
    }
}

/// The stored size of a task.
pub fn task_bytes(t: &Task) -> usize {
    json_len(t)
}

/// The stored size of a message.
pub fn message_bytes(m: &Message) -> usize {
    json_len(m)
}

/// Drop the oldest history entries beyond `max` (0 = unlimited).
pub fn cap_history(t: &mut Task, max: usize) {
    if max > 0 && t.history.len() > max {
        let extra = t.history.len() - max;
        t.history.drain(..extra);
    }
}
