//! A2A 0.3 models (work in progress).

pub mod rest;
