//! Property tests: serialize -> parse round trips for every top-level 1.0 type, and generated
//! values pass the strict validator (the schemas agree with the serde forms).

use std::collections::BTreeMap;

use a2a_types::binary::Base64Bytes;
use a2a_types::strict;
use a2a_types::timestamp::Timestamp;
use a2a_types::v1::*;
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

fn cfg() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        ..ProptestConfig::default()
    }
}

fn s() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _./:-]{0,12}"
}

fn os() -> impl Strategy<Value = Option<String>> {
    option::of(s())
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        s().prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::Array),
            btree_map("[a-z]{1,5}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn metadata() -> impl Strategy<Value = Metadata> {
    btree_map("[a-zA-Z_]{1,6}", json_value(), 0..3).prop_map(|m| m.into_iter().collect())
}

fn ometa() -> impl Strategy<Value = Option<Metadata>> {
    option::of(metadata())
}

fn timestamp() -> impl Strategy<Value = Timestamp> {
    (0i64..4_000_000_000).prop_map(|s| Timestamp::from_unix_seconds(s).unwrap())
}

fn part() -> impl Strategy<Value = Part> {
    let content = prop_oneof![
        s().prop_map(PartContent::Text),
        vec(any::<u8>(), 0..16).prop_map(|b| PartContent::Raw(Base64Bytes::encode(b))),
        s().prop_map(PartContent::Url),
        json_value().prop_map(PartContent::Data),
    ];
    (content, ometa(), os(), os()).prop_map(|(content, metadata, filename, media_type)| Part {
        content,
        metadata,
        filename,
        media_type,
    })
}

fn role() -> impl Strategy<Value = Role> {
    prop::sample::select(Role::ALL)
}

fn state() -> impl Strategy<Value = TaskState> {
    prop::sample::select(TaskState::ALL)
}

fn message() -> impl Strategy<Value = Message> {
    (
        s(),
        os(),
        os(),
        role(),
        vec(part(), 1..3),
        ometa(),
        vec(s(), 0..2),
        vec(s(), 0..2),
    )
        .prop_map(
            |(message_id, context_id, task_id, role, parts, metadata, extensions, refs)| Message {
                message_id,
                context_id,
                task_id,
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids: refs,
            },
        )
}

fn status() -> impl Strategy<Value = TaskStatus> {
    (state(), option::of(message()), option::of(timestamp())).prop_map(
        |(state, message, timestamp)| TaskStatus {
            state,
            message,
            timestamp,
        },
    )
}

fn artifact() -> impl Strategy<Value = Artifact> {
    (s(), os(), os(), vec(part(), 1..3), ometa(), vec(s(), 0..2)).prop_map(
        |(artifact_id, name, description, parts, metadata, extensions)| Artifact {
            artifact_id,
            name,
            description,
            parts,
            metadata,
            extensions,
        },
    )
}

fn task() -> impl Strategy<Value = Task> {
    (
        s(),
        os(),
        status(),
        vec(artifact(), 0..2),
        vec(message(), 0..2),
        ometa(),
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata)| Task {
                id,
                context_id,
                status,
                artifacts,
                history,
                metadata,
            },
        )
}

fn status_update() -> impl Strategy<Value = TaskStatusUpdateEvent> {
    (s(), s(), status(), ometa()).prop_map(|(task_id, context_id, status, metadata)| {
        TaskStatusUpdateEvent {
            task_id,
            context_id,
            status,
            metadata,
        }
    })
}

fn artifact_update() -> impl Strategy<Value = TaskArtifactUpdateEvent> {
    (
        s(),
        s(),
        artifact(),
        option::of(any::<bool>()),
        option::of(any::<bool>()),
        ometa(),
    )
        .prop_map(
            |(task_id, context_id, artifact, append, last_chunk, metadata)| {
                TaskArtifactUpdateEvent {
                    task_id,
                    context_id,
                    artifact,
                    append,
                    last_chunk,
                    metadata,
                }
            },
        )
}

fn stream_response() -> impl Strategy<Value = StreamResponse> {
    prop_oneof![
        task().prop_map(StreamResponse::Task),
        message().prop_map(StreamResponse::Message),
        status_update().prop_map(StreamResponse::StatusUpdate),
        artifact_update().prop_map(StreamResponse::ArtifactUpdate),
    ]
}

