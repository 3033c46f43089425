//! Protocol version negotiation: kept as a path for [`crate::edge::version`], where it lives.

pub use crate::edge::version::{Version, parse_version, requested_version};
