//! Gateway API `HTTPRoute` and `GRPCRoute` (`gateway.networking.k8s.io`):
//! `rules[].retry` (GEP-1731) and `rules[].timeouts` (GEP-1742), on the calls
//! to each rule's `backendRefs` — or, for a route whose `parentRefs` name a
//! Service (GAMMA, Linkerd's documented shape), on the calls to that Service.
//!
//! - Precedence, as `apis/v1/httproute_types.go` orders it across all
//!   routes: hostnames (most characters of a non-wildcard hostname, then of
//!   any), then per match an `Exact` path, the longest `PathPrefix`, a
//!   `method`, then the oldest route (`creationTimestamp`), then
//!   `{namespace}/{name}`, then rule and match order. Each match is its own
//!   route here, so a rule's `/` never shadows another's `/v2`. A match on
//!   headers or query parameters is not taken by the calls of a topology
//!   (they carry none): a note says so. GRPCRoute matches `method.service`
//!   and `method.method` against the call's path (`/pkg.Service/Method`).
//!   A `RegularExpression` path is matched against the whole path, as
//!   Envoy's `safe_regex` (RE2) does for both implementations.
//! - `retry` is translated as the implementation chosen with `--gateway`
//!   does it (see [`Implementation`]); `retry: {}` is a retry with the
//!   implementation's defaults. GEP-1731 says implementations SHOULD retry
//!   connection errors and timeouts; neither translation below retries a
//!   timed-out attempt (their `retry_on` has no `5xx`, `gateway-error` or
//!   `reset`), so `timeout` is not among the conditions.
//! - `timeouts.request` bounds the request with all its retries (an outer
//!   `gateway-route` layer); `timeouts.backendRequest` is each attempt's.
//! - Linkerd's `retry.linkerd.io/*` and `timeout.linkerd.io/*` annotations on
//!   a route whose parent is a Service apply to that route's matches
//!   (`linkerd-annotations`).
//! - Envoy Gateway's `BackendTrafficPolicy` is read in `envoy_gateway`.

use std::cmp::Reverse;
use std::time::Duration;

use super::facts::*;
use super::node::{self, Cx, entry, get, str_at};
use crate::input::Node;
use crate::input::error::LoadError;
use crate::policy::Condition;

pub(crate) const LAYER: &str = "gateway";
pub(crate) const ROUTE: &str = "gateway-route";

/// Envoy Gateway's `retry_on` when a retry says no triggers
/// (`internal/xds/translator/route.go`, `retryDefaultRetryOn`), with 503 as
/// its retriable status code unless codes are given.
pub(crate) const ENVOY_GATEWAY_RETRY_ON: &str =
    "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes";
/// Istio's translation of an HTTPRoute `retry`
/// (`pilot/pkg/config/kube/gateway/conversion.go`): these, plus the codes.
pub(crate) const ISTIO_RETRY_ON: &str = "connect-failure,refused-stream,unavailable,cancelled";

/// Which implementation translates an HTTPRoute's `retry` (`--gateway`).
///
/// | | `attempts` absent | `codes` absent | `backoff` absent |
/// |---|---|---|---|
/// | `envoy-gateway` (default) | 2 retries (`retryDefaultNumRetries`) | 503 (`retryDefaultRetriableStatusCode`) | Envoy's 25 ms base, 10 × cap |
/// | `istio` | 2 retries (`ptr.OrDefault(r.Retry.Attempts, 2)`) | no status code is retried | Envoy's 25 ms base, 10 × cap |
///
/// Both keep `connect-failure` and `refused-stream` (`connect`) beside the
/// codes, and `unavailable`, `cancelled` (gRPC statuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Implementation {
    #[default]
    EnvoyGateway,
    Istio,
}

impl Implementation {
    pub(crate) const NAMES: &[&str] = &["envoy-gateway", "istio"];

    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "envoy-gateway" | "envoygateway" | "eg" => Ok(Implementation::EnvoyGateway),
            "istio" => Ok(Implementation::Istio),
            _ => Err(format!(
                "`{text}` is not a known Gateway API implementation; write one of {}",
                Self::NAMES.join(", ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Implementation::EnvoyGateway => "Envoy Gateway",
            Implementation::Istio => "Istio",
        }
    }
}

/// A match's Gateway API precedence: the smaller sorts first and wins.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct MatchKey {
    host_exact: Reverse<usize>,
    host_any: Reverse<usize>,
    /// 0 exact, 1 prefix, 2 regular expression (implementation-specific:
    /// after the others).
    path_rank: u8,
    path_len: Reverse<usize>,
    method: Reverse<bool>,
    /// `(absent, creationTimestamp)`: RFC 3339 times sort as text.
    created: (bool, String),
    name: String,
    rule: usize,
    matched: usize,
}

