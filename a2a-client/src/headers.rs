//! Header names of A2A service parameters and media types.

/// `A2A-Version` (1.0 §3.6.1).
pub const VERSION: &str = "A2A-Version";
/// `A2A-Extensions` (1.0).
pub const EXTENSIONS: &str = "A2A-Extensions";
/// `X-A2A-Extensions` (0.3).
pub const EXTENSIONS_V03: &str = "X-A2A-Extensions";
/// `application/json`.
pub const JSON: &str = "application/json";
/// `application/a2a+json` (1.0 HTTP+JSON, §11.1).
pub const A2A_JSON: &str = "application/a2a+json";
/// `text/event-stream`.
pub const EVENT_STREAM: &str = "text/event-stream";
