//! Linkerd: `ServiceProfile` routes (`linkerd.io/v1alpha2`) and the 2.16+
//! retry annotations (`retry.linkerd.io/http`, `/limit`, `/timeout`) on a
//! Service or an HTTPRoute.
//!
//! - A ServiceProfile is named after its Service's FQDN
//!   (`webapp.default.svc.cluster.local`); its routes match by `condition`
//!   (`method`; `pathRegex` is taken to hold). A route with `isRetryable:
//!   true` retries 5xx answers under the profile's `retryBudget`
//!   (`retryRatio`, `minRetriesPerSecond`, `ttl`; defaults 0.2, 10, 10s, as
//!   the `linkerd-budget` preset). A budget bounds retries as a share of
//!   traffic, not per request: the count per request is the preset's bound,
//!   3 attempts. No backoff (Linkerd 2.x has none). The route `timeout`
//!   spans the request with its retries: an outer `linkerd-timeout` layer.
//! - Annotations: `retry.linkerd.io/limit` counts RETRIES (default 1);
//!   `retry.linkerd.io/http` lists `5xx`, `gateway-error`, codes and ranges
//!   (`500-504`; default `5xx`); `retry.linkerd.io/timeout` is each
//!   attempt's timeout, and a timed-out attempt is then retried (2.16:
//!   "timeouts and retries compose"). No budget, no backoff.

use std::time::Duration;

use super::facts::*;
use super::linkerd_ports::{Opaque, Routing};
use super::node::{self, Cx, entry, get, path, str_at};
use crate::input::Node;
use crate::input::error::LoadError;
use crate::policy::{Backoff, BackoffKind, BudgetSpec, Condition, Jitter, RetryOn, RetryPolicy};

pub(crate) const LAYER: &str = "linkerd";
pub(crate) const TIMEOUT: &str = "linkerd-timeout";
pub(crate) const RESPONSE_TIMEOUT: &str = "linkerd-response-timeout";
/// The source name of annotation routes: a ServiceProfile for the same
/// Service wins over them, as in the proxy ("Retries configured in this way
/// are incompatible with ServiceProfiles").
pub(crate) const ANNOTATIONS: &str = "linkerd-annotations";

pub(crate) fn read_profile(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    let group = facts.read_kinds.len();
    let Some((nk, name)) = path(root, &["metadata"]).and_then(|m| entry(m, "name")) else {
        return Err(cx
            .f
            .error(root.pos, "a ServiceProfile without `metadata.name`")
            .with_help("name it after the Service's FQDN: `webapp.default.svc.cluster.local`"));
    };
    let host = cx.f.str(name, "`metadata.name`")?.to_owned();
    let Some(spec) = get(root, "spec") else {
        return Ok(());
    };
    let mut budget = (0.2, 10.0, Duration::from_secs(10));
    let mut budget_at = None;
    if let Some((bk, b)) = entry(spec, "retryBudget") {
        budget_at = Some(bk.pos);
        if let Some(v) = get(b, "retryRatio") {
            budget.0 = cx.f.ratio(v, "retryRatio")?;
        }
        if let Some(v) = get(b, "minRetriesPerSecond") {
            budget.1 = node::int(cx, v, "minRetriesPerSecond", 0, i128::from(u32::MAX))? as f64;
        }
        if let Some(v) = get(b, "ttl") {
            budget.2 = node::duration(cx, v, "ttl")?;
        }
    }
    for route in node::list(cx, spec, "routes")? {
        let mut rule = MatchRule::default();
        if let Some(c) = get(route, "condition") {
            if let Some(m) = get(c, "method").and_then(str_at) {
                rule.method = Some(StrMatch::Exact(m.to_ascii_uppercase()));
            }
            if let Some(p) = get(c, "pathRegex") {
                rule.path = Some(path_regex(cx, p)?);
            }
        }
        let mut layers = Vec::new();
        if let Some((tk, tv)) = entry(route, "timeout") {
            let d = node::duration(cx, tv, "timeout")?;
            layers.push(LayerFact {
                grpc_retry_on: None,
                timeout_default: None,
                name: TIMEOUT.into(),
                file: cx.file,
                pos: tk.pos,
                timeout: Some((d, tk.pos)),
                policy: PolicyFact::None,
                comment: "Linkerd route timeout: the request with its retries".into(),
            });
        }
        if let Some((rk, rv)) = entry(route, "isRetryable")
            && cx.f.bool(rv, "isRetryable")?
        {
            let spans = Spans {
                policy: Some(rk.pos),
                max_attempts: Some(rk.pos),
                retry_on: Some(rk.pos),
                budget: budget_at.or(Some(rk.pos)),
                ..Spans::default()
            };
            layers.push(LayerFact {
                grpc_retry_on: None,
                timeout_default: None,
                name: LAYER.into(),
                file: cx.file,
                pos: rk.pos,
                timeout: None,
                policy: PolicyFact::Inline {
                    policy: RetryPolicy {
                        max_attempts: 3,
                        backoff: Backoff::default(),
                        retry_on: RetryOn(vec![Condition::Class(5)]),
                        honor_retry_after: false,
                        budget: Some(BudgetSpec::Ratio {
                            ratio: budget.0,
                            min_per_second: budget.1,
                            window: budget.2,
                        }),
                    },
                    spans,
                },
                comment:
                    "Linkerd retryable route: 5xx under the retry budget (3 attempts is our bound)"
                        .into(),
            });
        }
        // Pushed without layers too: the first route that matches a request
        // is the one the proxy uses, retryable or not.
        facts.routes.push(RouteFact {
            source: "linkerd",
            group,
            hosts: vec![HostRef {
                host: host.clone(),
                namespace: None,
                at: cx.at(nk.pos),
            }],
            matcher: Matcher {
                any: vec![rule],
                grpc: None,
            },
            layers,
        });
    }
    Ok(())
}

