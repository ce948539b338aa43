//! Trials → one report (DESIGN, "simulate --trials K"):
//!
//! - per service, `received` is the median over trials and
//!   `received_quantiles` gives p10, p50, p90 and the mean;
//! - end to end, `requests` and `succeeded` are medians over trials (`failed`
//!   is their difference), `all_succeeded_ratio` is the share of trials in
//!   which every user request succeeded, and `last_success_ms` the spread of
//!   the time of the last success over the trials that had one;
//! - latency histograms of all trials are merged, so latency quantiles are over
//!   every answer of every trial;
//! - every other count (statuses, dropped requests, duplicates, retry-layer
//!   counters, outcomes, the timeline) is the mean per trial, rounded.
//!
//! Quantiles over trials are observed values: the q-quantile of n sorted values
//! is the one at index ⌊q·(n−1)⌋ (the lower median for p50), so `received`
//! equals `received_quantiles.p50` and a single trial reports exact counts.

use std::collections::BTreeMap;

use super::counters::{Accumulated, Counts, Histograms, LayerCount, STOPS, TrialFigures};
use super::model::{CLIENT, Model};
use crate::faults::Scenario;
use crate::run::{
    Amplification, CallReport, EndToEnd, LayerReport, LoadSettings, RunReport, ServiceReport,
    Spread, Timeline,
};
use crate::topology::Topology;

/// Everything the threads accumulated, merged, trials in index order.
pub(crate) struct Merged {
    pub sums: Counts,
    pub histograms: Histograms,
    pub trials: Vec<TrialFigures>,
    /// `received[trial * services + service]`, trials in index order.
    pub received: Vec<u64>,
}

impl Merged {
    pub fn new(parts: Vec<Accumulated>, services: usize, slots: usize) -> Self {
        let mut sums = Counts::new(services, slots);
        let mut histograms = Histograms::new(services);
        let mut rows: Vec<(TrialFigures, &[u64])> = Vec::new();
        for p in &parts {
            sums.add(&p.sums);
            histograms.merge(&p.histograms);
            let per = p.received.chunks(services.max(1));
            rows.extend(p.trials.iter().cloned().zip(per));
        }
        rows.sort_by_key(|(t, _)| t.trial);
        let mut received = Vec::with_capacity(rows.len() * services);
        for (_, r) in &rows {
            received.extend_from_slice(&r[..services]);
        }
        Merged {
            sums,
            histograms,
            trials: rows.into_iter().map(|(t, _)| t).collect(),
            received,
        }
    }

    pub fn k(&self) -> u64 {
        self.trials.len() as u64
    }

    /// `received` of `service` in every trial.
    pub fn received_of(&self, service: usize, services: usize) -> Vec<u64> {
        (0..self.trials.len())
            .map(|t| self.received[t * services + service])
            .collect()
    }
}

/// The q-quantile of `values` as an observed value (index ⌊q·(n−1)⌋).
fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = (q * (sorted.len() - 1) as f64).floor() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// p10, p50, p90 and the mean of `values`.
pub(crate) fn spread(mut values: Vec<u64>) -> Spread {
    values.sort_unstable();
    let n = values.len().max(1) as f64;
    let sum: u128 = values.iter().map(|&v| u128::from(v)).sum();
    Spread {
        p10: quantile(&values, 0.1) as f64,
        p50: quantile(&values, 0.5) as f64,
        p90: quantile(&values, 0.9) as f64,
        mean: sum as f64 / n,
    }
}

/// The same for times in ns, reported in ms.
fn spread_ms(values: Vec<u64>) -> Spread {
    let s = spread(values);
    Spread {
        p10: s.p10 / 1e6,
        p50: s.p50 / 1e6,
        p90: s.p90 / 1e6,
        mean: s.mean / 1e6,
    }
}

/// A sum over `k` trials as a mean per trial, rounded half up.
fn per_trial(sum: u64, k: u64) -> u64 {
    if k == 0 {
        return 0;
    }
    ((u128::from(sum) * 2 + u128::from(k)) / (2 * u128::from(k))) as u64
}

fn median(values: impl Iterator<Item = u64>) -> u64 {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    quantile(&v, 0.5)
}

