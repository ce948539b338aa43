//! Envoy configuration, YAML or JSON: a static bootstrap
//! (`static_resources`), an xDS dump (`/config_dump`) or a bare
//! `RouteConfiguration`. Every `virtual_hosts` list found in the document is
//! read, and every cluster (a map with `name` and `circuit_breakers` or
//! `load_assignment`) for its retry limits.
//!
//! - Route `retry_policy` (or its virtual host's, which a route's replaces
//!   whole): `num_retries` counts RETRIES (default 1), `per_try_timeout`,
//!   `retry_on` (Envoy's conditions, mapped as for Istio, see
//!   `istio::retry_on`) with `retriable_status_codes` (only under the
//!   `retriable-status-codes` trigger, as Envoy; a warning otherwise), `retry_back_off`
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
use crate::input::error::LoadError;
use crate::input::{Node, Pos, Value};
use crate::policy::{BudgetSpec, Condition};

pub(crate) const LAYER: &str = "envoy";
pub(crate) const ROUTE: &str = "envoy-route";

/// Whether a document is Envoy configuration: a bootstrap, an admin
/// `/config_dump`, a bare `RouteConfiguration`, `Listener` or `Cluster`, an
/// xDS `resources:` file (`@type` on each), or a list of any of them — in
/// the proto's field names (`virtual_hosts`) or proto3 JSON's camelCase
/// (`virtualHosts`), which Envoy accepts alike.
pub(crate) fn detect(root: &Node) -> bool {
    match &root.value {
        // A list of resources (`istioctl proxy-config routes -o json`, Envoy
        // Gateway's translator output); an empty RouteConfiguration (a
        // name alone) may sit among them.
        Value::Seq(list) => {
            list.iter().any(resource)
                && list.iter().all(|x| {
                    resource(x) || (matches!(x.value, Value::Map(_)) && get(x, "name").is_some())
                })
        }
        Value::Map(_) => {
            has(root, "static_resources")
                || has(root, "dynamic_resources")
                || resource(root)
                || admin_dump(root)
                || egctl(root)
                // xDS `resources:` (a DiscoveryResponse): each resource
                // typed, or wrapped as a `Resource` (`{ name, resource }`,
                // as Kuma's goldens write them).
                || get(root, "resources").is_some_and(|r| {
                    !items(r).is_empty()
                        && items(r).iter().all(|x| {
                            envoy_typed(x) || get(x, "resource").is_some_and(envoy_typed)
                        })
                })
        }
        _ => false,
    }
}

/// A document Envoy-shaped enough that not reading it would hide retries:
/// `Some(what it resembles)` for one [`detect`] does not take.
pub(crate) fn looks_like(root: &Node) -> Option<String> {
    if detect(root) {
        return None;
    }
    let mut found = None;
    find_key(root, 0, &mut found);
    found.map(|k| format!("Envoy-looking configuration (`{k}`) of a shape not known"))
}

/// Keys only Envoy's route and cluster configuration uses.
const ENVOY_KEYS: &[&str] = &[
    "virtual_hosts",
    "virtualHosts",
    "retry_policy",
    "retryPolicy",
    "route_config",
    "routeConfig",
    "circuit_breakers",
    "circuitBreakers",
    "filter_chains",
    "filterChains",
];

fn find_key(n: &Node, depth: u32, found: &mut Option<String>) {
    if depth > 12 || found.is_some() {
        return;
    }
    match &n.value {
        Value::Map(entries) => {
            for (k, v) in entries {
                if let Value::Str(s) = &k.value
                    && ENVOY_KEYS.contains(&s.as_ref())
                {
                    *found = Some(s.to_string());
                    return;
                }
                if let Value::Str(s) = &v.value
                    && matches!(&k.value, Value::Str(t) if t == "@type")
                    && s.contains("envoy.config.")
                {
                    *found = Some(format!("@type: {s}"));
                    return;
                }
                find_key(v, depth + 1, found);
            }
        }
        Value::Seq(list) => list.iter().for_each(|x| find_key(x, depth + 1, found)),
        _ => {}
    }
}