/// The `retry.linkerd.io/*` and `timeout.linkerd.io/*` annotations of a
/// Service's `meta`, as layers on calls to `hosts`; nothing when there are
/// none. Linkerd serves a Service's traffic as gRPC only when a GRPCRoute
/// is attached to it (`policy-controller/grpc/src/outbound.rs`: the
/// `grpc::protocol` branch, taken when `grpc_routes` is not empty), and
/// then the Service's `parse_grpc_retry` (`retry.linkerd.io/grpc`, `limit`,
/// `timeout`) is the retry of each GRPCRoute rule without its own
/// (`grpc.rs`: `if retry.is_none() { retry = service_retry }`); otherwise
/// its traffic, gRPC calls too, is HTTP to Linkerd and takes the HTTP
/// retry. The gRPC side is kept for [`finish`], which knows the routes.
pub(crate) fn annotations(
    cx: Cx,
    meta: &Node,
    hosts: Vec<HostRef>,
    matcher: Matcher,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    let grpc_key = get(meta, "annotations")
        .and_then(|a| entry(a, "retry.linkerd.io/grpc"))
        .map(|(k, _)| cx.at(k.pos));
    let layers = layers_of(cx, meta, false, true, facts)?;
    // Its notes are said only if the gRPC side applies.
    let said = facts.notes.len();
    let grpc = layers_of(cx, meta, true, true, facts)?;
    let notes = facts.notes.split_off(said);
    if !grpc.is_empty() || !layers.is_empty() {
        facts.linkerd_services.push(ServiceAnnotations {
            hosts: hosts.clone(),
            http: layers.clone(),
            grpc,
            notes,
            key: grpc_key,
            group: facts.read_kinds.len(),
        });
    }
    if layers.is_empty() {
        return Ok(());
    }
    facts.routes.push(RouteFact {
        source: ANNOTATIONS,
        group: facts.read_kinds.len(),
        hosts,
        matcher,
        layers,
    });
    Ok(())
}

/// A Service's annotations as Linkerd applies them to its HTTP and its
/// gRPC traffic.
#[derive(Debug, Clone)]
pub(crate) struct ServiceAnnotations {
    hosts: Vec<HostRef>,
    http: Vec<LayerFact>,
    grpc: Vec<LayerFact>,
    /// The gRPC side's notes, said when it applies.
    notes: Vec<Note>,
    /// `retry.linkerd.io/grpc`, if written.
    key: Option<At>,
    group: usize,
}

fn is_timeout(l: &LayerFact) -> bool {
    l.name == TIMEOUT || l.name == RESPONSE_TIMEOUT
}

