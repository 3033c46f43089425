//! The generated JSON Schemas of the 0.3 types (both dialects) are valid draft 2020-12 and
//! accept the spec / SDK documents while refusing shapes of the other dialect (checked with the
//! independent `jsonschema` crate, not our strict validator).

use a2a_types::strict::schema_of;
use a2a_types::v03::{self, rest};
use serde_json::{Value, json};

fn validator<T: schemars::JsonSchema>() -> jsonschema::Validator {
    let schema = schema_of::<T>();
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("schema does not compile: {e}"))
}

fn assert_valid<T: schemars::JsonSchema>(doc: &Value) {
    let v = validator::<T>();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{doc}: {errors:?}");
}

fn assert_invalid<T: schemars::JsonSchema>(doc: &Value) {
    assert!(!validator::<T>().is_valid(doc), "accepted: {doc}");
}

fn message() -> Value {
    json!({"kind": "message", "messageId": "m", "role": "user",
        "parts": [{"kind": "text", "text": "hi"},
            {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain"}},
            {"kind": "file", "file": {"uri": "https://x", "name": "x.png"}},
            {"kind": "data", "data": {"k": 1}}]})
}

#[test]
fn jsonrpc_dialect_schemas_accept_valid_documents() {
    assert_valid::<v03::Message>(&message());
    let task = json!({"kind": "task", "id": "t", "contextId": "c",
        "status": {"state": "completed", "timestamp": "2025-04-02T16:59:25.331844"},
        "history": [message()], "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]}]});
    assert_valid::<v03::Task>(&task);
    assert_valid::<v03::SendMessageResult>(&task);
    assert_valid::<v03::SendMessageResult>(&message());
    assert_valid::<v03::StreamResult>(&json!({"kind": "status-update", "taskId": "t",
        "contextId": "c", "status": {"state": "input-required"}, "final": true}));
    assert_valid::<v03::MessageSendParams>(&json!({"message": message(),
        "configuration": {"blocking": true, "historyLength": 2, "acceptedOutputModes": ["text/plain"],
            "pushNotificationConfig": {"url": "https://h", "authentication": {"schemes": ["Bearer"]}}}}));
    assert_valid::<v03::ListTaskPushNotificationConfigResult>(
        &json!([{"taskId": "t", "pushNotificationConfig": {"url": "https://h"}}]),
    );
    let card = json!({"protocolVersion": "0.3.0", "name": "A", "description": "d",
        "url": "https://a", "version": "1", "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"], "security": [{"k": []}]}],
        "securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "X"},
            "o": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://t", "scopes": {}},
                "authorizationCode": {"authorizationUrl": "https://a", "tokenUrl": "https://t", "scopes": {}}}}},
        "security": [{"o": ["read"]}]});
    assert_valid::<v03::AgentCard>(&card);
}

#[test]
fn jsonrpc_dialect_schemas_refuse_bad_documents() {
    let mut no_kind = message();
    no_kind.as_object_mut().unwrap().remove("kind");
    assert_invalid::<v03::Message>(&no_kind);
    assert_invalid::<v03::Part>(&json!({"kind": "data", "data": [1]}));
    assert_invalid::<v03::Part>(&json!({"kind": "image", "text": "x"}));
    assert_invalid::<v03::TaskState>(&json!("TASK_STATE_COMPLETED"));
    assert_invalid::<v03::StreamResult>(&json!({"kind": "status-update", "taskId": "t",
        "contextId": "c", "status": {"state": "working"}}));
    assert_invalid::<v03::SecurityScheme>(&json!({"type": "apiKey", "in": "body", "name": "k"}));
}

#[test]
fn rest_dialect_schemas_accept_sdk_documents_and_refuse_jsonrpc_shapes() {
    let msg = json!({"messageId": "m1", "role": "ROLE_USER",
        "content": [{"text": "hi"}, {"file": {"fileWithUri": "https://x", "mimeType": "image/png"}},
            {"data": {"data": {"k": 1}}}]});
    assert_valid::<rest::Message>(&msg);
    assert_valid::<rest::SendMessageRequest>(&json!({"message": msg,
        "configuration": {"pushNotification": {"url": "https://h"}, "blocking": true}}));
    assert_valid::<rest::StreamResponse>(&json!({"statusUpdate": {"taskId": "t", "contextId": "c",
        "status": {"state": "TASK_STATE_CANCELLED"}, "final": true}}));
    assert_valid::<rest::SendMessageResponse>(&json!({"task": {"id": "t", "contextId": "c",
        "status": {"state": "TASK_STATE_WORKING", "timestamp": "2025-04-02T16:59:25.331Z"}}}));
    assert_valid::<rest::TaskPushNotificationConfig>(
        &json!({"name": "tasks/t/pushNotificationConfigs/c",
        "pushNotificationConfig": {"url": "https://h", "authentication": {"schemes": ["Bearer"]}}}),
    );
    assert_valid::<rest::AgentCard>(&json!({"protocolVersion": "0.3.0", "name": "A",
        "description": "d", "url": "https://a", "version": "1", "capabilities": {},
        "securitySchemes": {"k": {"apiKeySecurityScheme": {"location": "header", "name": "X"}}},
        "security": [{"schemes": {"k": {"list": []}}}]}));

    assert_invalid::<rest::TaskState>(&json!("TASK_STATE_CANCELED"));
    assert_invalid::<rest::Role>(&json!("user"));
    assert_invalid::<rest::Part>(&json!({"text": "a", "data": {"data": {}}}));
    assert_invalid::<rest::Part>(&json!({"data": {"data": [1]}}));
    assert_invalid::<rest::SendMessageResponse>(&json!({}));
    assert_invalid::<rest::SecurityScheme>(&json!({"type": "apiKey", "in": "header", "name": "X"}));
}
