//! A hand topology merged with what the sources say (`--from`, `sources:`).
//!
//! The topology says what only people know: idempotency and idempotency
//! keys, the application's own retries, capacity, the deadline. The sources
//! add services and calls (traces) and retry layers (mesh and gRPC
//! configuration). Where both give a value the source wins and a note says
//! so: a `via` layer of the same name is replaced, a service's latency is
//! the one traces measured. A call both know keeps the topology's method
//! (its idempotency is a person's statement, not a trace's).
//!
//! Every imported value keeps its own file, line and column: the source files
//! become [`Origin`]s numbered past the topology's lines, and
//! [`Topology::locate`] turns a position back into its file and line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::model::{
    Call, CounterKind, Latency, Layer, LayerKind, LintSettings, Located, Origin, PolicySpans, Pos,
    Service, Topology,
};
use super::policy_schema::PolicyReader;
use super::presets::Presets;
use super::schema::method_is_idempotent;
use crate::external::facts::CallFigures;
use crate::external::hosts::{self, Resolved};
use crate::external::{At, Facts, LayerFact, PolicyFact, Request, Spans};
use crate::input::error::{ErrorKind, LoadError};
use crate::input::fields::Fields;
use crate::input::{Node, Value};

/// A topology with its sources merged in, and what was noticed on the way.
#[derive(Debug, Clone)]
pub struct Merged {
    pub topology: Topology,
    /// `file:line:column: warning: …` lines for standard error.
    pub notes: Vec<String>,
    /// Documents of kinds not read, for `--verbose`.
    pub skipped: Vec<String>,
    /// Documents read, by kind: `Istio VirtualService: 4`.
    pub read: Vec<(String, usize)>,
    /// Attempts per call seen in traces: `(from, to, mean, most, calls)`.
    pub measured: Vec<(String, String, f64, u32, u64)>,
    /// What the sources were read as, one line for standard error (empty
    /// when nothing was read from sources).
    pub summary: String,
}

/// Refuses a `sources:` path that leaves the topology's directory: a pull
/// request that changes the topology must not make CI read (and quote in an
/// error) a file elsewhere on the runner.
fn inside_topology_dir(
    dir: &Path,
    named: &str,
    file: &str,
    pos: crate::input::yaml::Pos,
) -> Result<(), LoadError> {
    let outside = || {
        LoadError::new(
            ErrorKind::Schema,
            file,
            Some(pos),
            format!(
                "sources: `{}` leaves the topology's directory",
                named
            ),
        )
        .with_help(
            "name files under the topology's directory (paths are resolved against it), or pass --allow-outside to read this one",
        )
    };
    let named_path = Path::new(named);
    let escapes_by_name = named_path.is_absolute()
        || named_path.components().any(|c| {
            matches!(
                c,
                std::path::Component::ParentDir | std::path::Component::Prefix(_)
            )
        });
    if escapes_by_name {
        return Err(outside());
    }
    // A link inside the directory may still lead out of it.
    let path = dir.join(named);
    if path.exists() {
        let root = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if !crate::input::read::stays_inside(root, &path) {
            return Err(outside());
        }
    }
    Ok(())
}

/// Loads `path` (if any) and merges every source it names and every `from`.
/// Without sources the topology is returned as loaded.
pub fn load_with_sources(
    path: Option<&Path>,
    from: &[PathBuf],
    options: crate::external::Options,
    presets: &Presets,
) -> Result<Merged, LoadError> {
    let from: Vec<Request> = from.iter().map(Request::path).collect();
    load_with_sources_excluding(path, &from, options, &[], presets)
}

