//! The counter held against `serde_json` on fixed values and on generated tasks, messages and
//! events.

use super::len;
use crate::model::{
    Artifact, Message, Part, PartContent, Role, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use a2a_types::binary::Base64Bytes;
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{Value, json};

fn same<T: serde::Serialize>(v: &T) {
    assert_eq!(len(v), serde_json::to_vec(v).unwrap().len());
}

#[test]
fn counts_what_serde_json_writes() {
    same(&"");
    same(&"plain ascii text, longer than one word");
    same(&"quote \" backslash \\ newline \n tab \t cr \r bell \u{7} nul \u{0} esc \u{1b}");
    same(&"\u{8}\u{c}\u{1f}\u{7f} é ü 日本 🎉 \"\"\"\"\"\"\"\"\\\\\\\\\\\\\\\\");
    for n in [0u64, 9, 10, 99, 100, u64::MAX] {
        same(&n);
    }
    for n in [0i64, -1, -9, -10, i64::MIN, i64::MAX] {
        same(&n);
    }
    for f in [0.0f64, -0.0, 1.5, 1e300, -2.5e-300, f64::NAN, f64::INFINITY] {
        same(&f);
    }
    same(&1.25f32);
    same(&json!({"a": [1, null, true, false, "x"], "b": {"c": {}}, "d": [], "e": 1.5}));
    same(&std::collections::BTreeMap::from([(1u32, "a"), (20, "b")]));
    same(&std::collections::BTreeMap::from([('k', 1)]));
    same(&(1, "two", [3u8, 4]));
    same(&Some(()));
    same(&None::<u8>);
    #[derive(serde::Serialize)]
    enum E {
        Unit,
        New(u8),
        Tuple(u8, String),
        Struct { a: u8, b: Option<String> },
    }
    same(&vec![
        E::Unit,
        E::New(7),
        E::Tuple(1, "x".into()),
        E::Struct { a: 1, b: None },
    ]);
    #[derive(serde::Serialize)]
    struct Bytes(#[serde(with = "serde_bytes_like")] Vec<u8>);
    mod serde_bytes_like {
        pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(v)
        }
    }
    same(&Bytes(vec![0, 1, 255]));
}

#[test]
fn one_escape_anywhere_in_a_string_of_any_length_is_counted() {
    // Each length around the word and block sizes (8, 16, 32), the escape at every position:
    // in a full block, in the overlapping last block, in a word, in the bytes before them.
    for len in 0..=40usize {
        same(&"a".repeat(len));
        for at in 0..len {
            for esc in ['"', '\\', '\n', '\u{1}', '\u{1f}'] {
                let mut s = "a".repeat(len);
                s.replace_range(at..=at, esc.encode_utf8(&mut [0; 4]));
                same(&s);
            }
        }
    }
}

/// Text with the bytes serde_json escapes, non-ASCII, and runs longer than a word.
fn text() -> impl Strategy<Value = String> {
    r#"[a-z"\\\n\t\x00\x01\x1f\x7fé日🎉 ]{0,40}"#
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(text(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn meta() -> impl Strategy<Value = Option<crate::model::Struct>> {
    option::of(btree_map(text(), value(), 0..3).prop_map(|m| m.into_iter().collect()))
}

fn part() -> impl Strategy<Value = Part> {
    let content = prop_oneof![
        text().prop_map(PartContent::Text),
        vec(any::<u8>(), 0..40).prop_map(|b| PartContent::Raw(Base64Bytes::encode(b))),
        text().prop_map(PartContent::Url),
        value().prop_map(PartContent::Data),
    ];
    (content, meta(), option::of(text()), option::of(text())).prop_map(
        |(content, metadata, filename, media_type)| Part {
            content,
            metadata,
            filename,
            media_type,
        },
    )
}

fn message() -> impl Strategy<Value = Message> {
    (
        text(),
        option::of(text()),
        prop::sample::select(Role::ALL),
        vec(part(), 0..3),
        meta(),
        vec(text(), 0..2),
    )
        .prop_map(
            |(message_id, task_id, role, parts, metadata, ext)| Message {
                message_id,
                context_id: task_id.clone(),
                task_id,
                role,
                parts,
                metadata,
                extensions: ext.clone(),
                reference_task_ids: ext,
            },
        )
}

fn status() -> impl Strategy<Value = TaskStatus> {
    (
        prop::sample::select(TaskState::ALL),
        option::of(message()),
        option::of(0i64..4_000_000_000),
    )
        .prop_map(|(state, message, ts)| TaskStatus {
            state,
            message,
            timestamp: ts.and_then(|s| Timestamp::from_unix_seconds(s).ok()),
        })
}

fn artifact() -> impl Strategy<Value = Artifact> {
    (text(), option::of(text()), vec(part(), 0..3), meta()).prop_map(
        |(artifact_id, name, parts, metadata)| Artifact {
            artifact_id,
            description: name.clone(),
            name,
            parts,
            metadata,
            extensions: vec![],
        },
    )
}

fn task() -> impl Strategy<Value = Task> {
    (
        text(),
        option::of(text()),
        status(),
        vec(artifact(), 0..3),
        vec(message(), 0..4),
        meta(),
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// The count of a task (artifacts, history, metadata, any text), which is its stored size,
    /// is its JSON length, byte for byte.
    #[test]
    fn a_task_counts_as_its_json(t in task()) {
        prop_assert_eq!(len(&t), serde_json::to_vec(&t).unwrap().len());
    }

    #[test]
    fn events_count_as_their_json(t in task(), a in artifact(), m in message()) {
        let evs = [
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: t.id.clone(),
                context_id: t.context_id.clone().unwrap_or_default(),
                status: t.status.clone(),
                metadata: t.metadata.clone(),
            }),
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: t.id.clone(),
                context_id: String::new(),
                artifact: a,
                append: Some(true),
                last_chunk: None,
                metadata: None,
            }),
            StreamResponse::Message(m),
            StreamResponse::Task(t),
        ];
        for ev in &evs {
            prop_assert_eq!(len(ev), serde_json::to_vec(ev).unwrap().len());
        }
    }
}
