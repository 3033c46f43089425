//! JSON-RPC 2.0 envelopes (S1 §9, S0 §6.11) and both versions' method name sets.
//!
//! - [`JsonRpcRequest`]: `{"jsonrpc":"2.0","id":..,"method":..,"params":..}`; `id` absent means a
//!   notification, and [`Id::Null`] is distinct from absent.
//! - [`JsonRpcResponse`]: `{"jsonrpc":"2.0","id":..,"result":..}` or `..."error":{..}}`.
//! - [`V1Method`] (`SendMessage`, ...) and [`V03Method`] (`message/send`, ...). The names never
//!   collide, so [`Method::parse`] also tells the version.
//! - [`parse_request`] classifies bad bodies as parse errors (-32700) or invalid requests
//!   (-32600), keeping the `id` when it could be read.

mod envelope;
mod id;
mod method;
mod parse;
#[cfg(test)]
mod tests;

pub use envelope::{
    JSONRPC_VERSION, JsonRpcError, JsonRpcPayload, JsonRpcRequest, JsonRpcResponse,
};
pub use id::Id;
pub use method::{Method, UnknownMethod, V1Method, V03Method};
pub use parse::{RequestParseError, parse_request, request_from_value};
