//! A2A errors as gRPC statuses (S1 §10.6): the status code of [`ErrorKind::grpc_code`], the
//! message, and a `google.rpc.Status` in `grpc-status-details-bin` whose details hold the
//! `google.rpc.ErrorInfo` (reason, domain `a2a-protocol.org`, metadata) and, when there are
//! field violations, a `google.rpc.BadRequest`.

use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::error::{A2A_ERROR_DOMAIN, A2aError, ErrorKind};

/// The gRPC status of an A2A error, its caller values elided ([`A2aError::bounded`]): the
/// message and details travel in trailers, which must stay well under HTTP/2's header limits.
pub fn to_status(e: &A2aError) -> Status {
    let e = e.bounded();
    let metadata: HashMap<String, String> = e
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut details = ErrorDetails::with_error_info(e.kind.reason(), A2A_ERROR_DOMAIN, metadata);
    for v in &e.field_violations {
        details.add_bad_request_violation(v.field.clone(), v.description.clone());
    }
    Status::with_error_details(Code::from_i32(e.kind.grpc_code()), &e.message, details)
}

/// The kind a status code stands for when the status has no A2A ErrorInfo.
pub fn kind_of_code(code: Code) -> ErrorKind {
    match code {
        Code::NotFound => ErrorKind::TaskNotFound,
        Code::InvalidArgument | Code::OutOfRange => ErrorKind::InvalidParams,
        Code::FailedPrecondition => ErrorKind::UnsupportedOperation,
        Code::Unimplemented => ErrorKind::MethodNotFound,
        Code::Unauthenticated => ErrorKind::Unauthenticated,
        Code::PermissionDenied => ErrorKind::PermissionDenied,
        Code::ResourceExhausted => ErrorKind::ResourceExhausted,
        Code::Unavailable | Code::DeadlineExceeded => ErrorKind::Unavailable,
        _ => ErrorKind::Internal,
    }
}

/// The A2A error a gRPC status carries: the kind from the ErrorInfo reason of the A2A domain,
/// else from the status code; ErrorInfo metadata and BadRequest violations are kept.
pub fn from_status(s: &Status) -> A2aError {
    let details = s.get_error_details();
    let mut kind = kind_of_code(s.code());
    let mut e = A2aError::new(kind, s.message());
    if let Some(info) = details.error_info() {
        if info.domain == A2A_ERROR_DOMAIN
            && let Some(k) = ErrorKind::from_reason(&info.reason)
        {
            kind = k;
        }
        e.metadata
            .extend(info.metadata.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    e.kind = kind;
    if let Some(br) = details.bad_request() {
        for v in &br.field_violations {
            e = e.with_field_violation(v.field.clone(), v.description.clone());
        }
    }
    e
}

/// The `ErrorInfo` reason a status carries, whatever its domain (e.g. a gateway's own codes).
pub fn any_reason(s: &Status) -> Option<String> {
    s.get_error_details().error_info().map(|i| i.reason.clone())
}

/// The `ErrorInfo` reason of the A2A domain a status carries, as sent.
pub fn a2a_reason(s: &Status) -> Option<String> {
    s.get_error_details()
        .error_info()
        .filter(|i| i.domain == A2A_ERROR_DOMAIN)
        .map(|i| i.reason.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_kind_metadata_and_violations() {
        let e = A2aError::task_not_found("t-1")
            .with_field_violation("id", "no such task")
            .with_metadata("extra", "x");
        let s = to_status(&e);
        assert_eq!(s.code(), Code::NotFound);
        let back = from_status(&s);
        assert_eq!(back.kind, ErrorKind::TaskNotFound);
        assert_eq!(back.message, e.message);
        assert_eq!(back.metadata, e.metadata);
        assert_eq!(back.field_violations, e.field_violations);
    }

    #[test]
    fn spec_codes() {
        for (kind, code) in [
            (ErrorKind::TaskNotCancelable, Code::FailedPrecondition),
            (ErrorKind::VersionNotSupported, Code::FailedPrecondition),
            (ErrorKind::InvalidParams, Code::InvalidArgument),
            (ErrorKind::Unauthenticated, Code::Unauthenticated),
            (ErrorKind::Internal, Code::Internal),
        ] {
            let s = to_status(&A2aError::new(kind, "m"));
            assert_eq!(s.code(), code, "{kind:?}");
            let info = s.get_error_details().error_info().cloned().expect("info");
            assert_eq!(info.reason, kind.reason());
            assert_eq!(info.domain, "a2a-protocol.org");
            assert_eq!(from_status(&s).kind, kind);
        }
    }

    #[test]
    fn long_values_stay_out_of_the_trailers() {
        let id = "x".repeat(100_000);
        let e = A2aError::task_not_found(&id).with_field_violation("id", format!("{id}?"));
        let s = to_status(&e);
        let trailers = s.clone().into_http::<()>();
        let size: usize = trailers
            .headers()
            .iter()
            .map(|(k, v)| k.as_str().len() + v.len())
            .sum();
        assert!(size < 4096, "{size}");
        let back = from_status(&s);
        assert_eq!(back.kind, ErrorKind::TaskNotFound);
        assert!(back.metadata["taskId"].ends_with("(100000 bytes)"));
    }

    #[test]
    fn a_bare_status_maps_by_code() {
        let e = from_status(&Status::unauthenticated("no token"));
        assert_eq!(e.kind, ErrorKind::Unauthenticated);
        assert_eq!(e.message, "no token");
        // An ErrorInfo of another domain does not decide the kind.
        let s = Status::with_error_details(
            Code::NotFound,
            "m",
            ErrorDetails::with_error_info("TASK_NOT_CANCELABLE", "example.com", HashMap::new()),
        );
        assert_eq!(from_status(&s).kind, ErrorKind::TaskNotFound);
    }
}
