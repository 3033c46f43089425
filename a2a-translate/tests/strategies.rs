//! Proptest strategies for the 1.0 and 0.3 models, shared by the round-trip properties in
//! `roundtrip.rs`: each yields values a strict parser accepts, covering every variant.

use std::collections::BTreeMap;

use a2a_translate::V1Request;
use a2a_types::timestamp::Timestamp;
use a2a_types::{v1, v03};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Value};

pub(crate) fn ident() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,8}"
}

pub(crate) fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[ -~]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map("[a-z]{1,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

pub(crate) fn object() -> impl Strategy<Value = Map<String, Value>> {
    btree_map("[a-z]{1,5}", json(), 0..3).prop_map(|m| m.into_iter().collect())
}

/// Metadata that survives every path: absent or a non-empty map without the reserved key.
pub(crate) fn metadata() -> impl Strategy<Value = Option<Map<String, Value>>> {
    option::of(btree_map("[a-z]{1,5}", json(), 1..3).prop_map(|m| m.into_iter().collect()))
}

pub(crate) fn timestamp() -> impl Strategy<Value = Timestamp> {
    (0i64..4_000_000_000).prop_map(|s| Timestamp::from_unix_seconds(s).unwrap())
}

// ------------------------------------------------------------------------------- 1.0 values

pub(crate) fn v1_part() -> impl Strategy<Value = v1::Part> {
    let text = "[ -~]{0,12}".prop_map(v1::Part::text);
    let raw = (
        vec(any::<u8>(), 0..12),
        option::of("[a-z]{1,6}\\.bin"),
        option::of("[a-z]+/[a-z]+"),
    )
        .prop_map(|(b, f, m)| v1::Part {
            filename: f,
            media_type: m,
            ..v1::Part::raw(b)
        });
    let url = (
        "https://[a-z]{1,6}\\.example/[a-z]{0,6}",
        option::of("[a-z]{1,6}"),
        option::of("[a-z]+/[a-z]+"),
    )
        .prop_map(|(u, f, m)| v1::Part {
            filename: f,
            media_type: m,
            ..v1::Part::url(u)
        });
    let data = json().prop_map(v1::Part::data);
    (prop_oneof![text, raw, url, data], metadata()).prop_map(|(mut p, md)| {
        p.metadata = md;
        p
    })
}

pub(crate) fn v1_message() -> impl Strategy<Value = v1::Message> {
    (
        ident(),
        option::of(ident()),
        option::of(ident()),
        prop_oneof![Just(v1::Role::User), Just(v1::Role::Agent)],
        vec(v1_part(), 1..4),
        metadata(),
        vec("https://x\\.example/[a-z]{1,4}", 0..2),
        vec(ident(), 0..2),
    )
        .prop_map(
            |(id, ctx, task, role, parts, metadata, extensions, refs)| v1::Message {
                message_id: id,
                context_id: ctx,
                task_id: task,
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids: refs,
            },
        )
}

pub(crate) fn v1_state() -> impl Strategy<Value = v1::TaskState> {
    proptest::sample::select(v1::TaskState::ALL.to_vec())
}

pub(crate) fn v1_status() -> impl Strategy<Value = v1::TaskStatus> {
    (
        v1_state(),
        option::of(v1_message()),
        option::of(timestamp()),
    )
        .prop_map(|(state, message, timestamp)| v1::TaskStatus {
            state,
            message,
            timestamp,
        })
}

pub(crate) fn v1_artifact() -> impl Strategy<Value = v1::Artifact> {
    (
        ident(),
        option::of("[a-z ]{0,8}"),
        option::of("[a-z ]{0,8}"),
        vec(v1_part(), 1..3),
        metadata(),
        vec(ident(), 0..2),
    )
        .prop_map(
            |(id, name, description, parts, metadata, extensions)| v1::Artifact {
                artifact_id: id,
                name,
                description,
                parts,
                metadata,
                extensions,
            },
        )
}

pub(crate) fn v1_task() -> impl Strategy<Value = v1::Task> {
    (
        ident(),
        ident(),
        v1_status(),
        vec(v1_artifact(), 0..2),
        vec(v1_message(), 0..2),
        metadata(),
    )
        .prop_map(|(id, ctx, status, artifacts, history, metadata)| v1::Task {
            id,
            context_id: Some(ctx),
            status,
            artifacts,
            history,
            metadata,
        })
}

pub(crate) fn v1_event() -> impl Strategy<Value = v1::StreamResponse> {
    prop_oneof![
        v1_task().prop_map(v1::StreamResponse::Task),
        v1_message().prop_map(v1::StreamResponse::Message),
        (ident(), ident(), v1_status(), metadata()).prop_map(|(t, c, s, m)| {
            v1::StreamResponse::StatusUpdate(v1::TaskStatusUpdateEvent {
                task_id: t,
                context_id: c,
                status: s,
                metadata: m,
            })
        }),
        (
            ident(),
            ident(),
            v1_artifact(),
            option::of(any::<bool>()),
            option::of(any::<bool>()),
            metadata()
        )
            .prop_map(|(t, c, a, append, last, m)| {
                v1::StreamResponse::ArtifactUpdate(v1::TaskArtifactUpdateEvent {
                    task_id: t,
                    context_id: c,
                    artifact: a,
                    append,
                    last_chunk: last,
                    metadata: m,
                })
            }),
    ]
}

pub(crate) fn v1_auth() -> impl Strategy<Value = v1::AuthenticationInfo> {
    ("[A-Z][a-z]{2,6}", option::of("[a-z0-9]{1,8}")).prop_map(|(scheme, credentials)| {
        v1::AuthenticationInfo {
            scheme,
            credentials,
        }
    })
}

pub(crate) fn v1_push(task: bool) -> impl Strategy<Value = v1::TaskPushNotificationConfig> {
    (
        option::of(ident()),
        ident(),
        "https://hook\\.example/[a-z]{0,6}",
        option::of(ident()),
        option::of(v1_auth()),
    )
        .prop_map(move |(id, task_id, url, token, authentication)| {
            v1::TaskPushNotificationConfig {
                tenant: None,
                id,
                task_id: task.then_some(task_id),
                url,
                token,
                authentication,
            }
        })
}

pub(crate) fn v1_send() -> impl Strategy<Value = v1::SendMessageRequest> {
    let cfg = (
        vec("[a-z]+/[a-z]+", 0..2),
        option::of(v1_push(false)),
        option::of(1i32..50),
        option::of(any::<bool>()),
    )
        .prop_map(|(modes, push, h, ri)| v1::SendMessageConfiguration {
            accepted_output_modes: modes,
            task_push_notification_config: push,
            history_length: h,
            return_immediately: ri,
        });
    (v1_message(), option::of(cfg), metadata()).prop_map(|(message, configuration, metadata)| {
        v1::SendMessageRequest {
            tenant: None,
            message,
            configuration,
            metadata,
        }
    })
}

pub(crate) fn v1_request() -> impl Strategy<Value = V1Request> {
    prop_oneof![
        v1_send().prop_map(V1Request::SendMessage),
        v1_send().prop_map(V1Request::SendStreamingMessage),
        (ident(), option::of(1i32..9)).prop_map(|(id, h)| V1Request::GetTask(v1::GetTaskRequest {
            tenant: None,
            id,
            history_length: h
        })),
        (ident(), metadata()).prop_map(|(id, m)| V1Request::CancelTask(v1::CancelTaskRequest {
            tenant: None,
            id,
            metadata: m
        })),
        ident().prop_map(|id| V1Request::SubscribeToTask(v1::SubscribeToTaskRequest::new(id))),
        v1_push(true).prop_map(V1Request::CreateTaskPushNotificationConfig),
        (ident(), ident()).prop_map(|(t, id)| V1Request::GetTaskPushNotificationConfig(
            v1::GetTaskPushNotificationConfigRequest {
                tenant: None,
                task_id: t,
                id
            }
        )),
        ident().prop_map(|t| V1Request::ListTaskPushNotificationConfigs(
            v1::ListTaskPushNotificationConfigsRequest {
                tenant: None,
                task_id: t,
                page_size: None,
                page_token: None
            }
        )),
        (ident(), ident()).prop_map(|(t, id)| V1Request::DeleteTaskPushNotificationConfig(
            v1::DeleteTaskPushNotificationConfigRequest {
                tenant: None,
                task_id: t,
                id
            }
        )),
        Just(V1Request::GetExtendedAgentCard(
            v1::GetExtendedAgentCardRequest { tenant: None }
        )),
    ]
}

pub(crate) fn scopes() -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map("[a-z]{1,5}", "[A-Za-z ]{0,6}", 0..3)
}

