//! Unit tests of `scan_value` and the stream scanner (the detectors have their own).

use serde_json::json;

use super::*;

fn rules(default_action: PiiAction) -> PiiRules {
    PiiRules {
        default_action,
        ..PiiRules::default()
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
fn a_request_is_redacted_but_its_ids_and_push_configs() {
    let mut v = json!({
        "message": {
            "messageId": "ann@example.org",
            "role": "ROLE_USER",
            "parts": [
                {"text": "write to ann@example.org"},
                {"data": {"contact": {"mail": "bob@example.com", "list": ["x", "ssn 123-45-6789"]}}},
                {"url": "https://10.0.0.1/ann@example.org", "filename": "to ann@example.org (draft).txt", "mediaType": "text/plain"}
            ],
            "metadata": {"note": "ip 10.1.2.3", "dan@example.com": {"ext": ["10.0.0.2"]}},
            "extensions": ["https://ext.example/v1"],
            "referenceTaskIds": ["ann@example.org"]
        },
        "configuration": {"taskPushNotificationConfig": {"url": "http://10.0.0.9/hook", "token": "sk-abcdefghijklmnopqrstuvwxyz"},
                          "acceptedOutputModes": ["text/plain; for=erin@example.com"]},
        "metadata": {"by": "carl@example.net"}
    });
    let report = scan_request(&mut v, &rules(PiiAction::Redact));
    assert_eq!(
        v,
        json!({
            "message": {
                "messageId": "ann@example.org",
                "role": "ROLE_USER",
                "parts": [
                    {"text": "write to [REDACTED:EMAIL]"},
                    {"data": {"contact": {"mail": "[REDACTED:EMAIL]", "list": ["x", "ssn [REDACTED:US_SSN]"]}}},
                    {"url": "https://[REDACTED:IPV4]/[REDACTED:EMAIL]", "filename": "to [REDACTED:EMAIL] (draft).txt", "mediaType": "text/plain"}
                ],
                "metadata": {"note": "ip [REDACTED:IPV4]", "[REDACTED:EMAIL]": {"ext": ["[REDACTED:IPV4]"]}},
                "extensions": ["https://ext.example/v1"],
                "referenceTaskIds": ["ann@example.org"]
            },
            "configuration": {"taskPushNotificationConfig": {"url": "http://10.0.0.9/hook", "token": "sk-abcdefghijklmnopqrstuvwxyz"},
                              "acceptedOutputModes": ["text/plain; for=[REDACTED:EMAIL]"]},
            "metadata": {"by": "[REDACTED:EMAIL]"}
        })
    );
    assert_eq!(report.redacted, 11);
    assert_eq!(report.counts.get(&PiiKind::Email), Some(&7));
    assert_eq!(report.blocked, None);
}

/// What a peer wrote is read whole but its ids: a member named like a caller's push config (a
/// push config answer, or one echoed in a task) is the peer's words there.
#[test]
fn a_peer_value_is_read_but_its_ids() {
    let mut v = json!({"id": "ann@example.org", "taskId": "ann@example.org",
        "pushNotificationConfig": {"url": "https://hooks.example/ann@example.org",
            "authentication": {"schemes": ["bob@example.com"]}, "note": "ssn 123-45-6789"},
        "taskPushNotificationConfig": {"url": "https://10.0.0.9/hook"}});
    let report = scan_value(&mut v, &rules(PiiAction::Redact));
    assert_eq!(
        v,
        json!({"id": "ann@example.org", "taskId": "ann@example.org",
            "pushNotificationConfig": {"url": "https://hooks.example/[REDACTED:EMAIL]",
                "authentication": {"schemes": ["[REDACTED:EMAIL]"]},
                "note": "ssn [REDACTED:US_SSN]"},
            "taskPushNotificationConfig": {"url": "https://[REDACTED:IPV4]/hook"}})
    );
    assert_eq!(report.redacted, 4);
    let config = json!({"configuration": {"pushNotificationConfig": {"url": "https://x"}}});
    assert_eq!(scanned_bytes(&config), 9);
    assert_eq!(request_bytes(&config), 0);
}

#[test]
fn raw_text_parts_are_decoded_scanned_and_reencoded() {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let b64_bytes = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let mut v = json!({"parts": [
        {"raw": b64("card 4111 1111 1111 1111\n"), "mediaType": "text/plain; charset=utf-8"},
        {"raw": b64("card 4111 1111 1111 1111\n"), "mediaType": "application/octet-stream"},
        {"raw": "%%% not base64", "mediaType": "text/plain"},
        {"raw": b64_bytes(&[0xff, 0xfe, 0x00]), "mediaType": "text/plain"}
    ]});
    let report = scan_value(&mut v, &rules(PiiAction::Redact));
    assert_eq!(
        v["parts"][0]["raw"],
        json!(b64("card [REDACTED:PAYMENT_CARD]\n"))
    );
    // A binary part is scanned as text where its bytes are UTF-8 (no block rule: the default).
    assert_eq!(
        v["parts"][1]["raw"],
        json!(b64("card [REDACTED:PAYMENT_CARD]\n"))
    );
    assert_eq!(v["parts"][2]["raw"], json!("%%% not base64"));
    assert_eq!(report.redacted, 2);
    assert_eq!(report.binary_parts, 1);
    // Not base64, and not UTF-8: cannot be checked, so counted for the refusal.
    assert_eq!(report.unreadable, 2);
}

#[test]
fn binary_parts_scanned_refused_or_passed() {
    use base64::Engine;
    let enc = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    // Image bytes with a text chunk in the middle (as in a PNG tEXt chunk).
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0xff, 0x00];
    bytes.extend_from_slice(b"Author: ann@example.org");
    bytes.extend_from_slice(&[0x00, 0xfe, 0x01]);
    let part = || json!({"parts": [{"raw": enc(&bytes), "mediaType": "image/png"}]});
    let mut v = part();
    let report = scan_value(&mut v, &rules(PiiAction::Redact));
    let mut want = bytes[..6].to_vec();
    want.extend_from_slice(b"Author: [REDACTED:EMAIL]");
    want.extend_from_slice(&[0x00, 0xfe, 0x01]);
    assert_eq!(v["parts"][0]["raw"], json!(enc(&want)));
    assert_eq!((report.redacted, report.binary_parts), (1, 1));
    // Under a block rule the default is to refuse; `pass` forwards it unread.
    let mut block = rules(PiiAction::Record);
    block.actions.insert(PiiKind::Secret, PiiAction::Block);
    assert_eq!(block.binary_parts(), BinaryParts::Refuse);
    let mut v = part();
    let report = scan_value(&mut v, &block);
    assert_eq!((report.binary_parts, report.counts.len()), (1, 0));
    assert_eq!(v, part());
    block.binary_parts = Some(BinaryParts::Pass);
    let mut v = part();
    assert_eq!(scan_value(&mut v, &block).binary_parts, 1);
    assert_eq!(v, part(), "passed unread");
    let r: PiiRules =
        serde_json::from_value(json!({"default_action": "block", "binary_parts": "scan_as_text"}))
            .unwrap();
    assert_eq!(r.binary_parts(), BinaryParts::ScanAsText);
    assert_eq!(
        scan_value(&mut part(), &r).blocked,
        Some(PiiKind::Email),
        "scanned as text under a block rule when the workspace says so"
    );
}

#[test]
fn adjacent_text_parts_are_one_text() {
    let mut v = json!({"message": {"parts": [
        {"text": "mail ann.lee@exa"}, {"text": "mple.org and card 4111 1111 "},
        {"text": "1111 1111", "metadata": {"k": "10.0.0.1"}}, {"data": {"x": 1}},
        {"text": "call me at"}, {"text": "+44 20 7946 0958"}
    ]}});
    let report = scan_value(&mut v, &rules(PiiAction::Redact));
    assert_eq!(
        v["message"]["parts"],
        json!([
            {"text": "mail [REDACTED:EMAIL]"}, {"text": " and card [REDACTED:PAYMENT_CARD]"},
            {"text": "", "metadata": {"k": "[REDACTED:IPV4]"}}, {"data": {"x": 1}},
            {"text": "call me at"}, {"text": "[REDACTED:PHONE]"}
        ])
    );
    assert_eq!(report.redacted, 4);
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

// ---- streams ----

fn chunk(artifact: &str, text: &str, append: bool, last: bool) -> Value {
    json!({"artifactUpdate": {
        "taskId": "t1", "contextId": "c1", "append": append, "lastChunk": last,
        "artifact": {"artifactId": artifact, "parts": [{"text": text}]}}})
}

fn text_of(event: &Value) -> &str {
    event["artifactUpdate"]["artifact"]["parts"][0]["text"]
        .as_str()
        .unwrap()
}

/// Runs chunks of one artifact (the first not appending, the last the lastChunk) and returns
/// the forwarded texts (flushed events included) and the merged report.
fn run(texts: &[&str], last_is_last: bool) -> (Vec<String>, PiiReport) {
    let mut s = StreamScanner::new(rules(PiiAction::Redact));
    let mut out = Vec::new();
    let mut report = PiiReport::default();
    for (i, t) in texts.iter().enumerate() {
        let mut e = chunk("a", t, i > 0, last_is_last && i + 1 == texts.len());
        report.merge(&s.scan_event(&mut e));
        out.push(text_of(&e).to_owned());
    }
    let (owed, r) = s.flush();
    report.merge(&r);
    out.extend(owed.iter().map(|e| text_of(e).to_owned()));
    (out, report)
}

#[test]
fn email_split_across_three_chunks() {
    let (out, report) = run(&["contact ann", ".lee@exam", "ple.org now"], true);
    assert_eq!(out, vec!["contact ", "", "[REDACTED:EMAIL] now"]);
    assert_eq!(report.counts.get(&PiiKind::Email), Some(&1));
    assert_eq!(out.concat(), "contact [REDACTED:EMAIL] now");
}

#[test]
fn card_split_at_a_group_space() {
    let (out, report) = run(&["card 4111 1111 ", "1111 1111 thanks"], true);
    assert_eq!(out.concat(), "card [REDACTED:PAYMENT_CARD] thanks");
    assert_eq!(out[0], "card ");
    assert_eq!(report.redacted, 1);
}

#[test]
fn boundary_inside_an_item_in_every_position() {
    // Wherever the boundary falls, the forwarded text never shows a part of the item.
    let text = "my ssn is 123-45-6789 and mail bo.b@example.com ok";
    for cut in 1..text.len() {
        let (out, report) = run(&[&text[..cut], &text[cut..]], true);
        assert_eq!(
            out.concat(),
            "my ssn is [REDACTED:US_SSN] and mail [REDACTED:EMAIL] ok",
            "cut at {cut}"
        );
        assert_eq!(report.redacted, 2, "cut at {cut}");
    }
}

#[test]
fn flush_releases_held_text_with_the_artifact_ids() {
    let mut s = StreamScanner::new(rules(PiiAction::Redact));
    let mut e = chunk("a", "reach me at +44 20 7946", false, false);
    s.scan_event(&mut e);
    assert_eq!(text_of(&e), "reach me at ");
    assert!(s.is_holding());
    let (owed, report) = s.flush();
    assert_eq!(
        owed,
        vec![
            json!({"artifactUpdate": {"taskId": "t1", "contextId": "c1", "append": true,
            "artifact": {"artifactId": "a", "parts": [{"text": "[REDACTED:PHONE]"}]}}})
        ]
    );
    assert_eq!(report.redacted, 1);
    assert!(!s.is_holding());
    assert!(s.flush().0.is_empty());
}

#[test]
fn final_status_gets_the_owed_events_first() {
    let mut s = StreamScanner::new(rules(PiiAction::Redact));
    let mut e = chunk("a", "ip 10.0.0.", false, false);
    s.scan_event(&mut e);
    let mut working =
        json!({"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_WORKING"}}});
    assert!(s.scan_event_with_owed(&mut working).0.is_empty());
    let mut done =
        json!({"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_COMPLETED"}}});
    let (owed, _) = s.scan_event_with_owed(&mut done);
    assert_eq!(owed.len(), 1);
    assert_eq!(text_of(&owed[0]), "10.0.0.");
}

