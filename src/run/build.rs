//! Counters → `RunReport`, once for both engines: the rows per service with
//! their calls and layers (numbered by `slots.rs`), the end-to-end figures,
//! the timeline, and the predicted amplification from `crate::prediction`.
//!
//! Counts are sums over `trials` trials and are reported as the mean per
//! trial, rounded half up (one trial: the counts themselves). The figures
//! that have a distribution over trials (`received`, user requests and
//! successes, the time of the last success) are handed in already reduced,
//! because only the simulator has more than one trial to reduce.

use std::collections::BTreeMap;

use super::counts::{Counts, EndToEndCount, LayerCount, ServiceCount};
use super::latency::Latency;
use super::load::LoadSettings;
use super::report::{
    Amplification, BreakerReport, CallReport, EndToEnd, HedgingReport, LayerReport, Listener,
    QueueReport, RunReport, ServiceReport, Spread, Timeline, TransitionAt,
};
use super::slots::Layout;
use super::timeline::BUCKET;
use crate::faults::Scenario;
use crate::policy::{Stop, Transition};
use crate::topology::Topology;

/// What a run counted, and the figures reduced over its trials.
pub(crate) struct Tally<'a> {
    /// Sums over `trials` trials.
    pub counts: &'a Counts,
    pub trials: u64,
    /// Per service, the `received` to report: the count, or the median over
    /// trials with its spread in `received_quantiles`.
    pub received: Vec<u64>,
    pub received_quantiles: Option<Vec<Spread>>,
    /// User requests sent and succeeded (medians over trials).
    pub requests: u64,
    pub succeeded: u64,
    /// Per service, the latency of its answers, if it answered.
    pub(crate) service_latency: Vec<Option<&'a Latency>>,
    pub(crate) end_to_end_latency: &'a Latency,
    pub last_success_ms: Option<Spread>,
    /// Share of trials in which every user request succeeded.
    pub all_succeeded_ratio: Option<f64>,
}

impl<'a> Tally<'a> {
    /// One run's counts as they are (the chaos harness, one trial).
    pub(crate) fn single(
        counts: &'a Counts,
        service_latency: Vec<Option<&'a Latency>>,
        end_to_end_latency: &'a Latency,
    ) -> Self {
        let e = &counts.end_to_end;
        let last = e.last_success.map(|d| d.as_secs_f64() * 1e3);
        Tally {
            counts,
            trials: 1,
            received: counts.services.iter().map(|s| s.received).collect(),
            received_quantiles: None,
            requests: e.requests,
            succeeded: e.succeeded,
            service_latency,
            end_to_end_latency,
            last_success_ms: last.map(|ms| Spread {
                p10: ms,
                p50: ms,
                p90: ms,
                mean: ms,
            }),
            all_succeeded_ratio: None,
        }
    }
}

/// Which engine produced a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Chaos,
    Simulate,
    /// The load driver alone against a running entry.
    Drive,
}

impl Mode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Chaos => "chaos",
            Mode::Simulate => "simulate",
            Mode::Drive => "drive",
        }
    }
}

/// What the run was, beside what it counted.
pub(crate) struct RunInfo<'a> {
    pub mode: Mode,
    pub scenario: &'a Scenario,
    pub load: &'a LoadSettings,
    /// One flag per service: the scenario strikes it.
    pub targets: &'a [bool],
    pub elapsed_ms: f64,
    pub listeners: Vec<Listener>,
    pub interrupted: bool,
}

/// A sum over `k` trials as a mean per trial, rounded half up.
pub fn per_trial(sum: u64, k: u64) -> u64 {
    if k == 0 {
        return 0;
    }
    ((u128::from(sum) * 2 + u128::from(k)) / (2 * u128::from(k))) as u64
}

