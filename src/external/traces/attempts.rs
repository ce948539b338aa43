//! The attempt signals a span carries, read the same way from every trace
//! format: how many times a request went out, and what says it was not a
//! retry.
//!
//! - `http.request.resend_count` (older `http.resend_count`,
//!   `http.retry_count`) on a client span: this span is attempt
//!   resend_count + 1 of its logical call.
//! - `http.request.header.x-envoy-attempt-count` on a server span: the
//!   Envoy sidecar or proxy in front of the caller sent this attempt.
//! - gRPC: `previous-rpc-attempts` on an A72 attempt span,
//!   `grpc-previous-rpc-attempts` metadata on a server span
//!   (`rpc.grpc.request.metadata.grpc-previous-rpc-attempts`): attempt
//!   n + 1. An attempt span with `transparent-retry: true` is gRPC's own
//!   resend of an RPC that never reached the server: not a retry.
//! - Not retries: OpenTelemetry's resend_count also counts redirects and
//!   authentication resends. A client span answered with 3xx, 401 or 407
//!   (`http.response.status_code`, older `http.status_code`) is followed by
//!   such a resend; it is not counted.
//! - Failure: an error status (OTLP `status.code` 2, Jaeger/Zipkin `error`
//!   tag, `otel.status_code: ERROR`), an HTTP status of 5xx or 429, or a
//!   gRPC status other than OK.

/// A span attribute, whatever the format wrote it as.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Attr<'a> {
    Str(&'a str),
    Int(i128),
    Bool(bool),
}

impl Attr<'_> {
    fn number(self) -> Option<u32> {
        match self {
            Attr::Int(n) => u32::try_from(n).ok(),
            Attr::Str(s) => s.trim().parse().ok(),
            Attr::Bool(_) => None,
        }
    }

    fn truth(self) -> bool {
        match self {
            Attr::Bool(b) => b,
            Attr::Str(s) => s.eq_ignore_ascii_case("true"),
            Attr::Int(n) => n != 0,
        }
    }
}

/// What one span says about attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Signals {
    /// The attempt number this span is (1 for the first), from
    /// resend_count or gRPC's previous attempts.
    pub attempt: Option<u32>,
    /// `x-envoy-attempt-count` on a server span: the proxy's attempt number.
    pub(crate) proxy_attempt: Option<u32>,
    /// The next request is a redirect or an authentication resend, or this
    /// one is gRPC's transparent retry: not a retry.
    pub(crate) not_retry: bool,
    /// The request failed.
    pub failed: bool,
    /// The request is known to have succeeded: a 2xx status, gRPC OK, or
    /// the format's own word (OTLP status OK; in Zipkin and Jaeger the
    /// `error` tag marks every failed span, so a span without one and
    /// without a failing status succeeded). A success ends a logical call:
    /// a request sent after it is a new call, not a retry.
    pub succeeded: bool,
}

const RESEND: &[&str] = &[
    "http.request.resend_count",
    "http.resend_count",
    "http.retry_count",
];
const GRPC_PREVIOUS: &[&str] = &[
    "previous-rpc-attempts",
    "grpc.previous_rpc_attempts",
    "grpc-previous-rpc-attempts",
    "rpc.grpc.request.metadata.grpc-previous-rpc-attempts",
];
const ENVOY: &[&str] = &[
    "http.request.header.x-envoy-attempt-count",
    "x-envoy-attempt-count",
];
const STATUS: &[&str] = &["http.response.status_code", "http.status_code"];

fn first<'a>(attr: &impl Fn(&str) -> Option<Attr<'a>>, keys: &[&str]) -> Option<u32> {
    keys.iter().find_map(|k| attr(k).and_then(Attr::number))
}