fn auth_info() -> impl Strategy<Value = AuthenticationInfo> {
    (s(), os()).prop_map(|(scheme, credentials)| AuthenticationInfo {
        scheme,
        credentials,
    })
}

fn push_config() -> impl Strategy<Value = TaskPushNotificationConfig> {
    (os(), os(), os(), s(), os(), option::of(auth_info())).prop_map(
        |(tenant, id, task_id, url, token, authentication)| TaskPushNotificationConfig {
            tenant,
            id,
            task_id,
            url,
            token,
            authentication,
        },
    )
}

fn send_config() -> impl Strategy<Value = SendMessageConfiguration> {
    (
        vec(s(), 0..2),
        option::of(push_config()),
        option::of(any::<i32>()),
        option::of(any::<bool>()),
    )
        .prop_map(
            |(modes, push, history_length, ri)| SendMessageConfiguration {
                accepted_output_modes: modes,
                task_push_notification_config: push,
                history_length,
                return_immediately: ri,
            },
        )
}

fn send_request() -> impl Strategy<Value = SendMessageRequest> {
    (os(), message(), option::of(send_config()), ometa()).prop_map(
        |(tenant, message, configuration, metadata)| SendMessageRequest {
            tenant,
            message,
            configuration,
            metadata,
        },
    )
}

fn send_response() -> impl Strategy<Value = SendMessageResponse> {
    prop_oneof![
        task().prop_map(SendMessageResponse::Task),
        message().prop_map(SendMessageResponse::Message),
    ]
}

fn list_tasks_request() -> impl Strategy<Value = ListTasksRequest> {
    (
        os(),
        os(),
        option::of(state()),
        option::of(1i32..100),
        os(),
        option::of(0i32..10),
        option::of(timestamp()),
        option::of(any::<bool>()),
    )
        .prop_map(
            |(tenant, context_id, status, page_size, page_token, hl, ts, ia)| ListTasksRequest {
                tenant,
                context_id,
                status,
                page_size,
                page_token,
                history_length: hl,
                status_timestamp_after: ts,
                include_artifacts: ia,
            },
        )
}

fn list_tasks_response() -> impl Strategy<Value = ListTasksResponse> {
    (vec(task(), 0..3), s(), any::<i32>(), any::<i32>()).prop_map(
        |(tasks, next_page_token, page_size, total_size)| ListTasksResponse {
            tasks,
            next_page_token,
            page_size,
            total_size,
        },
    )
}

fn scopes() -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map("[a-z:]{1,8}", s(), 0..3)
}

fn flows() -> impl Strategy<Value = OAuthFlows> {
    prop_oneof![
        (s(), s(), os(), scopes(), option::of(any::<bool>())).prop_map(|(a, t, r, sc, p)| {
            OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
                authorization_url: a,
                token_url: t,
                refresh_url: r,
                scopes: sc,
                pkce_required: p,
            })
        }),
        (s(), os(), scopes()).prop_map(|(t, r, sc)| OAuthFlows::ClientCredentials(
            ClientCredentialsOAuthFlow {
                token_url: t,
                refresh_url: r,
                scopes: sc
            }
        )),
        (os(), os(), scopes()).prop_map(|(a, r, sc)| OAuthFlows::Implicit(ImplicitOAuthFlow {
            authorization_url: a,
            refresh_url: r,
            scopes: sc
        })),
        (os(), os(), scopes()).prop_map(|(t, r, sc)| OAuthFlows::Password(PasswordOAuthFlow {
            token_url: t,
            refresh_url: r,
            scopes: sc
        })),
        (s(), s(), os(), scopes()).prop_map(|(d, t, r, sc)| OAuthFlows::DeviceCode(
            DeviceCodeOAuthFlow {
                device_authorization_url: d,
                token_url: t,
                refresh_url: r,
                scopes: sc
            }
        )),
    ]
}

