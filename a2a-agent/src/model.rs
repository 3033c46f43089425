//! The A2A 1.0 data model used inside the runtime: `a2a_types::v1`, re-exported so that every
//! module names protocol types from one place, and the agent's own message maker.

pub use a2a_types::timestamp::Timestamp;
pub use a2a_types::v1::{
    Artifact, ListTasksRequest, ListTasksResponse, Message, Metadata as Struct, Part, PartContent,
    Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

/// A new agent message of task `task_id` in context `context_id` holding `parts`.
pub(crate) fn agent_message(parts: Vec<Part>, task_id: &str, context_id: &str) -> Message {
    Message {
        message_id: uuid::Uuid::new_v4().to_string(),
        context_id: Some(context_id.to_string()),
        task_id: Some(task_id.to_string()),
        role: Role::Agent,
        parts,
        ..Default::default()
    }
}
