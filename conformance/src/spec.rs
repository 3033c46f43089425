//! The JSON examples of both specification texts (`conformance/spec/*.md`): extraction, classification
//! by content to a registered type, and the explicit lists of known-broken and unclassifiable examples.
//!
//! Every ```` ```json ```` block is an example. A block made of SSE `data:` lines is split into one
//! example per event (`v0.3#8.2` is the second event of the eighth block). The bodies of
//! ```` ```http ```` blocks are examples too (`v1.0#http5`), classified by their request line
//! (`POST /message:send` -> `SendMessageRequest`) or, for responses, by content. This file depends only on
//! `serde_json`, so `a2a-types` tests include it with `#[path]`.

use serde_json::Value;

/// One JSON example of a specification text.
#[derive(Debug, Clone)]
pub struct Example {
    /// `1.0` or `0.3`: which specification it comes from.
    pub spec: &'static str,
    /// 1-based index of the json block in its file.
    pub block: usize,
    /// 1-based event number for SSE blocks, `None` otherwise.
    pub event: Option<usize>,
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The closest heading above the block.
    pub heading: String,
    /// The JSON text.
    pub text: String,
    /// For the body of an ```` ```http ```` block: its first line (`POST /message:send HTTP/1.1`
    /// or `HTTP/1.1 200 OK`).
    pub http: Option<String>,
}

impl Example {
    /// Stable id, e.g. `v1.0#13` or `v0.3#8.2`.
    pub fn id(&self) -> String {
        let kind = if self.http.is_some() { "http" } else { "" };
        match self.event {
            Some(e) => format!("v{}#{kind}{}.{e}", self.spec, self.block),
            None => format!("v{}#{kind}{}", self.spec, self.block),
        }
    }

    /// Where it is, for messages: `v1.0#13 (line 2299, #### 9.4.1. SendMessage)`.
    pub fn location(&self) -> String {
        format!("{} (line {}, {})", self.id(), self.line, self.heading)
    }
}

/// The two specification texts, embedded.
pub fn spec_texts() -> [(&'static str, &'static str); 2] {
    [
        ("1.0", include_str!("../spec/v1.0-specification.md")),
        ("0.3", include_str!("../spec/v0.3-specification.md")),
    ]
}

/// Every json example of both specification texts, in order.
pub fn all_examples() -> Vec<Example> {
    spec_texts()
        .into_iter()
        .flat_map(|(v, t)| extract(v, t))
        .collect()
}

/// Extracts every ```` ```json ```` block of `markdown` (indented fences included; the fence's indent is removed).
pub fn extract(spec: &'static str, markdown: &str) -> Vec<Example> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut block = 0;
    let mut http_block = 0;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with('#') {
            heading = l.trim().to_string();
        }
        let trimmed = l.trim_start();
        if trimmed.trim_end() == "```http" {
            http_block += 1;
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim() != "```" {
                j += 1;
            }
            let blk = &lines[i + 1..j.min(lines.len())];
            let first = blk
                .first()
                .map(|f| f.trim().to_string())
                .unwrap_or_default();
            // The body follows the first blank line (after the headers).
            if let Some(blank) = blk.iter().position(|b| b.trim().is_empty()) {
                let body = blk[blank + 1..].join("\n").trim().to_string();
                if !body.is_empty() {
                    let events = if body.starts_with("data:") {
                        split_sse(&body).into_iter().map(Some).collect()
                    } else {
                        vec![None]
                    };
                    let sse = events.len() > 1 || events.first().is_some_and(Option::is_some);
                    for (k, ev) in events.into_iter().enumerate() {
                        out.push(Example {
                            spec,
                            block: http_block,
                            event: sse.then_some(k + 1),
                            line: i + 1,
                            heading: heading.clone(),
                            text: ev.unwrap_or_else(|| body.clone()),
                            http: Some(first.clone()),
                        });
                    }
                }
            }
            i = j + 1;
            continue;
        }
        if trimmed.trim_end() == "```json" {
            let indent = l.len() - trimmed.len();
            block += 1;
            let start = i + 1;
            let mut j = start;
            while j < lines.len() && lines[j].trim() != "```" {
                j += 1;
            }
            let body: Vec<&str> = lines[start..j.min(lines.len())]
                .iter()
                .map(|s| {
                    if s.len() >= indent && s[..indent].trim().is_empty() {
                        &s[indent..]
                    } else {
                        s.trim_start()
                    }
                })
                .collect();
            let text = body.join("\n");
            if text.trim_start().starts_with("data:") {
                for (k, ev) in split_sse(&text).into_iter().enumerate() {
                    out.push(Example {
                        spec,
                        block,
                        event: Some(k + 1),
                        line: i + 1,
                        heading: heading.clone(),
                        text: ev,
                        http: None,
                    });
                }
            } else {
                out.push(Example {
                    spec,
                    block,
                    event: None,
                    line: i + 1,
                    heading: heading.clone(),
                    text,
                    http: None,
                });
            }
            i = j;
        }
        i += 1;
    }
    out
}

