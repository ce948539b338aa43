//! Istio `VirtualService` (`networking.istio.io` v1, v1beta1, v1alpha3):
//! each `http[]` route's `retries` and `timeout`, applied to the calls to the
//! route's destinations that its `match` takes.
//!
//! What the fields mean (istio.io reference, HTTPRetry; istio/istio
//! pilot/pkg/networking/core/route/retry/retry.go, `ConvertPolicy`):
//!
//! - `attempts` counts RETRIES: `attempts: 3` is 4 requests, `max_attempts: 4`.
//!   `attempts: 0`, or `retries:` without `attempts`, disables retries.
//! - `perTryTimeout` is each attempt's timeout; without it Envoy uses the
//!   route `timeout` for each attempt.
//! - `retryOn` is Envoy's `x-envoy-retry-on` list plus status codes; absent,
//!   the default policy's conditions stay (see [`retry_on`] for the mapping).
//! - `backoff` (Istio 1.23+) is Envoy's base interval; the cap is 10 × base.
//! - The route `timeout` bounds the request with all its retries: it becomes
//!   an outer `istio-route` layer with that timeout and no retries.
//! - A route without `retries` gets Istio's default policy (presets
//!   `istio-default`, `istio-default-1.23`: 503 retried up to 1.23 only),
//!   located at the destination's `host:`.
//! - A route with several (weighted) destinations sends each request to one
//!   of them, retries included: every destination gets the route's layers.
//! - `retryRemoteLocalities`, `retryIgnorePreviousHosts` choose hosts, not
//!   counts: ignored with a note. Header and query-parameter matches cannot be
//!   decided from a topology: such a condition is taken to hold.

use std::time::Duration;

use super::facts::*;
use super::node::{self, Cx, entry, get, items, path, str_at};
use crate::policy::{Backoff, BackoffKind, Condition, Jitter, RetryOn, RetryPolicy};
use crate::source::error::LoadError;
use crate::source::{Node, Pos, Value};

/// What a sidecar's per-attempt timeout rests on when the route sets no
/// `perTryTimeout`: said wherever a figure uses it.
pub const PER_TRY_DEFAULT: &str =
    "perTryTimeout unset: Envoy's default gives each attempt the route timeout";

/// The newest Istio minor version this reader knows the default of.
pub const NEWEST_MINOR: u32 = 28;

/// The layer names this reader gives.
pub const SIDECAR: &str = "istio-sidecar";
pub const ROUTE: &str = "istio-route";

/// Istio's default retry policy for `1.minor`.
pub fn default_preset(minor: u32) -> &'static str {
    if minor >= 24 {
        "istio-default"
    } else {
        "istio-default-1.23"
    }
}

/// The conditions of Istio's default `retryOn`
/// (`connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes`)
/// as the presets write them: `connect`, and 503 up to 1.23 (see [`retry_on`]).
fn default_conditions(minor: u32) -> Vec<Condition> {
    let mut c = vec![Condition::Connect];
    if minor < 24 {
        c.push(Condition::Status(503));
    }
    c
}

pub fn read(
    cx: Cx,
    root: &Node,
    options: super::Options,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    let namespace = path(root, &["metadata", "namespace"])
        .and_then(str_at)
        .map(str::to_owned);
    let preset = default_preset(options.istio_minor);
    facts.istio_default = Some(preset);
    let group = facts.read_kinds.len();
    let Some(spec) = get(root, "spec") else {
        return Err(cx
            .f
            .error(root.pos, "a VirtualService without `spec:`")
            .with_help("a VirtualService has `spec: { hosts: [...], http: [...] }`"));
    };
    if get(spec, "delegate").is_some() || list_has_delegate(spec) {
        facts.note(
            Some(cx.at(spec.pos)),
            "a delegating VirtualService: its delegates' routes are not followed",
        );
    }
    for route in node::list(cx, spec, "http")? {
        read_route(
            cx,
            route,
            namespace.as_deref(),
            options,
            preset,
            group,
            facts,
        )?;
    }
    Ok(())
}

fn list_has_delegate(spec: &Node) -> bool {
    get(spec, "http").is_some_and(|h| items(h).iter().any(|r| get(r, "delegate").is_some()))
}

