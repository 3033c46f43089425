//! Spec examples (v1.0 specification.md) checked by hand: they parse into the right type,
//! serialize back to an equal JSON value, and pass the strict validator. The complete sweep of
//! every example lives in `spec_examples.rs` (conformance).

use a2a_types::error::{A2aError, ErrorKind};
use a2a_types::jsonrpc::JsonRpcResponse;
use a2a_types::strict;
use a2a_types::v1::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn exact<T: Serialize + DeserializeOwned + schemars::JsonSchema>(text: &str) -> T {
    let want: Value = serde_json::from_str(text).unwrap();
    let t: T = strict::parse(text).unwrap();
    assert_eq!(serde_json::to_value(&t).unwrap(), want);
    let v = strict::validate::<T>(&want);
    assert!(v.is_empty(), "{v:?}");
    t
}

/// §8.5 sample agent card (complete, with signatures).
const CARD: &str = r##"{"name": "GeoSpatial Route Planner Agent", "description": "Provides advanced route planning, traffic analysis, and custom map generation services. This agent can calculate optimal routes, estimate travel times considering real-time traffic, and create personalized maps with points of interest.", "supportedInterfaces": [{"url": "https://georoute-agent.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}, {"url": "https://georoute-agent.example.com/a2a/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"}, {"url": "https://georoute-agent.example.com/a2a/json", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}], "provider": {"organization": "Example Geo Services Inc.", "url": "https://www.examplegeoservices.com"}, "iconUrl": "https://georoute-agent.example.com/icon.png", "version": "1.2.0", "documentationUrl": "https://docs.examplegeoservices.com/georoute-agent/api", "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true}, "securitySchemes": {"google": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"}}}, "securityRequirements": [{"schemes": {"google": {"list": ["openid", "profile", "email"]}}}], "defaultInputModes": ["application/json", "text/plain"], "defaultOutputModes": ["application/json", "image/png"], "skills": [{"id": "route-optimizer-traffic", "name": "Traffic-Aware Route Optimizer", "description": "Calculates the optimal driving route between two or more locations, taking into account real-time traffic conditions, road closures, and user preferences (e.g., avoid tolls, prefer highways).", "tags": ["maps", "routing", "navigation", "directions", "traffic"], "examples": ["Plan a route from '1600 Amphitheatre Parkway, Mountain View, CA' to 'San Francisco International Airport' avoiding tolls.", "{\"origin\": {\"lat\": 37.422, \"lng\": -122.084}, \"destination\": {\"lat\": 37.7749, \"lng\": -122.4194}, \"preferences\": [\"avoid_ferries\"]}"], "inputModes": ["application/json", "text/plain"], "outputModes": ["application/json", "application/vnd.geo+json", "text/html"]}, {"id": "custom-map-generator", "name": "Personalized Map Generator", "description": "Creates custom map images or interactive map views based on user-defined points of interest, routes, and style preferences. Can overlay data layers.", "tags": ["maps", "customization", "visualization", "cartography"], "examples": ["Generate a map of my upcoming road trip with all planned stops highlighted.", "Show me a map visualizing all coffee shops within a 1-mile radius of my current location."], "inputModes": ["application/json"], "outputModes": ["image/png", "image/jpeg", "application/json", "text/html"]}], "signatures": [{"protected": "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJrZXktMSIsImprdSI6Imh0dHBzOi8vZXhhbXBsZS5jb20vYWdlbnQvandrcy5qc29uIn0", "signature": "QFdkNLNszlGj3z3u0YQGt_T9LixY3qtdQpZmsTdDHDe3fXV9y9-B3m2-XgCpzuhiLt8E0tV6HXoZKHv4GtHgKQ"}]}"##;
/// §9.4.1 SendMessage result with a task and artifact.
const SEND_RESULT: &str = r##"{"task": {"id": "task-uuid", "contextId": "context-uuid", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": [{"artifactId": "artifact-uuid", "name": "Weather Report", "parts": [{"text": "Today will be sunny with a high of 75°F"}]}]}}"##;
/// §11 streaming status update.
const STATUS_UPDATE: &str = r##"{"statusUpdate": {"taskId": "43667960-d455-4453-b0cf-1bae4955270d", "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4", "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2024-03-15T18:30:00Z"}}}"##;
/// §3.1.4 ListTasks response.
const LIST_TASKS: &str = r##"{"tasks": [{"id": "3f36680c-7f37-4a5f-945e-d78981fafd36", "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4", "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2024-03-15T10:15:00Z"}}], "totalSize": 5, "pageSize": 10, "nextPageToken": ""}"##;
/// SendMessage REST body with configuration.
const SEND_BODY: &str = r##"{"message": {"role": "ROLE_USER", "parts": [{"text": "Generate the Q1 sales report. This usually takes a while. Notify me when it's ready."}], "messageId": "6dbc13b5-bd57-4c2b-b503-24e381b6c8d6"}, "configuration": {"taskPushNotificationConfig": {"url": "https://client.example.com/webhook/a2a-notifications", "authentication": {"scheme": "Bearer", "credentials": "secure-client-token-for-task-aaa"}}}}"##;
/// §9.5 JSON-RPC error with ErrorInfo.
const RPC_ERROR: &str = r##"{"jsonrpc": "2.0", "id": 2, "error": {"code": -32001, "message": "Task not found", "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org", "metadata": {"taskId": "nonexistent-task-id", "timestamp": "2025-11-09T10:30:00.000Z"}}]}}"##;
/// §9.5 JSON-RPC validation error with BadRequest.
const RPC_BAD_REQUEST: &str = r##"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid parameters", "data": [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message.parts", "description": "At least one part is required"}]}]}}"##;
/// §11.6 REST error body.
const REST_ERROR: &str = r##"{"error": {"code": 404, "status": "NOT_FOUND", "message": "The specified task ID does not exist or is not accessible", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org", "metadata": {"taskId": "task-123", "timestamp": "2025-11-09T10:30:00.000Z"}}]}}"##;

