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
