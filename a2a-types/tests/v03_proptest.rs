//! Property tests: serialize -> parse round trips for generated values of every top-level type of
//! both 0.3 dialects (JSON-RPC and HTTP+JSON).

use std::collections::BTreeMap;

use a2a_types::v03::{self as j, rest as r};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::Value;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    }
}

/// Serializes to text, parses back and compares; also checks the JSON value is stable.
fn round_trip<T>(value: &T) -> Result<(), TestCaseError>
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let text = serde_json::to_string(value).unwrap();
    let back: T =
        serde_json::from_str(&text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
    prop_assert_eq!(&back, value, "text: {}", text);
    prop_assert_eq!(serde_json::to_string(&back).unwrap(), text);
    Ok(())
}

fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_-]{1,12}"
}

fn text() -> impl Strategy<Value = String> {
    any::<String>().prop_map(|s| s.chars().take(24).collect())
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::Array),
            btree_map(ident(), inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn metadata() -> impl Strategy<Value = serde_json::Map<String, Value>> {
    btree_map(ident(), json_value(), 0..3).prop_map(|m| m.into_iter().collect())
}

fn opt_metadata() -> impl Strategy<Value = Option<serde_json::Map<String, Value>>> {
    option::of(metadata())
}

fn strings() -> impl Strategy<Value = Vec<String>> {
    vec(ident(), 0..3)
}

fn base64_text() -> impl Strategy<Value = String> {
    vec(any::<u8>(), 0..16).prop_map(|b| a2a_types::binary::Base64Bytes::encode(b).into_string())
}

// ----------------------------------------------------------------------------------------------
// JSON-RPC dialect
// ----------------------------------------------------------------------------------------------

fn j_part() -> impl Strategy<Value = j::Part> {
    prop_oneof![
        (text(), opt_metadata())
            .prop_map(|(text, metadata)| j::Part::Text(j::TextPart { text, metadata })),
        (
            base64_text(),
            option::of(ident()),
            option::of(ident()),
            opt_metadata()
        )
            .prop_map(
                |(bytes, name, mime_type, metadata)| j::Part::File(j::FilePart {
                    file: j::FileContent::Bytes(j::FileWithBytes {
                        bytes,
                        name,
                        mime_type
                    }),
                    metadata
                })
            ),
        (ident(), option::of(ident()), option::of(ident())).prop_map(|(uri, name, mime_type)| {
            j::Part::File(j::FilePart {
                file: j::FileContent::Uri(j::FileWithUri {
                    uri,
                    name,
                    mime_type,
                }),
                metadata: None,
            })
        }),
        (metadata(), opt_metadata())
            .prop_map(|(data, metadata)| j::Part::Data(j::DataPart { data, metadata })),
    ]
}

fn j_role() -> impl Strategy<Value = j::Role> {
    prop_oneof![Just(j::Role::User), Just(j::Role::Agent)]
}

fn j_state() -> impl Strategy<Value = j::TaskState> {
    proptest::sample::select(j::TaskState::ALL.to_vec())
}

prop_compose! {
    fn j_message()(
        message_id in ident(), role in j_role(), parts in vec(j_part(), 0..3),
        context_id in option::of(ident()), task_id in option::of(ident()),
        reference_task_ids in option::of(strings()), extensions in option::of(strings()),
        metadata in opt_metadata(),
    ) -> j::Message {
        let mut m = j::Message::new(role, message_id, parts);
        m.context_id = context_id;
        m.task_id = task_id;
        m.reference_task_ids = reference_task_ids;
        m.extensions = extensions;
        m.metadata = metadata;
        m
    }
}

prop_compose! {
    fn j_status()(state in j_state(), message in option::of(j_message()),
        timestamp in option::of(prop_oneof![
            Just("2025-04-02T16:59:25.331844".to_owned()),
            Just("2024-03-15T10:10:00Z".to_owned()),
            ident(),
        ])) -> j::TaskStatus {
        j::TaskStatus { state, message, timestamp }
    }
}

prop_compose! {
    fn j_artifact()(artifact_id in ident(), parts in vec(j_part(), 0..3),
        name in option::of(text()), description in option::of(text()),
        extensions in option::of(strings()), metadata in opt_metadata()) -> j::Artifact {
        j::Artifact { artifact_id, parts, name, description, extensions, metadata }
    }
}

prop_compose! {
    fn j_task()(id in ident(), context_id in ident(), status in j_status(),
        artifacts in option::of(vec(j_artifact(), 0..2)),
        history in option::of(vec(j_message(), 0..2)), metadata in opt_metadata()) -> j::Task {
        let mut t = j::Task::new(id, context_id, status.state);
        t.status = status;
        t.artifacts = artifacts;
        t.history = history;
        t.metadata = metadata;
        t
    }
}

prop_compose! {
    fn j_status_event()(task_id in ident(), context_id in ident(), status in j_status(),
        is_final in any::<bool>(), metadata in opt_metadata()) -> j::TaskStatusUpdateEvent {
        let mut e = j::TaskStatusUpdateEvent::new(task_id, context_id, status, is_final);
        e.metadata = metadata;
        e
    }
}

prop_compose! {
    fn j_artifact_event()(task_id in ident(), context_id in ident(), artifact in j_artifact(),
        append in option::of(any::<bool>()), last_chunk in option::of(any::<bool>()),
        metadata in opt_metadata()) -> j::TaskArtifactUpdateEvent {
        let mut e = j::TaskArtifactUpdateEvent::new(task_id, context_id, artifact);
        e.append = append;
        e.last_chunk = last_chunk;
        e.metadata = metadata;
        e
    }
}

prop_compose! {
    fn j_push_config()(url in ident(), id in option::of(ident()), token in option::of(ident()),
        authentication in option::of((strings(), option::of(ident())).prop_map(|(schemes, credentials)|
            j::PushNotificationAuthenticationInfo { schemes, credentials }))) -> j::PushNotificationConfig {
        j::PushNotificationConfig { url, id, token, authentication }
    }
}

prop_compose! {
    fn j_send_params()(message in j_message(), configuration in option::of(
        (option::of(strings()), option::of(any::<bool>()), option::of(any::<i32>()), option::of(j_push_config()))
            .prop_map(|(accepted_output_modes, blocking, history_length, push_notification_config)|
                j::MessageSendConfiguration { accepted_output_modes, blocking, history_length, push_notification_config })),
        metadata in opt_metadata()) -> j::MessageSendParams {
        j::MessageSendParams { message, configuration, metadata }
    }
}

fn scopes() -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map(ident(), text(), 0..3)
}