/// Applies each Service's annotations as Linkerd does once the routes are
/// known:
///
/// - A route (HTTPRoute, GRPCRoute) whose parent is the Service and whose
///   annotations set no retry takes the Service's, and none of the
///   timeouts, the Service's timeouts (`if retry.is_none() { retry =
///   service_retry }`, `if timeouts == Default::default() { timeouts =
///   service_timeouts }` in `grpc.rs` and `http.rs`); a GRPCRoute takes the
///   Service's gRPC side.
/// - When a GRPCRoute has the Service as parent, its gRPC calls take the
///   gRPC side (its annotation route becomes HTTP-only, and a gRPC-only
///   one after it carries the gRPC layers). With none, a written
///   `retry.linkerd.io/grpc` is noted: Linkerd does not apply it.
///
/// A Service whose ports Linkerd routes as opaque TCP takes none of this,
/// and one served as HTTP/1 only takes no gRPC side (its GRPCRoutes are
/// still read as routes: gRPC cannot run over HTTP/1 anyway).
pub(crate) fn finish(facts: &mut Facts) {
    let routing = std::mem::take(&mut facts.linkerd_routing);
    let routing_of = |hosts: &[HostRef]| -> Option<&Routing> {
        routing
            .iter()
            .find(|(service, _)| !hosts.is_empty() && hosts.iter().all(|h| names(service, h)))
            .map(|(_, r)| r)
    };
    let mut services = std::mem::take(&mut facts.linkerd_services);
    services.retain(|s| !matches!(routing_of(&s.hosts), Some(Routing::Opaque(_))));
    let refs: Vec<(bool, Vec<HostRef>)> = facts
        .http_routes
        .iter()
        .filter(|r| !r.services.is_empty())
        .map(|r| (r.kind == "GRPCRoute", r.services.clone()))
        .collect();
    for s in services {
        let parent = |hosts: &[HostRef]| hosts.iter().any(|p| s.hosts.iter().any(|h| names(h, p)));
        let http1 = routing_of(&s.hosts).is_some_and(Routing::http1_only);
        for r in facts.routes.iter_mut().filter(|r| r.source == ANNOTATIONS) {
            let Some((grpc, _)) = refs.iter().find(|(_, h)| *h == r.hosts) else {
                continue;
            };
            if *grpc && http1 {
                continue;
            }
            if !parent(&r.hosts) {
                continue;
            }
            let side = if *grpc { &s.grpc } else { &s.http };
            if !r.layers.iter().any(|l| l.name == LAYER) {
                r.layers
                    .extend(side.iter().filter(|l| l.name == LAYER).cloned());
            }
            if !r.layers.iter().any(is_timeout) {
                let outer: Vec<LayerFact> =
                    side.iter().filter(|l| is_timeout(l)).cloned().collect();
                r.layers.splice(0..0, outer);
            }
        }
        let routed = !http1 && refs.iter().any(|(grpc, h)| *grpc && parent(h));
        if !routed {
            if let Some(at) = s.key
                && http1
            {
                facts.note(
                    Some(at),
                    "every HTTP port of this Service is `appProtocol: http`, which Linkerd (2.18 and later) serves as HTTP/1 only, with no GRPCRoute: its retry.linkerd.io/grpc is not applied, and its HTTP retry annotations apply to its calls (a GRPCRoute's own annotations are kept as written: gRPC cannot run over HTTP/1 at all)",
                );
            } else if let Some(at) = s.key {
                facts.note(
                    Some(at),
                    "a Service's retry.linkerd.io/grpc applies to the GRPCRoutes attached to it (Linkerd serves its traffic as gRPC only then); none is among the sources, so it is not applied, and its HTTP retry annotations apply to its calls (on gRPC ones they retry timeouts only: the HTTP retry reads no gRPC status)",
                );
            }
            continue;
        }
        for r in facts.routes.iter_mut() {
            if r.source == ANNOTATIONS && r.hosts == s.hosts && r.matcher.any.is_empty() {
                r.matcher.grpc = Some(false);
            }
        }
        facts.notes.extend(s.notes);
        if !s.grpc.is_empty() {
            facts.routes.push(RouteFact {
                source: ANNOTATIONS,
                group: s.group,
                hosts: s.hosts,
                matcher: Matcher {
                    any: Vec::new(),
                    grpc: Some(true),
                },
                layers: s.grpc,
            });
        }
    }
    ports_apply(facts, &routing);
}

/// Whether `h` names the Kubernetes Service `service` (a short name in its
/// namespace, or any qualified form: `db.prod.svc.cluster.local`).
fn names(service: &HostRef, h: &HostRef) -> bool {
    let split = super::hosts::split(&h.host);
    let ns = |n: Option<&str>| n.unwrap_or("default").to_owned();
    split.name == service.host
        && ns(split.namespace.or(h.namespace.as_deref())) == ns(service.namespace.as_deref())
}