pub(crate) fn v1_scheme() -> impl Strategy<Value = v1::SecurityScheme> {
    let url = || "https://id\\.example/[a-z]{1,5}";
    let flows = prop_oneof![
        (
            url(),
            url(),
            option::of(url()),
            scopes(),
            option::of(Just(false))
        )
            .prop_map(|(a, t, r, s, p)| {
                v1::OAuthFlows::AuthorizationCode(v1::AuthorizationCodeOAuthFlow {
                    authorization_url: a,
                    token_url: t,
                    refresh_url: r,
                    scopes: s,
                    pkce_required: p.filter(|_| false),
                })
            }),
        (url(), option::of(url()), scopes()).prop_map(|(t, r, s)| {
            v1::OAuthFlows::ClientCredentials(v1::ClientCredentialsOAuthFlow {
                token_url: t,
                refresh_url: r,
                scopes: s,
            })
        }),
        (url(), option::of(url()), scopes()).prop_map(|(a, r, s)| v1::OAuthFlows::Implicit(
            v1::ImplicitOAuthFlow {
                authorization_url: Some(a),
                refresh_url: r,
                scopes: s
            }
        )),
        (url(), option::of(url()), scopes()).prop_map(|(t, r, s)| v1::OAuthFlows::Password(
            v1::PasswordOAuthFlow {
                token_url: Some(t),
                refresh_url: r,
                scopes: s
            }
        )),
    ];
    let desc = || option::of("[a-z ]{0,8}");
    prop_oneof![
        (
            desc(),
            proptest::sample::select(vec!["header", "query", "cookie"]),
            "[A-Za-z-]{1,8}"
        )
            .prop_map(|(d, l, n)| {
                v1::SecurityScheme::ApiKeySecurityScheme(v1::ApiKeySecurityScheme {
                    description: d,
                    location: l.into(),
                    name: n,
                })
            }),
        (desc(), "[A-Za-z]{3,7}", option::of("[A-Z]{3}")).prop_map(|(d, s, b)| {
            v1::SecurityScheme::HttpAuthSecurityScheme(v1::HttpAuthSecurityScheme {
                description: d,
                scheme: s,
                bearer_format: b,
            })
        }),
        (desc(), flows, option::of(url())).prop_map(|(d, f, m)| {
            v1::SecurityScheme::Oauth2SecurityScheme(v1::OAuth2SecurityScheme {
                description: d,
                flows: f,
                oauth2_metadata_url: m,
            })
        }),
        (desc(), url()).prop_map(|(d, u)| v1::SecurityScheme::OpenIdConnectSecurityScheme(
            v1::OpenIdConnectSecurityScheme {
                description: d,
                open_id_connect_url: u
            }
        )),
        desc().prop_map(
            |d| v1::SecurityScheme::MtlsSecurityScheme(v1::MutualTlsSecurityScheme {
                description: d
            })
        ),
    ]
}