fn read_route(
    cx: Cx,
    route: &Node,
    namespace: Option<&str>,
    options: super::Options,
    preset: &'static str,
    group: usize,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    if !matches!(route.value, Value::Map(_)) {
        return Err(cx.f.expected(route, "a mapping for an `http:` route"));
    }
    let mut hosts = Vec::new();
    for dest in node::list(cx, route, "route")? {
        let Some((_, d)) = entry(dest, "destination") else {
            return Err(cx
                .f
                .error(dest.pos, "a route entry without `destination:`")
                .with_help("write `- destination: { host: ratings }`"));
        };
        let Some((hk, h)) = entry(d, "host") else {
            return Err(cx
                .f
                .error(d.pos, "a destination without `host:`")
                .with_help("name the destination's Service: `host: ratings`"));
        };
        let host = cx.f.str(h, "`host`")?;
        hosts.push(HostRef {
            host: host.to_owned(),
            namespace: namespace.map(str::to_owned),
            at: cx.at(hk.pos),
        });
    }
    if hosts.is_empty() {
        // A redirect, a direct response or a delegate: no call leaves here.
        return Ok(());
    }
    let matcher = read_match(cx, route, facts)?;
    let route_timeout = entry(route, "timeout")
        .map(|(k, v)| node::duration(cx, v, "timeout").map(|d| (d, k.pos)))
        .transpose()?
        .filter(|(d, _)| !d.is_zero());
    let mut layers = Vec::new();
    if let Some((d, pos)) = route_timeout {
        layers.push(LayerFact {
            timeout_default: None,
            name: ROUTE.into(),
            file: cx.file,
            pos,
            timeout: Some((d, pos)),
            policy: PolicyFact::None,
            comment: "Istio route timeout: bounds the request with all its retries".into(),
        });
    }
    let retries = entry(route, "retries")
        .map(|(rk, r)| read_retries(cx, rk.pos, r, route_timeout, options, facts))
        .transpose()?;
    // One route fact per destination, so the default policy of each is
    // located at its own `host:`.
    for host in hosts {
        let sidecar = match &retries {
            Some(l) => l.clone(),
            None => LayerFact {
                timeout_default: route_timeout.map(|_| PER_TRY_DEFAULT),
                name: SIDECAR.into(),
                file: cx.file,
                pos: host.at.pos,
                timeout: route_timeout,
                policy: PolicyFact::Preset {
                    name: preset.into(),
                    at: host.at.pos,
                },
                comment: format!(
                    "Istio 1.{}'s default retry policy (the route sets no retries)",
                    options.istio_minor
                ),
            },
        };
        let mut all = layers.clone();
        all.push(sidecar);
        facts.routes.push(RouteFact {
            source: "istio",
            group,
            hosts: vec![host],
            matcher: matcher.clone(),
            layers: all,
        });
    }
    Ok(())
}