/// Empties the Linkerd routes of Services it routes as opaque TCP: every
/// annotation route (HTTPRoute, GRPCRoute, the Service's own) and every
/// ServiceProfile route. A port opaque by its `appProtocol` alone is opaque
/// to the proxy although the destination controller does not read
/// `appProtocol` (linkerd2 2.18 `opaque_ports_watcher.go`): the sidecar
/// takes the policy's Opaque protocol (linkerd2-proxy v2.294.0
/// `outbound/src/sidecar.rs` `Param<Protocol>`), and its opaque stack uses
/// a profile's `dstOverrides` alone, never its routes (`opaq.rs`).
/// An emptied route still matches first, as in the proxy: the call takes
/// no Linkerd layer. Said once per Service, at its name.
fn ports_apply(facts: &mut Facts, routing: &[(HostRef, Routing)]) {
    for (service, how) in routing {
        if let Routing::Mixed {
            opaque, http_ports, ..
        } = how
        {
            mixed_note(facts, service, opaque, http_ports);
        }
        let Routing::Opaque(o) = how else {
            continue;
        };
        let mut emptied = false;
        for r in facts.routes.iter_mut() {
            let linkerd = r.source == ANNOTATIONS || r.source == "linkerd";
            if linkerd && !r.layers.is_empty() && r.hosts.iter().all(|h| names(service, h)) {
                r.layers.clear();
                emptied = true;
            }
        }
        if emptied {
            facts.note(
                Some(service.at),
                format!(
                    "Linkerd routes every port of Service `{}` as opaque TCP ({}): no retry or timeout of its annotations, routes or ServiceProfile applies to calls to it, so none is applied{}",
                    service.host,
                    o.explain(),
                    if o.by_app_protocol {
                        " (Linkerd reads `appProtocol` so from 2.18; before, it detected the protocol and applied them)"
                    } else {
                        ""
                    }
                ),
            );
        }
    }
}

/// A Service with HTTP and opaque ports keeps its Linkerd routes, since a
/// topology call names no port and is read as to an HTTP port; where some
/// route would apply, the note says which calls it does not cover.
fn mixed_note(facts: &mut Facts, service: &HostRef, opaque: &Opaque, http_ports: &[i128]) {
    let applies = facts.routes.iter().any(|r| {
        (r.source == ANNOTATIONS || r.source == "linkerd")
            && !r.layers.is_empty()
            && r.hosts.iter().all(|h| names(service, h))
    });
    if !applies {
        return;
    }
    let http: Vec<String> = http_ports.iter().map(i128::to_string).collect();
    facts.note(
        Some(service.at),
        format!(
            "Linkerd routes some ports of Service `{}` as opaque TCP ({}): calls to them take no retry or timeout of its annotations, routes or ServiceProfile; a topology call names no port, so calls to `{}` are read as to its HTTP port{} {}, which take them",
            service.host,
            opaque.explain(),
            service.host,
            if http.len() == 1 { "" } else { "s" },
            http.join(", "),
        ),
    );
}

/// The layers Linkerd's annotations on a Service, an HTTPRoute or a
/// GRPCRoute (`grpc`) make, outermost first
/// (`policy-controller/k8s/index/src/outbound/index{,/http,/grpc}.rs`:
/// `parse_timeouts`, `parse_http_retry`, `parse_grpc_retry`):
///
/// - `timeout.linkerd.io/request`: the whole request with its retries (an
///   outer `linkerd-timeout` layer, not retried); `timeout.linkerd.io/response`:
///   the backend's response, not retried either (a timeout-only
///   `linkerd-response-timeout` layer outside the retries: a bound no looser
///   than Linkerd's); `timeout.linkerd.io/idle` is not a deadline of the request
///   and is not read.
/// - `retry.linkerd.io/limit` counts RETRIES (default 1; `0` is absent);
///   `retry.linkerd.io/timeout` is each attempt's, and a timed-out attempt
///   is retried; `retry.linkerd.io/http` (HTTPRoute, Service): `5xx`,
///   `gateway-error`, codes and ranges, default `5xx`;
///   `retry.linkerd.io/grpc` (GRPCRoute): `cancelled`, `deadline-exceeded`,
///   `internal`, `resource-exhausted`, `unavailable`, read as the gRPC
///   service config reads those statuses (UNAVAILABLE is 503, connect,
///   reset), default `unavailable` (a note says so).
/// - Backoff: the policy controller sends exponential 25 ms to 250 ms with
///   `jitter_ratio: 1.0` (`policy-controller/grpc/src/outbound/http.rs`,
///   `convert_retry`): read as exponential, cap 250 ms, full jitter.
pub(crate) fn route_layers(
    cx: Cx,
    meta: &Node,
    grpc: bool,
    facts: &mut Facts,
) -> Result<Vec<LayerFact>, LoadError> {
    layers_of(cx, meta, grpc, false, facts)
}