/// An admin `/config_dump` (`configs[]` of `envoy.admin` dumps), or one of
/// its dumps alone (`RoutesConfigDump`, ...).
fn admin_dump(n: &Node) -> bool {
    get(n, "configs").is_some_and(|c| items(c).iter().any(envoy_typed))
        || get(n, "@type")
            .and_then(str_at)
            .is_some_and(|t| t.contains("envoy.admin."))
}

/// `egctl config envoy-proxy …` output: `{ namespace: { pod: dump } }`.
fn egctl(root: &Node) -> bool {
    let Value::Map(namespaces) = &root.value else {
        return false;
    };
    !namespaces.is_empty()
        && namespaces.iter().all(|(_, pods)| match &pods.value {
            Value::Map(pods) => {
                !pods.is_empty() && pods.iter().all(|(_, d)| admin_dump(d) || envoy_typed(d))
            }
            _ => false,
        })
}

/// `key` in either spelling: `virtual_hosts` or `virtualHosts`.
fn has(n: &Node, key: &str) -> bool {
    get(n, key).is_some() || get(n, &camel(key)).is_some()
}

/// A resource with an Envoy `@type` (config or admin).
fn envoy_typed(n: &Node) -> bool {
    get(n, "@type")
        .and_then(str_at)
        .is_some_and(|t| t.contains("envoy."))
}

/// A bare RouteConfiguration, Listener or Cluster.
fn resource(n: &Node) -> bool {
    if envoy_typed(n) {
        return true;
    }
    let named = get(n, "name").is_some();
    has(n, "virtual_hosts")
        || (named
            && ["filter_chains", "default_filter_chain", "listener_filters"]
                .iter()
                .any(|k| has(n, k)))
        || (named && is_cluster(n))
        // A ClusterLoadAssignment (EDS) or a Secret (SDS): Envoy's, with
        // no retry settings; the reader says so.
        || (has(n, "cluster_name") && has(n, "endpoints"))
        || (named
            && ["tls_certificate", "validation_context", "generic_secret"]
                .iter()
                .any(|k| has(n, k)))
}

/// A cluster: a name and a field only clusters have.
fn is_cluster(n: &Node) -> bool {
    get(n, "name").is_some()
        && [
            "circuit_breakers",
            "load_assignment",
            "eds_cluster_config",
            "connect_timeout",
            "lb_policy",
            "cluster_type",
        ]
        .iter()
        .any(|k| has(n, k))
}

