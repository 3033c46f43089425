//! Tests of ids, envelopes, request parsing and method names.

use super::*;
use serde_json::{Value, json};

use crate::version::ProtocolVersion;

#[test]
fn ids() {
    for v in [json!("a"), json!(1), json!(1.5), json!(null)] {
        let id: Id = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&id).unwrap(), v);
    }
    assert!(serde_json::from_value::<Id>(json!([1])).is_err());
}

#[test]
fn request_null_id_vs_absent() {
    let r: JsonRpcRequest =
        serde_json::from_value(json!({"jsonrpc":"2.0","id":null,"method":"GetTask"})).unwrap();
    assert_eq!(r.id, Some(Id::Null));
    let r: JsonRpcRequest =
        serde_json::from_value(json!({"jsonrpc":"2.0","method":"GetTask"})).unwrap();
    assert!(r.is_notification());
}

#[test]
fn response_forms() {
    let ok = JsonRpcResponse::success(Id::num(1), json!(null));
    let v = serde_json::to_value(&ok).unwrap();
    assert_eq!(v, json!({"jsonrpc":"2.0","id":1,"result":null}));
    let back: JsonRpcResponse = serde_json::from_value(v).unwrap();
    assert_eq!(back, ok);
    let err = JsonRpcResponse::<Value>::error(
        Id::str("x"),
        JsonRpcError {
            code: -32001,
            message: "Task not found".into(),
            data: None,
        },
    );
    let v = serde_json::to_value(&err).unwrap();
    assert_eq!(
        v,
        json!({"jsonrpc":"2.0","id":"x","error":{"code":-32001,"message":"Task not found"}})
    );
    assert!(serde_json::from_value::<JsonRpcResponse>(json!({"jsonrpc":"2.0","id":1})).is_err());
    assert!(
        serde_json::from_value::<JsonRpcResponse>(
            json!({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}})
        )
        .is_err()
    );
}

#[test]
fn parse_request_classifies() {
    assert_eq!(parse_request(b"{").unwrap_err().code, -32700);
    let e = parse_request(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#).unwrap_err();
    assert_eq!((e.code, e.id), (-32600, Id::num(7)));
    assert_eq!(parse_request(br#"[1]"#).unwrap_err().code, -32600);
    assert_eq!(
        parse_request(br#"{"jsonrpc":"2.0","id":1}"#)
            .unwrap_err()
            .code,
        -32600
    );
    assert_eq!(
        parse_request(br#"{"jsonrpc":"2.0","id":{},"method":"a"}"#)
            .unwrap_err()
            .code,
        -32600
    );
    assert_eq!(
        parse_request(br#"{"jsonrpc":"2.0","id":1,"method":"a","params":3}"#)
            .unwrap_err()
            .code,
        -32600
    );
    let r = parse_request(br#"{"jsonrpc":"2.0","id":"q","method":"GetTask","params":{"id":"t"}}"#)
        .unwrap();
    assert_eq!(r.method, "GetTask");
    let p: crate::v1::GetTaskRequest = r.params_as().unwrap();
    assert_eq!(p.id, "t");
}

#[test]
fn methods() {
    for m in V1Method::ALL {
        assert_eq!(V1Method::from_name(m.as_str()), Some(*m));
        assert_eq!(
            Method::parse(m.as_str()).unwrap().version(),
            ProtocolVersion::V1_0
        );
    }
    for m in V03Method::ALL {
        assert_eq!(m.to_v1().to_v03(), Some(*m));
        assert_eq!(
            Method::parse(m.as_str()).unwrap().version(),
            ProtocolVersion::V0_3
        );
    }
    assert!(V1Method::SendStreamingMessage.is_streaming());
    assert!(V03Method::TasksResubscribe.is_streaming());
    assert!(!V1Method::GetTask.is_streaming());
    assert_eq!(V1Method::ListTasks.to_v03(), None);
    assert!(Method::parse("tasks/list").is_none());
}
