//! Envoy configuration, YAML or JSON: a static bootstrap
//! (`static_resources`), an xDS dump (`/config_dump`) or a bare
//! `RouteConfiguration`. Every `virtual_hosts` list found in the document is
//! read, and every cluster (a map with `name` and `circuit_breakers` or
//! `load_assignment`) for its retry limits.
//!
//! - Route `retry_policy` (or its virtual host's, which a route's replaces
//!   whole): `num_retries` counts RETRIES (default 1), `per_try_timeout`,
//!   `retry_on` (Envoy's conditions, mapped as for Istio, see
//!   `istio::retry_on`) with `retriable_status_codes`, `retry_back_off`
//!   (`base_interval` default 25 ms, `max_interval` default 10 × base, full
//!   jitter), `rate_limited_retry_back_off` → Retry-After honoured.
//! - Route `timeout` (default 15 s; `0s` disables it) bounds the request and
//!   its retries: an outer `envoy-route` layer; the `envoy` layer's attempts
//!   time out at `per_try_timeout`, else at the route timeout.
//! - The route's `cluster` names the callee: its first endpoint's DNS name
//!   (`socket_address.address`), or Istio's `outbound|PORT|SUBSET|HOST`
//!   host, or the cluster name itself. With `weighted_clusters`, each
//!   cluster of the split is a callee with the route's retry policy and
//!   timeout (a request goes to one of them, and its retries with it), and
//!   its own cluster's retry limit.
//! - Cluster `circuit_breakers.thresholds[]`: `retry_budget`
//!   (`budget_percent` default 20 %, `min_retry_concurrency` default 3)
//!   bounds retries in flight to a share of requests in flight: modelled as
//!   a `ratio` budget of that share (the same steady-state share of load; the
//!   minimum concurrency is not modelled, a note says so). Without a budget,
//!   `max_retries` (default 3) is `{ kind: concurrency, max }`.
//! - Route `match`: `prefix`, `path` and a `:method` header match decide;
//!   other conditions are taken to hold. The first matching route of a
//!   virtual host wins.

use std::time::Duration;

use super::facts::*;
use super::node::{self, Cx, entry, get, items, path, str_at};
use crate::policy::{Backoff, BackoffKind, BudgetSpec, Condition, Jitter, RetryOn, RetryPolicy};
use crate::source::error::LoadError;
use crate::source::{Node, Pos, Value};

pub const LAYER: &str = "envoy";
pub const ROUTE: &str = "envoy-route";

/// Whether a document is Envoy configuration.
pub fn detect(root: &Node) -> bool {
    get(root, "static_resources").is_some()
        || get(root, "virtual_hosts").is_some()
        || get(root, "configs").is_some_and(|c| {
            items(c).iter().any(|x| {
                get(x, "@type")
                    .and_then(str_at)
                    .is_some_and(|t| t.contains("envoy.admin"))
            })
        })
}

struct Cluster {
    name: String,
    host: String,
    budget: Option<(BudgetSpec, Pos)>,
}

pub fn read(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    let mut vhosts: Vec<&Node> = Vec::new();
    let mut clusters_n: Vec<&Node> = Vec::new();
    walk(root, 0, &mut vhosts, &mut clusters_n);
    let mut clusters = Vec::new();
    for c in clusters_n {
        clusters.push(cluster(cx, c, facts)?);
    }
    for vh_list in &vhosts {
        for vh in items(vh_list) {
            let vh_policy = entry(vh, "retry_policy");
            let group = facts.read_kinds.len();
            for route in node::list(cx, vh, "routes")? {
                read_route(cx, route, vh_policy, &clusters, group, facts)?;
            }
        }
    }
    Ok(())
}

/// Finds virtual host lists and clusters anywhere in the document.
fn walk<'a>(n: &'a Node, depth: u32, vhosts: &mut Vec<&'a Node>, clusters: &mut Vec<&'a Node>) {
    if depth > 40 {
        return;
    }
    match &n.value {
        Value::Map(entries) => {
            if get(n, "name").is_some()
                && (get(n, "circuit_breakers").is_some() || get(n, "load_assignment").is_some())
            {
                clusters.push(n);
            }
            for (k, v) in entries {
                if matches!(&k.value, Value::Str(s) if s == "virtual_hosts") {
                    vhosts.push(v);
                } else {
                    walk(v, depth + 1, vhosts, clusters);
                }
            }
        }
        Value::Seq(list) => list
            .iter()
            .for_each(|x| walk(x, depth + 1, vhosts, clusters)),
        _ => {}
    }
}