fn read_retries(
    cx: Cx,
    at: Pos,
    r: &Node,
    route_timeout: Option<(Duration, Pos)>,
    options: super::Options,
    facts: &mut Facts,
) -> Result<LayerFact, LoadError> {
    if !matches!(r.value, Value::Map(_)) {
        return Err(cx.f.expected(r, "a mapping for `retries:`"));
    }
    for ignored in ["retryRemoteLocalities", "retryIgnorePreviousHosts"] {
        if let Some((k, _)) = entry(r, ignored) {
            facts.note(
                Some(cx.at(k.pos)),
                format!("`{ignored}` picks which host a retry goes to, not how many: ignored"),
            );
        }
    }
    let per_try = entry(r, "perTryTimeout")
        .map(|(k, v)| node::duration(cx, v, "perTryTimeout").map(|d| (d, k.pos)))
        .transpose()?;
    let timeout = per_try.or(route_timeout);
    let timeout_default = match (per_try, route_timeout) {
        (None, Some(_)) => Some(PER_TRY_DEFAULT),
        _ => None,
    };
    let mut spans = Spans {
        policy: Some(at),
        ..Spans::default()
    };
    let attempts = match entry(r, "attempts") {
        Some(kv) => node::retries(cx, kv, "attempts", &mut spans.max_attempts)?,
        None => 0,
    };
    if attempts == 0 {
        return Ok(LayerFact {
            timeout_default,
            name: SIDECAR.into(),
            file: cx.file,
            pos: at,
            timeout,
            policy: PolicyFact::None,
            comment: "Istio retries with `attempts: 0` (or none): retries disabled".into(),
        });
    }
    let retry_on = match entry(r, "retryOn") {
        Some((k, v)) => {
            spans.retry_on = Some(k.pos);
            let text = cx.f.str(v, "`retryOn`")?;
            note_grpc_only(cx, v.pos, text, facts);
            retry_on(text).map_err(|bad| {
                cx.f.error(v.pos, format!("unknown retryOn condition `{bad}`"))
                    .with_help(format!(
                        "use Envoy's conditions ({}) or status codes such as 503",
                        KNOWN.join(", ")
                    ))
            })?
        }
        None => default_conditions(options.istio_minor),
    };
    let (base, cap) = match entry(r, "backoff") {
        Some((k, v)) => {
            spans.backoff = Some(k.pos);
            let b = node::duration(cx, v, "backoff")?;
            (b, b * 10)
        }
        None => (Duration::from_millis(25), Duration::from_millis(250)),
    };
    let policy = RetryPolicy {
        max_attempts: attempts + 1,
        backoff: Backoff {
            kind: BackoffKind::Exponential,
            base,
            multiplier: 2.0,
            cap: Some(cap),
            jitter: Jitter::Full,
        },
        retry_on: RetryOn(retry_on),
        honor_retry_after: false,
        budget: None,
    };
    Ok(LayerFact {
        timeout_default,
        name: SIDECAR.into(),
        file: cx.file,
        pos: at,
        timeout,
        policy: PolicyFact::Inline { policy, spans },
        comment: format!(
            "Istio retries: attempts {attempts} counts retries, so {} attempts in all",
            attempts + 1
        ),
    })
}

fn read_match(cx: Cx, route: &Node, facts: &mut Facts) -> Result<Matcher, LoadError> {
    let mut m = Matcher::default();
    for rule in node::list(cx, route, "match")? {
        let mut r = MatchRule::default();
        if let Some(v) = get(rule, "method") {
            r.method = Some(str_match(cx, v, "method")?);
        }
        if let Some(v) = get(rule, "uri") {
            r.path = Some(str_match(cx, v, "uri")?);
        }
        for undecided in [
            "headers",
            "queryParams",
            "sourceLabels",
            "port",
            "authority",
            "gateways",
        ] {
            if let Some((k, _)) = entry(rule, undecided) {
                facts.note(
                    Some(cx.at(k.pos)),
                    format!(
                        "a `{undecided}` match cannot be decided from the topology: taken to hold"
                    ),
                );
            }
        }
        m.any.push(r);
    }
    Ok(m)
}

fn str_match(cx: Cx, v: &Node, key: &str) -> Result<StrMatch, LoadError> {
    for (kind, make) in [
        ("exact", StrMatch::Exact as fn(String) -> StrMatch),
        ("prefix", StrMatch::Prefix),
        ("regex", StrMatch::Regex),
    ] {
        if let Some(n) = get(v, kind) {
            return Ok(make(cx.f.str(n, &format!("`{key}.{kind}`"))?.to_owned()));
        }
    }
    Err(cx
        .f
        .error(
            v.pos,
            format!("a `{key}` match needs `exact`, `prefix` or `regex`"),
        )
        .with_help(format!("write `{key}: {{ exact: ... }}`")))
}

/// Envoy's retry conditions this reader knows.
pub const KNOWN: &[&str] = &[
    "5xx",
    "gateway-error",
    "reset",
    "reset-before-request",
    "connect-failure",
    "envoy-ratelimited",
    "retriable-4xx",
    "refused-stream",
    "retriable-status-codes",
    "retriable-headers",
    "http3-post-connect-failure",
    "cancelled",
    "deadline-exceeded",
    "internal",
    "resource-exhausted",
    "unavailable",
];

/// Envoy's gRPC retry conditions (`x-envoy-retry-grpc-on`): each matches
/// only when the response headers carry that `grpc-status`, which an HTTP
/// response never does — an HTTP 503 is not gRPC UNAVAILABLE to Envoy.
pub const GRPC_ONLY: &[&str] = &[
    "cancelled",
    "deadline-exceeded",
    "internal",
    "resource-exhausted",
    "unavailable",
];

