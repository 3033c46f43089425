//! What a call produced, in the caller's version: a unary result, a passed-through answer or a
//! stream of events.

use futures::stream::BoxStream;
use serde_json::Value;

use crate::protocol::errors::Refusal;

/// What a call produced, in the caller's version.
pub enum Answer {
    /// A unary result.
    Unary(Value),
    /// A unary result passed through as the peer's JSON text (`crate::protocol::passed`).
    Passed(crate::protocol::passed::Passed),
    /// A stream of events; an `Err` is the final (error) event.
    Stream(BoxStream<'static, Result<Value, Refusal>>),
}
