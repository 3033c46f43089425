use super::*;
use crate::jsonrpc::{Method, V1Method};
use crate::v1;
use crate::version::ProtocolVersion;
use serde_json::{Value, json};

fn shown(v: &[Violation]) -> Vec<String> {
    v.iter().map(ToString::to_string).collect()
}

#[test]
fn parse_reports_paths() {
    let e = parse::<v1::SendMessageRequest>(
        r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a"},{"text":1}]}}"#,
    )
    .unwrap_err();
    assert_eq!(e.path, "message.parts[1].text");
    let e = parse::<v1::Task>(r#"{"id":"t","status":{"state":"DONE"}}"#).unwrap_err();
    assert_eq!(e.path, "status.state");
    assert!(e.message.contains("DONE"), "{e}");
    let e = parse::<v1::Task>("{").unwrap_err();
    assert!(e.is_syntax());
    assert!(parse::<v1::Task>(r#"{"id":"t","status":{"state":3}} x"#).is_err());
}

#[test]
fn strict_clean_document_has_no_violations() {
    let doc = json!({
        "message": {"messageId": "m1", "role": "ROLE_USER", "contextId": "c",
            "parts": [{"text": "hi", "metadata": {"any": {"thing": 1}}},
                      {"raw": "aGk=", "filename": "a.txt", "mediaType": "text/plain"},
                      {"url": "https://x"}, {"data": [1, 2]}, {"data": null}],
            "metadata": {"free": true}},
        "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 3,
            "returnImmediately": false,
            "taskPushNotificationConfig": {"url": "https://hook", "authentication": {"scheme": "Bearer"}}},
        "metadata": {}
    });
    assert_eq!(
        shown(&validate::<v1::SendMessageRequest>(&doc)),
        Vec::<String>::new()
    );
}

#[test]
fn strict_reports_everything() {
    let doc = json!({
        "message": {"role": "user", "parts": [], "extra": 1},
        "configuration": {"historyLength": "x"},
        "tenant": 5
    });
    let got = shown(&validate::<v1::SendMessageRequest>(&doc));
    assert_eq!(
        got,
        [
            "configuration.historyLength: wrong type: expected integer, found string",
            "message: unknown member extra",
            "message.parts: too few items: at least 1 required",
            "message.role: bad enum value \"user\"",
            "message: missing required member messageId",
            "tenant: wrong type: expected string, found integer",
        ]
    );
}

#[test]
fn oneof_wrappers() {
    let ok = json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}});
    assert!(validate::<v1::StreamResponse>(&ok).is_empty());
    let snake =
        json!({"status_update": {"task_id": "t", "context_id": "c", "status": {"state": 2}}});
    assert_eq!(
        shown(&validate::<v1::StreamResponse>(&snake)),
        Vec::<String>::new()
    );
    let bad = json!({"statusUpdat": {}});
    assert_eq!(
        shown(&validate::<v1::StreamResponse>(&bad)),
        [
            "$: unknown member statusUpdat",
            "$: missing one of task, message, statusUpdate, artifactUpdate"
        ]
    );
    let two = json!({"task": {"id": "t", "status": {"state": 1}}, "message": {"messageId": "m", "role": 1, "parts": [{"text": "x"}]}});
    let got = shown(&validate::<v1::StreamResponse>(&two));
    assert_eq!(
        got[0],
        "$: conflicting members task, message (only one allowed)"
    );
}

#[test]
fn part_oneof() {
    let two = json!({"text": "a", "url": "b"});
    assert_eq!(
        shown(&validate::<v1::Part>(&two)),
        ["$: conflicting members text, url (only one allowed)"]
    );
    let bad64 = json!({"raw": "not base64!"});
    let got = shown(&validate::<v1::Part>(&bad64));
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with("raw: bad base64"), "{got:?}");
}

#[test]
fn timestamps_must_be_utc_in_v1() {
    let doc = json!({"state": "TASK_STATE_WORKING", "timestamp": "2025-01-01T10:00:00+02:00"});
    let got = shown(&validate::<v1::TaskStatus>(&doc));
    assert_eq!(got.len(), 1);
    assert!(
        got[0].starts_with("timestamp: bad timestamp: must be RFC 3339 UTC"),
        "{got:?}"
    );
    assert!(validate_with::<v1::TaskStatus>(&doc, Options::JSON).is_empty());
    let doc = json!({"state": "TASK_STATE_WORKING", "timestamp": "soon"});
    assert_eq!(
        validate_with::<v1::TaskStatus>(&doc, Options::JSON).len(),
        1
    );
}

#[test]
fn card_extra_members_are_reported() {
    let doc = json!({"name": "a", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "x": 1}],
        "capabilities": {"streaming": true, "stateTransitionHistory": true},
        "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
        "securitySchemes": {"k": {"apiKeySecurityScheme": {"location": "header", "name": "X", "in": "header"}}},
        "protocolVersion": "0.3.0"});
    let got = shown(&validate::<v1::AgentCard>(&doc));
    assert_eq!(
        got,
        [
            "capabilities: unknown member stateTransitionHistory",
            "$: unknown member protocolVersion",
            "securitySchemes.k.apiKeySecurityScheme: unknown member in",
            "supportedInterfaces[0]: unknown member x",
        ]
    );
}

