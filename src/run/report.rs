//! The result of one chaos run or one simulation: the chaos/simulate JSON
//! contract (docs/json.md) (`fault`, `seed`, `services[]`, `end_to_end`) plus the detail a
//! game day wants (attempts and retries per layer, budget refusals,
//! Retry-After waits, the attempt timeline at the fault target, histograms).
//!
//! Plain data: producers fill it in, reporters format it, nobody computes in
//! between. Fields beyond the contract are skipped when empty or `None`, so a
//! consumer of the contract sees the same shape from both producers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// The fault scenario's name.
    pub fault: String,
    pub seed: u64,
    /// `chaos` or `simulate`.
    #[serde(default)]
    pub mode: String,
    /// The topology's name.
    #[serde(default)]
    pub topology: String,
    /// What the scenario does, for readers of the report.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fault_description: String,
    /// The scenario's target as written (`leaves`, `db`, …).
    #[serde(default)]
    pub target: String,
    #[serde(default)]
    pub load: LoadSummary,
    /// One row per service, in the topology's order.
    pub services: Vec<ServiceReport>,
    pub end_to_end: EndToEnd,
    /// Attempts per time bucket arriving at the fault target(s).
    #[serde(default)]
    pub timeline: Timeline,
    /// `--expect` results, filled in by whoever evaluates them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<ExpectOutcome>,
    /// Simulator: the number of trials aggregated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<u64>,
    /// Chaos: where every server listened (all 127.0.0.1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<Listener>,
    /// Wall-clock (chaos) or virtual (simulate) length of the run, in ms.
    #[serde(default)]
    pub elapsed_ms: f64,
    /// The run was stopped early (Ctrl-C); the figures cover what happened.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Goodput over time and whether the run recovered after its fault:
    /// present when a service queues or the scenario surges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<super::goodput::Goodput>,
    /// Simulator, for a topology with breakers: attempts with them and in
    /// the same run without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breakers: Option<BreakerEffect>,
    /// Chaos: where the harness itself could not keep up, so the figures
    /// describe the load generator's machine as much as the policies.
    /// Absent when it kept up.
    #[serde(default, skip_serializing_if = "Harness::kept_up")]
    pub harness: Harness,
}

/// What the circuit breakers saved: attempts over every service with them,
/// and in the same scenario, load and seeds without them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BreakerEffect {
    pub attempts: u64,
    pub attempts_without_breakers: u64,
    pub saved: u64,
}

impl BreakerEffect {
    /// Attempts received over every service, in a run `with` breakers and
    /// the same run `without` them.
    pub fn between(with: &RunReport, without: &RunReport) -> Self {
        let total = |r: &RunReport| r.services.iter().map(|s| s.received).sum::<u64>();
        let (with, without) = (total(with), total(without));
        BreakerEffect {
            attempts: with,
            attempts_without_breakers: without,
            saved: without.saturating_sub(with),
        }
    }
}

/// How well the chaos harness kept up with the run it was asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Harness {
    /// Open loop: user requests sent after their intended time because every
    /// slot for requests in flight was taken (their latency still counts
    /// from the intended time).
    #[serde(default)]
    pub late: u64,
    /// Open loop: user requests that were due before the horizon but never
    /// got a slot; not in `end_to_end.requests`.
    #[serde(default)]
    pub not_sent: u64,
    /// The bound on user requests in flight (`--max-in-flight`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u64>,
    /// Connections or accepts that failed because the process ran out of
    /// file descriptors: failures no fault injected.
    #[serde(default)]
    pub descriptor_errors: u64,
    /// The descriptor limit and the run's estimated need.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptors: Option<Descriptors>,
    /// What a reader must know before trusting the figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// `drive`: services whose counters are not in the report — their
    /// process could not be read, or was running another run by then. Their
    /// rows count only what their callers saw; `drive` exits 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncollected: Vec<String>,
}

impl Harness {
    /// Nothing to report: the harness kept up.
    pub(crate) fn kept_up(&self) -> bool {
        self.late == 0
            && self.not_sent == 0
            && self.descriptor_errors == 0
            && self.warnings.is_empty()
            && self.uncollected.is_empty()
    }
}

/// Open file descriptors: the process's limit and what the run may need.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Descriptors {
    pub limit: u64,
    pub estimated: u64,
}

