//! The type registry: every top-level a2a-types type by dialect (`v1`, `v03`, `v03-rest`) and name, with
//! its default parse + serialize, its strict validation and its JSON Schema.
//!
//! Fixtures, the spec-example test, the schema export and the schema test all go through this table,
//! so a type added here is exercised everywhere. This file depends only on `a2a_types`, `serde`,
//! `serde_json` and `schemars`, so `a2a-types` tests include it with `#[path]`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One registered type.
#[derive(Clone, Copy)]
pub struct Entry {
    /// `v1`, `v03` or `v03-rest`.
    pub dialect: &'static str,
    /// The type's name (the Rust type name).
    pub name: &'static str,
    /// Default (lenient) parse of the JSON text of the value, then serialize back to a JSON value.
    pub round_trip: fn(&Value) -> Result<Value, String>,
    /// Strict validation: every violation as `path: reason`.
    pub strict: fn(&Value) -> Vec<String>,
    /// The type's JSON Schema (draft 2020-12, from schemars).
    pub schema: fn() -> Value,
}

/// The dialects, with the directory name used under `schemas/`.
pub const DIALECTS: &[&str] = &["v1", "v03", "v03-rest"];

/// Types named by fixtures or spec examples that a2a-types does not model yet, with the reason.
/// Nothing may stay here at the end of an issue without a stated reason.
pub const PENDING: &[(&str, &str, &str)] = &[];

/// Parses `v`'s JSON text as `T` (the way a peer's bytes arrive) and serializes it back.
pub fn round_trip_as<T: DeserializeOwned + Serialize>(v: &Value) -> Result<Value, String> {
    let text = v.to_string();
    let t: T = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    serde_json::to_value(&t).map_err(|e| e.to_string())
}

/// The schemars schema of `T` as a JSON value.
pub fn schema_of<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

macro_rules! entries {
    ($( $dialect:literal => [ $( $name:ident = $ty:ty ),* $(,)? ] ),* $(,)?) => {
        /// Every registered type.
        pub fn entries() -> Vec<Entry> {
            #[allow(unused_mut)]
            let mut out: Vec<Entry> = Vec::new();
            $( $(
                out.push(Entry {
                    dialect: $dialect,
                    name: stringify!($name),
                    round_trip: round_trip_as::<$ty>,
                    strict: |v| strict_of::<$ty>(v),
                    schema: schema_of::<$ty>,
                });
            )* )*
            out
        }
    };
}

/// Strict validation of `T` (placeholder until `a2a_types::strict` lands: nothing is reported).
pub fn strict_of<T>(_v: &Value) -> Vec<String> {
    Vec::new()
}

entries! {
    "v1" => [],
    "v03" => [],
    "v03-rest" => [],
}

/// Finds a registered type.
pub fn find(dialect: &str, name: &str) -> Option<Entry> {
    entries()
        .into_iter()
        .find(|e| e.dialect == dialect && e.name == name)
}

/// Why a type is not registered yet, if it is listed in [`PENDING`].
pub fn pending_reason(dialect: &str, name: &str) -> Option<&'static str> {
    PENDING
        .iter()
        .find(|(d, n, _)| *d == dialect && *n == name)
        .map(|(_, _, r)| *r)
}
