//! A call's `observed:` figures (docs/topology.md): what traces or a
//! proxy's counters showed of it, written by `retrylint import` so that a
//! later `check` of the written file holds the declared layers to them
//! (RL021, RL022) as if the traces or metrics had been given again.
//!
//! ```yaml
//! observed: { source: traces, calls: 10, attempts_per_call: 6, max_attempts: 6,
//!             proxy_max: 2, client_max: 3, resend_max: 1, failed_calls: 10 }
//! observed: { source: envoy, cluster: api, upstream_requests: 137, retries: 37,
//!             window: "since the proxy started" }
//! ```
//!
//! And a service's `observed:`, its response time from its server spans
//! (`simulate --calibrate` sets it beside the simulated one):
//!
//! ```yaml
//! observed: { source: traces, server_spans: 40, p50: 12ms, p99: 48ms }
//! ```
//!
//! Read in a pass of its own over the located tree once the calls are
//! resolved: a call's target is only known then.

use super::model::{Counted, CounterKind, Observed, ObservedLatency, Topology};
use crate::external::facts::CallFigures;
use crate::input::error::LoadError;
use crate::input::fields::{Fields, MapView};
use crate::input::yaml::{Node, Value};

const TRACES_KEYS: &[&str] = &[
    "source",
    "calls",
    "attempts_per_call",
    "max_attempts",
    "proxy_max",
    "client_max",
    "resend_max",
    "failed_calls",
];
const ENVOY_KEYS: &[&str] = &[
    "source",
    "cluster",
    "calls",
    "attempts_per_call",
    "upstream_requests",
    "unattached",
    "retries",
    "limit_exceeded",
    "overflow",
    "window",
];
const ISTIO_KEYS: &[&str] = &[
    "source",
    "destination",
    "calls",
    "attempts_per_call",
    "attempts_at_least",
    "retries_exhausted",
    "window",
];
const LINKERD_KEYS: &[&str] = &[
    "source",
    "parent",
    "calls",
    "attempts_per_call",
    "attempts",
    "retries",
    "limit_exceeded",
    "overflow",
    "window",
];
const GRPC_KEYS: &[&str] = &[
    "source",
    "target",
    "calls",
    "attempts_per_call",
    "attempts",
    "retries",
    "window",
];
const SOURCES: &[&str] = &["traces", "envoy", "istio", "linkerd", "grpc"];
const SERVICE_KEYS: &[&str] = &["source", "server_spans", "p50", "p99"];

/// Adds every call's `observed:` to `t.observed`, in file order.
pub(super) fn read(f: Fields, root: &Node, t: &mut Topology) -> Result<(), LoadError> {
    let Some(services) = child(root, "services") else {
        return Ok(());
    };
    let Value::Map(entries) = &services.value else {
        return Ok(());
    };
    for (from, (_, service)) in entries.iter().enumerate() {
        if let Some((key, value)) = entry(service, "observed") {
            t.observed_latency.push(latency(f, from, key, value)?);
        }
        let Some(Value::Seq(calls)) = child(service, "calls").map(|c| &c.value) else {
            continue;
        };
        for (j, call) in calls.iter().enumerate() {
            let Some((key, value)) = entry(call, "observed") else {
                continue;
            };
            let to = t.services[from].calls[j].to;
            for item in f.list(value) {
                let mut o = one(f, item)?;
                o.from = from;
                o.to = to;
                o.pos = key.pos;
                t.observed.push(o);
            }
        }
    }
    Ok(())
}

fn entry<'a>(node: &'a Node, key: &str) -> Option<(&'a Node, &'a Node)> {
    let Value::Map(entries) = &node.value else {
        return None;
    };
    entries
        .iter()
        .find(|(k, _)| matches!(&k.value, Value::Str(s) if s == key))
        .map(|(k, v)| (k, v))
}

fn child<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    entry(node, key).map(|(_, v)| v)
}

fn count(f: Fields, m: &MapView, key: &str) -> Result<Option<u64>, LoadError> {
    m.get(key)
        .map(|v| f.int(v, key, 0, i128::from(u64::MAX)).map(|n| n as u64))
        .transpose()
}

