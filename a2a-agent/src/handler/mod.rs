//! The handler API: what user code implements, what it receives and what it returns (`api`),
//! and the [`Emitter`] it reports progress with (`emitter`).

mod api;
mod emitter;

pub use api::{
    ExtensionHandler, FnHandler, HIDDEN_HEADERS, Handler, HandlerError, Reply, RequestContext,
    SubTask, handler_fn, visible_headers,
};
pub(crate) use api::{Headers, RawMessage};
pub use emitter::Emitter;
pub(crate) use emitter::{
    Edit, MetadataFuture, MetadataGuard, SinkFuture, TaskSink, add_artifact, status_change,
    trim_history,
};
