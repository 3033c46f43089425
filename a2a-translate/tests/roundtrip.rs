//! Property tests: inside the carried intersection, `to_v1(to_v03(x)) == x` and
//! `to_v03(to_v1(y)) == y` for every type; outside it, the refusal path is asserted.

use std::collections::BTreeMap;

use a2a_translate::{Method, Policy, StreamTranslator, V1Request, V1Result, to_v1, to_v03};
use a2a_types::binary::Base64Bytes;
use a2a_types::{v1, v03};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

use crate::strategies::*;

const S: Policy = Policy::Strict;

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
    for &m in Method::ALL {
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
