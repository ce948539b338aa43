//! Reading a topology (schema version 1, docs/topology.md) out of a located YAML tree.

use std::collections::HashMap;

use super::model::{
    Call, Latency, Layer, LayerKind, LevelSetting, LintSettings, Located, PolicySpans, Service,
    Topology,
};
use super::policy_schema::PolicyReader;
use super::presets::Presets;
use crate::input::error::{ErrorKind, LoadError, nearest};
use crate::input::fields::Fields;
use crate::input::yaml::{Node, Pos, Value};

const TOP_KEYS: &[&str] = &[
    "version",
    "name",
    "description",
    "entry",
    "deadline",
    "client",
    "services",
    "lint",
    "defaults",
    "sources",
];
const SERVICE_KEYS: &[&str] = &[
    "latency",
    "capacity",
    "deadline_propagation",
    "calls",
    "parallel",
    "observed",
    "description",
];
const CALL_KEYS: &[&str] = &[
    "to",
    "method",
    "path",
    "idempotent",
    "idempotency_key",
    "protocol",
    "timeout",
    "retry",
    "via",
    "parallel",
    "circuit_breaker",
    "hedging",
    "observed",
    "description",
];
const LAYER_KEYS: &[&str] = &["name", "retry", "timeout", "circuit_breaker", "description"];
const METHODS: &[&str] = &[
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT",
];

/// Whether RFC 9110 §9.2.2 makes `method` idempotent.
pub(crate) fn method_is_idempotent(method: &str) -> bool {
    matches!(
        method,
        "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"
    )
}

/// A service's calls before their targets are resolved.
struct PendingCall {
    call: Call,
    to_name: String,
    to_pos: Pos,
}

pub(super) fn read(
    file: &str,
    source: &str,
    root: &Node,
    presets: &Presets,
    default_name: &str,
) -> Result<Topology, LoadError> {
    let f = Fields::new(file, source);
    let mut policies = PolicyReader::new(presets);
    if matches!(root.value, Value::Null) {
        return Err(f
            .error(root.pos, "the file has no content")
            .with_help("a topology starts with `version: 1` and a `services:` map"));
    }
    let top = f.map(
        root,
        "a topology (top level)",
        &top_keys_with_extensions(root),
    )?;
    if let Some(v) = top.get("version") {
        let version = f.int(v, "version", i128::MIN, i128::MAX)?;
        if version != 1 {
            return Err(f
                .error(
                    v.pos,
                    format!("unsupported schema version {}", f.written(v, version)),
                )
                .with_help("this retrylint reads `version: 1`"));
        }
    }
    let name = match top.get("name") {
        Some(n) => f.str(n, "`name`")?.to_owned(),
        None => default_name.to_owned(),
    };
    let deadline = located_duration(f, &top, "deadline")?;
    let client = top
        .get("client")
        .map(|n| read_layer(f, &mut policies, n, LayerKind::Client, "client"))
        .transpose()?;
    let Some(services_node) = top.get("services") else {
        return Err(f
            .error(top.pos, "the topology has no `services:`")
            .with_help("add a `services:` map, one entry per service"));
    };
    let Value::Map(entries) = &services_node.value else {
        return Err(f.expected(services_node, "a map of services (name: definition)"));
    };
    if entries.is_empty() {
        return Err(f
            .error(services_node.pos, "`services:` is empty")
            .with_help("add at least one service"));
    }
    let mut ids: Ids = HashMap::with_capacity_and_hasher(entries.len(), Default::default());
    for (i, (k, _)) in entries.iter().enumerate() {
        let name = f.str(k, "a service name")?;
        if name.trim().is_empty() {
            return Err(f
                .error(k.pos, "a service name is empty")
                .with_help("name the service, e.g. `api: {}`; calls reach it with `to: api`"));
        }
        ids.insert(name, i);
    }
    let services = read_services(f, presets, entries, &ids)?;
    let entries = top
        .get("entry")
        .map(|n| read_entries(f, n, &ids, services.len()))
        .transpose()?;
    let lint = top
        .get("lint")
        .map(|n| read_lint(f, n))
        .transpose()?
        .unwrap_or_default();
    let mut topology = Topology {
        name,
        file: file.to_owned(),
        // The loader moves the text in: it is megabytes on a large topology.
        source: Default::default(),
        entry: entries.as_ref().map_or(0, |e| e[0]),
        entries: entries.unwrap_or_default(),
        deadline,
        client,
        services,
        lint,
        sources: top
            .get("sources")
            .map(|n| read_sources(f, n))
            .transpose()?
            .unwrap_or_default(),
        origins: Vec::new(),
        located: None,
        observed: Vec::new(),
        observed_latency: Vec::new(),
    };
    super::observed_schema::read(f, root, &mut topology)?;
    super::graph::check_acyclic(&topology)?;
    if topology.entries.is_empty() {
        topology.entries = super::graph::infer_entries(&topology, top.pos)?;
        topology.entry = topology.entries[0];
    }
    Ok(topology)
}

