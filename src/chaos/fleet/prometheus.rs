//! One `serve` process's counters in the Prometheus text exposition format
//! (version 0.0.4), written by hand: a few dozen lines of fixed families
//! rendered from the same snapshot `/retrylint/counters` sends as JSON, so
//! the two cannot disagree — a registry crate (`prometheus-client`) would
//! keep a second copy of every counter, bumped on the hot path beside the
//! harness's own.
//!
//! Families (every sample labelled with `service`; layer samples with the
//! callee, the call's index and the layer's name):
//! `retrylint_run_info`, `retrylint_run_number`, `retrylint_run_running`,
//! `retrylint_run_elapsed_seconds`, `retrylint_fault_target`,
//! `retrylint_fault_phase` (1-based phase in force here, 0 none): gauges a
//! Grafana panel draws the storm against. `retrylint_received_total`,
//! `retrylint_responses_total{status}`, `retrylint_dropped_total{reason}`,
//! `retrylint_duplicates_total`, `retrylint_queue_rejected_total`,
//! `retrylint_layer_requests_total`, `retrylint_attempts_total`,
//! `retrylint_retries_total{reason}`, `retrylint_budget_refusals_total`,
//! `retrylint_retry_after_waits_total`; and `retrylint_response_seconds`, a
//! histogram of the service's answers (buckets 0.5 ms … 10 s). Counters
//! restart at zero with each run (`retrylint_run_number` goes up), which
//! Prometheus reads as a counter reset.

use std::fmt::Write;
use std::time::Duration;

use crate::run::Layout;
use crate::run::latency::Latency;
use crate::run::wire::Snapshot;
use crate::topology::{ServiceId, Topology};

/// The content type of the text format.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Upper bounds of the latency buckets, in seconds: from well under one
/// hop's cost to a long timeout.
pub(crate) const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// What one exposition shows.
pub(crate) struct Exposition<'a> {
    pub topology: &'a Topology,
    pub layout: &'a Layout,
    pub service: ServiceId,
    pub snapshot: &'a Snapshot,
    /// Runs started so far.
    pub run: u64,
    pub running: bool,
    /// Since the run's start signal.
    pub elapsed: Duration,
    pub fault: &'a str,
    /// The scenario strikes this service.
    pub target: bool,
    /// The phase in force here now: its index and kind.
    pub phase: Option<(usize, &'a str)>,
}

/// A label value with `\`, `"` and newlines escaped.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{k}=\"{}\"", esc(v));
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// A bucket bound or value as Prometheus writes floats.
fn float(x: f64) -> String {
    if x.is_infinite() {
        "+Inf".into()
    } else {
        format!("{x}")
    }
}

/// The exposition of `e`.
pub(crate) fn render(e: &Exposition<'_>) -> String {
    let t = e.topology;
    let sid = e.service;
    let name = t.services[sid].name.as_str();
    let svc = [("service", name)];
    let mut out = String::with_capacity(4096);

    family(
        &mut out,
        "retrylint_run_info",
        "gauge",
        "The service and its fault scenario.",
    );
    sample(
        &mut out,
        "retrylint_run_info",
        &[("service", name), ("fault", e.fault)],
        1,
    );
    family(
        &mut out,
        "retrylint_run_number",
        "gauge",
        "Runs started so far (0: waiting for the first start).",
    );
    sample(&mut out, "retrylint_run_number", &svc, e.run);
    family(
        &mut out,
        "retrylint_run_running",
        "gauge",
        "1 while a run is going on.",
    );
    sample(&mut out, "retrylint_run_running", &svc, u8::from(e.running));
    family(
        &mut out,
        "retrylint_run_elapsed_seconds",
        "gauge",
        "Time since the run's start signal.",
    );
    sample(
        &mut out,
        "retrylint_run_elapsed_seconds",
        &svc,
        float(e.elapsed.as_secs_f64()),
    );
    family(
        &mut out,
        "retrylint_fault_target",
        "gauge",
        "1 when the fault scenario strikes this service.",
    );
    sample(&mut out, "retrylint_fault_target", &svc, u8::from(e.target));
    family(
        &mut out,
        "retrylint_fault_phase",
        "gauge",
        "The fault phase in force here (1-based), 0 when none.",
    );
    match e.phase {
        Some((i, kind)) => sample(
            &mut out,
            "retrylint_fault_phase",
            &[("service", name), ("kind", kind)],
            i + 1,
        ),
        None => sample(
            &mut out,
            "retrylint_fault_phase",
            &[("service", name), ("kind", "none")],
            0,
        ),
    }

    let c = e
        .snapshot
        .counts
        .services
        .get(sid)
        .cloned()
        .unwrap_or_default();
    family(
        &mut out,
        "retrylint_received_total",
        "counter",
        "Requests that reached the service (refused connections included).",
    );
    sample(&mut out, "retrylint_received_total", &svc, c.received);
    family(
        &mut out,
        "retrylint_responses_total",
        "counter",
        "Answers by HTTP status.",
    );
    let mut statuses = c.statuses.clone();
    statuses.sort_unstable();
    for (status, n) in statuses {
        sample(
            &mut out,
            "retrylint_responses_total",
            &[("service", name), ("status", &status.to_string())],
            n,
        );
    }
    family(
        &mut out,
        "retrylint_dropped_total",
        "counter",
        "Requests closed without an answer.",
    );
    for (reason, n) in [("refused", c.refused), ("reset", c.reset), ("hang", c.hang)] {
        sample(
            &mut out,
            "retrylint_dropped_total",
            &[("service", name), ("reason", reason)],
            n,
        );
    }
    family(
        &mut out,
        "retrylint_duplicates_total",
        "counter",
        "Non-idempotent requests executed again without an idempotency key.",
    );
    sample(&mut out, "retrylint_duplicates_total", &svc, c.duplicates);
    family(
        &mut out,
        "retrylint_queue_rejected_total",
        "counter",
        "Requests a full queue turned away.",
    );
    sample(&mut out, "retrylint_queue_rejected_total", &svc, c.rejected);

    layers(&mut out, e);

    let empty = Latency::default();
    let latency = e.snapshot.latency.get(sid).unwrap_or(&empty);
    histogram(&mut out, "retrylint_response_seconds", name, latency);
    out
}

