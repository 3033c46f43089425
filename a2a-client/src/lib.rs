//! `a2a_client` (work in progress).
