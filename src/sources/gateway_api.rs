//! Gateway API `HTTPRoute` (`gateway.networking.k8s.io` v1, v1beta1):
//! `rules[].retry` (GEP-1731) and `rules[].timeouts` (GEP-1742), on the calls
//! to each rule's `backendRefs`.
//!
//! - `retry.attempts` counts RETRIES ("the maximum number of times an
//!   individual request from the gateway to a backend should be retried").
//!   Absent, the implementation decides: we read Envoy Gateway's 2 (a note
//!   says so).
//! - `retry.codes`: the status codes retried; absent, Envoy Gateway's
//!   default conditions (`connect`, `503`). Envoy Gateway keeps its default
//!   `retry_on` (`connect-failure,refused-stream,unavailable,cancelled,
//!   retriable-status-codes`) and lists the codes as the retriable ones, so
//!   `connect` is always added (refused-stream is a request never processed;
//!   `unavailable` and `cancelled` match gRPC statuses only, see
//!   `istio::retry_on`).
//! - `retry.backoff`: the wait before a retry, as Envoy's base interval
//!   (doubling, capped at 10 ×, full jitter); default 25 ms.
//! - `timeouts.request` bounds the request with all its retries (an outer
//!   `gateway-route` layer); `timeouts.backendRequest` is each attempt's.
//! - Matches: `method` and `path` (`Exact`, `PathPrefix`; `RegularExpression`
//!   taken to hold); the first rule that matches wins.
//! - Linkerd's `retry.linkerd.io/*` annotations on the HTTPRoute are read
//!   too (`linkerd`).
//! - Envoy Gateway's `BackendTrafficPolicy` (`gateway.envoyproxy.io`) with a
//!   `retry:` replaces the retry layer of the HTTPRoutes it targets:
//!   `numRetries` counts RETRIES (default 2), `perRetry.timeout`,
//!   `perRetry.backOff` (`baseInterval`, `maxInterval`), `retryOn.triggers`
//!   (Envoy's conditions) and `retryOn.httpStatusCodes`; absent, Envoy
//!   Gateway's default conditions (`connect`, `503`). Without `triggers` the
//!   default `retry_on` stays beside the codes (`connect` plus the codes).

use std::time::Duration;

use super::facts::*;
use super::node::{self, Cx, entry, get, str_at};
use crate::policy::{Backoff, BackoffKind, Condition, Jitter, RetryOn, RetryPolicy};
use crate::source::Node;
use crate::source::error::LoadError;

pub const LAYER: &str = "gateway";
pub const ROUTE: &str = "gateway-route";