/// Notes each gRPC-only condition of a `retry_on` list: it adds nothing for
/// the HTTP calls modelled here, and a reader should see why it vanished.
pub fn note_grpc_only(cx: Cx, at: Pos, text: &str, facts: &mut Facts) {
    for t in text.split(',').map(str::trim) {
        if GRPC_ONLY.contains(&t) {
            facts.note(
                Some(cx.at(at)),
                format!("`{t}` matches a gRPC status in the response headers only; the calls modelled are HTTP, so it retries nothing here"),
            );
        }
    }
}

/// Envoy's `retry_on` (router filter, `x-envoy-retry-on` and
/// `x-envoy-retry-grpc-on`) in the policy engine's conditions:
///
/// | Envoy | here | why |
/// |---|---|---|
/// | `5xx` | `5xx`, `timeout`, `reset`, `connect` | "any 5xx, or does not respond at all (disconnect/reset/read timeout)" |
/// | `gateway-error` | `502`, `503`, `504`, `timeout` | a per-try timeout is answered 504 |
/// | `reset` | `reset`, `timeout` | "does not respond at all (disconnect/reset/read timeout)" |
/// | `reset-before-request` | `connect` | reset before the request was sent: it never arrived |
/// | `connect-failure`, `http3-post-connect-failure` | `connect` | |
/// | `refused-stream` | `connect` | HTTP/2 REFUSED_STREAM: the server guarantees it did not process the request (RFC 9113 §8.7) |
/// | `retriable-4xx` | `409` | Envoy retries only 409 |
/// | `envoy-ratelimited` | `429` | |
/// | `retriable-status-codes` | the codes listed beside it | |
/// | `retriable-headers` | nothing | response headers are not modelled |
/// | gRPC `cancelled`, `deadline-exceeded`, `internal`, `resource-exhausted`, `unavailable` | nothing | they match the `grpc-status` of the response headers only ([`GRPC_ONLY`]); calls here are HTTP, whose failures never carry one |
///
/// Status codes (`503`) are taken as they are. `Err` names an unknown entry.
pub fn retry_on(text: &str) -> Result<Vec<Condition>, String> {
    let mut out: Vec<Condition> = Vec::new();
    let mut add = |c: Condition| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    for raw in text.split(',') {
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if let Ok(code) = t.parse::<u16>() {
            if !(100..=599).contains(&code) {
                return Err(t.to_owned());
            }
            add(Condition::Status(code));
            continue;
        }
        match t {
            "5xx" => {
                add(Condition::Class(5));
                add(Condition::Timeout);
                add(Condition::Reset);
                add(Condition::Connect);
            }
            "gateway-error" => {
                add(Condition::Status(502));
                add(Condition::Status(503));
                add(Condition::Status(504));
                add(Condition::Timeout);
            }
            "reset" => {
                add(Condition::Reset);
                add(Condition::Timeout);
            }
            "reset-before-request"
            | "connect-failure"
            | "http3-post-connect-failure"
            | "refused-stream" => add(Condition::Connect),
            "retriable-4xx" => add(Condition::Status(409)),
            "envoy-ratelimited" => add(Condition::Status(429)),
            "retriable-status-codes" | "retriable-headers" => {}
            t if GRPC_ONLY.contains(&t) => {}
            other => return Err(other.to_owned()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envoy_conditions_map_as_documented() {
        use Condition::*;
        assert_eq!(
            retry_on("gateway-error,connect-failure,refused-stream").unwrap(),
            vec![Status(502), Status(503), Status(504), Timeout, Connect]
        );
        // Istio's default: refused-stream was never processed; the gRPC
        // conditions match no HTTP response.
        assert_eq!(
            retry_on("connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes")
                .unwrap(),
            vec![Connect]
        );
        assert_eq!(
            retry_on("deadline-exceeded,internal,resource-exhausted").unwrap(),
            vec![]
        );
        assert_eq!(
            retry_on("5xx").unwrap(),
            vec![Class(5), Timeout, Reset, Connect]
        );
        assert_eq!(
            retry_on("503,retriable-status-codes,retriable-4xx").unwrap(),
            vec![Status(503), Status(409)]
        );
        assert_eq!(retry_on("connect-failure,bogus"), Err("bogus".into()));
        assert_eq!(retry_on("700"), Err("700".into()));
    }
}
