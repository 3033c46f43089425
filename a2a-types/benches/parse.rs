//! Parse and serialize throughput of representative A2A 1.0 documents, with `serde_json::Value`
//! on the same bytes as the baseline (run: `cargo bench -p a2ars-types --bench parse`).
//!
//! Documents: a JSON-RPC `SendMessage` request (text + file + data parts, configuration, metadata),
//! a JSON-RPC `ListTasks` response with 50 tasks (status, 2-message history, an artifact each), and a
//! large agent card (40 skills, every security scheme kind, several interfaces and extensions).
//! Each group has: `typed` (`serde_json::from_slice::<T>`), `typed_with_paths`
//! (`a2a_types::strict::parse_slice`, the default parse that reports the JSON path of a failure),
//! `value` (`serde_json::from_slice::<Value>`), `serialize_typed`, `serialize_value`, and `strict`
//! (the strict validator on the parsed `Value`). Throughput is reported in bytes/s of the document.

use std::sync::OnceLock;

use a2a_types::jsonrpc::{JsonRpcRequest, JsonRpcResponse};
use a2a_types::{strict, v1};
use divan::Bencher;
use divan::counter::BytesCount;
use serde_json::{Value, json};

fn main() {
    divan::main();
}

fn message(i: usize, role: &str) -> Value {
    json!({
        "messageId": format!("9229e770-767c-417b-a0b0-{i:012}"),
        "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4",
        "taskId": format!("363422be-b0f9-4692-a24d-{i:012}"),
        "role": role,
        "parts": [
            {"text": "Please summarize the attached quarterly report and list the three largest risks."},
            {"data": {"region": "EMEA", "quarter": 3, "tags": ["finance", "risk"]}, "mediaType": "application/json"}
        ],
        "metadata": {"client": "bench", "seq": i}
    })
}

fn send_message_doc() -> Vec<u8> {
    let mut msg = message(1, "ROLE_USER");
    msg["parts"].as_array_mut().unwrap().push(json!({
        "raw": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "filename": "pixel.png",
        "mediaType": "image/png"
    }));
    msg["parts"].as_array_mut().unwrap().push(json!({
        "url": "https://files.example.com/reports/q3.pdf", "mediaType": "application/pdf", "filename": "q3.pdf"
    }));
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": "req-0001",
        "method": "SendMessage",
        "params": {
            "message": msg,
            "configuration": {
                "acceptedOutputModes": ["text/plain", "application/json"],
                "historyLength": 10,
                "returnImmediately": false,
                "taskPushNotificationConfig": {
                    "url": "https://client.example.com/a2a/hook",
                    "token": "opaque-client-token",
                    "authentication": {"scheme": "Bearer", "credentials": "secret"}
                }
            },
            "metadata": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
        }
    }))
    .unwrap()
}

fn list_tasks_doc() -> Vec<u8> {
    let tasks: Vec<Value> = (0..50)
        .map(|i| {
            json!({
                "id": format!("363422be-b0f9-4692-a24d-{i:012}"),
                "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4",
                "status": {
                    "state": "TASK_STATE_COMPLETED",
                    "timestamp": "2025-10-28T10:30:00.000Z",
                    "message": {"messageId": format!("m-{i}"), "role": "ROLE_AGENT", "parts": [{"text": "Done."}]}
                },
                "history": [message(2 * i, "ROLE_USER"), message(2 * i + 1, "ROLE_AGENT")],
                "artifacts": [{
                    "artifactId": format!("9b6934dd-37e3-4eb1-8766-{i:012}"),
                    "name": "summary.md",
                    "parts": [{"text": "## Summary\nRevenue grew 4% while costs fell; the largest risks are FX, supply and churn."}]
                }],
                "metadata": {"priority": i % 3}
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"tasks": tasks, "nextPageToken": "eyJvZmZzZXQiOjUwfQ", "pageSize": 50, "totalSize": 1234}
    }))
    .unwrap()
}