/// The report of `k` merged trials of `t` under `scenario`.
pub(crate) fn report(
    t: &Topology,
    m: &Model,
    scenario: &Scenario,
    load: &LoadSettings,
    merged: &Merged,
) -> RunReport {
    let k = merged.k();
    let n = t.services.len();
    let requests = median(merged.trials.iter().map(|f| f.requests));
    let succeeded = median(merged.trials.iter().map(|f| f.succeeded));
    let predicted = crate::analysis::worst_case(t);
    let layer = |slot: usize, name: &str| layer_report(&merged.sums.layers[slot], name, k);
    let mut slot = CLIENT as usize + 1;
    let services = t
        .services
        .iter()
        .enumerate()
        .map(|(id, svc)| {
            let q = spread(merged.received_of(id, n));
            let received = q.p50 as u64;
            let sums = &merged.sums.services[id];
            let mut statuses: BTreeMap<String, u64> = sums
                .statuses
                .iter()
                .map(|&(code, v)| (code.to_string(), per_trial(v, k)))
                .filter(|(_, v)| *v > 0)
                .collect();
            statuses.entry("200".into()).or_insert(0);
            let dropped = [
                ("refused", sums.refused),
                ("reset", sums.reset),
                ("hang", sums.hang),
            ]
            .into_iter()
            .map(|(name, v)| (name.to_owned(), per_trial(v, k)))
            .filter(|(_, v)| *v > 0)
            .collect();
            let calls = svc
                .calls
                .iter()
                .map(|call| {
                    let layers = call
                        .layers
                        .iter()
                        .map(|l| {
                            slot += 1;
                            layer(slot - 1, &l.name)
                        })
                        .collect();
                    CallReport {
                        to: t.services[call.to].name.clone(),
                        method: call.method.value.clone(),
                        layers,
                    }
                })
                .collect();
            let latency = merged.histograms.services[id].as_ref();
            ServiceReport {
                service: svc.name.clone(),
                received,
                amplification: Amplification {
                    measured: if requests == 0 {
                        0.0
                    } else {
                        received as f64 / requests as f64
                    },
                    predicted: predicted.get(id).map_or(0.0, |c| c.value()),
                    saturated: predicted.get(id).is_some_and(|c| c.saturated),
                },
                latency_ms: latency.map(|l| l.quantiles()).unwrap_or_default(),
                statuses,
                duplicates: per_trial(sums.duplicates, k),
                dropped,
                fault_target: m.services[id].target,
                calls,
                histogram: latency.map(|l| l.buckets()).unwrap_or_default(),
                received_quantiles: Some(q),
            }
        })
        .collect();
    let e = &merged.sums.end_to_end;
    let mut outcomes: BTreeMap<String, u64> = e
        .outcomes
        .iter()
        .map(|(o, v)| (o.to_string(), per_trial(*v, k)))
        .filter(|(_, v)| *v > 0)
        .collect();
    if per_trial(e.unfinished, k) > 0 {
        outcomes.insert("unfinished".into(), per_trial(e.unfinished, k));
    }
    let all_ok = merged
        .trials
        .iter()
        .filter(|f| f.succeeded == f.requests)
        .count();
    let successes: Vec<u64> = merged
        .trials
        .iter()
        .filter_map(|f| f.last_success)
        .collect();
    let end_to_end = EndToEnd {
        requests,
        succeeded,
        failed: requests.saturating_sub(succeeded),
        latency_ms: merged.histograms.end_to_end.quantiles(),
        outcomes,
        client: t.client.as_ref().map(|c| layer(CLIENT as usize, &c.name)),
        histogram: merged.histograms.end_to_end.buckets(),
        last_success_ms: (!successes.is_empty()).then(|| spread_ms(successes)),
        all_succeeded_ratio: Some(if k == 0 {
            0.0
        } else {
            all_ok as f64 / k as f64
        }),
    };
    let target = scenario.target.to_string();
    let mut attempts: Vec<u64> = merged
        .sums
        .timeline
        .iter()
        .map(|&v| per_trial(v, k))
        .collect();
    while attempts.last() == Some(&0) {
        attempts.pop();
    }
    RunReport {
        fault: scenario.name.clone(),
        seed: load.seed,
        mode: "simulate".into(),
        topology: t.name.clone(),
        fault_description: scenario.description.clone(),
        target: target.clone(),
        load: load.summary(),
        services,
        end_to_end,
        timeline: Timeline {
            target,
            bucket_ms: 100,
            attempts,
        },
        expectations: Vec::new(),
        trials: Some(k),
        listeners: Vec::new(),
        elapsed_ms: median(merged.trials.iter().map(|f| f.end)) as f64 / 1e6,
        interrupted: false,
    }
}

fn layer_report(c: &LayerCount, name: &str, k: u64) -> LayerReport {
    LayerReport {
        layer: name.to_owned(),
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
        stops: STOPS
            .iter()
            .zip(&c.stops)
            .map(|(name, v)| ((*name).to_owned(), per_trial(*v, k)))
            .filter(|(_, v)| *v > 0)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_observed_values() {
        let s = spread(vec![5, 1, 4, 2, 3]);
        assert_eq!((s.p10, s.p50, s.p90, s.mean), (1.0, 3.0, 4.0, 3.0));
        let s = spread(vec![10, 20]);
        assert_eq!((s.p50, s.mean), (10.0, 15.0), "the lower median");
        assert_eq!(spread(vec![7]).p90, 7.0);
        assert_eq!(per_trial(5, 2), 3);
        assert_eq!(per_trial(4, 3), 1);
        assert_eq!(per_trial(0, 0), 0);
    }
}