struct Parsed {
    rule: MatchRule,
    path_rank: u8,
    path_len: usize,
    method: bool,
}

pub(crate) fn read(
    cx: Cx,
    root: &Node,
    options: super::Options,
    grpc: bool,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    let kind = if grpc { "GRPCRoute" } else { "HTTPRoute" };
    let group = facts.read_kinds.len();
    let meta = get(root, "metadata");
    let namespace = meta
        .and_then(|m| get(m, "namespace"))
        .and_then(str_at)
        .map(str::to_owned);
    let name = meta
        .and_then(|m| get(m, "name"))
        .and_then(str_at)
        .unwrap_or("")
        .to_owned();
    let created = meta
        .and_then(|m| get(m, "creationTimestamp"))
        .and_then(str_at)
        .map(str::to_owned);
    let Some(spec) = get(root, "spec") else {
        return Err(cx
            .f
            .error(root.pos, format!("a {kind} without `spec:`"))
            .with_help(format!("a {kind} has `spec: {{ rules: [...] }}`")));
    };
    let mut services = Vec::new();
    let mut gateways = Vec::new();
    for p in node::list(cx, spec, "parentRefs")? {
        let Some((pk, pn)) = entry(p, "name") else {
            return Err(cx
                .f
                .error(p.pos, "a parentRef without `name:`")
                .with_help("name the Gateway or the Service: `- name: eg`"));
        };
        let pname = cx.f.str(pn, "`name`")?.to_owned();
        let pns = get(p, "namespace")
            .and_then(str_at)
            .map(str::to_owned)
            .or_else(|| namespace.clone());
        match get(p, "kind").and_then(str_at).unwrap_or("Gateway") {
            "Service" => services.push(HostRef {
                host: pname,
                namespace: pns,
                at: cx.at(pk.pos),
            }),
            _ => gateways.push((pns, pname)),
        }
    }
    let hostnames: Vec<&str> = node::list(cx, spec, "hostnames")?
        .iter()
        .filter_map(str_at)
        .collect();
    let host_exact = hostnames
        .iter()
        .filter(|h| !h.starts_with('*'))
        .map(|h| h.len())
        .max()
        .unwrap_or(0);
    let host_any = hostnames.iter().map(|h| h.len()).max().unwrap_or(0);
    let annotated = match meta {
        Some(m) => super::linkerd::route_layers(cx, m, grpc, facts)?,
        None => Vec::new(),
    };
    if !annotated.is_empty() && services.is_empty() {
        facts.note(
            Some(cx.at(annotated[0].pos)),
            format!("Linkerd reads retry and timeout annotations on a {kind} whose parentRef is a Service; this one's parents are not, so they are not applied"),
        );
    }
    let mut reference = HttpRouteRef {
        name: name.clone(),
        namespace: namespace.clone(),
        kind,
        gateways,
        services: services.clone(),
        ..HttpRouteRef::default()
    };
    let mut skipped_header_match = None;
    for (ri, rule) in node::list(cx, spec, "rules")?.iter().enumerate() {
        let mut hosts = services.clone();
        if !reference.gateways.is_empty() || services.is_empty() {
            for b in node::list(cx, rule, "backendRefs")? {
                let Some((nk, n)) = entry(b, "name") else {
                    return Err(cx
                        .f
                        .error(b.pos, "a backendRef without `name:`")
                        .with_help("name the Service: `- name: ratings`"));
                };
                let ns = get(b, "namespace").and_then(str_at).map(str::to_owned);
                let host = HostRef {
                    host: cx.f.str(n, "`name`")?.to_owned(),
                    namespace: ns.or_else(|| namespace.clone()),
                    at: cx.at(nk.pos),
                };
                if !hosts.contains(&host) {
                    hosts.push(host);
                }
            }
        }
        if hosts.is_empty() {
            continue;
        }
        let layers = rule_layers(cx, rule, options.gateway, facts)?;
        let own_retry = entry(rule, "retry").is_some();
        let parsed = matches(cx, rule, grpc, &mut skipped_header_match)?;
        for (mi, m) in parsed.into_iter().enumerate() {
            let key = MatchKey {
                host_exact: Reverse(host_exact),
                host_any: Reverse(host_any),
                path_rank: m.path_rank,
                path_len: Reverse(m.path_len),
                method: Reverse(m.method),
                created: (created.is_none(), created.clone().unwrap_or_default()),
                name: format!("{}/{name}", namespace.as_deref().unwrap_or("default")),
                rule: ri,
                matched: mi,
            };
            let matcher = Matcher {
                any: vec![m.rule],
                grpc: None,
            };
            reference.routes.push(facts.routes.len());
            reference.keys.push(key.clone());
            reference.own_retry.push(own_retry);
            facts.routes.push(RouteFact {
                source: "gateway",
                group,
                hosts: hosts.clone(),
                matcher: matcher.clone(),
                layers: layers.clone(),
            });
            if !annotated.is_empty() && !services.is_empty() {
                reference.routes.push(facts.routes.len());
                reference.keys.push(key);
                reference.own_retry.push(true);
                facts.routes.push(RouteFact {
                    source: super::linkerd::ANNOTATIONS,
                    group,
                    hosts: services.clone(),
                    matcher,
                    layers: annotated.clone(),
                });
            }
        }
    }
    if let Some(pos) = skipped_header_match {
        facts.note(
            Some(cx.at(pos)),
            format!("{kind} `{name}`: a match on headers or query parameters is not taken by the topology's calls (they carry none); they take the route's other matches"),
        );
    }
    facts.http_routes.push(reference);
    Ok(())
}

