//! The gateway's request parsers: the JSON-RPC edge (path bytes, envelope, method/path
//! operation, strict params in the caller's version) and the HTTP+JSON body parser.
#![no_main]

use a2a_gateway::errors::Version;
use a2a_gateway::ops::GatewayOp;
use libfuzzer_sys::fuzz_target;

const PATHS: &[&str] = &[
    "/a2a/agent",
    "/a2a/agent/message:send",
    "/a2a/agent/message:stream",
    "/a2a/agent/tasks:get",
    "/a2a/agent/%zz",
];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let version = if sel & 1 == 0 { Version::V03 } else { Version::V10 };
    let path = PATHS[usize::from(sel >> 1) % PATHS.len()];
    match a2a_gateway::wire::parse_rpc_bytes(path, body, version, 100_000) {
        Ok(r) => assert!(!r.op.name_03().is_empty()),
        Err((id, refusal)) => {
            let text = refusal.jsonrpc_text(version, &id, "t");
            serde_json::from_str::<serde_json::Value>(&text).expect("errors are JSON");
        }
    }
    let _ = a2a_gateway::wire::parse_rest_body(Some(body), &serde_json::json!({"id": "t"}), 100_000);
});
