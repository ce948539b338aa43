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
use crate::input::error::LoadError;
use crate::input::{Node, Pos, Value};
use crate::policy::{BudgetSpec, Condition};

/// What a sidecar's per-attempt timeout rests on when the route sets no
/// `perTryTimeout`: said wherever a figure uses it.
pub(crate) const PER_TRY_DEFAULT: &str =
    "perTryTimeout unset: Envoy's default gives each attempt the route timeout";

/// The newest Istio minor version this reader knows the default of.
pub const NEWEST_MINOR: u32 = 28;

/// The layer names this reader gives.
pub const SIDECAR: &str = "istio-sidecar";
pub(crate) const ROUTE: &str = "istio-route";

/// Istio's default retry policy for `1.minor`.
pub(crate) fn default_preset(minor: u32) -> &'static str {
    if minor >= 24 {
        "istio-default"
    } else {
        "istio-default-1.23"
    }
}

/// The conditions of Istio's default `retryOn`
/// (`connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes`)
/// as the presets write them: `connect`, and 503 up to 1.23 (see [`retry_on`]).
/// The same default on a gRPC call, where its `unavailable` and
/// `cancelled` match the gRPC statuses (read as the service config reads
/// UNAVAILABLE and CANCELLED).
pub(crate) fn default_grpc_conditions(minor: u32) -> Vec<Condition> {
    let mut c =
        super::envoy_gateway::grpc_retry_on("connect-failure,refused-stream,unavailable,cancelled")
            .unwrap_or_default();
    if minor < 24 && !c.contains(&Condition::Status(503)) {
        c.push(Condition::Status(503));
    }
    c
}

fn default_conditions(minor: u32) -> Vec<Condition> {
    let mut c = vec![Condition::Connect];
    if minor < 24 {
        c.push(Condition::Status(503));
    }
    c
}

pub(crate) fn read(
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
    // `gateways`: "The reserved word `mesh` is used to imply all the
    // sidecars in the mesh. When this field is omitted, the default gateway
    // (`mesh`) will be used" (istio.io, VirtualService). A match's own
    // `gateways` override the top-level list.
    let gateways = strings(cx, spec, "gateways")?;
    let mesh = gateways.is_empty() || gateways.iter().any(|g| g == "mesh");
    // The VirtualService binds the calls to its `hosts`, whatever the
    // destinations are.
    let name = path(root, &["metadata", "name"])
        .and_then(str_at)
        .unwrap_or("(unnamed)")
        .to_owned();
    let mut bound = Vec::new();
    for h in node::list(cx, spec, "hosts")? {
        let host = cx.f.str(h, "a `hosts` entry")?;
        bound.push(HostRef {
            host: host.to_owned(),
            namespace: namespace.clone(),
            at: cx.at(h.pos),
        });
    }
    let before = facts.routes.len();
    for route in node::list(cx, spec, "http")? {
        if !applies_to_mesh(cx, route, mesh)? {
            continue;
        }
        read_route(
            cx,
            route,
            namespace.as_deref(),
            &bound,
            options,
            preset,
            group,
            facts,
        )?;
    }
    if facts.routes.len() == before && !gateways.is_empty() && !mesh {
        let at = entry(spec, "gateways").map_or(spec.pos, |(k, _)| k.pos);
        facts.gateway_only.push(cx.at(at));
        facts.reclassify(Account::NoRetry(format!(
            "an Istio VirtualService bound to gateways only ({}), not `mesh`: it routes no calls between services",
            gateways.join(", ")
        )));
        return Ok(());
    }
    facts.vs_namespaces.push((group, namespace.clone()));
    for h in &bound {
        facts
            .vs_hosts
            .push((h.host.clone(), namespace.clone(), group, name.clone(), h.at));
    }
    Ok(())
}

/// The strings of a list of strings at `key`.
fn strings(cx: Cx, n: &Node, key: &str) -> Result<Vec<String>, LoadError> {
    node::list(cx, n, key)?
        .iter()
        .map(|g| cx.f.str(g, &format!("a `{key}` entry")).map(str::to_owned))
        .collect()
}

/// Whether an `http` route applies to sidecars: one of its matches names
/// `mesh` in its own `gateways`, or leaves them unset under a VirtualService
/// that applies to `mesh`; without matches, the VirtualService decides.
fn applies_to_mesh(cx: Cx, route: &Node, vs_mesh: bool) -> Result<bool, LoadError> {
    let matches = node::list(cx, route, "match")?;
    if matches.is_empty() {
        return Ok(vs_mesh);
    }
    for m in matches {
        let g = strings(cx, m, "gateways")?;
        if (g.is_empty() && vs_mesh) || g.iter().any(|x| x == "mesh") {
            return Ok(true);
        }
    }
    Ok(false)
}

