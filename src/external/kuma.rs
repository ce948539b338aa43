//! Kuma / Kong Mesh `MeshRetry` and `MeshTimeout` (`kuma.io/v1alpha1`, or
//! the universal form `type: MeshRetry`), as Kuma's xDS configurers
//! translate them (`pkg/plugins/policies/meshretry/plugin/xds/configurer.go`,
//! `meshtimeout/plugin/xds/configurer.go`), on the calls to each `to`
//! entry's destination.
//!
//! - `to[].targetRef`: a `MeshService` (by `name`, or by the label
//!   `kuma.io/display-name`) is that service; `Mesh` is every destination.
//!   A MeshService entry wins over a Mesh one field by field (Kuma merges
//!   the `default` confs, the more specific last: a field the MeshService
//!   entry leaves out comes from the Mesh entry). A top-level `targetRef`
//!   other than `Mesh` (a subset of the callers) is noted, and read as all
//!   callers.
//! - `default.http` on HTTP calls, `default.grpc` on gRPC calls (Kuma's
//!   `GetRouteRetryConfig` takes the section of the route's protocol alone;
//!   `tcp` is noted). When the destination's Kubernetes Service is read,
//!   the protocol Kuma gives its ports decides instead (`kuma_ports`):
//!   `http` or `grpc` that section, `http2` no retry, TCP nothing. `grpc` reads as `http` does, with gRPC conditions
//!   (`grpc_retry_on`) and Kuma's `GrpcRetryOnDefault`. `numRetries` counts RETRIES (Envoy's `num_retries`; absent, 1;
//!   `0` is no retry policy); `perTryTimeout` is each attempt's timeout;
//!   `backOff` is Envoy's `retry_back_off` (`baseInterval` default 25 ms,
//!   `maxInterval` default 10 × base; full jitter); `retryOn` maps
//!   `5xx`, `GatewayError`, `Reset`, `Retriable4xx`, `ConnectFailure`,
//!   `EnvoyRatelimited`, `RefusedStream`, `Http3PostConnectFailure` to
//!   Envoy's conditions (read as `istio::retry_on` reads them), status codes
//!   to retriable status codes, and `HttpMethodGet` … to the methods that
//!   may be retried at all (`retriable_request_headers` on `:method`); absent
//!   (or only codes and methods), Kuma's `gateway-error,connect-failure,
//!   refused-stream`. `rateLimitedBackOff.resetHeaders` makes the wait the
//!   header's (`honor_retry_after`; its `maxInterval`, default 300 s, is not
//!   modelled).
//! - MeshTimeout `default.http.requestTimeout` is Envoy's route timeout: the
//!   request with all its retries (an outer `kuma-timeout` layer);
//!   connection and idle timeouts are not deadlines of a request.
//! - MeshCircuitBreaker `default.connectionLimits.maxRetries` is the
//!   cluster's Envoy circuit breaker `max_retries`
//!   (`meshcircuitbreaker/plugin/xds/configurer.go`): at most that many
//!   retries in flight to the destination, a concurrency budget on the
//!   MeshRetry layer of the calls to it (merged as the retry entries are:
//!   a MeshService entry wins over the Mesh one). The other connection
//!   limits and `outlierDetection` eject hosts or refuse connections; they
//!   set no retry and are not modelled. A breaker whose destination no
//!   MeshRetry among the sources retries bounds nothing here: noted.

use std::time::Duration;

use super::facts::*;
use super::kuma_ports::{PortProtocol, Protocol, ServiceProtocol};
use super::node::{self, Cx, entry, get, str_at};
use crate::input::error::LoadError;
use crate::input::{Node, Pos};
use crate::policy::Condition;

pub(crate) const LAYER: &str = "kuma";
pub(crate) const TIMEOUT: &str = "kuma-timeout";
/// Kuma's `retry_on` when `retryOn` names no condition.
pub(crate) const HTTP_RETRY_ON_DEFAULT: &str = "gateway-error,connect-failure,refused-stream";