/// The report of a run of `t`.
pub(crate) fn build(
    t: &Topology,
    layout: &Layout,
    info: RunInfo<'_>,
    tally: Tally<'_>,
) -> RunReport {
    let k = tally.trials;
    // No attempt starts at or after the horizon: it bounds unlimited layers.
    let horizon = info.load.horizon();
    let analysis = crate::prediction::Analysis::within_horizon(
        t,
        (horizon < crate::policy::FOREVER).then_some(horizon),
    );
    let estimated = analysis.estimated(t);
    let predicted = analysis.worst_case;
    let services = t
        .services
        .iter()
        .enumerate()
        .map(|(id, svc)| {
            let received = tally.received.get(id).copied().unwrap_or(0);
            let count = tally.counts.services.get(id);
            let latency = tally.service_latency.get(id).copied().flatten();
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
                        .map(|(li, l)| {
                            let slot = layout.slot(id, ci, li);
                            layer_report(tally.counts.layers.get(slot), Shape::of(l), k)
                        })
                        .collect(),
                })
                .collect();
            let (statuses, dropped) = count.map_or_else(
                || (BTreeMap::from([("200".to_owned(), 0)]), BTreeMap::new()),
                |c| answers(c, k),
            );
            ServiceReport {
                service: svc.name.clone(),
                received,
                amplification: Amplification {
                    measured: ratio(received, tally.requests),
                    predicted: predicted.get(id).map_or(0.0, |c| c.value()),
                    saturated: predicted.get(id).is_some_and(|c| c.saturated),
                    estimate: estimated.get(id).copied().unwrap_or(false),
                },
                latency_ms: latency.map(Latency::quantiles).unwrap_or_default(),
                statuses,
                duplicates: count.map_or(0, |c| per_trial(c.duplicates, k)),
                dropped,
                fault_target: info.targets.get(id).copied().unwrap_or(false),
                calls,
                histogram: latency.map(Latency::buckets).unwrap_or_default(),
                received_quantiles: tally
                    .received_quantiles
                    .as_ref()
                    .and_then(|q| q.get(id).copied()),
                wasted: count.map_or(0, |c| per_trial(c.wasted, k)),
                queue: svc.queueing.as_ref().map(|q| QueueReport {
                    workers: q.value.workers,
                    capacity: q.value.queue,
                    rejected: count.map_or(0, |c| per_trial(c.rejected, k)),
                    expired: count.map_or(0, |c| per_trial(c.expired, k)),
                    max_depth: count.map_or(0, |c| per_trial(c.max_queue, k)),
                    mean_wait_ms: count.map_or(0.0, |c| {
                        if c.served == 0 {
                            0.0
                        } else {
                            c.waited as f64 / c.served as f64 / 1e6
                        }
                    }),
                    utilisation: count.map_or(0.0, |c| {
                        // Over the horizon, or the run when it has none.
                        let horizon = info.load.horizon();
                        let span_s = if horizon < crate::policy::FOREVER {
                            horizon.as_secs_f64()
                        } else {
                            info.elapsed_ms / 1e3
                        };
                        let worker_ns = span_s * 1e9 * f64::from(q.value.workers) * k as f64;
                        if worker_ns > 0.0 {
                            c.busy as f64 / worker_ns
                        } else {
                            0.0
                        }
                    }),
                }),
            }
        })
        .collect();
    let client = t
        .client
        .as_ref()
        .map(|c| layer_report(tally.counts.layers.get(Layout::CLIENT), Shape::of(c), k));
    let end_to_end = end_to_end(&tally, client);
    let target = info.scenario.target.to_string();
    let mut attempts: Vec<u64> = tally
        .counts
        .timeline
        .buckets()
        .iter()
        .map(|&v| per_trial(v, k))
        .collect();
    while attempts.last() == Some(&0) {
        attempts.pop();
    }
    RunReport {
        fault: info.scenario.name.clone(),
        seed: info.load.seed,
        mode: info.mode.as_str().into(),
        topology: t.name.clone(),
        fault_description: info.scenario.description.clone(),
        target: target.clone(),
        load: info.load.summary(),
        services,
        end_to_end,
        timeline: Timeline {
            target,
            bucket_ms: BUCKET.as_millis() as u64,
            attempts,
        },
        expectations: Vec::new(),
        // Only a simulation has trials to count.
        trials: (info.mode == Mode::Simulate).then_some(k),
        listeners: info.listeners,
        elapsed_ms: info.elapsed_ms,
        interrupted: info.interrupted,
        goodput: shows_goodput(t, info.scenario)
            .then(|| goodput(&tally.counts.goodput, k, info.load, info.scenario)),
        breakers: None,
        harness: Default::default(),
    }
}

/// Goodput over time of counts summed over `k` trials of a run under
/// `load` and `scenario`: what [`build`] reports when [`shows_goodput`] holds,
/// and what the review page asks for always.
pub(crate) fn goodput(
    counts: &super::goodput::GoodputCounts,
    k: u64,
    load: &LoadSettings,
    scenario: &Scenario,
) -> super::goodput::Goodput {
    super::goodput::report(counts, k, load.horizon(), scenario.window())
}

/// Goodput over time is reported when a service queues or the scenario
/// changes the arrival rate: the runs where recovery is the question.
fn shows_goodput(t: &Topology, scenario: &Scenario) -> bool {
    t.services.iter().any(|s| s.queueing.is_some())
        || scenario.phases.iter().any(|p| p.inject.kind() == "surge")
}