fn security_scheme() -> impl Strategy<Value = SecurityScheme> {
    prop_oneof![
        (os(), s(), s()).prop_map(|(d, l, n)| SecurityScheme::ApiKeySecurityScheme(
            ApiKeySecurityScheme {
                description: d,
                location: l,
                name: n
            }
        )),
        (os(), s(), os()).prop_map(|(d, sc, b)| SecurityScheme::HttpAuthSecurityScheme(
            HttpAuthSecurityScheme {
                description: d,
                scheme: sc,
                bearer_format: b
            }
        )),
        (os(), flows(), os()).prop_map(|(d, f, m)| SecurityScheme::Oauth2SecurityScheme(
            OAuth2SecurityScheme {
                description: d,
                flows: f,
                oauth2_metadata_url: m
            }
        )),
        (os(), s()).prop_map(|(d, u)| SecurityScheme::OpenIdConnectSecurityScheme(
            OpenIdConnectSecurityScheme {
                description: d,
                open_id_connect_url: u
            }
        )),
        os().prop_map(
            |d| SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme { description: d })
        ),
    ]
}

fn requirement() -> impl Strategy<Value = SecurityRequirement> {
    btree_map("[a-z]{1,5}", vec(s(), 0..2), 0..3).prop_map(|m| SecurityRequirement {
        schemes: m
            .into_iter()
            .map(|(k, list)| (k, StringList { list }))
            .collect(),
    })
}

fn extra() -> impl Strategy<Value = Metadata> {
    btree_map("x-[a-z]{1,5}", json_value(), 0..2).prop_map(|m| m.into_iter().collect())
}

fn skill() -> impl Strategy<Value = AgentSkill> {
    (
        (s(), s(), s(), vec(s(), 0..2)),
        (vec(s(), 0..2), vec(s(), 0..2), vec(s(), 0..2)),
        vec(requirement(), 0..2),
        extra(),
    )
        .prop_map(
            |((id, name, description, tags), (examples, input_modes, output_modes), sr, extra)| {
                AgentSkill {
                    id,
                    name,
                    description,
                    tags,
                    examples,
                    input_modes,
                    output_modes,
                    security_requirements: sr,
                    extra,
                }
            },
        )
}

fn agent_card() -> impl Strategy<Value = AgentCard> {
    let interface =
        (s(), s(), os(), s(), extra()).prop_map(|(url, b, tenant, v, extra)| AgentInterface {
            url,
            protocol_binding: b,
            tenant,
            protocol_version: v,
            extra,
        });
    let ext = (os(), os(), option::of(any::<bool>()), ometa()).prop_map(
        |(uri, description, required, params)| AgentExtension {
            uri,
            description,
            required,
            params,
        },
    );
    let caps = (
        option::of(any::<bool>()),
        option::of(any::<bool>()),
        vec(ext, 0..2),
        option::of(any::<bool>()),
        extra(),
    )
        .prop_map(|(st, pn, extensions, eac, extra)| AgentCapabilities {
            streaming: st,
            push_notifications: pn,
            extensions,
            extended_agent_card: eac,
            extra,
        });
    let sig = (s(), s(), ometa()).prop_map(|(protected, signature, header)| AgentCardSignature {
        protected,
        signature,
        header,
    });
    let provider = (s(), s()).prop_map(|(url, organization)| AgentProvider { url, organization });
    (
        (
            s(),
            s(),
            vec(interface, 0..3),
            option::of(provider),
            s(),
            os(),
        ),
        (caps, btree_map("[a-z]{1,5}", security_scheme(), 0..3)),
        (vec(requirement(), 0..2), vec(s(), 0..2), vec(s(), 0..2)),
        (vec(skill(), 0..3), vec(sig, 0..2), os(), extra()),
    )
        .prop_map(
            |(
                (name, description, ifaces, provider, version, doc),
                (capabilities, schemes),
                (reqs, dim, dom),
                (skills, signatures, icon_url, extra),
            )| AgentCard {
                name,
                description,
                supported_interfaces: ifaces,
                provider,
                version,
                documentation_url: doc,
                capabilities,
                security_schemes: schemes,
                security_requirements: reqs,
                default_input_modes: dim,
                default_output_modes: dom,
                skills,
                signatures,
                icon_url,
                extra,
            },
        )
}