/// Splits an SSE transcript into the data of each event.
fn split_sse(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("data:") {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            cur = Some(rest.trim_start().to_string());
        } else if let Some(c) = cur.as_mut() {
            c.push('\n');
            c.push_str(line);
        }
    }
    out.extend(cur);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A (sub-)document of an example and the registered type it must parse as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// JSON pointer into the example (`""` = the whole document).
    pub pointer: String,
    /// Registry dialect (`v1`, `v03`, `v03-rest`).
    pub dialect: &'static str,
    /// Registry type name.
    pub type_name: &'static str,
}

/// How an example was classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// Parse each target with its type.
    Typed(Vec<Target>),
    /// Not an A2A document (or a fragment of none); the reason.
    Unclassifiable(String),
}

fn t(pointer: impl Into<String>, dialect: &'static str, type_name: &'static str) -> Target {
    Target {
        pointer: pointer.into(),
        dialect,
        type_name,
    }
}

/// The params type of a JSON-RPC method (`None`: the method takes no params).
pub fn params_type(method: &str) -> Option<(&'static str, &'static str)> {
    Some(match method {
        "SendMessage" | "SendStreamingMessage" => ("v1", "SendMessageRequest"),
        "GetTask" => ("v1", "GetTaskRequest"),
        "ListTasks" => ("v1", "ListTasksRequest"),
        "CancelTask" => ("v1", "CancelTaskRequest"),
        "SubscribeToTask" => ("v1", "SubscribeToTaskRequest"),
        "CreateTaskPushNotificationConfig" => ("v1", "TaskPushNotificationConfig"),
        "GetTaskPushNotificationConfig" => ("v1", "GetTaskPushNotificationConfigRequest"),
        "ListTaskPushNotificationConfigs" => ("v1", "ListTaskPushNotificationConfigsRequest"),
        "DeleteTaskPushNotificationConfig" => ("v1", "DeleteTaskPushNotificationConfigRequest"),
        "GetExtendedAgentCard" => ("v1", "GetExtendedAgentCardRequest"),
        "message/send" | "message/stream" => ("v03", "MessageSendParams"),
        "tasks/get" => ("v03", "TaskQueryParams"),
        "tasks/cancel" | "tasks/resubscribe" => ("v03", "TaskIdParams"),
        "tasks/pushNotificationConfig/set" => ("v03", "TaskPushNotificationConfig"),
        "tasks/pushNotificationConfig/get" => ("v03", "GetTaskPushNotificationConfigParams"),
        "tasks/pushNotificationConfig/list" => ("v03", "ListTaskPushNotificationConfigParams"),
        "tasks/pushNotificationConfig/delete" => ("v03", "DeleteTaskPushNotificationConfigParams"),
        _ => return None,
    })
}

