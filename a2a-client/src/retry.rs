//! Automatic retries of calls that failed on the way (the client side of the retry contract).
//!
//! A call that fails because the network or an intermediary failed (connection refused or
//! reset, the connection closing before the answer, a timeout, HTTP 502/503/504, the A2A
//! `UnavailableError` or a `ResourceExhausted` "server busy" refusal) is sent again, up to
//! [`Retry::attempts`] times in all, with exponential backoff and jitter. A call the agent
//! answered (an A2A error such as InvalidParams or TaskNotFound, an HTTP 4xx) is never retried:
//! the answer is the agent's decision.
//!
//! Whether a failure may be retried depends on the operation (see `docs/client.md`):
//! - the request surely did not reach the agent (the connection was refused; a `ResourceExhausted`
//!   refusal comes before any work): every operation is retried;
//! - the request may have been processed and its answer lost (the connection broke after the
//!   request was sent, a timeout, 502/503/504, `UnavailableError`): only idempotent operations
//!   are retried. Reads, `CancelTask` and a push config create with an `id` are idempotent; a
//!   `SendMessage` is when the caller says its agent honours the idempotent-send contract
//!   ([`Retry::idempotent_sends`], off by default): the client sends every attempt with the same
//!   `messageId`, and such an agent answers a repeated one from the first send. A push config
//!   create without an `id` and a delete are not.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{ClientError, ErrorKind};
use crate::sse::SseError;
use crate::transport::V1Request;

/// Called before each retry with the attempt about to be made (2, 3, ...), the operation name
/// and the error of the previous attempt.
pub type OnRetry = Arc<dyn Fn(u32, &str, &ClientError) + Send + Sync>;

/// Retry settings of a client's calls ([`crate::ClientBuilder::retry`]).
#[derive(Clone)]
pub struct Retry {
    /// Attempts in all, the first included (1 = no retry). Default 3.
    pub attempts: u32,
    /// Wait before the first retry, doubled for each further one up to `max_backoff`; each wait
    /// is drawn between half and all of that (jitter). Default 200 ms.
    pub backoff: Duration,
    /// Longest wait between two attempts. Default 5 s.
    pub max_backoff: Duration,
    /// Whether a `SendMessage` whose answer may have been lost is retried (with the same
    /// `messageId`). Safe with agents that honour the idempotent-send contract (`a2a-agent` with
    /// `idempotency_window_s`); against an agent that does not, a retry may run the message
    /// twice, so it is off by default: turn it on for agents known to honour the contract.
    /// Default false (sends are then retried only when they surely did not arrive).
    pub idempotent_sends: bool,
    /// Called before each retry (the `a2a` CLI prints a line).
    pub on_retry: Option<OnRetry>,
}

impl std::fmt::Debug for Retry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retry")
            .field("attempts", &self.attempts)
            .field("backoff", &self.backoff)
            .field("max_backoff", &self.max_backoff)
            .field("idempotent_sends", &self.idempotent_sends)
            .finish_non_exhaustive()
    }
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            attempts: 3,
            backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            idempotent_sends: false,
            on_retry: None,
        }
    }
}

impl Retry {
    /// No retries: every call is sent once.
    pub fn off() -> Retry {
        Retry {
            attempts: 1,
            ..Retry::default()
        }
    }
}

/// How far a failed attempt got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The agent surely did not process the request.
    NotProcessed,
    /// The request may have been processed; its answer was lost.
    Ambiguous,
    /// An answer (or a local error): not retried.
    Final,
}

/// Classifies a failed attempt.
pub(crate) fn classify(e: &ClientError) -> Failure {
    match e {
        ClientError::Transport(t) if t.is_connect() => Failure::NotProcessed,
        ClientError::Transport(t) if t.is_builder() || t.is_redirect() => Failure::Final,
        ClientError::Transport(_) | ClientError::Sse(SseError::Body(_)) => Failure::Ambiguous,
        ClientError::Http {
            status: 502..=504, ..
        } => Failure::Ambiguous,
        ClientError::A2a(a) if a.local => Failure::Final,
        ClientError::A2a(a) if a.kind == ErrorKind::ResourceExhausted => Failure::NotProcessed,
        ClientError::A2a(a) if a.kind == ErrorKind::Unavailable => Failure::Ambiguous,
        _ => Failure::Final,
    }
}

/// Whether repeating `request` after its answer was lost is harmless.
pub(crate) fn idempotent(request: &V1Request, settings: &Retry) -> bool {
    match request {
        V1Request::SendMessage(_) | V1Request::SendStreamingMessage(_) => settings.idempotent_sends,
        V1Request::CreateTaskPushNotificationConfig(c) => {
            c.id.as_deref().is_some_and(|id| !id.is_empty())
        }
        V1Request::DeleteTaskPushNotificationConfig(_) => false,
        V1Request::GetTask(_)
        | V1Request::ListTasks(_)
        | V1Request::CancelTask(_)
        | V1Request::SubscribeToTask(_)
        | V1Request::GetTaskPushNotificationConfig(_)
        | V1Request::ListTaskPushNotificationConfigs(_)
        | V1Request::GetExtendedAgentCard(_) => true,
    }
}