pub(crate) fn v1_requirement() -> impl Strategy<Value = v1::SecurityRequirement> {
    btree_map("[a-z]{1,4}", vec("[a-z]{1,4}", 0..2), 1..3).prop_map(|m| v1::SecurityRequirement {
        schemes: m
            .into_iter()
            .map(|(k, list)| (k, v1::StringList { list }))
            .collect(),
    })
}

pub(crate) fn v1_card() -> impl Strategy<Value = v1::AgentCard> {
    let itf = (
        "https://a\\.example/[a-z]{0,4}",
        proptest::sample::select(vec!["JSONRPC", "HTTP+JSON", "GRPC"]),
    )
        .prop_map(|(u, b)| v1::AgentInterface::new(u, b, "0.3"));
    let skill = (
        ident(),
        "[a-z ]{1,8}",
        "[a-z ]{1,8}",
        vec(ident(), 0..2),
        vec("[a-z ]{1,6}", 0..2),
        vec(v1_requirement(), 0..2),
    )
        .prop_map(|(id, n, d, tags, ex, req)| v1::AgentSkill {
            examples: ex,
            security_requirements: req,
            ..v1::AgentSkill::new(id, n, d, tags)
        });
    let ext = (
        "https://ext\\.example/[a-z]{1,4}",
        option::of("[a-z ]{0,6}"),
        option::of(any::<bool>()),
        option::of(object()),
    )
        .prop_map(|(u, d, r, p)| v1::AgentExtension {
            uri: Some(u),
            description: d,
            required: r,
            params: p,
        });
    let caps = (
        option::of(any::<bool>()),
        option::of(any::<bool>()),
        vec(ext, 0..2),
        option::of(any::<bool>()),
    )
        .prop_map(|(s, p, e, x)| v1::AgentCapabilities {
            streaming: s,
            push_notifications: p,
            extensions: e,
            extended_agent_card: x,
            extra: Default::default(),
        });
    (
        (
            "[A-Za-z ]{1,8}",
            "[a-z ]{0,12}",
            vec(itf, 1..3),
            "[0-9]\\.[0-9]",
        ),
        caps,
        btree_map("[a-z]{1,4}", v1_scheme(), 0..3),
        vec(v1_requirement(), 0..2),
        vec(skill, 0..2),
        (
            option::of("https://i\\.example/[a-z]{1,4}"),
            option::of("https://d\\.example/[a-z]{1,4}"),
        ),
    )
        .prop_map(
            |((name, desc, itfs, version), caps, schemes, reqs, skills, (icon, docs))| {
                v1::AgentCard {
                    name,
                    description: desc,
                    supported_interfaces: itfs,
                    version,
                    capabilities: caps,
                    security_schemes: schemes,
                    security_requirements: reqs,
                    skills,
                    icon_url: icon,
                    documentation_url: docs,
                    default_input_modes: vec!["text/plain".into()],
                    default_output_modes: vec!["application/json".into()],
                    ..Default::default()
                }
            },
        )
}