/// Serialize, parse back (text and value paths), compare; then strict-validate.
#[cfg(feature = "schema")]
fn round_trip<T>(t: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug + schemars::JsonSchema,
{
    round_trip_lenient(t)?;
    let value = serde_json::to_value(t).unwrap();
    let violations = strict::validate::<T>(&value);
    prop_assert!(
        violations.is_empty(),
        "{:?} on {}",
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        value
    );
    Ok(())
}

/// Serialize, parse back (text and value paths), compare (no strict validator without `schema`).
#[cfg(not(feature = "schema"))]
fn round_trip<T>(t: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    round_trip_lenient(t)
}

/// Serialize, parse back (text and value paths), compare.
fn round_trip_lenient<T>(t: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let text = serde_json::to_string(t).unwrap();
    let back: T = strict::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
    prop_assert_eq!(&back, t);
    let value: Value = serde_json::from_str(&text).unwrap();
    let again = serde_json::to_value(&back).unwrap();
    prop_assert_eq!(&again, &value);
    Ok(())
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn message_round_trips(m in message()) { round_trip(&m)?; }

    #[test]
    fn part_round_trips(p in part()) { round_trip(&p)?; }

    #[test]
    fn task_round_trips(t in task()) { round_trip(&t)?; }

    #[test]
    fn artifact_round_trips(a in artifact()) { round_trip(&a)?; }

    #[test]
    fn status_round_trips(s in status()) { round_trip(&s)?; }

    #[test]
    fn events_round_trip(s in status_update(), a in artifact_update()) {
        round_trip(&s)?;
        round_trip(&a)?;
    }

    #[test]
    fn stream_response_round_trips(r in stream_response()) { round_trip(&r)?; }

    #[test]
    fn send_message_round_trips(r in send_request(), resp in send_response(), c in send_config()) {
        round_trip(&r)?;
        round_trip(&resp)?;
        round_trip(&c)?;
    }

    #[test]
    fn task_requests_round_trip(
        tenant in os(), id in s(), hl in option::of(any::<i32>()), meta in ometa(),
        lreq in list_tasks_request(), lresp in list_tasks_response(),
    ) {
        round_trip(&GetTaskRequest { tenant: tenant.clone(), id: id.clone(), history_length: hl })?;
        round_trip(&CancelTaskRequest { tenant: tenant.clone(), id: id.clone(), metadata: meta })?;
        round_trip(&SubscribeToTaskRequest { tenant: tenant.clone(), id })?;
        round_trip(&GetExtendedAgentCardRequest { tenant })?;
        round_trip(&lreq)?;
        round_trip(&lresp)?;
    }

    #[test]
    fn push_config_types_round_trip(
        c in push_config(), a in auth_info(), tenant in os(), task_id in s(), id in s(),
        ps in option::of(any::<i32>()), pt in os(), configs in vec(push_config(), 0..3), npt in os(),
    ) {
        round_trip(&c)?;
        round_trip(&a)?;
        round_trip(&GetTaskPushNotificationConfigRequest { tenant: tenant.clone(), task_id: task_id.clone(), id: id.clone() })?;
        round_trip(&DeleteTaskPushNotificationConfigRequest { tenant: tenant.clone(), task_id: task_id.clone(), id })?;
        round_trip(&ListTaskPushNotificationConfigsRequest { tenant, task_id, page_size: ps, page_token: pt })?;
        round_trip(&ListTaskPushNotificationConfigsResponse { configs, next_page_token: npt })?;
        round_trip(&Empty {})?;
    }

    #[test]
    fn agent_card_round_trips(c in agent_card()) {
        // Unknown members are kept by the default parse ...
        round_trip_lenient(&c)?;
        // ... and reported by the strict validator, so check strictly without them.
        let mut c = c;
        c.extra.clear();
        c.capabilities.extra.clear();
        for i in &mut c.supported_interfaces { i.extra.clear(); }
        for s in &mut c.skills { s.extra.clear(); }
        round_trip(&c)?;
    }

    #[cfg(feature = "schema")]
    #[test]
    fn card_extras_are_reported_strictly(c in agent_card()) {
        let n = c.extra.len() + c.capabilities.extra.len()
            + c.supported_interfaces.iter().map(|i| i.extra.len()).sum::<usize>()
            + c.skills.iter().map(|s| s.extra.len()).sum::<usize>();
        let v = strict::validate::<AgentCard>(&serde_json::to_value(&c).unwrap());
        prop_assert_eq!(v.len(), n);
        prop_assert!(v.iter().all(|v| matches!(&v.kind, strict::ViolationKind::UnknownMember(m) if m.starts_with("x-"))));
    }

    #[test]
    fn security_types_round_trip(s in security_scheme(), r in requirement()) {
        round_trip(&s)?;
        round_trip(&r)?;
    }
}

#[test]
fn unknown_card_members_survive_a_round_trip() {
    let doc = json!({
        "name": "a", "description": "d", "version": "1", "supportedInterfaces": [],
        "capabilities": {"x-cap": 1}, "defaultInputModes": [], "defaultOutputModes": [],
        "skills": [{"id": "s", "name": "n", "description": "d", "tags": [], "x-skill": [true]}],
        "x-vendor": {"deep": {"er": null}}
    });
    let card: AgentCard = strict::parse_value(doc.clone()).unwrap();
    assert_eq!(card.extra["x-vendor"], json!({"deep": {"er": null}}));
    assert_eq!(serde_json::to_value(&card).unwrap(), doc);
}

#[test]
fn unknown_members_elsewhere_are_dropped() {
    let doc =
        json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a", "x": 1}], "y": 2});
    let m: Message = strict::parse_value(doc).unwrap();
    assert_eq!(
        serde_json::to_value(&m).unwrap(),
        json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}]})
    );
}

