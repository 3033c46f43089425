//! Crate-internal macros (usable from `v1` and `v03`).

/// Declares a protobuf enum as ProtoJSON: serialized as its proto name, parsed from the name or
/// its integer value, with a JSON Schema listing both.
///
/// ```ignore
/// proto_enum! {
///     /// Doc.
///     pub enum Role: "Role" {
///         /// Doc.
///         Unspecified = 0 => "ROLE_UNSPECIFIED",
///         User = 1 => "ROLE_USER",
///     }
/// }
/// ```
/// The first variant is the `Default`.
macro_rules! proto_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident : $schema_name:literal {
            $(#[$vmeta0:meta])*
            $v0:ident = $n0:literal => $s0:literal,
            $(
                $(#[$vmeta:meta])*
                $v:ident = $n:literal => $s:literal,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub enum $name {
            $(#[$vmeta0])*
            #[default]
            $v0,
            $(
                $(#[$vmeta])*
                $v,
            )*
        }

        impl $name {
            /// Every value, in proto order.
            pub const ALL: &'static [$name] = &[$name::$v0, $($name::$v,)*];

            /// The proto enum value name (the ProtoJSON spelling).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $name::$v0 => $s0,
                    $($name::$v => $s,)*
                }
            }

            /// The proto enum number.
            pub const fn number(self) -> i32 {
                match self {
                    $name::$v0 => $n0,
                    $($name::$v => $n,)*
                }
            }

            /// Looks a value up by its proto number.
            pub const fn from_number(n: i64) -> Option<Self> {
                match n {
                    $n0 => Some($name::$v0),
                    $($n => Some($name::$v),)*
                    _ => None,
                }
            }

            /// Looks a value up by its proto name.
            pub fn from_name(s: &str) -> Option<Self> {
                match s {
                    $s0 => Some($name::$v0),
                    $($s => Some($name::$v),)*
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::macros::UnknownEnumValue;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_name(s).ok_or_else(|| $crate::macros::UnknownEnumValue {
                    enum_name: $schema_name,
                    value: s.to_owned(),
                })
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl ::serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a ", $schema_name, " name or number"))
                    }
                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_name(v).ok_or_else(|| {
                            E::custom(format_args!(
                                concat!("unknown ", $schema_name, " value {:?}"),
                                v
                            ))
                        })
                    }
                    fn visit_i64<E: ::serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        $name::from_number(v).ok_or_else(|| {
                            E::custom(format_args!(
                                concat!("unknown ", $schema_name, " number {}"),
                                v
                            ))
                        })
                    }
                    fn visit_u64<E: ::serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
                    }
                }
                d.deserialize_any(V)
            }
        }

        #[cfg(feature = "schema")]
        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                $schema_name.into()
            }
            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                concat!(module_path!(), "::", $schema_name).into()
            }
            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({
                    "description": concat!("Proto enum ", $schema_name, ": the value name (integer numbers are accepted on input)."),
                    "enum": [$s0, $($s,)* $n0, $($n,)*]
                })
            }
        }
    };
}

pub(crate) use proto_enum;

/// A string that names no value of a proto enum.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {enum_name} value {value:?}")]
pub struct UnknownEnumValue {
    /// The enum's proto name.
    pub enum_name: &'static str,
    /// The refused text.
    pub value: String,
}

/// Implements `Deserialize` for a proto `oneof` wrapper enum (`{"task": ..}`): unknown members
/// are ignored (S1 §5.7), `null` members count as unset, and zero or several set members are an
/// error. Serialization stays with `#[derive(Serialize)]`.
macro_rules! oneof_deserialize {
    ($ty:ident { $($name:literal $(| $alias:literal)* => $variant:ident($inner:ty)),+ $(,)? }) => {
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> ::serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($ty), " object with exactly one of: ", $($name, " "),+))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> Result<$ty, A::Error> {
                        const NAMES: &[&str] = &[$($name, $($alias,)*)+];
                        let mut found: Option<($ty, &'static str)> = None;
                        while let Some(key) = map.next_key_seed($crate::macros::KeySeed(NAMES))? {
                            let Some(i) = key else {
                                map.next_value::<::serde::de::IgnoredAny>()?;
                                continue;
                            };
                            match NAMES[i] {
                                $(
                                    $name $(| $alias)* => {
                                        let v: Option<$inner> = map.next_value()?;
                                        if let Some(v) = v {
                                            if let Some((_, prev)) = &found {
                                                return Err(::serde::de::Error::custom(format_args!(
                                                    "{} has both `{}` and `{}` (oneof allows one)",
                                                    stringify!($ty), prev, $name
                                                )));
                                            }
                                            found = Some(($ty::$variant(v), $name));
                                        }
                                    }
                                )+
                                _ => {
                                    map.next_value::<::serde::de::IgnoredAny>()?;
                                }
                            }
                        }
                        found.map(|(v, _)| v).ok_or_else(|| {
                            ::serde::de::Error::custom(concat!(
                                stringify!($ty), " needs one of: ", $($name, " "),+
                            ))
                        })
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}

pub(crate) use oneof_deserialize;

/// Reads a map key and returns its index in a list of names, without allocating
/// (`None` = a key not in the list).
pub(crate) struct KeySeed(pub &'static [&'static str]);

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed {
    type Value = Option<usize>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl serde::de::Visitor<'_> for KeySeed {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|k| *k == v))
    }
    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|k| k.as_bytes() == v))
    }
}