// ------------------------------------------------------------------------------- 0.3 values

pub(crate) fn v03_part() -> impl Strategy<Value = v03::Part> {
    let md = metadata;
    prop_oneof![
        ("[ -~]{0,12}", md()).prop_map(|(t, m)| v03::Part::Text(v03::TextPart {
            text: t,
            metadata: m
        })),
        (
            vec(any::<u8>(), 0..12),
            option::of("[a-z]{1,6}"),
            option::of("[a-z]+/[a-z]+"),
            md()
        )
            .prop_map(|(b, n, mt, m): (Vec<u8>, _, _, _)| {
                let mut p = v03::Part::file_bytes(&b, n, mt);
                if let v03::Part::File(f) = &mut p {
                    f.metadata = m;
                }
                p
            }),
        (
            "https://[a-z]{1,6}\\.example/",
            option::of("[a-z]+/[a-z]+"),
            md()
        )
            .prop_map(|(u, mt, m)| {
                let mut p = v03::Part::file_uri(u, mt);
                if let v03::Part::File(f) = &mut p {
                    f.metadata = m;
                }
                p
            }),
        (object(), md()).prop_map(|(d, m)| v03::Part::Data(v03::DataPart {
            data: d,
            metadata: m
        })),
        // The compat form: {"value": non-object} with the flag (and maybe more metadata).
        (json().prop_filter("non-object", |v| !v.is_object()), md()).prop_map(|(v, m)| {
            let mut meta = m.unwrap_or_default();
            meta.insert("data_part_compat".into(), Value::Bool(true));
            let mut data = Map::new();
            data.insert("value".into(), v);
            v03::Part::Data(v03::DataPart {
                data,
                metadata: Some(meta),
            })
        }),
    ]
}

pub(crate) fn v03_message() -> impl Strategy<Value = v03::Message> {
    (
        ident(),
        prop_oneof![Just(v03::Role::User), Just(v03::Role::Agent)],
        vec(v03_part(), 1..4),
        option::of(ident()),
        option::of(ident()),
        option::of(vec(ident(), 1..3)),
        option::of(vec(ident(), 1..2)),
        metadata(),
    )
        .prop_map(|(id, role, parts, ctx, task, refs, exts, md)| {
            let mut m = v03::Message::new(role, id, parts);
            m.context_id = ctx;
            m.task_id = task;
            m.reference_task_ids = refs;
            m.extensions = exts;
            m.metadata = md;
            m
        })
}

pub(crate) fn v03_status() -> impl Strategy<Value = v03::TaskStatus> {
    (
        proptest::sample::select(v03::TaskState::ALL.to_vec()),
        option::of(v03_message()),
        option::of(timestamp()),
    )
        .prop_map(|(state, message, ts)| v03::TaskStatus {
            state,
            message,
            timestamp: ts.map(|t| t.as_str().to_owned()),
        })
}

pub(crate) fn v03_task() -> impl Strategy<Value = v03::Task> {
    (
        ident(),
        ident(),
        v03_status(),
        option::of(vec(v03_message(), 1..3)),
        metadata(),
    )
        .prop_map(|(id, ctx, status, history, md)| {
            let mut t = v03::Task::new(id, ctx, status.state);
            t.status = status;
            t.history = history;
            t.metadata = md;
            t
        })
}

pub(crate) fn v03_push() -> impl Strategy<Value = v03::TaskPushNotificationConfig> {
    (
        ident(),
        option::of(ident()),
        "https://hook\\.example/[a-z]{0,4}",
        option::of(ident()),
        option::of(("[A-Z][a-z]{2,5}", option::of(ident()))),
    )
        .prop_map(
            |(task_id, id, url, token, auth)| v03::TaskPushNotificationConfig {
                task_id,
                push_notification_config: v03::PushNotificationConfig {
                    url,
                    id,
                    token,
                    authentication: auth.map(|(s, c)| v03::PushNotificationAuthenticationInfo {
                        schemes: vec![s],
                        credentials: c,
                    }),
                },
            },
        )
}
