//! Tests of the translation glue.

use super::*;

#[test]
fn message_round_trip() {
    let m03 = json!({"kind":"message","messageId":"m","role":"user","parts":[
        {"kind":"text","text":"hi"},{"kind":"data","data":{"a":1}},
        {"kind":"file","file":{"uri":"https://x/y","mimeType":"text/plain","name":"y"}}]});
    let m1 = message(&m03, Version::V1, "m").unwrap();
    assert_eq!(m1["role"], "ROLE_USER");
    assert_eq!(m1["parts"][0], json!({"text":"hi"}));
    assert_eq!(
        m1["parts"][2],
        json!({"url":"https://x/y","mediaType":"text/plain","filename":"y"})
    );
    assert_eq!(message(&m1, Version::V03, "m").unwrap(), m03);
}

#[test]
fn refusals_carry_paths() {
    let p =
        json!({"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a"},{"image":{}}]}});
    let e = request(Operation::SendMessage, Version::V1, Version::V1, &p).unwrap_err();
    assert_eq!(e.rpc_code, -32602);
    assert!(
        e.message
            .contains("params.message.parts[1]: unknown member image"),
        "{}",
        e.message
    );
    let p = json!({"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","filename":"f"}]}});
    let e = request(Operation::SendMessage, Version::V1, Version::V03, &p).unwrap_err();
    assert_eq!(
        (e.rpc_code, e.code.as_str()),
        (-32004, "a2a_untranslatable")
    );
    let e = request(Operation::ListTasks, Version::V1, Version::V03, &json!({})).unwrap_err();
    assert_eq!(e.rpc_code, -32004);
}

#[test]
fn status_update_gets_final() {
    let ev = json!({"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}});
    let v = event(ev.clone(), Version::V1, Version::V03).unwrap();
    assert_eq!(v["kind"], "status-update");
    assert_eq!(v["final"], true);
    assert_eq!(v["status"]["state"], "completed");
    assert_eq!(event(v.clone(), Version::V03, Version::V1).unwrap(), ev);
}

#[test]
fn interrupted_status_is_final_for_03() {
    let ev = json!({"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}});
    let v = event(ev.clone(), Version::V1, Version::V03).unwrap();
    assert_eq!(
        (v["final"].clone(), v["status"]["state"].clone()),
        (json!(true), json!("input-required"))
    );
    let ev = json!({"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}});
    assert_eq!(
        event(ev.clone(), Version::V1, Version::V03).unwrap()["final"],
        false
    );
    assert_eq!(
        push_payload(ev.clone(), Version::V1, Version::V1).unwrap(),
        ev
    );
}

#[test]
fn streams_hold_interrupted_status_until_the_next_event() {
    let su = |s: &str| json!({"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":s}}});
    let mut ev = Events::new(Version::V1, Version::V03);
    assert!(ev.push(su("TASK_STATE_INPUT_REQUIRED")).unwrap().is_empty());
    let out = ev.push(su("TASK_STATE_WORKING")).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(
        (out[0]["status"]["state"].clone(), out[0]["final"].clone()),
        (json!("input-required"), json!(false))
    );
    assert!(ev.push(su("TASK_STATE_AUTH_REQUIRED")).unwrap().is_empty());
    let last = ev.finish().unwrap();
    assert_eq!(
        (last["status"]["state"].clone(), last["final"].clone()),
        (json!("auth-required"), json!(true))
    );
    assert!(ev.finish().is_none());
    let mut ev = Events::new(Version::V1, Version::V03);
    assert_eq!(
        ev.push(su("TASK_STATE_COMPLETED")).unwrap()[0]["final"],
        true
    );
    assert!(matches!(
        ev.push(json!({"bogus":{}})),
        Err(AnswerError::Invalid(_))
    ));
    let mut ev = Events::new(Version::V03, Version::V1);
    let v = ev.push(json!({"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false})).unwrap();
    assert_eq!(v, vec![su("TASK_STATE_WORKING")]);
}

#[test]
fn v03_requests_validated_strictly_and_gateway_members_stripped() {
    let p = json!({"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"a","mimeType":"x"}]}});
    let e = request(Operation::SendMessage, Version::V03, Version::V1, &p).unwrap_err();
    assert_eq!(e.rpc_code, -32602);
    assert!(
        e.message
            .contains("params.message.parts[0]: unknown member mimeType"),
        "{}",
        e.message
    );
    let p = json!({"id":"t","tenant":"gw"});
    assert_eq!(
        request(Operation::GetTask, Version::V1, Version::V03, &p).unwrap(),
        json!({"id":"t"})
    );
    let p = json!({"taskId":"t","pageSize":2,"pageToken":"x"});
    assert_eq!(
        request(
            Operation::ListTaskPushNotificationConfigs,
            Version::V1,
            Version::V03,
            &p
        )
        .unwrap(),
        json!({"id":"t"})
    );
    let p = json!({"id":"t","metadata":{"a":1}});
    let e = request(Operation::GetTask, Version::V03, Version::V1, &p).unwrap_err();
    assert_eq!(e.rpc_code, -32004, "{}", e.message);
}

#[test]
fn answers_invalid_or_untranslatable() {
    let bad = json!({"id":"t","status":{"state":"done"}});
    assert!(matches!(
        result(Operation::GetTask, Version::V03, Version::V1, &bad),
        Err(AnswerError::Invalid(_))
    ));
    assert!(matches!(
        result(Operation::GetTask, Version::V03, Version::V03, &bad),
        Err(AnswerError::Invalid(_))
    ));
    let t = json!({"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},
        "artifacts":[{"artifactId":"a","parts":[{"text":"x","filename":"f.txt"}]}]});
    match result(Operation::GetTask, Version::V1, Version::V03, &t) {
        Err(AnswerError::Untranslatable(e)) => {
            assert!(e.contains("result.artifacts[0].parts[0].filename"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    let m = json!({"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":[1,2]}]}});
    let v = result(Operation::SendMessage, Version::V1, Version::V03, &m).unwrap();
    assert_eq!(v["kind"], "message");
    assert_eq!(v["parts"][0]["data"], json!({"value":[1,2]}));
    assert_eq!(
        result(Operation::SendMessage, Version::V03, Version::V1, &v).unwrap(),
        m
    );
}

#[test]
fn card_schemes_without_03_form_are_listed() {
    let c = json!({"name":"x","description":"d","version":"1","capabilities":{},
        "supportedInterfaces":[{"url":"https://a/","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],
        "defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
        "securitySchemes":{
        "dc":{"oauth2SecurityScheme":{"flows":{"deviceCode":{"tokenUrl":"https://t"}}}},
        "b":{"httpAuthSecurityScheme":{"scheme":"bearer"}}},
        "securityRequirements":[{"schemes":{"dc":{"list":[]}}},{"schemes":{"b":{}}}]});
    let (c03, omitted) = card_v1_to_v03(&c);
    assert_eq!(
        c03["securitySchemes"]["b"],
        json!({"type":"http","scheme":"bearer"})
    );
    assert!(c03["securitySchemes"].get("dc").is_none());
    assert_eq!(omitted[0]["scheme"], "dc");
    assert_eq!(omitted[0]["path"], "securitySchemes.dc");
    assert_eq!(c03["security"], json!([{"b":[]}]));
}
