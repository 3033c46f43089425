//! The method names of both versions ([`V1Method`], [`V03Method`]) and [`Method`], either of them.

use std::fmt;

use crate::version::ProtocolVersion;

macro_rules! method_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident => $s:literal $(stream $st:tt)?,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $v,)*
        }

        impl $name {
            /// Every method.
            pub const ALL: &'static [$name] = &[$($name::$v,)*];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$v => $s,)* }
            }

            /// Looks a method up by its exact wire name.
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($s => Some($name::$v),)* _ => None }
            }

            /// True for the methods answered with an SSE stream.
            pub const fn is_streaming(self) -> bool {
                match self { $($name::$v => method_enum!(@st $($st)?),)* }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = UnknownMethod;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_name(s).ok_or_else(|| UnknownMethod(s.to_owned()))
            }
        }
    };
    (@st) => { false };
    (@st $t:tt) => { true };
}

/// A method name no version defines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("method not found: {0}")]
pub struct UnknownMethod(pub String);

method_enum! {
    /// A2A 1.0 JSON-RPC methods (= gRPC rpc names, S1 §5.3).
    V1Method {
        /// `SendMessage`.
        SendMessage => "SendMessage",
        /// `SendStreamingMessage` (SSE).
        SendStreamingMessage => "SendStreamingMessage" stream !,
        /// `GetTask`.
        GetTask => "GetTask",
        /// `ListTasks`.
        ListTasks => "ListTasks",
        /// `CancelTask`.
        CancelTask => "CancelTask",
        /// `SubscribeToTask` (SSE).
        SubscribeToTask => "SubscribeToTask" stream !,
        /// `CreateTaskPushNotificationConfig`.
        CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig",
        /// `GetTaskPushNotificationConfig`.
        GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig",
        /// `ListTaskPushNotificationConfigs`.
        ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs",
        /// `DeleteTaskPushNotificationConfig`.
        DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig",
        /// `GetExtendedAgentCard`.
        GetExtendedAgentCard => "GetExtendedAgentCard",
    }
}

method_enum! {
    /// A2A 0.3 JSON-RPC methods (S0 §7).
    V03Method {
        /// `message/send`.
        MessageSend => "message/send",
        /// `message/stream` (SSE).
        MessageStream => "message/stream" stream !,
        /// `tasks/get`.
        TasksGet => "tasks/get",
        /// `tasks/cancel`.
        TasksCancel => "tasks/cancel",
        /// `tasks/resubscribe` (SSE).
        TasksResubscribe => "tasks/resubscribe" stream !,
        /// `tasks/pushNotificationConfig/set`.
        PushConfigSet => "tasks/pushNotificationConfig/set",
        /// `tasks/pushNotificationConfig/get`.
        PushConfigGet => "tasks/pushNotificationConfig/get",
        /// `tasks/pushNotificationConfig/list`.
        PushConfigList => "tasks/pushNotificationConfig/list",
        /// `tasks/pushNotificationConfig/delete`.
        PushConfigDelete => "tasks/pushNotificationConfig/delete",
        /// `agent/getAuthenticatedExtendedCard`.
        GetAuthenticatedExtendedCard => "agent/getAuthenticatedExtendedCard",
    }
}

impl V03Method {
    /// The 1.0 method with the same meaning.
    pub const fn to_v1(self) -> V1Method {
        match self {
            V03Method::MessageSend => V1Method::SendMessage,
            V03Method::MessageStream => V1Method::SendStreamingMessage,
            V03Method::TasksGet => V1Method::GetTask,
            V03Method::TasksCancel => V1Method::CancelTask,
            V03Method::TasksResubscribe => V1Method::SubscribeToTask,
            V03Method::PushConfigSet => V1Method::CreateTaskPushNotificationConfig,
            V03Method::PushConfigGet => V1Method::GetTaskPushNotificationConfig,
            V03Method::PushConfigList => V1Method::ListTaskPushNotificationConfigs,
            V03Method::PushConfigDelete => V1Method::DeleteTaskPushNotificationConfig,
            V03Method::GetAuthenticatedExtendedCard => V1Method::GetExtendedAgentCard,
        }
    }
}

impl V1Method {
    /// The 1.0 name (`SendMessage`): [`V1Method::as_str`].
    pub const fn v1_name(self) -> &'static str {
        self.as_str()
    }

    /// The 0.3 name (`message/send`), `None` for `ListTasks`, which 0.3 JSON-RPC lacks.
    pub const fn v03_name(self) -> Option<&'static str> {
        match self.to_v03() {
            Some(m) => Some(m.as_str()),
            None => None,
        }
    }

    /// The operation of a 1.0 name.
    pub fn from_v1_name(name: &str) -> Option<V1Method> {
        V1Method::from_name(name)
    }

    /// The operation of a 0.3 name.
    pub fn from_v03_name(name: &str) -> Option<V1Method> {
        V03Method::from_name(name).map(V03Method::to_v1)
    }

    /// Whether the operation only reads (tasks, push configs, the extended card): what a
    /// read-only credential may call (the gateway's `a2a:read` scope).
    pub const fn reads_only(self) -> bool {
        matches!(
            self,
            V1Method::GetTask
                | V1Method::ListTasks
                | V1Method::SubscribeToTask
                | V1Method::GetTaskPushNotificationConfig
                | V1Method::ListTaskPushNotificationConfigs
                | V1Method::GetExtendedAgentCard
        )
    }

    /// The 0.3 method with the same meaning (`ListTasks` has none, hazard H17).
    pub const fn to_v03(self) -> Option<V03Method> {
        Some(match self {
            V1Method::SendMessage => V03Method::MessageSend,
            V1Method::SendStreamingMessage => V03Method::MessageStream,
            V1Method::GetTask => V03Method::TasksGet,
            V1Method::ListTasks => return None,
            V1Method::CancelTask => V03Method::TasksCancel,
            V1Method::SubscribeToTask => V03Method::TasksResubscribe,
            V1Method::CreateTaskPushNotificationConfig => V03Method::PushConfigSet,
            V1Method::GetTaskPushNotificationConfig => V03Method::PushConfigGet,
            V1Method::ListTaskPushNotificationConfigs => V03Method::PushConfigList,
            V1Method::DeleteTaskPushNotificationConfig => V03Method::PushConfigDelete,
            V1Method::GetExtendedAgentCard => V03Method::GetAuthenticatedExtendedCard,
        })
    }
}

/// A method of either version (the names never collide, so the name tells the version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// A 1.0 method.
    V1(V1Method),
    /// A 0.3 method.
    V03(V03Method),
}

impl Method {
    /// Looks a method up in both sets.
    pub fn parse(s: &str) -> Option<Self> {
        V1Method::from_name(s)
            .map(Method::V1)
            .or_else(|| V03Method::from_name(s).map(Method::V03))
    }

    /// The version the method belongs to.
    pub const fn version(self) -> ProtocolVersion {
        match self {
            Method::V1(_) => ProtocolVersion::V1_0,
            Method::V03(_) => ProtocolVersion::V0_3,
        }
    }

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::V1(m) => m.as_str(),
            Method::V03(m) => m.as_str(),
        }
    }

    /// The meaning in 1.0 terms.
    pub const fn to_v1(self) -> V1Method {
        match self {
            Method::V1(m) => m,
            Method::V03(m) => m.to_v1(),
        }
    }

    /// True for the methods answered with an SSE stream.
    pub const fn is_streaming(self) -> bool {
        match self {
            Method::V1(m) => m.is_streaming(),
            Method::V03(m) => m.is_streaming(),
        }
    }
}
