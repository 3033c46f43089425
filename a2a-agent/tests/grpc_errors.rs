//! gRPC bad input (issue 40): each case is raw protobuf sent to the agent's gRPC binding, and
//! the answer is INVALID_ARGUMENT with the field's path (a value no JSON can say, a wrong wire
//! type, a bad string, an unknown enum value) or NOT_FOUND (a long unknown id), never
//! INTERNAL; and the status stays small: no caller value over 256 bytes comes back, so a 100 KB
//! task id no longer pushes the trailers past HTTP/2's header limit (RESOURCE_EXHAUSTED).

use crate::common;

use common::grpc_raw::run;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_grpc_input_is_invalid_argument_or_not_found_with_small_trailers() {
    let cfg = a2a_agent::AgentConfig {
        grpc: true,
        ..open_config()
    };
    let s = echo(cfg).await;
    run(s.local_addr(), &[], &json!({})).await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_call_over_the_connection_cap_gets_a_grpc_status() {
    let cfg = a2a_agent::AgentConfig {
        grpc: true,
        max_connections: 1,
        ..open_config()
    };
    let s = echo(cfg).await;
    // The one connection allowed, held open after a request (a connection that has sent none
    // would be displaced by the newcomer).
    let (code, _, _held) =
        common::slow::get_keep(s.local_addr(), "/.well-known/agent-card.json").await;
    assert_eq!(code, 200);
    let body = common::grpc_raw::encode("lf.a2a.v1.GetTaskRequest", &json!({"id": "t"}));
    let out = common::grpc_raw::call(s.local_addr(), "GetTask", &[], body).await;
    assert_eq!(out.code, tonic::Code::Unavailable, "{out:?}");
    // The edge's own status (not one tonic guessed from an HTTP 503).
    assert!(out.message.contains("connection limit"), "{out:?}");
    assert_eq!(out.reason().as_deref(), Some("UNAVAILABLE"), "{out:?}");
    s.shutdown().await;
}
