//! What a handler author imports: `use a2a_agent::prelude::*;`.
//!
//! The server builder and its handle, the handler API (context, replies, errors, extension
//! handlers, delegation), the card, the stores, the errors, and the A2A 1.0 model types a
//! handler reads and writes.

pub use crate::card::AgentCard;
pub use crate::delegate::{Child, Delegate, DelegateError};
pub use crate::error::{A2aError, ErrorKind};
pub use crate::handler::{
    ExtensionHandler, FnHandler, Handler, HandlerError, Reply, RequestContext, SubTask, handler_fn,
};
pub use crate::model::{
    Artifact, Message, Part, Role, StreamResponse, Task, TaskState, TaskStatus,
};
pub use crate::server::{AgentServer, ServeError, ServerHandle};
pub use crate::store::{MemoryStore, TaskStore};