fn cluster(cx: Cx, c: &Node, facts: &mut Facts) -> Result<Cluster, LoadError> {
    let name = node::string(cx, c, "name")?.unwrap_or("").to_owned();
    let endpoint = get(c, "load_assignment")
        .and_then(|la| get(la, "endpoints"))
        .and_then(|e| items(e).first())
        .and_then(|e| get(e, "lb_endpoints"))
        .and_then(|l| items(l).first())
        .and_then(|l| path(l, &["endpoint", "address", "socket_address", "address"]))
        .and_then(str_at)
        .filter(|a| a.parse::<std::net::IpAddr>().is_err());
    let host = match endpoint {
        Some(a) => a.to_owned(),
        None => match name.split('|').collect::<Vec<_>>().as_slice() {
            [_, _, _, host] => (*host).to_owned(),
            _ => name.clone(),
        },
    };
    let mut budget = None;
    if let Some(th) = path(c, &["circuit_breakers", "thresholds"]) {
        for t in items(th) {
            if get(t, "priority")
                .and_then(str_at)
                .is_some_and(|p| p != "DEFAULT")
            {
                continue;
            }
            if let Some((k, rb)) = entry(t, "retry_budget") {
                let pct = match get(rb, "budget_percent").and_then(|b| get(b, "value")) {
                    Some(v) => cx.f.number(v, "budget_percent.value")?,
                    None => 20.0,
                };
                if !(0.0..=100.0).contains(&pct) {
                    return Err(cx
                        .f
                        .error(k.pos, format!("`budget_percent` {pct} is outside 0..=100"))
                        .with_help("write `budget_percent: { value: 20 }` for 20 %"));
                }
                if get(rb, "min_retry_concurrency").is_some() || pct > 0.0 {
                    facts.note(
                        Some(cx.at(k.pos)),
                        format!("Envoy's retry_budget ({pct} % of requests in flight) is read as a ratio budget of {}; min_retry_concurrency is not modelled", pct / 100.0),
                    );
                }
                budget = Some((
                    BudgetSpec::Ratio {
                        ratio: pct / 100.0,
                        min_per_second: 0.0,
                        window: BudgetSpec::DEFAULT_WINDOW,
                    },
                    k.pos,
                ));
            } else if let Some((k, v)) = entry(t, "max_retries") {
                let max = node::int(cx, v, "max_retries", 0, i128::from(u32::MAX))? as u32;
                budget.get_or_insert((BudgetSpec::Concurrency { max }, k.pos));
            }
        }
    }
    Ok(Cluster { name, host, budget })
}

fn read_route(
    cx: Cx,
    route: &Node,
    vh_policy: Option<(&Node, &Node)>,
    clusters: &[Cluster],
    group: usize,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    let Some(action) = get(route, "route") else {
        // A redirect or a direct response: no upstream call.
        return Ok(());
    };
    // `(the key naming the cluster, its name)`: one, or each of a split.
    let mut targets: Vec<(Pos, &str)> = Vec::new();
    if let Some((ck, cv)) = entry(action, "cluster") {
        targets.push((ck.pos, cx.f.str(cv, "`cluster`")?));
    } else if let Some(w) = get(action, "weighted_clusters") {
        for c in node::list(cx, w, "clusters")? {
            let Some((nk, nv)) = entry(c, "name") else {
                return Err(cx
                    .f
                    .error(c.pos, "a weighted cluster without `name:`")
                    .with_help("name the cluster: `- { name: orders_v2, weight: 10 }`"));
            };
            targets.push((nk.pos, cx.f.str(nv, "`name`")?));
        }
    }
    let mut matcher = Matcher::default();
    if let Some(m) = get(route, "match") {
        let mut rule = MatchRule::default();
        if let Some(p) = get(m, "prefix").and_then(str_at) {
            rule.path = Some(StrMatch::Prefix(p.to_owned()));
        } else if let Some(p) = get(m, "path").and_then(str_at) {
            rule.path = Some(StrMatch::Exact(p.to_owned()));
        }
        for h in get(m, "headers").map(items).unwrap_or(&[]) {
            if get(h, "name").and_then(str_at) == Some(":method")
                && let Some(v) = get(h, "exact_match")
                    .or_else(|| get(h, "string_match").and_then(|s| get(s, "exact")))
                    .and_then(str_at)
            {
                rule.method = Some(StrMatch::Exact(v.to_ascii_uppercase()));
            }
        }
        matcher.any.push(rule);
    }
    let policy = entry(action, "retry_policy").or(vh_policy);
    for (ck, cluster_name) in targets {
        let cluster = clusters.iter().find(|c| c.name == cluster_name);
        let host = cluster.map_or(cluster_name.to_owned(), |c| c.host.clone());
        let layers = route_layers(cx, action, ck, policy, cluster, facts)?;
        facts.routes.push(RouteFact {
            source: "envoy",
            group,
            hosts: vec![HostRef {
                host,
                namespace: None,
                at: cx.at(ck),
            }],
            matcher: matcher.clone(),
            layers,
        });
    }
    Ok(())
}