/// One `to` entry of a MeshRetry or MeshTimeout: the fields it sets, each
/// with its position.
#[derive(Debug, Clone, Default)]
pub(crate) struct Entry {
    /// `None`: every destination (`kind: Mesh`).
    host: Option<HostRef>,
    file: usize,
    /// The policy's name, for Kuma's order among equals.
    name: String,
    /// Where the entry's `default` is, for the layer.
    at: Option<Pos>,
    /// `default.http`: the retries of HTTP calls.
    http: Retry,
    /// `default.grpc`: the retries of gRPC calls.
    grpc: Retry,
    request_timeout: Option<(Duration, Pos)>,
    /// A MeshCircuitBreaker's `maxRetries`, located in its own file.
    max_retries: Option<(u32, At)>,
}

/// One protocol's section of a MeshRetry `default` (`http:` or `grpc:`):
/// Kuma's configurer builds the route's retry policy from the section of
/// the call's protocol alone (`GetRouteRetryConfig`).
#[derive(Debug, Clone, Default)]
struct Retry {
    /// Where the section is: present (even empty), Kuma configures a retry
    /// policy for that protocol; absent, none.
    section: Option<Pos>,
    num_retries: Option<(u32, Pos)>,
    per_try: Option<(Duration, Pos)>,
    backoff: Option<(Duration, Option<Duration>, Pos)>,
    /// Conditions, the methods that may be retried (HTTP only), the key.
    retry_on: Option<(Vec<Condition>, Vec<String>, Pos)>,
    rate_limited: Option<Pos>,
}

/// Which policy a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Policy {
    Retry,
    Timeout,
    CircuitBreaker,
}

pub(crate) fn read_retry(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    read(cx, root, Policy::Retry, facts)
}

pub(crate) fn read_timeout(cx: Cx, root: &Node, facts: &mut Facts) -> Result<(), LoadError> {
    read(cx, root, Policy::Timeout, facts)
}

pub(crate) fn read_circuit_breaker(
    cx: Cx,
    root: &Node,
    facts: &mut Facts,
) -> Result<(), LoadError> {
    read(cx, root, Policy::CircuitBreaker, facts)
}

