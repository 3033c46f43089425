//! Parse tests of the 0.3 HTTP+JSON dialect (ProtoJSON of the 0.3 proto).
//!
//! The documents below were produced by the official Python SDK (a2a-sdk 0.3.26:
//! `json_format.MessageToJson(proto_utils.ToProto.<type>(...))`), i.e. what a 0.3 REST peer sends.

use a2a_types::v03::rest::*;
use serde_json::{Value, json};

fn parse<T: serde::de::DeserializeOwned>(text: &str) -> (T, Value) {
    let v: Value = serde_json::from_str(text).unwrap();
    (serde_json::from_value(v.clone()).unwrap(), v)
}

const SDK_MESSAGE: &str = r#"{"messageId": "m1", "contextId": "c1", "taskId": "t1", "role": "ROLE_USER", "content": [{"text": "hi"}, {"file": {"fileWithBytes": "YUdrPQ==", "mimeType": "text/plain", "name": "a.txt"}}, {"file": {"fileWithUri": "https://x/y", "mimeType": "image/png"}}, {"data": {"data": {"k": [1.0, 2.0]}}}], "metadata": {"a": 1.0}, "extensions": ["e1"]}"#;

#[test]
fn sdk_message_round_trips() {
    let (m, v): (Message, Value) = parse(SDK_MESSAGE);
    assert_eq!(m.role, Role::User);
    assert_eq!(m.content.len(), 4);
    assert_eq!(m.content[0].as_text(), Some("hi"));
    match &m.content[1].content {
        PartContent::File(f) => {
            assert_eq!(f.name.as_deref(), Some("a.txt"));
            match &f.file {
                FileContent::Bytes(b) => assert_eq!(b.decode().unwrap(), b"aGk="),
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&m.content[2].content, PartContent::File(FilePart { file: FileContent::Uri(u), .. }) if u == "https://x/y")
    );
    assert!(
        matches!(&m.content[3].content, PartContent::Data(d) if d.data["k"] == json!([1.0, 2.0]))
    );
    assert_eq!(serde_json::to_value(&m).unwrap(), v);
}

#[test]
fn sdk_task_uses_cancelled_and_message_json_name() {
    let text = r#"{"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_CANCELLED", "message": {"messageId": "m2", "role": "ROLE_AGENT", "content": [{"text": "bye"}]}, "timestamp": "2025-04-02T16:59:25.331Z"}, "artifacts": [{"artifactId": "a1", "parts": [{"text": "x"}]}]}"#;
    let (t, v): (Task, Value) = parse(text);
    assert_eq!(t.status.state, TaskState::Cancelled);
    assert!(t.status.state.is_terminal());
    assert_eq!(
        t.status.state.to_jsonrpc(),
        a2a_types::v03::TaskState::Canceled
    );
    assert_eq!(t.status.message.as_ref().unwrap().role, Role::Agent);
    assert_eq!(serde_json::to_value(&t).unwrap(), v);
    // the proto field name `update` and snake_case names are accepted on input
    let alt = json!({"id": "t1", "context_id": "c1",
        "status": {"state": 5, "update": {"message_id": "m2", "role": 2, "content": []}}});
    let t2: Task = serde_json::from_value(alt).unwrap();
    assert_eq!(t2.context_id, "c1");
    assert_eq!(t2.status.state, TaskState::Cancelled);
    assert_eq!(t2.status.message.unwrap().message_id, "m2");
    // the JSON-RPC spelling is not this dialect's
    assert!(serde_json::from_value::<TaskState>(json!("TASK_STATE_CANCELED")).is_err());
    assert!(serde_json::from_value::<TaskState>(json!("canceled")).is_err());
}

#[test]
fn sdk_stream_responses() {
    let status = r#"{"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}, "final": true}}"#;
    let artifact = r#"{"artifactUpdate": {"taskId": "t1", "contextId": "c1", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}, "append": true}}"#;
    let message = r#"{"message": {"messageId": "m1", "role": "ROLE_AGENT", "content": [{"text": "hi", "metadata": {"k": "v"}}]}}"#;
    let (s, v): (StreamResponse, Value) = parse(status);
    assert!(
        matches!(&s, StreamResponse::StatusUpdate(e) if e.is_final && e.status.state == TaskState::InputRequired)
    );
    assert_eq!(serde_json::to_value(&s).unwrap(), v);
    let (a, v): (StreamResponse, Value) = parse(artifact);
    assert!(
        matches!(&a, StreamResponse::ArtifactUpdate(e) if e.append == Some(true) && e.last_chunk.is_none())
    );
    assert_eq!(serde_json::to_value(&a).unwrap(), v);
    let (m, v): (StreamResponse, Value) = parse(message);
    match &m {
        StreamResponse::Message(msg) => {
            assert_eq!(msg.content[0].metadata.as_ref().unwrap()["k"], "v")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(serde_json::to_value(&m).unwrap(), v);
    let (r, v): (SendMessageResponse, Value) = parse(message);
    assert!(matches!(r, SendMessageResponse::Message(_)));
    assert_eq!(serde_json::to_value(&r).unwrap(), v);
    // proto field name `msg` is accepted on input
    let msg_alias: SendMessageResponse = serde_json::from_value(
        json!({"msg": {"messageId": "m", "role": "ROLE_AGENT", "content": []}}),
    )
    .unwrap();
    assert!(matches!(msg_alias, SendMessageResponse::Message(_)));
    // a oneof with two members is refused
    assert!(
        serde_json::from_value::<SendMessageResponse>(json!({
            "task": {"id": "t", "contextId": "c", "status": {}},
            "message": {"messageId": "m", "content": []}
        }))
        .is_err()
    );
}

#[test]
fn send_message_request_body() {
    let body = json!({
        "message": {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]},
        "configuration": {
            "acceptedOutputModes": ["text/plain"],
            "pushNotification": {"url": "https://h/w", "token": "tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "c"}},
            "historyLength": 3,
            "blocking": false
        },
        "metadata": {"z": true}
    });
    let r: SendMessageRequest = serde_json::from_value(body.clone()).unwrap();
    let cfg = r.configuration.as_ref().unwrap();
    assert_eq!(cfg.blocking, Some(false));
    assert_eq!(cfg.history_length, Some(3));
    assert_eq!(cfg.push_notification.as_ref().unwrap().url, "https://h/w");
    assert_eq!(serde_json::to_value(&r).unwrap(), body);
    // proto field name `request` is accepted
    let alt: SendMessageRequest = serde_json::from_value(
        json!({"request": {"messageId": "m1", "role": "ROLE_USER", "content": []}}),
    )
    .unwrap();
    assert_eq!(alt.message.message_id, "m1");
    // the JSON-RPC spelling `parts` is not this dialect's: ignored, and content stays empty
    let jsonrpc_shaped: SendMessageRequest = serde_json::from_value(json!({"message":
        {"messageId": "m1", "role": "ROLE_USER", "parts": [{"kind": "text", "text": "hi"}]}}))
    .unwrap();
    assert!(jsonrpc_shaped.message.content.is_empty());
}

#[test]
fn sdk_push_config_and_resource_names() {
    let text = r#"{"name": "tasks/t1/pushNotificationConfigs/c9", "pushNotificationConfig": {"id": "c9", "url": "https://h/w", "token": "tok", "authentication": {"schemes": ["Bearer"], "credentials": "cr"}}}"#;
    let (c, v): (TaskPushNotificationConfig, Value) = parse(text);
    let name = PushConfigName::parse(&c.name).unwrap();
    assert_eq!(name.task_id, "t1");
    assert_eq!(name.config_id, "c9");
    assert_eq!(name.to_string(), c.name);
    assert_eq!(serde_json::to_value(&c).unwrap(), v);
    assert_eq!(TaskName::parse("tasks/abc").unwrap().task_id, "abc");
    assert!(TaskName::parse("tasks/").is_none());
    assert!(TaskName::parse("task/abc").is_none());
    assert!(TaskName::parse("tasks/a/b").is_none());
    assert!(PushConfigName::parse("tasks/t/pushNotificationConfigs/").is_none());

    let list = json!({"configs": [v], "nextPageToken": "p2"});
    let l: ListTaskPushNotificationConfigResponse = serde_json::from_value(list.clone()).unwrap();
    assert_eq!(l.configs.len(), 1);
    assert_eq!(serde_json::to_value(&l).unwrap(), list);

    let create = json!({"parent": "tasks/t1", "configId": "c9",
        "config": {"name": "tasks/t1/pushNotificationConfigs/c9",
            "pushNotificationConfig": {"url": "https://h/w"}}});
    let cr: CreateTaskPushNotificationConfigRequest =
        serde_json::from_value(create.clone()).unwrap();
    assert_eq!(cr.config_id, "c9");
    assert_eq!(serde_json::to_value(&cr).unwrap(), create);
    let get: GetTaskRequest =
        serde_json::from_value(json!({"name": "tasks/t1", "historyLength": 2})).unwrap();
    assert_eq!(get.history_length, Some(2));
    assert_eq!(serde_json::to_value(Empty {}).unwrap(), json!({}));
}

const SDK_CARD: &str = r#"{"name": "A", "description": "d", "url": "https://a/rpc", "provider": {"url": "https://o", "organization": "o"}, "version": "1.0", "documentationUrl": "https://a/doc", "capabilities": {"streaming": true, "extensions": [{"uri": "urn:x", "required": true, "params": {"p": 1.0}}]}, "securitySchemes": {"oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://oidc"}}, "oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://t", "scopes": {"r": "read"}}}}}, "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}, "mtls": {"mtlsSecurityScheme": {}}, "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}}}, "security": [{"schemes": {"oauth": {"list": ["r"]}}}, {"schemes": {"key": {}, "mtls": {}}}], "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "S", "description": "sd", "tags": ["t"], "examples": ["e"], "inputModes": ["text/plain"]}], "supportsAuthenticatedExtendedCard": true, "preferredTransport": "HTTP+JSON", "additionalInterfaces": [{"url": "https://a/rest", "transport": "HTTP+JSON"}], "protocolVersion": "0.3.0", "signatures": [{"protected": "eyJ", "signature": "sig", "header": {"kid": "k"}}]}"#;

#[test]
fn sdk_agent_card_round_trips() {
    let (c, v): (AgentCard, Value) = parse(SDK_CARD);
    assert_eq!(c.protocol_version, "0.3.0");
    assert_eq!(c.preferred_transport.as_deref(), Some("HTTP+JSON"));
    match &c.security_schemes["key"] {
        SecurityScheme::ApiKeySecurityScheme(k) => assert_eq!(k.location, "header"),
        other => panic!("{other:?}"),
    }
    match &c.security_schemes["oauth"] {
        SecurityScheme::Oauth2SecurityScheme(o) => {
            assert!(matches!(&o.flows, OAuthFlows::ClientCredentials(f) if f.scopes["r"] == "read"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(c.security[0].schemes["oauth"].list, ["r"]);
    assert!(c.security[1].schemes["key"].list.is_empty());
    assert!(c.extra.is_empty());
    assert_eq!(serde_json::to_value(&c).unwrap(), v);

    let mut with_extra = v.clone();
    with_extra["x-vendor"] = json!(1);
    let c2: AgentCard = serde_json::from_value(with_extra.clone()).unwrap();
    assert_eq!(c2.extra["x-vendor"], 1);
    assert_eq!(serde_json::to_value(&c2).unwrap(), with_extra);
}

#[test]
fn bad_shapes_are_refused_by_the_default_parse() {
    // two oneof members in a part
    assert!(serde_json::from_value::<Part>(json!({"text": "a", "data": {"data": {}}})).is_err());
    // empty part
    assert!(serde_json::from_value::<Part>(json!({})).is_err());
    // file with both members / with none
    assert!(
        serde_json::from_value::<FilePart>(json!({"fileWithUri": "u", "fileWithBytes": "AA=="}))
            .is_err()
    );
    assert!(serde_json::from_value::<FilePart>(json!({"mimeType": "a/b"})).is_err());
    // bad base64 is kept by the lenient parse (pass-through), but does not decode
    let f: FilePart = serde_json::from_value(json!({"fileWithBytes": "not base64!"})).unwrap();
    assert!(matches!(&f.file, FileContent::Bytes(b) if b.decode().is_err()));
    // data must be an object
    assert!(serde_json::from_value::<Part>(json!({"data": {"data": [1]}})).is_err());
    // unknown enum values
    assert!(serde_json::from_value::<Role>(json!("user")).is_err());
    assert!(serde_json::from_value::<Role>(json!(7)).is_err());
    // two flows in a P0 oneof
    assert!(
        serde_json::from_value::<OAuthFlows>(json!({
            "implicit": {"authorizationUrl": "a", "scopes": {}},
            "password": {"tokenUrl": "t", "scopes": {}}
        }))
        .is_err()
    );
}

#[test]
fn task_state_maps_to_and_from_jsonrpc() {
    for s in TaskState::ALL {
        assert_eq!(TaskState::from_jsonrpc(s.to_jsonrpc()), *s);
    }
    for s in a2a_types::v03::TaskState::ALL {
        assert_eq!(TaskState::from_jsonrpc(s).to_jsonrpc(), s);
    }
}