#[test]
fn artifacts_are_held_separately_and_replacement_drops_the_tail() {
    let mut s = StreamScanner::new(rules(PiiAction::Redact));
    let mut a1 = chunk("a", "mail ann@", false, false);
    let mut b1 = chunk("b", "ip 192.168.", false, false);
    let mut a2 = chunk("a", "example.org.", true, true);
    let mut b2 = chunk("b", "fresh start", false, true);
    s.scan_event(&mut a1);
    s.scan_event(&mut b1);
    s.scan_event(&mut a2);
    s.scan_event(&mut b2);
    assert_eq!(text_of(&a1), "mail ");
    assert_eq!(text_of(&b1), "ip ");
    assert_eq!(text_of(&a2), "[REDACTED:EMAIL].");
    assert_eq!(text_of(&b2), "fresh start");
    assert!(s.flush().0.is_empty());
}

#[test]
fn held_text_goes_in_front_of_a_non_text_first_part() {
    let mut s = StreamScanner::new(rules(PiiAction::Redact));
    let mut a1 = chunk("a", "see 4111 1111 1111 1111", false, false);
    let mut a2 = json!({"artifactUpdate": {"taskId": "t1", "contextId": "c1", "append": true,
        "artifact": {"artifactId": "a", "parts": [{"data": {"x": "a@example.com"}}]}}});
    s.scan_event(&mut a1);
    s.scan_event(&mut a2);
    assert_eq!(
        a2["artifactUpdate"]["artifact"]["parts"],
        json!([{"text": "[REDACTED:PAYMENT_CARD]"}, {"data": {"x": "[REDACTED:EMAIL]"}}])
    );
}

