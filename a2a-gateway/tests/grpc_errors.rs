//! gRPC bad input through the gateway (issue 40): the agent's table of raw protobuf requests
//! (`common::grpc_raw`), each naming the echo agent as its `tenant`: INVALID_ARGUMENT with the
//! field's path or NOT_FOUND, never INTERNAL, and no caller value over 256 bytes in the status.
//! Also the gateway's own gRPC refusals: a long unknown tenant, a long bad key.

use crate::common;

use a2a_gateway::errors::Version;
use common::grpc_raw::{call, encode, run};
use common::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_grpc_input_is_invalid_argument_or_not_found_with_small_trailers() {
    let env = env_with(Version::V1, |c| c.serve_grpc = true).await;
    let auth = vec![("authorization", format!("Bearer {}", env.key))];
    let addr = env.gw.local_addr();
    run(addr, &auth, &json!({"tenant": "echo"})).await;

    // The gateway's own refusals quote no long caller value either.
    let long = "x".repeat(100_000);
    let run_of = "x".repeat(257);
    let get = |tenant: &str| {
        encode(
            "lf.a2a.v1.GetTaskRequest",
            &json!({"tenant": tenant, "id": "t"}),
        )
    };
    let auth_ref: Vec<(&'static str, &str)> = auth.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = call(addr, "GetTask", &auth_ref, get(&long)).await;
    assert_eq!(out.code, Code::NotFound, "{out:?}");
    assert!(
        out.trailer_bytes < 4096 && !out.message.contains(&run_of),
        "{out:?}"
    );
    let bad_key = format!("Bearer a2agw_{}", "k".repeat(8_000));
    let out = call(addr, "GetTask", &[("authorization", &bad_key)], get("echo")).await;
    assert_eq!(out.code, Code::Unauthenticated, "{out:?}");
    assert!(out.trailer_bytes < 4096, "{out:?}");
    assert!(!out.message.contains(&"k".repeat(257)), "{out:?}");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_call_over_the_connection_cap_gets_a_grpc_status() {
    let env = env_with(Version::V1, |c| {
        c.serve_grpc = true;
        c.max_connections = 1;
    })
    .await;
    let addr = env.gw.local_addr();
    // The one connection allowed, held open after a request (a connection that has sent none
    // would be displaced by the newcomer).
    let mut held = tokio::net::TcpStream::connect(addr).await.unwrap();
    held.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = held.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    let key = format!("Bearer {}", env.key);
    let body = encode(
        "lf.a2a.v1.GetTaskRequest",
        &json!({"tenant": "echo", "id": "t"}),
    );
    let out = call(addr, "GetTask", &[("authorization", &key)], body).await;
    assert_eq!(out.code, Code::Unavailable, "{out:?}");
    // The edge's own status (not one tonic guessed from an HTTP 503).
    assert!(out.message.contains("connection limit"), "{out:?}");
    assert_eq!(out.reason().as_deref(), Some("A2A_OVERLOADED"), "{out:?}");
    env.stop().await;
}
