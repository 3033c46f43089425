//! Parse tests of the 0.3 JSON-RPC dialect on the examples of the 0.3 specification
//! (`docs/specification.md` @ v0.3.0, §5.7 and §9), plus targeted shape tests.

use a2a_types::v03::*;
use serde_json::{Value, json};

/// Parses `value` as `T`, serializes it back and returns the re-serialized JSON.
fn round_trip<T>(value: &Value) -> Value
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let parsed: T = serde_json::from_value(value.clone()).unwrap();
    serde_json::to_value(&parsed).unwrap()
}

/// Adds `"kind":"message"` to every message object the 0.3 spec examples list without it.
fn with_message_kind(mut v: Value) -> Value {
    v["kind"] = json!("message");
    v
}

const SPEC_CARD: &str = r#"{
  "protocolVersion": "0.2.9",
  "name": "GeoSpatial Route Planner Agent",
  "description": "Provides advanced route planning.",
  "url": "https://georoute-agent.example.com/a2a/v1",
  "preferredTransport": "JSONRPC",
  "additionalInterfaces" : [
    {"url": "https://georoute-agent.example.com/a2a/v1", "transport": "JSONRPC"},
    {"url": "https://georoute-agent.example.com/a2a/grpc", "transport": "GRPC"},
    {"url": "https://georoute-agent.example.com/a2a/json", "transport": "HTTP+JSON"}
  ],
  "provider": {
    "organization": "Example Geo Services Inc.",
    "url": "https://www.examplegeoservices.com"
  },
  "iconUrl": "https://georoute-agent.example.com/icon.png",
  "version": "1.2.0",
  "documentationUrl": "https://docs.examplegeoservices.com/georoute-agent/api",
  "capabilities": {
    "streaming": true,
    "pushNotifications": true,
    "stateTransitionHistory": false
  },
  "securitySchemes": {
    "google": {
      "type": "openIdConnect",
      "openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"
    }
  },
  "security": [{ "google": ["openid", "profile", "email"] }],
  "defaultInputModes": ["application/json", "text/plain"],
  "defaultOutputModes": ["application/json", "image/png"],
  "skills": [
    {
      "id": "route-optimizer-traffic",
      "name": "Traffic-Aware Route Optimizer",
      "description": "Calculates the optimal driving route.",
      "tags": ["maps", "routing", "navigation", "directions", "traffic"],
      "examples": [
        "Plan a route avoiding tolls.",
        "{\"origin\": {\"lat\": 37.422, \"lng\": -122.084}}"
      ],
      "inputModes": ["application/json", "text/plain"],
      "outputModes": ["application/json", "application/vnd.geo+json", "text/html"]
    }
  ],
  "supportsAuthenticatedExtendedCard": true,
  "signatures": [
    {
      "protected": "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJrZXktMSIsImprdSI6Imh0dHBzOi8vZXhhbXBsZS5jb20vYWdlbnQvandrcy5qc29uIn0",
      "signature": "QFdkNLNszlGj3z3u0YQGt_T9LixY3qtdQpZmsTdDHDe3fXV9y9-B3m2-XgCpzuhiLt8E0tV6HXoZKHv4GtHgKQ"
    }
  ]
}"#;

#[test]
fn spec_sample_agent_card_round_trips() {
    let v: Value = serde_json::from_str(SPEC_CARD).unwrap();
    let card: AgentCard = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(card.protocol_version, "0.2.9");
    assert_eq!(card.preferred_transport(), transport::JSONRPC);
    assert_eq!(
        card.additional_interfaces.as_ref().unwrap()[1].transport,
        "GRPC"
    );
    assert!(matches!(
        card.security_schemes.as_ref().unwrap()["google"],
        SecurityScheme::OpenIdConnect(_)
    ));
    assert_eq!(card.security.as_ref().unwrap()[0]["google"].len(), 3);
    assert_eq!(card.capabilities.state_transition_history, Some(false));
    assert_eq!(card.supports_authenticated_extended_card, Some(true));
    assert!(card.extra.is_empty());
    assert_eq!(serde_json::to_value(&card).unwrap(), v);
}