pub fn read(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    let group = facts.read_kinds.len();
    let meta = get(root, "metadata");
    let namespace = meta
        .and_then(|m| get(m, "namespace"))
        .and_then(str_at)
        .map(str::to_owned);
    let Some(spec) = get(root, "spec") else {
        return Err(cx
            .f
            .error(root.pos, "an HTTPRoute without `spec:`")
            .with_help("an HTTPRoute has `spec: { rules: [...] }`"));
    };
    let mut all_hosts = Vec::new();
    let mut indices = Vec::new();
    for rule in node::list(cx, spec, "rules")? {
        let mut hosts = Vec::new();
        for b in node::list(cx, rule, "backendRefs")? {
            let Some((nk, n)) = entry(b, "name") else {
                return Err(cx
                    .f
                    .error(b.pos, "a backendRef without `name:`")
                    .with_help("name the Service: `- name: ratings`"));
            };
            let ns = get(b, "namespace").and_then(str_at).map(str::to_owned);
            hosts.push(HostRef {
                host: cx.f.str(n, "`name`")?.to_owned(),
                namespace: ns.or_else(|| namespace.clone()),
                at: cx.at(nk.pos),
            });
        }
        if hosts.is_empty() {
            continue;
        }
        let matcher = matches(cx, rule)?;
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
            Some((rk, r)) => layers.push(retry(cx, rk.pos, r, backend.or(request), facts)?),
            None => {
                if let Some((d, pos)) = backend {
                    layers.push(LayerFact {
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
        all_hosts.extend(hosts.iter().cloned());
        // Pushed even without layers: an Envoy Gateway BackendTrafficPolicy
        // may give it its retries.
        indices.push(facts.routes.len());
        facts.routes.push(RouteFact {
            source: "gateway",
            group,
            hosts,
            matcher,
            layers,
        });
    }
    if let Some(name) = meta.and_then(|m| get(m, "name")).and_then(str_at) {
        facts.http_routes.push(HttpRouteRef {
            name: name.to_owned(),
            namespace: namespace.clone(),
            routes: indices,
        });
    }
    if let Some(m) = meta {
        super::linkerd::annotations(cx, m, all_hosts, Matcher::default(), facts)?;
    }
    Ok(())
}

fn matches(cx: Cx, rule: &Node) -> Result<Matcher, LoadError> {
    let mut m = Matcher::default();
    for x in node::list(cx, rule, "matches")? {
        let mut r = MatchRule::default();
        if let Some(method) = get(x, "method").and_then(str_at) {
            r.method = Some(StrMatch::Exact(method.to_ascii_uppercase()));
        }
        if let Some(p) = get(x, "path") {
            let value = get(p, "value").and_then(str_at).unwrap_or("/").to_owned();
            r.path = Some(
                match get(p, "type").and_then(str_at).unwrap_or("PathPrefix") {
                    "Exact" => StrMatch::Exact(value),
                    "RegularExpression" => StrMatch::Regex(value),
                    _ => StrMatch::Prefix(value),
                },
            );
        }
        m.any.push(r);
    }
    Ok(m)
}

fn retry(
    cx: Cx,
    at: crate::source::Pos,
    r: &Node,
    timeout: Option<(Duration, crate::source::Pos)>,
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
                "HTTPRoute retry without `attempts`: the implementation decides; read as Envoy Gateway's 2",
            );
            2
        }
    };
    let mut retry_on = vec![Condition::Connect];
    match entry(r, "codes") {
        Some((k, v)) => {
            spans.retry_on = Some(k.pos);
            for c in node::items(v) {
                let code = node::int(cx, c, "codes", 400, 599)? as u16;
                retry_on.push(Condition::Status(code));
            }
        }
        None => retry_on.push(Condition::Status(503)),
    }
    let base = match entry(r, "backoff") {
        Some((k, v)) => {
            spans.backoff = Some(k.pos);
            node::duration(cx, v, "backoff")?
        }
        None => Duration::from_millis(25),
    };
    Ok(LayerFact {
        timeout_default: None,
        name: LAYER.into(),
        file: cx.file,
        pos: at,
        timeout,
        comment: format!("HTTPRoute retry: attempts {retries} counts retries"),
        policy: PolicyFact::Inline {
            policy: RetryPolicy {
                max_attempts: retries + 1,
                backoff: Backoff {
                    kind: BackoffKind::Exponential,
                    base,
                    multiplier: 2.0,
                    cap: Some(base * 10),
                    jitter: Jitter::Full,
                },
                retry_on: RetryOn(retry_on),
                honor_retry_after: false,
                budget: None,
            },
            spans,
        },
    })
}

/// An Envoy Gateway `BackendTrafficPolicy`: its retry layer, for the
/// HTTPRoutes it targets (resolved once every document is read).
pub fn read_backend_traffic_policy(
    cx: Cx,
    root: &Node,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    let namespace = get(root, "metadata")
        .and_then(|m| get(m, "namespace"))
        .and_then(str_at)
        .map(str::to_owned);
    let Some(spec) = get(root, "spec") else {
        return Ok(());
    };
    let Some((rk, r)) = entry(spec, "retry") else {
        return Ok(());
    };
    let mut targets: Vec<&Node> = node::list(cx, spec, "targetRefs")?.iter().collect();
    targets.extend(get(spec, "targetRef"));
    let mut spans = Spans {
        policy: Some(rk.pos),
        ..Spans::default()
    };
    let retries = match entry(r, "numRetries") {
        Some(kv) => node::retries(cx, kv, "numRetries", &mut spans.max_attempts)?,
        None => 2,
    };
    let mut retry_on = Vec::new();
    match entry(r, "retryOn") {
        Some((k, on)) => {
            spans.retry_on = Some(k.pos);
            let triggers = node::list(cx, on, "triggers")?;
            if triggers.is_empty() {
                // Envoy Gateway keeps its default retry_on (connect-failure,
                // refused-stream, ...) when only codes are given.
                retry_on.push(Condition::Connect);
            }
            for t in triggers {
                let name = cx.f.str(t, "a retry trigger")?;
                super::istio::note_grpc_only(cx, t.pos, name, facts);
                let conditions = super::istio::retry_on(name).map_err(|bad| {
                    cx.f.error(t.pos, format!("unknown retry trigger `{bad}`"))
                        .with_help(format!(
                            "use Envoy's conditions: {}",
                            super::istio::KNOWN.join(", ")
                        ))
                })?;
                for c in conditions {
                    if !retry_on.contains(&c) {
                        retry_on.push(c);
                    }
                }
            }
            for c in node::list(cx, on, "httpStatusCodes")? {
                let code = Condition::Status(node::int(cx, c, "httpStatusCodes", 100, 599)? as u16);
                if !retry_on.contains(&code) {
                    retry_on.push(code);
                }
            }
        }
        None => retry_on.extend([Condition::Connect, Condition::Status(503)]),
    }
    let per_retry = get(r, "perRetry");
    let timeout = per_retry
        .and_then(|p| entry(p, "timeout"))
        .map(|(k, v)| node::duration(cx, v, "timeout").map(|d| (d, k.pos)))
        .transpose()?;
    let (mut base, mut cap) = (Duration::from_millis(25), None);
    if let Some((k, b)) = per_retry.and_then(|p| entry(p, "backOff")) {
        spans.backoff = Some(k.pos);
        if let Some(v) = get(b, "baseInterval") {
            base = node::duration(cx, v, "baseInterval")?;
        }
        if let Some(v) = get(b, "maxInterval") {
            cap = Some(node::duration(cx, v, "maxInterval")?);
        }
    }
    let layer = LayerFact {
        timeout_default: None,
        name: LAYER.into(),
        file: cx.file,
        pos: rk.pos,
        timeout,
        comment: format!(
            "Envoy Gateway BackendTrafficPolicy retry: numRetries {retries} counts retries"
        ),
        policy: PolicyFact::Inline {
            policy: RetryPolicy {
                max_attempts: retries + 1,
                backoff: Backoff {
                    kind: BackoffKind::Exponential,
                    base,
                    multiplier: 2.0,
                    cap: Some(cap.unwrap_or(base * 10)),
                    jitter: Jitter::Full,
                },
                retry_on: RetryOn(retry_on),
                honor_retry_after: false,
                budget: None,
            },
            spans,
        },
    };
    for t in targets {
        let kind = get(t, "kind").and_then(str_at).unwrap_or("");
        let Some(name) = get(t, "name").and_then(str_at) else {
            continue;
        };
        if kind != "HTTPRoute" {
            facts.note(
                Some(cx.at(t.pos)),
                format!("a BackendTrafficPolicy targeting a {kind} is not followed; target the HTTPRoutes"),
            );
            continue;
        }
        let ns = get(t, "namespace").and_then(str_at).map(str::to_owned);
        facts.traffic_policies.push(TrafficPolicy {
            route: name.to_owned(),
            namespace: ns.or_else(|| namespace.clone()),
            layer: layer.clone(),
            at: cx.at(t.pos),
        });
    }
    Ok(())
}

/// Gives each targeted HTTPRoute the policy's retry layer.
pub(crate) fn apply_traffic_policies(facts: &mut Facts) {
    let policies = std::mem::take(&mut facts.traffic_policies);
    for p in policies {
        let Some(route) = facts.http_routes.iter().find(|r| {
            let ns = |n: &Option<String>| n.clone().unwrap_or_else(|| "default".into());
            r.name == p.route && ns(&r.namespace) == ns(&p.namespace)
        }) else {
            facts.warn(
                Some(p.at),
                format!(
                    "BackendTrafficPolicy targets HTTPRoute `{}`, which is not among the sources",
                    p.route
                ),
            );
            continue;
        };
        for &i in &route.routes.clone() {
            let layers = &mut facts.routes[i].layers;
            match layers.iter_mut().find(|l| l.name == LAYER) {
                Some(l) => {
                    // The route's backendRequest timeout stays unless the policy sets one.
                    let timeout = p.layer.timeout.or(l.timeout);
                    *l = LayerFact {
                        timeout_default: None,
                        timeout,
                        ..p.layer.clone()
                    };
                }
                None => layers.push(p.layer.clone()),
            }
        }
    }
}
