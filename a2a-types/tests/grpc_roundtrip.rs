//! The gRPC conversion (`a2a_types::grpc`, feature `grpc`) is lossless over the 1.0 JSON model
//! fixtures (`conformance/fixtures/model-v1`): typed value -> protobuf bytes -> typed value is
//! the identity, for every fixture that parses.

use a2a_types::grpc::{self, from_proto, to_proto};
use a2a_types::v1::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;

/// Parses `doc` as `T`, sends it through protobuf bytes of `lf.a2a.v1.{name}` and back.
/// Returns (before, after) as JSON values.
fn through_proto<T>(name: &str, doc: &Value) -> (Value, Value)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let full = if name == "Empty" {
        "google.protobuf.Empty".to_string()
    } else {
        format!("lf.a2a.v1.{name}")
    };
    let typed: T = serde_json::from_value(doc.clone()).expect("fixture parses");
    let bytes = to_proto(&full, &typed).unwrap_or_else(|e| panic!("{name}: {e}"));
    let back: T = from_proto(&full, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    (
        serde_json::to_value(&typed).expect("serializes"),
        serde_json::to_value(&back).expect("serializes"),
    )
}

fn round_trip(name: &str, doc: &Value) -> Option<(Value, Value)> {
    Some(match name {
        "AgentCard" => through_proto::<AgentCard>(name, doc),
        "Empty" => through_proto::<Value>(name, doc),
        "GetTaskPushNotificationConfigRequest" => {
            through_proto::<GetTaskPushNotificationConfigRequest>(name, doc)
        }
        "ListTaskPushNotificationConfigsResponse" => {
            through_proto::<ListTaskPushNotificationConfigsResponse>(name, doc)
        }
        "ListTasksRequest" => through_proto::<ListTasksRequest>(name, doc),
        "ListTasksResponse" => through_proto::<ListTasksResponse>(name, doc),
        "Message" => through_proto::<Message>(name, doc),
        "Part" => through_proto::<Part>(name, doc),
        "TaskPushNotificationConfig" => through_proto::<TaskPushNotificationConfig>(name, doc),
        "SecurityRequirement" => through_proto::<SecurityRequirement>(name, doc),
        "SendMessageRequest" => through_proto::<SendMessageRequest>(name, doc),
        "SendMessageResponse" => through_proto::<SendMessageResponse>(name, doc),
        "StreamResponse" => through_proto::<StreamResponse>(name, doc),
        "Task" => through_proto::<Task>(name, doc),
        "TaskStatus" => through_proto::<TaskStatus>(name, doc),
        _ => return None,
    })
}

/// Removes the members a2a-types keeps beyond the proto (unknown members of a card): they have
/// no protobuf field, so the gRPC binding cannot carry them.
fn without_unknown_members(card: &mut Value) {
    let desc = grpc::descriptor("lf.a2a.v1.AgentCard").expect("descriptor");
    if let Some(o) = card.as_object_mut() {
        o.retain(|k, _| desc.fields().any(|f| f.json_name() == k));
    }
}

/// Timestamps are compared as instants: protobuf holds seconds and nanos, not the text
/// (`10:30:00.000Z` reads back as `10:30:00Z`, the same instant).
fn instants(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if k == "timestamp" || k == "statusTimestampAfter" {
                    let t: a2a_types::timestamp::Timestamp =
                        serde_json::from_value(x.clone()).expect("timestamp");
                    *x = Value::from(t.unix_millis().to_string());
                } else {
                    instants(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(instants),
        _ => {}
    }
}

/// proto3 scalars without presence: an explicit default (`"required": false` of an extension,
/// `"returnImmediately": false`) reads back as absent, which means the same. Drops those from
/// the expected value.
fn without_explicit_defaults(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.retain(|k, x| {
                !((k == "required" || k == "returnImmediately") && *x == Value::Bool(false))
            });
            o.values_mut().for_each(without_explicit_defaults);
        }
        Value::Array(a) => a.iter_mut().for_each(without_explicit_defaults),
        _ => {}
    }
}

#[test]
fn every_v1_model_fixture_round_trips_through_protobuf() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/fixtures/model-v1");
    let mut checked = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let fx: Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
        let file = path
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or("")
            .to_string();
        if fx["expect"]["parse"] != "ok" {
            continue;
        }
        let name = fx["type"].as_str().expect("type");
        let Some((before, after)) = round_trip(name, &fx["document"]) else {
            panic!("{file}: type {name} has no case in this test");
        };
        let mut before = before;
        without_explicit_defaults(&mut before);
        if file == "agent-card-unknown-members-kept.json" {
            // The fixture keeps `x-vendor` and 0.3 members in JSON; protobuf has no field for them.
            assert!(before.get("x-vendor").is_some() && after.get("x-vendor").is_none());
            without_unknown_members(&mut before);
        }
        let mut after = after;
        instants(&mut before);
        instants(&mut after);
        assert_eq!(before, after, "{file}: not lossless through protobuf");
        checked.push(file);
    }
    assert!(checked.len() >= 15, "only {checked:?}");
}

#[test]
fn oneof_parts_and_struct_metadata_use_the_proto_fields() {
    // The protobuf of a data part holds a google.protobuf.Value; decoding bytes built from JSON
    // yields the same JSON (numbers, nested arrays, null).
    let part = serde_json::json!({"data": {"a": [1, 2.5, null, "x"], "b": {"c": true}},
        "metadata": {"k": "v"}});
    let bytes = grpc::encode_json("lf.a2a.v1.Part", &part).expect("encode");
    assert_eq!(
        grpc::decode_json("lf.a2a.v1.Part", &bytes).expect("decode"),
        part
    );
    // A part with two contents is not a valid oneof.
    let two = serde_json::json!({"text": "a", "url": "https://x"});
    assert!(grpc::encode_json("lf.a2a.v1.Part", &two).is_err());
    // Enums by name, timestamps as RFC 3339.
    let status = serde_json::json!({"state": "TASK_STATE_WORKING",
        "timestamp": "2025-10-28T10:30:00.500Z"});
    let bytes = grpc::encode_json("lf.a2a.v1.TaskStatus", &status).expect("encode");
    let back = grpc::decode_json("lf.a2a.v1.TaskStatus", &bytes).expect("decode");
    assert_eq!(back["state"], "TASK_STATE_WORKING");
    let t: TaskStatus = serde_json::from_value(back).expect("typed");
    assert_eq!(
        t.timestamp,
        serde_json::from_value(status["timestamp"].clone()).ok()
    );
}
