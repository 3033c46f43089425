//! The writer held against `serde_json` on fixed values and on generated tasks, messages and
//! events (the generators of `json_size`'s tests).

use super::to_string;
use crate::json_size::tests::{artifact, message, task};
use crate::model::{StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use proptest::prelude::*;
use serde_json::json;

fn same<T: serde::Serialize + ?Sized>(v: &T) {
    assert_eq!(to_string(v, 0).unwrap(), serde_json::to_string(v).unwrap());
}

#[test]
fn writes_what_serde_json_writes() {
    same("");
    same("plain ascii text, longer than one word");
    same("quote \" backslash \\ newline \n tab \t cr \r bell \u{7} nul \u{0} esc \u{1b}");
    same("\u{8}\u{c}\u{1f}\u{7f} é ü 日本 🎉 \"\"\"\"\"\"\"\"\\\\\\\\\\\\\\\\");
    for n in [0u64, 9, 10, 99, 100, u64::MAX] {
        same(&n);
    }
    for n in [0i64, -1, -9, -10, i64::MIN, i64::MAX] {
        same(&n);
    }
    same(&i128::MIN);
    same(&u128::MAX);
    for f in [
        0.0f64,
        -0.0,
        1.5,
        1e20,
        1e300,
        -2.5e-300,
        f64::NAN,
        f64::INFINITY,
    ] {
        same(&f);
    }
    same(&1.25f32);
    same(&f32::NAN);
    same(&'"');
    same(&'k');
    same(&json!({"a": [1, null, true, false, "x"], "b": {"c": {}}, "d": [], "e": 1.5, "f\n": 2}));
    // Keys serde_json quotes (numbers, bools, chars) or refuses.
    same(&std::collections::BTreeMap::from([(1u32, "a"), (20, "b")]));
    same(&std::collections::BTreeMap::from([(true, 1)]));
    same(&std::collections::BTreeMap::from([('k', 1)]));
    same(&std::collections::BTreeMap::from([(Some("k"), 1)]));
    let refused = std::collections::BTreeMap::from([(vec![1u8], 1)]);
    assert!(to_string(&refused, 0).is_err() && serde_json::to_string(&refused).is_err());
    same(&(1, "two", [3u8, 4]));
    same(&Some(()));
    same(&None::<u8>);
    #[derive(serde::Serialize)]
    enum E {
        Unit,
        New(u8),
        Tuple(u8, String),
        Struct {
            a: u8,
            #[serde(rename = "b\"")]
            b: Option<String>,
        },
    }
    same(&vec![
        E::Unit,
        E::New(7),
        E::Tuple(1, "x".into()),
        E::Struct { a: 1, b: None },
    ]);
    #[derive(serde::Serialize)]
    struct Unit;
    same(&Unit);
    #[derive(serde::Serialize)]
    struct Bytes(#[serde(with = "serde_bytes_like")] Vec<u8>);
    mod serde_bytes_like {
        pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(v)
        }
    }
    same(&Bytes(vec![0, 1, 255]));
    let raw = serde_json::value::RawValue::from_string("{ \"a\" : 1 }".into()).unwrap();
    same(&raw);
    same(&json!({"raw": 1}));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// A task (artifacts, history, metadata, any text) is written as serde_json writes it.
    #[test]
    fn a_task_is_written_as_serde_json_writes_it(t in task()) {
        prop_assert_eq!(to_string(&t, 0).unwrap(), serde_json::to_string(&t).unwrap());
    }

    #[test]
    fn events_are_written_as_serde_json_writes_them(t in task(), a in artifact(), m in message()) {
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
            StreamResponse::Message(m.clone()),
            StreamResponse::Task(t.clone()),
        ];
        for ev in &evs {
            prop_assert_eq!(to_string(ev, 0).unwrap(), serde_json::to_string(ev).unwrap());
        }
        let sent = [
            crate::model::SendMessageResponse::Task(t),
            crate::model::SendMessageResponse::Message(m),
        ];
        for r in &sent {
            prop_assert_eq!(to_string(r, 0).unwrap(), serde_json::to_string(r).unwrap());
        }
    }
}