/// `entry:` as a name or a list of names, each a service, none twice.
fn read_entries(
    f: Fields,
    node: &Node,
    ids: &Ids,
    services: usize,
) -> Result<Vec<usize>, LoadError> {
    if matches!(&node.value, Value::Seq(items) if items.is_empty()) {
        return Err(f
            .error(node.pos, "`entry:` is an empty list")
            .with_help("name the services that receive user traffic, e.g. `entry: [web, mobile-api]`, or leave `entry:` out to take every service nobody calls"));
    }
    let mut entries: Vec<usize> = Vec::new();
    // A flag per service: a list as long as the services stays linear.
    let mut named = vec![false; services];
    for n in f.list(node) {
        let name = f.str(n, "`entry`")?;
        let Some(&id) = ids.get(name) else {
            let err = LoadError::new(
                ErrorKind::Graph,
                f.file,
                Some(n.pos),
                format!("entry `{name}` is not a service"),
            );
            return Err(match nearest(name, ids.keys().copied()) {
                Some(near) => err.with_help(format!("did you mean `{near}`?")),
                None => err.with_help("name one of the services under `services:`"),
            });
        };
        if std::mem::replace(&mut named[id], true) {
            return Err(LoadError::new(
                ErrorKind::Graph,
                f.file,
                Some(n.pos),
                format!("entry `{name}` is named twice"),
            )
            .with_help("name each entry service once"));
        }
        entries.push(id);
    }
    Ok(entries)
}

/// Every service with the calls it makes, in file order, each call's target
/// resolved through `ids`. A large topology is read in two halves side by
/// side; the error reported is the first in the file, as when it is read in
/// one, and a call to an unknown service (or to itself) only when the file
/// has no other error.
fn read_services(
    f: Fields,
    presets: &Presets,
    entries: &[(Node, Node)],
    ids: &Ids,
) -> Result<Vec<Service>, LoadError> {
    let read = |from: usize,
                entries: &[(Node, Node)]|
     -> Result<(Vec<Service>, Option<PendingCall>), LoadError> {
        let mut policies = PolicyReader::new(presets);
        let mut unresolved = None;
        let mut services = Vec::with_capacity(entries.len());
        for (i, (k, v)) in entries.iter().enumerate() {
            let (mut service, pending) = read_service(f, &mut policies, from + i, k, v)?;
            for mut p in pending {
                match ids.get(p.to_name.as_str()) {
                    Some(&to) if to != p.call.from => {
                        p.call.to = to;
                        service.calls.push(p.call);
                    }
                    _ => {
                        // The first bad call of this half.
                        unresolved.get_or_insert(p);
                    }
                }
            }
            services.push(service);
        }
        Ok((services, unresolved))
    };
    let (services, unresolved) = if entries.len() < crate::large::SERVICES_HALVED_FROM {
        read(0, entries)?
    } else {
        let half = entries.len() / 2;
        let (first, second) = entries.split_at(half);
        let (second, first) = crate::large::side_by_side(|| read(half, second), || read(0, first));
        let (mut services, unresolved) = first?;
        let (rest, later) = second?;
        services.extend(rest);
        (services, unresolved.or(later))
    };
    match unresolved {
        Some(p) => Err(unresolved_call(
            f.file,
            ids,
            &services[p.call.from].name,
            &p,
        )),
        None => Ok(services),
    }
}