fn read(cx: Cx, root: &Node, policy: Policy, facts: &mut Facts) -> Result<(), LoadError> {
    let what = match policy {
        Policy::Retry => "MeshRetry",
        Policy::Timeout => "MeshTimeout",
        Policy::CircuitBreaker => "MeshCircuitBreaker",
    };
    let meta = get(root, "metadata");
    let name = meta
        .and_then(|m| get(m, "name"))
        .or_else(|| get(root, "name"))
        .and_then(str_at)
        .unwrap_or("")
        .to_owned();
    let namespace = meta
        .and_then(|m| get(m, "namespace"))
        .and_then(str_at)
        .map(str::to_owned);
    let Some(spec) = get(root, "spec") else {
        return Err(cx
            .f
            .error(root.pos, format!("a {what} without `spec:`"))
            .with_help(format!("a {what} has `spec: {{ to: [...] }}`")));
    };
    if let Some((k, t)) = entry(spec, "targetRef")
        && get(t, "kind").and_then(str_at).is_some_and(|k| k != "Mesh")
    {
        facts.note(
            Some(cx.at(k.pos)),
            format!("{what} `{name}` applies to a subset of the callers; read as applying to every caller"),
        );
    }
    for to in node::list(cx, spec, "to")? {
        let Some((tk, target)) = entry(to, "targetRef") else {
            return Err(cx
                .f
                .error(to.pos, format!("a {what} `to` entry without `targetRef`"))
                .with_help("write `targetRef: { kind: MeshService, name: backend }`"));
        };
        let kind = get(target, "kind").and_then(str_at).unwrap_or("");
        let host = match kind {
            "Mesh" => None,
            "MeshService" => {
                let named = get(target, "name")
                    .or_else(|| get(target, "labels").and_then(|l| get(l, "kuma.io/display-name")));
                let Some(n) = named else {
                    return Err(cx
                        .f
                        .error(tk.pos, "a MeshService targetRef without `name` or the `kuma.io/display-name` label")
                        .with_help("write `targetRef: { kind: MeshService, name: backend }`"));
                };
                let ns = get(target, "namespace")
                    .and_then(str_at)
                    .map(str::to_owned)
                    .or_else(|| namespace.clone());
                Some(HostRef {
                    host: cx.f.str(n, "the MeshService name")?.to_owned(),
                    namespace: ns,
                    at: cx.at(n.pos),
                })
            }
            other => {
                facts.note(
                    Some(cx.at(tk.pos)),
                    format!(
                        "a {what} `to` a {other} is not followed; target a MeshService or the Mesh"
                    ),
                );
                continue;
            }
        };
        let mut e = Entry {
            host,
            file: cx.file,
            name: name.clone(),
            ..Entry::default()
        };
        let Some((dk, conf)) = entry(to, "default") else {
            continue;
        };
        e.at = Some(dk.pos);
        match policy {
            Policy::Retry => read_retry_conf(cx, conf, &mut e, facts)?,
            Policy::Timeout => {
                if let Some((k, v)) = get(conf, "http").and_then(|h| entry(h, "requestTimeout")) {
                    let d = node::duration(cx, v, "requestTimeout")?;
                    e.request_timeout = Some((d, k.pos));
                }
            }
            Policy::CircuitBreaker => {
                let Some((k, v)) =
                    get(conf, "connectionLimits").and_then(|c| entry(c, "maxRetries"))
                else {
                    // Outlier detection and the other limits alone: no
                    // bound on retries.
                    continue;
                };
                let n = node::int(cx, v, "maxRetries", 0, i128::from(u32::MAX))? as u32;
                e.max_retries = Some((n, cx.at(k.pos)));
            }
        }
        facts.kuma.push(e);
    }
    Ok(())
}

fn read_retry_conf(cx: Cx, conf: &Node, e: &mut Entry, facts: &mut Facts) -> Result<(), LoadError> {
    if let Some((k, _)) = entry(conf, "tcp") {
        facts.note(
            Some(cx.at(k.pos)),
            "MeshRetry `tcp` applies to TCP traffic (connection attempts); calls in a topology are HTTP or gRPC, so it is not applied",
        );
    }
    if let Some((k, http)) = entry(conf, "http") {
        e.http = read_section(cx, k.pos, http, false, facts)?;
    }
    if let Some((k, grpc)) = entry(conf, "grpc") {
        e.grpc = read_section(cx, k.pos, grpc, true, facts)?;
    }
    Ok(())
}

/// Kuma's `GrpcRetryOnDefault`: `retry_on` of a `grpc` section without
/// `retryOn`.
pub(crate) const GRPC_RETRY_ON_DEFAULT: &str =
    "cancelled,connect-failure,gateway-error,refused-stream,reset,resource-exhausted,unavailable";

/// A `grpc` section's `retryOn` as Kuma writes it into Envoy's `retry_on`
/// (`GrpcRetryOnEnumToEnvoyValue`). `Canceled` becomes `canceled`, which
/// is not Envoy's `cancelled`: Envoy drops tokens it does not know
/// (`RetryPolicyImpl` keeps `parseRetryGrpcOn(..).first`), so it retries
/// nothing — Kuma's own golden output (`grpc.listeners.golden.yaml`) has
/// `retryOn: canceled,…`.
fn grpc_retry_on(cx: Cx, on: &Node, facts: &mut Facts) -> Result<Vec<Condition>, LoadError> {
    let mut envoy: Vec<&str> = Vec::new();
    for item in node::items(on) {
        let text = cx.f.str(item, "a gRPC retryOn condition")?;
        let mapped = match text {
            "Canceled" => {
                facts.warn(
                    Some(cx.at(item.pos)),
                    "MeshRetry grpc retryOn `Canceled` is written to Envoy as `canceled`, which Envoy does not know (its condition is `cancelled`) and ignores: it retries nothing",
                );
                continue;
            }
            "DeadlineExceeded" => "deadline-exceeded",
            "Internal" => "internal",
            "ResourceExhausted" => "resource-exhausted",
            "Unavailable" => "unavailable",
            _ => {
                return Err(cx
                    .f
                    .error(item.pos, format!("unknown MeshRetry grpc retryOn `{text}`"))
                    .with_help("use Canceled, DeadlineExceeded, Internal, ResourceExhausted or Unavailable"));
            }
        };
        envoy.push(mapped);
    }
    Ok(super::envoy_gateway::grpc_retry_on(&envoy.join(",")).unwrap_or_default())
}