/// `retry_policy` → `retryPolicy`.
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut up = false;
    for c in key.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.push(c.to_ascii_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The document with proto3 JSON's camelCase keys written as the proto's
/// field names (`retryPolicy` → `retry_policy`), positions kept: Envoy
/// parses both, and the reader below reads one.
fn snake_keys(n: &Node) -> Node {
    let value = match &n.value {
        Value::Map(entries) => Value::Map(
            entries
                .iter()
                .map(|(k, v)| {
                    let key = match &k.value {
                        Value::Str(s)
                            if s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                                && s.chars().any(|c| c.is_ascii_uppercase())
                                && s.chars().all(|c| c.is_ascii_alphanumeric()) =>
                        {
                            let mut out = String::with_capacity(s.len() + 4);
                            for c in s.chars() {
                                if c.is_ascii_uppercase() {
                                    out.push('_');
                                    out.push(c.to_ascii_lowercase());
                                } else {
                                    out.push(c);
                                }
                            }
                            Node {
                                pos: k.pos,
                                span: k.span,
                                value: Value::Str(out.into()),
                            }
                        }
                        _ => k.clone(),
                    };
                    (key, snake_keys(v))
                })
                .collect(),
        ),
        Value::Seq(list) => Value::Seq(list.iter().map(snake_keys).collect()),
        other => other.clone(),
    };
    Node {
        pos: n.pos,
        span: n.span,
        value,
    }
}

/// Clusters that are the proxy's own, not a service: Istio's `agent`
/// (health and merged metrics), `prometheus_stats`, `sds-grpc`,
/// `xds-grpc`, the passthrough and black-hole clusters, and `inbound|…`
/// (the sidecar's way in to its own workload). Routes to them are no
/// calls between services, so they are not applied and not warned about.
pub(crate) fn internal_cluster(name: &str) -> bool {
    name.starts_with("inbound|")
        || name.starts_with("inbound-vip|")
        || matches!(
            name,
            "agent"
                | "prometheus_stats"
                | "sds-grpc"
                | "xds-grpc"
                | "zipkin"
                | "envoy_accesslog_service"
                | "BlackHoleCluster"
                | "PassthroughCluster"
                | "InboundPassthroughCluster"
                | "InboundPassthroughClusterIpv4"
                | "InboundPassthroughClusterIpv6"
        )
}

/// The service a cluster name names: Istio's `outbound|PORT|SUBSET|HOST`
/// host, else the name.
pub(crate) fn cluster_host(name: &str) -> String {
    match name.split('|').collect::<Vec<_>>().as_slice() {
        ["outbound", _, _, host] => (*host).to_owned(),
        [_, _, _, host] => (*host).to_owned(),
        _ => name.to_owned(),
    }
}

/// A cluster read: the service it names and its retry limit, kept in
/// `Facts` so that routes and clusters exported apart (xDS's RDS and CDS
/// files, Envoy Gateway's `.routes.yaml` and `.clusters.yaml`) meet.
#[derive(Debug, Clone)]
pub struct Cluster {
    name: String,
    host: String,
    budget: Option<(BudgetSpec, Pos)>,
    file: usize,
}

pub(crate) fn read(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    let normal = snake_keys(root);
    let root = &normal;
    let mut vhosts: Vec<&Node> = Vec::new();
    let mut clusters_n: Vec<&Node> = Vec::new();
    walk(root, 0, &mut vhosts, &mut clusters_n);
    if vhosts.is_empty() && clusters_n.is_empty() {
        facts.reclassify(Account::NoRetry(
            "Envoy configuration without routes or clusters (listeners using RDS, endpoints, secrets): no retry settings".into(),
        ));
        return Ok(());
    }
    let mut clusters = Vec::new();
    for c in clusters_n {
        clusters.push(cluster(cx, c, facts)?);
    }
    facts.envoy_clusters.extend(clusters.iter().cloned());
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
            if is_cluster(n) && !has(n, "virtual_hosts") {
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
        None => cluster_host(&name),
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
    Ok(Cluster {
        name,
        host,
        budget,
        file: cx.file,
    })
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
        matcher.any.push(route_match(cx, m, facts)?);
    }
    // Routes to the proxy's own clusters are no calls between services.
    targets.retain(|(_, name)| !internal_cluster(name));
    let policy = entry(action, "retry_policy").or(vh_policy);
    let methods = policy.and_then(|(_, p)| retriable_methods(p));
    for (ck, cluster_name) in targets {
        let cluster = clusters.iter().find(|c| c.name == cluster_name);
        if cluster.is_none() {
            facts
                .envoy_pending
                .push((facts.routes.len(), cluster_name.to_owned()));
        }
        let host = cluster.map_or_else(|| cluster_host(cluster_name), |c| c.host.clone());
        let layers = route_layers(cx, action, ck, policy, cluster, facts)?;
        let hosts = vec![HostRef {
            host,
            namespace: None,
            at: cx.at(ck),
        }];
        if let Some(methods) = &methods {
            // `retriable_request_headers` naming only `:method`s: other
            // methods take the route without its retries.
            facts.routes.push(RouteFact {
                source: "envoy",
                group,
                hosts: hosts.clone(),
                matcher: only_methods(&matcher, methods),
                layers: layers.clone(),
            });
            if cluster.is_none() {
                facts
                    .envoy_pending
                    .push((facts.routes.len(), cluster_name.to_owned()));
            }
        }
        let layers = match methods {
            Some(_) => layers.into_iter().filter(|l| l.name != LAYER).collect(),
            None => layers,
        };
        facts.routes.push(RouteFact {
            source: "envoy",
            group,
            hosts,
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
    let cluster = cluster.filter(|c| c.file == cx.file);
    let timeout = match entry(action, "timeout") {
        Some((k, v)) => Some((node::duration(cx, v, "timeout")?, k.pos)),
        None => Some((Duration::from_secs(15), at)),
    }
    .filter(|(d, _)| !d.is_zero());
    let mut layers = Vec::new();
    if let Some((d, pos)) = timeout {
        layers.push(LayerFact {
            grpc_retry_on: None,
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
    // On a gRPC call the gRPC conditions match its statuses.
    let mut grpc_retry_on: Option<Vec<Condition>> = None;
    let mut codes_trigger = false;
    let mut retry_on: Vec<Condition> = match entry(p, "retry_on") {
        Some((k, v)) => {
            spans.retry_on = Some(k.pos);
            let text = cx.f.str(v, "`retry_on`")?;
            super::istio::note_grpc_only(cx, v.pos, text, facts);
            // Envoy drops entries it does not know (RetryPolicyImpl keeps
            // `parseRetryOn(..).first`, the bits of the known ones): so
            // does this reader, with a warning naming each.
            let mut known = Vec::new();
            for t in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                if super::istio::retry_on(t).is_ok() {
                    known.push(t);
                } else {
                    facts.warn(
                        Some(cx.at(v.pos)),
                        format!(
                            "`{t}` is not an Envoy retry condition, so Envoy ignores it (known: {})",
                            super::istio::KNOWN.join(", ")
                        ),
                    );
                }
            }
            codes_trigger = known.contains(&"retriable-status-codes");
            if known.iter().any(|t| super::istio::GRPC_ONLY.contains(t)) {
                grpc_retry_on = super::envoy_gateway::grpc_retry_on(&known.join(",")).ok();
            }
            super::istio::retry_on(&known.join(",")).unwrap_or_default()
        }
        None => Vec::new(),
    };
    let codes = entry(p, "retriable_status_codes");
    // Envoy matches the listed codes only under the `retriable-status-codes`
    // trigger (RetryStateImpl tests
    // `retry_on_ & RETRY_ON_RETRIABLE_STATUS_CODES` before the list).
    if let (Some((k, v)), false) = (codes, codes_trigger)
        && !items(v).is_empty()
    {
        facts.warn(
            Some(cx.at(k.pos)),
            "these status codes are retried only with `retriable-status-codes` in `retry_on`, which this policy does not list: Envoy retries none of them (add the trigger to `retry_on`, or drop the list)",
        );
    }
    let listed = codes.filter(|_| codes_trigger).map(|(_, v)| items(v));
    for code in listed.unwrap_or(&[]) {
        let c = node::int(cx, code, "retriable_status_codes", 100, 599)? as u16;
        for on in std::iter::once(&mut retry_on).chain(grpc_retry_on.as_mut()) {
            if !on.contains(&Condition::Status(c)) {
                on.push(Condition::Status(c));
            }
        }
    }
    let per_try = entry(p, "per_try_timeout")
        .map(|(k, v)| node::duration(cx, v, "per_try_timeout").map(|d| (d, k.pos)))
        .transpose()?;
    let (mut base, mut cap) = (super::envoy_retry::BASE_INTERVAL, None);
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
    let policy = super::envoy_retry::policy(retries, base, cap, retry_on, honor.is_some());
    Ok(LayerFact {
        grpc_retry_on,
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

/// The methods a retry policy's `retriable_request_headers` lets retry,
/// when every entry is a `:method` exact match (Envoy retries a request
/// when any entry matches it); `None` when there are none or one matches
/// on something else (then any request may be retried).
fn retriable_methods(p: &Node) -> Option<Vec<String>> {
    let list = items(get(p, "retriable_request_headers")?);
    if list.is_empty() {
        return None;
    }
    list.iter()
        .map(|h| {
            if get(h, "name").and_then(str_at) != Some(":method")
                || get(h, "invert_match").is_some_and(|v| v.value == Value::Bool(true))
            {
                return None;
            }
            get(h, "exact_match")
                .or_else(|| get(h, "string_match").and_then(|s| get(s, "exact")))
                .and_then(str_at)
                .map(str::to_ascii_uppercase)
        })
        .collect()
}

/// `matcher` narrowed to requests of `methods`.
fn only_methods(matcher: &Matcher, methods: &[String]) -> Matcher {
    let rules = if matcher.any.is_empty() {
        vec![MatchRule::default()]
    } else {
        matcher.any.clone()
    };
    let mut any = Vec::new();
    for r in rules {
        for m in methods {
            if r.method.as_ref().is_none_or(|x| x.matches(m)) {
                any.push(MatchRule {
                    method: Some(StrMatch::Exact(m.clone())),
                    path: r.path.clone(),
                });
            }
        }
    }
    if any.is_empty() {
        // No method of the route is retried: a rule that takes none.
        any.push(MatchRule {
            method: Some(StrMatch::Exact(String::new())),
            path: None,
        });
    }
    Matcher {
        any,
        grpc: matcher.grpc,
    }
}

/// Routes whose cluster was not in their own document take it from
/// another (the CDS file beside the RDS file): its service and its limit.
pub(crate) fn finish(facts: &mut Facts) {
    let pending = std::mem::take(&mut facts.envoy_pending);
    for (route, name) in pending {
        let Some(c) = facts
            .envoy_clusters
            .iter()
            .find(|c| c.name == name)
            .cloned()
        else {
            continue;
        };
        let r = &mut facts.routes[route];
        if let Some(h) = r.hosts.first_mut() {
            h.host = c.host.clone();
        }
        for l in &mut r.layers {
            let PolicyFact::Inline { policy, spans } = &mut l.policy else {
                continue;
            };
            if l.name != LAYER {
                continue;
            }
            let budget = c
                .budget
                .as_ref()
                .map_or(BudgetSpec::Concurrency { max: 3 }, |(b, _)| b.clone());
            policy.budget = Some(budget);
            match &c.budget {
                Some((_, p)) if c.file != l.file => {
                    l.policy = PolicyFact::InlineBudgetElsewhere {
                        policy: policy.clone(),
                        spans: *spans,
                        budget_at: At {
                            file: c.file,
                            pos: *p,
                        },
                    };
                }
                Some((_, p)) => spans.budget = Some(*p),
                None => {}
            }
        }
    }
}

/// A route's `match` as Envoy evaluates it (route_components.proto,
/// `RouteMatch`): the path specifier — `prefix`, `path` (exact),
/// `path_separated_prefix` (the prefix, then the end or a `/`),
/// `safe_regex` (not evaluated: taken to hold), `connect_matcher` (CONNECT
/// requests only), `path_match_policy` (a URI template: taken to hold) — with
/// `case_sensitive` (default true), and a `:method` header matcher (exact,
/// prefix or regex; inverted or other header matchers are taken to hold, a
/// note says so). Query strings are not part of a call's path here.
fn route_match(cx: Cx, m: &Node, facts: &mut Facts) -> Result<MatchRule, LoadError> {
    let mut rule = MatchRule::default();
    let text = |key: &str| -> Result<Option<String>, LoadError> {
        get(m, key)
            .map(|v| cx.f.str(v, &format!("`{key}`")).map(str::to_owned))
            .transpose()
    };
    let path = if let Some(p) = text("prefix")? {
        Some(StrMatch::Prefix(p))
    } else if let Some(p) = text("path")? {
        Some(StrMatch::Exact(p))
    } else if let Some(p) = text("path_separated_prefix")? {
        Some(StrMatch::SegmentPrefix(p))
    } else if let Some(r) = get(m, "safe_regex") {
        let re = get(r, "regex").and_then(str_at).unwrap_or("");
        Some(StrMatch::Regex(re.to_owned()))
    } else if get(m, "connect_matcher").is_some() {
        rule.method = Some(StrMatch::Exact("CONNECT".into()));
        None
    } else if let Some((k, _)) = entry(m, "path_match_policy") {
        facts.note(
            Some(cx.at(k.pos)),
            "a `path_match_policy` (URI template) match is not evaluated: taken to hold",
        );
        None
    } else {
        None
    };
    let insensitive = get(m, "case_sensitive").is_some_and(|v| v.value == Value::Bool(false));
    rule.path = path.map(|p| match p {
        StrMatch::Regex(_) => p,
        p if insensitive => StrMatch::NoCase(Box::new(p)),
        p => p,
    });
    for h in get(m, "headers").map(items).unwrap_or(&[]) {
        if get(h, "name").and_then(str_at) != Some(":method") {
            continue;
        }
        let inverted = get(h, "invert_match").is_some_and(|v| v.value == Value::Bool(true));
        let sm = get(h, "string_match");
        let pick = |legacy: &str, modern: &str| {
            get(h, legacy)
                .or_else(|| sm.and_then(|s| get(s, modern)))
                .and_then(str_at)
        };
        let method = if let Some(v) = pick("exact_match", "exact") {
            Some(StrMatch::Exact(v.to_ascii_uppercase()))
        } else if let Some(v) = pick("prefix_match", "prefix") {
            Some(StrMatch::Prefix(v.to_ascii_uppercase()))
        } else {
            get(h, "safe_regex_match")
                .or_else(|| sm.and_then(|s| get(s, "safe_regex")))
                .map(|r| StrMatch::Regex(get(r, "regex").and_then(str_at).unwrap_or("").into()))
        };
        match method {
            Some(_) if inverted => facts.note(
                Some(cx.at(h.pos)),
                "an inverted `:method` match is not evaluated: taken to hold",
            ),
            Some(m) => rule.method = Some(m),
            None => {}
        }
    }
    Ok(rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_separated_prefix_matches_whole_segments() {
        let m = StrMatch::SegmentPrefix("/get".into());
        for (path, hit) in [
            ("/get", true),
            ("/get/1", true),
            ("/get?x=1", true),
            ("/getx", false),
            ("/ge", false),
        ] {
            assert_eq!(m.matches(path), hit, "{path}");
        }
        let m = StrMatch::NoCase(Box::new(StrMatch::Prefix("/API".into())));
        assert!(m.matches("/api/v1"));
    }

    // Envoy's router (RetryStateImpl): with `retriable_request_headers`, a
    // request is retried only when one of them matches it.
    #[test]
    fn retriable_request_methods_narrow_the_route() {
        let p = crate::input::yaml::parse_config(
            "retriable_request_headers:\n- { name: \":method\", string_match: { exact: GET } }\n- { name: \":method\", exact_match: head }\n",
        )
        .unwrap();
        assert_eq!(
            retriable_methods(&p),
            Some(vec!["GET".into(), "HEAD".into()])
        );
        let m = only_methods(&Matcher::default(), &["GET".into(), "HEAD".into()]);
        assert!(m.matches("GET", Some("/x")) && m.matches("head", None));
        assert!(!m.matches("POST", Some("/x")));
        let other = crate::input::yaml::parse_config(
            "retriable_request_headers:\n- { name: \":method\", string_match: { exact: GET } }\n- { name: x-retry, string_match: { prefix: y } }\n",
        )
        .unwrap();
        assert_eq!(retriable_methods(&other), None);
    }

    #[test]
    fn camel_case_keys_become_field_names() {
        let root = crate::input::yaml::parse_config(
            "virtualHosts:\n- retryPolicy: { numRetries: 2, '@type': x }\n",
        )
        .unwrap();
        let n = snake_keys(&root);
        let vh = items(get(&n, "virtual_hosts").unwrap());
        let rp = get(&vh[0], "retry_policy").unwrap();
        assert!(get(rp, "num_retries").is_some() && get(rp, "@type").is_some());
        assert_eq!(camel("retry_back_off"), "retryBackOff");
    }
}