fn list_has_delegate(spec: &Node) -> bool {
    get(spec, "http").is_some_and(|h| items(h).iter().any(|r| get(r, "delegate").is_some()))
}

#[allow(clippy::too_many_arguments)]
fn read_route(
    cx: Cx,
    route: &Node,
    namespace: Option<&str>,
    bound: &[HostRef],
    options: super::Options,
    preset: &'static str,
    group: usize,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    if !matches!(route.value, Value::Map(_)) {
        return Err(cx.f.expected(route, "a mapping for an `http:` route"));
    }
    let mut hosts = Vec::new();
    let mut subsets = Vec::new();
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
        subsets.push(get(d, "subset").and_then(str_at).map(str::to_owned));
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
            grpc_retry_on: None,
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
    // located at its own `host:`; each binds the VirtualService's `hosts`
    // (the first that matches a call wins, so a split's first destination
    // gives the layers, and the DestinationRule of each is kept).
    for (host, subset) in hosts.into_iter().zip(subsets) {
        let sidecar = match &retries {
            Some(l) => l.clone(),
            None => LayerFact {
                grpc_retry_on: None,
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
        facts.istio_destinations.push((
            facts.routes.len(),
            host.host.clone(),
            host.namespace.clone(),
            subset,
        ));
        facts.routes.push(RouteFact {
            source: "istio",
            group,
            hosts: if bound.is_empty() {
                vec![host]
            } else {
                bound.to_vec()
            },
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
            grpc_retry_on: None,
            timeout_default,
            name: SIDECAR.into(),
            file: cx.file,
            pos: at,
            timeout,
            policy: PolicyFact::None,
            comment: "Istio retries with `attempts: 0` (or none): retries disabled".into(),
        });
    }
    let mut grpc_retry_on = None;
    let retry_on = match entry(r, "retryOn") {
        Some((k, v)) => {
            spans.retry_on = Some(k.pos);
            let text = cx.f.str(v, "`retryOn`")?;
            note_grpc_only(cx, v.pos, text, facts);
            if text.split(',').any(|t| GRPC_ONLY.contains(&t.trim())) {
                grpc_retry_on = super::envoy_gateway::grpc_retry_on(text).ok();
            }
            retry_on(text).map_err(|bad| {
                cx.f.error(v.pos, format!("unknown retryOn condition `{bad}`"))
                    .with_help(format!(
                        "use Envoy's conditions ({}) or status codes such as 503",
                        KNOWN.join(", ")
                    ))
            })?
        }
        None => {
            grpc_retry_on = Some(default_grpc_conditions(options.istio_minor));
            default_conditions(options.istio_minor)
        }
    };
    let base = match entry(r, "backoff") {
        Some((k, v)) => {
            spans.backoff = Some(k.pos);
            node::duration(cx, v, "backoff")?
        }
        None => super::envoy_retry::BASE_INTERVAL,
    };
    let policy = super::envoy_retry::policy(attempts, base, None, retry_on, false);
    Ok(LayerFact {
        grpc_retry_on,
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

/// A DestinationRule's retry limits for one host: the rule's own
/// (`subset: None`) and each subset's.
#[derive(Debug, Clone)]
pub struct DestinationRule {
    pub host: String,
    pub namespace: Option<String>,
    pub limits: Vec<(Option<String>, BudgetSpec, At)>,
}

/// A `DestinationRule` (`networking.istio.io`): the retry limits istiod
/// puts on the host's Envoy cluster (pilot/pkg/networking/core/
/// cluster_traffic_policy.go, `applyConnectionPool`, `applyRetryBudget`):
///
/// - `trafficPolicy.retryBudget` (Istio 1.27+): `percent` of the requests
///   in flight (default 20) may be retries — Envoy's `retry_budget`, read as
///   a ratio budget of that share (`minRetryConcurrency`, default 3, is not
///   modelled: a note says so). Envoy lets a budget override `max_retries`.
/// - `trafficPolicy.connectionPool.http.maxRetries`: at most that many
///   retries in flight to the host (a concurrency budget); unset or 0,
///   istiod lifts Envoy's limit to 2^32-1, so nothing bounds them.
/// - `subsets[].trafficPolicy` replaces these for the routes whose
///   destination names the subset.
pub(crate) fn read_destination_rule(
    cx: Cx,
    root: &Node,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    let namespace = path(root, &["metadata", "namespace"])
        .and_then(str_at)
        .map(str::to_owned);
    let Some(spec) = get(root, "spec") else {
        return Err(cx
            .f
            .error(root.pos, "a DestinationRule without `spec:`")
            .with_help("a DestinationRule has `spec: { host: ratings, trafficPolicy: ... }`"));
    };
    let Some(host) = node::string(cx, spec, "host")? else {
        return Err(cx
            .f
            .error(spec.pos, "a DestinationRule without `host:`")
            .with_help("name the Service it is for: `host: ratings`"));
    };
    let mut limits = Vec::new();
    if let Some(tp) = get(spec, "trafficPolicy")
        && let Some((b, at)) = traffic_policy_limit(cx, tp, facts)?
    {
        limits.push((None, b, at));
    }
    for sub in node::list(cx, spec, "subsets")? {
        let Some(name) = node::string(cx, sub, "name")? else {
            return Err(cx
                .f
                .error(sub.pos, "a subset without `name:`")
                .with_help("name the subset: `- name: v1`"));
        };
        if let Some(tp) = get(sub, "trafficPolicy")
            && let Some((b, at)) = traffic_policy_limit(cx, tp, facts)?
        {
            limits.push((Some(name.to_owned()), b, at));
        }
    }
    if limits.is_empty() {
        facts.reclassify(Account::NoRetry(
            "an Istio DestinationRule without retryBudget or connectionPool.http.maxRetries".into(),
        ));
        return Ok(());
    }
    facts.destination_rules.push(DestinationRule {
        host: host.to_owned(),
        namespace,
        limits,
    });
    Ok(())
}

fn traffic_policy_limit(
    cx: Cx,
    tp: &Node,
    facts: &mut Facts,
) -> Result<Option<(BudgetSpec, At)>, LoadError> {
    if let Some((k, rb)) = entry(tp, "retryBudget") {
        let pct = match get(rb, "percent") {
            Some(v) => {
                cx.f.number(get(v, "value").unwrap_or(v), "retryBudget.percent")?
            }
            None => 20.0,
        };
        if !(0.0..=100.0).contains(&pct) {
            return Err(cx
                .f
                .error(
                    k.pos,
                    format!("`retryBudget.percent` {pct} is outside 0..=100"),
                )
                .with_help("write `percent: 20` for 20 % of the requests in flight"));
        }
        facts.note(
            Some(cx.at(k.pos)),
            format!("Istio's retryBudget ({pct} % of requests in flight) is read as a ratio budget of {}; minRetryConcurrency is not modelled", pct / 100.0),
        );
        return Ok(Some((
            BudgetSpec::Ratio {
                ratio: pct / 100.0,
                min_per_second: 0.0,
                window: BudgetSpec::DEFAULT_WINDOW,
            },
            cx.at(k.pos),
        )));
    }
    if let Some(http) = path(tp, &["connectionPool", "http"])
        && let Some((k, v)) = entry(http, "maxRetries")
    {
        let max = node::int(cx, v, "maxRetries", 0, i128::from(i32::MAX))? as u32;
        if max > 0 {
            return Ok(Some((BudgetSpec::Concurrency { max }, cx.at(k.pos))));
        }
    }
    Ok(None)
}

/// Puts each DestinationRule's limit on the Istio retry layers of the
/// routes to its host (and subset); warns once for each host two
/// VirtualServices bind, and keeps the first read (istiod keeps one
/// VirtualService per host for sidecars and reports the rest as
/// "duplicate domain from virtual service"); says which VirtualServices
/// apply to gateways only.
pub(crate) fn finish(facts: &mut Facts) {
    use super::hosts::split;
    let key = |host: &str, ns: &Option<String>| {
        let h = split(host);
        (
            h.name.to_owned(),
            h.namespace.map(str::to_owned).or(ns.clone()),
        )
    };
    // Two VirtualServices for one host.
    // A bound host as istiod compares them: its name and namespace.
    type Key = (String, Option<String>);
    let mut first: Vec<(Key, usize, String, At)> = Vec::new();
    let mut dropped: Vec<(usize, (String, Option<String>))> = Vec::new();
    let mut warnings = Vec::new();
    for (host, ns, group, name, at) in &facts.vs_hosts {
        let k = key(host, ns);
        let Some(i) = first.iter().position(|(f, g, _, _)| *f == k && g != group) else {
            first.push((k, *group, name.clone(), *at));
            continue;
        };
        let (_, other_group, other, other_at) = first[i].clone();
        let same = other == *name
            && facts
                .vs_namespaces
                .iter()
                .find(|(g, _)| *g == other_group)
                .map(|x| &x.1)
                == facts
                    .vs_namespaces
                    .iter()
                    .find(|(g, _)| g == group)
                    .map(|x| &x.1);
        if same {
            // One object written twice: `kubectl apply` leaves the last.
            warnings.push((
                *at,
                format!(
                    "VirtualService `{name}` is written twice (also at {}): applied in this order, the last replaces the first, so this one is applied for `{host}`",
                    facts.show(other_at)
                ),
            ));
            dropped.push((other_group, k.clone()));
            first[i] = (k, *group, name.clone(), *at);
        } else {
            warnings.push((
                *at,
                format!(
                    "host `{host}` is bound by two VirtualServices, `{other}` ({}) and `{name}`: for sidecars Istio applies one (the oldest) and drops the other's routes as a duplicate domain; the first read, `{other}`, is applied",
                    facts.show(other_at)
                ),
            ));
            dropped.push((*group, k));
        }
    }
    for (at, text) in warnings {
        facts.warn(Some(at), text);
    }
    for r in facts.routes.iter_mut().filter(|r| r.source == "istio") {
        r.hosts.retain(|h| {
            !dropped
                .iter()
                .any(|(g, k)| *g == r.group && key(&h.host, &h.namespace) == *k)
        });
    }
    if let Some(at) = facts.gateway_only.first().copied() {
        let n = facts.gateway_only.len();
        facts.note(
            Some(at),
            format!("{n} VirtualService(s) bind to gateways only (no `mesh` in `gateways`): they route no calls between services and are not applied"),
        );
    }
    // DestinationRules.
    let rules = std::mem::take(&mut facts.destination_rules);
    for (route, host, ns, subset) in facts.istio_destinations.clone() {
        let k = key(&host, &ns);
        let Some(rule) = rules.iter().find(|d| key(&d.host, &d.namespace) == k) else {
            continue;
        };
        let limit = subset
            .as_ref()
            .and_then(|s| rule.limits.iter().find(|(n, _, _)| n.as_ref() == Some(s)))
            .or_else(|| rule.limits.iter().find(|(n, _, _)| n.is_none()));
        let Some((_, budget, at)) = limit else {
            continue;
        };
        for l in &mut facts.routes[route].layers {
            if l.name != SIDECAR {
                continue;
            }
            match &mut l.policy {
                PolicyFact::Inline { policy, spans } if at.file == l.file => {
                    spans.budget = Some(at.pos);
                    policy.budget = Some(budget.clone());
                }
                PolicyFact::Inline { policy, spans } => {
                    let mut policy = policy.clone();
                    policy.budget = Some(budget.clone());
                    l.policy = PolicyFact::InlineBudgetElsewhere {
                        policy,
                        spans: *spans,
                        budget_at: *at,
                    };
                }
                PolicyFact::Preset { name, at: named } => {
                    l.policy = PolicyFact::PresetWithBudget {
                        name: std::mem::take(name),
                        at: *named,
                        budget: budget.clone(),
                        budget_at: *at,
                    };
                }
                _ => {}
            }
        }
    }
    facts.destination_rules = rules;
}

/// The DestinationRule limit (the rule's own, not a subset's) for a host
/// no VirtualService routes: the default policy's calls go to the whole
/// Service.
pub(crate) fn limit_for(facts: &Facts, host: &HostRef) -> Option<(BudgetSpec, At)> {
    use super::hosts::split;
    let key = |h: &str, ns: &Option<String>| {
        let s = split(h);
        (
            s.name.to_owned(),
            s.namespace.map(str::to_owned).or(ns.clone()),
        )
    };
    let k = key(&host.host, &host.namespace);
    facts
        .destination_rules
        .iter()
        .filter(|d| key(&d.host, &d.namespace) == k)
        .find_map(|d| d.limits.iter().find(|(s, _, _)| s.is_none()))
        .map(|(_, b, at)| (b.clone(), *at))
}

/// Envoy's retry conditions this reader knows.
pub(crate) const KNOWN: &[&str] = &[
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
pub(crate) const GRPC_ONLY: &[&str] = &[
    "cancelled",
    "deadline-exceeded",
    "internal",
    "resource-exhausted",
    "unavailable",
];

/// Notes each gRPC-only condition of a `retry_on` list: it adds nothing for
/// the HTTP calls modelled here, and a reader should see why it vanished.
pub(crate) fn note_grpc_only(cx: Cx, at: Pos, text: &str, facts: &mut Facts) {
    for t in text.split(',').map(str::trim) {
        if GRPC_ONLY.contains(&t) {
            facts.note(
                Some(cx.at(at)),
                format!("`{t}` matches a gRPC status in the response headers only: it retries nothing on an HTTP call, and the gRPC status on a gRPC call (`protocol: grpc`, a Service port `appProtocol: grpc` or named `grpc-*`)"),
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