/// The dialect of a JSON-RPC method name (`None` if it belongs to neither version), read from
/// a2a-types' one operation table.
pub fn method_dialect(method: &str) -> Option<&'static str> {
    match a2a_types::jsonrpc::Method::parse(method)? {
        a2a_types::jsonrpc::Method::V03(_) => Some("v03"),
        a2a_types::jsonrpc::Method::V1(_) => Some("v1"),
    }
}

const CARD_KEYS_V1: &[&str] = &[
    "name",
    "description",
    "supportedInterfaces",
    "provider",
    "version",
    "documentationUrl",
    "capabilities",
    "securitySchemes",
    "securityRequirements",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
    "signatures",
    "iconUrl",
];

/// Classifies an example: HTTP bodies by their request line (or, for responses, by content),
/// everything else by content ([`classify`]).
pub fn classify_example(ex: &Example, doc: &Value) -> Class {
    let Some(first) = &ex.http else {
        return classify(ex.spec, doc);
    };
    let dialect: &'static str = if ex.spec == "0.3" { "v03-rest" } else { "v1" };
    let mut words = first.split_whitespace();
    let method = words.next().unwrap_or_default();
    let path = words.next().unwrap_or_default();
    if method.starts_with("HTTP/") {
        // A response: by content (error bodies, tasks, cards, stream events, ...).
        return classify(ex.spec, doc);
    }
    let path = path.split('?').next().unwrap_or_default();
    let ty = if path.ends_with("/message:send") || path.ends_with("/message:stream") {
        "SendMessageRequest"
    } else if path.ends_with("/pushNotificationConfigs") && method == "POST" {
        "TaskPushNotificationConfig"
    } else if doc.get("jsonrpc").is_some() {
        return classify(ex.spec, doc);
    } else if method == "POST" && !path.starts_with('/') || path.contains("webhook") {
        // A push notification delivery: one StreamResponse (S1 §4.3.3).
        "StreamResponse"
    } else {
        return Class::Unclassifiable(format!("HTTP body of {method} {path}: no A2A type"));
    };
    Class::Typed(vec![t("", dialect, ty)])
}