/// The load that drove the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadSummary {
    /// Open loop: user requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Closed loop: concurrent callers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// `--requests`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// The horizon: no attempt starts at or after it.
    /// `None`: no horizon (a simulation bounded by `--requests` alone).
    pub duration_ms: Option<f64>,
    /// The entry the user requests went to, when chosen with `--entry`
    /// (a topology with several entries needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceReport {
    pub service: String,
    /// Requests that arrived (a refused connection counts as an arrival at a
    /// service that is down).
    pub received: u64,
    pub amplification: Amplification,
    /// Time from arrival to answer, as the service saw it.
    pub latency_ms: LatencyMs,
    /// Answers by status code; `"200"` is always present.
    pub statuses: BTreeMap<String, u64>,
    /// Repeated executions of the same logical non-idempotent request without
    /// an idempotency key.
    pub duplicates: u64,
    /// Arrivals that got no HTTP answer: `refused`, `reset`, `hang`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dropped: BTreeMap<String, u64>,
    /// The fault scenario targets this service.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fault_target: bool,
    /// The service's outgoing calls, in file order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallReport>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<Bucket>,
    /// Simulator over trials: the spread of `received` (which is the median).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received_quantiles: Option<Spread>,
    /// Requests served after their caller had given up.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub wasted: u64,
    /// A service with workers and a queue: what the queue did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueReport>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a service's queue did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueReport {
    pub workers: u32,
    pub capacity: u32,
    /// Turned away, the queue full.
    pub rejected: u64,
    /// Dropped unserved, their deadline passed (`drop_expired`).
    pub expired: u64,
    /// The deepest the queue got.
    pub max_depth: u64,
    /// Mean time a request waited for a worker, ms (those that got one).
    pub mean_wait_ms: f64,
    /// Share of the workers' time spent working, over the run.
    pub utilisation: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Amplification {
    /// Received ÷ user requests.
    pub measured: f64,
    /// `check`'s static worst case (`crate::prediction::worst_case`).
    pub predicted: f64,
    /// `predicted` is beyond u128 and only approximate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub saturated: bool,
    /// `predicted` is an estimate, not a bound: a layer on the way counts
    /// the attempts that fit its time at the mean waits (full jitter can
    /// wait nothing), so a run may measure more.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimate: bool,
}

impl Amplification {
    /// Measured and predicted differ by more than rounding.
    pub fn mismatch(&self) -> bool {
        (self.measured - self.predicted).abs() > 1e-9 * self.predicted.abs().max(1.0)
    }
}

/// Latency quantiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub(crate) p999: f64,
    pub max: f64,
}

/// The spread of a figure over simulated trials.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub mean: f64,
}

/// One bar of a latency histogram: samples ≤ `le_ms` and above the previous bar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub le_ms: f64,
    pub count: u64,
}

/// A call and what each of its retry layers sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallReport {
    pub to: String,
    pub method: String,
    /// Outermost first: `app`, then each `via` layer.
    pub layers: Vec<LayerReport>,
}

/// What one retry layer did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LayerReport {
    pub layer: String,
    /// Logical requests the layer was asked to send.
    pub requests: u64,
    /// Attempts it sent, first attempts included.
    pub attempts: u64,
    /// Attempts after the first.
    pub retries: u64,
    /// Retries by the outcome retried: `"503"`, `"timeout"`, `"reset"`, …
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retries_by_reason: BTreeMap<String, u64>,
    /// Retries the budget refused.
    pub budget_refusals: u64,
    /// Retries whose wait came from Retry-After.
    pub retry_after_waits: u64,
    /// Why requests stopped: `succeeded`, `attempts_exhausted`, `not_retryable`,
    /// `budget_exhausted`, `deadline_exceeded`, `horizon`, `circuit_open`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stops: BTreeMap<String, u64>,
    /// The layer's circuit breaker, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaker: Option<BreakerReport>,
    /// The layer's hedging, when it hedges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hedging: Option<HedgingReport>,
}

/// What a layer's circuit breaker did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BreakerReport {
    /// Requests (position outside) or attempts (inside) it rejected.
    pub short_circuited: u64,
    pub opened: u64,
    pub half_opened: u64,
    pub closed: u64,
    /// The first transitions of the run (a simulation's first trial), in
    /// time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transitions: Vec<TransitionAt>,
}

