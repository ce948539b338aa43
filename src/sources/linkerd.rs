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
use super::node::{self, Cx, entry, get, path, str_at};
use crate::policy::{Backoff, BudgetSpec, Condition, RetryOn, RetryPolicy};
use crate::source::Node;
use crate::source::error::LoadError;

pub const LAYER: &str = "linkerd";
pub const TIMEOUT: &str = "linkerd-timeout";
/// The source name of annotation routes: a ServiceProfile for the same
/// Service wins over them, as in the proxy ("Retries configured in this way
/// are incompatible with ServiceProfiles").
pub const ANNOTATIONS: &str = "linkerd-annotations";

pub fn read_profile(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
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
            if let Some(p) = get(c, "pathRegex").and_then(str_at) {
                rule.path = Some(StrMatch::Regex(p.to_owned()));
            }
        }
        let mut layers = Vec::new();
        if let Some((tk, tv)) = entry(route, "timeout") {
            let d = node::duration(cx, tv, "timeout")?;
            layers.push(LayerFact {
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
        if layers.is_empty() {
            continue;
        }
        facts.routes.push(RouteFact {
            source: "linkerd",
            group,
            hosts: vec![HostRef {
                host: host.clone(),
                namespace: None,
                at: cx.at(nk.pos),
            }],
            matcher: Matcher { any: vec![rule] },
            layers,
        });
    }
    Ok(())
}

/// The `retry.linkerd.io/*` annotations of `meta`, as a layer on calls to
/// `hosts`; nothing when there are none.
pub fn annotations(
    cx: Cx,
    meta: &Node,
    hosts: Vec<HostRef>,
    matcher: Matcher,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    let Some(ann) = get(meta, "annotations") else {
        return Ok(());
    };
    let http = entry(ann, "retry.linkerd.io/http");
    let limit = entry(ann, "retry.linkerd.io/limit");
    let timeout = entry(ann, "retry.linkerd.io/timeout");
    let Some(at) = http.or(limit).or(timeout).map(|(k, _)| k.pos) else {
        return Ok(());
    };
    let mut spans = Spans {
        policy: Some(at),
        ..Spans::default()
    };
    let retries = match limit {
        Some(kv) => node::retries(cx, kv, "retry.linkerd.io/limit", &mut spans.max_attempts)?,
        None => 1,
    };
    let mut retry_on = match http {
        Some((k, v)) => {
            spans.retry_on = Some(k.pos);
            http_conditions(cx.f.str(v, "`retry.linkerd.io/http`")?).ok_or_else(|| {
                cx.f.error(
                    v.pos,
                    "not a list of status codes, ranges, `5xx` or `gateway-error`",
                )
                .with_help("write e.g. `retry.linkerd.io/http: 5xx` or `\"502,503,500-504\"`")
            })?
        }
        None => vec![Condition::Class(5)],
    };
    let per_try = timeout
        .map(|(k, v)| node::duration(cx, v, "retry.linkerd.io/timeout").map(|d| (d, k.pos)))
        .transpose()?;
    if per_try.is_some() && !retry_on.contains(&Condition::Timeout) {
        retry_on.push(Condition::Timeout);
    }
    facts.routes.push(RouteFact {
        source: ANNOTATIONS,
        group: facts.read_kinds.len(),
        hosts,
        matcher,
        layers: vec![LayerFact {
            timeout_default: None,
            name: LAYER.into(),
            file: cx.file,
            pos: at,
            timeout: per_try,
            comment: format!("retry.linkerd.io annotations: limit {retries} counts retries"),
            policy: PolicyFact::Inline {
                policy: RetryPolicy {
                    max_attempts: retries + 1,
                    backoff: Backoff::default(),
                    retry_on: RetryOn(retry_on),
                    honor_retry_after: false,
                    budget: None,
                },
                spans,
            },
        }],
    });
    Ok(())
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
