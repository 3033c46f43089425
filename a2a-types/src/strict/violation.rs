//! What strict validation reports: a JSON path and what is wrong there.

use std::fmt;

// ---------------------------------------------------------------------------------------------
// Violations
// ---------------------------------------------------------------------------------------------

/// What is wrong at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViolationKind {
    /// A member the version does not define.
    UnknownMember(String),
    /// A REQUIRED member is absent.
    MissingRequired(String),
    /// None of a oneof's members is present (names listed).
    MissingOneOf(Vec<String>),
    /// More than one of a oneof's members is present.
    ConflictingMembers(Vec<String>),
    /// A value outside the enum (the offending value as JSON text).
    BadEnumValue(String),
    /// A discriminator (`kind`) with an unknown value (value, allowed values).
    WrongDiscriminator {
        /// The discriminating member.
        member: String,
        /// The value found (JSON text).
        found: String,
        /// The values allowed.
        expected: Vec<String>,
    },
    /// The JSON type is wrong.
    WrongType {
        /// Expected JSON type(s).
        expected: String,
        /// Found JSON type.
        found: &'static str,
    },
    /// A list is shorter than allowed (REQUIRED repeated fields MUST be non-empty).
    TooFewItems {
        /// The minimum.
        min: u64,
    },
    /// A string or number does not match its format (`byte`, `date-time`, `int32`, ...).
    BadFormat {
        /// The format name.
        format: String,
        /// Why.
        detail: String,
    },
    /// Anything else (e.g. a `false` schema).
    Other(String),
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViolationKind::UnknownMember(m) => write!(f, "unknown member {m}"),
            ViolationKind::MissingRequired(m) => write!(f, "missing required member {m}"),
            ViolationKind::MissingOneOf(ms) => write!(f, "missing one of {}", ms.join(", ")),
            ViolationKind::ConflictingMembers(ms) => {
                write!(
                    f,
                    "conflicting members {} (only one allowed)",
                    ms.join(", ")
                )
            }
            ViolationKind::BadEnumValue(v) => write!(f, "bad enum value {v}"),
            ViolationKind::WrongDiscriminator {
                member,
                found,
                expected,
            } => write!(
                f,
                "wrong discriminator {member}={found} (expected one of {})",
                expected.join(", ")
            ),
            ViolationKind::WrongType { expected, found } => {
                write!(f, "wrong type: expected {expected}, found {found}")
            }
            ViolationKind::TooFewItems { min } => {
                write!(f, "too few items: at least {min} required")
            }
            ViolationKind::BadFormat { format, detail } => write!(f, "bad {format}: {detail}"),
            ViolationKind::Other(s) => f.write_str(s),
        }
    }
}

/// One strict-validation finding: a JSON path and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The JSON path of the object or value concerned (`params.message.parts[1]`; `$` = root).
    pub path: String,
    /// What is wrong.
    pub kind: ViolationKind,
}

impl Violation {
    /// The reason text (the part after `path: `).
    pub fn reason(&self) -> String {
        self.kind.to_string()
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.kind)
    }
}
