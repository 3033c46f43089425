//! Parser fuzzing with proptest: arbitrary JSON values (biased towards A2A member names and
//! enum spellings, and mutations of real fixture documents) and arbitrary bytes go through the
//! default parse and the strict validator of every registered type. Neither may panic, and a
//! document the default parse accepts must serialize to a fixed point (parse(serialize(x)) gives
//! the same serialization again).

use std::sync::OnceLock;

use conformance::fixture::{self, Case};
use conformance::registry::{self, Entry};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn entries() -> &'static [Entry] {
    static E: OnceLock<Vec<Entry>> = OnceLock::new();
    E.get_or_init(registry::entries)
}

/// Every model-fixture document: realistic starting points for mutation.
fn seeds() -> &'static [Value] {
    static S: OnceLock<Vec<Value>> = OnceLock::new();
    S.get_or_init(|| {
        fixture::load_all(&fixture::default_fixture_dir(), &[])
            .unwrap()
            .into_iter()
            .filter_map(|c| match c.case {
                Case::Model(m) => Some(m.document),
                Case::Wire(_) => None,
            })
            .collect()
    })
}

const KEYS: &[&str] = &[
    "kind",
    "text",
    "raw",
    "url",
    "data",
    "file",
    "bytes",
    "uri",
    "parts",
    "content",
    "message",
    "messageId",
    "role",
    "taskId",
    "contextId",
    "id",
    "status",
    "state",
    "timestamp",
    "final",
    "artifact",
    "artifacts",
    "artifactId",
    "history",
    "metadata",
    "task",
    "statusUpdate",
    "artifactUpdate",
    "configuration",
    "jsonrpc",
    "method",
    "params",
    "result",
    "error",
    "code",
    "name",
    "skills",
    "capabilities",
    "securitySchemes",
    "flows",
    "schemes",
    "list",
    "mediaType",
    "filename",
    "fileWithBytes",
    "append",
    "lastChunk",
    "pushNotificationConfig",
    "tasks",
];
const STRINGS: &[&str] = &[
    "text",
    "file",
    "data",
    "message",
    "task",
    "status-update",
    "artifact-update",
    "user",
    "ROLE_USER",
    "completed",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_CANCELLED",
    "2.0",
    "SendMessage",
    "message/send",
    "2025-04-02T16:59:25.331844",
    "2025-10-28T10:30:00Z",
    "aGk=",
    "@@",
    "",
    "\u{0}",
    "𝄞",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(STRINGS).prop_map(|s| Value::String(s.into())),
        ".{0,12}".prop_map(Value::String),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        prop::sample::select(KEYS).prop_map(String::from),
                        "[a-z]{1,6}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Replaces the `n`-th node (pre-order, modulo the node count) of `doc` by `with`.
fn mutate(doc: &mut Value, n: usize, with: Value) {
    fn count(v: &Value) -> usize {
        1 + match v {
            Value::Array(a) => a.iter().map(count).sum(),
            Value::Object(o) => o.values().map(count).sum(),
            _ => 0,
        }
    }
    fn walk(v: &mut Value, n: &mut usize, with: &mut Option<Value>) {
        if *n == 0 {
            if let Some(w) = with.take() {
                *v = w;
            }
            return;
        }
        *n -= 1;
        match v {
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, n, with)),
            Value::Object(o) => o.values_mut().for_each(|x| walk(x, n, with)),
            _ => {}
        }
    }
    let total = count(doc);
    let mut n = n % total;
    walk(doc, &mut n, &mut Some(with));
}

fn exercise(doc: &Value) {
    for e in entries() {
        let _ = (e.strict)(doc);
        if let Ok(out) = (e.round_trip)(doc) {
            let again = (e.round_trip)(&out).unwrap_or_else(|err| {
                panic!(
                    "{} {}: own output {out} does not parse: {err}",
                    e.dialect, e.name
                )
            });
            assert_eq!(
                again, out,
                "{} {}: serialization is not a fixed point for {doc}",
                e.dialect, e.name
            );
        }
    }
}

proptest! {
    // 128 cases per property by default (CI time); `PROPTEST_CASES=N` runs more.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(128),
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_json_never_panics(doc in json()) {
        exercise(&doc);
    }

    #[test]
    fn mutated_fixtures_never_panic(i in any::<usize>(), n in any::<usize>(), with in json()) {
        let seeds = seeds();
        let mut doc = seeds[i % seeds.len()].clone();
        mutate(&mut doc, n, with);
        exercise(&doc);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = a2a_types::jsonrpc::parse_request(&bytes);
        let _ = a2a_types::strict::parse_slice::<a2a_types::v1::SendMessageRequest>(&bytes);
        let _ = a2a_types::strict::parse_slice::<a2a_types::v1::AgentCard>(&bytes);
        let _ = a2a_types::strict::parse_slice::<a2a_types::v1::StreamResponse>(&bytes);
        let _ = a2a_types::strict::parse_slice::<a2a_types::v03::MessageSendParams>(&bytes);
        let _ = a2a_types::strict::parse_slice::<a2a_types::v03::StreamResult>(&bytes);
        let _ = a2a_types::strict::parse_slice::<a2a_types::v03::rest::SendMessageRequest>(&bytes);
        let _ = a2a_types::timestamp::Timestamp::parse(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn mutation_replaces_exactly_one_node() {
    let mut doc = serde_json::json!({"a": [1, 2], "b": {"c": 3}});
    mutate(&mut doc, 2, Value::Null);
    assert_eq!(doc, serde_json::json!({"a": [null, 2], "b": {"c": 3}}));
}
