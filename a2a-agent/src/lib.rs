//! `a2a_agent` (work in progress).
