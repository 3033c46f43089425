//! The admin API's error answers: `google.rpc.Status` JSON with the admin's status code.

use axum::http::StatusCode;
use axum::response::Response;

use crate::store::StoreError;

/// An admin error: a 1.0 `google.rpc.Status` body (`error.message` names the problem).
/// An admin API refusal (`Refusal::admin`) in the HTTP+JSON error form; shared by every admin
/// route module.
pub(crate) fn err(status: StatusCode, msg: &str) -> Response {
    crate::protocol::render::render(
        crate::protocol::render::Form::Rest,
        &crate::protocol::errors::Refusal::admin(status.as_u16(), msg),
    )
}

/// A store error as an admin API answer: 404 not found, 400 invalid, 503
/// `a2a_store_unavailable` when the database cannot be reached, else 500.
pub(crate) fn store_err(e: StoreError) -> Response {
    match e {
        e if e.is_unavailable() => crate::protocol::render::render(
            crate::protocol::render::Form::Rest,
            &crate::protocol::errors::Refusal::store_unavailable(),
        ),
        StoreError::NotFound(m) => err(StatusCode::NOT_FOUND, &format!("{m} not found")),
        StoreError::Invalid(m) => err(StatusCode::BAD_REQUEST, &m),
        other => err(StatusCode::INTERNAL_SERVER_ERROR, &other.to_string()),
    }
}
