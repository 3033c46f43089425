//! Binding-independent operations in 1.0 terms: parameters in, typed results out.

mod dispatch;
mod list;
mod push;
mod send;

pub(crate) use dispatch::{Outcome, SENT_CAPACITY, dispatch_v, send_op};
pub(crate) use send::SendParams;
pub use send::resolve_return_immediately;