/// One `http:` or `grpc:` section (`grpc`: the gRPC one).
fn read_section(
    cx: Cx,
    at: Pos,
    sec: &Node,
    grpc: bool,
    facts: &mut Facts,
) -> Result<Retry, LoadError> {
    let mut r = Retry {
        section: Some(at),
        ..Retry::default()
    };
    if let Some(kv) = entry(sec, "numRetries") {
        let mut at = None;
        let n = node::retries(cx, kv, "numRetries", &mut at)?;
        r.num_retries = Some((n, kv.0.pos));
    }
    if let Some((k, v)) = entry(sec, "perTryTimeout") {
        let d = node::duration(cx, v, "perTryTimeout")?;
        r.per_try = Some((d, k.pos));
    }
    if let Some((k, b)) = entry(sec, "backOff") {
        let base = match get(b, "baseInterval") {
            Some(v) => node::duration(cx, v, "baseInterval")?,
            None => Duration::from_millis(25),
        };
        let max = get(b, "maxInterval")
            .map(|v| node::duration(cx, v, "maxInterval"))
            .transpose()?;
        r.backoff = Some((base, max, k.pos));
    }
    if let Some((k, on)) = entry(sec, "retryOn") {
        r.retry_on = Some(if grpc {
            (grpc_retry_on(cx, on, facts)?, Vec::new(), k.pos)
        } else {
            let (conditions, methods) = http_retry_on(cx, on)?;
            (conditions, methods, k.pos)
        });
    }
    if let Some((k, rl)) = entry(sec, "rateLimitedBackOff") {
        let headers: Vec<&str> = get(rl, "resetHeaders")
            .map(node::items)
            .unwrap_or_default()
            .iter()
            .filter_map(|h| get(h, "name").and_then(str_at))
            .collect();
        if !headers.is_empty() {
            if headers
                .iter()
                .any(|h| !h.eq_ignore_ascii_case("retry-after"))
            {
                facts.note(
                    Some(cx.at(k.pos)),
                    format!("rateLimitedBackOff waits as its reset headers say ({}): read as honouring Retry-After; its maxInterval is not modelled", headers.join(", ")),
                );
            }
            r.rate_limited = Some(k.pos);
        }
    }
    Ok(r)
}

