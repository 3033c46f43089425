//! The A2A vocabulary as the gateway speaks it: refusals and their forms, rendering, the
//! operation table, translation between versions, passed-through answers, history trimming,
//! webhook secrets in answers.

pub mod answer;
pub mod errors;
pub(crate) mod history;
pub mod ops;
pub mod passed;
pub(crate) mod refusals;
pub(crate) mod refusals_gov;
pub(crate) mod render;
pub mod reveal;
pub mod secrets;
pub mod xlate;

/// The member of `v` at `path`, object key by object key (`["message", "taskId"]`). Used on the
/// hop in place of `Value::pointer`, which parses and unescapes its path (allocating each
/// token) on every call.
pub(crate) fn member<'a>(v: &'a serde_json::Value, path: &[&str]) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}