/// Classifies a parsed example of specification `spec` (`1.0` or `0.3`) by its content.
pub fn classify(spec: &str, doc: &Value) -> Class {
    let default_dialect: &'static str = if spec == "0.3" { "v03" } else { "v1" };
    let Some(obj) = doc.as_object() else {
        return Class::Unclassifiable("not a JSON object".into());
    };
    // JSON-RPC envelopes.
    if obj.get("jsonrpc").and_then(Value::as_str) == Some("2.0") {
        if let Some(method) = obj.get("method").and_then(Value::as_str) {
            let Some(d) = method_dialect(method) else {
                return Class::Unclassifiable(format!(
                    "JSON-RPC request with unknown method {method}"
                ));
            };
            let mut targets = vec![t("", d, "JsonRpcRequest")];
            if let Some((pd, pt)) = params_type(method)
                && obj.contains_key("params")
            {
                targets.push(t("/params", pd, pt));
            }
            return Class::Typed(targets);
        }
        if obj.contains_key("error") {
            return Class::Typed(vec![t("", default_dialect, "JsonRpcResponse")]);
        }
        if let Some(result) = obj.get("result") {
            let mut targets = vec![t("", default_dialect, "JsonRpcResponse")];
            match classify_result(default_dialect, result) {
                Some(ty) => targets.push(t("/result", default_dialect, ty)),
                None => {
                    return Class::Unclassifiable(
                        "JSON-RPC response whose result has no recognizable shape".into(),
                    );
                }
            }
            return Class::Typed(targets);
        }
        return Class::Unclassifiable(
            "JSON-RPC object that is neither request nor response".into(),
        );
    }
    // Bare documents.
    let has = |k: &str| obj.contains_key(k);
    let dialect = if has("kind") { "v03" } else { default_dialect };
    if has("error") && obj.len() == 1 {
        return Class::Typed(vec![t("", "v1", "RestErrorBody")]);
    }
    if let Some(ty) = classify_result(dialect, doc) {
        return Class::Typed(vec![t("", dialect, ty)]);
    }
    if has("protected") && has("signature") {
        return Class::Typed(vec![t("", dialect, "AgentCardSignature")]);
    }
    if has("artifactId") {
        return Class::Typed(vec![t("", dialect, "Artifact")]);
    }
    if ["text", "raw", "url", "data", "file"]
        .iter()
        .any(|k| has(k))
        && obj.len() <= 5
        && !has("parts")
    {
        return Class::Typed(vec![t("", dialect, "Part")]);
    }
    // A fragment of an agent card: check each member that has a type of its own.
    if dialect == "v1" && obj.keys().all(|k| CARD_KEYS_V1.contains(&k.as_str())) {
        let mut targets = Vec::new();
        for (k, v) in obj {
            match k.as_str() {
                "supportedInterfaces" | "skills" | "signatures" => {
                    let ty = match k.as_str() {
                        "supportedInterfaces" => "AgentInterface",
                        "skills" => "AgentSkill",
                        _ => "AgentCardSignature",
                    };
                    for i in 0..v.as_array().map_or(0, Vec::len) {
                        targets.push(t(format!("/{k}/{i}"), "v1", ty));
                    }
                }
                "capabilities" => targets.push(t("/capabilities", "v1", "AgentCapabilities")),
                "provider" => targets.push(t("/provider", "v1", "AgentProvider")),
                "securitySchemes" => {
                    for name in v.as_object().into_iter().flat_map(|m| m.keys()) {
                        targets.push(t(
                            format!(
                                "/securitySchemes/{}",
                                name.replace('~', "~0").replace('/', "~1")
                            ),
                            "v1",
                            "SecurityScheme",
                        ));
                    }
                }
                "securityRequirements" => {
                    for i in 0..v.as_array().map_or(0, Vec::len) {
                        targets.push(t(
                            format!("/securityRequirements/{i}"),
                            "v1",
                            "SecurityRequirement",
                        ));
                    }
                }
                _ => {}
            }
        }
        if !targets.is_empty() {
            return Class::Typed(targets);
        }
    }
    Class::Unclassifiable("no A2A type has this shape".into())
}

