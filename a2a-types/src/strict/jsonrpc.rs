//! Strict checks of whole JSON-RPC requests and responses: the envelope, then the params or
//! result against the method's schema.

use serde_json::{Map, Value};

use super::{Validator, Violation, ViolationKind, type_name};
use crate::jsonrpc::{JSONRPC_VERSION, Method, V1Method};
use crate::version::ProtocolVersion;

// ---------------------------------------------------------------------------------------------
// JSON-RPC requests
// ---------------------------------------------------------------------------------------------

/// The strict validator for the `params` of a 1.0 method.
pub fn v1_params_validator(method: V1Method) -> Validator {
    use crate::v1;
    match method {
        V1Method::SendMessage | V1Method::SendStreamingMessage => {
            Validator::for_type::<v1::SendMessageRequest>()
        }
        V1Method::GetTask => Validator::for_type::<v1::GetTaskRequest>(),
        V1Method::ListTasks => Validator::for_type::<v1::ListTasksRequest>(),
        V1Method::CancelTask => Validator::for_type::<v1::CancelTaskRequest>(),
        V1Method::SubscribeToTask => Validator::for_type::<v1::SubscribeToTaskRequest>(),
        V1Method::CreateTaskPushNotificationConfig => {
            Validator::for_type::<v1::TaskPushNotificationConfig>()
        }
        V1Method::GetTaskPushNotificationConfig => {
            Validator::for_type::<v1::GetTaskPushNotificationConfigRequest>()
        }
        V1Method::ListTaskPushNotificationConfigs => {
            Validator::for_type::<v1::ListTaskPushNotificationConfigsRequest>()
        }
        V1Method::DeleteTaskPushNotificationConfig => {
            Validator::for_type::<v1::DeleteTaskPushNotificationConfigRequest>()
        }
        V1Method::GetExtendedAgentCard => Validator::for_type::<v1::GetExtendedAgentCardRequest>(),
    }
}

/// The strict validator for the successful `result` of a 1.0 method (streaming methods: one
/// `StreamResponse` event; `DeleteTaskPushNotificationConfig`: `{}`).
pub fn v1_result_validator(method: V1Method) -> Validator {
    use crate::v1;
    match method {
        V1Method::SendMessage => Validator::for_type::<v1::SendMessageResponse>(),
        V1Method::SendStreamingMessage | V1Method::SubscribeToTask => {
            Validator::for_type::<v1::StreamResponse>()
        }
        V1Method::GetTask | V1Method::CancelTask => Validator::for_type::<v1::Task>(),
        V1Method::ListTasks => Validator::for_type::<v1::ListTasksResponse>(),
        V1Method::CreateTaskPushNotificationConfig | V1Method::GetTaskPushNotificationConfig => {
            Validator::for_type::<v1::TaskPushNotificationConfig>()
        }
        V1Method::ListTaskPushNotificationConfigs => {
            Validator::for_type::<v1::ListTaskPushNotificationConfigsResponse>()
        }
        V1Method::DeleteTaskPushNotificationConfig => Validator::for_type::<v1::Empty>(),
        V1Method::GetExtendedAgentCard => Validator::for_type::<v1::AgentCard>(),
    }
}

/// Adds a violation at `path` (the JSON-RPC envelope checks below).
fn push(out: &mut Vec<Violation>, path: &str, kind: ViolationKind) {
    out.push(Violation {
        path: path.into(),
        kind,
    });
}

/// The members every JSON-RPC message shares, checked strictly: an object with no members
/// but `members`, `jsonrpc` "2.0", an `id` that is a string, a number or null. Returns the
/// object (`None`: not an object, reported).
fn envelope<'v>(
    v: &'v Value,
    members: [&str; 4],
    out: &mut Vec<Violation>,
) -> Option<&'v Map<String, Value>> {
    let Value::Object(o) = v else {
        push(
            out,
            "$",
            ViolationKind::WrongType {
                expected: "object".into(),
                found: type_name(v),
            },
        );
        return None;
    };
    for k in o.keys() {
        if !members.contains(&k.as_str()) {
            push(out, "$", ViolationKind::UnknownMember(k.clone()));
        }
    }
    match o.get("jsonrpc") {
        None => push(out, "$", ViolationKind::MissingRequired("jsonrpc".into())),
        Some(Value::String(s)) if s == JSONRPC_VERSION => {}
        Some(other) => push(
            out,
            "jsonrpc",
            ViolationKind::BadEnumValue(other.to_string()),
        ),
    }
    match o.get("id") {
        None => push(out, "$", ViolationKind::MissingRequired("id".into())),
        Some(Value::String(_) | Value::Number(_) | Value::Null) => {}
        Some(other) => push(
            out,
            "id",
            ViolationKind::WrongType {
                expected: "string or number or null".into(),
                found: type_name(other),
            },
        ),
    }
    Some(o)
}