/// A rule's timeout and retry layers, outermost first.
fn rule_layers(
    cx: Cx,
    rule: &Node,
    implementation: Implementation,
    facts: &mut Facts,
) -> Result<Vec<LayerFact>, LoadError> {
    let mut layers = Vec::new();
    let timeouts = get(rule, "timeouts");
    let request = timeouts
        .and_then(|t| entry(t, "request"))
        .map(|(k, v)| node::duration(cx, v, "request").map(|d| (d, k.pos)))
        .transpose()?
        .filter(|(d, _)| !d.is_zero());
    let backend = timeouts
        .and_then(|t| entry(t, "backendRequest"))
        .map(|(k, v)| node::duration(cx, v, "backendRequest").map(|d| (d, k.pos)))
        .transpose()?
        .filter(|(d, _)| !d.is_zero());
    if let Some((d, pos)) = request {
        layers.push(LayerFact {
            grpc_retry_on: None,
            timeout_default: None,
            name: ROUTE.into(),
            file: cx.file,
            pos,
            timeout: Some((d, pos)),
            policy: PolicyFact::None,
            comment: "HTTPRoute timeouts.request: the request with all its retries".into(),
        });
    }
    match entry(rule, "retry") {
        Some((rk, r)) => layers.push(retry(
            cx,
            rk.pos,
            r,
            backend.or(request),
            implementation,
            facts,
        )?),
        None => {
            if let Some((d, pos)) = backend {
                layers.push(LayerFact {
                    grpc_retry_on: None,
                    timeout_default: None,
                    name: LAYER.into(),
                    file: cx.file,
                    pos,
                    timeout: Some((d, pos)),
                    policy: PolicyFact::None,
                    comment: "HTTPRoute timeouts.backendRequest".into(),
                });
            }
        }
    }
    Ok(layers)
}

fn matches(
    cx: Cx,
    rule: &Node,
    grpc: bool,
    skipped: &mut Option<crate::input::Pos>,
) -> Result<Vec<Parsed>, LoadError> {
    let written = node::list(cx, rule, "matches")?;
    let mut out = Vec::new();
    for x in written {
        if !node::list(cx, x, "headers")?.is_empty()
            || !node::list(cx, x, "queryParams")?.is_empty()
        {
            skipped.get_or_insert(x.pos);
            continue;
        }
        out.push(if grpc {
            grpc_match(cx, x)?
        } else {
            http_match(cx, x)?
        });
    }
    if written.is_empty() {
        // The default match: `PathPrefix /` (HTTPRoute), every method (GRPCRoute).
        out.push(Parsed {
            rule: MatchRule {
                method: None,
                path: (!grpc).then(|| StrMatch::Prefix("/".into())),
            },
            path_rank: if grpc { 2 } else { 1 },
            path_len: usize::from(!grpc),
            method: false,
        });
    }
    Ok(out)
}