#[test]
fn private_key_across_chunks_is_redacted_to_its_end_line() {
    let (out, report) = run(
        &[
            "key: -----BEGIN RSA PRIV",
            "ATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn",
            "/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\n-----END RSA PRIVATE KEY----- done",
        ],
        true,
    );
    // The split header is held and joined; the short second chunk is all held (the last 64
    // bytes of an open block are), so the block comes out once, with the third.
    assert_eq!(out, vec!["key: ", "", "[REDACTED:SECRET] done"]);
    assert_eq!(report.counts.get(&PiiKind::Secret), Some(&1));
}

#[test]
fn hold_is_bounded() {
    let long = "x".repeat(400);
    let mut s = StreamScanner::new(rules(PiiAction::Redact));
    let mut e = chunk("a", &long, false, false);
    s.scan_event(&mut e);
    assert_eq!(text_of(&e).len(), 400 - MAX_HOLD);
    let (owed, _) = s.flush();
    assert_eq!(text_of(&owed[0]).len(), MAX_HOLD);
}

#[test]
fn nothing_held_after_a_separator_and_block_is_reported() {
    let mut r = rules(PiiAction::Record);
    r.actions.insert(PiiKind::PaymentCard, PiiAction::Block);
    let mut s = StreamScanner::new(r);
    let mut e = chunk("a", "pay with 5555 5555 5555 4444 please. ", false, false);
    let report = s.scan_event(&mut e);
    assert_eq!(report.blocked, Some(PiiKind::PaymentCard));
    assert!(!s.is_holding());
}

