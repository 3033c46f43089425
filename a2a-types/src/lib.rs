//! `a2a_types` (work in progress).