/// One figure of a layer's counts.
type LayerFigure = fn(&crate::run::counts::LayerCount) -> u64;

/// The counters of every retry layer of the service's calls.
fn layers(out: &mut String, e: &Exposition<'_>) {
    let t = e.topology;
    let sid = e.service;
    let s = &t.services[sid];
    let mut rows = Vec::new();
    for (ci, call) in s.calls.iter().enumerate() {
        for (li, layer) in call.layers.iter().enumerate() {
            let count = e
                .snapshot
                .counts
                .layers
                .get(e.layout.slot(sid, ci, li))
                .cloned()
                .unwrap_or_default();
            rows.push((
                t.services[call.to].name.as_str(),
                ci.to_string(),
                layer.name.as_str(),
                count,
            ));
        }
    }
    let families: [(&str, &str, LayerFigure); 5] = [
        (
            "retrylint_layer_requests_total",
            "Logical requests a retry layer sent on.",
            |l| l.requests,
        ),
        (
            "retrylint_attempts_total",
            "Attempts a retry layer made.",
            |l| l.attempts,
        ),
        (
            "retrylint_retries_total",
            "Retries a retry layer made, by the outcome retried.",
            |l| l.retries,
        ),
        (
            "retrylint_budget_refusals_total",
            "Retries a retry budget refused.",
            |l| l.budget_refusals,
        ),
        (
            "retrylint_retry_after_waits_total",
            "Retries that waited as a Retry-After header said.",
            |l| l.retry_after_waits,
        ),
    ];
    for (metric, help, get) in families {
        family(out, metric, "counter", help);
        for (callee, ci, layer, count) in &rows {
            let base = [
                ("service", s.name.as_str()),
                ("callee", *callee),
                ("call", ci.as_str()),
                ("layer", *layer),
            ];
            if metric == "retrylint_retries_total" {
                let mut reasons: Vec<(String, u64)> = count
                    .by_reason
                    .iter()
                    .map(|(o, n)| (o.to_string(), *n))
                    .collect();
                reasons.sort();
                for (reason, n) in reasons {
                    let mut l = base.to_vec();
                    l.push(("reason", &reason));
                    sample(out, metric, &l, n);
                }
            } else {
                sample(out, metric, &base, get(count));
            }
        }
    }
}

/// `latency` as a Prometheus histogram: cumulative buckets, `_sum` (each
/// sample at its histogram bucket's value: within 0.1 %) and `_count`.
fn histogram(out: &mut String, metric: &str, service: &str, latency: &Latency) {
    family(
        out,
        metric,
        "histogram",
        "How long the service took to answer.",
    );
    let (values, _, _) = latency.to_parts();
    let mut sum_us: u128 = 0;
    let mut count: u64 = 0;
    for &(v, n) in &values {
        sum_us += u128::from(v) * u128::from(n);
        count += n;
    }
    for le in BUCKETS.iter().copied().chain([f64::INFINITY]) {
        let below: u64 = values
            .iter()
            .filter(|(v, _)| (*v as f64) <= le * 1e6)
            .map(|(_, n)| n)
            .sum();
        let le = float(le);
        sample(
            out,
            &format!("{metric}_bucket"),
            &[("service", service), ("le", &le)],
            below,
        );
    }
    sample(
        out,
        &format!("{metric}_sum"),
        &[("service", service)],
        float(sum_us as f64 / 1e6),
    );
    sample(
        out,
        &format!("{metric}_count"),
        &[("service", service)],
        count,
    );
}
