//! Unit tests of the extraction and classification of the specification examples.

use super::classify::t;
use super::*;
use serde_json::json;

#[test]
fn extracts_every_json_block_of_both_specs() {
    let ex = all_examples();
    let blocks = |v: &str| {
        let mut b: Vec<usize> = ex
            .iter()
            .filter(|e| e.spec == v && e.http.is_none())
            .map(|e| e.block)
            .collect();
        b.dedup();
        b.len()
    };
    // Counted with `grep -c '^\s*```json'` on the two files.
    assert_eq!(blocks("1.0"), 28);
    assert_eq!(blocks("0.3"), 19);
    // The SSE block of S0 §9.3 is split into its five events.
    assert_eq!(
        ex.iter()
            .filter(|e| e.spec == "0.3" && e.block == 8 && e.http.is_none())
            .count(),
        5
    );
    // HTTP blocks with a body are examples too, with their request or status line.
    assert!(
        ex.iter()
            .any(|e| e.http.as_deref() == Some("POST /message:send HTTP/1.1"))
    );
}

#[test]
fn classifies_requests_by_method_and_results_by_shape() {
    let req = json!({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}});
    assert_eq!(
        classify("1.0", &req),
        Class::Typed(vec![
            t("", "v1", "JsonRpcRequest"),
            t("/params", "v1", "GetTaskRequest")
        ])
    );
    let resp = json!({"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"completed"},"kind":"task"}});
    assert_eq!(
        classify("0.3", &resp),
        Class::Typed(vec![
            t("", "v03", "JsonRpcResponse"),
            t("/result", "v03", "Task")
        ])
    );
    assert_eq!(
        classify("1.0", &json!({"text":"hi"})),
        Class::Typed(vec![t("", "v1", "Part")])
    );
    assert!(matches!(
        classify("1.0", &json!({"foo": 1})),
        Class::Unclassifiable(_)
    ));
}