#[test]
fn agent_card_example() {
    let card: AgentCard = exact(CARD);
    assert_eq!(card.supported_interfaces.len(), 3);
    assert_eq!(
        card.supported_interfaces[1].binding(),
        a2a_types::version::ProtocolBinding::Grpc
    );
    assert!(matches!(
        card.security_schemes["google"],
        SecurityScheme::OpenIdConnectSecurityScheme(_)
    ));
    assert_eq!(
        card.security_requirements[0].schemes["google"].list,
        ["openid", "profile", "email"]
    );
    assert_eq!(card.capabilities.extended_agent_card, Some(true));
    assert!(card.extra.is_empty());
}

#[test]
fn task_and_stream_examples() {
    let r: SendMessageResponse = exact(SEND_RESULT);
    let SendMessageResponse::Task(t) = r else {
        panic!("not a task")
    };
    assert_eq!(t.state(), TaskState::Completed);
    assert_eq!(
        t.artifacts[0].parts[0].as_text(),
        Some("Today will be sunny with a high of 75°F")
    );
    let s: StreamResponse = exact(STATUS_UPDATE);
    assert_eq!(s.task_id(), Some("43667960-d455-4453-b0cf-1bae4955270d"));
    let l: ListTasksResponse = exact(LIST_TASKS);
    assert_eq!(l.next_page_token, "");
    let b: SendMessageRequest = exact(SEND_BODY);
    assert!(b.configuration.is_some());
}

#[test]
fn error_examples() {
    let r: JsonRpcResponse = strict::parse(RPC_ERROR).unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        serde_json::from_str::<Value>(RPC_ERROR).unwrap()
    );
    let e = A2aError::from_jsonrpc(r.error_object().unwrap());
    assert_eq!(e.kind, ErrorKind::TaskNotFound);
    assert_eq!(e.metadata["taskId"], "nonexistent-task-id");
    // Our builder produces the same error object as the spec example.
    let ours = serde_json::to_value(e.to_jsonrpc_v1()).unwrap();
    assert_eq!(
        ours,
        serde_json::from_str::<Value>(RPC_ERROR).unwrap()["error"]
    );

    let r: JsonRpcResponse = strict::parse(RPC_BAD_REQUEST).unwrap();
    let e = A2aError::from_jsonrpc(r.error_object().unwrap());
    assert_eq!(e.kind, ErrorKind::InvalidParams);
    assert_eq!(e.field_violations[0].field, "message.parts");

    let body: Value = serde_json::from_str(REST_ERROR).unwrap();
    let e = A2aError::from_rest_body(&body, 404);
    assert_eq!(e.kind, ErrorKind::TaskNotFound);
    assert_eq!(serde_json::to_value(e.to_rest_body()).unwrap(), body);
}

