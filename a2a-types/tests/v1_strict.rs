//! Strict validator table for A2A 1.0 documents: each bad document with every expected
//! violation (path and reason), plus JSON-RPC request dispatch.

use a2a_types::jsonrpc::V1Method;
use a2a_types::strict::{self, Violation};
use a2a_types::v1::*;
use a2a_types::version::ProtocolVersion;
use serde_json::{Value, json};

fn shown(v: &[Violation]) -> Vec<String> {
    v.iter().map(ToString::to_string).collect()
}

fn msg() -> Value {
    json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]})
}

fn task() -> Value {
    json!({"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}})
}

fn card() -> Value {
    json!({
        "name": "Agent", "description": "d", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]
    })
}

fn with(mut base: Value, pointer: &str, v: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let target = if parent.is_empty() {
        &mut base
    } else {
        base.pointer_mut(parent).unwrap()
    };
    match target {
        Value::Object(o) => {
            if v.is_null() && key.starts_with('-') {
                o.remove(&key[1..]);
            } else {
                o.insert(key.to_owned(), v);
            }
        }
        Value::Array(a) => a[key.parse::<usize>().unwrap()] = v,
        _ => panic!("bad pointer"),
    }
    base
}

fn without(base: Value, pointer: &str) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    with(base, &format!("{parent}/-{key}"), Value::Null)
}

type Check = fn(&Value) -> Vec<Violation>;

/// The validator without the per-type compiled facts (a schema given as JSON): must report
/// exactly what the compiled one does.
fn uncompiled<T: schemars::JsonSchema>(v: &Value) -> Vec<Violation> {
    strict::Validator::from_schema((*strict::schema_of::<T>()).clone()).validate(v)
}

fn table() -> Vec<(&'static str, Check, Value, Vec<&'static str>)> {
    table_of(true)
}