/// The `envoy-route` timeout layer and the `envoy` retry layer of a route
/// action, for one of its clusters (`at`: the key that names it).
fn route_layers(
    cx: Cx,
    action: &Node,
    at: Pos,
    policy: Option<(&Node, &Node)>,
    cluster: Option<&Cluster>,
    facts: &mut Facts,
) -> Result<Vec<LayerFact>, LoadError> {
    let timeout = match entry(action, "timeout") {
        Some((k, v)) => Some((node::duration(cx, v, "timeout")?, k.pos)),
        None => Some((Duration::from_secs(15), at)),
    }
    .filter(|(d, _)| !d.is_zero());
    let mut layers = Vec::new();
    if let Some((d, pos)) = timeout {
        layers.push(LayerFact {
            timeout_default: None,
            name: ROUTE.into(),
            file: cx.file,
            pos,
            timeout: Some((d, pos)),
            policy: PolicyFact::None,
            comment: "Envoy route timeout (15s unless set): bounds the request with its retries"
                .into(),
        });
    }
    if let Some((pk, p)) = policy {
        let mut layer = retry_policy(cx, pk.pos, p, timeout, facts)?;
        if let (PolicyFact::Inline { policy, spans }, Some(c)) = (&mut layer.policy, cluster) {
            policy.budget = Some(
                c.budget
                    .as_ref()
                    .map_or(BudgetSpec::Concurrency { max: 3 }, |(b, _)| b.clone()),
            );
            spans.budget = c.budget.as_ref().map(|(_, p)| *p).or(Some(pk.pos));
        }
        layers.push(layer);
    }
    Ok(layers)
}

fn retry_policy(
    cx: Cx,
    at: Pos,
    p: &Node,
    route_timeout: Option<(Duration, Pos)>,
    facts: &mut Facts,
) -> Result<LayerFact, LoadError> {
    let mut spans = Spans {
        policy: Some(at),
        ..Spans::default()
    };
    let retries = match entry(p, "num_retries") {
        Some(kv) => node::retries(cx, kv, "num_retries", &mut spans.max_attempts)?,
        None => 1,
    };
    let mut retry_on: Vec<Condition> = match entry(p, "retry_on") {
        Some((k, v)) => {
            spans.retry_on = Some(k.pos);
            let text = cx.f.str(v, "`retry_on`")?;
            super::istio::note_grpc_only(cx, v.pos, text, facts);
            super::istio::retry_on(text).map_err(|bad| {
                cx.f.error(v.pos, format!("unknown retry_on condition `{bad}`"))
                    .with_help(format!(
                        "use Envoy's conditions: {}",
                        super::istio::KNOWN.join(", ")
                    ))
            })?
        }
        None => Vec::new(),
    };
    for code in get(p, "retriable_status_codes").map(items).unwrap_or(&[]) {
        let c = node::int(cx, code, "retriable_status_codes", 100, 599)? as u16;
        if !retry_on.contains(&Condition::Status(c)) {
            retry_on.push(Condition::Status(c));
        }
    }
    let per_try = entry(p, "per_try_timeout")
        .map(|(k, v)| node::duration(cx, v, "per_try_timeout").map(|d| (d, k.pos)))
        .transpose()?;
    let (mut base, mut cap) = (Duration::from_millis(25), None);
    if let Some((k, b)) = entry(p, "retry_back_off") {
        spans.backoff = Some(k.pos);
        if let Some(v) = get(b, "base_interval") {
            base = node::duration(cx, v, "base_interval")?;
        }
        if let Some(v) = get(b, "max_interval") {
            cap = Some(node::duration(cx, v, "max_interval")?);
        }
    }
    let honor = entry(p, "rate_limited_retry_back_off");
    if let Some((k, _)) = honor {
        spans.honor_retry_after = Some(k.pos);
    }
    let policy = RetryPolicy {
        max_attempts: retries + 1,
        backoff: Backoff {
            kind: BackoffKind::Exponential,
            base,
            multiplier: 2.0,
            cap: Some(cap.unwrap_or(base * 10)),
            jitter: Jitter::Full,
        },
        retry_on: RetryOn(retry_on),
        honor_retry_after: honor.is_some(),
        budget: None,
    };
    Ok(LayerFact {
        timeout_default: None,
        name: LAYER.into(),
        file: cx.file,
        pos: at,
        timeout: per_try.or(route_timeout),
        comment: format!(
            "Envoy retry_policy: num_retries {retries} counts retries, so {} attempts",
            retries + 1
        ),
        policy: PolicyFact::Inline { policy, spans },
    })
}
