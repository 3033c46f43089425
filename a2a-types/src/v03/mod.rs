//! A2A 0.3 in its JSON-RPC dialect: the `types.ts` model (J0 `specification/json/a2a.json` @ v0.3.0).
//!
//! Every object that the 0.3 JSON-RPC binding puts on the wire has a type here, with the exact member
//! names, `required` lists and enum strings of J0:
//! - `kind` discriminators (`"message"`, `"task"`, `"status-update"`, `"artifact-update"`, and
//!   `"text"`/`"file"`/`"data"` on parts) are always emitted; on parse a wrong one is refused
//!   and a missing one is inferred (the 0.3 spec examples and the Python SDK omit it), while
//!   [`validate`] reports it;
//! - [`TaskState`] is kebab-case and includes `unknown`;
//! - push-notification configs are nested ([`TaskPushNotificationConfig`]), and the push-config
//!   params use `id` for the **task** id (see [`GetTaskPushNotificationConfigParams`]);
//! - the agent card uses OpenAPI-style [`SecurityScheme`]s and `security: [{name: [scopes]}]`.
//!
//! Timestamps are kept as the exact text the peer sent ([`TaskStatus::timestamp`]), because 0.3
//! peers send naive ISO 8601 (`"2025-04-02T16:59:25.331844"`) and a parse/serialize round trip
//! must not rewrite them; [`TaskStatus::timestamp_utc`] interprets them.
//!
//! Strict validation ([`validate`], [`validate_request`], [`params_validator`],
//! [`result_validator`]) uses the schemas derived from these types with [`crate::strict`] and
//! reports every unknown member, missing required member, bad enum or `kind` value, non-object
//! `data`, bad base64 and unparseable timestamp with its JSON path.
//!
//! The HTTP+JSON dialect of 0.3 (ProtoJSON of the 0.3 proto) is a different JSON shape and lives in
//! [`rest`].
//!
//! ```
//! use a2a_types::v03::{Message, MessageSendParams, Part, SendMessageResult};
//!
//! let params: MessageSendParams = serde_json::from_str(
//!     r#"{"message":{"kind":"message","messageId":"m1","role":"user",
//!         "parts":[{"kind":"text","text":"hi"}]}}"#,
//! )
//! .unwrap();
//! assert_eq!(params.message.parts[0].as_text(), Some("hi"));
//!
//! let reply = SendMessageResult::Message(Message::agent_text("m2", "hello"));
//! let json = serde_json::to_value(&reply).unwrap();
//! assert_eq!(json["kind"], "message");
//! assert_eq!(json["role"], "agent");
//! ```

pub mod rest;

#[cfg(feature = "schema")]
mod checks;
#[cfg(feature = "schema")]
pub use checks::{params_validator, result_validator, validate, validate_request};

#[cfg(feature = "schema")]
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, de::Error as _};
use serde_json::Value;

/// Free-form metadata object (`{ [key: string]: any }` in T0).
pub type Metadata = serde_json::Map<String, Value>;

/// Defines a zero-sized marker type that serializes as one fixed string and only parses that string.
///
/// Used for the `kind` discriminators that J0 declares with `const`.
macro_rules! kind_marker {
    ($(#[$doc:meta])* $name:ident, $value:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl $name {
            /// The discriminator string this marker stands for.
            pub const VALUE: &'static str = $value;
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        // Parsed through `deserialize_option`, so an absent member (serde's missing-field
        // deserializer answers `none`) or `null` reads as the marker: the lenient parse accepts
        // a missing `kind`, while the schema (no `serde(default)`) still lists it as required.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("\"", $value, "\""))
                    }
                    fn visit_none<E: serde::de::Error>(self) -> Result<$name, E> {
                        Ok($name)
                    }
                    fn visit_unit<E: serde::de::Error>(self) -> Result<$name, E> {
                        Ok($name)
                    }
                    fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<$name, D2::Error> {
                        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                        if s == $value {
                            Ok($name)
                        } else {
                            Err(D2::Error::invalid_value(
                                serde::de::Unexpected::Str(&s),
                                &concat!("\"", $value, "\""),
                            ))
                        }
                    }
                }
                d.deserialize_option(V)
            }
        }

        #[cfg(feature = "schema")]
        impl JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "const": $value })
            }
        }
    };
}

kind_marker!(
    /// The `kind: "message"` discriminator of [`Message`].
    MessageKind,
    "message"
);
kind_marker!(
    /// The `kind: "task"` discriminator of [`Task`].
    TaskKind,
    "task"
);
kind_marker!(
    /// The `kind: "status-update"` discriminator of [`TaskStatusUpdateEvent`].
    StatusUpdateKind,
    "status-update"
);
kind_marker!(
    /// The `kind: "artifact-update"` discriminator of [`TaskArtifactUpdateEvent`].
    ArtifactUpdateKind,
    "artifact-update"
);

mod card;
mod message;
mod requests;
mod task;

pub use card::*;
pub use message::*;
pub use requests::*;
pub use task::*;