/// Validates a JSON-RPC response to `method` strictly: the envelope (`jsonrpc`, `id`, exactly
/// one of `result`/`error`, nothing else), the error object (`code` integer, `message` string;
/// for 1.0, `data` an array of objects with `@type`), and the result against the method's result
/// type. 1.0 results are built in; 0.3 results need `v03_results` (e.g. a closure over
/// `v03::result_validator`), else they are not inspected. A resolver returning `None` means the
/// result must be `null`.
pub fn validate_jsonrpc_response(
    v: &Value,
    method: Method,
    v03_results: Option<ParamsResolver<'_>>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let Some(o) = envelope(v, ["jsonrpc", "id", "result", "error"], &mut out) else {
        return out;
    };
    match (o.get("result"), o.get("error")) {
        (Some(_), Some(_)) => push(
            &mut out,
            "$",
            ViolationKind::ConflictingMembers(vec!["result".into(), "error".into()]),
        ),
        (None, None) => push(
            &mut out,
            "$",
            ViolationKind::MissingOneOf(vec!["result".into(), "error".into()]),
        ),
        (Some(r), None) => {
            let validator = match method {
                Method::V1(m) => Some(Some(v1_result_validator(m))),
                Method::V03(_) => v03_results.map(|f| f(method)),
            };
            match validator {
                Some(Some(val)) => out.extend(val.validate_at(r, "result")),
                Some(None) if !r.is_null() => push(
                    &mut out,
                    "result",
                    ViolationKind::WrongType {
                        expected: "null".into(),
                        found: type_name(r),
                    },
                ),
                _ => {}
            }
        }
        (None, Some(e)) => {
            let schema = if matches!(method, Method::V1(_)) {
                serde_json::json!({
                    "type": "object",
                    "properties": {
                        "code": {"type": "integer"},
                        "message": {"type": "string"},
                        "data": {"type": "array", "items": {
                            "type": "object", "required": ["@type"],
                            "properties": {"@type": {"type": "string"}},
                            "additionalProperties": true
                        }}
                    },
                    "required": ["code", "message"]
                })
            } else {
                serde_json::json!({
                    "type": "object",
                    "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
                    "required": ["code", "message"]
                })
            };
            out.extend(Validator::from_schema(schema).validate_at(e, "error"));
        }
    }
    out
}

/// Resolves a method name to its params validator; `None` = no params allowed/known.
pub type ParamsResolver<'r> = &'r dyn Fn(Method) -> Option<Validator>;

/// Validates a JSON-RPC request strictly: the envelope (`jsonrpc`, `id`, `method`, `params`,
/// nothing else), the method (it must belong to `version` if given), and the params against
/// the method's params type. 1.0 methods are built in; 0.3 methods need `v03_params` (the
/// `v03` module provides one); without it 0.3 params are not inspected.
pub fn validate_jsonrpc_request(
    v: &Value,
    version: Option<ProtocolVersion>,
    v03_params: Option<ParamsResolver<'_>>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let Some(o) = envelope(v, ["jsonrpc", "id", "method", "params"], &mut out) else {
        return out;
    };
    let method = match o.get("method") {
        None => {
            push(
                &mut out,
                "$",
                ViolationKind::MissingRequired("method".into()),
            );
            return out;
        }
        Some(Value::String(m)) => m,
        Some(other) => {
            push(
                &mut out,
                "method",
                ViolationKind::WrongType {
                    expected: "string".into(),
                    found: type_name(other),
                },
            );
            return out;
        }
    };
    let Some(m) = Method::parse(method) else {
        push(
            &mut out,
            "method",
            ViolationKind::BadEnumValue(Value::String(method.clone()).to_string()),
        );
        return out;
    };
    if let Some(ver) = version
        && ver.major != m.version().major
    {
        push(
            &mut out,
            "method",
            ViolationKind::Other(format!("method {method} is not an A2A {ver} method")),
        );
        return out;
    }
    let validator = match m {
        Method::V1(m1) => Some(v1_params_validator(m1)),
        Method::V03(_) => v03_params.and_then(|r| r(m)),
    };
    let params = o.get("params");
    match (validator, params) {
        (Some(val), Some(p)) => out.extend(val.validate_at(p, "params")),
        (Some(val), None) => {
            // Absent params read as `{}`: report what that misses.
            out.extend(val.validate_at(&Value::Object(Map::new()), "params"));
        }
        (None, _) => {}
    }
    out
}
