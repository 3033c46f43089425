//! The JSON examples of both specification texts (`conformance/spec/*.md`): extraction, classification
//! by content to a registered type, and the explicit lists of known-broken and unclassifiable examples.
//!
//! Every ```` ```json ```` block is an example. A block made of SSE `data:` lines is split into one
//! example per event (`v0.3#8.2` is the second event of the eighth block). The bodies of
//! ```` ```http ```` blocks are examples too (`v1.0#http5`), classified by their request line
//! (`POST /message:send` -> `SendMessageRequest`) or, for responses, by content. This module depends only on
//! `serde_json`, so `a2a-types` tests include it with `#[path]`.

mod classify;
mod example;
mod known;
#[cfg(test)]
mod tests;

pub use classify::{Class, Target, classify, classify_example, method_dialect, params_type};
pub use example::{Example, all_examples, extract, spec_texts};
pub use known::{KNOWN_BROKEN, KNOWN_DIFFS, UNCLASSIFIABLE, known_broken, unclassifiable};