/// [`load_with_sources`] with each `--from` as a [`Request`] (a metrics
/// file's caller), skipping the paths `exclude` names (`--exclude`).
pub fn load_with_sources_excluding(
    path: Option<&Path>,
    from: &[Request],
    options: crate::external::Options,
    exclude: &crate::external::Excludes,
    presets: &Presets,
) -> Result<Merged, LoadError> {
    let base = path.map(|p| super::load::load(p, presets)).transpose()?;
    let mut requests: Vec<Request> = Vec::new();
    if let (Some(t), Some(p)) = (&base, path) {
        let dir = p.parent().unwrap_or(Path::new(""));
        for d in &t.sources {
            if !options.allow_outside {
                inside_topology_dir(dir, &d.path, &t.file, d.pos)?;
            }
            requests.push(Request {
                path: dir.join(&d.path),
                service: d.service.clone(),
                caller: d.caller.clone(),
                named_at: Some((t.file.clone(), d.pos)),
            });
        }
    }
    requests.extend(from.iter().cloned());
    if requests.is_empty() {
        let Some(topology) = base else {
            return Err(LoadError::new(
                ErrorKind::Io,
                "retrylint",
                None,
                "nothing to read: no topology and no --from",
            )
            .with_help(
                "give a topology file, or --from with mesh configuration and a trace export",
            ));
        };
        return Ok(Merged {
            topology,
            notes: Vec::new(),
            skipped: Vec::new(),
            read: Vec::new(),
            measured: Vec::new(),
            summary: String::new(),
        });
    }
    let facts = crate::external::import_excluding(&requests, options, exclude)?;
    merge(base, &facts, presets)
}

/// Where each source file's lines start in the model's positions.
struct Places {
    first: Vec<u32>,
}

impl Places {
    fn pos(&self, file: usize, p: Pos) -> Pos {
        Pos {
            line: self.first[file] + p.line,
            column: p.column,
        }
    }

    fn at(&self, at: At) -> Pos {
        self.pos(at.file, at.pos)
    }

    fn opt(&self, file: usize, p: Option<Pos>) -> Option<Pos> {
        p.map(|p| self.pos(file, p))
    }
}

fn error_at(facts: &Facts, at: At, kind: ErrorKind, message: impl Into<String>) -> LoadError {
    LoadError::new(kind, &facts.files[at.file].file, Some(at.pos), message)
}

/// Merges `facts` into `base` (or builds a topology from the traces alone).
pub fn merge(
    base: Option<Topology>,
    facts: &Facts,
    presets: &Presets,
) -> Result<Merged, LoadError> {
    let mut notes: Vec<String> = facts
        .notes
        .iter()
        .map(|n| {
            let level = if n.warning { "warning" } else { "note" };
            match n.at {
                Some(at) => format!("{}: {level}: {}", facts.show(at), n.text),
                None => format!("{level}: {}", n.text),
            }
        })
        .collect();
    let has_base = base.is_some();
    let mut t = match base {
        Some(t) => t,
        None => {
            if !facts.has_call_graph() {
                let at = facts
                    .files
                    .first()
                    .map(|f| f.file.clone())
                    .unwrap_or_default();
                return Err(LoadError::new(
                    ErrorKind::Graph,
                    &at,
                    None,
                    "the sources give no call graph and no topology was given",
                )
                .with_help("add a trace export (OTLP/JSON, Jaeger or Zipkin) with --from, or give a topology with the services and calls"));
            }
            Topology {
                name: "imported".into(),
                file: facts
                    .files
                    .first()
                    .map(|f| f.file.clone())
                    .unwrap_or_default(),
                source: Default::default(),
                entry: 0,
                entries: vec![0],
                deadline: None,
                client: None,
                services: Vec::new(),
                lint: LintSettings::default(),
                sources: Vec::new(),
                origins: Vec::new(),
                located: None,
                observed: Vec::new(),
                observed_latency: Vec::new(),
            }
        }
    };
    // Number the source files' lines past the topology's own.
    let mut next = if has_base {
        u32::try_from(t.source.lines().count()).unwrap_or(u32::MAX / 2) + 1
    } else {
        0
    };
    let mut first = Vec::with_capacity(facts.files.len());
    for f in &facts.files {
        first.push(next);
        t.origins.push(Origin {
            file: f.file.clone(),
            text: f.text.clone(),
            first_line: next,
        });
        let lines = u32::try_from(f.text.lines().count()).unwrap_or(u32::MAX / 4);
        next = next.saturating_add(lines).saturating_add(1);
    }
    let places = Places { first };
    add_traced(&mut t, facts, &places, has_base, &mut notes);
    // What the sources show of a call replaces what the file wrote of it
    // (`observed:`, from an earlier import): the newer record wins.
    let written = std::mem::take(&mut t.observed);
    let written_latency = std::mem::take(&mut t.observed_latency);
    add_observed(&mut t, facts, &places);
    add_observed_latency(&mut t, facts, &places);
    for l in written_latency {
        if !t.observed_latency.iter().any(|n| n.service == l.service) {
            t.observed_latency.push(l);
        }
    }
    add_counted(&mut t, facts, &places, &mut notes)?;
    for o in written {
        if !t.observed.iter().any(|n| n.from == o.from && n.to == o.to) {
            t.observed.push(o);
        }
    }
    mark_grpc(&mut t, facts);
    attach_layers(&mut t, facts, &places, presets, &mut notes)?;
    super::graph::check_acyclic(&t).map_err(|e| relocate(&t, e))?;
    if !has_base {
        let at = facts
            .services
            .first()
            .map_or(Pos { line: 1, column: 1 }, |s| places.at(s.at));
        t.entries = super::graph::infer_entries(&t, at).map_err(|e| relocate(&t, e))?;
        t.entry = t.entries[0];
    }
    let mut read: Vec<(String, usize)> = Vec::new();
    for a in &facts.accounts {
        let crate::external::Account::Read(k) = &a.account else {
            continue;
        };
        match read.iter_mut().find(|(n, _)| n == k.name()) {
            Some((_, c)) => *c += 1,
            None => read.push((k.name().to_owned(), 1)),
        }
    }
    Ok(Merged {
        topology: t,
        notes,
        skipped: facts
            .accounts
            .iter()
            .filter_map(|a| {
                let what = match &a.account {
                    crate::external::Account::Read(_) => return None,
                    crate::external::Account::NoRetry(w) => format!("{w} (no retry settings)"),
                    crate::external::Account::NotUnderstood(w) => format!("{w} (not understood)"),
                };
                Some(format!(
                    "{}:{}:{}: skipped {what}",
                    facts.files[a.file].file, a.pos.line, a.pos.column
                ))
            })
            .collect(),
        summary: facts.summary(),
        read,
        measured: facts
            .calls
            .iter()
            .map(|c| {
                (
                    c.from.clone(),
                    c.to.clone(),
                    c.figures.attempts_mean,
                    c.figures.attempts_max,
                    c.figures.calls,
                )
            })
            .collect(),
    })
}

