//! `a2a_gateway` (work in progress).