fn card_doc() -> Vec<u8> {
    let skills: Vec<Value> = (0..40)
        .map(|i| {
            json!({
                "id": format!("skill-{i}"),
                "name": format!("Skill number {i}"),
                "description": "Plans routes, estimates travel times with live traffic and renders custom maps with points of interest.",
                "tags": ["maps", "routing", "traffic", "geo"],
                "examples": ["Plan a route from Paris to Lyon avoiding tolls", "How long to the airport at 5pm?"],
                "inputModes": ["text/plain", "application/json"],
                "outputModes": ["application/json", "image/png"],
                "securityRequirements": [{"schemes": {"oauth": {"list": ["maps.read"]}}}]
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "name": "GeoSpatial Route Planner Agent",
        "description": "Provides advanced route planning, traffic analysis, and custom map generation services.",
        "version": "1.2.0",
        "supportedInterfaces": [
            {"url": "https://geo.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "https://geo.example.com/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "https://geo.example.com/a2a/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "https://geo.example.com/a2a/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
        ],
        "provider": {"organization": "Example Geo Services Inc.", "url": "https://www.examplegeoservices.com"},
        "iconUrl": "https://georoute-agent.example.com/icon.png",
        "documentationUrl": "https://docs.examplegeoservices.com/georoute-agent/api",
        "capabilities": {
            "streaming": true, "pushNotifications": true, "extendedAgentCard": true,
            "extensions": [
                {"uri": "https://example.com/ext/geo/v1", "description": "Geolocation", "required": false, "params": {"precision": 5}},
                {"uri": "https://example.com/ext/billing/v2", "description": "Billing", "required": true}
            ]
        },
        "securitySchemes": {
            "apikey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "oauth": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
                "authorizationUrl": "https://auth.example.com/authorize", "tokenUrl": "https://auth.example.com/token",
                "scopes": {"maps.read": "Read maps", "maps.write": "Edit maps"}, "pkceRequired": true}}}},
            "device": {"oauth2SecurityScheme": {"flows": {"deviceCode": {
                "deviceAuthorizationUrl": "https://auth.example.com/device", "tokenUrl": "https://auth.example.com/token",
                "scopes": {"maps.read": "Read maps"}}}}},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://accounts.example.com/.well-known/openid-configuration"}},
            "mtls": {"mtlsSecurityScheme": {"description": "Client certificates"}}
        },
        "securityRequirements": [{"schemes": {"oauth": {"list": ["maps.read"]}}}, {"schemes": {"apikey": {}, "mtls": {}}}],
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["application/json", "image/png"],
        "skills": skills,
        "signatures": [{"protected": "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJrZXktMSJ9", "signature": "QFdkNLNszlGj3z3u0YQGt_T9LixY3qtdQpZmsTdDHDe3fXV9y9-B3m2-XgCpzuhiLt8E0tV6HXoZKHv4GtHgKQ"}]
    }))
    .unwrap()
}

macro_rules! group {
    ($module:ident, $doc:expr, $ty:ty, $strict:expr) => {
        mod $module {
            use super::*;

            fn doc() -> &'static [u8] {
                static D: OnceLock<Vec<u8>> = OnceLock::new();
                D.get_or_init(|| {
                    let d = $doc;
                    // The typed parse must round-trip the document, or the comparison is unfair.
                    let t: $ty = serde_json::from_slice(&d).unwrap();
                    let v: Value = serde_json::from_slice(&d).unwrap();
                    assert_eq!(
                        serde_json::to_value(&t).unwrap(),
                        v,
                        "document does not round-trip"
                    );
                    d
                })
            }

            #[divan::bench]
            fn typed(b: Bencher) {
                let d = doc();
                b.counter(BytesCount::of_slice(d))
                    .bench(|| serde_json::from_slice::<$ty>(divan::black_box(d)).unwrap());
            }

            #[divan::bench]
            fn typed_with_paths(b: Bencher) {
                let d = doc();
                b.counter(BytesCount::of_slice(d))
                    .bench(|| strict::parse_slice::<$ty>(divan::black_box(d)).unwrap());
            }

            #[divan::bench]
            fn value(b: Bencher) {
                let d = doc();
                b.counter(BytesCount::of_slice(d))
                    .bench(|| serde_json::from_slice::<Value>(divan::black_box(d)).unwrap());
            }

            #[divan::bench]
            fn serialize_typed(b: Bencher) {
                let d = doc();
                let t: $ty = serde_json::from_slice(d).unwrap();
                b.counter(BytesCount::of_slice(d))
                    .bench(|| serde_json::to_vec(divan::black_box(&t)).unwrap());
            }

            #[divan::bench]
            fn serialize_value(b: Bencher) {
                let d = doc();
                let v: Value = serde_json::from_slice(d).unwrap();
                b.counter(BytesCount::of_slice(d))
                    .bench(|| serde_json::to_vec(divan::black_box(&v)).unwrap());
            }

            #[divan::bench]
            fn strict(b: Bencher) {
                let d = doc();
                let v: Value = serde_json::from_slice(d).unwrap();
                let check: fn(&Value) -> usize = $strict;
                assert_eq!(check(&v), 0, "the bench document must be strictly valid");
                b.counter(BytesCount::of_slice(d))
                    .bench(|| check(divan::black_box(&v)));
            }
        }
    };
}

group!(
    send_message_request,
    send_message_doc(),
    JsonRpcRequest<v1::SendMessageRequest>,
    |v| strict::validate_jsonrpc_request(v, Some(a2a_types::version::ProtocolVersion::V1_0), None)
        .len()
);
group!(
    list_tasks_response_50,
    list_tasks_doc(),
    JsonRpcResponse<v1::ListTasksResponse>,
    |v| strict::validate::<v1::ListTasksResponse>(&v["result"]).len()
);
group!(agent_card_large, card_doc(), v1::AgentCard, |v| {
    strict::validate::<v1::AgentCard>(v).len()
});