/// Service names and their ids, hashed with a per-run seed (as the YAML
/// reader's interner is): no file can make its names collide.
type Ids<'a> = HashMap<&'a str, usize, foldhash::fast::RandomState>;

/// The error for a call to an unknown service, or to the caller itself.
fn unresolved_call(file: &str, ids: &Ids, from: &str, p: &PendingCall) -> LoadError {
    if ids.contains_key(p.to_name.as_str()) {
        return LoadError::new(
            ErrorKind::Graph,
            file,
            Some(p.to_pos),
            format!("`{}` calls itself", p.to_name),
        )
        .with_help("a service calling itself retries into its own queue forever; remove the call");
    }
    let err = LoadError::new(
        ErrorKind::Graph,
        file,
        Some(p.to_pos),
        format!("`{from}` calls unknown service `{}`", p.to_name),
    );
    match nearest(&p.to_name, ids.keys().copied()) {
        Some(n) => err.with_help(format!("did you mean `{n}`?")),
        None => err.with_help(format!(
            "define `{}` under `services:` or call an existing service",
            p.to_name
        )),
    }
}

/// `sources:`: paths (relative to the topology) of configuration and traces
/// to merge in; an entry may be `{ path: retry.json, service: echo }`.
fn read_sources(f: Fields, node: &Node) -> Result<Vec<super::model::SourceDecl>, LoadError> {
    let mut out = Vec::new();
    for item in f.list(node) {
        let (path, service, caller) = match &item.value {
            Value::Str(p) => (p.to_string(), None, None),
            Value::Map(_) => {
                let m = f.map(item, "a `sources:` entry", &["path", "service", "caller"])?;
                let Some(p) = m.get("path") else {
                    return Err(f
                        .error(item.pos, "a `sources:` entry needs `path:`")
                        .with_help("write `- path: mesh/retry.json` (relative to this file)"));
                };
                let service = m
                    .get("service")
                    .map(|s| f.str(s, "`service`").map(str::to_owned))
                    .transpose()?;
                let caller = m
                    .get("caller")
                    .map(|s| f.str(s, "`caller`").map(str::to_owned))
                    .transpose()?;
                (f.str(p, "`path`")?.to_owned(), service, caller)
            }
            _ => {
                return Err(f.expected(
                    item,
                    "a path (or `{ path: ..., service: ... }`) in `sources:`",
                ));
            }
        };
        if path.trim().is_empty() {
            return Err(f
                .error(item.pos, "an empty path in `sources:`")
                .with_help("name a file or a directory, relative to this topology"));
        }
        out.push(super::model::SourceDecl {
            path,
            service,
            caller,
            pos: item.pos,
        });
    }
    Ok(out)
}

/// Top-level keys starting with `x-` hold anchors for merging and are ignored.
fn top_keys_with_extensions(root: &Node) -> Vec<&str> {
    let mut keys: Vec<&str> = TOP_KEYS.to_vec();
    if let Value::Map(entries) = &root.value {
        for (k, _) in entries {
            if let Value::Str(s) = &k.value
                && s.starts_with("x-")
            {
                keys.push(s);
            }
        }
    }
    keys
}

