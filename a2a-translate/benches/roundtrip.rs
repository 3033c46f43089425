//! 1.0 -> 0.3 -> 1.0 round trips of a realistic stream event and a SendMessage request.
//!
//! `cargo bench -p a2ars-translate --bench roundtrip`. Each benchmark reports items/s
//! (one item = one round trip) and bytes/s (the size of the 1.0 JSON document).
//! `typed_*` measures the translation alone (typed model in, typed model out);
//! `json_*` adds what a gateway does around it: parse 1.0 JSON, translate, serialize 0.3
//! JSON, parse it, translate back, serialize 1.0 JSON.

use a2a_translate::{Policy, StreamTranslator, V1Request, V03Request, to_v1, to_v03};
use a2a_types::{v1, v03};
use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};
use serde_json::json;

fn main() {
    divan::main();
}

fn stream_event_json() -> serde_json::Value {
    let chunk = "The quarterly report shows revenue up 12% year over year, driven by the new \
        subscription tier; churn fell to 2.1% while support tickets per customer dropped. "
        .repeat(4);
    json!({"artifactUpdate": {
        "taskId": "3f2b8c1e-6a7d-4f3e-9b1a-2c4d5e6f7a8b",
        "contextId": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
        "append": true,
        "lastChunk": false,
        "artifact": {
            "artifactId": "report-1",
            "name": "report.md",
            "parts": [
                {"text": chunk, "metadata": {"chunk": 7}},
                {"data": {"tokens": 183, "model": "m-large", "latencyMs": 412}}
            ],
            "metadata": {"source": "writer"}
        },
        "metadata": {"trace": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    }})
}

fn send_message_json() -> serde_json::Value {
    json!({
        "message": {
            "messageId": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
            "contextId": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
            "role": "ROLE_USER",
            "parts": [
                {"text": "Summarise the attached report and list the three biggest risks."},
                {"url": "https://files.example.com/q3-report.pdf", "filename": "q3-report.pdf", "mediaType": "application/pdf"},
                {"data": {"audience": "board", "maxWords": 300, "language": "en"}}
            ],
            "metadata": {"client": "portal/4.2"},
            "extensions": ["https://a2a.example.com/ext/citations/v1"]
        },
        "configuration": {
            "acceptedOutputModes": ["text/markdown", "application/json"],
            "historyLength": 10,
            "returnImmediately": false,
            "taskPushNotificationConfig": {
                "url": "https://hooks.example.com/a2a",
                "token": "b3f1c2",
                "authentication": {"scheme": "Bearer", "credentials": "eyJhbGciOiJIUzI1NiJ9.e30.sig"}
            }
        },
        "metadata": {"requestId": "r-42"}
    })
}

#[divan::bench]
fn typed_stream_event(b: Bencher) {
    let doc = stream_event_json();
    let bytes = serde_json::to_vec(&doc).unwrap().len();
    let ev: v1::StreamResponse = serde_json::from_value(doc).unwrap();
    b.counter(ItemsCount::new(1usize))
        .counter(BytesCount::new(bytes))
        .with_inputs(|| ev.clone())
        .bench_local_values(|ev| {
            let mut st = StreamTranslator::new(Policy::Strict);
            let old: Vec<v03::StreamResult> = st.push(ev).unwrap().collect();
            let back = to_v1::stream_event(old.into_iter().next().unwrap()).unwrap();
            black_box(back)
        });
}

#[divan::bench]
fn typed_send_message(b: Bencher) {
    let doc = send_message_json();
    let bytes = serde_json::to_vec(&doc).unwrap().len();
    let req = V1Request::parse("SendMessage", Some(doc)).unwrap();
    b.counter(ItemsCount::new(1usize))
        .counter(BytesCount::new(bytes))
        .with_inputs(|| req.clone())
        .bench_local_values(|req| {
            let old = to_v03::request(req, Policy::Strict).unwrap();
            black_box(to_v1::request(old, Policy::Strict).unwrap())
        });
}

#[divan::bench]
fn json_stream_event(b: Bencher) {
    let text = serde_json::to_vec(&stream_event_json()).unwrap();
    b.counter(ItemsCount::new(1usize))
        .counter(BytesCount::new(text.len()))
        .bench_local(|| {
            let ev: v1::StreamResponse = serde_json::from_slice(black_box(&text)).unwrap();
            let old = to_v03::stream_event(ev, Policy::Strict).unwrap();
            let wire = serde_json::to_vec(&old).unwrap();
            let old: v03::StreamResult = serde_json::from_slice(&wire).unwrap();
            let back = to_v1::stream_event(old).unwrap();
            black_box(serde_json::to_vec(&back).unwrap())
        });
}

#[divan::bench]
fn json_send_message(b: Bencher) {
    let text = serde_json::to_vec(&send_message_json()).unwrap();
    b.counter(ItemsCount::new(1usize))
        .counter(BytesCount::new(text.len()))
        .bench_local(|| {
            let params: serde_json::Value = serde_json::from_slice(black_box(&text)).unwrap();
            let req = V1Request::parse("SendMessage", Some(params)).unwrap();
            let old = to_v03::request(req, Policy::Strict).unwrap();
            let wire = serde_json::to_vec(&old.params()).unwrap();
            let params: serde_json::Value = serde_json::from_slice(&wire).unwrap();
            let old = V03Request::parse(old.method_name(), Some(params)).unwrap();
            let back = to_v1::request(old, Policy::Strict).unwrap();
            black_box(serde_json::to_vec(&back.params()).unwrap())
        });
}
