//! Linkerd's outbound route metrics (Linkerd 2.16+) as a caller's proxy's
//! attempts per request.
//!
//! linkerd2-proxy stacks a route's layers so (`linkerd/app/outbound/src/
//! http/logical/policy/route.rs`, `Http::layer`): the route's request
//! metrics (`outbound_http_route_request_statuses_total`, "Completed
//! request-response streams") wrap the retry layer, which wraps the backend
//! metrics (`outbound_http_route_backend_response_statuses_total`,
//! "Completed responses"). So the route's statuses count each request once,
//! before retries (Linkerd's "effective" requests), and the backend's count
//! each attempt (the "actual" ones). The retry layer (`linkerd/http/retry/
//! src/lib.rs`, `send_req_with_retries`) increments
//! `…_retry_requests_total` ("Retry requests emitted") for each retry it
//! sends, `…_retry_limit_exceeded_total` when a retryable response is left
//! as the last, `…_retry_overflow_total` when the service was not ready
//! for a retry, and `…_retry_successes_total` for a retry that ended it.
//! The same families exist under `outbound_grpc_route_…`.
//!
//! Attempts are `requests + retry requests` (as `linkerd viz stat-outbound`
//! computes its retry rate, `retries / (successes + failures + retries)`);
//! without the retry counter, the backend's responses. The callee is the
//! route's parent (`parent_name` in `parent_namespace`: the Service in
//! Gateway API for a mesh). The caller is `--metrics-caller` when given
//! (a proxy's scrape is its own pod's), else the `deployment` label (in
//! `namespace`) that Linkerd's Prometheus configuration adds.

use std::collections::HashMap;

use super::exposition::Sample;
use crate::external::facts::{At, Counted, CountedFact, CounterKind, Facts, HostRef};
use crate::external::node::Cx;
use crate::input::error::LoadError;

#[derive(Clone, Copy, PartialEq)]
enum Family {
    Requests,
    Backend,
    Retries,
    Limit,
    Overflow,
}

/// The family a series' name is, for HTTP and gRPC routes.
fn family(name: &str) -> Option<Family> {
    let rest = name
        .strip_prefix("outbound_http_route_")
        .or_else(|| name.strip_prefix("outbound_grpc_route_"))?;
    Some(match rest {
        "request_statuses_total" => Family::Requests,
        "backend_response_statuses_total" => Family::Backend,
        "retry_requests_total" => Family::Retries,
        "retry_limit_exceeded_total" => Family::Limit,
        "retry_overflow_total" => Family::Overflow,
        _ => return None,
    })
}

#[derive(Default)]
struct Parent {
    caller: Option<String>,
    name: String,
    namespace: Option<String>,
    requests: u64,
    backend: Option<u64>,
    retries: Option<u64>,
    limit: Option<u64>,
    overflow: Option<u64>,
    /// The first `request_statuses` sample.
    at: Option<At>,
    /// The first sample of any family.
    first: Option<At>,
}

/// Adds the calls `samples` count to `facts`; returns how many parents
/// had requests.
pub(crate) fn read(
    cx: Cx,
    samples: &[Sample],
    caller: Option<&str>,
    window: &str,
    facts: &mut Facts,
) -> Result<usize, LoadError> {
    let mut parents: Vec<Parent> = Vec::new();
    let mut index: HashMap<(Option<String>, String, Option<String>), usize> = HashMap::new();
    // Route series without the parent they count for: the first, and how many.
    let mut unparented: Option<(At, usize)> = None;
    for s in samples {
        let Some(f) = family(&s.name) else {
            continue;
        };
        let Some(name) = super::label(s, &["parent_name"]) else {
            unparented.get_or_insert((cx.at(s.at), 0)).1 += 1;
            continue;
        };
        let v = super::counter(
            cx,
            s,
            "a counter counts up from 0; save the proxy's metrics as it answered (`linkerd diagnostics proxy-metrics`)",
        )?;
        let from = match caller {
            Some(c) => Some(c.to_owned()),
            None => {
                super::label(s, &["deployment"]).map(|d| match super::label(s, &["namespace"]) {
                    Some(ns) => format!("{d}.{ns}"),
                    None => d.to_owned(),
                })
            }
        };
        let namespace = super::label(s, &["parent_namespace"]).map(str::to_owned);
        let key = (from.clone(), name.to_owned(), namespace.clone());
        let i = *index.entry(key).or_insert_with(|| {
            parents.push(Parent {
                caller: from,
                name: name.to_owned(),
                namespace,
                ..Parent::default()
            });
            parents.len() - 1
        });
        let p = &mut parents[i];
        p.first.get_or_insert(cx.at(s.at));
        let add = |slot: &mut Option<u64>| *slot = Some(slot.unwrap_or(0).saturating_add(v));
        match f {
            Family::Requests => {
                p.at.get_or_insert(cx.at(s.at));
                p.requests = p.requests.saturating_add(v);
            }
            Family::Backend => add(&mut p.backend),
            Family::Retries => add(&mut p.retries),
            Family::Limit => add(&mut p.limit),
            Family::Overflow => add(&mut p.overflow),
        }
    }
    if let Some((at, n)) = unparented {
        facts.warn(
            Some(at),
            format!("{n} Linkerd route series without a `parent_name` label: whose route they count cannot be told, so they are not compared"),
        );
    }
    let mut found = 0;
    for p in parents {
        let Some(at) = p.at else {
            if let Some(first) = p.first {
                facts.warn(
                    Some(first),
                    format!(
                        "Linkerd route metrics to `{}` without `outbound_http_route_request_statuses_total` (or its gRPC twin): its requests cannot be told, so it is not compared",
                        p.name
                    ),
                );
            }
            continue;
        };
        if p.requests == 0 {
            continue;
        }
        found += 1;
        let labelled = caller.is_none();
        let Some(from) = p.caller else {
            return Err(cx
                .f
                .error(at.pos, format!("Linkerd route metrics to `{}` without a caller: a proxy's metrics are its own pod's, and whose is not said", p.name))
                .with_help("name the service whose proxy wrote them: `--metrics-caller SERVICE`, or `{ path: FILE, caller: SERVICE }` in the topology's `sources:`"));
        };
        let retries = match (p.retries, p.backend) {
            (Some(r), _) => r,
            (None, Some(actual)) if actual >= p.requests => actual - p.requests,
            (None, Some(actual)) => {
                facts.warn(
                    Some(at),
                    format!(
                        "Linkerd route metrics to `{}` count {actual} backend responses for {} requests and no `outbound_http_route_retry_requests_total`: fewer attempts than requests (a scrape taken mid-request, or backends left out), so its retries cannot be told and it is not compared",
                        p.name, p.requests
                    ),
                );
                continue;
            }
            (None, None) => {
                facts.warn(
                    Some(at),
                    format!(
                        "Linkerd route metrics to `{}` have requests but neither `outbound_http_route_retry_requests_total` nor the backends' responses: its retries cannot be told, so it is not compared",
                        p.name
                    ),
                );
                continue;
            }
        };
        facts.counted.push(CountedFact {
            caller: from,
            caller_labelled: labelled,
            host: HostRef {
                host: p.name.clone(),
                namespace: p.namespace,
                at,
            },
            counters: Counted {
                kind: CounterKind::Linkerd,
                cluster: p.name,
                attempts: p.requests.saturating_add(retries),
                unattached: None,
                retries,
                overflow: p.overflow,
                limit_exceeded: p.limit,
                window: window.to_owned(),
            },
            at,
        });
    }
    Ok(found)
}
