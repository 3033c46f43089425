//! A2A 1.0 models (work in progress).