/// A breaker changed state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TransitionAt {
    pub at_ms: f64,
    /// `open`, `half_open` or `closed`.
    pub to: String,
}

/// What a layer's hedging did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HedgingReport {
    /// Copies sent after the first.
    pub hedges: u64,
    /// Copies cancelled because another answered first.
    pub cancelled: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndToEnd {
    /// User requests sent.
    pub requests: u64,
    pub succeeded: u64,
    pub failed: u64,
    /// From the intended send time (open loop) or the send (closed loop) to
    /// the final answer, client-layer retries included.
    pub latency_ms: LatencyMs,
    /// Final outcomes by status or failure: `"200"`, `"503"`, `"timeout"`, …
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub outcomes: BTreeMap<String, u64>,
    /// The `client:` layer in front of the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<LayerReport>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<Bucket>,
    /// Time of the last success from the start of the run; over trials, its
    /// spread. `null` when nothing succeeded: the key is always there.
    #[serde(default)]
    pub last_success_ms: Option<Spread>,
    /// Simulator: share of trials in which every user request succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_succeeded_ratio: Option<f64>,
}

impl EndToEnd {
    /// Succeeded ÷ requests; 1 when nothing was sent.
    pub fn success_ratio(&self) -> f64 {
        if self.requests == 0 {
            1.0
        } else {
            self.succeeded as f64 / self.requests as f64
        }
    }
}

/// Attempts per fixed time bucket arriving at the fault target(s), so a retry
/// wave shows against a smooth stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The services counted, comma-separated.
    pub target: String,
    pub(crate) bucket_ms: u64,
    pub attempts: Vec<u64>,
}

/// A server of a chaos run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Listener {
    /// A service, or `caller→callee/layer` for a `via` proxy.
    pub name: String,
    pub addr: String,
}

/// One `--expect` gate, evaluated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpectOutcome {
    /// As written.
    pub expr: String,
    pub held: bool,
    /// The measured value, in `unit`.
    pub measured: f64,
    /// The threshold, in `unit`.
    pub threshold: f64,
    /// `ms` for latencies, empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
}

impl RunReport {
    pub fn service(&self, name: &str) -> Option<&ServiceReport> {
        self.services.iter().find(|s| s.service == name)
    }

    /// The fault's target as written, when it struck any service; `None`
    /// for a baseline run.
    pub fn struck(&self) -> Option<&str> {
        self.services
            .iter()
            .any(|s| s.fault_target)
            .then_some(self.target.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_the_contract_shape() {
        let mut statuses = BTreeMap::new();
        statuses.insert("200".to_owned(), 0);
        statuses.insert("503".to_owned(), 6400);
        let r = RunReport {
            fault: "503-burst".into(),
            seed: 42,
            services: vec![ServiceReport {
                service: "db".into(),
                received: 6400,
                amplification: Amplification {
                    measured: 64.0,
                    predicted: 64.0,
                    saturated: false,
                    estimate: false,
                },
                statuses,
                ..Default::default()
            }],
            end_to_end: EndToEnd {
                requests: 100,
                failed: 100,
                ..Default::default()
            },
            ..Default::default()
        };
        let v: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(v["fault"], "503-burst");
        assert_eq!(v["seed"], 42);
        let db = &v["services"][0];
        assert_eq!(db["received"], 6400);
        assert_eq!(db["amplification"]["measured"], 64.0);
        assert_eq!(db["statuses"]["503"], 6400);
        assert_eq!(db["duplicates"], 0);
        for q in ["p50", "p90", "p99", "p999", "max"] {
            assert!(db["latency_ms"][q].is_number());
            assert!(v["end_to_end"]["latency_ms"][q].is_number());
        }
        assert_eq!(v["end_to_end"]["requests"], 100);
        assert!(db.get("received_quantiles").is_none());
        assert!(v["end_to_end"].get("all_succeeded_ratio").is_none());
        // Nothing succeeded here: the key is there, and null.
        assert!(v["end_to_end"]["last_success_ms"].is_null());
        assert!(v["end_to_end"].get("last_success_ms").is_some());
        let back: RunReport = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }
}