#[test]
fn card_unknown_members_are_preserved() {
    let mut v: Value = serde_json::from_str(SPEC_CARD).unwrap();
    v["x-vendor"] = json!({"tier": "gold"});
    v["capabilities"]["x-cap"] = json!(true);
    v["skills"][0]["x-skill"] = json!([1, 2]);
    let card: AgentCard = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(card.extra["x-vendor"], json!({"tier": "gold"}));
    assert_eq!(card.capabilities.extra["x-cap"], json!(true));
    assert_eq!(serde_json::to_value(&card).unwrap(), v);
}

#[test]
fn spec_message_send_request_params() {
    // §9.2: the request message has no `kind`; J0 requires it, lenient parse supplies it.
    let params = json!({
        "message": {
            "role": "user",
            "parts": [{"kind": "text", "text": "tell me a joke"}],
            "messageId": "9229e770-767c-417b-a0b0-f0741243c589"
        },
        "metadata": {}
    });
    let p: MessageSendParams = serde_json::from_value(params.clone()).unwrap();
    assert_eq!(p.message.role, Role::User);
    assert_eq!(p.message.text(), "tell me a joke");
    assert_eq!(p.metadata, Some(Metadata::new()));
    let mut expected = params;
    expected["message"] = with_message_kind(expected["message"].clone());
    assert_eq!(serde_json::to_value(&p).unwrap(), expected);
}

#[test]
fn spec_task_result_with_history() {
    let result = json!({
        "id": "363422be-b0f9-4692-a24d-278670e7c7f1",
        "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4",
        "status": {"state": "completed"},
        "artifacts": [{
            "artifactId": "9b6934dd-37e3-4eb1-8766-962efaab63a1",
            "name": "joke",
            "parts": [{"kind": "text", "text": "Why did the chicken cross the road?"}]
        }],
        "history": [{
            "role": "user",
            "kind": "message",
            "parts": [{"kind": "text", "text": "tell me a joke"}],
            "messageId": "9229e770-767c-417b-a0b0-f0741243c589",
            "taskId": "363422be-b0f9-4692-a24d-278670e7c7f1",
            "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4"
        }],
        "kind": "task",
        "metadata": {}
    });
    let r: SendMessageResult = serde_json::from_value(result.clone()).unwrap();
    let SendMessageResult::Task(task) = &r else {
        panic!("expected a task, got {r:?}")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.history.as_ref().unwrap().len(), 1);
    assert_eq!(serde_json::to_value(&r).unwrap(), result);
}

#[test]
fn spec_message_result_is_a_message() {
    // §9.2 second example, with the `role` the example forgot (J0 requires it).
    let result = json!({
        "messageId": "363422be-b0f9-4692-a24d-278670e7c7f1",
        "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4",
        "role": "agent",
        "parts": [{"kind": "text", "text": "To get to the other side!"}],
        "kind": "message",
        "metadata": {}
    });
    let r: SendMessageResult = serde_json::from_value(result.clone()).unwrap();
    assert!(matches!(&r, SendMessageResult::Message(m) if m.role == Role::Agent));
    assert_eq!(serde_json::to_value(&r).unwrap(), result);
    // Without `role`, as printed in the spec, the document is invalid.
    let mut broken = result;
    broken.as_object_mut().unwrap().remove("role");
    assert!(serde_json::from_value::<SendMessageResult>(broken).is_err());
}

