//! Byte bounds of stored tasks: the size of a task or message as stored (its compact JSON
//! length, counted without writing the JSON) and the limits the task manager and the stores
//! enforce.

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

/// The JSON length of `v` in bytes: what `serde_json::to_vec(v)` would write, counted without
/// writing it (exact; the counter is the private module `json_size`).
pub fn json_len(v: &impl serde::Serialize) -> usize {
    crate::json_size::len(v)
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
