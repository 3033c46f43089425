//! A step counter for the cost of [`super::find`], kept only in unit tests and with the
//! `pii-steps` feature (the fuzz target `pii_scan` checks the doubling rule on every input).
//!
//! Every loop of the detectors charges the bytes it looks at (or one step for a fixed-cost
//! check), and every regular-expression search charges the length of its haystack once: the
//! `regex` crate searches in time linear in the haystack for these patterns (each either has a
//! bounded length or ends where its run of characters ends, so a search never looks far past
//! the match it returns). The doubling test (`cost_tests.rs`) holds the total of the counter on
//! a corpus of `2n` bytes to about twice its total on `n` bytes. Outside unit tests and the
//! feature [`charge`] compiles to nothing.

#[cfg(any(test, feature = "pii-steps"))]
use std::cell::Cell;

#[cfg(any(test, feature = "pii-steps"))]
thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// Counts `n` steps of work (unit tests and `pii-steps` only).
#[inline(always)]
pub(super) fn charge(n: usize) {
    #[cfg(any(test, feature = "pii-steps"))]
    STEPS.with(|s| s.set(s.get() + n as u64));
    #[cfg(not(any(test, feature = "pii-steps")))]
    let _ = n;
}

/// The steps counted on this thread since the last call, and a reset.
#[cfg(any(test, feature = "pii-steps"))]
pub fn take() -> u64 {
    STEPS.with(|s| s.replace(0))
}