#[test]
fn spec_stream_events() {
    let submitted = json!({
        "id": "225d6247-06ba-4cda-a08b-33ae35c8dcfa",
        "contextId": "05217e44-7e9f-473e-ab4f-2c2dde50a2b1",
        "status": {"state": "submitted", "timestamp": "2025-04-02T16:59:25.331844"},
        "kind": "task",
        "metadata": {}
    });
    let artifact = json!({
        "taskId": "225d6247-06ba-4cda-a08b-33ae35c8dcfa",
        "contextId": "05217e44-7e9f-473e-ab4f-2c2dde50a2b1",
        "artifact": {
            "artifactId": "9b6934dd-37e3-4eb1-8766-962efaab63a1",
            "parts": [{"kind": "text", "text": "<section 2...>"}]
        },
        "append": true,
        "lastChunk": false,
        "kind": "artifact-update"
    });
    let done = json!({
        "taskId": "225d6247-06ba-4cda-a08b-33ae35c8dcfa",
        "contextId": "05217e44-7e9f-473e-ab4f-2c2dde50a2b1",
        "status": {"state": "completed", "timestamp": "2025-04-02T16:59:35.331844"},
        "final": true,
        "kind": "status-update"
    });
    match serde_json::from_value::<StreamResult>(submitted.clone()).unwrap() {
        StreamResult::Task(t) => {
            assert_eq!(t.status.state, TaskState::Submitted);
            let ts = t.status.timestamp_utc().unwrap().unwrap();
            assert_eq!(ts.unix_nanos(), 1_743_613_165_331_844_000);
        }
        other => panic!("expected task, got {other:?}"),
    }
    match serde_json::from_value::<StreamResult>(artifact.clone()).unwrap() {
        StreamResult::ArtifactUpdate(a) => {
            assert_eq!(a.append, Some(true));
            assert_eq!(a.last_chunk, Some(false));
        }
        other => panic!("expected artifact-update, got {other:?}"),
    }
    match serde_json::from_value::<StreamResult>(done.clone()).unwrap() {
        StreamResult::StatusUpdate(s) => {
            assert!(s.is_final);
            assert!(s.status.state.is_terminal());
        }
        other => panic!("expected status-update, got {other:?}"),
    }
    for v in [submitted, artifact, done] {
        assert_eq!(round_trip::<StreamResult>(&v), v);
    }
}

#[test]
fn spec_input_required_and_push_config() {
    let task = json!({
        "id": "3f36680c-7f37-4a5f-945e-d78981fafd36",
        "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4",
        "status": {
            "state": "input-required",
            "message": {
                "role": "agent",
                "kind": "message",
                "parts": [{"kind": "text", "text": "Where would you like to fly to?"}],
                "messageId": "c2e1b2dd-f200-4b04-bc22-1b0c65a1aad2",
                "taskId": "3f36680c-7f37-4a5f-945e-d78981fafd36",
                "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4"
            },
            "timestamp": "2024-03-15T10:10:00Z"
        },
        "kind": "task"
    });
    let t: Task = serde_json::from_value(task.clone()).unwrap();
    assert!(t.status.state.is_interrupted());
    assert_eq!(serde_json::to_value(&t).unwrap(), task);

    let cfg = json!({
        "taskId": "task-aaa",
        "pushNotificationConfig": {
            "url": "https://client.example.com/webhook/a2a-notifications",
            "token": "secure-client-token-for-task-aaa",
            "authentication": {"schemes": ["Bearer"]}
        }
    });
    let c: TaskPushNotificationConfig = serde_json::from_value(cfg.clone()).unwrap();
    assert_eq!(
        c.push_notification_config
            .authentication
            .as_ref()
            .unwrap()
            .schemes,
        ["Bearer"]
    );
    assert_eq!(serde_json::to_value(&c).unwrap(), cfg);
}

#[test]
fn spec_data_and_file_parts() {
    let parts = json!([
        {"kind": "text", "text": "Show me a list", "metadata": {"mimeType": "application/json"}},
        {"kind": "file", "file": {"name": "output.png", "mimeType": "image/png",
            "uri": "https://storage.example.com/processed/task-bbb/output.png?token=xyz"}},
        {"kind": "file", "file": {"name": "input_image.png", "mimeType": "image/png",
            "bytes": "iVBORw0KGgoAAAANSUhEUgAAAAUA"}},
        {"kind": "data", "data": {"tickets": [1, 2]}}
    ]);
    let ps: Vec<Part> = serde_json::from_value(parts.clone()).unwrap();
    assert!(matches!(
        &ps[1],
        Part::File(FilePart {
            file: FileContent::Uri(_),
            ..
        })
    ));
    match &ps[2] {
        Part::File(FilePart {
            file: FileContent::Bytes(b),
            ..
        }) => assert_eq!(&b.decode().unwrap()[..4], b"\x89PNG"),
        other => panic!("expected bytes, got {other:?}"),
    }
    assert!(matches!(&ps[3], Part::Data(d) if d.data.contains_key("tickets")));
    assert_eq!(serde_json::to_value(&ps).unwrap(), parts);
}