/// [`route_layers`] of a route, or of a Service (`service`: both retry
/// condition keys are valid on it).
fn layers_of(
    cx: Cx,
    meta: &Node,
    grpc: bool,
    service: bool,
    facts: &mut Facts,
) -> Result<Vec<LayerFact>, LoadError> {
    let Some(ann) = get(meta, "annotations") else {
        return Ok(Vec::new());
    };
    let mut layers = Vec::new();
    let timeout_of = |key: &str| -> Result<Option<(Duration, crate::input::Pos)>, LoadError> {
        entry(ann, key)
            .map(|(k, v)| node::duration(cx, v, key).map(|d| (d, k.pos)))
            .transpose()
            .map(|t| t.filter(|(d, _)| !d.is_zero()))
    };
    if let Some((d, pos)) = timeout_of("timeout.linkerd.io/request")? {
        layers.push(LayerFact {
            grpc_retry_on: None,
            timeout_default: None,
            name: TIMEOUT.into(),
            file: cx.file,
            pos,
            timeout: Some((d, pos)),
            policy: PolicyFact::None,
            comment: "timeout.linkerd.io/request: the request with its retries".into(),
        });
    }
    let (wrong, right) = if grpc {
        ("retry.linkerd.io/http", "a GRPCRoute")
    } else {
        ("retry.linkerd.io/grpc", "an HTTPRoute")
    };
    let conditions = if grpc {
        entry(ann, "retry.linkerd.io/grpc")
    } else {
        entry(ann, "retry.linkerd.io/http")
    };
    let limit = entry(ann, "retry.linkerd.io/limit");
    let timeout = entry(ann, "retry.linkerd.io/timeout");
    let retry_at = conditions.or(limit).or(timeout).map(|(k, _)| k.pos);
    if let Some((d, pos)) = timeout_of("timeout.linkerd.io/response")? {
        // Not retried: a response that takes longer fails the request, as
        // a deadline outside the retry layer does (it is read per request,
        // a bound no looser than Linkerd's per-response one).
        layers.push(LayerFact {
            grpc_retry_on: None,
            timeout_default: None,
            name: RESPONSE_TIMEOUT.into(),
            file: cx.file,
            pos,
            timeout: Some((d, pos)),
            policy: PolicyFact::None,
            comment: "timeout.linkerd.io/response: the backend's response, not retried".into(),
        });
    }
    if let Some((k, _)) = entry(ann, wrong).filter(|_| !service) {
        facts.warn(
            Some(cx.at(k.pos)),
            format!("`{wrong}` is not valid on {right} (Linkerd ignores it)"),
        );
    }
    if let Some(at) = retry_at {
        let mut spans = Spans {
            policy: Some(at),
            backoff: Some(at),
            ..Spans::default()
        };
        let retries = match limit {
            // `parse_*_retry` filters 0 out: then the default, 1.
            Some(kv) => {
                match node::retries(cx, kv, "retry.linkerd.io/limit", &mut spans.max_attempts)? {
                    0 => 1,
                    n => n,
                }
            }
            None => 1,
        };
        let mut retry_on = match (conditions, grpc) {
            (Some((k, v)), false) => {
                spans.retry_on = Some(k.pos);
                http_conditions(cx.f.str(v, "`retry.linkerd.io/http`")?).ok_or_else(|| {
                    cx.f.error(
                        v.pos,
                        "not a list of status codes, ranges, `5xx` or `gateway-error`",
                    )
                    .with_help("write e.g. `retry.linkerd.io/http: 5xx` or `\"502,503,500-504\"`")
                })?
            }
            (Some((k, v)), true) => {
                spans.retry_on = Some(k.pos);
                grpc_conditions(cx.f.str(v, "`retry.linkerd.io/grpc`")?).ok_or_else(|| {
                    cx.f.error(
                        v.pos,
                        "not a list of cancelled, deadline-exceeded, internal, resource-exhausted, unavailable",
                    )
                    .with_help("write e.g. `retry.linkerd.io/grpc: unavailable,internal`")
                })?
            }
            (None, false) => vec![Condition::Class(5)],
            (None, true) => {
                let whose = if service {
                    "a Service's retry annotations, on its GRPCRoutes,"
                } else {
                    "GRPCRoute retry annotations"
                };
                facts.note(
                    Some(cx.at(at)),
                    format!("{whose} without `retry.linkerd.io/grpc`: read as `unavailable`"),
                );
                crate::external::grpc_service_config::status("UNAVAILABLE")
                    .unwrap_or_default()
                    .to_vec()
            }
        };
        let per_try = timeout
            .map(|(k, v)| node::duration(cx, v, "retry.linkerd.io/timeout").map(|d| (d, k.pos)))
            .transpose()?
            .filter(|(d, _)| !d.is_zero());
        if per_try.is_some() && !retry_on.contains(&Condition::Timeout) {
            retry_on.push(Condition::Timeout);
        }
        // On a gRPC call Linkerd serves as HTTP (no GRPCRoute attached),
        // linkerd2-proxy's HTTP retry has no gRPC codes
        // (`retryable_grpc_statuses: None`): of its conditions only a
        // timeout can happen there.
        let grpc_retry_on = (!grpc).then(|| {
            retry_on
                .iter()
                .copied()
                .filter(|c| *c == Condition::Timeout)
                .collect()
        });
        layers.push(LayerFact {
            grpc_retry_on,
            timeout_default: None,
            name: LAYER.into(),
            file: cx.file,
            pos: at,
            timeout: per_try,
            comment: format!("retry.linkerd.io annotations: limit {retries} counts retries"),
            policy: PolicyFact::Inline {
                policy: RetryPolicy {
                    max_attempts: retries + 1,
                    backoff: Backoff {
                        kind: BackoffKind::Exponential,
                        base: Duration::from_millis(25),
                        multiplier: 2.0,
                        cap: Some(Duration::from_millis(250)),
                        jitter: Jitter::Full,
                    },
                    retry_on: RetryOn(retry_on),
                    honor_retry_after: false,
                    budget: None,
                },
                spans,
            },
        });
    }
    Ok(layers)
}