/// An `http` section's `retryOn`: the conditions, and the methods that may
/// be retried at all.
fn http_retry_on(cx: Cx, on: &Node) -> Result<(Vec<Condition>, Vec<String>), LoadError> {
    let mut envoy: Vec<&str> = Vec::new();
    let mut codes = Vec::new();
    let mut methods = Vec::new();
    for item in node::items(on) {
        let text = match &item.value {
            crate::input::Value::Int(n) => n.to_string(),
            _ => cx.f.str(item, "a retryOn condition")?.to_owned(),
        };
        if let Ok(code) = text.parse::<u16>() {
            codes.push(Condition::Status(code));
            continue;
        }
        if let Some(m) = text.strip_prefix("HttpMethod") {
            methods.push(m.to_ascii_uppercase());
            continue;
        }
        let mapped = match text.as_str() {
            "5xx" | "5XX" | "All5xx" => "5xx",
            "GatewayError" => "gateway-error",
            "Reset" => "reset",
            "Retriable4xx" => "retriable-4xx",
            "ConnectFailure" => "connect-failure",
            "EnvoyRatelimited" => "envoy-ratelimited",
            "RefusedStream" => "refused-stream",
            "Http3PostConnectFailure" => "http3-post-connect-failure",
            _ => {
                return Err(cx
                    .f
                    .error(item.pos, format!("unknown MeshRetry retryOn `{text}`"))
                    .with_help("use 5xx, GatewayError, Reset, Retriable4xx, ConnectFailure, EnvoyRatelimited, RefusedStream, Http3PostConnectFailure, HttpMethodGet (…) or a status code"));
            }
        };
        envoy.push(mapped);
    }
    let base = if envoy.is_empty() {
        HTTP_RETRY_ON_DEFAULT.to_owned()
    } else {
        envoy.join(",")
    };
    let mut conditions = super::istio::retry_on(&base).unwrap_or_default();
    for c in codes {
        if !conditions.contains(&c) {
            conditions.push(c);
        }
    }
    Ok((conditions, methods))
}

/// Later fields win: `over` on top of `base`. A field inherited from
/// another file is located at `over`'s `default:` (positions are per file).
fn merged(base: &Entry, over: &Entry) -> Entry {
    let here = over.at.unwrap_or_default();
    let same = base.file == over.file;
    let moved = |p: Pos| if same { p } else { here };
    Entry {
        host: over.host.clone(),
        file: over.file,
        name: over.name.clone(),
        at: over.at.or(base.at),
        http: merged_retry(&base.http, &over.http, moved),
        grpc: merged_retry(&base.grpc, &over.grpc, moved),
        request_timeout: over
            .request_timeout
            .or(base.request_timeout.map(|(d, p)| (d, moved(p)))),
        max_retries: over.max_retries.or(base.max_retries),
    }
}

fn merged_retry(base: &Retry, over: &Retry, moved: impl Fn(Pos) -> Pos) -> Retry {
    Retry {
        section: over.section.or(base.section.map(&moved)),
        num_retries: over
            .num_retries
            .or(base.num_retries.map(|(n, p)| (n, moved(p)))),
        per_try: over.per_try.or(base.per_try.map(|(d, p)| (d, moved(p)))),
        backoff: over
            .backoff
            .or(base.backoff.map(|(b, m, p)| (b, m, moved(p)))),
        retry_on: over
            .retry_on
            .clone()
            .or_else(|| base.retry_on.clone().map(|(c, m, p)| (c, m, moved(p)))),
        rate_limited: over.rate_limited.or(base.rate_limited.map(&moved)),
    }
}

/// The circuit breakers' `maxRetries` per destination (`None`: the Mesh's),
/// merged as the retry entries are: the Mesh entries, then each
/// MeshService's over them, in policy name order.
fn breakers(entries: &mut Vec<Entry>) -> Vec<(Option<HostRef>, u32, At)> {
    let (mut found, rest): (Vec<Entry>, Vec<Entry>) =
        entries.drain(..).partition(|e| e.max_retries.is_some());
    *entries = rest;
    found.sort_by(|a, b| {
        a.host
            .is_some()
            .cmp(&b.host.is_some())
            .then(a.name.cmp(&b.name))
    });
    let mut out: Vec<(Option<HostRef>, u32, At)> = Vec::new();
    for e in found {
        let Some((n, at)) = e.max_retries else {
            continue;
        };
        match out.iter_mut().find(|(h, _, _)| same_host(h, &e.host)) {
            Some(b) => *b = (e.host.clone(), n, at),
            None => out.push((e.host.clone(), n, at)),
        }
    }
    out
}

fn same_host(a: &Option<HostRef>, b: &Option<HostRef>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.host == b.host && a.namespace == b.namespace,
        _ => false,
    }
}