#[test]
fn requests_and_responses_share_the_envelope_rules() {
    let req = |v: Value| shown(&validate_jsonrpc_request(&v, None, None));
    let resp = |v: Value| {
        shown(&validate_jsonrpc_response(
            &v,
            Method::V1(V1Method::GetTask),
            None,
        ))
    };
    for out in [req(json!([1])), resp(json!("x"))] {
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(
            out[0].starts_with("$: ") && out[0].contains("object"),
            "{out:?}"
        );
    }
    let bad = json!({"jsonrpc": "1.0", "id": {"a": 1}, "x": 1});
    let r = req(bad.clone());
    let p = resp(bad);
    for want in [
        "$: unknown member x",
        "jsonrpc: bad enum value \"1.0\"",
        "id: wrong type: expected string or number or null, found object",
    ] {
        assert!(r.iter().any(|s| s == want), "request {want}: {r:?}");
        assert!(p.iter().any(|s| s == want), "response {want}: {p:?}");
    }
    let r = req(json!({"method": "GetTask", "params": {"id": "t"}}));
    assert!(
        r.contains(&"$: missing required member jsonrpc".to_owned()),
        "{r:?}"
    );
    assert!(
        r.contains(&"$: missing required member id".to_owned()),
        "{r:?}"
    );
}

#[test]
fn jsonrpc_responses() {
    let m = Method::V1(V1Method::GetTask);
    let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}});
    assert!(validate_jsonrpc_response(&ok, m, None).is_empty());
    let bad = json!({"jsonrpc": "2.0", "id": 1, "result": {"id": "t", "status": {"state": "working"}, "kind": "task"}});
    assert_eq!(
        shown(&validate_jsonrpc_response(&bad, m, None)),
        [
            "result: unknown member kind",
            "result.status.state: bad enum value \"working\""
        ]
    );
    let err = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "x", "data": {"taskId": "t"}}});
    assert_eq!(
        shown(&validate_jsonrpc_response(&err, m, None)),
        ["error.data: wrong type: expected array, found object"]
    );
    let m03 = Method::V03(crate::jsonrpc::V03Method::TasksGet);
    assert!(validate_jsonrpc_response(&err, m03, None).is_empty());
    let both =
        json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": ""}});
    assert_eq!(
        shown(&validate_jsonrpc_response(&both, m, None)),
        ["$: conflicting members result, error (only one allowed)"]
    );
    let del = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
    assert!(
        validate_jsonrpc_response(
            &del,
            Method::V1(V1Method::DeleteTaskPushNotificationConfig),
            None
        )
        .is_empty()
    );
    for mm in V1Method::ALL {
        assert!(
            !v1_result_validator(*mm).validate(&json!(5)).is_empty(),
            "{mm}"
        );
    }
}

#[test]
fn jsonrpc_dispatch() {
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}, {"image": "x"}]}}});
    let got = shown(&validate_jsonrpc_request(
        &req,
        Some(ProtocolVersion::V1_0),
        None,
    ));
    assert_eq!(
        got,
        [
            "params.message.parts[1]: unknown member image",
            "params.message.parts[1]: missing one of text, raw, url, data"
        ]
    );
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}, "x": 1});
    let got = shown(&validate_jsonrpc_request(&req, None, None));
    assert_eq!(
        got,
        ["$: unknown member x", "params: missing required member id"]
    );
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {}});
    let got = shown(&validate_jsonrpc_request(
        &req,
        Some(ProtocolVersion::V1_0),
        None,
    ));
    assert_eq!(got.len(), 1);
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "Nope"});
    assert_eq!(
        shown(&validate_jsonrpc_request(&req, None, None)),
        ["method: bad enum value \"Nope\""]
    );
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"});
    assert!(validate_jsonrpc_request(&req, None, None).is_empty());
}

#[test]
fn normalise_puts_proto_names_under_json_names() {
    let mut doc = json!({
        "message": {"message_id": "m1", "role": "ROLE_USER", "context_id": "c",
            "task_id": "t1", "parts": [{"text": "a"}, {"data": {"snake_key": 1}, "media_type": "x/y"}],
            "metadata": {"task_id": "kept"}},
        "configuration": {"history_length": 2, "accepted_output_modes": ["text/plain"],
            "task_push_notification_config": {"url": "https://h/x",
                "authentication": {"scheme": "Bearer"}, "task_id": "t1"}}
    });
    let v = Validator::for_type::<v1::SendMessageRequest>();
    assert_eq!(
        shown(&v.validate_normalize_at(&mut doc, "params")),
        Vec::<String>::new()
    );
    assert_eq!(
        doc,
        json!({
            "message": {"messageId": "m1", "role": "ROLE_USER", "contextId": "c",
                "taskId": "t1", "parts": [{"text": "a"}, {"data": {"snake_key": 1}, "mediaType": "x/y"}],
                "metadata": {"task_id": "kept"}},
            "configuration": {"historyLength": 2, "acceptedOutputModes": ["text/plain"],
                "taskPushNotificationConfig": {"url": "https://h/x",
                    "authentication": {"scheme": "Bearer"}, "taskId": "t1"}}
        })
    );
}

#[test]
fn normalise_refuses_both_spellings_and_leaves_bad_input_alone() {
    let mut doc = json!({"id": "mine", "task_id": "theirs"});
    let v = Validator::for_type::<v1::GetTaskRequest>();
    let before = doc.clone();
    // A snake_case name with no JSON member behind it is still unknown.
    assert!(v.validate_normalize_at(&mut doc, "").len() == 1);
    assert_eq!(doc, before);
    let mut doc = json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}],
        "taskId": "mine", "task_id": "theirs"}});
    let v = Validator::for_type::<v1::SendMessageRequest>();
    assert_eq!(
        shown(&v.validate_normalize_at(&mut doc, "params")),
        ["params.message: conflicting members taskId, task_id (only one allowed)"]
    );
    assert_eq!(doc["message"]["task_id"], "theirs");
    // A plain validation reports it too.
    assert_eq!(v.validate_at(&doc, "params").len(), 1);
}