fn http_match(cx: Cx, x: &Node) -> Result<Parsed, LoadError> {
    let mut r = MatchRule::default();
    let method = match get(x, "method") {
        Some(m) => {
            r.method = Some(StrMatch::Exact(
                cx.f.str(m, "`method`")?.to_ascii_uppercase(),
            ));
            true
        }
        None => false,
    };
    let p = get(x, "path");
    let value = p
        .and_then(|p| get(p, "value"))
        .and_then(str_at)
        .unwrap_or("/")
        .to_owned();
    let (path_rank, path_len) = (
        match p
            .and_then(|p| get(p, "type"))
            .and_then(str_at)
            .unwrap_or("PathPrefix")
        {
            "Exact" => 0,
            "RegularExpression" => 2,
            _ => 1,
        },
        value.len(),
    );
    r.path = Some(match path_rank {
        0 => StrMatch::Exact(value),
        // Implementation-specific; Envoy Gateway and Istio give it to
        // Envoy's `safe_regex` (RE2), which matches the whole path.
        2 => match regex::Regex::new(&format!("^(?:{value})$")) {
            Ok(re) => StrMatch::Anchored(Pattern(re)),
            Err(e) => {
                let at = p.and_then(|p| get(p, "value")).map_or(x.pos, |v| v.pos);
                return Err(cx
                    .f
                    .error(at, format!("not a regular expression: {e}"))
                    .with_help("write an RE2 expression, e.g. `/v[0-9]+/.*`"));
            }
        },
        // Gateway API's PathPrefix matches whole segments: `/v2` takes
        // `/v2` and `/v2/x`, not `/v2x`.
        _ => prefix(&value),
    });
    Ok(Parsed {
        rule: r,
        path_rank,
        path_len,
        method,
    })
}

/// A `PathPrefix`: element-wise (`/foo` matches `/foo` and `/foo/bar`, not
/// `/foobar`), trailing `/` ignored.
fn prefix(value: &str) -> StrMatch {
    let trimmed = value.trim_end_matches('/');
    if trimmed.is_empty() {
        return StrMatch::Prefix("/".into());
    }
    let re = format!("^{}(?:/.*)?$", regex::escape(trimmed));
    match regex::Regex::new(&re) {
        Ok(re) => StrMatch::Anchored(Pattern(re)),
        Err(_) => StrMatch::Prefix(value.to_owned()),
    }
}

fn grpc_match(cx: Cx, x: &Node) -> Result<Parsed, LoadError> {
    let Some(m) = get(x, "method") else {
        return Ok(Parsed {
            rule: MatchRule::default(),
            path_rank: 2,
            path_len: 0,
            method: false,
        });
    };
    let service = get(m, "service").and_then(str_at);
    let method = get(m, "method").and_then(str_at);
    let regex = get(m, "type").and_then(str_at) == Some("RegularExpression");
    let part = |p: Option<&str>| match p {
        Some(p) if regex => format!("(?:{p})"),
        Some(p) => regex::escape(p),
        None => "[^/]+".into(),
    };
    let path = match (service, method, regex) {
        (Some(s), Some(m), false) => StrMatch::Exact(format!("/{s}/{m}")),
        _ => {
            let re = format!("^/{}/{}$", part(service), part(method));
            StrMatch::Anchored(Pattern(regex::Regex::new(&re).map_err(|e| {
                cx.f.error(m.pos, format!("not a regular expression: {e}"))
                    .with_help("write an RE2 expression, e.g. `service: foo\\..*`")
            })?))
        }
    };
    Ok(Parsed {
        rule: MatchRule {
            method: None,
            path: Some(path),
        },
        path_rank: if regex {
            2
        } else if method.is_some() && service.is_some() {
            0
        } else {
            1
        },
        path_len: service.map_or(0, str::len) + method.map_or(0, str::len),
        method: false,
    })
}

