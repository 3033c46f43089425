//! Classification of an example by its content (or HTTP request line) to the registered types it must parse as.

use serde_json::Value;

use super::example::Example;

/// A (sub-)document of an example and the registered type it must parse as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// JSON pointer into the example (`""` = the whole document).
    pub pointer: String,
    /// Registry dialect (`v1`, `v03`, `v03-rest`).
    pub dialect: &'static str,
    /// Registry type name.
    pub type_name: &'static str,
}

/// How an example was classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// Parse each target with its type.
    Typed(Vec<Target>),
    /// Not an A2A document (or a fragment of none); the reason.
    Unclassifiable(String),
}

pub(super) fn t(
    pointer: impl Into<String>,
    dialect: &'static str,
    type_name: &'static str,
) -> Target {
    Target {
        pointer: pointer.into(),
        dialect,
        type_name,
    }
}

/// The params type of a JSON-RPC method (`None`: the method takes no params).
pub fn params_type(method: &str) -> Option<(&'static str, &'static str)> {
    Some(match method {
        "SendMessage" | "SendStreamingMessage" => ("v1", "SendMessageRequest"),
        "GetTask" => ("v1", "GetTaskRequest"),
        "ListTasks" => ("v1", "ListTasksRequest"),
        "CancelTask" => ("v1", "CancelTaskRequest"),
        "SubscribeToTask" => ("v1", "SubscribeToTaskRequest"),
        "CreateTaskPushNotificationConfig" => ("v1", "TaskPushNotificationConfig"),
        "GetTaskPushNotificationConfig" => ("v1", "GetTaskPushNotificationConfigRequest"),
        "ListTaskPushNotificationConfigs" => ("v1", "ListTaskPushNotificationConfigsRequest"),
        "DeleteTaskPushNotificationConfig" => ("v1", "DeleteTaskPushNotificationConfigRequest"),
        "GetExtendedAgentCard" => ("v1", "GetExtendedAgentCardRequest"),
        "message/send" | "message/stream" => ("v03", "MessageSendParams"),
        "tasks/get" => ("v03", "TaskQueryParams"),
        "tasks/cancel" | "tasks/resubscribe" => ("v03", "TaskIdParams"),
        "tasks/pushNotificationConfig/set" => ("v03", "TaskPushNotificationConfig"),
        "tasks/pushNotificationConfig/get" => ("v03", "GetTaskPushNotificationConfigParams"),
        "tasks/pushNotificationConfig/list" => ("v03", "ListTaskPushNotificationConfigParams"),
        "tasks/pushNotificationConfig/delete" => ("v03", "DeleteTaskPushNotificationConfigParams"),
        _ => return None,
    })
}

/// The dialect of a JSON-RPC method name (`None` if it belongs to neither version), read from
/// a2a-types' one operation table.
pub fn method_dialect(method: &str) -> Option<&'static str> {
    match a2a_types::jsonrpc::Method::parse(method)? {
        a2a_types::jsonrpc::Method::V03(_) => Some("v03"),
        a2a_types::jsonrpc::Method::V1(_) => Some("v1"),
    }
}

const CARD_KEYS_V1: &[&str] = &[
    "name",
    "description",
    "supportedInterfaces",
    "provider",
    "version",
    "documentationUrl",
    "capabilities",
    "securitySchemes",
    "securityRequirements",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
    "signatures",
    "iconUrl",
];

/// Classifies an example: HTTP bodies by their request line (or, for responses, by content),
/// everything else by content ([`classify`]).
pub fn classify_example(ex: &Example, doc: &Value) -> Class {
    let Some(first) = &ex.http else {
        return classify(ex.spec, doc);
    };
    let dialect: &'static str = if ex.spec == "0.3" { "v03-rest" } else { "v1" };
    let mut words = first.split_whitespace();
    let method = words.next().unwrap_or_default();
    let path = words.next().unwrap_or_default();
    if method.starts_with("HTTP/") {
        // A response: by content (error bodies, tasks, cards, stream events, ...).
        return classify(ex.spec, doc);
    }
    let path = path.split('?').next().unwrap_or_default();
    let ty = if path.ends_with("/message:send") || path.ends_with("/message:stream") {
        "SendMessageRequest"
    } else if path.ends_with("/pushNotificationConfigs") && method == "POST" {
        "TaskPushNotificationConfig"
    } else if doc.get("jsonrpc").is_some() {
        return classify(ex.spec, doc);
    } else if method == "POST" && !path.starts_with('/') || path.contains("webhook") {
        // A push notification delivery: one StreamResponse (S1 §4.3.3).
        "StreamResponse"
    } else {
        return Class::Unclassifiable(format!("HTTP body of {method} {path}: no A2A type"));
    };
    Class::Typed(vec![t("", dialect, ty)])
}