#[test]
fn snake_case_and_integer_enums_are_accepted() {
    let doc = json!({"task_id": "t", "context_id": "c", "status": {"state": 3, "timestamp": "2025-01-01T00:00:00+01:00"}});
    let e: TaskStatusUpdateEvent = strict::parse_value(doc).unwrap();
    assert_eq!(e.status.state, TaskState::Completed);
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2024-12-31T23:00:00Z"}})
    );
    let p: Part = strict::parse_value(json!({"url": "u", "media_type": "text/html"})).unwrap();
    assert_eq!(p.media_type.as_deref(), Some("text/html"));
}

#[test]
fn raw_bytes_keep_their_exact_text() {
    // Unpadded and URL-safe base64 are valid ProtoJSON and must pass through unchanged (H6).
    for raw in ["aGk", "-_8", "aGk="] {
        let p: Part = strict::parse_value(json!({"raw": raw})).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), json!({"raw": raw}));
    }
}

#[test]
fn part_data_null_is_a_data_part() {
    let p: Part = strict::parse_value(json!({"data": null})).unwrap();
    assert_eq!(p.content, PartContent::Data(Value::Null));
    assert_eq!(serde_json::to_value(&p).unwrap(), json!({"data": null}));
    assert!(strict::parse_value::<Part>(json!({"text": "a", "raw": "aGk="})).is_err());
    assert!(strict::parse_value::<Part>(json!({"metadata": {}})).is_err());
    let _ = Map::<String, Value>::new();
}

#[test]
fn oneof_wrappers_ignore_unknown_members_and_refuse_two_payloads() {
    let t = json!({"id": "t", "status": {"state": 1}});
    let r: SendMessageResponse =
        strict::parse_value(json!({"x": 1, "task": t, "kind": "task"})).unwrap();
    assert!(matches!(r, SendMessageResponse::Task(_)));
    let r: StreamResponse = strict::parse_value(json!({"task": null, "status_update": {"taskId": "t", "contextId": "c", "status": {"state": 2}}})).unwrap();
    assert!(matches!(r, StreamResponse::StatusUpdate(_)));
    let e = strict::parse_value::<StreamResponse>(
        json!({"task": t, "message": {"messageId": "m", "role": 1, "parts": [{"text": "a"}]}}),
    )
    .unwrap_err();
    assert!(e.message.contains("has both"), "{e}");
    let e = strict::parse_value::<SendMessageResponse>(json!({})).unwrap_err();
    assert!(e.message.contains("needs one of"), "{e}");
    let e = strict::parse_value::<SecurityScheme>(
        json!({"oauth2SecurityScheme": {"flows": {"deviceCode": {"tokenUrl": 5}}}}),
    )
    .unwrap_err();
    assert_eq!(e.path, "oauth2SecurityScheme.flows.deviceCode.tokenUrl");
}
