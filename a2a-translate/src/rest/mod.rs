//! The 0.3 HTTP+JSON dialect (ProtoJSON of the 0.3 proto, `a2a_types::v03::rest`).
//!
//! Translation goes through the 0.3 JSON-RPC models: the REST value is moved into its
//! JSON-RPC twin (a structural move, no JSON), and the JSON-RPC translators decide everything
//! else, so both dialects follow exactly the same rules. What differs is handled here:
//! `content` vs `parts`, `TASK_STATE_CANCELLED`, resource names (`tasks/{id}/...`),
//! `pushNotification`, proto3 presence (`blocking`, `historyLength` 0 = unlimited), the card's
//! oneof security schemes, and what the 0.3 proto lacks (`referenceTaskIds`).

pub(crate) mod bridge;
pub mod to_v03;
pub mod to_v1;
