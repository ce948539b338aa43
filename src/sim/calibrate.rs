//! `simulate --calibrate`: the simulated run set beside what production
//! showed, so the user sees how far the model is from it. Per call, the
//! attempts per call traces or a proxy's counters observed
//! (`Topology::observed`) against the simulated ones; per service, the
//! response time its server spans showed (`Topology::observed_latency`)
//! against the simulated one. Each with the ratio simulated / observed: 1
//! is a model that reproduces production, 0.5 one that shows half of it.
//!
//! The simulated figure is made the way the observed one was counted:
//!
//! - from traces, attempts per logical call: the attempts the call's
//!   innermost layer sent over the requests its application layer was
//!   asked to send;
//! - from a proxy's counters, attempts per request the proxy took: the
//!   innermost layer's attempts over the application layer's attempts
//!   (each of the caller's attempts is one request to its sidecar).

use serde::Serialize;

use crate::run::RunReport;
use crate::topology::{CounterKind, Topology};

/// The calibration of one simulated run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    pub scenario: String,
    pub seed: u64,
    /// Trials simulated.
    pub trials: u64,
    pub(crate) calls: Vec<CallRow>,
    pub(crate) services: Vec<ServiceRow>,
    /// The row whose ratio is furthest from 1, in words; `None` when
    /// nothing could be compared.
    pub furthest: Option<String>,
}

/// One observed call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct CallRow {
    pub from: String,
    pub to: String,
    /// `traces`, or who counted: `envoy`, `istio`, `linkerd`, `grpc`.
    pub source: &'static str,
    /// Logical calls (traces) or requests (counters) observed.
    pub observed_calls: u64,
    pub observed_attempts_per_call: f64,
    /// The observed figure is a lower bound (Istio's `URX` counts): a
    /// simulated figure above it is not a disagreement.
    pub observed_at_least: bool,
    /// What the simulated figure is a ratio over, as the observed one:
    /// the application layer's requests (traces) or attempts (counters).
    pub simulated_calls: u64,
    /// `None` when the simulation sent no request on the call.
    pub simulated_attempts_per_call: Option<f64>,
    /// Simulated over observed.
    pub ratio: Option<f64>,
}

/// One service whose server spans were seen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ServiceRow {
    pub service: String,
    pub observed_spans: u64,
    pub observed_p50_ms: f64,
    pub observed_p99_ms: f64,
    /// `None` when the simulation sent the service nothing.
    pub simulated_p50_ms: Option<f64>,
    pub simulated_p99_ms: Option<f64>,
    pub(crate) p50_ratio: Option<f64>,
    pub p99_ratio: Option<f64>,
}

fn ratio(simulated: Option<f64>, observed: f64) -> Option<f64> {
    simulated.filter(|_| observed > 0.0).map(|s| s / observed)
}

