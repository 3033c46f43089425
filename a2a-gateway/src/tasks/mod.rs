//! What the gateway keeps of peer tasks: who owns each ([`ownership`]), relayed events kept for
//! resumes ([`replay`], shared by replicas through PostgreSQL: [`replay_shared`]), resuming a stream ([`resume`]) and the last read of
//! ended tasks, which listings show again ([`terminal`]).

pub mod ownership;
pub(crate) mod replay;
pub(crate) mod replay_shared;
pub(crate) mod resume;
pub(crate) mod terminal;
