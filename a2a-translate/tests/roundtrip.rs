//! Property tests: inside the carried intersection, `to_v1(to_v03(x)) == x` and
//! `to_v03(to_v1(y)) == y` for every type; outside it, the refusal path is asserted.

use std::collections::BTreeMap;

use a2a_translate::{Method, Policy, StreamTranslator, V1Request, V1Result, to_v1, to_v03};
use a2a_types::binary::Base64Bytes;
use a2a_types::timestamp::Timestamp;
use a2a_types::{v1, v03};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Value};

const S: Policy = Policy::Strict;

fn ident() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,8}"
}

fn json() -> impl Strategy<Value = Value> {
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

fn object() -> impl Strategy<Value = Map<String, Value>> {
    btree_map("[a-z]{1,5}", json(), 0..3).prop_map(|m| m.into_iter().collect())
}

/// Metadata that survives every path: absent or a non-empty map without the reserved key.
fn metadata() -> impl Strategy<Value = Option<Map<String, Value>>> {
    option::of(btree_map("[a-z]{1,5}", json(), 1..3).prop_map(|m| m.into_iter().collect()))
}

fn timestamp() -> impl Strategy<Value = Timestamp> {
    (0i64..4_000_000_000).prop_map(|s| Timestamp::from_unix_seconds(s).unwrap())
}

// ------------------------------------------------------------------------------- 1.0 values

fn v1_part() -> impl Strategy<Value = v1::Part> {
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

fn v1_message() -> impl Strategy<Value = v1::Message> {
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

fn v1_state() -> impl Strategy<Value = v1::TaskState> {
    proptest::sample::select(v1::TaskState::ALL.to_vec())
}

fn v1_status() -> impl Strategy<Value = v1::TaskStatus> {
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

fn v1_artifact() -> impl Strategy<Value = v1::Artifact> {
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

fn v1_task() -> impl Strategy<Value = v1::Task> {
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

fn v1_event() -> impl Strategy<Value = v1::StreamResponse> {
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

fn v1_auth() -> impl Strategy<Value = v1::AuthenticationInfo> {
    ("[A-Z][a-z]{2,6}", option::of("[a-z0-9]{1,8}")).prop_map(|(scheme, credentials)| {
        v1::AuthenticationInfo {
            scheme,
            credentials,
        }
    })
}

fn v1_push(task: bool) -> impl Strategy<Value = v1::TaskPushNotificationConfig> {
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

fn v1_send() -> impl Strategy<Value = v1::SendMessageRequest> {
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

fn v1_request() -> impl Strategy<Value = V1Request> {
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

fn scopes() -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map("[a-z]{1,5}", "[A-Za-z ]{0,6}", 0..3)
}

fn v1_scheme() -> impl Strategy<Value = v1::SecurityScheme> {
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

fn v1_requirement() -> impl Strategy<Value = v1::SecurityRequirement> {
    btree_map("[a-z]{1,4}", vec("[a-z]{1,4}", 0..2), 1..3).prop_map(|m| v1::SecurityRequirement {
        schemes: m
            .into_iter()
            .map(|(k, list)| (k, v1::StringList { list }))
            .collect(),
    })
}

fn v1_card() -> impl Strategy<Value = v1::AgentCard> {
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

fn v03_part() -> impl Strategy<Value = v03::Part> {
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

fn v03_message() -> impl Strategy<Value = v03::Message> {
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

fn v03_status() -> impl Strategy<Value = v03::TaskStatus> {
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

fn v03_task() -> impl Strategy<Value = v03::Task> {
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

fn v03_push() -> impl Strategy<Value = v03::TaskPushNotificationConfig> {
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn v1_part_round_trips(p in v1_part()) {
        // Text and data parts with a filename/mediaType are outside the intersection.
        let carried = matches!(p.content, v1::PartContent::Raw(_) | v1::PartContent::Url(_))
            || (p.filename.is_none() && p.media_type.is_none());
        match to_v03::part(p.clone(), S) {
            Ok(o) => { prop_assert!(carried); prop_assert_eq!(to_v1::part(o).unwrap(), p); }
            Err(e) => {
                prop_assert!(!carried);
                prop_assert!(e.path == "filename" || e.path == "mediaType", "{}", e);
            }
        }
    }

    #[test]
    fn v1_message_round_trips(mut m in v1_message()) {
        for p in &mut m.parts {
            if matches!(p.content, v1::PartContent::Text(_) | v1::PartContent::Data(_)) {
                p.filename = None;
                p.media_type = None;
            }
        }
        prop_assert_eq!(to_v1::message(to_v03::message(m.clone(), S).unwrap()).unwrap(), m);
    }

    #[test]
    fn v1_text_part_with_filename_is_refused_at_its_path(mut m in v1_message(), i in 0usize..3) {
        let i = i % m.parts.len();
        m.parts[i] = v1::Part::text("x").with_filename("f.txt");
        let e = to_v03::message(m, S).unwrap_err();
        prop_assert_eq!(e.path, format!("parts[{i}].filename"));
    }

    #[test]
    fn v1_task_round_trips(t in v1_task().prop_map(strip_task)) {
        prop_assert_eq!(to_v1::task(to_v03::task(t.clone(), S).unwrap()).unwrap(), t);
    }

    #[test]
    fn v1_task_without_context_is_refused(mut t in v1_task().prop_map(strip_task)) {
        t.context_id = None;
        prop_assert_eq!(to_v03::task(t, S).unwrap_err().path, "contextId");
    }

    #[test]
    fn v1_stream_event_round_trips(e in v1_event().prop_map(strip_event)) {
        prop_assert_eq!(to_v1::stream_event(to_v03::stream_event(e.clone(), S).unwrap()).unwrap(), e);
    }

    #[test]
    fn v1_push_config_round_trips(c in v1_push(true)) {
        prop_assert_eq!(to_v1::task_push_config(to_v03::task_push_config(c.clone(), S).unwrap(), S).unwrap(), c);
    }

    #[test]
    fn v1_tenant_is_refused(mut c in v1_push(true), t in ident()) {
        c.tenant = Some(t);
        prop_assert_eq!(to_v03::task_push_config(c, S).unwrap_err().path, "tenant");
    }

    #[test]
    fn v1_request_round_trips(r in v1_request().prop_map(strip_request)) {
        let back = to_v1::request(to_v03::request(r.clone(), S).unwrap(), S).unwrap();
        prop_assert_eq!(back, r);
    }

    #[test]
    fn v1_results_round_trip(t in v1_task().prop_map(strip_task), cs in vec(v1_push(true), 0..3)) {
        for r in [
            V1Result::SendMessage(v1::SendMessageResponse::Task(t.clone())),
            V1Result::Task(t.clone()),
            V1Result::PushConfigList(v1::ListTaskPushNotificationConfigsResponse { configs: cs.clone(), next_page_token: None }),
            V1Result::Deleted(v1::Empty {}),
        ] {
            let back = to_v1::result(to_v03::result(r.clone(), S).unwrap(), S).unwrap();
            prop_assert_eq!(back, r);
        }
    }

    #[test]
    fn v1_card_round_trips(c in v1_card()) {
        let t = to_v03::card(c.clone(), S).unwrap();
        prop_assert!(t.omitted.is_empty(), "{:?}", t.omitted);
        let back = to_v1::card(t.card, S).unwrap();
        prop_assert!(back.omitted.is_empty());
        prop_assert_eq!(back.card, c);
    }

    #[test]
    fn v1_card_device_code_scheme_is_left_out_with_its_requirements(c in v1_card()) {
        let mut c = c;
        c.security_schemes.insert("zz-dev".into(), v1::SecurityScheme::Oauth2SecurityScheme(v1::OAuth2SecurityScheme {
            description: None,
            flows: v1::OAuthFlows::DeviceCode(v1::DeviceCodeOAuthFlow {
                device_authorization_url: "https://id.example/d".into(),
                token_url: "https://id.example/t".into(),
                refresh_url: None,
                scopes: BTreeMap::new(),
            }),
            oauth2_metadata_url: None,
        }));
        c.security_requirements.push(v1::SecurityRequirement::scheme("zz-dev", vec![]));
        let n = c.security_requirements.len();
        if n == 1 {
            // Leaving out the only requirement would advertise an open agent: refused.
            prop_assert_eq!(to_v03::card(c, S).unwrap_err().path, "securityRequirements");
            return Ok(());
        }
        let t = to_v03::card(c, S).unwrap();
        prop_assert_eq!(&t.omitted[0].path, "securitySchemes.zz-dev");
        let want = format!("securityRequirements[{}]", n - 1);
        prop_assert!(t.omitted.iter().any(|o| o.path == want));
        prop_assert!(!t.card.security_schemes.unwrap_or_default().contains_key("zz-dev"));
    }

    #[test]
    fn v03_message_round_trips(m in v03_message()) {
        prop_assert_eq!(to_v03::message(to_v1::message(m.clone()).unwrap(), S).unwrap(), m);
    }

    #[test]
    fn v03_task_round_trips(t in v03_task()) {
        prop_assert_eq!(to_v03::task(to_v1::task(t.clone()).unwrap(), S).unwrap(), t);
    }

    #[test]
    fn v03_push_config_round_trips(c in v03_push()) {
        prop_assert_eq!(to_v03::task_push_config(to_v1::task_push_config(c.clone(), S).unwrap(), S).unwrap(), c);
    }

    #[test]
    fn v03_two_schemes_are_refused(mut c in v03_push(), extra in "[A-Z][a-z]{2,5}") {
        let auth = c.push_notification_config.authentication.get_or_insert(v03::PushNotificationAuthenticationInfo { schemes: vec!["Bearer".into()], credentials: None });
        auth.schemes.push(extra);
        let e = to_v1::task_push_config(c, S).unwrap_err();
        prop_assert_eq!(e.path, "pushNotificationConfig.authentication.schemes");
    }

    #[test]
    fn v03_request_metadata_is_refused_on_get(id in ident(), md in metadata().prop_filter("some", Option::is_some)) {
        let r = a2a_translate::V03Request::GetTask(v03::TaskQueryParams { id, history_length: None, metadata: md });
        prop_assert_eq!(to_v1::request(r, S).unwrap_err().path, "params.metadata");
    }

    #[test]
    fn v03_error_data_round_trips(code in prop_oneof![Just(-32001i64), Just(-32004), Just(-32602), Just(-32603)], data in option::of(json())) {
        let e = a2a_translate::ErrorObject { code, message: "m".into(), data };
        let back = to_v03::error(to_v1::error(e.clone()));
        prop_assert_eq!(back, e);
    }

    #[test]
    fn stream_translator_marks_exactly_the_last_status_final(events in vec(v1_event().prop_map(strip_event), 1..8)) {
        let mut st = StreamTranslator::new(S);
        let mut out = Vec::new();
        for e in events.clone() {
            out.extend(st.push(e).unwrap());
        }
        out.extend(st.finish());
        prop_assert_eq!(out.len(), events.len());
        let last_status = events.iter().rposition(|e| matches!(e, v1::StreamResponse::StatusUpdate(_)));
        for (i, (o, e)) in out.iter().zip(&events).enumerate() {
            if let (v03::StreamResult::StatusUpdate(s), v1::StreamResponse::StatusUpdate(src)) = (o, e) {
                let state = src.status.state;
                let want = state.is_terminal() || (state.is_interrupted() && Some(i) == last_status && i + 1 == events.len());
                prop_assert_eq!(s.is_final, want, "event {} state {:?}", i, state);
            }
        }
    }
    #[test]
    fn v1_values_round_trip_through_the_rest_dialect(
        m in v1_message().prop_map(strip_message),
        t in v1_task().prop_map(strip_task),
        e in v1_event().prop_map(strip_event),
        c in v1_push(true).prop_map(|mut c| { c.id.get_or_insert_with(|| "p-1".into()); c }),
        send in v1_send(),
    ) {
        use a2a_translate::to_v03::rest as o;
        use a2a_translate::to_v1::rest as i;
        fn no_refs(mut m: v1::Message) -> v1::Message { m.reference_task_ids.clear(); m }
        let m = no_refs(m);
        prop_assert_eq!(i::message(o::message(m.clone(), S).unwrap(), S).unwrap(), m);
        let mut t = t;
        t.history = t.history.into_iter().map(no_refs).collect();
        t.status.message = t.status.message.map(no_refs);
        prop_assert_eq!(i::task(o::task(t.clone(), S).unwrap(), S).unwrap(), t);
        let e = match e {
            v1::StreamResponse::Task(mut t) => {
                t.history = t.history.into_iter().map(no_refs).collect();
                t.status.message = t.status.message.map(no_refs);
                v1::StreamResponse::Task(t)
            }
            v1::StreamResponse::Message(m) => v1::StreamResponse::Message(no_refs(m)),
            v1::StreamResponse::StatusUpdate(mut s) => {
                s.status.message = s.status.message.map(no_refs);
                v1::StreamResponse::StatusUpdate(s)
            }
            other => other,
        };
        prop_assert_eq!(i::stream_event(o::stream_event(e.clone(), S).unwrap(), S).unwrap(), e);
        prop_assert_eq!(i::task_push_config(o::task_push_config(c.clone(), S).unwrap(), S).unwrap(), c);
        // REST send options: blocking is always explicit and historyLength 0 means unlimited.
        let mut send = strip_request(V1Request::SendMessage(send));
        if let V1Request::SendMessage(r) = &mut send {
            r.message = no_refs(r.message.clone());
            if let Some(cfg) = &mut r.configuration {
                cfg.return_immediately = Some(cfg.return_immediately.unwrap_or(false));
                if cfg.history_length == Some(0) { cfg.history_length = None; }
            }
        }
        let V1Request::SendMessage(send) = send else { unreachable!() };
        prop_assert_eq!(i::send_message_request(o::send_message_request(send.clone(), S).unwrap(), S).unwrap(), send);
    }

    #[test]
    fn rest_refuses_reference_task_ids(mut m in v1_message().prop_map(strip_message), r in ident()) {
        m.reference_task_ids.push(r);
        prop_assert_eq!(a2a_translate::to_v03::rest::message(m, S).unwrap_err().path, "referenceTaskIds");
    }
}

/// Removes what is outside the intersection from generated messages (filename/mediaType on
/// text and data parts; referenceTaskIds are carried by the JSON-RPC dialect).
fn strip_message(mut m: v1::Message) -> v1::Message {
    for p in &mut m.parts {
        if matches!(
            p.content,
            v1::PartContent::Text(_) | v1::PartContent::Data(_)
        ) {
            p.filename = None;
            p.media_type = None;
        }
    }
    m
}

fn strip_parts(parts: &mut [v1::Part]) {
    for p in parts {
        if matches!(
            p.content,
            v1::PartContent::Text(_) | v1::PartContent::Data(_)
        ) {
            p.filename = None;
            p.media_type = None;
        }
    }
}

fn strip_task(mut t: v1::Task) -> v1::Task {
    t.history = t.history.into_iter().map(strip_message).collect();
    t.status.message = t.status.message.map(strip_message);
    for a in &mut t.artifacts {
        strip_parts(&mut a.parts);
    }
    t
}

fn strip_event(e: v1::StreamResponse) -> v1::StreamResponse {
    match e {
        v1::StreamResponse::Task(t) => v1::StreamResponse::Task(strip_task(t)),
        v1::StreamResponse::Message(m) => v1::StreamResponse::Message(strip_message(m)),
        v1::StreamResponse::StatusUpdate(mut s) => {
            s.status.message = s.status.message.map(strip_message);
            v1::StreamResponse::StatusUpdate(s)
        }
        v1::StreamResponse::ArtifactUpdate(mut a) => {
            strip_parts(&mut a.artifact.parts);
            v1::StreamResponse::ArtifactUpdate(a)
        }
    }
}

fn strip_request(r: V1Request) -> V1Request {
    match r {
        V1Request::SendMessage(mut s) => {
            s.message = strip_message(s.message);
            V1Request::SendMessage(s)
        }
        V1Request::SendStreamingMessage(mut s) => {
            s.message = strip_message(s.message);
            V1Request::SendStreamingMessage(s)
        }
        other => other,
    }
}

#[test]
fn method_names_map_both_ways() {
    for m in Method::ALL {
        assert_eq!(Method::from_v1_name(m.v1_name()), Some(m));
        if let Some(n) = m.v03_name() {
            assert_eq!(Method::from_v03_name(n), Some(m));
        } else {
            assert_eq!(m, Method::ListTasks);
        }
    }
}

#[test]
fn base64_text_is_kept_verbatim() {
    // Unpadded and URL-safe base64 must come back byte-identical (H6).
    for b in ["AAE", "-_8=", "aGk="] {
        let p = v1::Part::raw_base64(Base64Bytes::new(b).unwrap());
        let o = to_v03::part(p.clone(), S).unwrap();
        let j = serde_json::to_value(&o).unwrap();
        assert_eq!(j["file"]["bytes"], b);
        assert_eq!(to_v1::part(o).unwrap(), p);
    }
}