/// Merges the entries (Mesh first, then each MeshService's, in policy name
/// order) and turns them into routes: each MeshService's, then the Mesh's
/// for every other destination.
pub(crate) fn finish(facts: &mut Facts) {
    let mut entries = std::mem::take(&mut facts.kuma);
    if entries.is_empty() {
        return;
    }
    let breakers = breakers(&mut entries);
    entries.sort_by(|a, b| {
        a.host
            .is_some()
            .cmp(&b.host.is_some())
            .then(a.name.cmp(&b.name))
    });
    let mut mesh = Entry::default();
    let mut mesh_seen = false;
    let mut services: Vec<Entry> = Vec::new();
    for e in &entries {
        match &e.host {
            None => {
                mesh = merged(&mesh, e);
                mesh_seen = true;
            }
            Some(h) => match services.iter_mut().find(|s| {
                s.host
                    .as_ref()
                    .is_some_and(|x| x.host == h.host && x.namespace == h.namespace)
            }) {
                Some(s) => *s = merged(s, e),
                None => services.push(merged(&mesh, e)),
            },
        }
    }
    // A destination of its own breaker but only the Mesh's retries: its
    // own route, the Mesh's settings under its budget.
    for (host, _, _) in &breakers {
        if host.is_some() && mesh_seen && !services.iter().any(|s| same_host(&s.host, host)) {
            services.push(Entry {
                host: host.clone(),
                ..mesh.clone()
            });
        }
    }
    let mut applied = vec![false; breakers.len()];
    let group = facts.read_kinds.len();
    let breaker_of = |e: &Entry| {
        breakers
            .iter()
            .position(|(h, _, _)| h.is_some() && same_host(h, &e.host))
            .or_else(|| breakers.iter().position(|(h, _, _)| h.is_none()))
    };
    // The Services whose ports say their protocol come first: Kuma takes
    // the section of that protocol, whatever the call says.
    for (host, protocol) in std::mem::take(&mut facts.kuma_protocols) {
        let named = |s: &&Entry| s.host.as_ref().is_some_and(|h| h.host == host.host);
        let Some(e) = services
            .iter()
            .filter(named)
            .find(|s| {
                s.host
                    .as_ref()
                    .is_some_and(|h| h.namespace == host.namespace)
            })
            .or_else(|| services.iter().find(named))
            .or(mesh_seen.then_some(&mesh))
        else {
            continue;
        };
        let breaker = breaker_of(e).map(|i| (i, breakers[i].1, breakers[i].2));
        let hosts = vec![host.clone()];
        let section = match &protocol {
            ServiceProtocol::Mixed(ports) => {
                facts.note(
                    Some(host.at),
                    format!(
                        "Kuma gives the ports of `{}` different protocols ({}): the MeshRetry section of each call's own protocol is applied",
                        host.host,
                        explain(ports)
                    ),
                );
                continue;
            }
            ServiceProtocol::Http(p) => match p.protocol {
                Protocol::Http => Some(false),
                Protocol::Grpc => Some(true),
                _ => {
                    if e.http.section.is_some() || e.grpc.section.is_some() {
                        facts.note(
                            Some(host.at),
                            format!(
                                "Kuma tags `{}` `http2` ({}): MeshRetry configures retries for `http` and `grpc` destinations only, so none applies to its calls",
                                host.host,
                                explain(std::slice::from_ref(p))
                            ),
                        );
                    }
                    None
                }
            },
            ServiceProtocol::Tcp(p) => {
                if e.http.section.is_some()
                    || e.grpc.section.is_some()
                    || e.request_timeout.is_some()
                {
                    facts.note(
                        Some(host.at),
                        format!(
                            "Kuma tags `{}` `{}` ({}): its calls are TCP to Kuma, where no MeshRetry `http`/`grpc` section and no MeshTimeout `requestTimeout` applies; give the port `appProtocol: http` (or `grpc`) if it serves HTTP",
                            host.host,
                            p.protocol.tag(),
                            explain(std::slice::from_ref(p))
                        ),
                    );
                }
                facts.routes.push(RouteFact {
                    source: LAYER,
                    group,
                    hosts,
                    matcher: Matcher::default(),
                    layers: Vec::new(),
                });
                continue;
            }
        };
        let done = match section {
            Some(grpc) => push_routes(facts, group, hosts, e, grpc, None, breaker),
            // http2: the timeout alone.
            None => {
                let mut e = e.clone();
                e.http = Retry::default();
                push_routes(facts, group, hosts, &e, false, None, breaker)
            }
        };
        if let Some(i) = done {
            applied[i] = true;
        }
    }
    for e in services.iter().chain(mesh_seen.then_some(&mesh)) {
        let breaker = breaker_of(e).map(|i| (i, breakers[i].1, breakers[i].2));
        let hosts: Vec<HostRef> = e.host.iter().cloned().collect();
        // A route per protocol: Kuma takes the section of the call's own
        // protocol, and the other's does not apply to it.
        for grpc in [true, false] {
            if let Some(i) = push_routes(facts, group, hosts.clone(), e, grpc, Some(grpc), breaker)
            {
                applied[i] = true;
            }
        }
    }
    for ((host, n, at), applied) in breakers.iter().zip(applied) {
        if !applied {
            let to = host.as_ref().map_or_else(
                || "every destination".to_owned(),
                |h| format!("`{}`", h.host),
            );
            facts.note(
                Some(*at),
                format!("MeshCircuitBreaker maxRetries {n} bounds the retries in flight to {to}, but no MeshRetry among the sources retries those calls: it bounds nothing here"),
            );
        }
    }
}