/// A graph error at a model position, pointed at its real file and line.
fn relocate(t: &Topology, mut e: LoadError) -> LoadError {
    if let Some(p) = e.pos {
        let (file, pos) = t.locate(p);
        e.file = file.to_owned();
        e.pos = Some(pos);
    }
    e
}

fn no_retry_app_layer(pos: Pos) -> Layer {
    Layer {
        timeout_default: None,
        kind: LayerKind::App,
        name: "app".into(),
        pos,
        timeout: None,
        policy: Default::default(),
        spans: PolicySpans::default(),
        preset: None,
        breaker: None,
        hedging: None,
    }
}

/// What traces showed of each call, for the rules that compare it with the
/// declared layers.
fn add_observed(t: &mut Topology, facts: &Facts, places: &Places) {
    let ids: HashMap<&str, usize> = t
        .services
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let observed: Vec<super::model::Observed> = facts
        .calls
        .iter()
        .filter_map(|c| {
            Some(super::model::Observed {
                from: *ids.get(c.from.as_str())?,
                to: *ids.get(c.to.as_str())?,
                figures: CallFigures {
                    calls: c.figures.calls,
                    attempts_mean: c.figures.attempts_mean,
                    attempts_max: c.figures.attempts_max,
                    proxy_max: c.figures.proxy_max,
                    client_max: c.figures.client_max,
                    resend_max: c.figures.resend_max,
                    failed_calls: c.figures.failed_calls,
                },
                pos: places.at(c.at),
                counted: None,
            })
        })
        .collect();
    t.observed.extend(observed);
}

/// Services' response times from their server spans, for `simulate
/// --calibrate`.
fn add_observed_latency(t: &mut Topology, facts: &Facts, places: &Places) {
    let ids: HashMap<&str, usize> = t
        .services
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let mut seen = Vec::new();
    for s in &facts.services {
        let Some((p50, p99)) = s.response else {
            continue;
        };
        let Some(&service) = ids.get(s.name.as_str()) else {
            continue;
        };
        seen.push(super::model::ObservedLatency {
            service,
            spans: s.server_spans,
            p50,
            p99,
            pos: places.at(s.at),
        });
    }
    t.observed_latency.extend(seen);
}