/// The signals among a span's attributes; `error` is what the format's own
/// status field says (OTLP `status.code`), if anything, and `ok` whether
/// the format says the span succeeded when nothing among its attributes
/// says it failed.
pub(crate) fn read<'a>(attr: impl Fn(&str) -> Option<Attr<'a>>, error: bool, ok: bool) -> Signals {
    let resend = first(&attr, RESEND).map(|r| r.saturating_add(1));
    let grpc = first(&attr, GRPC_PREVIOUS).map(|r| r.saturating_add(1));
    let status = first(&attr, STATUS);
    let redirect = status.is_some_and(|s| (300..400).contains(&s) || s == 401 || s == 407);
    let transparent = attr("transparent-retry").is_some_and(Attr::truth);
    let error_tag = attr("error").is_some_and(Attr::truth)
        || matches!(attr("otel.status_code"), Some(Attr::Str(s)) if s.eq_ignore_ascii_case("error"));
    let grpc_status = first(&attr, &["rpc.grpc.status_code"]);
    let grpc_failed = grpc_status.is_some_and(|c| c != 0);
    let failed = error || error_tag || grpc_failed || status.is_some_and(|s| s >= 500 || s == 429);
    let answered = status.is_some_and(|s| (200..300).contains(&s)) || grpc_status == Some(0);
    let not_retry = redirect || transparent;
    Signals {
        attempt: match (resend, grpc) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        },
        proxy_attempt: first(&attr, ENVOY),
        not_retry,
        failed,
        succeeded: !failed
            && !not_retry
            && (answered || (ok && status.is_none_or(|s| (200..300).contains(&s)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of<'a>(pairs: &'a [(&'a str, Attr<'a>)]) -> impl Fn(&str) -> Option<Attr<'a>> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v)
    }

    #[test]
    fn resend_count_and_its_older_names() {
        for key in RESEND {
            let s = read(of(&[(key, Attr::Int(2))]), false, false);
            assert_eq!(s.attempt, Some(3), "{key}");
        }
        let s = read(
            of(&[("http.request.resend_count", Attr::Str("1"))]),
            false,
            false,
        );
        assert_eq!(s.attempt, Some(2));
    }

    #[test]
    fn redirects_and_auth_are_not_retries() {
        for code in [301, 302, 307, 401, 407] {
            let s = read(
                of(&[("http.response.status_code", Attr::Int(code))]),
                false,
                false,
            );
            assert!(s.not_retry && !s.failed, "{code}");
        }
        let s = read(
            of(&[("http.response.status_code", Attr::Int(503))]),
            false,
            false,
        );
        assert!(!s.not_retry && s.failed);
    }

    #[test]
    fn a_success_is_a_2xx_grpc_ok_or_the_formats_own_word() {
        let status = |code| [("http.response.status_code", Attr::Int(code))];
        assert!(read(of(&status(200)), false, false).succeeded);
        assert!(read(of(&[("rpc.grpc.status_code", Attr::Int(0))]), false, false).succeeded);
        // Nothing said: unknown, unless the format's own word is success.
        assert!(!read(of(&[]), false, false).succeeded);
        assert!(read(of(&[]), false, true).succeeded);
        // A failing or undecided status outweighs the format's word.
        for code in [404, 429, 503] {
            assert!(!read(of(&status(code)), false, true).succeeded, "{code}");
        }
        assert!(!read(of(&[("error", Attr::Str("true"))]), false, true).succeeded);
        assert!(!read(of(&status(302)), false, true).succeeded);
    }

    #[test]
    fn grpc_attempts_and_transparent_retries() {
        let s = read(
            of(&[
                ("previous-rpc-attempts", Attr::Int(1)),
                ("transparent-retry", Attr::Bool(true)),
            ]),
            false,
            false,
        );
        assert_eq!(s.attempt, Some(2));
        assert!(s.not_retry);
    }

    #[test]
    fn envoy_attempt_count_and_bad_values() {
        let s = read(
            of(&[("http.request.header.x-envoy-attempt-count", Attr::Str("3"))]),
            false,
            false,
        );
        assert_eq!(s.proxy_attempt, Some(3));
        let s = read(
            of(&[("http.request.resend_count", Attr::Str("many"))]),
            false,
            false,
        );
        assert_eq!(s, Signals::default());
        let s = read(
            of(&[("http.request.resend_count", Attr::Int(-4))]),
            false,
            false,
        );
        assert_eq!(s.attempt, None);
    }
}
