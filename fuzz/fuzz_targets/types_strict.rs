//! `a2a-types` strict parsing of the top-level types of both versions, and the JSON-RPC
//! envelope: no input may panic, and an accepted value must serialize.
#![no_main]

use a2a_types::{envelope, jsonrpc, strict, v03, v1};
use libfuzzer_sys::fuzz_target;

fn all<T: serde::de::DeserializeOwned + serde::Serialize + schemars::JsonSchema>(
    data: &[u8],
    value: Option<&serde_json::Value>,
) {
    if let Ok(t) = strict::parse_slice::<T>(data) {
        serde_json::to_string(&t).expect("a parsed value serializes");
    }
    if let Some(v) = value {
        let _ = strict::validate::<T>(v);
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = envelope::parse_envelope(data);
    let _ = jsonrpc::parse_request(data);
    let _ = a2a_types::path::check_path(&String::from_utf8_lossy(data));
    // Strict validation walks the schema: run it on small values only.
    let value = (data.len() < 4096)
        .then(|| serde_json::from_slice::<serde_json::Value>(data).ok())
        .flatten();
    let value = value.as_ref();
    all::<v1::SendMessageRequest>(data, value);
    all::<v1::Message>(data, value);
    all::<v1::Task>(data, value);
    all::<v1::StreamResponse>(data, value);
    all::<v1::AgentCard>(data, value);
    all::<v03::MessageSendParams>(data, value);
    all::<v03::Message>(data, value);
    all::<v03::Task>(data, value);
    all::<v03::AgentCard>(data, value);
    all::<v03::rest::SendMessageRequest>(data, value);
});
