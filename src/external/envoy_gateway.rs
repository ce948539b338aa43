//! Envoy Gateway `BackendTrafficPolicy` (`gateway.envoyproxy.io/v1alpha1`):
//! its `retry` and `circuitBreaker`, on the rules of the Gateway API routes
//! it targets (`gateway_api` reads the routes).
//!
//! The policy gives its `retry:` to the rules of the HTTPRoutes and GRPCRoutes it targets,
//! or of the routes attached to the Gateway it targets, unless the rule
//! has a `retry` of its own (which wins: `ir.HTTPRoute.GetRetry()`).
//! `numRetries` counts RETRIES (default 2), `perRetry.timeout`,
//! `perRetry.backOff` (`baseInterval`, `maxInterval`), `retryOn.triggers`
//! (Envoy's conditions) and `retryOn.httpStatusCodes` (retried only when
//! the triggers are absent or include `retriable-status-codes`); absent,
//! Envoy Gateway's default `retry_on`. `circuitBreaker.retryBudget` is a
//! ratio budget (`percent` of requests in flight; its
//! `minRetryConcurrency` is not modelled), `maxParallelRetries` a
//! concurrency budget, on the gateway's retry layer of those routes.
//! gRPC conditions (`unavailable`, `cancelled`, …) on a GRPCRoute are read
//! as the gRPC service config reads those statuses
//! (`grpc_service_config::status`: UNAVAILABLE is 503, connect, reset).

use super::facts::*;
use super::gateway_api::{ENVOY_GATEWAY_RETRY_ON, LAYER};
use super::node::{self, Cx, entry, get, str_at};
use crate::input::Node;
use crate::input::error::LoadError;
use crate::policy::{BudgetSpec, Condition};