fn read_service(
    f: Fields,
    policies: &mut PolicyReader,
    id: usize,
    key: &Node,
    node: &Node,
) -> Result<(Service, Vec<PendingCall>), LoadError> {
    let name = f.str(key, "a service name")?.to_owned();
    let mut service = Service {
        name,
        pos: key.pos,
        latency: Latency::fixed(Latency::DEFAULT, None),
        capacity: None,
        queueing: None,
        deadline_propagation: false,
        calls: Vec::new(),
    };
    // `db: {}` and a bare `db:` are both a leaf with defaults.
    if matches!(node.value, Value::Null) {
        return Ok((service, Vec::new()));
    }
    let m = f.map(node, &format!("service `{}`", service.name), SERVICE_KEYS)?;
    if let Some(v) = m.get("latency") {
        service.latency = read_latency(f, v)?;
        service.latency.pos = Some(m.key_pos("latency"));
    }
    if let Some(v) = m.get("capacity") {
        let pos = m.key_pos("capacity");
        match super::capacity_schema::read_capacity(f, v)? {
            super::capacity_schema::Capacity::Overlap(c) => {
                service.capacity = Some(Located { value: c, pos });
            }
            super::capacity_schema::Capacity::Queueing(q) => {
                service.queueing = Some(Located { value: q, pos });
            }
        }
    }
    if let Some(v) = m.get("deadline_propagation") {
        service.deadline_propagation = f.bool(v, "deadline_propagation")?;
    }
    if let Some(q) = &service.queueing
        && q.value.drop_expired
        && !service.deadline_propagation
    {
        // Without an incoming deadline nothing is ever known to be expired.
        let pos = match m.get("capacity").map(|c| &c.value) {
            Some(Value::Map(entries)) => entries
                .iter()
                .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == "drop_expired"))
                .map_or(q.pos, |(k, _)| k.pos),
            _ => q.pos,
        };
        return Err(f
            .error(
                pos,
                format!(
                    "service `{}` drops expired work, but no deadline reaches it",
                    service.name
                ),
            )
            .with_help("add `deadline_propagation: true` to the service (its callers then send their deadline), or remove `drop_expired`"));
    }
    let all_parallel = m
        .get("parallel")
        .map(|v| f.bool(v, "parallel"))
        .transpose()?
        .unwrap_or(false);
    let mut calls = Vec::new();
    if let Some(v) = m.get("calls") {
        let items = match &v.value {
            Value::Seq(items) => items,
            Value::Null => return Ok((service, calls)),
            _ => return Err(f.expected(v, "a list of calls (`- to: SERVICE`)")),
        };
        for item in items {
            let mut p = read_call(f, policies, id, item)?;
            p.call.parallel |= all_parallel;
            calls.push(p);
        }
    }
    Ok((service, calls))
}

fn read_latency(f: Fields, node: &Node) -> Result<Latency, LoadError> {
    if let Value::Map(_) = node.value {
        let m = f.map(node, "a latency", &["p50", "p99", "distribution", "mean"])?;
        if let Some(d) = m.get("distribution") {
            let kind = f.str(d, "`distribution`")?;
            if kind != "exponential" {
                return Err(f
                    .error(d.pos, format!("unknown latency distribution `{kind}`"))
                    .with_help("write `distribution: exponential` with `mean:`, or give `p50` and `p99` for a log-normal spread"));
            }
            if let Some((k, _)) = m.entry("p50").or(m.entry("p99")) {
                return Err(f
                    .error(k.pos, "an exponential latency is given by its `mean` alone")
                    .with_help(
                        "remove `p50`/`p99`, or remove `distribution` for a log-normal spread",
                    ));
            }
            let Some(mean) = m.get("mean") else {
                return Err(f
                    .error(node.pos, "an exponential latency needs `mean:`")
                    .with_help("write `latency: { distribution: exponential, mean: 10ms }`"));
            };
            let mean = f.duration(mean, "mean")?;
            return Ok(Latency::exponential(mean, Some(node.pos)));
        }
        if let Some((k, _)) = m.entry("mean") {
            return Err(f
                .error(k.pos, "`mean` goes with `distribution: exponential`")
                .with_help("add `distribution: exponential`, or give `p50` and `p99` instead"));
        }
        let p50 = m.get("p50").map(|v| f.duration(v, "p50")).transpose()?;
        let p99 = m.get("p99").map(|v| f.duration(v, "p99")).transpose()?;
        let (p50, p99) = match (p50, p99) {
            (Some(a), Some(b)) => (a, b),
            (Some(a), None) => (a, a),
            (None, Some(b)) => (b, b),
            (None, None) => {
                return Err(f
                    .error(node.pos, "a latency map needs `p50` and `p99`")
                    .with_help("write `latency: { p50: 20ms, p99: 120ms }` or `latency: 20ms`"));
            }
        };
        if p99 < p50 {
            return Err(f
                .error(node.pos, "latency p99 is below p50")
                .with_help("p99 is the slower tail: it must be at least p50"));
        }
        return Ok(Latency {
            p50,
            p99,
            pos: Some(node.pos),
            exponential_mean: None,
        });
    }
    let d = f.duration(node, "latency")?;
    Ok(Latency::fixed(d, Some(node.pos)))
}