#[test]
fn bad_shapes_are_refused_by_the_default_parse() {
    // data must be an object
    assert!(serde_json::from_value::<Part>(json!({"kind": "data", "data": [1]})).is_err());
    // unknown part kind
    assert!(serde_json::from_value::<Part>(json!({"kind": "image", "text": "x"})).is_err());
    // file with both bytes and uri, and with neither (the spec's `data` typo in §7.2)
    let both = json!({"kind": "file", "file": {"bytes": "AA==", "uri": "https://x"}});
    assert!(serde_json::from_value::<Part>(both).is_err());
    let neither = json!({"kind": "file", "file": {"mimeType": "image/png", "data": "<b64>"}});
    assert!(serde_json::from_value::<Part>(neither).is_err());
    // wrong kind on a message
    let m = json!({"kind": "task", "messageId": "m", "role": "user", "parts": []});
    assert!(serde_json::from_value::<Message>(m).is_err());
    // 1.0 spellings are not 0.3
    assert!(serde_json::from_value::<TaskState>(json!("TASK_STATE_COMPLETED")).is_err());
    assert!(serde_json::from_value::<Role>(json!("ROLE_USER")).is_err());
    // status-update requires `final`
    let ev = json!({"kind": "status-update", "taskId": "t", "contextId": "c",
        "status": {"state": "working"}});
    assert!(serde_json::from_value::<StreamResult>(ev).is_err());
    // unknown kind in a union
    assert!(serde_json::from_value::<StreamResult>(json!({"kind": "nope"})).is_err());
}

#[test]
fn task_states_are_kebab_case() {
    for s in TaskState::ALL {
        assert_eq!(serde_json::to_value(s).unwrap(), json!(s.as_str()));
    }
    assert_eq!(
        serde_json::to_value(TaskState::InputRequired).unwrap(),
        json!("input-required")
    );
    assert_eq!(
        serde_json::from_value::<TaskState>(json!("unknown")).unwrap(),
        TaskState::Unknown
    );
}

#[test]
fn push_config_params_use_task_id_as_id() {
    let get: GetTaskPushNotificationConfigParams =
        serde_json::from_value(json!({"id": "task-1", "pushNotificationConfigId": "cfg-1"}))
            .unwrap();
    assert_eq!(get.id, "task-1");
    assert_eq!(get.push_notification_config_id.as_deref(), Some("cfg-1"));
    // delete requires the config id
    assert!(
        serde_json::from_value::<DeleteTaskPushNotificationConfigParams>(json!({"id": "t"}))
            .is_err()
    );
    let list: ListTaskPushNotificationConfigResult = serde_json::from_value(json!([
        {"taskId": "t", "pushNotificationConfig": {"url": "https://h/x", "id": "c"}}
    ]))
    .unwrap();
    assert_eq!(list[0].push_notification_config.id.as_deref(), Some("c"));
}

#[test]
fn security_schemes_of_every_type() {
    let schemes = json!({
        "key": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "k"},
        "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
        "oauth": {"type": "oauth2", "oauth2MetadataUrl": "https://idp/.well-known/oauth-authorization-server",
            "flows": {
                "authorizationCode": {"authorizationUrl": "https://idp/auth", "tokenUrl": "https://idp/token",
                    "scopes": {"read": "Read"}},
                "clientCredentials": {"tokenUrl": "https://idp/token", "refreshUrl": "https://idp/r",
                    "scopes": {}},
                "implicit": {"authorizationUrl": "https://idp/auth", "scopes": {}},
                "password": {"tokenUrl": "https://idp/token", "scopes": {}}
            }},
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://idp/.well-known/openid-configuration"},
        "mtls": {"type": "mutualTLS"}
    });
    let parsed: std::collections::BTreeMap<String, SecurityScheme> =
        serde_json::from_value(schemes.clone()).unwrap();
    match &parsed["key"] {
        SecurityScheme::ApiKey(k) => assert_eq!(k.location, ApiKeyLocation::Header),
        other => panic!("{other:?}"),
    }
    match &parsed["oauth"] {
        SecurityScheme::OAuth2(o) => {
            assert!(o.flows.authorization_code.is_some() && o.flows.password.is_some())
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        parsed["mtls"],
        SecurityScheme::MutualTls(Default::default())
    );
    assert_eq!(serde_json::to_value(&parsed).unwrap(), schemes);
    assert!(
        serde_json::from_value::<SecurityScheme>(
            json!({"type": "apiKey", "in": "body", "name": "k"})
        )
        .is_err()
    );
}