/// Envoy's `retry_on` on a gRPC call: its gRPC conditions read as the gRPC
/// service config reads those statuses; the rest as on HTTP.
pub(crate) fn grpc_retry_on(text: &str) -> Result<Vec<Condition>, String> {
    let mut out: Vec<Condition> = Vec::new();
    for t in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let conditions = if super::istio::GRPC_ONLY.contains(&t) {
            super::grpc_service_config::status(&t.replace('-', "_"))
                .map(<[Condition]>::to_vec)
                .ok_or_else(|| t.to_owned())?
        } else {
            super::istio::retry_on(t)?
        };
        for c in conditions {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// An Envoy Gateway `BackendTrafficPolicy`: its retry layer and retry
/// budget, for the routes it targets (resolved once every document is read).
pub(crate) fn read_backend_traffic_policy(
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
    let budget = match get(spec, "circuitBreaker") {
        Some(cb) => circuit_breaker_budget(cx, cb, facts)?,
        None => None,
    };
    let layer = match entry(spec, "retry") {
        Some((rk, r)) => Some((
            policy_retry(cx, rk.pos, r, false, facts)?,
            policy_retry(cx, rk.pos, r, true, facts)?,
        )),
        None => None,
    };
    if layer.is_none() && budget.is_none() {
        return Ok(());
    }
    let mut grpc_only = Vec::new();
    if let Some(on) = get(spec, "retry").and_then(|r| get(r, "retryOn")) {
        for t in node::list(cx, on, "triggers")? {
            if let Some(name) = str_at(t)
                && super::istio::GRPC_ONLY.contains(&name)
            {
                grpc_only.push((cx.at(t.pos), name.to_owned()));
            }
        }
    }
    let mut targets: Vec<&Node> = node::list(cx, spec, "targetRefs")?.iter().collect();
    targets.extend(get(spec, "targetRef"));
    for t in targets {
        let kind = get(t, "kind").and_then(str_at).unwrap_or("");
        let Some(name) = get(t, "name").and_then(str_at) else {
            continue;
        };
        if !matches!(kind, "HTTPRoute" | "GRPCRoute" | "Gateway") {
            facts.note(
                Some(cx.at(t.pos)),
                format!("a BackendTrafficPolicy targeting a {kind} is not followed; target a Gateway, HTTPRoute or GRPCRoute"),
            );
            continue;
        }
        let ns = get(t, "namespace").and_then(str_at).map(str::to_owned);
        facts.traffic_policies.push(TrafficPolicy {
            target_kind: kind.to_owned(),
            route: name.to_owned(),
            budget: budget.clone(),
            namespace: ns.or_else(|| namespace.clone()),
            layer: layer.clone(),
            grpc_only: grpc_only.clone(),
            at: cx.at(t.pos),
        });
    }
    Ok(())
}

/// `circuitBreaker.retryBudget` (Envoy's `retry_budget`, as `envoy.rs`
/// reads it) or `maxParallelRetries` (Envoy's `max_retries`).
fn circuit_breaker_budget(
    cx: Cx,
    cb: &Node,
    facts: &mut Facts,
) -> Result<Option<(BudgetSpec, crate::input::Pos)>, LoadError> {
    if let Some((k, rb)) = entry(cb, "retryBudget") {
        let pct = match get(rb, "percent") {
            Some(p) => fraction_percent(cx, p)?,
            None => {
                return Err(cx
                    .f
                    .error(k.pos, "a retryBudget without `percent`")
                    .with_help("write `retryBudget: { percent: { numerator: 20 } }` for 20 %"));
            }
        };
        facts.note(
            Some(cx.at(k.pos)),
            format!("Envoy Gateway's retryBudget ({pct} % of requests in flight) is read as a ratio budget of {}; minRetryConcurrency (default 3) is not modelled", pct / 100.0),
        );
        return Ok(Some((
            BudgetSpec::Ratio {
                ratio: pct / 100.0,
                min_per_second: 0.0,
                window: BudgetSpec::DEFAULT_WINDOW,
            },
            k.pos,
        )));
    }
    if let Some((k, v)) = entry(cb, "maxParallelRetries") {
        let max = node::int(cx, v, "maxParallelRetries", 0, i128::from(u32::MAX))? as u32;
        return Ok(Some((BudgetSpec::Concurrency { max }, k.pos)));
    }
    Ok(None)
}

/// A Gateway API `Fraction` (`numerator`, `denominator` default 100) as a
/// percentage in 0..=100.
fn fraction_percent(cx: Cx, p: &Node) -> Result<f64, LoadError> {
    let num = match get(p, "numerator") {
        Some(n) => node::int(cx, n, "numerator", 0, i128::from(u32::MAX))? as f64,
        None => {
            return Err(cx
                .f
                .error(p.pos, "a Fraction without `numerator`")
                .with_help("write `percent: { numerator: 20 }` for 20 %"));
        }
    };
    let den = match get(p, "denominator") {
        Some(d) => node::int(cx, d, "denominator", 1, i128::from(u32::MAX))? as f64,
        None => 100.0,
    };
    let pct = num / den * 100.0;
    if pct > 100.0 {
        return Err(cx
            .f
            .error(p.pos, format!("a retry budget of {pct} % is above 100 %"))
            .with_help("the numerator is at most the denominator (default 100)"));
    }
    Ok(pct)
}

/// A BackendTrafficPolicy's `retry`, as `buildRetryPolicy` translates it,
/// for HTTP calls or gRPC calls.
fn policy_retry(
    cx: Cx,
    at: crate::input::Pos,
    r: &Node,
    grpc: bool,
    facts: &mut Facts,
) -> Result<LayerFact, LoadError> {
    let mut spans = Spans {
        policy: Some(at),
        ..Spans::default()
    };
    let retries = match entry(r, "numRetries") {
        Some(kv) => node::retries(cx, kv, "numRetries", &mut spans.max_attempts)?,
        None => 2,
    };
    let conditions = |text: &str| {
        if grpc {
            grpc_retry_on(text)
        } else {
            super::istio::retry_on(text)
        }
    };
    let mut retry_on = Vec::new();
    let mut codes_count = true;
    let mut codes: Vec<Condition> = Vec::new();
    match entry(r, "retryOn") {
        Some((k, on)) => {
            spans.retry_on = Some(k.pos);
            let triggers = node::list(cx, on, "triggers")?;
            if triggers.is_empty() {
                retry_on = conditions(ENVOY_GATEWAY_RETRY_ON).unwrap_or_default();
            } else {
                codes_count = false;
            }
            for t in triggers {
                let name = cx.f.str(t, "a retry trigger")?;
                if name == "retriable-status-codes" {
                    codes_count = true;
                }
                let cs = conditions(name).map_err(|bad| {
                    cx.f.error(t.pos, format!("unknown retry trigger `{bad}`"))
                        .with_help(format!(
                            "use Envoy's conditions: {}",
                            super::istio::KNOWN.join(", ")
                        ))
                })?;
                for c in cs {
                    if !retry_on.contains(&c) {
                        retry_on.push(c);
                    }
                }
            }
            for c in node::list(cx, on, "httpStatusCodes")? {
                codes.push(Condition::Status(
                    node::int(cx, c, "httpStatusCodes", 100, 599)? as u16,
                ));
            }
        }
        None => {
            retry_on = conditions(ENVOY_GATEWAY_RETRY_ON).unwrap_or_default();
            codes.push(Condition::Status(503));
        }
    }
    if codes_count {
        for c in codes {
            if !retry_on.contains(&c) {
                retry_on.push(c);
            }
        }
    } else if !codes.is_empty() && !grpc {
        facts.note(
            Some(cx.at(at)),
            "httpStatusCodes are retried only with the `retriable-status-codes` trigger, which this retryOn does not list",
        );
    }
    let per_retry = get(r, "perRetry");
    let timeout = per_retry
        .and_then(|p| entry(p, "timeout"))
        .map(|(k, v)| node::duration(cx, v, "timeout").map(|d| (d, k.pos)))
        .transpose()?;
    let (mut base, mut cap) = (super::envoy_retry::BASE_INTERVAL, None);
    // Envoy Gateway's field is `backOff`; its own test data writes `backoff`.
    if let Some((k, b)) =
        per_retry.and_then(|p| entry(p, "backOff").or_else(|| entry(p, "backoff")))
    {
        spans.backoff = Some(k.pos);
        if let Some(v) = get(b, "baseInterval") {
            base = node::duration(cx, v, "baseInterval")?;
        }
        if let Some(v) = get(b, "maxInterval") {
            cap = Some(node::duration(cx, v, "maxInterval")?);
        }
    }
    Ok(LayerFact {
        grpc_retry_on: None,
        timeout_default: None,
        name: LAYER.into(),
        file: cx.file,
        pos: at,
        timeout,
        comment: format!(
            "Envoy Gateway BackendTrafficPolicy retry: numRetries {retries} counts retries"
        ),
        policy: PolicyFact::Inline {
            policy: super::envoy_retry::policy(retries, base, cap, retry_on, false),
            spans,
        },
    })
}

/// Gives the rules of each targeted route (or of the routes attached to a
/// targeted Gateway) the policy's retry layer where they have no `retry`
/// of their own, and its budget; then orders the routes by precedence.
pub(crate) fn apply_traffic_policies(facts: &mut Facts) {
    let policies = std::mem::take(&mut facts.traffic_policies);
    let ns = |n: &Option<String>| n.clone().unwrap_or_else(|| "default".into());
    // A policy on a route wins over one on its Gateway.
    let mut taken: Vec<usize> = Vec::new();
    for gateway_pass in [false, true] {
        for p in policies
            .iter()
            .filter(|p| (p.target_kind == "Gateway") == gateway_pass)
        {
            let refs: Vec<usize> = facts
                .http_routes
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    if gateway_pass {
                        r.gateways
                            .iter()
                            .any(|(gns, g)| *g == p.route && ns(gns) == ns(&p.namespace))
                    } else {
                        r.kind == p.target_kind
                            && r.name == p.route
                            && ns(&r.namespace) == ns(&p.namespace)
                    }
                })
                .map(|(i, _)| i)
                .filter(|i| !gateway_pass || !taken.contains(i))
                .collect();
            if refs.is_empty() {
                let text = if gateway_pass {
                    format!(
                        "BackendTrafficPolicy targets Gateway `{}`, to which no route among the sources attaches",
                        p.route
                    )
                } else {
                    format!(
                        "BackendTrafficPolicy targets {} `{}`, which is not among the sources",
                        p.target_kind, p.route
                    )
                };
                facts.warn(Some(p.at), text);
                continue;
            }
            for r in refs {
                taken.push(r);
                let route = facts.http_routes[r].clone();
                let grpc = route.kind == "GRPCRoute";
                if !grpc && p.layer.is_some() {
                    for (at, t) in &p.grpc_only {
                        let text = format!(
                            "`{t}` matches a gRPC status in the response headers only; on HTTPRoute `{}` it retries nothing",
                            route.name
                        );
                        if !facts
                            .notes
                            .iter()
                            .any(|n| n.at == Some(*at) && n.text == text)
                        {
                            facts.note(Some(*at), text);
                        }
                    }
                }
                for (j, &i) in route.routes.iter().enumerate() {
                    if facts.routes[i].source != "gateway" {
                        continue;
                    }
                    let layers = &mut facts.routes[i].layers;
                    if let Some((http, g)) = &p.layer
                        && !route.own_retry[j]
                    {
                        let l = if grpc { g } else { http };
                        match layers.iter_mut().find(|l| l.name == LAYER) {
                            Some(old) => {
                                // The route's backendRequest timeout stays unless the policy sets one.
                                let timeout = l.timeout.or(old.timeout);
                                *old = LayerFact {
                                    grpc_retry_on: None,
                                    timeout,
                                    ..l.clone()
                                };
                            }
                            None => layers.push(l.clone()),
                        }
                    }
                    if let Some((b, pos)) = &p.budget
                        && let Some(l) = layers.iter_mut().find(|l| l.name == LAYER)
                        && let PolicyFact::Inline { policy, spans } = &mut l.policy
                    {
                        policy.budget = Some(b.clone());
                        if l.file == p.at.file {
                            spans.budget = Some(*pos);
                        }
                    }
                }
            }
        }
    }
    super::gateway_api::order_routes(facts);
}