/// What proxies' counters showed of each call (metrics), beside what
/// traces showed. The caller is the one the user named for the file; the
/// callee is the cluster's host, resolved as route hosts are. A call the
/// topology lacks is not added: counters say neither its method nor
/// whether it is idempotent.
fn add_counted(
    t: &mut Topology,
    facts: &Facts,
    places: &Places,
    notes: &mut Vec<String>,
) -> Result<(), LoadError> {
    let names: Vec<&str> = t.services.iter().map(|s| s.name.as_str()).collect();
    let mut observed = Vec::new();
    for c in &facts.counted {
        let from = match hosts::resolve(&c.caller, None, names.iter().copied()) {
            Resolved::One(i) => i,
            _ if c.caller_labelled => {
                notes.push(format!(
                    "{}: warning: {} counters name the caller `{}`, no service of the topology: its {} requests to `{}` are not compared",
                    facts.show(c.at),
                    c.counters.by(),
                    c.caller,
                    c.counters.attempts - c.counters.retries,
                    c.counters.cluster
                ));
                continue;
            }
            _ => {
                let near = crate::input::error::nearest(&c.caller, names.iter().copied())
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                return Err(error_at(
                    facts,
                    c.at,
                    ErrorKind::Graph,
                    format!(
                        "the metrics' caller `{}` is not one service of the topology{near}",
                        c.caller
                    ),
                )
                .with_help("name the service whose proxy wrote the file with --metrics-caller (or `caller:` in `sources:`)"));
            }
        };
        let to = match hosts::resolve(
            &c.host.host,
            c.host.namespace.as_deref(),
            names.iter().copied(),
        ) {
            Resolved::One(i) => i,
            _ => {
                notes.push(format!(
                    "{}: warning: {} {} `{}` names no service of the topology: its {} requests are not compared",
                    facts.show(c.at),
                    c.counters.by(),
                    c.counters.kind.subject(),
                    c.counters.cluster,
                    // Envoy's as they were always said: upstream requests.
                    match c.counters.kind {
                        CounterKind::Envoy => c.counters.attempts,
                        _ => c.counters.attempts - c.counters.retries,
                    }
                ));
                continue;
            }
        };
        if !t.services[from].calls.iter().any(|k| k.to == to) {
            notes.push(format!(
                "{}: warning: {} counters show `{}` calling `{}` ({} requests), a call the topology does not have: not compared (add the call to compare it)",
                facts.show(c.at),
                c.counters.by(),
                names[from],
                names[to],
                c.counters.attempts
            ));
            continue;
        }
        let requests = c.counters.attempts - c.counters.retries;
        let figures = CallFigures::counted(requests, c.counters.attempts);
        let mean = figures.attempts_mean;
        let not_retried = match (c.counters.limit_exceeded, c.counters.overflow) {
            (Some(l), Some(o)) => {
                format!(
                    "; not retried: {l} for the retry limit, {o} for circuit breaking or the budget"
                )
            }
            (Some(l), None) => format!("; not retried: {l} for the retry limit"),
            (None, Some(o)) => format!("; not retried: {o} for circuit breaking or the budget"),
            (None, None) => String::new(),
        };
        let counted = c.counters.clone();
        notes.push(format!(
            "{}: note: {} counters: `{}` → `{}`: {}{mean:.2} attempts per request ({}{not_retried}), {}",
            facts.show(c.at),
            counted.by(),
            names[from],
            names[to],
            counted.least(),
            counted.counts_text(requests),
            c.counters.window
        ));
        observed.push(super::model::Observed {
            from,
            to,
            figures,
            pos: places.at(c.at),
            counted: Some(counted),
        });
    }
    // A sidecar's scrape may hold Envoy's cluster counters and Istio's
    // request counter for one call: Envoy's count every attempt, Istio's
    // only prove a least, so Envoy's are kept.
    let envoy: Vec<(usize, usize)> = observed
        .iter()
        .filter(|o| {
            o.counted
                .as_ref()
                .is_some_and(|c| c.kind == CounterKind::Envoy)
        })
        .map(|o| (o.from, o.to))
        .collect();
    observed.retain(|o| {
        let istio = o.counted.as_ref().is_some_and(|c| c.kind == CounterKind::Istio);
        if istio && envoy.contains(&(o.from, o.to)) {
            notes.push(format!(
                "note: `{}` → `{}`: Envoy's cluster counters are compared, not Istio's `istio_requests_total` (Envoy's count every attempt)",
                names[o.from], names[o.to]
            ));
            return false;
        }
        true
    });
    t.observed.extend(observed);
    Ok(())
}