#[test]
fn long_private_key_across_chunks() {
    let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7".repeat(4);
    let (out, report) = run(
        &[
            "key: -----BEGIN PRIVATE KEY-----\n",
            &format!("{body}\n"),
            &format!("{body}\n-----END PRIV"),
            "ATE KEY-----\nbye",
        ],
        true,
    );
    // The header is in the last 64 bytes of the first chunk, so it waits for the body.
    assert_eq!(out[0], "key: ");
    assert_eq!(out[1], "[REDACTED:SECRET]");
    assert_eq!(out[2], "[REDACTED:SECRET]");
    assert_eq!(out[3], "[REDACTED:SECRET]\nbye");
    assert_eq!(report.counts.get(&PiiKind::Secret), Some(&3));
}

#[test]
fn record_only_streams_go_out_unchanged_and_still_count_split_items() {
    let mut s = StreamScanner::new(rules(PiiAction::Record));
    let texts = [
        "mail ann.lee@exa",
        "mple.org and card 4111 1111 ",
        "1111 1111 bye",
    ];
    let mut report = PiiReport::default();
    for (i, t) in texts.iter().enumerate() {
        let mut e = chunk("a", t, i > 0, false);
        report.merge(&s.scan_event(&mut e));
        assert_eq!(text_of(&e), *t, "forwarded as it came");
    }
    let (owed, r) = s.flush();
    report.merge(&r);
    assert!(owed.is_empty());
    assert_eq!(report.counts.get(&PiiKind::Email), Some(&1));
    assert_eq!(report.counts.get(&PiiKind::PaymentCard), Some(&1));
    assert_eq!(report.redacted, 0);
}

#[test]
fn scanned_bytes_counts_what_a_scan_reads() {
    let v = json!({
        "message": {
            "messageId": "not counted",
            "parts": [
                {"text": "abc"},
                {"data": {"k": ["de", {"x": "f"}]}},
                {"url": "http://x", "filename": "gh", "mediaType": "text/plain"},
                {"raw": "aGVsbG8h", "mediaType": "text/plain"},
                {"raw": "aGVsbG8h", "mediaType": "image/png"}
            ],
            "metadata": {"m": "ij"}
        },
        "configuration": {"x": "not counted"}
    });
    // text 3, data 2 + 1 and keys 1 + 1, url 8, filename 2, media types 10 + 10 + 9, both raw
    // parts decoded ("hello!") 6 + 6, metadata 2 and key 1, the configuration's string 11 (the
    // ids are not counted).
    assert_eq!(
        super::scanned_bytes(&v),
        3 + 3 + 2 + 8 + 2 + 29 + 12 + 3 + 11
    );
}