/// The end-to-end figures of a tally; `client` is the client layer's row.
pub(crate) fn end_to_end(tally: &Tally<'_>, client: Option<LayerReport>) -> EndToEnd {
    let k = tally.trials;
    let e: &EndToEndCount = &tally.counts.end_to_end;
    let mut outcomes: BTreeMap<String, u64> = e
        .outcomes
        .iter()
        .map(|(o, v)| (o.to_string(), per_trial(*v, k)))
        .filter(|(_, v)| *v > 0)
        .collect();
    if per_trial(e.unfinished, k) > 0 {
        outcomes.insert("unfinished".into(), per_trial(e.unfinished, k));
    }
    EndToEnd {
        requests: tally.requests,
        succeeded: tally.succeeded,
        failed: tally.requests.saturating_sub(tally.succeeded),
        latency_ms: tally.end_to_end_latency.quantiles(),
        outcomes,
        client,
        histogram: tally.end_to_end_latency.buckets(),
        last_success_ms: tally.last_success_ms,
        all_succeeded_ratio: tally.all_succeeded_ratio,
    }
}

fn ratio(received: u64, requests: u64) -> f64 {
    if requests == 0 {
        0.0
    } else {
        received as f64 / requests as f64
    }
}

/// Statuses (with `"200"` always present) and requests dropped without an
/// answer, per trial.
fn answers(c: &ServiceCount, k: u64) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let mut statuses: BTreeMap<String, u64> = c
        .statuses
        .iter()
        .map(|&(code, v)| (code.to_string(), per_trial(v, k)))
        .filter(|(_, v)| *v > 0)
        .collect();
    statuses.entry("200".into()).or_insert(0);
    let dropped = [("refused", c.refused), ("reset", c.reset), ("hang", c.hang)]
        .into_iter()
        .map(|(name, v)| (name.to_owned(), per_trial(v, k)))
        .filter(|(_, v)| *v > 0)
        .collect();
    (statuses, dropped)
}

/// What a layer's row shows besides its retries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape<'a> {
    pub name: &'a str,
    pub breaker: bool,
    pub hedging: bool,
}

impl<'a> Shape<'a> {
    pub(crate) fn of(l: &'a crate::topology::Layer) -> Self {
        Shape {
            name: &l.name,
            breaker: l.breaker.is_some(),
            hedging: l.hedging.is_some(),
        }
    }

    /// A layer that only retries.
    pub(crate) fn named(name: &'a str) -> Self {
        Shape {
            name,
            breaker: false,
            hedging: false,
        }
    }
}

/// One retry layer's row from its counts over `k` trials.
pub(crate) fn layer_report(c: Option<&LayerCount>, shape: Shape<'_>, k: u64) -> LayerReport {
    let Some(c) = c else {
        return LayerReport {
            layer: shape.name.to_owned(),
            ..LayerReport::default()
        };
    };
    let breaker = shape.breaker.then(|| BreakerReport {
        short_circuited: per_trial(c.short_circuited, k),
        opened: per_trial(c.transitions[Transition::Opened.index()], k),
        half_opened: per_trial(c.transitions[Transition::HalfOpened.index()], k),
        closed: per_trial(c.transitions[Transition::Closed.index()], k),
        transitions: c
            .transition_log
            .iter()
            .map(|(at, t)| TransitionAt {
                at_ms: at.as_secs_f64() * 1e3,
                to: t.as_str().to_owned(),
            })
            .collect(),
    });
    let hedging = shape.hedging.then(|| HedgingReport {
        hedges: per_trial(c.hedges, k),
        cancelled: per_trial(c.cancelled, k),
    });
    LayerReport {
        layer: shape.name.to_owned(),
        breaker,
        hedging,
        requests: per_trial(c.requests, k),
        attempts: per_trial(c.attempts, k),
        retries: per_trial(c.retries, k),
        retries_by_reason: c
            .by_reason
            .iter()
            .map(|(o, v)| (o.to_string(), per_trial(*v, k)))
            .filter(|(_, v)| *v > 0)
            .collect(),
        budget_refusals: per_trial(c.budget_refusals, k),
        retry_after_waits: per_trial(c.retry_after_waits, k),
        stops: Stop::ALL
            .iter()
            .zip(&c.stops)
            .map(|(why, v)| (why.as_str().to_owned(), per_trial(*v, k)))
            .filter(|(_, v)| *v > 0)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_per_trial_round_half_up() {
        assert_eq!(per_trial(5, 2), 3);
        assert_eq!(per_trial(4, 3), 1);
        assert_eq!(per_trial(0, 0), 0);
        assert_eq!(per_trial(7, 1), 7);
    }
}