/// Services and calls from traces.
fn add_traced(
    t: &mut Topology,
    facts: &Facts,
    places: &Places,
    has_base: bool,
    notes: &mut Vec<String>,
) {
    let mut ids: HashMap<String, usize> = t
        .services
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), i))
        .collect();
    for s in &facts.services {
        let latency = s.latency.map(|(p50, p99)| Latency {
            p50,
            p99,
            pos: Some(places.at(s.at)),
            exponential_mean: None,
        });
        match ids.get(&s.name) {
            Some(&i) => {
                if let Some(l) = latency {
                    let svc = &mut t.services[i];
                    if svc.latency.pos.is_some()
                        && (svc.latency.p50, svc.latency.p99) != (l.p50, l.p99)
                    {
                        notes.push(format!(
                            "{}: note: `{}`'s latency from traces (p50 {}, p99 {}) replaces the topology's (p50 {}, p99 {})",
                            facts.show(s.at),
                            s.name,
                            crate::input::duration::format(l.p50),
                            crate::input::duration::format(l.p99),
                            crate::input::duration::format(svc.latency.p50),
                            crate::input::duration::format(svc.latency.p99),
                        ));
                    }
                    svc.latency = l;
                }
            }
            None => {
                if has_base {
                    notes.push(format!(
                        "{}: note: service `{}` seen in traces is added",
                        facts.show(s.at),
                        s.name
                    ));
                }
                ids.insert(s.name.clone(), t.services.len());
                t.services.push(Service {
                    name: s.name.clone(),
                    pos: places.at(s.at),
                    latency: latency.unwrap_or(Latency::fixed(Latency::DEFAULT, None)),
                    capacity: None,
                    queueing: None,
                    deadline_propagation: false,
                    calls: Vec::new(),
                });
            }
        }
    }
    for c in &facts.calls {
        let (Some(&from), Some(&to)) = (ids.get(&c.from), ids.get(&c.to)) else {
            continue;
        };
        if let Some(existing) = t.services[from].calls.iter().find(|k| k.to == to) {
            if let Some(m) = &c.method
                && *m != existing.method.value
            {
                notes.push(format!(
                    "{}: note: traces show {m} from `{}` to `{}`; the topology's {} is kept (it says whether the call is idempotent)",
                    facts.show(c.at),
                    c.from,
                    c.to,
                    existing.method.value
                ));
            }
            continue;
        }
        if has_base {
            notes.push(format!(
                "{}: note: call `{}` → `{}` seen in traces is added",
                facts.show(c.at),
                c.from,
                c.to
            ));
        }
        let pos = places.at(c.at);
        let method = c.method.clone().unwrap_or_else(|| "GET".into());
        t.services[from].calls.push(Call {
            from,
            to,
            pos,
            idempotent: method_is_idempotent(&method),
            method: Located { value: method, pos },
            path: None,
            idempotency_key: false,
            parallel: false,
            grpc: c.grpc,
            layers: vec![no_retry_app_layer(pos)],
        });
    }
}

/// Which service each route host names, warned about once each.
fn resolve_hosts(t: &Topology, facts: &Facts, notes: &mut Vec<String>) -> Vec<Vec<Option<usize>>> {
    // One warning per host as written: a ServiceProfile's routes share its name.
    let mut warned: Vec<crate::external::At> = Vec::new();
    let mut warn = |h: &crate::external::HostRef, r: &Resolved, names: &[&str]| {
        if !matches!(r, Resolved::One(_)) {
            if warned.contains(&h.at) {
                return;
            }
            warned.push(h.at);
        }
        match r {
        Resolved::Unknown => notes.push(format!(
            "{}: warning: host `{}` is not a service of the topology; its retry policy is not applied",
            facts.show(h.at),
            h.host
        )),
        Resolved::Ambiguous(ids) => notes.push(format!(
            "{}: warning: host `{}` could be any of {}; write the namespace (`{}.NAMESPACE`)",
            facts.show(h.at),
            h.host,
            ids.iter().map(|&i| format!("`{}`", names[i])).collect::<Vec<_>>().join(", "),
            hosts::split(&h.host).name
        )),
        Resolved::One(_) => {}
    }
    };
    let names: Vec<&str> = t.services.iter().map(|s| s.name.as_str()).collect();
    let mut one = |h: &crate::external::HostRef| {
        let r = hosts::resolve(&h.host, h.namespace.as_deref(), names.iter().copied());
        warn(h, &r, &names);
        match r {
            Resolved::One(i) => Some(i),
            _ => None,
        }
    };
    let mut out: Vec<Vec<Option<usize>>> = facts
        .routes
        .iter()
        .map(|r| r.hosts.iter().map(&mut one).collect())
        .collect();
    out.push(facts.meshed.iter().map(&mut one).collect());
    out
}

