//! A2A 0.3 HTTP+JSON dialect (work in progress).
