//! Trials → one report (docs/json.md, `simulate` over several trials), through the run
//! kernel's one report builder (`crate::run::build`):
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

use std::time::Duration;

use super::counters::{Accumulated, Histograms, TrialFigures};
use super::model::Model;
use crate::faults::Scenario;
use crate::run::counts::Counts;
use crate::run::{Layout, LoadSettings, Mode, RunInfo, RunReport, Spread, Tally};
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
    pub(super) fn new(parts: Vec<Accumulated>, services: usize, slots: usize) -> Self {
        let mut sums = Counts::new(services, slots);
        let mut histograms = Histograms::new(services);
        let mut rows: Vec<(TrialFigures, &[u64])> = Vec::new();
        for p in &parts {
            sums.add(&p.sums);
            // Only the part that ran trial 0 has a transition log.
            for (sum, part) in sums.layers.iter_mut().zip(&p.sums.layers) {
                if !part.transition_log.is_empty() {
                    sum.transition_log.clone_from(&part.transition_log);
                }
            }
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

    pub(super) fn k(&self) -> u64 {
        self.trials.len() as u64
    }

    /// `received` of `service` in every trial.
    pub(crate) fn received_of(&self, service: usize, services: usize) -> Vec<u64> {
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

/// The same for times, reported in ms.
fn spread_ms(values: Vec<Duration>) -> Spread {
    let s = spread(
        values
            .into_iter()
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .collect(),
    );
    Spread {
        p10: s.p10 / 1e6,
        p50: s.p50 / 1e6,
        p90: s.p90 / 1e6,
        mean: s.mean / 1e6,
    }
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
    let quantiles: Vec<Spread> = (0..n).map(|id| spread(merged.received_of(id, n))).collect();
    let successes: Vec<Duration> = merged
        .trials
        .iter()
        .filter_map(|f| f.last_success)
        .collect();
    let all_ok = merged
        .trials
        .iter()
        .filter(|f| f.succeeded == f.requests)
        .count();
    let targets: Vec<bool> = m.services.iter().map(|s| s.target).collect();
    let tally = Tally {
        counts: &merged.sums,
        trials: k,
        received: quantiles.iter().map(|q| q.p50 as u64).collect(),
        received_quantiles: Some(quantiles),
        requests: median(merged.trials.iter().map(|f| f.requests)),
        succeeded: median(merged.trials.iter().map(|f| f.succeeded)),
        service_latency: merged
            .histograms
            .services
            .iter()
            .map(Option::as_ref)
            .collect(),
        end_to_end_latency: &merged.histograms.end_to_end,
        last_success_ms: (!successes.is_empty()).then(|| spread_ms(successes)),
        all_succeeded_ratio: Some(if k == 0 {
            0.0
        } else {
            all_ok as f64 / k as f64
        }),
    };
    let elapsed = median(
        merged
            .trials
            .iter()
            .map(|f| u64::try_from(f.end.as_nanos()).unwrap_or(u64::MAX)),
    );
    let info = RunInfo {
        mode: Mode::Simulate,
        scenario,
        load,
        targets: &targets,
        elapsed_ms: elapsed as f64 / 1e6,
        listeners: Vec::new(),
        interrupted: false,
    };
    crate::run::build::build(t, &Layout::new(t), info, tally)
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
    }
}