/// Calls to the hosts the sources say speak gRPC (a Kubernetes Service's
/// port) are gRPC calls; a topology's `protocol:` or a trace may say so too.
fn mark_grpc(t: &mut Topology, facts: &Facts) {
    if facts.grpc_hosts.is_empty() {
        return;
    }
    let names: Vec<&str> = t.services.iter().map(|s| s.name.as_str()).collect();
    let grpc: Vec<usize> = facts
        .grpc_hosts
        .iter()
        .filter_map(|h| {
            match hosts::resolve(&h.host, h.namespace.as_deref(), names.iter().copied()) {
                Resolved::One(i) => Some(i),
                _ => None,
            }
        })
        .collect();
    for s in &mut t.services {
        for c in &mut s.calls {
            c.grpc |= grpc.contains(&c.to);
        }
    }
}

/// The layers the sources put on each call.
fn attach_layers(
    t: &mut Topology,
    facts: &Facts,
    places: &Places,
    presets: &Presets,
    notes: &mut Vec<String>,
) -> Result<(), LoadError> {
    if facts.routes.is_empty() && facts.meshed.is_empty() {
        return Ok(());
    }
    let resolved = resolve_hosts(t, facts, notes);
    let meshed = resolved.last().cloned().unwrap_or_default();
    let mut reader = PolicyReader::new(presets);
    let default_preset = crate::external::istio::default_preset(facts.istio_minor);
    // Said once per route, at the first gRPC call that takes it.
    let mut warned: Vec<crate::external::At> = Vec::new();
    for s in 0..t.services.len() {
        for c in 0..t.services[s].calls.len() {
            let call = &t.services[s].calls[c];
            let to = call.to;
            let (method, path) = (call.method.value.clone(), call.path.clone());
            let grpc = call.grpc;
            let mut add: Vec<Layer> = Vec::new();
            let mut istio_seen = false;
            for source in [
                "grpc",
                "istio",
                "envoy",
                "gateway",
                "linkerd",
                "linkerd-annotations",
                "kuma",
            ] {
                if source == crate::external::linkerd::ANNOTATIONS
                    && facts
                        .routes
                        .iter()
                        .enumerate()
                        .any(|(i, r)| r.source == "linkerd" && resolved[i].contains(&Some(to)))
                {
                    continue;
                }
                let chosen = facts
                    .routes
                    .iter()
                    .enumerate()
                    .filter(|(i, r)| {
                        r.source == source
                            && (resolved[*i].contains(&Some(to))
                                // Kuma's `to: { kind: Mesh }`: every destination.
                                || (r.source == "kuma" && r.hosts.is_empty()))
                    })
                    .find(|(_, r)| {
                        r.matcher.grpc.is_none_or(|g| g == grpc)
                            && r.matcher.matches(&method, path.as_deref())
                    });
                if let Some((_, r)) = chosen {
                    istio_seen |= source == "istio";
                    for fact in &r.layers {
                        let mut l = layer(facts, places, &mut reader, fact)?;
                        // On a gRPC call the proxy's gRPC conditions apply.
                        if grpc && let Some(on) = &fact.grpc_retry_on {
                            l.policy.retry_on.0 = on.clone();
                            if on.is_empty() {
                                // Nothing it retries can happen on the call.
                                l.policy.max_attempts = 1;
                            }
                            let (a, b) = (&t.services[s].name, &t.services[to].name);
                            if let Some((at, text)) =
                                crate::external::http_retry_on_grpc::warning(fact, a, b)
                                && !warned.contains(&at)
                            {
                                warned.push(at);
                                notes.push(format!("{}: warning: {text}", facts.show(at)));
                            }
                        }
                        add.push(l);
                    }
                }
            }
            if !istio_seen && let Some(h) = meshed.iter().position(|m| *m == Some(to)) {
                let at = facts.meshed[h].at;
                let mut default = layer(
                    facts,
                    places,
                    &mut reader,
                    &LayerFact {
                        grpc_retry_on: None,
                        timeout_default: None,
                        name: crate::external::istio::SIDECAR.into(),
                        file: at.file,
                        pos: at.pos,
                        timeout: None,
                        // A DestinationRule's limit for the Service, if any.
                        policy: match crate::external::istio::limit_for(facts, &facts.meshed[h]) {
                            Some((budget, budget_at)) => PolicyFact::PresetWithBudget {
                                name: default_preset.into(),
                                at: at.pos,
                                budget,
                                budget_at,
                            },
                            None => PolicyFact::Preset {
                                name: default_preset.into(),
                                at: at.pos,
                            },
                        },
                        comment: format!(
                            "Istio 1.{}'s default retry policy: a meshed Service no VirtualService routes",
                            facts.istio_minor
                        ),
                    },
                )?;
                if grpc {
                    default.policy.retry_on.0 =
                        crate::external::istio::default_grpc_conditions(facts.istio_minor);
                }
                add.push(default);
            }
            for l in add {
                let found = t.services[s].calls[c]
                    .layers
                    .iter()
                    .position(|k| k.kind == LayerKind::Via && k.name == l.name);
                match found {
                    Some(k) => {
                        let old = t.services[s].calls[c].layers[k].pos;
                        let (fa, pa) = t.locate(l.pos);
                        let (fb, pb) = t.locate(old);
                        notes.push(format!(
                            "{fa}:{}:{}: note: the `{}` layer here replaces the one at {fb}:{}:{} (the source wins)",
                            pa.line, pa.column, l.name, pb.line, pb.column
                        ));
                        t.services[s].calls[c].layers[k] = l;
                    }
                    None => t.services[s].calls[c].layers.push(l),
                }
            }
        }
    }
    Ok(())
}

