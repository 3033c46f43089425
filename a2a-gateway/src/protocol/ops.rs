//! The DVARA API's operation table: 0.3 name, 1.0 name, gateway path, scope and streaming flag.

use crate::keys::Scope;
use crate::{protocol::errors::Refusal, protocol::errors::Version};

/// One A2A operation the gateway proxies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// message/send, SendMessage.
    SendMessage,
    /// message/stream, SendStreamingMessage.
    SendStreamingMessage,
    /// tasks/get, GetTask.
    GetTask,
    /// tasks/list (no 0.3 JSON-RPC method), ListTasks.
    ListTasks,
    /// tasks/cancel, CancelTask.
    CancelTask,
    /// tasks/resubscribe, SubscribeToTask.
    SubscribeToTask,
    /// tasks/pushNotificationConfig/set, CreateTaskPushNotificationConfig.
    SetPushConfig,
    /// tasks/pushNotificationConfig/get, GetTaskPushNotificationConfig.
    GetPushConfig,
    /// tasks/pushNotificationConfig/list, ListTaskPushNotificationConfigs.
    ListPushConfigs,
    /// tasks/pushNotificationConfig/delete, DeleteTaskPushNotificationConfig.
    DeletePushConfig,
}

/// Every operation, in the DVARA API's order.
pub const ALL: [Operation; 10] = [
    Operation::SendMessage,
    Operation::SendStreamingMessage,
    Operation::GetTask,
    Operation::ListTasks,
    Operation::CancelTask,
    Operation::SubscribeToTask,
    Operation::SetPushConfig,
    Operation::GetPushConfig,
    Operation::ListPushConfigs,
    Operation::DeletePushConfig,
];

impl Operation {
    /// The 0.3 JSON-RPC method name (`tasks/list` for ListTasks, which 0.3 JSON-RPC lacks; it
    /// is the name audit records use).
    pub fn name_03(self) -> &'static str {
        match self {
            Operation::SendMessage => "message/send",
            Operation::SendStreamingMessage => "message/stream",
            Operation::GetTask => "tasks/get",
            Operation::ListTasks => "tasks/list",
            Operation::CancelTask => "tasks/cancel",
            Operation::SubscribeToTask => "tasks/resubscribe",
            Operation::SetPushConfig => "tasks/pushNotificationConfig/set",
            Operation::GetPushConfig => "tasks/pushNotificationConfig/get",
            Operation::ListPushConfigs => "tasks/pushNotificationConfig/list",
            Operation::DeletePushConfig => "tasks/pushNotificationConfig/delete",
        }
    }

    /// The 1.0 JSON-RPC method name.
    pub fn name_10(self) -> &'static str {
        match self {
            Operation::SendMessage => "SendMessage",
            Operation::SendStreamingMessage => "SendStreamingMessage",
            Operation::GetTask => "GetTask",
            Operation::ListTasks => "ListTasks",
            Operation::CancelTask => "CancelTask",
            Operation::SubscribeToTask => "SubscribeToTask",
            Operation::SetPushConfig => "CreateTaskPushNotificationConfig",
            Operation::GetPushConfig => "GetTaskPushNotificationConfig",
            Operation::ListPushConfigs => "ListTaskPushNotificationConfigs",
            Operation::DeletePushConfig => "DeleteTaskPushNotificationConfig",
        }
    }

    /// The method name in `version`.
    pub fn name(self, version: Version) -> &'static str {
        match version {
            Version::V03 => self.name_03(),
            Version::V1 => self.name_10(),
        }
    }

    /// The gateway path segment, such as `message:send`.
    pub fn path(self) -> &'static str {
        match self {
            Operation::SendMessage => "message:send",
            Operation::SendStreamingMessage => "message:stream",
            Operation::GetTask => "tasks:get",
            Operation::ListTasks => "tasks:list",
            Operation::CancelTask => "tasks:cancel",
            Operation::SubscribeToTask => "tasks:resubscribe",
            Operation::SetPushConfig => "pushConfig:set",
            Operation::GetPushConfig => "pushConfig:get",
            Operation::ListPushConfigs => "pushConfig:list",
            Operation::DeletePushConfig => "pushConfig:delete",
        }
    }

    /// The scope the operation needs.
    pub fn scope(self) -> Scope {
        match self {
            Operation::GetTask
            | Operation::ListTasks
            | Operation::SubscribeToTask
            | Operation::GetPushConfig
            | Operation::ListPushConfigs => Scope::Read,
            _ => Scope::Send,
        }
    }

    /// Whether the answer is an SSE stream.
    pub fn is_streaming(self) -> bool {
        matches!(
            self,
            Operation::SendStreamingMessage | Operation::SubscribeToTask
        )
    }

    /// Looks an operation up by its path segment.
    pub fn from_path(path: &str) -> Option<Operation> {
        ALL.into_iter().find(|o| o.path() == path)
    }

    /// Resolves a JSON-RPC method name in the caller's version, with the DVARA API's answers:
    /// the other version's name or an unknown name is -32601 naming the right method.
    pub fn from_method(method: &str, version: Version) -> Result<Operation, Refusal> {
        if let Some(op) = ALL.into_iter().find(|o| match version {
            // 0.3 JSON-RPC has no ListTasks method.
            Version::V03 => *o != Operation::ListTasks && o.name_03() == method,
            Version::V1 => o.name_10() == method,
        }) {
            return Ok(op);
        }
        let other = match version {
            Version::V03 => ALL.into_iter().find(|o| o.name_10() == method),
            Version::V1 => ALL.into_iter().find(|o| o.name_03() == method),
        };
        Err(match (other, version) {
            (Some(Operation::ListTasks), Version::V03) => Refusal::method_not_found(&format!(
                "{method} is an A2A 1.0 method and A2A 0.3 has no JSON-RPC method for it; send A2A-Version: 1.0"
            )),
            (Some(op), Version::V03) => Refusal::method_not_found(&format!(
                "{method} is an A2A 1.0 name; in A2A 0.3 use {} (or send A2A-Version: 1.0)",
                op.name_03()
            )),
            (Some(op), Version::V1) => Refusal::method_not_found(&format!(
                "{method} is an A2A 0.3 name; in A2A 1.0 use {}",
                op.name_10()
            )),
            (None, _) => Refusal::method_not_found(&format!(
                "{method} is not an A2A method the gateway forwards"
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_per_version() {
        assert_eq!(
            Operation::from_method("tasks/get", Version::V03),
            Ok(Operation::GetTask)
        );
        assert_eq!(
            Operation::from_method("GetTask", Version::V1),
            Ok(Operation::GetTask)
        );
        let e = Operation::from_method("GetTask", Version::V03).unwrap_err();
        assert_eq!(e.rpc_code, -32601);
        assert!(e.message.contains("tasks/get"), "{}", e.message);
        let e = Operation::from_method("tasks/get", Version::V1).unwrap_err();
        assert!(e.message.contains("GetTask"));
        assert!(Operation::from_method("tasks/list", Version::V03).is_err());
        for op in ALL {
            assert_eq!(Operation::from_path(op.path()), Some(op));
        }
    }
}
