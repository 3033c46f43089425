//! Tests of the error table and of each wire form, both ways.

use super::*;

#[test]
fn table() {
    let k = ErrorKind::TaskNotFound;
    assert_eq!(
        (k.code(), k.http_status(), k.grpc_status(), k.reason()),
        (-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND")
    );
    assert_eq!(
        ErrorKind::ExtendedAgentCardNotConfigured.name_v03(),
        Some("AuthenticatedExtendedCardNotConfiguredError")
    );
    assert_eq!(ErrorKind::VersionNotSupported.name_v03(), None);
    assert_eq!(ErrorKind::InvalidAgentResponse.http_status(), 500);
    assert_eq!(
        ErrorKind::ContentTypeNotSupported.grpc_status(),
        "INVALID_ARGUMENT"
    );
    for k in ErrorKind::ALL {
        assert_eq!(ErrorKind::from_reason(k.reason()), Some(*k));
        if k.code() != -32000 {
            assert_eq!(ErrorKind::from_code(k.code()), *k);
        }
    }
}

#[test]
fn legacy_reasons_are_read_never_written() {
    for (legacy, kind) in LEGACY_REASONS {
        assert_eq!(ErrorKind::from_reason(legacy), Some(*kind));
        assert_eq!(ErrorKind::from_reason(kind.reason()), Some(*kind));
        assert_ne!(kind.reason(), *legacy);
    }
    assert_eq!(ErrorKind::JsonParse.reason(), "JSON_PARSE");
    assert_eq!(ErrorKind::Internal.reason(), "INTERNAL");
    // A peer's legacy reason is read; the error is written back in the spec spelling.
    let j = JsonRpcError {
        code: -32099,
        message: "x".into(),
        data: Some(
            json!([{"@type": ERROR_INFO_TYPE, "reason": "INTERNAL_ERROR",
                           "domain": A2A_ERROR_DOMAIN}]),
        ),
    };
    let e = A2aError::from_jsonrpc(&j);
    assert_eq!(e.kind, ErrorKind::Internal);
    assert_eq!(e.error_info().reason, "INTERNAL");
}

#[test]
fn v1_jsonrpc_form_round_trips() {
    let e = A2aError::task_not_found("t1");
    let j = e.to_jsonrpc_v1();
    assert_eq!(
        serde_json::to_value(&j).unwrap(),
        json!({"code":-32001,"message":"Task not found","data":[{"@type":ERROR_INFO_TYPE,"reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}]})
    );
    assert_eq!(A2aError::from_jsonrpc(&j), e);
}

#[test]
fn rest_body_round_trips() {
    let e = A2aError::invalid_params("bad")
        .with_field_violation("pageSize", "Must be between 1 and 100 inclusive");
    let b = serde_json::to_value(e.to_rest_body()).unwrap();
    assert_eq!(b["error"]["code"], 400);
    assert_eq!(b["error"]["status"], "INVALID_ARGUMENT");
    assert_eq!(
        b["error"]["details"][1]["fieldViolations"][0]["field"],
        "pageSize"
    );
    assert_eq!(A2aError::from_rest_body(&b, 400), e);
    // Several errors share 400: the reason decides.
    let e = A2aError::of(ErrorKind::VersionNotSupported);
    let b = serde_json::to_value(e.to_rest_body()).unwrap();
    assert_eq!(
        A2aError::from_rest_body(&b, 400).kind,
        ErrorKind::VersionNotSupported
    );
}

#[test]
fn v03_form() {
    let e = A2aError::task_not_found("123");
    let j = e.to_jsonrpc_v03();
    assert_eq!(j.data, Some(json!({"taskId":"123"})));
    let back = A2aError::from_jsonrpc(&j);
    assert_eq!(back.kind, ErrorKind::TaskNotFound);
    assert_eq!(back.metadata.get("taskId").map(String::as_str), Some("123"));
    assert_eq!(
        A2aError::of(ErrorKind::MethodNotFound)
            .to_jsonrpc_v03()
            .data,
        None
    );
}

#[test]
fn bare_v03_rest_bodies() {
    let e = A2aError::from_rest_body(&json!({"message":"Task not found"}), 404);
    assert_eq!(e.kind, ErrorKind::TaskNotFound);
    let e = A2aError::from_rest_body(&json!({"code":-32002,"message":"x","data":{"a":1}}), 409);
    assert_eq!(e.kind, ErrorKind::TaskNotCancelable);
    assert_eq!(e.data_v03, Some(json!({"a":1})));
}