#[test]
fn constructors_build_valid_wire_objects() {
    let m = Message::user_text("m1", "hello").with_context_id("c1");
    assert_eq!(
        serde_json::to_value(&m).unwrap(),
        json!({"kind": "message", "messageId": "m1", "role": "user", "contextId": "c1",
            "parts": [{"kind": "text", "text": "hello"}]})
    );
    let t = Task::completed_with_text("t1", "c1", "a1", "done");
    assert_eq!(
        serde_json::to_value(&t).unwrap(),
        json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"},
            "artifacts": [{"artifactId": "a1", "parts": [{"kind": "text", "text": "done"}]}]})
    );
    let card = AgentCard::new("A", "d", "http://127.0.0.1:1/", "1.0.0");
    let v = serde_json::to_value(&card).unwrap();
    assert_eq!(v["protocolVersion"], "0.3.0");
    assert_eq!(serde_json::from_value::<AgentCard>(v).unwrap(), card);
    let f = Part::file_bytes(b"hi", None, Some("text/plain".into()));
    assert_eq!(
        serde_json::to_value(&f).unwrap(),
        json!({"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain"}})
    );
}

#[test]
fn naive_and_offset_timestamps_are_interpreted_as_utc() {
    let mut s = TaskStatus::new(TaskState::Working);
    s.timestamp = Some("2025-04-02T16:59:25.331844".into());
    let naive = s.timestamp_utc().unwrap().unwrap();
    s.timestamp = Some("2025-04-02T18:59:25.331844+02:00".into());
    assert_eq!(s.timestamp_utc().unwrap().unwrap(), naive);
    s.timestamp = Some("yesterday".into());
    assert!(s.timestamp_utc().unwrap().is_err());
    // the text is kept verbatim
    s.timestamp = Some("2025-04-02T16:59:25.331844".into());
    assert_eq!(
        serde_json::to_value(&s).unwrap()["timestamp"],
        "2025-04-02T16:59:25.331844"
    );
}

#[test]
fn kind_less_parts_are_inferred_and_errors_keep_inner_paths() {
    let p: Part = serde_json::from_value(json!({"text": "hi"})).unwrap();
    assert_eq!(p.as_text(), Some("hi"));
    let p: Part = serde_json::from_value(json!({"data": {"k": 1}})).unwrap();
    assert!(matches!(p, Part::Data(_)));
    let p: Part = serde_json::from_value(json!({"file": {"uri": "https://x"}})).unwrap();
    assert!(matches!(p, Part::File(_)));
    // serialization always emits `kind`
    assert_eq!(
        serde_json::to_value(Part::text("hi")).unwrap(),
        json!({"kind": "text", "text": "hi"})
    );
    assert!(serde_json::from_value::<Part>(json!({"metadata": {}})).is_err());
    assert!(serde_json::from_value::<Part>(json!({"kind": "text"})).is_err());

    let bad = json!({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "done"}});
    let e = a2a_types::strict::parse_value::<StreamResult>(bad).unwrap_err();
    assert_eq!(e.path, "status.state");
    assert!(e.message.starts_with("unknown variant `done`"), "{e}");
    let bad_part = json!({"kind": "message", "messageId": "m", "role": "user",
        "parts": [{"kind": "text", "text": "a"}, {"kind": "data", "data": 3}]});
    let e = a2a_types::strict::parse_value::<Message>(bad_part).unwrap_err();
    assert_eq!(e.path, "parts[1]");
    assert!(e.message.contains("must be a JSON object"), "{e}");
}

#[cfg(feature = "schema")]
#[test]
fn card_without_protocol_version_gets_the_j0_default() {
    let mut v: Value = serde_json::from_str(SPEC_CARD).unwrap();
    v.as_object_mut().unwrap().remove("protocolVersion");
    let card: AgentCard = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(card.protocol_version, "0.3.0");
    let shown: Vec<String> = validate::<AgentCard>(&v)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(shown, ["$: missing required member protocolVersion"]);
}
