//! The explicit lists of known-broken, unclassifiable and known-diff examples, and their lookups.

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