/// Gives a send without a `messageId` one, so that every attempt carries the same.
pub(crate) fn with_message_id(mut request: V1Request) -> V1Request {
    if let V1Request::SendMessage(r) | V1Request::SendStreamingMessage(r) = &mut request
        && r.message.message_id.trim().is_empty()
    {
        r.message.message_id = uuid::Uuid::new_v4().to_string();
    }
    request
}

/// The wait before retry number `retry` (1-based): `base` doubled `retry - 1` times, capped at
/// `max`, then drawn between half and all of it (so concurrent clients spread out).
pub(crate) fn backoff(base: Duration, max: Duration, retry: u32) -> Duration {
    let nominal = base
        .saturating_mul(1u32 << retry.saturating_sub(1).min(16))
        .min(max);
    let half = nominal / 2;
    let spread = u64::try_from(half.as_micros()).unwrap_or(u64::MAX);
    if spread == 0 {
        return nominal;
    }
    let draw = (uuid::Uuid::new_v4().as_u128() % u128::from(spread + 1)) as u64;
    half + Duration::from_micros(draw)
}

/// Runs `op` (given the attempt number, from 1) until it succeeds, fails in a way that is not
/// retried for `request`, or the attempts are spent; then the error is
/// [`ClientError::RetriesExhausted`] when more than one attempt was made.
pub(crate) async fn run<T, F, Fut>(
    settings: &Retry,
    request: &V1Request,
    mut op: F,
) -> Result<T, ClientError>
where
    F: FnMut(u32) -> Fut,
    Fut: std::future::Future<Output = Result<T, ClientError>>,
{
    let idempotent = idempotent(request, settings);
    let mut attempt = 1u32;
    loop {
        let e = match op(attempt).await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let retry = match classify(&e) {
            Failure::NotProcessed => true,
            Failure::Ambiguous => idempotent,
            Failure::Final => false,
        };
        if !retry {
            return Err(e);
        }
        if attempt >= settings.attempts.max(1) {
            return Err(if attempt == 1 {
                e
            } else {
                ClientError::RetriesExhausted {
                    what: request.method_name().to_string(),
                    attempts: attempt,
                    last: Box::new(e),
                }
            });
        }
        attempt += 1;
        if let Some(cb) = &settings.on_retry {
            cb(attempt, request.method_name(), &e);
        }
        tokio::time::sleep(backoff(settings.backoff, settings.max_backoff, attempt - 1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_types::v1;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let (base, max) = (Duration::from_millis(100), Duration::from_secs(1));
        for _ in 0..50 {
            let first = backoff(base, max, 1);
            assert!(first >= base / 2 && first <= base, "{first:?}");
            let third = backoff(base, max, 3);
            assert!(third >= base * 2 && third <= base * 4, "{third:?}");
            let late = backoff(base, max, 30);
            assert!(late >= max / 2 && late <= max, "{late:?}");
        }
    }

    #[test]
    fn sends_get_a_message_id_once_and_keep_a_given_one() {
        let mut m = v1::Message::user_text("x");
        m.message_id = String::new();
        let V1Request::SendMessage(r) =
            with_message_id(V1Request::SendMessage(v1::SendMessageRequest::new(m)))
        else {
            unreachable!()
        };
        assert_eq!(r.message.message_id.len(), 36, "a UUID");
        let given = v1::Message::user_text("x").with_message_id("mine");
        let V1Request::SendMessage(r) =
            with_message_id(V1Request::SendMessage(v1::SendMessageRequest::new(given)))
        else {
            unreachable!()
        };
        assert_eq!(r.message.message_id, "mine");
    }

    #[test]
    fn which_operations_repeat_safely() {
        let s = Retry::default();
        let push = |id: Option<&str>| {
            let mut c = v1::TaskPushNotificationConfig::new("t", "http://h/");
            c.id = id.map(str::to_string);
            V1Request::CreateTaskPushNotificationConfig(c)
        };
        assert!(idempotent(&push(Some("p1")), &s));
        assert!(!idempotent(&push(None), &s));
        assert!(idempotent(
            &V1Request::CancelTask(v1::CancelTaskRequest::new("t")),
            &s
        ));
        let send = V1Request::SendMessage(v1::SendMessageRequest::new(v1::Message::user_text("x")));
        // sends repeat only when the caller says the agent dedupes them (off by default)
        assert!(!idempotent(&send, &s));
        let dedupes = Retry {
            idempotent_sends: true,
            ..Retry::default()
        };
        assert!(idempotent(&send, &dedupes));
    }

    #[test]
    fn answers_are_final_and_busy_is_not_processed() {
        use crate::error::A2aError;
        let a2a = |kind| ClientError::from(A2aError::from_jsonrpc(kind, "x".into(), None));
        assert_eq!(classify(&a2a(-32602)), Failure::Final, "InvalidParams");
        assert_eq!(classify(&a2a(-32001)), Failure::Final, "TaskNotFound");
        let mut busy = A2aError::local(ErrorKind::ResourceExhausted, "busy");
        busy.local = false;
        assert_eq!(classify(&busy.clone().into()), Failure::NotProcessed);
        busy.kind = ErrorKind::Unavailable;
        assert_eq!(classify(&busy.into()), Failure::Ambiguous);
        let http = |status| ClientError::Http {
            status,
            url: "u".into(),
            body: String::new(),
        };
        assert_eq!(classify(&http(503)), Failure::Ambiguous);
        assert_eq!(classify(&http(500)), Failure::Final);
        assert_eq!(classify(&http(429)), Failure::Final);
    }
}
