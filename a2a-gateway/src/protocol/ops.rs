//! The operations the gateway forwards. The table itself is a2a-types' one operation table
//! ([`Operation`] is [`a2a_types::jsonrpc::V1Method`]: both name sets, streaming, whether it only
//! reads); [`GatewayOp`] adds what is the gateway's own: the DVARA API's path names
//! (`message:send`), the key scope an operation needs, and the name audit records use.

use crate::keys::Scope;
use crate::{protocol::errors::Refusal, protocol::errors::Version};

/// One A2A operation (the gateway forwards every one but `GetExtendedAgentCard`, see [`ALL`]).
pub use a2a_types::jsonrpc::V1Method as Operation;

/// Every operation the gateway forwards, in the DVARA API's order.
pub const ALL: [Operation; 10] = [
    Operation::SendMessage,
    Operation::SendStreamingMessage,
    Operation::GetTask,
    Operation::ListTasks,
    Operation::CancelTask,
    Operation::SubscribeToTask,
    Operation::CreateTaskPushNotificationConfig,
    Operation::GetTaskPushNotificationConfig,
    Operation::ListTaskPushNotificationConfigs,
    Operation::DeleteTaskPushNotificationConfig,
];

/// The gateway's reading of an operation.
pub trait GatewayOp: Sized {
    /// The 0.3 JSON-RPC method name (`tasks/list` for ListTasks, which 0.3 JSON-RPC lacks; it
    /// is the name audit records use).
    fn name_03(self) -> &'static str;
    /// The 1.0 JSON-RPC method name.
    fn name_10(self) -> &'static str;
    /// The method name in `version`.
    fn name(self, version: Version) -> &'static str;
    /// The gateway path segment, such as `message:send`.
    fn path(self) -> &'static str;
    /// The key scope the operation needs.
    fn scope(self) -> Scope;
    /// Looks an operation up by its path segment.
    fn from_path(path: &str) -> Option<Self>;
}

impl GatewayOp for Operation {
    fn name_03(self) -> &'static str {
        self.v03_name().unwrap_or("tasks/list")
    }

    fn name_10(self) -> &'static str {
        self.v1_name()
    }

    fn name(self, version: Version) -> &'static str {
        match version {
            Version::V03 => self.name_03(),
            Version::V1 => self.name_10(),
        }
    }

    fn path(self) -> &'static str {
        match self {
            Operation::SendMessage => "message:send",
            Operation::SendStreamingMessage => "message:stream",
            Operation::GetTask => "tasks:get",
            Operation::ListTasks => "tasks:list",
            Operation::CancelTask => "tasks:cancel",
            Operation::SubscribeToTask => "tasks:resubscribe",
            Operation::CreateTaskPushNotificationConfig => "pushConfig:set",
            Operation::GetTaskPushNotificationConfig => "pushConfig:get",
            Operation::ListTaskPushNotificationConfigs => "pushConfig:list",
            Operation::DeleteTaskPushNotificationConfig => "pushConfig:delete",
            Operation::GetExtendedAgentCard => "card:extended",
        }
    }

    fn scope(self) -> Scope {
        if self.reads_only() {
            Scope::Read
        } else {
            Scope::Send
        }
    }

    fn from_path(path: &str) -> Option<Operation> {
        ALL.into_iter().find(|o| o.path() == path)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_per_version() {
        assert_eq!(
            from_method("tasks/get", Version::V03),
            Ok(Operation::GetTask)
        );
        assert_eq!(from_method("GetTask", Version::V1), Ok(Operation::GetTask));
        let e = from_method("GetTask", Version::V03).unwrap_err();
        assert_eq!(e.rpc_code, -32601);
        assert!(e.message.contains("tasks/get"), "{}", e.message);
        let e = from_method("tasks/get", Version::V1).unwrap_err();
        assert!(e.message.contains("GetTask"));
        assert!(from_method("tasks/list", Version::V03).is_err());
        for op in ALL {
            assert_eq!(Operation::from_path(op.path()), Some(op));
        }
    }
}
