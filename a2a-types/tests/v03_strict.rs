//! Strict validation of bad documents of both 0.3 dialects: each case lists every violation
//! expected, with its JSON path and reason (`path: reason`), in the validator's order.

use a2a_types::strict::Violation;
use a2a_types::v03::{self, rest};
use serde_json::{Value, json};

struct Case {
    name: &'static str,
    ty: &'static str,
    doc: &'static str,
    expected: &'static [&'static str],
}

/// Validates `doc` as the type named `ty` (`j:` = JSON-RPC dialect, `r:` = HTTP+JSON dialect).
fn check(ty: &str, doc: &Value) -> Vec<Violation> {
    match ty {
        "j:Message" => v03::validate::<v03::Message>(doc),
        "j:Part" => v03::validate::<v03::Part>(doc),
        "j:Task" => v03::validate::<v03::Task>(doc),
        "j:StreamResult" => v03::validate::<v03::StreamResult>(doc),
        "j:SendMessageResult" => v03::validate::<v03::SendMessageResult>(doc),
        "j:MessageSendParams" => v03::validate::<v03::MessageSendParams>(doc),
        "j:TaskPushNotificationConfig" => v03::validate::<v03::TaskPushNotificationConfig>(doc),
        "j:DeleteTaskPushNotificationConfigParams" => {
            v03::validate::<v03::DeleteTaskPushNotificationConfigParams>(doc)
        }
        "j:GetTaskPushNotificationConfigParams" => {
            v03::validate::<v03::GetTaskPushNotificationConfigParams>(doc)
        }
        "j:AgentCard" => v03::validate::<v03::AgentCard>(doc),
        "r:Message" => rest::validate::<rest::Message>(doc),
        "r:Part" => rest::validate::<rest::Part>(doc),
        "r:Task" => rest::validate::<rest::Task>(doc),
        "r:StreamResponse" => rest::validate::<rest::StreamResponse>(doc),
        "r:SendMessageResponse" => rest::validate::<rest::SendMessageResponse>(doc),
        "r:SendMessageRequest" => rest::validate::<rest::SendMessageRequest>(doc),
        "r:TaskPushNotificationConfig" => rest::validate::<rest::TaskPushNotificationConfig>(doc),
        "r:CreateTaskPushNotificationConfigRequest" => {
            rest::validate::<rest::CreateTaskPushNotificationConfigRequest>(doc)
        }
        "r:ListTaskPushNotificationConfigResponse" => {
            rest::validate::<rest::ListTaskPushNotificationConfigResponse>(doc)
        }
        "r:AgentCard" => rest::validate::<rest::AgentCard>(doc),
        other => panic!("{other}"),
    }
}