/// Classifies a parsed example of specification `spec` (`1.0` or `0.3`) by its content.
pub fn classify(spec: &str, doc: &Value) -> Class {
    let default_dialect: &'static str = if spec == "0.3" { "v03" } else { "v1" };
    let Some(obj) = doc.as_object() else {
        return Class::Unclassifiable("not a JSON object".into());
    };
    // JSON-RPC envelopes.
    if obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0") {
        if let Some(method) = obj.get("method").and_then(Value::as_str) {
            let Some(d) = method_dialect(method) else {
                return Class::Unclassifiable(format!(
                    "JSON-RPC request with unknown method {method}"
                ));
            };
            let mut targets = vec![t("", d, "JsonRpcRequest")];
            if let Some((pd, pt)) = params_type(method)
                && obj.contains_key("params")
            {
                targets.push(t("/params", pd, pt));
            }
            return Class::Typed(targets);
        }
        if obj.contains_key("error") {
            return Class::Typed(vec![t("", default_dialect, "JsonRpcResponse")]);
        }
        if let Some(result) = obj.get("result") {
            let mut targets = vec![t("", default_dialect, "JsonRpcResponse")];
            match classify_result(default_dialect, result) {
                Some(ty) => targets.push(t("/result", default_dialect, ty)),
                None => {
                    return Class::Unclassifiable(
                        "JSON-RPC response whose result has no recognizable shape".into(),
                    );
                }
            }
            return Class::Typed(targets);
        }
        return Class::Unclassifiable(
            "JSON-RPC object that is neither request nor response".into(),
        );
    }
    // Bare documents.
    let has = |k: &str| obj.contains_key(k);
    let dialect = if has("kind") { "v03" } else { default_dialect };
    if has("error") && obj.len() == 1 {
        return Class::Typed(vec![t("", "v1", "RestErrorBody")]);
    }
    if let Some(ty) = classify_result(dialect, doc) {
        return Class::Typed(vec![t("", dialect, ty)]);
    }
    if has("protected") && has("signature") {
        return Class::Typed(vec![t("", dialect, "AgentCardSignature")]);
    }
    if has("artifactId") {
        return Class::Typed(vec![t("", dialect, "Artifact")]);
    }
    if ["text", "raw", "url", "data", "file"]
        .iter()
        .any(|k| has(k))
        && obj.len() <= 5
        && !has("parts")
    {
        return Class::Typed(vec![t("", dialect, "Part")]);
    }
    // A fragment of an agent card: check each member that has a type of its own.
    if dialect == "v1" && obj.keys().all(|k| CARD_KEYS_V1.contains(&k.as_str())) {
        let mut targets = Vec::new();
        for (k, v) in obj {
            match k.as_str() {
                "supportedInterfaces" | "skills" | "signatures" => {
                    let ty = match k.as_str() {
                        "supportedInterfaces" => "AgentInterface",
                        "skills" => "AgentSkill",
                        _ => "AgentCardSignature",
                    };
                    for i in 0..v.as_array().map_or(0, Vec::len) {
                        targets.push(t(format!("/{k}/{i}"), "v1", ty));
                    }
                }
                "capabilities" => targets.push(t("/capabilities", "v1", "AgentCapabilities")),
                "provider" => targets.push(t("/provider", "v1", "AgentProvider")),
                "securitySchemes" => {
                    for name in v.as_object().into_iter().flat_map(|m| m.keys()) {
                        targets.push(t(
                            format!(
                                "/securitySchemes/{}",
                                name.replace('~', "~0").replace('/', "~1")
                            ),
                            "v1",
                            "SecurityScheme",
                        ));
                    }
                }
                "securityRequirements" => {
                    for i in 0..v.as_array().map_or(0, Vec::len) {
                        targets.push(t(
                            format!("/securityRequirements/{i}"),
                            "v1",
                            "SecurityRequirement",
                        ));
                    }
                }
                _ => {}
            }
        }
        if !targets.is_empty() {
            return Class::Typed(targets);
        }
    }
    Class::Unclassifiable("no A2A type has this shape".into())
}

/// The type of a JSON-RPC `result` (or a bare document) by its shape.
fn classify_result(dialect: &'static str, v: &Value) -> Option<&'static str> {
    let obj = v.as_object()?;
    let has = |k: &str| obj.contains_key(k);
    if dialect != "v1" {
        if let Some(kind) = obj.get("kind").and_then(Value::as_str) {
            return Some(match kind {
                "task" => "Task",
                "message" => "Message",
                "status-update" => "TaskStatusUpdateEvent",
                "artifact-update" => "TaskArtifactUpdateEvent",
                _ => return None,
            });
        }
        if has("taskId") && has("pushNotificationConfig") {
            return Some("TaskPushNotificationConfig");
        }
    } else {
        let only = |k: &str| obj.len() == 1 && has(k);
        if only("task") || only("message") {
            return Some("SendMessageResponse");
        }
        if only("statusUpdate") || only("artifactUpdate") {
            return Some("StreamResponse");
        }
        if has("tasks") && has("nextPageToken") {
            return Some("ListTasksResponse");
        }
        if has("configs") {
            return Some("ListTaskPushNotificationConfigsResponse");
        }
        if has("taskId") && has("url") {
            return Some("TaskPushNotificationConfig");
        }
        if has("taskId") && has("status") {
            return Some("TaskStatusUpdateEvent");
        }
        if has("taskId") && has("artifact") {
            return Some("TaskArtifactUpdateEvent");
        }
    }
    if has("id") && has("status") {
        return Some("Task");
    }
    if has("messageId") || (has("role") && has("parts")) {
        return Some("Message");
    }
    if has("name") && has("skills") && has("capabilities") {
        return Some("AgentCard");
    }
    None
}
