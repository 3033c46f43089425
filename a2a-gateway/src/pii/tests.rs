//! Unit tests of `scan_value` and the stream scanner (the detectors have their own).

use serde_json::json;

use super::*;

fn rules(default_action: PiiAction) -> PiiRules {
    PiiRules {
        default_action,
        actions: BTreeMap::new(),
    }
}

#[test]
fn rules_serde_form() {
    let r: PiiRules = serde_json::from_value(
        json!({"default_action": "record", "actions": {"EMAIL": "redact", "SECRET": "block"}}),
    )
    .unwrap();
    assert_eq!(r.action(PiiKind::Email), PiiAction::Redact);
    assert_eq!(r.action(PiiKind::Secret), PiiAction::Block);
    assert_eq!(r.action(PiiKind::Phone), PiiAction::Record);
}

#[test]
fn redacts_text_data_filename_metadata_and_keeps_structure() {
    let mut v = json!({
        "message": {
            "messageId": "ann@example.org",
            "role": "ROLE_USER",
            "parts": [
                {"text": "write to ann@example.org"},
                {"data": {"contact": {"mail": "bob@example.com", "list": ["x", "ssn 123-45-6789"]}}},
                {"url": "https://10.0.0.1/ann@example.org", "filename": "to ann@example.org (draft).txt", "mediaType": "text/plain"}
            ],
            "metadata": {"note": "ip 10.1.2.3"}
        },
        "configuration": {"pushNotificationConfig": {"url": "http://10.0.0.9/hook"}},
        "metadata": {"by": "carl@example.net"}
    });
    let report = scan_value(&mut v, &rules(PiiAction::Redact));
    assert_eq!(
        v,
        json!({
            "message": {
                "messageId": "ann@example.org",
                "role": "ROLE_USER",
                "parts": [
                    {"text": "write to [REDACTED:EMAIL]"},
                    {"data": {"contact": {"mail": "[REDACTED:EMAIL]", "list": ["x", "ssn [REDACTED:US_SSN]"]}}},
                    {"url": "https://10.0.0.1/ann@example.org", "filename": "to [REDACTED:EMAIL] (draft).txt", "mediaType": "text/plain"}
                ],
                "metadata": {"note": "ip [REDACTED:IPV4]"}
            },
            "configuration": {"pushNotificationConfig": {"url": "http://10.0.0.9/hook"}},
            "metadata": {"by": "[REDACTED:EMAIL]"}
        })
    );
    assert_eq!(report.redacted, 6);
    assert_eq!(report.counts.get(&PiiKind::Email), Some(&4));
    assert_eq!(report.blocked, None);
}

#[test]
fn raw_text_parts_are_decoded_scanned_and_reencoded() {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut v = json!({"parts": [
        {"raw": b64("card 4111 1111 1111 1111\n"), "mediaType": "text/plain; charset=utf-8"},
        {"raw": b64("card 4111 1111 1111 1111\n"), "mediaType": "application/octet-stream"},
        {"raw": "%%% not base64", "mediaType": "text/plain"}
    ]});
    let report = scan_value(&mut v, &rules(PiiAction::Redact));
    assert_eq!(
        v["parts"][0]["raw"],
        json!(b64("card [REDACTED:PAYMENT_CARD]\n"))
    );
    assert_eq!(
        v["parts"][1]["raw"],
        json!(b64("card 4111 1111 1111 1111\n"))
    );
    assert_eq!(v["parts"][2]["raw"], json!("%%% not base64"));
    assert_eq!(report.redacted, 1);
}

#[test]
fn task_history_artifacts_and_status_message() {
    let mut v = json!({"task": {
        "id": "t1", "contextId": "c1",
        "status": {"state": "TASK_STATE_COMPLETED", "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "+1 415 555 0132"}]}},
        "history": [{"messageId": "h", "role": "ROLE_USER", "parts": [{"text": "my ip is 192.168.0.10"}]}],
        "artifacts": [{"artifactId": "a", "name": "x@example.com", "parts": [{"text": "key AKIAIOSFODNN7EXAMPLE"}], "metadata": {"k": "dan@example.com"}}]
    }});
    let r = rules(PiiAction::Record);
    let before = v.clone();
    let report = scan_value(&mut v, &r);
    assert_eq!(v, before, "record changes nothing");
    let kinds: Vec<_> = report.counts.keys().copied().collect();
    assert_eq!(
        kinds,
        vec![
            PiiKind::Email,
            PiiKind::Phone,
            PiiKind::Ipv4,
            PiiKind::Secret
        ]
    );
    assert_eq!(report.redacted, 0);
}

#[test]
fn block_wins_first_and_is_reported() {
    let mut r = rules(PiiAction::Redact);
    r.actions.insert(PiiKind::Secret, PiiAction::Block);
    r.actions.insert(PiiKind::Ipv4, PiiAction::Block);
    let mut v = json!({"message": {"parts": [{"text": "a@example.com then ghp_abcdefghijklmnopqrstuvwxyz0123456789 then 10.0.0.1"}]}});
    let report = scan_value(&mut v, &r);
    assert_eq!(report.blocked, Some(PiiKind::Secret));
    assert_eq!(report.counts.values().sum::<u32>(), 3);
    let mut merged = PiiReport::default();
    merged.merge(&report);
    merged.merge(&PiiReport {
        blocked: Some(PiiKind::Email),
        ..PiiReport::default()
    });
    assert_eq!(merged.blocked, Some(PiiKind::Secret));
}