const CASES: &[Case] = &[
    Case {
        name: "j_unknown_part_member",
        ty: "j:Message",
        doc: r#"{"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "a"}, {"kind": "text", "text": "b", "image": "x"}]}"#,
        expected: &[r#"parts[1]: unknown member image"#],
    },
    Case {
        name: "j_missing_message_kind",
        ty: "j:Message",
        doc: r#"{"messageId": "m", "role": "user", "parts": []}"#,
        expected: &[r#"$: missing required member kind"#],
    },
    Case {
        name: "j_wrong_message_kind",
        ty: "j:Message",
        doc: r#"{"kind": "task", "messageId": "m", "role": "user", "parts": []}"#,
        expected: &[r#"kind: bad enum value "task""#],
    },
    Case {
        name: "j_bad_role",
        ty: "j:Message",
        doc: r#"{"kind": "message", "messageId": "m", "role": "ROLE_USER", "parts": []}"#,
        expected: &[r#"role: bad enum value "ROLE_USER""#],
    },
    Case {
        name: "j_missing_message_id",
        ty: "j:Message",
        doc: r#"{"kind": "message", "role": "user", "parts": []}"#,
        expected: &[r#"$: missing required member messageId"#],
    },
    Case {
        name: "j_missing_parts",
        ty: "j:Message",
        doc: r#"{"kind": "message", "messageId": "m", "role": "agent"}"#,
        expected: &[r#"$: missing required member parts"#],
    },
    Case {
        name: "j_part_unknown_kind",
        ty: "j:Message",
        doc: r#"{"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "image", "url": "x"}]}"#,
        expected: &[
            r#"parts[0].kind: wrong discriminator kind="image" (expected one of "text", "file", "data")"#,
        ],
    },
    Case {
        name: "j_part_missing_kind",
        ty: "j:Message",
        doc: r#"{"kind": "message", "messageId": "m", "role": "user", "parts": [{"text": "hi"}]}"#,
        expected: &[r#"parts[0]: missing required member kind"#],
    },
    Case {
        name: "j_data_part_not_object",
        ty: "j:Message",
        doc: r#"{"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "data", "data": [1, 2]}]}"#,
        expected: &[r#"parts[0].data: wrong type: expected object, found array"#],
    },
    Case {
        name: "j_data_part_string",
        ty: "j:Part",
        doc: r#"{"kind": "data", "data": "x"}"#,
        expected: &[r#"data: wrong type: expected object, found string"#],
    },
    Case {
        name: "j_text_not_string",
        ty: "j:Part",
        doc: r#"{"kind": "text", "text": 5}"#,
        expected: &[r#"text: wrong type: expected string, found integer"#],
    },
    Case {
        name: "j_file_bad_base64",
        ty: "j:Part",
        doc: r#"{"kind": "file", "file": {"bytes": "not base64!"}}"#,
        expected: &[r#"file.bytes: bad base64: Invalid symbol 32, offset 3."#],
    },
    Case {
        name: "j_file_bytes_and_uri",
        ty: "j:Part",
        doc: r#"{"kind": "file", "file": {"bytes": "aGk=", "uri": "https://x"}}"#,
        expected: &[r#"file: conflicting members bytes, uri (only one allowed)"#],
    },
    Case {
        name: "j_file_neither",
        ty: "j:Part",
        doc: r#"{"kind": "file", "file": {"mimeType": "image/png", "data": "aGk="}}"#,
        expected: &[
            r#"file: unknown member data"#,
            r#"file: missing one of bytes, uri"#,
        ],
    },
    Case {
        name: "j_part_metadata_not_object",
        ty: "j:Part",
        doc: r#"{"kind": "text", "text": "a", "metadata": [1]}"#,
        expected: &[r#"metadata: wrong type: expected object, found array"#],
    },
    Case {
        name: "j_task_missing_kind_and_context",
        ty: "j:Task",
        doc: r#"{"id": "t", "status": {"state": "working"}}"#,
        expected: &[
            r#"$: missing required member kind"#,
            r#"$: missing required member contextId"#,
        ],
    },
    Case {
        name: "j_task_bad_state",
        ty: "j:Task",
        doc: r#"{"kind": "task", "id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}"#,
        expected: &[r#"status.state: bad enum value "TASK_STATE_COMPLETED""#],
    },
    Case {
        name: "j_task_cancelled_double_l",
        ty: "j:Task",
        doc: r#"{"kind": "task", "id": "t", "contextId": "c", "status": {"state": "cancelled"}}"#,
        expected: &[r#"status.state: bad enum value "cancelled""#],
    },
    Case {
        name: "j_task_bad_timestamp",
        ty: "j:Task",
        doc: r#"{"kind": "task", "id": "t", "contextId": "c", "status": {"state": "working", "timestamp": "yesterday"}}"#,
        expected: &[r#"status.timestamp: bad timestamp: expected YYYY"#],
    },
    Case {
        name: "j_task_unknown_member",
        ty: "j:Task",
        doc: r#"{"kind": "task", "id": "t", "contextId": "c", "status": {"state": "working"}, "tenant": "x"}"#,
        expected: &[r#"$: unknown member tenant"#],
    },
    Case {
        name: "j_artifact_missing_id",
        ty: "j:Task",
        doc: r#"{"kind": "task", "id": "t", "contextId": "c", "status": {"state": "completed"}, "artifacts": [{"parts": []}]}"#,
        expected: &[r#"artifacts[0]: missing required member artifactId"#],
    },
    Case {
        name: "j_status_update_missing_final",
        ty: "j:StreamResult",
        doc: r#"{"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "completed"}}"#,
        expected: &[r#"$: missing required member final"#],
    },
    Case {
        name: "j_stream_bad_kind",
        ty: "j:StreamResult",
        doc: r#"{"kind": "statusUpdate", "taskId": "t", "contextId": "c", "status": {"state": "completed"}, "final": true}"#,
        expected: &[
            r#"kind: wrong discriminator kind="statusUpdate" (expected one of "task", "message", "status-update", "artifact-update")"#,
        ],
    },
    Case {
        name: "j_stream_1_0_wrapper",
        ty: "j:StreamResult",
        doc: r#"{"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}"#,
        expected: &[r#"$: missing required member kind"#],
    },
    Case {
        name: "j_artifact_update_bad_append",
        ty: "j:StreamResult",
        doc: r#"{"kind": "artifact-update", "taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": []}, "append": "yes"}"#,
        expected: &[r#"append: wrong type: expected boolean, found string"#],
    },
    Case {
        name: "j_send_result_status_update",
        ty: "j:SendMessageResult",
        doc: r#"{"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}, "final": false}"#,
        expected: &[
            r#"kind: wrong discriminator kind="status-update" (expected one of "task", "message")"#,
        ],
    },
    Case {
        name: "j_send_params_1_0_config",
        ty: "j:MessageSendParams",
        doc: r#"{"message": {"kind": "message", "messageId": "m", "role": "user", "parts": []}, "configuration": {"returnImmediately": true, "historyLength": "3"}}"#,
        expected: &[
            r#"configuration.historyLength: wrong type: expected integer, found string"#,
            r#"configuration: unknown member returnImmediately"#,
        ],
    },
    Case {
        name: "j_send_params_missing_message",
        ty: "j:MessageSendParams",
        doc: r#"{"configuration": {}}"#,
        expected: &[r#"$: missing required member message"#],
    },
    Case {
        name: "j_push_config_flat_1_0",
        ty: "j:TaskPushNotificationConfig",
        doc: r#"{"taskId": "t", "url": "https://h", "id": "c"}"#,
        expected: &[
            r#"$: unknown member id"#,
            r#"$: unknown member url"#,
            r#"$: missing required member pushNotificationConfig"#,
        ],
    },
    Case {
        name: "j_push_auth_scheme_singular",
        ty: "j:TaskPushNotificationConfig",
        doc: r#"{"taskId": "t", "pushNotificationConfig": {"url": "https://h", "authentication": {"scheme": "Bearer"}}}"#,
        expected: &[
            r#"pushNotificationConfig.authentication: unknown member scheme"#,
            r#"pushNotificationConfig.authentication: missing required member schemes"#,
        ],
    },
    Case {
        name: "j_delete_params_missing_config_id",
        ty: "j:DeleteTaskPushNotificationConfigParams",
        doc: r#"{"id": "t"}"#,
        expected: &[r#"$: missing required member pushNotificationConfigId"#],
    },
    Case {
        name: "j_get_push_params_1_0_names",
        ty: "j:GetTaskPushNotificationConfigParams",
        doc: r#"{"taskId": "t", "id": "c"}"#,
        expected: &[r#"$: unknown member taskId"#],
    },
    Case {
        name: "j_card_unknown_and_missing",
        ty: "j:AgentCard",
        doc: r#"{"name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {"extendedAgentCard": true}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [], "supportedInterfaces": []}"#,
        expected: &[
            r#"capabilities: unknown member extendedAgentCard"#,
            r#"$: unknown member supportedInterfaces"#,
            r#"$: missing required member protocolVersion"#,
        ],
    },
    Case {
        name: "j_card_api_key_location",
        ty: "j:AgentCard",
        doc: r#"{"protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [], "securitySchemes": {"k": {"type": "apiKey", "location": "header", "name": "X"}}}"#,
        expected: &[
            r#"securitySchemes.k: unknown member location"#,
            r#"securitySchemes.k: missing required member in"#,
        ],
    },
    Case {
        name: "j_card_scheme_bad_type",
        ty: "j:AgentCard",
        doc: r#"{"protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [], "securitySchemes": {"k": {"apiKeySecurityScheme": {"location": "header", "name": "X"}}}}"#,
        expected: &[r#"securitySchemes.k: missing required member type"#],
    },
    Case {
        name: "j_card_oauth_device_code",
        ty: "j:AgentCard",
        doc: r#"{"protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [], "securitySchemes": {"o": {"type": "oauth2", "flows": {"deviceCode": {"deviceAuthorizationUrl": "u", "tokenUrl": "t", "scopes": {}}}}}}"#,
        expected: &[r#"securitySchemes.o.flows: unknown member deviceCode"#],
    },
    Case {
        name: "j_card_security_1_0_shape",
        ty: "j:AgentCard",
        doc: r#"{"protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [], "security": [{"schemes": {"o": {"list": ["r"]}}}]}"#,
        expected: &[r#"security[0].schemes: wrong type: expected array, found object"#],
    },
    Case {
        name: "j_skill_missing_tags",
        ty: "j:AgentCard",
        doc: r#"{"protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [{"id": "s", "name": "S", "description": "d", "securityRequirements": []}]}"#,
        expected: &[
            r#"skills[0]: unknown member securityRequirements"#,
            r#"skills[0]: missing required member tags"#,
        ],
    },
    Case {
        name: "j_interface_protocol_binding",
        ty: "j:AgentCard",
        doc: r#"{"protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [], "additionalInterfaces": [{"url": "https://a", "protocolBinding": "JSONRPC"}]}"#,
        expected: &[
            r#"additionalInterfaces[0]: unknown member protocolBinding"#,
            r#"additionalInterfaces[0]: missing required member transport"#,
        ],
    },
    Case {
        name: "r_message_parts_not_content",
        ty: "r:Message",
        doc: r#"{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}"#,
        expected: &[r#"$: unknown member parts"#],
    },
    Case {
        name: "r_message_kind",
        ty: "r:Message",
        doc: r#"{"kind": "message", "messageId": "m", "role": "ROLE_USER", "content": []}"#,
        expected: &[r#"$: unknown member kind"#],
    },
    Case {
        name: "r_role_jsonrpc_spelling",
        ty: "r:Message",
        doc: r#"{"messageId": "m", "role": "user", "content": []}"#,
        expected: &[r#"role: bad enum value "user""#],
    },
    Case {
        name: "r_part_two_members",
        ty: "r:Message",
        doc: r#"{"messageId": "m", "role": "ROLE_USER", "content": [{"text": "a", "data": {"data": {}}}]}"#,
        expected: &[r#"content[0]: conflicting members text, data (only one allowed)"#],
    },
    Case {
        name: "r_part_empty",
        ty: "r:Message",
        doc: r#"{"messageId": "m", "role": "ROLE_USER", "content": [{}]}"#,
        expected: &[r#"content[0]: missing one of text, file, data"#],
    },
    Case {
        name: "r_part_jsonrpc_shape",
        ty: "r:Message",
        doc: r#"{"messageId": "m", "role": "ROLE_USER", "content": [{"kind": "text", "text": "a"}]}"#,
        expected: &[r#"content[0]: unknown member kind"#],
    },
    Case {
        name: "r_part_1_0_raw",
        ty: "r:Message",
        doc: r#"{"messageId": "m", "role": "ROLE_USER", "content": [{"raw": "aGk="}]}"#,
        expected: &[
            r#"content[0]: unknown member raw"#,
            r#"content[0]: missing one of text, file, data"#,
        ],
    },
    Case {
        name: "r_data_part_not_struct",
        ty: "r:Part",
        doc: r#"{"data": {"data": [1]}}"#,
        expected: &[r#"data.data: wrong type: expected object, found array"#],
    },
    Case {
        name: "r_data_part_unwrapped",
        ty: "r:Part",
        doc: r#"{"data": {"k": 1}}"#,
        expected: &[
            r#"data: unknown member k"#,
            r#"data: missing required member data"#,
        ],
    },
    Case {
        name: "r_file_bad_base64",
        ty: "r:Part",
        doc: r#"{"file": {"fileWithBytes": "%%%"}}"#,
        expected: &[r#"file.fileWithBytes: bad base64: Invalid symbol 37, offset 0."#],
    },
    Case {
        name: "r_file_two_members",
        ty: "r:Part",
        doc: r#"{"file": {"fileWithBytes": "aGk=", "fileWithUri": "https://x"}}"#,
        expected: &[r#"file: conflicting members fileWithUri, fileWithBytes (only one allowed)"#],
    },
    Case {
        name: "r_file_jsonrpc_shape",
        ty: "r:Part",
        doc: r#"{"file": {"bytes": "aGk=", "mimeType": "text/plain"}}"#,
        expected: &[
            r#"file: unknown member bytes"#,
            r#"file: missing one of fileWithUri, fileWithBytes"#,
        ],
    },
    Case {
        name: "r_task_state_canceled_single_l",
        ty: "r:Task",
        doc: r#"{"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_CANCELED"}}"#,
        expected: &[r#"status.state: bad enum value "TASK_STATE_CANCELED""#],
    },
    Case {
        name: "r_task_state_kebab",
        ty: "r:Task",
        doc: r#"{"id": "t", "contextId": "c", "status": {"state": "input-required"}}"#,
        expected: &[r#"status.state: bad enum value "input-required""#],
    },
    Case {
        name: "r_task_naive_timestamp",
        ty: "r:Task",
        doc: r#"{"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING", "timestamp": "2025-04-02T16:59:25.331844"}}"#,
        expected: &[
            r#"status.timestamp: bad timestamp: must be RFC 3339 UTC with Z (e.g. 2025-04-02T16:59:25.331844Z)"#,
        ],
    },
    Case {
        name: "r_task_missing_status",
        ty: "r:Task",
        doc: r#"{"id": "t", "contextId": "c"}"#,
        expected: &[r#"$: missing required member status"#],
    },
    Case {
        name: "r_stream_two_payloads",
        ty: "r:StreamResponse",
        doc: r#"{"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}, "message": {"messageId": "m", "role": "ROLE_AGENT", "content": []}}"#,
        expected: &[r#"$: conflicting members task, message (only one allowed)"#],
    },
    Case {
        name: "r_stream_bare_jsonrpc_event",
        ty: "r:StreamResponse",
        doc: r#"{"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}, "final": true}"#,
        expected: &[
            r#"$: unknown member contextId"#,
            r#"$: unknown member final"#,
            r#"$: unknown member kind"#,
            r#"$: unknown member status"#,
            r#"$: unknown member taskId"#,
            r#"$: missing one of task, message, statusUpdate, artifactUpdate"#,
        ],
    },
    Case {
        name: "r_stream_final_not_bool",
        ty: "r:StreamResponse",
        doc: r#"{"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}, "final": "true"}}"#,
        expected: &[r#"statusUpdate.final: wrong type: expected boolean, found string"#],
    },
    Case {
        name: "r_send_response_empty",
        ty: "r:SendMessageResponse",
        doc: r#"{}"#,
        expected: &[r#"$: missing one of task, message"#],
    },
    Case {
        name: "r_send_request_push_config_name",
        ty: "r:SendMessageRequest",
        doc: r#"{"message": {"messageId": "m", "role": "ROLE_USER", "content": []}, "configuration": {"pushNotificationConfig": {"url": "https://h"}}}"#,
        expected: &[r#"configuration: unknown member pushNotificationConfig"#],
    },
    Case {
        name: "r_send_request_missing_message",
        ty: "r:SendMessageRequest",
        doc: r#"{"configuration": {"blocking": true}}"#,
        expected: &[r#"$: missing required member message"#],
    },
    Case {
        name: "r_send_request_history_not_int",
        ty: "r:SendMessageRequest",
        doc: r#"{"message": {"messageId": "m", "role": "ROLE_USER", "content": []}, "configuration": {"historyLength": 1.5}}"#,
        expected: &[r#"configuration.historyLength: wrong type: expected integer, found number"#],
    },
    Case {
        name: "r_push_config_jsonrpc_nesting",
        ty: "r:TaskPushNotificationConfig",
        doc: r#"{"taskId": "t", "pushNotificationConfig": {"url": "https://h"}}"#,
        expected: &[
            r#"$: unknown member taskId"#,
            r#"$: missing required member name"#,
        ],
    },
    Case {
        name: "r_create_push_missing_parent",
        ty: "r:CreateTaskPushNotificationConfigRequest",
        doc: r#"{"configId": "c", "config": {"name": "tasks/t/pushNotificationConfigs/c", "pushNotificationConfig": {"url": "https://h"}}}"#,
        expected: &[r#"$: missing required member parent"#],
    },
    Case {
        name: "r_list_push_response_bare_array",
        ty: "r:ListTaskPushNotificationConfigResponse",
        doc: r#"[{"name": "n"}]"#,
        expected: &[r#"$: wrong type: expected object, found array"#],
    },
    Case {
        name: "r_card_oauth_two_flows",
        ty: "r:AgentCard",
        doc: r#"{"protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [], "securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": {"implicit": {"authorizationUrl": "a", "scopes": {}}, "password": {"tokenUrl": "t", "scopes": {}}}}}}}"#,
        expected: &[
            r#"securitySchemes.o.oauth2SecurityScheme.flows: conflicting members implicit, password (only one allowed)"#,
        ],
    },
    Case {
        name: "r_card_jsonrpc_scheme_shape",
        ty: "r:AgentCard",
        doc: r#"{"protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [], "securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "X"}}}"#,
        expected: &[
            r#"securitySchemes.k: unknown member in"#,
            r#"securitySchemes.k: unknown member name"#,
            r#"securitySchemes.k: unknown member type"#,
            r#"securitySchemes.k: missing one of apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme"#,
        ],
    },
    Case {
        name: "r_card_security_bare_list",
        ty: "r:AgentCard",
        doc: r#"{"protocolVersion": "0.3.0", "name": "A", "description": "d", "url": "https://a", "version": "1", "capabilities": {"stateTransitionHistory": true}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [], "security": [{"schemes": {"o": ["r"]}}]}"#,
        expected: &[
            r#"capabilities: unknown member stateTransitionHistory"#,
            r#"security[0].schemes.o: wrong type: expected object, found array"#,
        ],
    },
];

fn shown(v: &[Violation]) -> Vec<String> {
    v.iter().map(ToString::to_string).collect()
}

#[test]
fn bad_documents_report_every_violation_with_its_path() {
    assert!(CASES.len() >= 40, "the table has {} cases", CASES.len());
    let mut failures = Vec::new();
    for c in CASES {
        let doc: Value = serde_json::from_str(c.doc).unwrap();
        let got = shown(&check(c.ty, &doc));
        if got != c.expected {
            failures.push(format!(
                "{}: expected {:?}, got {:?}",
                c.name, c.expected, got
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn clean_documents_have_no_violations() {
    let message = json!({"kind": "message", "messageId": "m", "role": "user", "contextId": "c",
    "taskId": "t", "referenceTaskIds": ["t0"], "extensions": ["urn:e"], "metadata": {"k": [1]},
    "parts": [
        {"kind": "text", "text": "hi", "metadata": {"any": {"thing": 1}}},
        {"kind": "file", "file": {"bytes": "aGk=", "name": "a.txt", "mimeType": "text/plain"}},
        {"kind": "file", "file": {"uri": "https://x/y", "mimeType": "image/png"}},
        {"kind": "data", "data": {"k": {"nested": [1, "2"]}}}
    ]});
    assert_eq!(
        shown(&v03::validate::<v03::Message>(&message)),
        Vec::<String>::new()
    );
    let task = json!({"kind": "task", "id": "t", "contextId": "c",
        "status": {"state": "input-required", "message": message, "timestamp": "2025-04-02T16:59:25.331844"},
        "artifacts": [{"artifactId": "a", "name": "n", "parts": [{"kind": "text", "text": "x"}]}],
        "history": [message], "metadata": {}});
    assert_eq!(
        shown(&v03::validate::<v03::Task>(&task)),
        Vec::<String>::new()
    );
    assert_eq!(
        shown(&v03::validate::<v03::SendMessageResult>(&task)),
        Vec::<String>::new()
    );
    let ev = json!({"kind": "artifact-update", "taskId": "t", "contextId": "c",
        "artifact": {"artifactId": "a", "parts": []}, "append": true, "lastChunk": false});
    assert_eq!(
        shown(&v03::validate::<v03::StreamResult>(&ev)),
        Vec::<String>::new()
    );

    let card = serde_json::to_value(v03::AgentCard::new("A", "d", "https://a", "1")).unwrap();
    assert_eq!(
        shown(&v03::validate::<v03::AgentCard>(&card)),
        Vec::<String>::new()
    );

    // What the Python SDK 0.3.26 sends over HTTP+JSON is clean, including `final` omitted
    // when false and a FilePart `name` (later 0.3 proto).
    let rest_msg = json!({"messageId": "m1", "contextId": "c1", "taskId": "t1", "role": "ROLE_USER",
        "content": [{"text": "hi"}, {"file": {"fileWithBytes": "YUdrPQ==", "mimeType": "text/plain", "name": "a.txt"}},
            {"file": {"fileWithUri": "https://x/y", "mimeType": "image/png"}}, {"data": {"data": {"k": [1.0, 2.0]}}}],
        "metadata": {"a": 1.0}, "extensions": ["e1"]});
    assert_eq!(
        shown(&rest::validate::<rest::Message>(&rest_msg)),
        Vec::<String>::new()
    );
    let stream = json!({"statusUpdate": {"taskId": "t1", "contextId": "c1",
        "status": {"state": "TASK_STATE_WORKING", "timestamp": "2025-04-02T16:59:25.331Z"}}});
    assert_eq!(
        shown(&rest::validate::<rest::StreamResponse>(&stream)),
        Vec::<String>::new()
    );
    // snake_case spellings are valid ProtoJSON
    let snake = json!({"id": "t", "context_id": "c", "status": {"state": "TASK_STATE_CANCELLED"}});
    assert_eq!(
        shown(&rest::validate::<rest::Task>(&snake)),
        Vec::<String>::new()
    );
    let rest_card = json!({"protocolVersion": "0.3.0", "name": "A", "description": "d",
        "url": "https://a", "version": "1", "capabilities": {"streaming": true},
        "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
            "mtls": {"mtlsSecurityScheme": {}}},
        "security": [{"schemes": {"key": {}, "mtls": {"list": []}}}]});
    assert_eq!(
        shown(&rest::validate::<rest::AgentCard>(&rest_card)),
        Vec::<String>::new()
    );
}

#[test]
fn spec_examples_without_kind_are_reported_but_parse() {
    // 0.3 spec §9.2 request: the message has no `kind` (J0 requires it).
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
        "params": {"message": {"role": "user", "parts": [{"kind": "text", "text": "tell me a joke"}],
            "messageId": "9229e770-767c-417b-a0b0-f0741243c589"}, "metadata": {}}});
    assert_eq!(
        shown(&v03::validate_request(&req)),
        ["params.message: missing required member kind"]
    );
    let params: v03::MessageSendParams = serde_json::from_value(req["params"].clone()).unwrap();
    assert_eq!(params.message.text(), "tell me a joke");
}

#[test]
fn whole_requests_are_validated_by_method() {
    let req = json!({"jsonrpc": "2.0", "id": "r1", "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m", "role": "user",
            "parts": [{"kind": "text", "text": "a"}, {"kind": "text", "text": "b", "image": "x"}]},
        "configuration": {"pushNotification": {"url": "https://h"}}}});
    assert_eq!(
        shown(&v03::validate_request(&req)),
        [
            "params.configuration: unknown member pushNotification",
            "params.message.parts[1]: unknown member image"
        ]
    );
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "t", "historyLength": -1, "name": "tasks/t"}});
    assert_eq!(
        shown(&v03::validate_request(&get)),
        ["params: unknown member name"]
    );
    let push = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/pushNotificationConfig/delete", "params": {"id": "t"}});
    assert_eq!(
        shown(&v03::validate_request(&push)),
        ["params: missing required member pushNotificationConfigId"]
    );
    let v1 = json!({"jsonrpc": "2.0", "id": 4, "method": "SendMessage", "params": {}});
    assert_eq!(
        shown(&v03::validate_request(&v1)),
        ["method: method SendMessage is not an A2A 0.3 method"]
    );
    let card = json!({"jsonrpc": "2.0", "id": 5, "method": "agent/getAuthenticatedExtendedCard"});
    assert_eq!(shown(&v03::validate_request(&card)), Vec::<String>::new());
    let no_params = json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/cancel"});
    assert_eq!(
        shown(&v03::validate_request(&no_params)),
        ["params: missing required member id"]
    );
}

#[test]
fn result_validators_follow_the_method() {
    use a2a_types::jsonrpc::V03Method;
    let list = json!([{"taskId": "t", "pushNotificationConfig": {"url": "https://h", "id": "c"}},
        {"taskId": "t", "url": "https://h"}]);
    let v = v03::result_validator(V03Method::PushConfigList).unwrap();
    assert_eq!(
        shown(&v.validate(&list)),
        [
            "[1]: unknown member url",
            "[1]: missing required member pushNotificationConfig"
        ]
    );
    assert!(v03::result_validator(V03Method::PushConfigDelete).is_none());
    let stream = v03::result_validator(V03Method::MessageStream).unwrap();
    let ev = json!({"kind": "status-update", "taskId": "t", "contextId": "c",
        "status": {"state": "completed"}, "final": true});
    assert_eq!(shown(&stream.validate(&ev)), Vec::<String>::new());
    let send = v03::result_validator(V03Method::MessageSend).unwrap();
    assert_eq!(
        shown(&send.validate(&ev)),
        [r#"kind: wrong discriminator kind="status-update" (expected one of "task", "message")"#]
    );
    assert!(v03::params_validator(V03Method::GetAuthenticatedExtendedCard).is_none());
}
