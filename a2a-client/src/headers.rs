//! Header names of A2A service parameters and media types: the `a2a_types::version` vocabulary
//! under the client's short names.

use a2a_types::version as v;

/// `A2A-Version` (1.0 §3.6.1).
pub const VERSION: &str = v::A2A_VERSION_HEADER;
/// `A2A-Extensions` (1.0).
pub const EXTENSIONS: &str = v::A2A_EXTENSIONS_HEADER;
/// `X-A2A-Extensions` (0.3).
pub const EXTENSIONS_V03: &str = v::X_A2A_EXTENSIONS_HEADER;
/// `application/json`.
pub const JSON: &str = v::APPLICATION_JSON;
/// `application/a2a+json` (1.0 HTTP+JSON, §11.1).
pub const A2A_JSON: &str = v::APPLICATION_A2A_JSON;
/// `text/event-stream`.
pub const EVENT_STREAM: &str = v::TEXT_EVENT_STREAM;
