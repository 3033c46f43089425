//! `conformance` (work in progress).