/// The routes of one entry's section (`grpc`: the gRPC one) to `hosts`,
/// on the calls `grpc_match` says (`None`: every call); the breaker whose
/// budget it took, if any.
fn push_routes(
    facts: &mut Facts,
    group: usize,
    hosts: Vec<HostRef>,
    e: &Entry,
    grpc: bool,
    grpc_match: Option<bool>,
    breaker: Option<(usize, u32, At)>,
) -> Option<usize> {
    let conf = if grpc { &e.grpc } else { &e.http };
    let mut layers: Vec<LayerFact> = timeout_layer(e)
        .into_iter()
        .chain(retry_layer(e, conf, grpc))
        .collect();
    let applied = breaker.and_then(|(i, n, at)| bound(&mut layers, n, at).then_some(i));
    let methods: &[String] = conf.retry_on.as_ref().map_or(&[], |r| &r.1);
    let only = Matcher {
        any: Vec::new(),
        grpc: grpc_match,
    };
    if methods.is_empty() {
        facts.routes.push(RouteFact {
            source: LAYER,
            group,
            hosts,
            matcher: only,
            layers,
        });
        return applied;
    }
    // Methods not listed are not retried, but the timeouts still apply to
    // them: a route of the timeouts alone after this one.
    let timeouts: Vec<LayerFact> = layers
        .iter()
        .filter(|l| l.name == TIMEOUT)
        .cloned()
        .collect();
    facts.routes.push(RouteFact {
        source: LAYER,
        group,
        hosts: hosts.clone(),
        matcher: Matcher {
            any: methods
                .iter()
                .map(|m| MatchRule {
                    method: Some(StrMatch::Exact(m.clone())),
                    path: None,
                })
                .collect(),
            grpc: grpc_match,
        },
        layers,
    });
    facts.routes.push(RouteFact {
        source: LAYER,
        group,
        hosts,
        matcher: only,
        layers: timeouts,
    });
    applied
}