fn j_security() -> impl Strategy<Value = Vec<j::SecurityRequirement>> {
    vec(btree_map(ident(), strings(), 0..3), 0..3)
}

fn j_scheme() -> impl Strategy<Value = j::SecurityScheme> {
    let loc = prop_oneof![
        Just(j::ApiKeyLocation::Cookie),
        Just(j::ApiKeyLocation::Header),
        Just(j::ApiKeyLocation::Query)
    ];
    let flows = (
        option::of((ident(), ident(), option::of(ident()), scopes()).prop_map(
            |(authorization_url, token_url, refresh_url, scopes)| j::AuthorizationCodeOAuthFlow {
                authorization_url,
                token_url,
                refresh_url,
                scopes,
            },
        )),
        option::of((ident(), option::of(ident()), scopes()).prop_map(
            |(token_url, refresh_url, scopes)| j::ClientCredentialsOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            },
        )),
        option::of((ident(), option::of(ident()), scopes()).prop_map(
            |(authorization_url, refresh_url, scopes)| j::ImplicitOAuthFlow {
                authorization_url,
                refresh_url,
                scopes,
            },
        )),
        option::of((ident(), option::of(ident()), scopes()).prop_map(
            |(token_url, refresh_url, scopes)| j::PasswordOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            },
        )),
    )
        .prop_map(
            |(authorization_code, client_credentials, implicit, password)| j::OAuthFlows {
                authorization_code,
                client_credentials,
                implicit,
                password,
            },
        );
    prop_oneof![
        (loc, ident(), option::of(text())).prop_map(|(location, name, description)| {
            j::SecurityScheme::ApiKey(j::ApiKeySecurityScheme {
                location,
                name,
                description,
            })
        }),
        (ident(), option::of(ident()), option::of(text())).prop_map(
            |(scheme, bearer_format, description)| {
                j::SecurityScheme::Http(j::HttpAuthSecurityScheme {
                    scheme,
                    bearer_format,
                    description,
                })
            }
        ),
        (flows, option::of(ident()), option::of(text())).prop_map(
            |(flows, oauth2_metadata_url, description)| {
                j::SecurityScheme::OAuth2(j::OAuth2SecurityScheme {
                    flows,
                    oauth2_metadata_url,
                    description,
                })
            }
        ),
        (ident(), option::of(text())).prop_map(|(open_id_connect_url, description)| {
            j::SecurityScheme::OpenIdConnect(j::OpenIdConnectSecurityScheme {
                open_id_connect_url,
                description,
            })
        }),
        option::of(text()).prop_map(|description| j::SecurityScheme::MutualTls(
            j::MutualTlsSecurityScheme { description }
        )),
    ]
}