fn attempts(f: Fields, m: &MapView, key: &str) -> Result<Option<u32>, LoadError> {
    m.get(key)
        .map(|v| f.int(v, key, 1, i128::from(u32::MAX)).map(|n| n as u32))
        .transpose()
}

fn one(f: Fields, node: &Node) -> Result<Observed, LoadError> {
    let Value::Map(_) = &node.value else {
        return Err(f.expected(
            node,
            "a mapping for `observed` (`{ source: traces, calls: N, attempts_per_call: X }`)",
        ));
    };
    let source = match child(node, "source") {
        Some(v) => {
            let s = f.str(v, "`source`")?;
            if !SOURCES.contains(&s) {
                return Err(f
                    .error(v.pos, format!("unknown observed source `{s}`"))
                    .with_help(
                        "use `traces` (spans), or who counted: `envoy`, `istio`, `linkerd`, `grpc`",
                    ));
            }
            s
        }
        None => {
            return Err(f
                .error(node.pos, "`observed` needs `source:`")
                .with_help("add `source: traces` or `source: envoy`, what the figures came from"));
        }
    };
    if let Some(kind) = CounterKind::from_source(source) {
        return counted(f, node, kind);
    }
    let m = f.map(node, "`observed` (traces)", TRACES_KEYS)?;
    let need = |key: &str| {
        f.error(m.pos, format!("`observed` from traces needs `{key}:`"))
            .with_help("write `calls:` (logical calls seen) and `attempts_per_call:` (their mean attempts)")
    };
    let calls = count(f, &m, "calls")?.ok_or_else(|| need("calls"))?;
    let mean_node = m
        .get("attempts_per_call")
        .ok_or_else(|| need("attempts_per_call"))?;
    let mean = f.number(mean_node, "attempts_per_call")?;
    if mean < 1.0 {
        return Err(f
            .error(
                mean_node.pos,
                format!("`attempts_per_call` is {mean}, below 1"),
            )
            .with_help("every call is at least its first attempt: write 1 or more"));
    }
    let least = mean.ceil().min(f64::from(u32::MAX)) as u32;
    let max = attempts(f, &m, "max_attempts")?.unwrap_or(least);
    if max < least {
        return Err(f
            .error(
                m.key_pos("max_attempts"),
                format!("`max_attempts` is {max}, below the mean attempts per call ({mean})"),
            )
            .with_help("the most attempts on one call is at least the mean: write the figure the traces showed"));
    }
    Ok(Observed {
        from: 0,
        to: 0,
        figures: CallFigures {
            calls,
            attempts_mean: mean,
            attempts_max: max,
            proxy_max: attempts(f, &m, "proxy_max")?.unwrap_or(1),
            client_max: attempts(f, &m, "client_max")?.unwrap_or(1),
            resend_max: attempts(f, &m, "resend_max")?.unwrap_or(1),
            failed_calls: count(f, &m, "failed_calls")?.unwrap_or(0),
        },
        pos: node.pos,
        counted: None,
    })
}