/// Ports and how Kuma read each, for a note.
fn explain(ports: &[PortProtocol]) -> String {
    ports
        .iter()
        .map(|p| format!("port {} `{}`: {}", p.port, p.protocol.tag(), p.why))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Puts a breaker's `maxRetries` on the MeshRetry layer as a concurrency
/// budget, located at the breaker's key (in its own file, if another);
/// whether there was a layer to bound.
fn bound(layers: &mut [LayerFact], max: u32, at: At) -> bool {
    use crate::policy::BudgetSpec;
    let mut found = false;
    for l in layers.iter_mut().filter(|l| l.name == LAYER) {
        found = true;
        if let PolicyFact::Inline { policy, spans } = &mut l.policy {
            let budget = BudgetSpec::Concurrency { max };
            if at.file == l.file {
                spans.budget = Some(at.pos);
                policy.budget = Some(budget);
            } else {
                let mut policy = policy.clone();
                policy.budget = Some(budget);
                l.policy = PolicyFact::InlineBudgetElsewhere {
                    policy,
                    spans: *spans,
                    budget_at: at,
                };
            }
        }
    }
    found
}

/// MeshTimeout's `http.requestTimeout`: on the calls of either protocol
/// (Kuma sets it on every HTTP connection manager's routes, gRPC's too).
fn timeout_layer(e: &Entry) -> Option<LayerFact> {
    let (d, pos) = e.request_timeout?;
    Some(LayerFact {
        grpc_retry_on: None,
        timeout_default: None,
        name: TIMEOUT.into(),
        file: e.file,
        pos,
        timeout: Some((d, pos)),
        policy: PolicyFact::None,
        comment: "Kuma MeshTimeout http.requestTimeout: the request with all its retries".into(),
    })
}

/// The retry layer of one protocol's section (`grpc`: the gRPC one), as
/// `genHttpRetryPolicy` / `genGrpcRetryPolicy` build it.
fn retry_layer(e: &Entry, r: &Retry, grpc: bool) -> Option<LayerFact> {
    let at = r.num_retries.map(|(_, p)| p).or(r.section)?;
    let retries = r.num_retries.map_or(1, |(n, _)| n);
    if retries == 0 {
        // `numRetries: 0`: Kuma configures no retry policy.
        return None;
    }
    let (base, max) = match r.backoff {
        Some((b, m, _)) => (b, m),
        None => (super::envoy_retry::BASE_INTERVAL, None),
    };
    let retry_on = match &r.retry_on {
        // Nothing Envoy knows (a gRPC `retryOn` of `Canceled` alone, said
        // where it is read): Envoy's policy retries on nothing, so the call
        // gets no retries; a perTryTimeout still bounds its one attempt.
        Some((c, _, _)) if grpc && c.is_empty() => {
            let (d, pos) = r.per_try?;
            return Some(LayerFact {
                grpc_retry_on: None,
                timeout_default: None,
                name: LAYER.into(),
                file: e.file,
                pos,
                timeout: Some((d, pos)),
                policy: PolicyFact::None,
                comment: "Kuma MeshRetry grpc: retryOn holds nothing Envoy retries; perTryTimeout bounds the one attempt".into(),
            });
        }
        Some((c, _, _)) => c.clone(),
        None if grpc => {
            super::envoy_gateway::grpc_retry_on(GRPC_RETRY_ON_DEFAULT).unwrap_or_default()
        }
        None => super::istio::retry_on(HTTP_RETRY_ON_DEFAULT).unwrap_or_default(),
    };
    let spans = Spans {
        policy: Some(at),
        max_attempts: r.num_retries.map(|(_, p)| p),
        backoff: r.backoff.map(|b| b.2),
        retry_on: r.retry_on.as_ref().map(|x| x.2),
        honor_retry_after: r.rate_limited,
        ..Spans::default()
    };
    let section = if grpc { "grpc" } else { "http" };
    Some(LayerFact {
        grpc_retry_on: None,
        timeout_default: None,
        name: LAYER.into(),
        file: e.file,
        pos: at,
        timeout: r.per_try,
        comment: format!("Kuma MeshRetry {section}: numRetries {retries} counts retries"),
        policy: PolicyFact::Inline {
            policy: super::envoy_retry::policy(
                retries,
                base,
                max,
                retry_on,
                r.rate_limited.is_some(),
            ),
            spans,
        },
    })
}