prop_compose! {
    fn j_skill()(id in ident(), name in text(), description in text(), tags in strings(),
        examples in option::of(strings()), input_modes in option::of(strings()),
        output_modes in option::of(strings()), security in option::of(j_security()),
        extra in btree_map("x-[a-z]{1,6}", json_value(), 0..2)) -> j::AgentSkill {
        let mut s = j::AgentSkill::new(id, name, description, tags);
        s.examples = examples;
        s.input_modes = input_modes;
        s.output_modes = output_modes;
        s.security = security;
        s.extra = extra.into_iter().collect();
        s
    }
}

prop_compose! {
    fn j_card()(name in text(), description in text(), url in ident(), version in ident(),
        protocol_version in ident(), preferred_transport in option::of(ident()),
        additional_interfaces in option::of(vec((ident(), ident()).prop_map(|(url, transport)| j::AgentInterface { url, transport }), 0..3)),
        icon_url in option::of(ident()),
        provider in option::of((ident(), ident()).prop_map(|(organization, url)| j::AgentProvider { organization, url })),
        documentation_url in option::of(ident()),
        caps in (option::of(any::<bool>()), option::of(any::<bool>()), option::of(any::<bool>()),
            option::of(vec((ident(), option::of(text()), option::of(any::<bool>()), opt_metadata())
                .prop_map(|(uri, description, required, params)| j::AgentExtension { uri, description, required, params }), 0..2))),
        security_schemes in option::of(btree_map(ident(), j_scheme(), 0..3)),
        security in option::of(j_security()),
        default_input_modes in strings(), default_output_modes in strings(),
        skills in vec(j_skill(), 0..2),
        supports_authenticated_extended_card in option::of(any::<bool>()),
        signatures in option::of(vec((ident(), ident(), opt_metadata()).prop_map(|(protected, signature, header)|
            j::AgentCardSignature { protected, signature, header }), 0..2)),
        extra in btree_map("x-[a-z]{1,6}", json_value(), 0..2),
    ) -> j::AgentCard {
        let mut c = j::AgentCard::new(name, description, url, version);
        c.protocol_version = protocol_version;
        c.preferred_transport = preferred_transport;
        c.additional_interfaces = additional_interfaces;
        c.icon_url = icon_url;
        c.provider = provider;
        c.documentation_url = documentation_url;
        c.capabilities = j::AgentCapabilities {
            streaming: caps.0, push_notifications: caps.1, state_transition_history: caps.2,
            extensions: caps.3, extra: Default::default(),
        };
        c.security_schemes = security_schemes;
        c.security = security;
        c.default_input_modes = default_input_modes;
        c.default_output_modes = default_output_modes;
        c.skills = skills;
        c.supports_authenticated_extended_card = supports_authenticated_extended_card;
        c.signatures = signatures;
        c.extra = extra.into_iter().collect();
        c
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn jsonrpc_message(m in j_message()) { round_trip(&m)?; }

    #[test]
    fn jsonrpc_task(t in j_task()) { round_trip(&t)?; }

    #[test]
    fn jsonrpc_send_result(t in j_task(), m in j_message(), pick in any::<bool>()) {
        let r = if pick { j::SendMessageResult::Task(t) } else { j::SendMessageResult::Message(m) };
        round_trip(&r)?;
    }

    #[test]
    fn jsonrpc_stream_result(t in j_task(), m in j_message(), s in j_status_event(),
        a in j_artifact_event(), pick in 0..4u8) {
        let r = match pick {
            0 => j::StreamResult::Task(t),
            1 => j::StreamResult::Message(m),
            2 => j::StreamResult::StatusUpdate(s),
            _ => j::StreamResult::ArtifactUpdate(a),
        };
        round_trip(&r)?;
    }

    #[test]
    fn jsonrpc_send_params(p in j_send_params()) { round_trip(&p)?; }

    #[test]
    fn jsonrpc_task_params(id in ident(), h in option::of(any::<i32>()), md in opt_metadata(),
        cfg in option::of(ident())) {
        round_trip(&j::TaskQueryParams { id: id.clone(), history_length: h, metadata: md.clone() })?;
        round_trip(&j::TaskIdParams { id: id.clone(), metadata: md.clone() })?;
        round_trip(&j::GetTaskPushNotificationConfigParams {
            id: id.clone(), push_notification_config_id: cfg.clone(), metadata: md.clone() })?;
        round_trip(&j::ListTaskPushNotificationConfigParams { id: id.clone(), metadata: md.clone() })?;
        round_trip(&j::DeleteTaskPushNotificationConfigParams {
            id, push_notification_config_id: cfg.unwrap_or_default(), metadata: md })?;
    }

    #[test]
    fn jsonrpc_push_configs(task_ids in vec(ident(), 0..3), c in j_push_config()) {
        let list: j::ListTaskPushNotificationConfigResult = task_ids.into_iter()
            .map(|task_id| j::TaskPushNotificationConfig { task_id, push_notification_config: c.clone() })
            .collect();
        round_trip(&list)?;
    }

    #[test]
    fn jsonrpc_agent_card(c in j_card()) { round_trip(&c)?; }
}

// ----------------------------------------------------------------------------------------------
// HTTP+JSON dialect
// ----------------------------------------------------------------------------------------------

fn r_part() -> impl Strategy<Value = r::Part> {
    let file = (
        prop_oneof![
            ident().prop_map(r::FileContent::Uri),
            vec(any::<u8>(), 0..16)
                .prop_map(|b| r::FileContent::Bytes(a2a_types::binary::Base64Bytes::encode(b))),
        ],
        option::of(ident()),
        option::of(ident()),
    )
        .prop_map(|(file, mime_type, name)| r::FilePart {
            file,
            mime_type,
            name,
        });
    (
        prop_oneof![
            text().prop_map(r::PartContent::Text),
            file.prop_map(r::PartContent::File),
            metadata().prop_map(|data| r::PartContent::Data(r::DataPart { data })),
        ],
        opt_metadata(),
    )
        .prop_map(|(content, metadata)| r::Part { content, metadata })
}

fn r_role() -> impl Strategy<Value = r::Role> {
    proptest::sample::select(r::Role::ALL.to_vec())
}

fn r_state() -> impl Strategy<Value = r::TaskState> {
    proptest::sample::select(r::TaskState::ALL.to_vec())
}

prop_compose! {
    fn r_message()(message_id in ident(), context_id in option::of(ident()),
        task_id in option::of(ident()), role in r_role(), content in vec(r_part(), 0..3),
        metadata in opt_metadata(), extensions in strings()) -> r::Message {
        r::Message { message_id, context_id, task_id, role, content, metadata, extensions }
    }
}

prop_compose! {
    fn r_status()(state in r_state(), message in option::of(r_message()),
        ts in option::of(0i64..4_102_444_800)) -> r::TaskStatus {
        r::TaskStatus {
            state,
            message,
            timestamp: ts.map(|s| a2a_types::timestamp::Timestamp::from_unix_seconds(s).unwrap()),
        }
    }
}

prop_compose! {
    fn r_artifact()(artifact_id in ident(), name in option::of(text()),
        description in option::of(text()), parts in vec(r_part(), 0..3),
        metadata in opt_metadata(), extensions in strings()) -> r::Artifact {
        r::Artifact { artifact_id, name, description, parts, metadata, extensions }
    }
}

prop_compose! {
    fn r_task()(id in ident(), context_id in ident(), status in r_status(),
        artifacts in vec(r_artifact(), 0..2), history in vec(r_message(), 0..2),
        metadata in opt_metadata()) -> r::Task {
        r::Task { id, context_id, status, artifacts, history, metadata }
    }
}

prop_compose! {
    fn r_push_config()(id in option::of(ident()), url in ident(), token in option::of(ident()),
        authentication in option::of((strings(), option::of(ident())).prop_map(|(schemes, credentials)|
            r::AuthenticationInfo { schemes, credentials }))) -> r::PushNotificationConfig {
        r::PushNotificationConfig { id, url, token, authentication }
    }
}

prop_compose! {
    fn r_task_push_config()(task in ident(), cfg in ident(), c in r_push_config())
        -> r::TaskPushNotificationConfig {
        r::TaskPushNotificationConfig {
            name: r::PushConfigName { task_id: task, config_id: cfg }.to_string(),
            push_notification_config: c,
        }
    }
}

fn r_security() -> impl Strategy<Value = Vec<r::Security>> {
    vec(
        btree_map(
            ident(),
            strings().prop_map(|list| r::StringList { list }),
            0..3,
        )
        .prop_map(|schemes| r::Security { schemes }),
        0..3,
    )
}

fn r_scheme() -> impl Strategy<Value = r::SecurityScheme> {
    let flows = prop_oneof![
        (ident(), ident(), option::of(ident()), scopes()).prop_map(
            |(authorization_url, token_url, refresh_url, scopes)| {
                r::OAuthFlows::AuthorizationCode(r::AuthorizationCodeOAuthFlow {
                    authorization_url,
                    token_url,
                    refresh_url,
                    scopes,
                })
            }
        ),
        (ident(), option::of(ident()), scopes()).prop_map(|(token_url, refresh_url, scopes)| {
            r::OAuthFlows::ClientCredentials(r::ClientCredentialsOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            })
        }),
        (ident(), option::of(ident()), scopes()).prop_map(
            |(authorization_url, refresh_url, scopes)| {
                r::OAuthFlows::Implicit(r::ImplicitOAuthFlow {
                    authorization_url,
                    refresh_url,
                    scopes,
                })
            }
        ),
        (ident(), option::of(ident()), scopes()).prop_map(|(token_url, refresh_url, scopes)| {
            r::OAuthFlows::Password(r::PasswordOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            })
        }),
    ];
    prop_oneof![
        (option::of(text()), ident(), ident()).prop_map(|(description, location, name)| {
            r::SecurityScheme::ApiKeySecurityScheme(r::ApiKeySecurityScheme {
                description,
                location,
                name,
            })
        }),
        (option::of(text()), ident(), option::of(ident())).prop_map(
            |(description, scheme, bearer_format)| {
                r::SecurityScheme::HttpAuthSecurityScheme(r::HttpAuthSecurityScheme {
                    description,
                    scheme,
                    bearer_format,
                })
            }
        ),
        (option::of(text()), flows, option::of(ident())).prop_map(
            |(description, flows, oauth2_metadata_url)| {
                r::SecurityScheme::Oauth2SecurityScheme(r::OAuth2SecurityScheme {
                    description,
                    flows,
                    oauth2_metadata_url,
                })
            }
        ),
        (option::of(text()), ident()).prop_map(|(description, open_id_connect_url)| {
            r::SecurityScheme::OpenIdConnectSecurityScheme(r::OpenIdConnectSecurityScheme {
                description,
                open_id_connect_url,
            })
        }),
        option::of(text()).prop_map(|description| r::SecurityScheme::MtlsSecurityScheme(
            r::MutualTlsSecurityScheme { description }
        )),
    ]
}

