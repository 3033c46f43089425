//! No caller value over 256 bytes comes back in an error, on any binding (issue 40): long task
//! ids, method names, enum values, member names, `A2A-Version`, `Last-Event-ID` and query
//! values over JSON-RPC (both versions) and HTTP+JSON (both versions). gRPC is
//! `tests/grpc_errors.rs`.

use crate::common;

use common::long_probe::{probes, run};
use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_long_caller_value_comes_back_in_an_error() {
    let s = echo(open_config()).await;
    let long = "x".repeat(100_000);
    let path_long = "x".repeat(20_000);
    let base = s.url().trim_end_matches('/').to_owned();
    run(probes(&base, &base, &long, &path_long), None).await;
    s.shutdown().await;
}
