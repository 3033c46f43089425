//! The handler API: what user code implements, what it receives and what it returns (`api`),
//! the [`Emitter`] it reports progress with (`emitter`), and [`SubTask`] (`subtask`).

mod api;
mod emitter;
mod subtask;

pub use api::{
    ExtensionHandler, FnHandler, HIDDEN_HEADERS, Handler, HandlerError, Reply, RequestContext,
    handler_fn, visible_headers,
};
pub(crate) use api::{Headers, RawMessage};
pub use emitter::Emitter;
pub(crate) use emitter::{
    Edit, MetadataFuture, MetadataGuard, SinkFuture, TaskSink, add_artifact, status_change,
    trim_history, trim_shared,
};
pub use subtask::{SUB_TASK_ID_KEY, SubTask};
