//! The PII scanner: `find` on any text (findings sorted, apart, on character boundaries, inside
//! the text), `scan_value` with every kind redacted on a message carrying the text in a text
//! part, a data part and metadata, and a `StreamScanner` over the text cut into chunks where the
//! input says. No input may panic, and doubling an input (the text twice) at most doubles the
//! scanner's counted steps (feature `pii-steps`), give or take a constant.
#![no_main]

use a2a_gateway::pii::{
    PiiAction, PiiRules, StreamScanner, find, scan_value, scanned_bytes, take_steps,
};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let Some((&cuts, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    take_steps();
    let mut last_end = 0;
    for f in find(&text) {
        assert!(f.range.start >= last_end && f.range.start < f.range.end);
        assert!(f.range.end <= text.len());
        assert!(text.is_char_boundary(f.range.start) && text.is_char_boundary(f.range.end));
        last_end = f.range.end;
    }
    let once = take_steps();
    let twice_text = text.repeat(2);
    std::hint::black_box(find(&twice_text));
    let twice = take_steps();
    // The same bound as the unit test's doubling rule (pii/cost_tests.rs).
    assert!(
        twice as f64 <= 2.2 * once as f64 + 4096.0,
        "{} bytes: {once} steps, doubled: {twice}",
        text.len()
    );
    let rules = PiiRules {
        default_action: PiiAction::Redact,
        ..PiiRules::default()
    };
    let mut v = json!({"message": {"messageId": "m", "role": "ROLE_USER",
        "parts": [{"text": text}, {"data": {"k": [text]}}], "metadata": {"m": text}}});
    assert!(scanned_bytes(&v) >= 3 * text.len());
    let _ = scan_value(&mut v, &rules);

    // Chunks of the text: boundaries every `step` characters (1..=16, from the first byte).
    let step = usize::from(cuts % 16) + 1;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut scanner = StreamScanner::new(rules);
    let mut from = 0;
    let bounds = chars.iter().map(|(i, _)| *i).step_by(step).skip(1);
    for (n, to) in bounds.chain(std::iter::once(text.len())).enumerate() {
        let piece = &text[from..to];
        let mut event = json!({"artifactUpdate": {"taskId": "t", "contextId": "c",
            "append": n > 0, "lastChunk": cuts & 0x80 != 0 && to == text.len(),
            "artifact": {"artifactId": "a", "parts": [{"text": piece}]}}});
        let _ = scanner.scan_event(&mut event);
        from = to;
    }
    let _ = scanner.flush();
});