fn shift_spans(places: &Places, file: usize, s: Spans) -> PolicySpans {
    s.map(|p| places.opt(file, p))
}

fn layer(
    facts: &Facts,
    places: &Places,
    reader: &mut PolicyReader,
    l: &LayerFact,
) -> Result<Layer, LoadError> {
    let (policy, spans, preset) = match &l.policy {
        PolicyFact::None => (Default::default(), PolicySpans::default(), None),
        PolicyFact::Inline { policy, spans } => {
            (policy.clone(), shift_spans(places, l.file, *spans), None)
        }
        PolicyFact::InlineBudgetElsewhere {
            policy,
            spans,
            budget_at,
        } => {
            let mut spans = shift_spans(places, l.file, *spans);
            spans.budget = Some(places.at(*budget_at));
            (policy.clone(), spans, None)
        }
        PolicyFact::Preset { name, at } => preset_layer(facts, places, reader, l, name, *at)?,
        PolicyFact::PresetWithBudget {
            name,
            at,
            budget,
            budget_at,
        } => {
            let (mut policy, mut spans, preset) =
                preset_layer(facts, places, reader, l, name, *at)?;
            policy.budget = Some(budget.clone());
            spans.budget = Some(places.at(*budget_at));
            (policy, spans, preset)
        }
    };
    Ok(Layer {
        timeout_default: l.timeout_default,
        kind: LayerKind::Via,
        name: l.name.clone(),
        pos: places.pos(l.file, l.pos),
        timeout: l.timeout.map(|(d, p)| Located {
            value: d,
            pos: places.pos(l.file, p),
        }),
        policy,
        spans,
        preset,
        breaker: None,
        hedging: None,
    })
}

/// A shipped preset's policy, named at `at` in the layer's file.
fn preset_layer(
    facts: &Facts,
    places: &Places,
    reader: &mut PolicyReader,
    l: &LayerFact,
    name: &str,
    at: Pos,
) -> Result<(crate::policy::RetryPolicy, PolicySpans, Option<String>), LoadError> {
    let file = &facts.files[l.file];
    let f = Fields::new(&file.file, &file.text);
    let pos = places.pos(l.file, at);
    let node = Node {
        pos,
        span: Default::default(),
        value: Value::Str(name.into()),
    };
    let r = reader.read(f, pos, &node).map_err(|mut e| {
        e.pos = Some(at);
        e
    })?;
    Ok((r.policy, r.spans, r.preset))
}