/// The type of a JSON-RPC `result` (or a bare document) by its shape.
fn classify_result(dialect: &'static str, v: &Value) -> Option<&'static str> {
    let obj = v.as_object()?;
    let has = |k: &str| obj.contains_key(k);
    if dialect != "v1" {
        if let Some(kind) = obj.get("kind").and_then(Value::as_str) {
            return Some(match kind {
                "task" => "Task",
                "message" => "Message",
                "status-update" => "TaskStatusUpdateEvent",
                "artifact-update" => "TaskArtifactUpdateEvent",
                _ => return None,
            });
        }
        if has("taskId") && has("pushNotificationConfig") {
            return Some("TaskPushNotificationConfig");
        }
    } else {
        let only = |k: &str| obj.len() == 1 && has(k);
        if only("task") || only("message") {
            return Some("SendMessageResponse");
        }
        if only("statusUpdate") || only("artifactUpdate") {
            return Some("StreamResponse");
        }
        if has("tasks") && has("nextPageToken") {
            return Some("ListTasksResponse");
        }
        if has("configs") {
            return Some("ListTaskPushNotificationConfigsResponse");
        }
        if has("taskId") && has("url") {
            return Some("TaskPushNotificationConfig");
        }
        if has("taskId") && has("status") {
            return Some("TaskStatusUpdateEvent");
        }
        if has("taskId") && has("artifact") {
            return Some("TaskArtifactUpdateEvent");
        }
    }
    if has("id") && has("status") {
        return Some("Task");
    }
    if has("messageId") || (has("role") && has("parts")) {
        return Some("Message");
    }
    if has("name") && has("skills") && has("capabilities") {
        return Some("AgentCard");
    }
    None
}

/// Examples known not to parse or round-trip as the spec shows them, with the reason (digest §12 errata
/// and more). `spec_examples.rs` fails if one of these starts passing (the list must stay honest).
pub const KNOWN_BROKEN: &[(&str, &str)] = &[
    (
        "v1.0#http3",
        "placeholder comments (`/* StreamResponse object - one of: */`) instead of a push payload",
    ),
    (
        "v1.0#http19",
        "invalid JSON: `/* ... additional tasks */` placeholder comment",
    ),
    (
        "v1.0#http25",
        "invalid JSON: missing comma between members (digest §12.7, S1 §6.7)",
    ),
    (
        "v1.0#http31",
        "invalid JSON: `/* Extended skills ... */` placeholder comment",
    ),
    (
        "v1.0#http32",
        "invalid JSON: `/* SendMessageRequest */` placeholder comment",
    ),
    (
        "v1.0#http39",
        "invalid JSON: `/* SendMessageRequest object */` placeholder",
    ),
    (
        "v1.0#http40.1",
        "invalid JSON: `/* StreamResponse object */` placeholder",
    ),
    (
        "v1.0#http40.2",
        "invalid JSON: `/* StreamResponse object */` placeholder",
    ),
    (
        "v1.0#1",
        "invalid JSON: trailing comma after protocolVersion (digest §12.7, S1 §4.6.1)",
    ),
    (
        "v1.0#12",
        "invalid JSON: `/* method-specific parameters */` placeholder comment",
    ),
    (
        "v1.0#13",
        "invalid JSON: `/* SendMessageRequest object */` placeholder comment",
    ),
    (
        "v1.0#14",
        "invalid JSON: placeholder comment instead of a SendMessageResponse",
    ),
    (
        "v1.0#24",
        "0.3 legacy illustration mixing dialects: `kind` (JSON-RPC) with `fileWithBytes` (ProtoJSON of P0); valid in neither",
    ),
    (
        "v0.3#8.1",
        "FileWithBytes written with member `data` instead of `bytes` (no 0.3 file part has `data`)",
    ),
    (
        "v0.3#8.3",
        "invalid JSON: trailing comma after the artifact's parts",
    ),
    (
        "v0.3#9",
        "messageId sits in params instead of params.message (message lacks its REQUIRED messageId)",
    ),
    (
        "v0.3#6",
        "the agent's reply message lacks its REQUIRED role (J0 Message.required)",
    ),
    (
        "v0.3#7",
        "FileWithBytes written with member `data` instead of `bytes` (no 0.3 file part has `data`)",
    ),
    (
        "v0.3#12",
        "the status message lacks its REQUIRED messageId and kind (J0 Message.required)",
    ),
    (
        "v0.3#13",
        "invalid JSON: missing comma between members (S0 §9.5)",
    ),
    ("v0.3#14", "invalid JSON: `// ... other fields ...` comment"),
    ("v0.3#15", "invalid JSON: `// ... other fields ...` comment"),
    (
        "v0.3#16",
        "invalid JSON: `// ...` comment inside the request",
    ),
    (
        "v0.3#17",
        "invalid JSON: `// ...` comment inside the response",
    ),
];

/// Examples that are not A2A documents (or fragments of no A2A type), with the reason.
pub const UNCLASSIFIABLE: &[(&str, &str)] = &[
    (
        "v1.0#http13",
        "RFC 9457 application/problem+json body, which S1 §11.6 (google.rpc.Status) supersedes (digest §12.6)",
    ),
    (
        "v1.0#http21",
        "RFC 9457 application/problem+json validation error, superseded by google.rpc.Status + BadRequest (digest §12.6)",
    ),
    (
        "v1.0#27",
        "pre-1.0 illustration of the removed top-level `supportsExtendedAgentCard` (0.3 spelled it supportsAuthenticatedExtendedCard, digest §12.4): no 1.0 type has it",
    ),
    (
        "v1.0#4",
        "illustrates timestamp formatting with made-up field names (createdAt, lastModified)",
    ),
    (
        "v1.0#10",
        "a decoded JWS protected header (alg/typ/kid/jku): JOSE, not an A2A type; it is the base64url payload of v1.0#9",
    ),
];

/// Examples that parse but whose serialization differs from the text, with the exact differences
/// (`pointer path: difference`, as the test prints them) and the reason. The test checks the
/// differences are exactly these, so nothing else may change.
pub const KNOWN_DIFFS: &[(&str, &[&str], &str)] = &[
    (
        "v1.0#http4",
        &["message.messageId: unexpected member"],
        "the message lacks its REQUIRED messageId; the model emits the REQUIRED scalar (empty)",
    ),
    (
        "v1.0#http8.2",
        &["artifactUpdate.artifact.artifactId: unexpected member"],
        "the streamed artifact lacks its REQUIRED artifactId (P1 Artifact); emitted empty",
    ),
    (
        "v1.0#http10",
        &["task.status.message.messageId: unexpected member"],
        "the status message lacks its REQUIRED messageId; emitted empty",
    ),
    (
        "v1.0#http33",
        &["message.messageId: unexpected member"],
        "the message lacks its REQUIRED messageId; emitted empty",
    ),
    (
        "v1.0#2",
        &["messageId: unexpected member"],
        "the message lacks its REQUIRED messageId; the model emits the REQUIRED scalar (empty)",
    ),
    (
        "v1.0#7",
        &[
            "capabilities.extensions: missing",
            "defaultInputModes: unexpected member",
            "defaultOutputModes: unexpected member",
            "supportedInterfaces: unexpected member",
            "version: unexpected member",
        ],
        "canonicalization illustration: a card without its REQUIRED version, supportedInterfaces and modes (emitted empty), and an empty non-REQUIRED extensions list (omitted, as S1 §8.4.1 itself says)",
    ),
    (
        "v1.0#8",
        &[
            "defaultInputModes: unexpected member",
            "defaultOutputModes: unexpected member",
            "supportedInterfaces: unexpected member",
            "version: unexpected member",
        ],
        "canonical form of v1.0#7: the same missing REQUIRED members are emitted empty",
    ),
    (
        "v1.0#22",
        &["/supportedInterfaces/0 protocolVersion: unexpected member"],
        "the interface lacks its REQUIRED protocolVersion (P1 AgentInterface); the model emits it empty",
    ),
    (
        "v0.3#3",
        &["/params message.kind: unexpected member"],
        "the message lacks its REQUIRED kind (J0 Message.required); parsed leniently, emitted with kind",
    ),
    (
        "v0.3#4",
        &["/result history[0].kind: unexpected member"],
        "the history message lacks its REQUIRED kind; emitted with kind",
    ),
    (
        "v0.3#5",
        &["/params message.kind: unexpected member"],
        "the message lacks its REQUIRED kind; emitted with kind",
    ),
    (
        "v0.3#10",
        &[
            "/result history[0].kind: unexpected member",
            "/result status.message.kind: unexpected member",
        ],
        "the messages lack their REQUIRED kind; emitted with kind",
    ),
    (
        "v0.3#11",
        &["/params message.kind: unexpected member"],
        "the message lacks its REQUIRED kind; emitted with kind",
    ),
    (
        "v0.3#18",
        &["/params message.kind: unexpected member"],
        "the message lacks its REQUIRED kind; emitted with kind",
    ),
];

/// The reason an example is listed as known broken, if it is.
pub fn known_broken(id: &str) -> Option<&'static str> {
    KNOWN_BROKEN.iter().find(|(i, _)| *i == id).map(|(_, r)| *r)
}

/// The reason an example is listed as unclassifiable, if it is.
pub fn unclassifiable(id: &str) -> Option<&'static str> {
    UNCLASSIFIABLE
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, r)| *r)
}

#[cfg(test)]
mod tests {
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
}