fn retry(
    cx: Cx,
    at: crate::input::Pos,
    r: &Node,
    timeout: Option<(Duration, crate::input::Pos)>,
    implementation: Implementation,
    facts: &mut Facts,
) -> Result<LayerFact, LoadError> {
    let mut spans = Spans {
        policy: Some(at),
        ..Spans::default()
    };
    let retries = match entry(r, "attempts") {
        Some(kv) => node::retries(cx, kv, "attempts", &mut spans.max_attempts)?,
        None => {
            facts.note(
                Some(cx.at(at)),
                format!(
                    "HTTPRoute retry without `attempts`: the implementation decides; read as {}'s 2 retries (--gateway)",
                    implementation.name()
                ),
            );
            2
        }
    };
    let base = match implementation {
        Implementation::EnvoyGateway => ENVOY_GATEWAY_RETRY_ON,
        Implementation::Istio => ISTIO_RETRY_ON,
    };
    let mut retry_on = super::istio::retry_on(base).unwrap_or_default();
    match entry(r, "codes") {
        Some((k, v)) => {
            spans.retry_on = Some(k.pos);
            for c in node::items(v) {
                let code = Condition::Status(node::int(cx, c, "codes", 400, 599)? as u16);
                if !retry_on.contains(&code) {
                    retry_on.push(code);
                }
            }
        }
        None => match implementation {
            Implementation::EnvoyGateway => retry_on.push(Condition::Status(503)),
            Implementation::Istio => facts.note(
                Some(cx.at(at)),
                "HTTPRoute retry without `codes`: Istio retries connection failures only (no status code)",
            ),
        },
    }
    let base = match entry(r, "backoff") {
        Some((k, v)) => {
            spans.backoff = Some(k.pos);
            node::duration(cx, v, "backoff")?
        }
        None => super::envoy_retry::BASE_INTERVAL,
    };
    // On a gRPC call the `codes` (Envoy's `retriable-status-codes`, matched
    // against `:status`) never match: a gRPC server sends its errors with
    // HTTP 200 and `grpc-status` in the trailers (gRPC's PROTOCOL-HTTP2.md,
    // `HTTP-Status → ":status 200"`). The translation's own conditions
    // still apply, its gRPC ones as gRPC statuses.
    let grpc_retry_on = Some(
        super::envoy_gateway::grpc_retry_on(match implementation {
            Implementation::EnvoyGateway => ENVOY_GATEWAY_RETRY_ON,
            Implementation::Istio => ISTIO_RETRY_ON,
        })
        .unwrap_or_default(),
    );
    Ok(LayerFact {
        grpc_retry_on,
        timeout_default: None,
        name: LAYER.into(),
        file: cx.file,
        pos: at,
        timeout,
        comment: format!(
            "HTTPRoute retry as {} translates it: attempts {retries} counts retries",
            implementation.name()
        ),
        policy: PolicyFact::Inline {
            policy: super::envoy_retry::policy(retries, base, None, retry_on, false),
            spans,
        },
    })
}

/// Puts the routes each Gateway API route made in precedence order among
/// the slots of their source (the first that matches a call wins there);
/// routes of the same source without a key (a Service's Linkerd
/// annotations) come after, as route annotations override the Service's.
pub(crate) fn order_routes(facts: &mut Facts) {
    let mut keyed: Vec<(usize, MatchKey)> = Vec::new();
    for r in &facts.http_routes {
        for (i, k) in r.routes.iter().zip(&r.keys) {
            keyed.push((*i, k.clone()));
        }
    }
    // Routes to one backend told apart by hostnames: the request's Host
    // decides, which a topology's call does not say.
    // Per backend, its routes' most specific and least specific hostname
    // keys (O(routes), not pairs).
    type Extreme<'k> = (&'k MatchKey, At);
    let mut by_host: std::collections::BTreeMap<String, (Extreme, Extreme)> = Default::default();
    for (i, k) in &keyed {
        let r = &facts.routes[*i];
        if r.source != "gateway" {
            continue;
        }
        for h in &r.hosts {
            let e = by_host
                .entry(h.host.clone())
                .or_insert(((k, h.at), (k, h.at)));
            if (k.host_exact, k.host_any) < (e.0.0.host_exact, e.0.0.host_any) {
                e.0 = (k, h.at);
            }
            if (k.host_exact, k.host_any) > (e.1.0.host_exact, e.1.0.host_any) {
                e.1 = (k, h.at);
            }
        }
    }
    let mut notes = Vec::new();
    for (host, ((most, at), (least, _))) in &by_host {
        if (most.host_exact, most.host_any) != (least.host_exact, least.host_any) {
            notes.push((*at, format!(
                "routes `{}` and `{}` both send to `{host}` and differ by hostnames; the request's Host decides which applies, so calls to it are read with the more specific hostname's rules first (Gateway API precedence)",
                most.name, least.name
            )));
        }
    }
    notes.sort_by_key(|(at, _)| (at.file, at.pos.line, at.pos.column));
    for (at, text) in notes {
        facts.note(Some(at), text);
    }
    for source in ["gateway", super::linkerd::ANNOTATIONS] {
        let slots: Vec<usize> = (0..facts.routes.len())
            .filter(|&i| facts.routes[i].source == source)
            .collect();
        let mut mine: Vec<&(usize, MatchKey)> = keyed
            .iter()
            .filter(|(i, _)| facts.routes[*i].source == source)
            .collect();
        if mine.is_empty() {
            continue;
        }
        mine.sort_by(|a, b| a.1.cmp(&b.1));
        let mut order: Vec<usize> = mine.iter().map(|(i, _)| *i).collect();
        order.extend(slots.iter().filter(|i| !keyed.iter().any(|(k, _)| k == *i)));
        let moved: Vec<RouteFact> = order.iter().map(|&i| facts.routes[i].clone()).collect();
        for (slot, r) in slots.into_iter().zip(moved) {
            facts.routes[slot] = r;
        }
    }
}
