//! `a2a_translate` (work in progress).