/// A ServiceProfile's `pathRegex`, anchored at both ends as the proxy
/// matches it against the whole path (`linkerd profile --open-api` writes
/// `/books/[^/]*` for `/books/{id}`, which only an anchored match keeps off
/// `/books/1/edit`).
fn path_regex(cx: Cx, p: &Node) -> Result<StrMatch, LoadError> {
    let text = cx.f.str(p, "`pathRegex`")?;
    let re = format!(
        "^(?:{})$",
        text.trim_start_matches('^').trim_end_matches('$')
    );
    regex::Regex::new(&re)
        .map(|re| StrMatch::Anchored(Pattern(re)))
        .map_err(|e| {
            cx.f.error(
                p.pos,
                format!("`pathRegex` is not a regular expression: {e}"),
            )
            .with_help("write e.g. `pathRegex: /authors/[^/]*`")
        })
}

fn grpc_conditions(text: &str) -> Option<Vec<Condition>> {
    let mut out: Vec<Condition> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let name = part.to_ascii_lowercase();
        if !super::istio::GRPC_ONLY.contains(&name.as_str()) {
            return None;
        }
        for c in super::grpc_service_config::status(&name.replace('-', "_"))? {
            if !out.contains(c) {
                out.push(*c);
            }
        }
    }
    Some(out)
}

fn http_conditions(text: &str) -> Option<Vec<Condition>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part {
            "5xx" => out.push(Condition::Class(5)),
            "gateway-error" => out.extend([502, 503, 504].map(Condition::Status)),
            _ => match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (a.trim().parse::<u16>().ok()?, b.trim().parse::<u16>().ok()?);
                    if !(100..=599).contains(&a) || !(a..=599).contains(&b) {
                        return None;
                    }
                    if a == 500 && b == 599 {
                        out.push(Condition::Class(5));
                    } else {
                        out.extend((a..=b).map(Condition::Status));
                    }
                }
                None => {
                    let c = part
                        .parse::<u16>()
                        .ok()
                        .filter(|c| (100..=599).contains(c))?;
                    out.push(Condition::Status(c));
                }
            },
        }
    }
    Some(out)
}