fn read_call(
    f: Fields,
    policies: &mut PolicyReader,
    from: usize,
    node: &Node,
) -> Result<PendingCall, LoadError> {
    // `- db` is shorthand for `- to: db`.
    if let Value::Str(to) = &node.value {
        return Ok(PendingCall {
            call: Call {
                from,
                to: usize::MAX,
                pos: node.pos,
                method: Located {
                    value: "GET".into(),
                    pos: node.pos,
                },
                path: None,
                idempotent: true,
                idempotency_key: false,
                parallel: false,
                grpc: false,
                layers: vec![app_layer(node.pos, None, None, None, None)],
            },
            to_name: to.to_string(),
            to_pos: node.pos,
        });
    }
    let m = f.map(node, "a call", CALL_KEYS)?;
    let Some(to) = m.get("to") else {
        return Err(f
            .error(node.pos, "a call needs `to:`")
            .with_help("add `to: SERVICE`, the service it calls"));
    };
    let to_name = f.str(to, "`to`")?.to_owned();
    let (method, mut path) = match m.get("method") {
        Some(v) => {
            let text = f.str(v, "`method`")?;
            let mut parts = text.split_whitespace();
            let method = parts.next().unwrap_or("").to_ascii_uppercase();
            if !METHODS.contains(&method.as_str()) {
                let err = f.error(v.pos, format!("unknown HTTP method `{text}`"));
                return Err(match nearest(&method, METHODS.iter().copied()) {
                    Some(n) => err.with_help(format!("did you mean `{n}`?")),
                    None => err.with_help(format!("use one of {}", METHODS.join(", "))),
                });
            }
            let path = parts.next().map(str::to_owned);
            (
                Located {
                    value: method,
                    pos: m.key_pos("method"),
                },
                path,
            )
        }
        None => (
            Located {
                value: "GET".into(),
                pos: to.pos,
            },
            None,
        ),
    };
    if let Some(v) = m.get("path") {
        path = Some(f.str(v, "`path`")?.to_owned());
    }
    let idempotent = match m.get("idempotent") {
        Some(v) => f.bool(v, "idempotent")?,
        None => method_is_idempotent(&method.value),
    };
    let idempotency_key = m
        .get("idempotency_key")
        .map(|v| f.bool(v, "idempotency_key"))
        .transpose()?
        .unwrap_or(false);
    let parallel = m
        .get("parallel")
        .map(|v| f.bool(v, "parallel"))
        .transpose()?
        .unwrap_or(false);
    let grpc = match m.get("protocol") {
        None => false,
        Some(v) => match f.str(v, "`protocol`")? {
            "http" => false,
            "grpc" => true,
            other => {
                return Err(f
                    .error(v.pos, format!("unknown protocol `{other}`"))
                    .with_help("write `protocol: http` (the default) or `protocol: grpc`"));
            }
        },
    };
    let timeout = located_duration(f, &m, "timeout")?;
    let read = m
        .entry("retry")
        .map(|(k, v)| policies.read(f, k.pos, v))
        .transpose()?;
    let call_pos = m.key_pos("to");
    let breaker = located_breaker(f, &m)?;
    let hedging = m
        .entry("hedging")
        .map(|(k, v)| {
            if let Some((rk, _)) = m.entry("retry") {
                return Err(f
                    .error(
                        k.pos,
                        "`hedging` and `retry` exclude each other on one call (gRPC A6)",
                    )
                    .with_help(format!(
                        "keep one: hedging sends copies even when nothing fails, retries only after a failure (`retry` is at line {})",
                        rk.pos.line
                    )));
            }
            super::containment_schema::read_hedging(f, v).map(|h| Located {
                value: h,
                pos: k.pos,
            })
        })
        .transpose()?;
    let mut layers = vec![app_layer(call_pos, timeout, read, breaker, hedging)];
    if let Some(v) = m.get("via") {
        let items = match &v.value {
            Value::Seq(items) => items.as_slice(),
            Value::Null => &[],
            _ => return Err(f.expected(v, "a list of retry layers (`- name: …`)")),
        };
        for (i, item) in items.iter().enumerate() {
            let default_name = format!("via-{}", i + 1);
            layers.push(read_layer(
                f,
                policies,
                item,
                LayerKind::Via,
                &default_name,
            )?);
        }
    }
    Ok(PendingCall {
        call: Call {
            from,
            to: usize::MAX,
            pos: call_pos,
            method,
            path,
            idempotent,
            idempotency_key,
            parallel,
            grpc,
            layers,
        },
        to_name,
        to_pos: to.pos,
    })
}