fn table_of(compiled: bool) -> Vec<(&'static str, Check, Value, Vec<&'static str>)> {
    macro_rules! ck {
        ($t:ty) => {
            if compiled {
                strict::validate::<$t> as Check
            } else {
                uncompiled::<$t> as Check
            }
        };
    }
    let m: Check = ck!(Message);
    let p: Check = ck!(Part);
    let t: Check = ck!(Task);
    let sr: Check = ck!(StreamResponse);
    let smr: Check = ck!(SendMessageRequest);
    let smresp: Check = ck!(SendMessageResponse);
    let c: Check = ck!(AgentCard);
    let pc: Check = ck!(TaskPushNotificationConfig);
    let lt: Check = ck!(ListTasksRequest);
    let ltr: Check = ck!(ListTasksResponse);
    let ss: Check = ck!(SecurityScheme);
    let ae: Check = ck!(TaskArtifactUpdateEvent);
    vec![
        // --- unknown members
        (
            "message unknown member",
            m,
            with(msg(), "/kind", json!("message")),
            vec!["$: unknown member kind"],
        ),
        (
            "part unknown member",
            p,
            json!({"text": "a", "image": "x"}),
            vec!["$: unknown member image"],
        ),
        (
            "0.3 part shape",
            p,
            json!({"kind": "text", "text": "a"}),
            vec!["$: unknown member kind"],
        ),
        (
            "0.3 file part shape",
            p,
            json!({"kind": "file", "file": {"uri": "u"}}),
            vec![
                "$: unknown member file",
                "$: unknown member kind",
                "$: missing one of text, raw, url, data",
            ],
        ),
        (
            "task unknown member",
            t,
            with(task(), "/kind", json!("task")),
            vec!["$: unknown member kind"],
        ),
        (
            "status-update final removed",
            sr,
            json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": 3}, "final": true}}),
            vec!["statusUpdate: unknown member final"],
        ),
        (
            "0.3 capability",
            c,
            with(card(), "/capabilities/stateTransitionHistory", json!(true)),
            vec!["capabilities: unknown member stateTransitionHistory"],
        ),
        (
            "0.3 card url",
            c,
            with(card(), "/url", json!("https://a")),
            vec!["$: unknown member url"],
        ),
        (
            "0.3 security key",
            c,
            with(card(), "/security", json!([{"k": []}])),
            vec!["$: unknown member security"],
        ),
        (
            "apiKey 0.3 in",
            ss,
            json!({"apiKeySecurityScheme": {"in": "header", "name": "X"}}),
            vec![
                "apiKeySecurityScheme: unknown member in",
                "apiKeySecurityScheme: missing required member location",
            ],
        ),
        (
            "0.3 push nesting",
            pc,
            json!({"taskId": "t", "pushNotificationConfig": {"url": "u"}}),
            vec![
                "$: unknown member pushNotificationConfig",
                "$: missing required member url",
            ],
        ),
        (
            "skill 0.3 security",
            c,
            with(card(), "/skills/0/security", json!([])),
            vec!["skills[0]: unknown member security"],
        ),
        (
            "unknown member in a deep part",
            smr,
            json!({"message": with(msg(), "/parts/0/image", json!(1))}),
            vec!["message.parts[0]: unknown member image"],
        ),
        (
            "ListTasks unknown filter",
            lt,
            json!({"state": "TASK_STATE_WORKING"}),
            vec!["$: unknown member state"],
        ),
        // --- missing REQUIRED
        (
            "message missing messageId",
            m,
            without(msg(), "/messageId"),
            vec!["$: missing required member messageId"],
        ),
        (
            "message missing role and parts",
            m,
            json!({"messageId": "m"}),
            vec![
                "$: missing required member role",
                "$: missing required member parts",
            ],
        ),
        (
            "task missing status",
            t,
            json!({"id": "t"}),
            vec!["$: missing required member status"],
        ),
        (
            "status missing state",
            t,
            json!({"id": "t", "status": {}}),
            vec!["status: missing required member state"],
        ),
        (
            "send missing message",
            smr,
            json!({"configuration": {}}),
            vec!["$: missing required member message"],
        ),
        (
            "card missing name",
            c,
            without(card(), "/name"),
            vec!["$: missing required member name"],
        ),
        (
            "interface missing protocolVersion",
            c,
            without(card(), "/supportedInterfaces/0/protocolVersion"),
            vec!["supportedInterfaces[0]: missing required member protocolVersion"],
        ),
        (
            "skill missing tags",
            c,
            without(card(), "/skills/0/tags"),
            vec!["skills[0]: missing required member tags"],
        ),
        (
            "push config missing url",
            pc,
            json!({"taskId": "t"}),
            vec!["$: missing required member url"],
        ),
        (
            "auth missing scheme",
            pc,
            json!({"url": "u", "authentication": {"credentials": "x"}}),
            vec!["authentication: missing required member scheme"],
        ),
        (
            "ListTasks response missing nextPageToken",
            ltr,
            json!({"tasks": [], "pageSize": 1, "totalSize": 0}),
            vec!["$: missing required member nextPageToken"],
        ),
        (
            "artifact update missing artifact",
            ae,
            json!({"taskId": "t", "contextId": "c"}),
            vec!["$: missing required member artifact"],
        ),
        (
            "oauth flow missing tokenUrl",
            ss,
            json!({"oauth2SecurityScheme": {"flows": {"clientCredentials": {"scopes": {}}}}}),
            vec!["oauth2SecurityScheme.flows.clientCredentials: missing required member tokenUrl"],
        ),
        (
            "empty parts",
            m,
            with(msg(), "/parts", json!([])),
            vec!["parts: too few items: at least 1 required"],
        ),
        // --- bad enum values
        (
            "0.3 role",
            m,
            with(msg(), "/role", json!("user")),
            vec!["role: bad enum value \"user\""],
        ),
        (
            "0.3 state",
            t,
            with(task(), "/status/state", json!("completed")),
            vec!["status.state: bad enum value \"completed\""],
        ),
        (
            "0.3 P0 spelling",
            t,
            with(task(), "/status/state", json!("TASK_STATE_CANCELLED")),
            vec!["status.state: bad enum value \"TASK_STATE_CANCELLED\""],
        ),
        (
            "enum number out of range",
            t,
            with(task(), "/status/state", json!(9)),
            vec!["status.state: bad enum value 9"],
        ),
        (
            "ListTasks status filter",
            lt,
            json!({"status": "WORKING"}),
            vec!["status: bad enum value \"WORKING\""],
        ),
        // --- oneof discriminators
        (
            "part without content",
            p,
            json!({"mediaType": "text/plain"}),
            vec!["$: missing one of text, raw, url, data"],
        ),
        (
            "part with two contents",
            p,
            json!({"text": "a", "data": {}}),
            vec!["$: conflicting members text, data (only one allowed)"],
        ),
        (
            "stream wrong wrapper",
            sr,
            json!({"status-update": {}}),
            vec![
                "$: unknown member status-update",
                "$: missing one of task, message, statusUpdate, artifactUpdate",
            ],
        ),
        (
            "bare 0.3 task as send result",
            smresp,
            task(),
            vec![
                "$: unknown member contextId",
                "$: unknown member id",
                "$: unknown member status",
                "$: missing one of task, message",
            ],
        ),
        (
            "security scheme 0.3 shape",
            ss,
            json!({"type": "http", "scheme": "bearer"}),
            vec![
                "$: unknown member scheme",
                "$: unknown member type",
                "$: missing one of apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme",
            ],
        ),
        (
            "oauth several flows",
            ss,
            json!({"oauth2SecurityScheme": {"flows": {
            "implicit": {}, "password": {}}}}),
            vec![
                "oauth2SecurityScheme.flows: conflicting members implicit, password (only one allowed)",
            ],
        ),
        // --- types and formats
        (
            "parts not a list",
            m,
            with(msg(), "/parts", json!({"text": "a"})),
            vec!["parts: wrong type: expected array, found object"],
        ),
        (
            "text not a string",
            p,
            json!({"text": 5}),
            vec!["text: wrong type: expected string, found integer"],
        ),
        (
            "bad base64",
            p,
            json!({"raw": "%%%"}),
            vec!["raw: bad base64: Invalid symbol 37, offset 0."],
        ),
        (
            "bad timestamp",
            t,
            with(task(), "/status/timestamp", json!("yesterday")),
            vec!["status.timestamp: bad timestamp: expected YYYY"],
        ),
        (
            "offset timestamp in 1.0",
            t,
            with(
                task(),
                "/status/timestamp",
                json!("2025-01-01T12:00:00+02:00"),
            ),
            vec![
                "status.timestamp: bad timestamp: must be RFC 3339 UTC with Z (e.g. 2025-01-01T10:00:00Z)",
            ],
        ),
        (
            "naive timestamp in 1.0",
            t,
            with(
                task(),
                "/status/timestamp",
                json!("2025-04-02T16:59:25.331844"),
            ),
            vec![
                "status.timestamp: bad timestamp: must be RFC 3339 UTC with Z (e.g. 2025-04-02T16:59:25.331844Z)",
            ],
        ),
        (
            "int32 overflow",
            lt,
            json!({"pageSize": 3_000_000_000u64}),
            vec!["pageSize: bad int32: 3000000000 is out of range"],
        ),
        (
            "non-integer page size",
            lt,
            json!({"pageSize": 1.5}),
            vec!["pageSize: wrong type: expected integer, found number"],
        ),
        (
            "metadata not an object",
            m,
            with(msg(), "/metadata", json!([1])),
            vec!["metadata: wrong type: expected object, found array"],
        ),
        (
            "bool as string",
            ae,
            json!({"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}, "append": "yes"}),
            vec!["append: wrong type: expected boolean, found string"],
        ),
        (
            "scopes map values",
            ss,
            json!({"oauth2SecurityScheme": {"flows": {"deviceCode": {
            "deviceAuthorizationUrl": "d", "tokenUrl": "t", "scopes": {"read": 1}}}}}),
            vec![
                "oauth2SecurityScheme.flows.deviceCode.scopes.read: wrong type: expected string, found integer",
            ],
        ),
        (
            "requirement list shape",
            c,
            with(
                card(),
                "/securityRequirements",
                json!([{"schemes": {"oauth": ["read"]}}]),
            ),
            vec!["securityRequirements[0].schemes.oauth: wrong type: expected object, found array"],
        ),
    ]
}

#[test]
fn bad_documents_report_every_violation() {
    let table = table();
    assert!(table.len() >= 40, "{}", table.len());
    let mut failures = Vec::new();
    for (name, check, doc, expected) in &table {
        let mut got = shown(&check(doc));
        got.sort();
        let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        want.sort();
        if got != want {
            failures.push(format!("{name}:\n  got  {got:?}\n  want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn compiled_and_uncompiled_schemas_report_the_same() {
    let (fast, slow) = (table_of(true), table_of(false));
    assert_eq!(fast.len(), slow.len());
    for ((name, f, doc, _), (_, s, _, _)) in fast.iter().zip(&slow) {
        assert_eq!(shown(&f(doc)), shown(&s(doc)), "{name}");
    }
    for doc in [msg(), task(), card()] {
        assert!(uncompiled::<Message>(&msg()).is_empty());
        assert_eq!(
            shown(&strict::validate::<StreamResponse>(&doc)),
            shown(&uncompiled::<StreamResponse>(&doc))
        );
    }
}

#[test]
fn good_documents_have_no_violations() {
    let docs: Vec<(Check, Value)> = vec![
        (strict::validate::<Message>, msg()),
        (strict::validate::<Task>, task()),
        (strict::validate::<AgentCard>, card()),
        (
            strict::validate::<Message>,
            json!({"message_id": "m", "role": 1, "parts": [{"text": "a", "media_type": "text/plain"}]}),
        ),
        (
            strict::validate::<SecurityScheme>,
            json!({"oauth2SecurityScheme": {"flows": {"authorizationCode": {
                "authorizationUrl": "a", "tokenUrl": "t", "scopes": {}, "pkceRequired": true}}}}),
        ),
        (
            strict::validate::<AgentCard>,
            with(
                card(),
                "/securityRequirements",
                json!([{"schemes": {"k": {}}}, {"schemes": {"o": {"list": ["r"]}}}]),
            ),
        ),
        (
            strict::validate::<ListTasksResponse>,
            json!({"tasks": [task()], "nextPageToken": "", "pageSize": 50, "totalSize": 1}),
        ),
        (strict::validate::<Empty>, json!({})),
        (
            strict::validate::<Message>,
            with(msg(), "/contextId", Value::Null),
        ),
    ];
    for (check, doc) in docs {
        assert_eq!(shown(&check(&doc)), Vec::<String>::new(), "{doc}");
    }
}

#[test]
fn jsonrpc_requests_are_validated_by_method() {
    let v1 = Some(ProtocolVersion::V1_0);
    let req = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": "1", "method": method, "params": params});
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (req("SendMessage", json!({"message": msg()})), vec![]),
        (
            req(
                "SendStreamingMessage",
                json!({"message": with(msg(), "/parts/0", json!({"kind": "text", "text": "a"}))}),
            ),
            vec!["params.message.parts[0]: unknown member kind"],
        ),
        (
            req("GetTask", json!({"id": "t", "historyLength": 2})),
            vec![],
        ),
        (
            req("GetTask", json!({"id": "t", "metadata": {}})),
            vec!["params: unknown member metadata"],
        ),
        (
            req("CancelTask", json!({"id": "t", "metadata": {}})),
            vec![],
        ),
        (
            req("ListTasks", json!({"pageSize": "ten"})),
            vec!["params.pageSize: wrong type: expected integer, found string"],
        ),
        (
            req(
                "CreateTaskPushNotificationConfig",
                json!({"taskId": "t", "url": "https://h"}),
            ),
            vec![],
        ),
        (
            req("GetTaskPushNotificationConfig", json!({"id": "cfg"})),
            vec!["params: missing required member taskId"],
        ),
        (
            req(
                "DeleteTaskPushNotificationConfig",
                json!({"taskId": "t", "pushNotificationConfigId": "c"}),
            ),
            vec![
                "params: missing required member id",
                "params: unknown member pushNotificationConfigId",
            ],
        ),
        (
            req(
                "ListTaskPushNotificationConfigs",
                json!({"taskId": "t", "pageSize": 5}),
            ),
            vec![],
        ),
        (req("SubscribeToTask", json!({"id": "t"})), vec![]),
        (
            req("message/send", json!({})),
            vec!["method: method message/send is not an A2A 1.0 method"],
        ),
        (
            json!({"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "t"}}),
            vec!["$: missing required member id"],
        ),
        (
            json!({"jsonrpc": "2.1", "id": 1, "method": "GetTask", "params": {"id": "t"}}),
            vec!["jsonrpc: bad enum value \"2.1\""],
        ),
        (
            json!({"jsonrpc": "2.0", "id": [1], "method": "GetTask", "params": {"id": "t"}}),
            vec!["id: wrong type: expected string or number or null, found array"],
        ),
        (
            json!([1]),
            vec!["$: wrong type: expected object, found array"],
        ),
    ];
    for (doc, expected) in cases {
        let mut got = shown(&strict::validate_jsonrpc_request(&doc, v1, None));
        got.sort();
        let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(got, want, "{doc}");
    }
    // Every 1.0 method has a params validator whose schema is an object.
    for m in V1Method::ALL {
        let v = strict::v1_params_validator(*m);
        assert_eq!(v.schema()["type"], "object", "{m}");
    }
}