prop_compose! {
    fn r_card()(protocol_version in ident(), name in text(), description in text(),
        url in ident(), preferred_transport in option::of(ident()),
        additional_interfaces in vec((ident(), ident()).prop_map(|(url, transport)| r::AgentInterface { url, transport }), 0..2),
        provider in option::of((ident(), ident()).prop_map(|(url, organization)| r::AgentProvider { url, organization })),
        version in ident(), documentation_url in option::of(ident()), icon_url in option::of(ident()),
        caps in (option::of(any::<bool>()), option::of(any::<bool>()),
            vec((ident(), option::of(text()), option::of(any::<bool>()), opt_metadata())
                .prop_map(|(uri, description, required, params)| r::AgentExtension { uri, description, required, params }), 0..2)),
        security_schemes in btree_map(ident(), r_scheme(), 0..3),
        security in r_security(),
        default_input_modes in strings(), default_output_modes in strings(),
        skills in vec((ident(), text(), text(), strings(), strings(), strings(), strings(), r_security())
            .prop_map(|(id, name, description, tags, examples, input_modes, output_modes, security)|
                r::AgentSkill { id, name, description, tags, examples, input_modes, output_modes, security }), 0..2),
        supports_authenticated_extended_card in option::of(any::<bool>()),
        signatures in vec((ident(), ident(), opt_metadata()).prop_map(|(protected, signature, header)|
            r::AgentCardSignature { protected, signature, header }), 0..2),
        extra in btree_map("x-[a-z]{1,6}", json_value(), 0..2),
    ) -> r::AgentCard {
        r::AgentCard {
            protocol_version, name, description, url, preferred_transport, additional_interfaces,
            provider, version, documentation_url, icon_url,
            capabilities: r::AgentCapabilities { streaming: caps.0, push_notifications: caps.1, extensions: caps.2 },
            security_schemes, security, default_input_modes, default_output_modes, skills,
            supports_authenticated_extended_card, signatures, extra: extra.into_iter().collect(),
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn rest_message(m in r_message()) { round_trip(&m)?; }

    #[test]
    fn rest_task(t in r_task()) { round_trip(&t)?; }

    #[test]
    fn rest_send_request(message in r_message(), cfg in option::of(
        (strings(), option::of(r_push_config()), option::of(any::<i32>()), option::of(any::<bool>()))
            .prop_map(|(accepted_output_modes, push_notification, history_length, blocking)|
                r::SendMessageConfiguration { accepted_output_modes, push_notification, history_length, blocking })),
        metadata in opt_metadata()) {
        round_trip(&r::SendMessageRequest { message, configuration: cfg, metadata })?;
    }

    #[test]
    fn rest_send_response(t in r_task(), m in r_message(), pick in any::<bool>()) {
        let resp = if pick { r::SendMessageResponse::Task(t) } else { r::SendMessageResponse::Message(m) };
        round_trip(&resp)?;
    }

    #[test]
    fn rest_stream_response(t in r_task(), m in r_message(), status in r_status(), a in r_artifact(),
        ids in (ident(), ident()), flags in (any::<bool>(), option::of(any::<bool>()), option::of(any::<bool>())),
        md in opt_metadata(), pick in 0..4u8) {
        let resp = match pick {
            0 => r::StreamResponse::Task(t),
            1 => r::StreamResponse::Message(m),
            2 => r::StreamResponse::StatusUpdate(r::TaskStatusUpdateEvent {
                task_id: ids.0, context_id: ids.1, status, is_final: flags.0, metadata: md }),
            _ => r::StreamResponse::ArtifactUpdate(r::TaskArtifactUpdateEvent {
                task_id: ids.0, context_id: ids.1, artifact: a, append: flags.1, last_chunk: flags.2, metadata: md }),
        };
        round_trip(&resp)?;
    }

    #[test]
    fn rest_push_config_requests(c in r_task_push_config(), configs in vec(r_task_push_config(), 0..3),
        token in option::of(ident()), task in ident(), cfg in ident(),
        n in option::of(any::<i32>())) {
        round_trip(&c)?;
        round_trip(&r::ListTaskPushNotificationConfigResponse { configs, next_page_token: token.clone() })?;
        let parent = r::TaskName { task_id: task }.to_string();
        round_trip(&r::CreateTaskPushNotificationConfigRequest {
            parent: parent.clone(), config_id: cfg, config: c.clone() })?;
        round_trip(&r::ListTaskPushNotificationConfigRequest {
            parent: parent.clone(), page_size: n, page_token: token })?;
        round_trip(&r::GetTaskRequest { name: parent.clone(), history_length: n })?;
        round_trip(&r::CancelTaskRequest { name: parent.clone() })?;
        round_trip(&r::TaskSubscriptionRequest { name: parent })?;
        round_trip(&r::GetTaskPushNotificationConfigRequest { name: c.name.clone() })?;
        round_trip(&r::DeleteTaskPushNotificationConfigRequest { name: c.name })?;
    }

    #[test]
    fn rest_agent_card(c in r_card()) { round_trip(&c)?; }

    #[test]
    fn resource_names_round_trip(task in "[a-zA-Z0-9_.-]{1,12}", cfg in "[a-zA-Z0-9_.-]{1,12}") {
        let t = r::TaskName { task_id: task.clone() };
        prop_assert_eq!(r::TaskName::parse(&t.to_string()), Some(t));
        let p = r::PushConfigName { task_id: task, config_id: cfg };
        prop_assert_eq!(r::PushConfigName::parse(&p.to_string()), Some(p));
    }
}
