//! The agent's request parsers: JSON-RPC (envelope, version, 0.3 translation) and HTTP+JSON
//! (path bytes, route, send body). The first byte picks the version and the path length.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let version = match sel % 3 {
        0 => None,
        1 => Some("0.3"),
        _ => Some("1.0"),
    };
    if let Err(text) = a2a_agent::parse::jsonrpc(rest, version) {
        serde_json::from_str::<serde_json::Value>(&text).expect("errors are JSON");
    }
    let cut = usize::from(sel / 3).min(rest.len());
    let (path, body) = rest.split_at(cut);
    let path = format!("/{}", String::from_utf8_lossy(path));
    let _ = a2a_agent::parse::rest(&path, version, body);
});