#[test]
fn signing_payload_applies_presence_rules() {
    // S1 §8.4.1 example: optional bools kept when false, empty non-REQUIRED lists dropped,
    // REQUIRED members kept even when empty.
    let card: AgentCard = strict::parse(
        r#"{"name":"Example Agent","description":"","capabilities":{"streaming":false,"pushNotifications":false,"extensions":[]},"skills":[]}"#,
    )
    .unwrap();
    let p = card.signing_payload();
    assert_eq!(
        p["capabilities"],
        serde_json::json!({"streaming": false, "pushNotifications": false})
    );
    assert_eq!(p["description"], "");
    assert_eq!(p["skills"], serde_json::json!([]));
    // Signatures are excluded; plain proto3 fields at their default are dropped.
    let mut card: AgentCard = strict::parse(CARD).unwrap();
    card.capabilities.extensions.push(AgentExtension {
        uri: Some("urn:x".into()),
        description: Some(String::new()),
        required: Some(false),
        params: None,
    });
    card.supported_interfaces[0].tenant = Some(String::new());
    let p = card.signing_payload();
    assert!(p.get("signatures").is_none());
    assert_eq!(
        p["capabilities"]["extensions"],
        serde_json::json!([{"uri": "urn:x"}])
    );
    assert!(p["supportedInterfaces"][0].get("tenant").is_none());
    assert_eq!(
        p["documentationUrl"],
        "https://docs.examplegeoservices.com/georoute-agent/api"
    );
}

#[test]
fn builders_make_short_programs() {
    let m = Message::user_text("hi").with_context_id("c1");
    assert_eq!(m.role, Role::User);
    assert_eq!(m.text(), "hi");
    assert!(!m.message_id.is_empty());
    let t = Task::completed(vec![
        Part::text("done"),
        Part::raw(b"\x00\x01").with_media_type("application/octet-stream"),
    ]);
    assert_eq!(t.state(), TaskState::Completed);
    assert_eq!(t.artifacts[0].parts[1].as_raw().unwrap().as_str(), "AAE=");
    let ev = StreamResponse::from(t.clone());
    assert!(ev.ends_stream());
    let working = StreamResponse::from(TaskStatusUpdateEvent::new(
        &t.id,
        "c",
        TaskStatus::new(TaskState::Working),
    ));
    assert!(!working.ends_stream());
    assert!(
        StreamResponse::from(TaskStatusUpdateEvent::new(
            "t",
            "c",
            TaskStatus::new(TaskState::InputRequired)
        ))
        .ends_stream()
    );
    // A live stream closes after a terminal task or an interrupted status, not after an
    // interrupted task snapshot (a subscription to a task waiting for input goes on).
    assert!(ev.closes_live_stream());
    let mut waiting = t.clone();
    waiting.status = TaskStatus::new(TaskState::InputRequired);
    let waiting = StreamResponse::from(waiting);
    assert!(waiting.ends_stream() && !waiting.closes_live_stream());
    assert!(
        StreamResponse::from(TaskStatusUpdateEvent::new(
            "t",
            "c",
            TaskStatus::new(TaskState::InputRequired)
        ))
        .closes_live_stream()
    );
    assert!(!working.closes_live_stream());
    let cfg = SendMessageConfiguration::default()
        .with_history_length(0)
        .with_return_immediately(true);
    let req = SendMessageRequest::new(m).with_configuration(cfg);
    let v = serde_json::to_value(&req).unwrap();
    assert_eq!(
        v["configuration"],
        serde_json::json!({"historyLength": 0, "returnImmediately": true})
    );
    assert!(strict::validate::<SendMessageRequest>(&v).is_empty());
    let card = AgentCard::new("A", "d", AgentInterface::new("https://a", "JSONRPC", "1.0"))
        .with_skill(AgentSkill::new("s", "S", "d", vec!["t".into()]));
    assert!(strict::validate::<AgentCard>(&serde_json::to_value(&card).unwrap()).is_empty());
}