/// A proxy's counters: the figures follow from the requests and retries,
/// as `topology::merge` makes them from the metrics.
fn counted(f: Fields, node: &Node, kind: CounterKind) -> Result<Observed, LoadError> {
    let keys = match kind {
        CounterKind::Envoy => ENVOY_KEYS,
        CounterKind::Istio => ISTIO_KEYS,
        CounterKind::Linkerd => LINKERD_KEYS,
        CounterKind::Grpc => GRPC_KEYS,
    };
    let source = kind.source();
    let m = f.map(node, &format!("`observed` ({source})"), keys)?;
    let (attempts_key, retries_key) = kind.keys();
    let need = |key: &str| {
        let help = match kind {
            CounterKind::Envoy => "write `upstream_requests:` (upstream_rq_total) and `retries:` (upstream_rq_retry) as the counters said".to_owned(),
            _ => format!("write `{attempts_key}:` and `{retries_key}:` as `retrylint import` wrote them"),
        };
        f.error(m.pos, format!("`observed` from {source} needs `{key}:`"))
            .with_help(help)
    };
    let attempts = count(f, &m, attempts_key)?.ok_or_else(|| need(attempts_key))?;
    let retries = count(f, &m, retries_key)?.ok_or_else(|| need(retries_key))?;
    // As the messages word them: `10 upstream requests less 4 retries`.
    let (what, retried) = match kind {
        CounterKind::Envoy => ("upstream requests", "retries"),
        CounterKind::Istio => ("attempts", "retries exhausted"),
        CounterKind::Linkerd | CounterKind::Grpc => ("attempts", "retries"),
    };
    if retries >= attempts && attempts > 0 {
        return Err(f
            .error(
                m.key_pos(retries_key),
                format!("{retries} {retried} among {attempts} {what} leave no first attempt"),
            )
            .with_help(format!("`{attempts_key}` counts every attempt, retries included: it is larger than `{retries_key}`")));
    }
    let requests = attempts.saturating_sub(retries);
    let figures = CallFigures::counted(requests, attempts);
    let mean = figures.attempts_mean;
    if let Some(calls) = count(f, &m, "calls")?
        && calls != requests
    {
        return Err(f
            .error(
                m.key_pos("calls"),
                format!("`calls` is {calls}, but {attempts} {what} less {retries} {retried} are {requests}"),
            )
            .with_help(format!("write `calls: {requests}`, or leave it out")));
    }
    if let Some(v) = m.get("attempts_per_call") {
        let written = f.number(v, "attempts_per_call")?;
        if (written - mean).abs() > 0.0051 {
            return Err(f
                .error(
                    v.pos,
                    format!("`attempts_per_call` is {written}, but the counters give {mean:.2}"),
                )
                .with_help(format!(
                    "leave it out: it follows from `{attempts_key}` and `{retries_key}`"
                )));
        }
    }
    let subject = kind.subject();
    let cluster = match m.get(subject) {
        Some(v) => f.str(v, &format!("`{subject}`"))?.to_owned(),
        None => String::new(),
    };
    let window = match m.get("window") {
        Some(v) => f.str(v, "`window`")?.to_owned(),
        None => crate::external::metrics::SINCE_START.to_owned(),
    };
    Ok(Observed {
        from: 0,
        to: 0,
        figures,
        pos: node.pos,
        counted: Some(Counted {
            kind,
            cluster,
            attempts,
            unattached: count(f, &m, "unattached")?,
            retries,
            limit_exceeded: count(f, &m, "limit_exceeded")?,
            overflow: count(f, &m, "overflow")?,
            window,
        }),
    })
}

/// A service's `observed:` response time.
fn latency(
    f: Fields,
    service: usize,
    key: &Node,
    node: &Node,
) -> Result<ObservedLatency, LoadError> {
    let m = f.map(node, "a service's `observed`", SERVICE_KEYS)?;
    match m.get("source") {
        Some(v) if f.str(v, "`source`")? == "traces" => {}
        Some(v) => {
            return Err(f
                .error(v.pos, "a service's `observed` comes from traces")
                .with_help("write `source: traces`: response times are read from server spans"));
        }
        None => {
            return Err(f
                .error(m.pos, "`observed` needs `source:`")
                .with_help("add `source: traces`, what the figures came from"));
        }
    }
    let need = |k: &str| {
        f.error(m.pos, format!("a service's `observed` needs `{k}:`"))
            .with_help(
                "write `p50:` and `p99:`, the server spans' durations (`p50: 12ms, p99: 48ms`)",
            )
    };
    let p50 = f.duration(m.get("p50").ok_or_else(|| need("p50"))?, "p50")?;
    let p99_node = m.get("p99").ok_or_else(|| need("p99"))?;
    let p99 = f.duration(p99_node, "p99")?;
    if p99 < p50 {
        return Err(f.error(p99_node.pos, "`p99` is below `p50`").with_help(
            "the 99th percentile is at least the median: write the figures the traces gave",
        ));
    }
    Ok(ObservedLatency {
        service,
        spans: count(f, &m, "server_spans")?.unwrap_or(0),
        p50,
        p99,
        pos: key.pos,
    })
}