fn app_layer(
    pos: Pos,
    timeout: Option<Located<std::time::Duration>>,
    read: Option<super::policy_schema::ReadPolicy>,
    breaker: Option<Located<crate::policy::BreakerSpec>>,
    hedging: Option<Located<crate::policy::HedgingPolicy>>,
) -> Layer {
    let (policy, spans, preset) = match read {
        Some(r) => (r.policy, r.spans, r.preset),
        None => (Default::default(), PolicySpans::default(), None),
    };
    Layer {
        timeout_default: None,
        kind: LayerKind::App,
        name: "app".into(),
        pos,
        timeout,
        policy,
        spans,
        preset,
        breaker,
        hedging,
    }
}

/// A `circuit_breaker:` of a call or layer, located at its key.
fn located_breaker(
    f: Fields,
    m: &crate::input::fields::MapView,
) -> Result<Option<Located<crate::policy::BreakerSpec>>, LoadError> {
    m.entry("circuit_breaker")
        .map(|(k, v)| {
            super::containment_schema::read_breaker(f, v).map(|b| Located {
                value: b,
                pos: k.pos,
            })
        })
        .transpose()
}

fn read_layer(
    f: Fields,
    policies: &mut PolicyReader,
    node: &Node,
    kind: LayerKind,
    default_name: &str,
) -> Result<Layer, LoadError> {
    // `via: [istio-default]`: a preset name alone is a layer named after it.
    if let Value::Str(name) = &node.value {
        let read = policies.read(f, node.pos, node)?;
        return Ok(Layer {
            timeout_default: None,
            kind,
            name: name.to_string(),
            pos: node.pos,
            timeout: None,
            policy: read.policy,
            spans: read.spans,
            preset: read.preset,
            breaker: None,
            hedging: None,
        });
    }
    let what = match kind {
        LayerKind::Client => "the client layer",
        _ => "a `via` layer",
    };
    let m = f.map(node, what, LAYER_KEYS)?;
    let name = match m.get("name") {
        Some(v) => f.str(v, "`name`")?.to_owned(),
        None => default_name.to_owned(),
    };
    let timeout = located_duration(f, &m, "timeout")?;
    let (policy, spans, preset) = match m.entry("retry") {
        Some((k, v)) => {
            let r = policies.read(f, k.pos, v)?;
            (r.policy, r.spans, r.preset)
        }
        None => (Default::default(), PolicySpans::default(), None),
    };
    let pos = m.key_pos("name");
    let breaker = located_breaker(f, &m)?;
    Ok(Layer {
        timeout_default: None,
        kind,
        name,
        pos,
        timeout,
        policy,
        spans,
        preset,
        breaker,
        hedging: None,
    })
}

