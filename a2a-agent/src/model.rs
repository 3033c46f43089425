//! The A2A 1.0 data model used inside the runtime: `a2a_types::v1`, re-exported so that every
//! module names protocol types from one place.

pub use a2a_types::timestamp::Timestamp;
pub use a2a_types::v1::{
    Artifact, ListTasksRequest, ListTasksResponse, Message, Metadata as Struct, Part, PartContent,
    Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
