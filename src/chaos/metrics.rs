//! Counters of one chaos run: per service (received, statuses, dropped,
//! duplicates, latency), per retry layer (attempts, retries by reason, budget
//! refusals, Retry-After waits, stops), end to end, and the attempt timeline at
//! the fault target. Turned into the plain `RunReport` parts at the end.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::context::lock;
use crate::policy::{Outcome, Stop};
use crate::run::{CallReport, EndToEnd, Latency, LayerReport, ServiceReport, Spread, Timeline};
use crate::topology::{ServiceId, Topology};

/// Width of a timeline bucket.
pub(crate) const BUCKET: Duration = Duration::from_millis(100);

/// Where each retry layer's counters live: slot 0 is the client layer, then
/// every layer of every call in file order.
pub(crate) struct Layout {
    /// `calls[service][call][layer]` → slot.
    pub calls: Vec<Vec<Vec<usize>>>,
    pub slots: usize,
}

impl Layout {
    pub const CLIENT: usize = 0;

    pub fn new(t: &Topology) -> Self {
        let mut next = 1;
        let calls = t
            .services
            .iter()
            .map(|s| {
                s.calls
                    .iter()
                    .map(|c| {
                        (0..c.layers.len())
                            .map(|_| {
                                next += 1;
                                next - 1
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Layout { calls, slots: next }
    }
}

#[derive(Default)]
struct ServiceStats {
    received: u64,
    statuses: BTreeMap<u16, u64>,
    dropped: BTreeMap<&'static str, u64>,
    duplicates: u64,
    latency: Latency,
    /// Logical non-idempotent requests executed without an idempotency key.
    executed: HashSet<u64>,
}

/// The counters of one retry layer: atomics on the hot path, a map only for
/// retries (which are rarer than attempts).
#[derive(Default)]
struct LayerStats {
    requests: AtomicU64,
    attempts: AtomicU64,
    retries: AtomicU64,
    budget_refusals: AtomicU64,
    retry_after_waits: AtomicU64,
    /// Indexed like `STOPS`.
    stops: [AtomicU64; STOPS.len()],
    by_reason: Mutex<BTreeMap<Outcome, u64>>,
}

const STOPS: [&str; 6] = [
    "succeeded",
    "not_retryable",
    "attempts_exhausted",
    "budget_exhausted",
    "deadline_exceeded",
    "horizon",
];

impl LayerStats {
    fn report(&self, name: &str) -> LayerReport {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        LayerReport {
            layer: name.to_owned(),
            requests: get(&self.requests),
            attempts: get(&self.attempts),
            retries: get(&self.retries),
            retries_by_reason: lock(&self.by_reason)
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            budget_refusals: get(&self.budget_refusals),
            retry_after_waits: get(&self.retry_after_waits),
            stops: STOPS
                .iter()
                .zip(&self.stops)
                .filter(|(_, n)| get(n) > 0)
                .map(|(k, n)| ((*k).to_owned(), get(n)))
                .collect(),
        }
    }
}

#[derive(Default)]
struct EndToEndStats {
    requests: u64,
    succeeded: u64,
    /// `None`: unfinished when the run ended.
    outcomes: BTreeMap<Option<Outcome>, u64>,
    latency: Latency,
    last_success: Option<Duration>,
}

pub(crate) struct Metrics {
    services: Vec<Mutex<ServiceStats>>,
    layers: Vec<LayerStats>,
    e2e: Mutex<EndToEndStats>,
    timeline: Mutex<Vec<u64>>,
    targets: Vec<bool>,
}

/// A stop reason as reports name it.
pub(crate) fn stop_name(why: Stop, by_horizon: bool) -> &'static str {
    match why {
        Stop::Succeeded => "succeeded",
        Stop::NotRetryable => "not_retryable",
        Stop::AttemptsExhausted => "attempts_exhausted",
        Stop::BudgetExhausted => "budget_exhausted",
        Stop::DeadlineExceeded if by_horizon => "horizon",
        Stop::DeadlineExceeded => "deadline_exceeded",
    }
}

impl Metrics {
    pub fn new(services: usize, slots: usize, targets: Vec<bool>) -> Self {
        Metrics {
            services: (0..services).map(|_| Mutex::default()).collect(),
            layers: (0..slots).map(|_| LayerStats::default()).collect(),
            e2e: Mutex::default(),
            timeline: Mutex::default(),
            targets,
        }
    }

    fn tick(&self, service: ServiceId, at: Duration) {
        if !self.targets.get(service).copied().unwrap_or(false) {
            return;
        }
        let i = usize::try_from(at.as_millis() / BUCKET.as_millis()).unwrap_or(usize::MAX);
        // A run is bounded in time; refuse absurd indexes rather than allocate.
        if i > 1_000_000 {
            return;
        }
        let mut t = lock(&self.timeline);
        if t.len() <= i {
            t.resize(i + 1, 0);
        }
        t[i] += 1;
    }

    /// A request arrived at `service`.
    pub fn arrived(&self, service: ServiceId, at: Duration) {
        if let Some(s) = self.services.get(service) {
            lock(s).received += 1;
        }
        self.tick(service, at);
    }

    /// A connection to `service` was refused: it counts as an arrival that
    /// got no answer, so a service that is down still shows its load.
    pub fn refused(&self, service: ServiceId, at: Duration) {
        if let Some(s) = self.services.get(service) {
            let mut s = lock(s);
            s.received += 1;
            *s.dropped.entry("refused").or_default() += 1;
        }
        self.tick(service, at);
    }

    /// `service` answered `status` after `took`.
    pub fn answered(&self, service: ServiceId, status: u16, took: Duration) {
        if let Some(s) = self.services.get(service) {
            let mut s = lock(s);
            *s.statuses.entry(status).or_default() += 1;
            s.latency.record(took);
        }
    }

    /// `service` dropped a request without an answer (`reset`, `hang`).
    pub fn dropped(&self, service: ServiceId, kind: &'static str) {
        if let Some(s) = self.services.get(service) {
            *lock(s).dropped.entry(kind).or_default() += 1;
        }
    }

    /// `service` executes logical request `id` of a non-idempotent call without
    /// an idempotency key; a second execution is a duplicate.
    pub fn executed(&self, service: ServiceId, id: u64) {
        if let Some(s) = self.services.get(service) {
            let mut s = lock(s);
            if !s.executed.insert(id) {
                s.duplicates += 1;
            }
        }
    }

    fn layer(&self, slot: usize) -> Option<&LayerStats> {
        self.layers.get(slot)
    }

    pub fn layer_request(&self, slot: usize) {
        if let Some(l) = self.layer(slot) {
            l.requests.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn layer_attempt(&self, slot: usize) {
        if let Some(l) = self.layer(slot) {
            l.attempts.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn layer_retry(&self, slot: usize, cause: Outcome, honored_retry_after: bool) {
        if let Some(l) = self.layer(slot) {
            l.retries.fetch_add(1, Ordering::Relaxed);
            *lock(&l.by_reason).entry(cause).or_default() += 1;
            if honored_retry_after {
                l.retry_after_waits.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub fn layer_stop(&self, slot: usize, why: &'static str) {
        if let Some(l) = self.layer(slot) {
            if let Some(i) = STOPS.iter().position(|s| *s == why) {
                l.stops[i].fetch_add(1, Ordering::Relaxed);
            }
            if why == "budget_exhausted" {
                l.budget_refusals.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// A user request ended at `at` with `outcome` after `latency`.
    pub fn user_request(&self, outcome: Option<Outcome>, latency: Duration, at: Duration) {
        let mut e = lock(&self.e2e);
        e.requests += 1;
        *e.outcomes.entry(outcome).or_default() += 1;
        e.latency.record(latency);
        if outcome.is_some_and(Outcome::is_success) {
            e.succeeded += 1;
            e.last_success = Some(e.last_success.map_or(at, |l| l.max(at)));
        }
    }

    /// User requests still in flight when the run ended: failed, no latency.
    pub fn unfinished(&self, n: u64) {
        if n == 0 {
            return;
        }
        let mut e = lock(&self.e2e);
        e.requests += n;
        *e.outcomes.entry(None).or_default() += n;
    }

    /// `123 requests, 97 ok` for the progress bar.
    pub fn progress_line(&self) -> String {
        let e = lock(&self.e2e);
        format!("{} requests, {} ok", e.requests, e.succeeded)
    }

    /// The end-to-end figures; `client` names the client layer, if any.
    pub fn end_to_end(&self, client: Option<&str>) -> EndToEnd {
        let e2e = lock(&self.e2e);
        let users = e2e.requests;
        let last = e2e.last_success.map(|d| d.as_secs_f64() * 1e3);
        let client = client.map(|name| {
            self.layer(Layout::CLIENT)
                .map_or_else(LayerReport::default, |l| l.report(name))
        });
        EndToEnd {
            requests: users,
            succeeded: e2e.succeeded,
            failed: users - e2e.succeeded,
            latency_ms: e2e.latency.quantiles(),
            outcomes: e2e
                .outcomes
                .iter()
                .map(|(k, v)| {
                    (
                        k.map_or_else(|| "unfinished".to_owned(), |o| o.to_string()),
                        *v,
                    )
                })
                .collect(),
            client,
            histogram: e2e.latency.buckets(),
            last_success_ms: last.map(|ms| Spread {
                p10: ms,
                p50: ms,
                p90: ms,
                mean: ms,
            }),
            all_succeeded_ratio: None,
        }
    }

    /// Every per-service row, the end-to-end figures and the timeline.
    pub fn report(
        &self,
        t: &Topology,
        layout: &Layout,
        target: &str,
    ) -> (Vec<ServiceReport>, EndToEnd, Timeline) {
        let predicted = crate::analysis::worst_case(t);
        let layer_report = |slot: usize, name: &str| {
            self.layer(slot)
                .map_or_else(LayerReport::default, |l| l.report(name))
        };
        let e2e = lock(&self.e2e);
        let users = e2e.requests;
        let services = t
            .services
            .iter()
            .enumerate()
            .map(|(id, svc)| {
                let s = self.services.get(id).map(lock);
                let s = s.as_deref();
                let received = s.map_or(0, |s| s.received);
                let mut statuses: BTreeMap<String, u64> = s
                    .map(|s| {
                        s.statuses
                            .iter()
                            .map(|(k, v)| (k.to_string(), *v))
                            .collect()
                    })
                    .unwrap_or_default();
                statuses.entry("200".into()).or_insert(0);
                let calls = svc
                    .calls
                    .iter()
                    .enumerate()
                    .map(|(ci, call)| CallReport {
                        to: t.services[call.to].name.clone(),
                        method: call.method.value.clone(),
                        layers: call
                            .layers
                            .iter()
                            .enumerate()
                            .map(|(li, layer)| layer_report(layout.calls[id][ci][li], &layer.name))
                            .collect(),
                    })
                    .collect();
                ServiceReport {
                    service: svc.name.clone(),
                    received,
                    amplification: crate::run::Amplification {
                        measured: if users == 0 {
                            0.0
                        } else {
                            received as f64 / users as f64
                        },
                        predicted: predicted.get(id).map_or(0.0, |c| c.value()),
                        saturated: predicted.get(id).is_some_and(|c| c.saturated),
                    },
                    latency_ms: s.map(|s| s.latency.quantiles()).unwrap_or_default(),
                    statuses,
                    duplicates: s.map_or(0, |s| s.duplicates),
                    dropped: s
                        .map(|s| {
                            s.dropped
                                .iter()
                                .map(|(k, v)| ((*k).to_owned(), *v))
                                .collect()
                        })
                        .unwrap_or_default(),
                    fault_target: self.targets.get(id).copied().unwrap_or(false),
                    calls,
                    histogram: s.map(|s| s.latency.buckets()).unwrap_or_default(),
                    received_quantiles: None,
                }
            })
            .collect();
        drop(e2e);
        let end_to_end = self.end_to_end(t.client.as_ref().map(|c| c.name.as_str()));
        let timeline = Timeline {
            target: target.to_owned(),
            bucket_ms: BUCKET.as_millis() as u64,
            attempts: lock(&self.timeline).clone(),
        };
        (services, end_to_end, timeline)
    }
}