/// A duration field, located at its key.
fn located_duration(
    f: Fields,
    m: &crate::input::fields::MapView,
    key: &str,
) -> Result<Option<Located<std::time::Duration>>, LoadError> {
    m.entry(key)
        .map(|(k, v)| {
            f.duration(v, key).map(|d| Located {
                value: d,
                pos: k.pos,
            })
        })
        .transpose()
}

fn level(f: Fields, node: &Node) -> Result<LevelSetting, LoadError> {
    let s = f.str(node, "a level")?;
    Ok(match s.to_ascii_lowercase().as_str() {
        "error" | "deny" => LevelSetting::Error,
        "warning" | "warn" => LevelSetting::Warning,
        "info" | "note" => LevelSetting::Info,
        "allow" | "off" | "none" | "ignore" => LevelSetting::Allow,
        _ => {
            return Err(f
                .error(node.pos, format!("unknown level `{s}`"))
                .with_help("use error, warning, info or allow"));
        }
    })
}

/// The keys of `lint:` besides rule codes and names.
const LINT_KEYS: [&str; 7] = [
    "fail_on",
    "max_amplification",
    "deny",
    "warn",
    "allow",
    "info",
    "rules",
];

fn read_lint(f: Fields, node: &Node) -> Result<LintSettings, LoadError> {
    let Value::Map(entries) = &node.value else {
        return Err(f.expected(node, "a mapping for `lint:`"));
    };
    let mut out = LintSettings::default();
    for (k, v) in entries {
        let key = f.str(k, "a `lint:` key")?;
        match key {
            "max_amplification" => {
                let x = f.number(v, "max_amplification")?;
                if x < 1.0 {
                    return Err(f
                        .error(v.pos, "`max_amplification` is below 1")
                        .with_help("one attempt per request is amplification 1; use 1 or more"));
                }
                out.max_amplification = Some(Located {
                    value: x,
                    pos: v.pos,
                });
            }
            "fail_on" => {
                out.fail_on = Some(Located {
                    value: level(f, v)?,
                    pos: v.pos,
                });
            }
            "deny" | "warn" | "allow" | "info" => {
                let lvl = match key {
                    "deny" => LevelSetting::Error,
                    "warn" => LevelSetting::Warning,
                    "info" => LevelSetting::Info,
                    _ => LevelSetting::Allow,
                };
                for item in f.list(v) {
                    let code = f.str(item, "a rule code")?;
                    out.levels.push((
                        Located {
                            value: code.to_owned(),
                            pos: item.pos,
                        },
                        lvl,
                    ));
                }
            }
            "rules" => {
                let Value::Map(rules) = &v.value else {
                    return Err(f.expected(v, "a map of rule → level under `rules:`"));
                };
                for (rk, rv) in rules {
                    let code = f.str(rk, "a rule code")?;
                    out.levels.push((
                        Located {
                            value: code.to_owned(),
                            pos: rk.pos,
                        },
                        level(f, rv)?,
                    ));
                }
            }
            // `RL004: error` or `missing-jitter: allow` directly under `lint:`,
            // unless it is a `lint:` key spelled another way (`fail-on`).
            code => {
                let bare = |s: &str| s.replace(['-', '_'], "").to_ascii_lowercase();
                if let Some(meant) = LINT_KEYS.iter().find(|k| bare(k) == bare(code)) {
                    return Err(f
                        .error(k.pos, format!("unknown `lint:` key `{code}`"))
                        .with_help(format!("write `{meant}`")));
                }
                out.levels.push((
                    Located {
                        value: code.to_owned(),
                        pos: k.pos,
                    },
                    level(f, v)?,
                ));
            }
        }
    }
    Ok(out)
}
