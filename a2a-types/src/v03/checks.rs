//! Strict validation of the 0.3 JSON-RPC dialect (feature `schema`).

use serde_json::Value;

use super::*;
use crate::jsonrpc::V03Method;
use crate::strict::{self, Options, Validator, Violation};
use schemars::JsonSchema;
// ---------------------------------------------------------------------------------------------
// Strict validation
// ---------------------------------------------------------------------------------------------

/// Strictly validates `value` as the JSON-RPC dialect type `T`: every member 0.3 does not
/// define, every missing required member (`kind` included), every bad enum or `kind` value,
/// non-object `data`, bad base64 and unparseable timestamps, each with its JSON path.
///
/// Uses [`strict`] with [`Options::JSON`] (exact member names, any ISO 8601 timestamp).
///
/// ```
/// use a2a_types::v03;
/// use serde_json::json;
///
/// let doc = json!({"kind": "message", "messageId": "m", "role": "user",
///     "parts": [{"kind": "text", "text": "hi"}, {"kind": "data", "data": [1]}]});
/// let shown: Vec<String> = v03::validate::<v03::Message>(&doc).iter().map(|v| v.to_string()).collect();
/// assert_eq!(shown, ["parts[1].data: wrong type: expected object, found array"]);
/// ```
pub fn validate<T: JsonSchema>(value: &Value) -> Vec<Violation> {
    strict::validate_with::<T>(value, Options::JSON)
}

/// The strict validator of a 0.3 method's `params`; `None` for a method without params
/// (`agent/getAuthenticatedExtendedCard`).
pub fn params_validator(method: V03Method) -> Option<Validator> {
    let v = match method {
        V03Method::MessageSend | V03Method::MessageStream => {
            Validator::for_type::<MessageSendParams>()
        }
        V03Method::TasksGet => Validator::for_type::<TaskQueryParams>(),
        V03Method::TasksCancel | V03Method::TasksResubscribe => {
            Validator::for_type::<TaskIdParams>()
        }
        V03Method::PushConfigSet => Validator::for_type::<TaskPushNotificationConfig>(),
        V03Method::PushConfigGet => Validator::for_type::<GetTaskPushNotificationConfigParams>(),
        V03Method::PushConfigList => Validator::for_type::<ListTaskPushNotificationConfigParams>(),
        V03Method::PushConfigDelete => {
            Validator::for_type::<DeleteTaskPushNotificationConfigParams>()
        }
        V03Method::GetAuthenticatedExtendedCard => return None,
    };
    Some(v.with_options(Options::JSON))
}

/// The strict validator of a 0.3 method's successful `result`; `None` where the result is
/// `null` (`tasks/pushNotificationConfig/delete`).
pub fn result_validator(method: V03Method) -> Option<Validator> {
    let v = match method {
        V03Method::MessageSend => Validator::for_type::<SendMessageResult>(),
        V03Method::MessageStream | V03Method::TasksResubscribe => {
            Validator::for_type::<StreamResult>()
        }
        V03Method::TasksGet | V03Method::TasksCancel => Validator::for_type::<Task>(),
        V03Method::PushConfigSet | V03Method::PushConfigGet => {
            Validator::for_type::<TaskPushNotificationConfig>()
        }
        V03Method::PushConfigList => Validator::for_type::<ListTaskPushNotificationConfigResult>(),
        V03Method::PushConfigDelete => return None,
        V03Method::GetAuthenticatedExtendedCard => Validator::for_type::<AgentCard>(),
    };
    Some(v.with_options(Options::JSON))
}

/// Strictly validates a whole 0.3 JSON-RPC request: the envelope, the method (a 1.0 method is
/// reported) and the params of the method, paths starting at the request (`params.message...`).
pub fn validate_request(request: &Value) -> Vec<Violation> {
    let resolver = |m: crate::jsonrpc::Method| match m {
        crate::jsonrpc::Method::V03(m) => params_validator(m),
        crate::jsonrpc::Method::V1(_) => None,
    };
    strict::validate_jsonrpc_request(
        request,
        Some(crate::version::ProtocolVersion::V0_3),
        Some(&resolver),
    )
}
