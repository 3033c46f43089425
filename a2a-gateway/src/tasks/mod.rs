//! What the gateway keeps of peer tasks: who owns each ([`ownership`]), relayed events kept for
//! resumes ([`replay`]) and resuming a stream ([`resume`]).

pub mod ownership;
pub(crate) mod replay;
pub(crate) mod resume;
