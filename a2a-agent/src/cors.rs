//! CORS: an allow-list of origins; A2A headers allowed and exposed; OPTIONS preflight handled.

use http::{HeaderName, HeaderValue, Method};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The CORS layer for `origins` (`*` = any).
pub fn layer(origins: &[String]) -> CorsLayer {
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers(tower_http::cors::AllowHeaders::mirror_request())
        .expose_headers([
            HeaderName::from_static("a2a-version"),
            HeaderName::from_static("a2a-extensions"),
            HeaderName::from_static("x-a2a-extensions"),
            HeaderName::from_static("etag"),
        ])
}