/// Sets `run` (a simulation of `t`) beside what `t` observed.
pub fn calibrate(t: &Topology, run: &RunReport) -> Calibration {
    // In the topology's order, whichever order the sources gave them in.
    let mut observed: Vec<_> = t.observed.iter().collect();
    observed.sort_by_key(|o| (o.from, call_index(t, o.from, o.to)));
    let mut latency: Vec<_> = t.observed_latency.iter().collect();
    latency.sort_by_key(|l| l.service);
    let mut calls = Vec::with_capacity(observed.len());
    for o in observed {
        let from = &t.services[o.from].name;
        let to = &t.services[o.to].name;
        let layers = run
            .services
            .iter()
            .find(|s| &s.service == from)
            .and_then(|s| s.calls.iter().find(|c| &c.to == to))
            .map(|c| c.layers.as_slice())
            .unwrap_or_default();
        let (source, over) = match (&o.counted, layers.first()) {
            (None, first) => ("traces", first.map_or(0, |l| l.requests)),
            // A gRPC client's counters are the caller's own layer: per
            // call, as traces are.
            (Some(c), first) if c.kind == CounterKind::Grpc => {
                (c.kind.source(), first.map_or(0, |l| l.requests))
            }
            // A proxy's requests are the caller's attempts.
            (Some(c), first) => (c.kind.source(), first.map_or(0, |l| l.attempts)),
        };
        // What left the last layer the observer sees: a gRPC client sees
        // its own retries, not a sidecar's below it.
        let seen = match &o.counted {
            Some(c) if c.kind == CounterKind::Grpc => t.services[o.from]
                .calls
                .iter()
                .find(|c| c.to == o.to)
                .filter(|c| c.layers.len() == layers.len())
                .and_then(|c| c.layers.iter().rposition(|l| l.seen_by_grpc_client()))
                .and_then(|i| layers.get(i)),
            _ => None,
        };
        let sent = seen.or(layers.last()).map_or(0, |l| l.attempts);
        let simulated = (over > 0).then(|| sent as f64 / over as f64);
        calls.push(CallRow {
            from: from.clone(),
            to: to.clone(),
            source,
            observed_calls: o.figures.calls,
            observed_attempts_per_call: o.figures.attempts_mean,
            observed_at_least: o.counted.as_ref().is_some_and(|c| c.lower_bound()),
            simulated_calls: over,
            simulated_attempts_per_call: simulated,
            ratio: ratio(simulated, o.figures.attempts_mean),
        });
    }
    let mut services = Vec::with_capacity(latency.len());
    for l in latency {
        let name = &t.services[l.service].name;
        let simulated = run
            .services
            .iter()
            .find(|s| &s.service == name)
            .filter(|s| s.received > 0)
            .map(|s| (s.latency_ms.p50, s.latency_ms.p99));
        let (p50, p99) = (l.p50.as_secs_f64() * 1e3, l.p99.as_secs_f64() * 1e3);
        services.push(ServiceRow {
            service: name.clone(),
            observed_spans: l.spans,
            observed_p50_ms: p50,
            observed_p99_ms: p99,
            simulated_p50_ms: simulated.map(|s| s.0),
            simulated_p99_ms: simulated.map(|s| s.1),
            p50_ratio: ratio(simulated.map(|s| s.0), p50),
            p99_ratio: ratio(simulated.map(|s| s.1), p99),
        });
    }
    let furthest = furthest(&calls, &services);
    Calibration {
        scenario: run.fault.clone(),
        seed: run.seed,
        trials: run.trials.unwrap_or(1),
        calls,
        services,
        furthest,
    }
}

/// Where the call `from → to` is among its caller's calls.
fn call_index(t: &Topology, from: usize, to: usize) -> usize {
    t.services[from]
        .calls
        .iter()
        .position(|c| c.to == to)
        .unwrap_or(usize::MAX)
}

/// How far a ratio is from 1, either way: 0.5 and 2 are as far.
fn distance(r: f64) -> f64 {
    if r > 0.0 { r.ln().abs() } else { f64::INFINITY }
}

fn furthest(calls: &[CallRow], services: &[ServiceRow]) -> Option<String> {
    let mut best: Option<(f64, String)> = None;
    let mut consider = |r: Option<f64>, text: &dyn Fn(f64) -> String| {
        if let Some(r) = r
            && best.as_ref().is_none_or(|(d, _)| distance(r) > *d)
        {
            best = Some((distance(r), text(r)));
        }
    };
    for c in calls {
        // Above a lower bound, the model may be right.
        let ratio = c.ratio.filter(|r| !(c.observed_at_least && *r > 1.0));
        consider(ratio, &|r| {
            format!(
                "{} → {}: the model makes {:.2} attempts per call where production showed {}{:.2} ({:.2}×)",
                c.from,
                c.to,
                c.simulated_attempts_per_call.unwrap_or(0.0),
                if c.observed_at_least { "at least " } else { "" },
                c.observed_attempts_per_call,
                r
            )
        });
    }
    for s in services {
        consider(s.p99_ratio, &|r| {
            format!(
                "{}: the model answers in {:.1} ms at p99 where production took {:.1} ms ({:.2}×)",
                s.service,
                s.simulated_p99_ms.unwrap_or(0.0),
                s.observed_p99_ms,
                r
            )
        });
    }
    best.map(|(_, text)| text)
}
