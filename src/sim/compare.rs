//! Comparing retry policies: the same scenario and load over several
//! topologies (`simulate a.yaml b.yaml …`, typically one topology per policy:
//! no jitter, full jitter, decorrelated, a budget), one row each — attempts at
//! the fault target and in total, success, and completion time — so "which
//! policy survives this outage" is one command.

use serde::{Deserialize, Serialize};

use super::aggregate::{Merged, spread};
use super::{SimError, simulate};
use crate::faults::Scenario;
use crate::run::{LatencyMs, LoadSettings, RunReport, Spread};
use crate::topology::Topology;

/// One topology's figures under the compared scenario, per trial over all
/// trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    /// The topology's name.
    pub topology: String,
    /// The file it was read from.
    pub file: String,
    pub fault: String,
    /// The scenario's target as written (`leaves`, `db`, …).
    pub target: String,
    /// The services that target resolves to here, in topology order.
    pub target_services: Vec<String>,
    pub trials: u64,
    /// User requests per trial (median).
    pub requests: u64,
    /// Attempts that arrived at the fault target(s) in a trial.
    pub attempts_at_target: Spread,
    /// Attempts that arrived at any service in a trial.
    pub attempts_total: Spread,
    /// Median attempts at the target per user request.
    pub amplification_at_target: f64,
    /// User requests that succeeded in a trial.
    pub succeeded: Spread,
    /// Succeeded ÷ user requests, over all trials together.
    pub success_ratio: f64,
    /// Share of trials in which every user request succeeded.
    pub all_succeeded_ratio: f64,
    /// Completion time: when the last success came, over the trials that had
    /// one; `None` when no trial had a success.
    pub last_success_ms: Option<Spread>,
    /// End-to-end latency over every user request of every trial.
    pub latency_ms: LatencyMs,
}

/// Simulates `scenario` under `load` against every topology of `topologies`
/// (`trials` trials each, same seeds) and returns one row per topology, in
/// order.
pub fn compare(
    topologies: &[&Topology],
    scenario: &Scenario,
    load: &LoadSettings,
    trials: u32,
    threads: Option<usize>,
) -> Result<Vec<ComparisonRow>, SimError> {
    topologies
        .iter()
        .map(|t| {
            let (report, merged) = simulate(t, scenario, load, trials, threads)?;
            Ok(comparison_row(t, &report, &merged))
        })
        .collect()
}

pub(crate) fn comparison_row(t: &Topology, r: &RunReport, merged: &Merged) -> ComparisonRow {
    let trials = &merged.trials;
    let at_target = spread(trials.iter().map(|f| f.at_target).collect());
    let requests = r.end_to_end.requests;
    let total_requests: u64 = trials.iter().map(|f| f.requests).sum();
    let total_succeeded: u64 = trials.iter().map(|f| f.succeeded).sum();
    ComparisonRow {
        topology: t.name.clone(),
        file: t.file.clone(),
        fault: r.fault.clone(),
        target: r.target.clone(),
        target_services: r
            .services
            .iter()
            .filter(|s| s.fault_target)
            .map(|s| s.service.clone())
            .collect(),
        trials: merged.k(),
        requests,
        amplification_at_target: if requests == 0 {
            0.0
        } else {
            at_target.p50 / requests as f64
        },
        attempts_at_target: at_target,
        attempts_total: spread(trials.iter().map(|f| f.total).collect()),
        succeeded: spread(trials.iter().map(|f| f.succeeded).collect()),
        success_ratio: if total_requests == 0 {
            1.0
        } else {
            total_succeeded as f64 / total_requests as f64
        },
        all_succeeded_ratio: r.end_to_end.all_succeeded_ratio.unwrap_or(0.0),
        last_success_ms: r.end_to_end.last_success_ms,
        latency_ms: r.end_to_end.latency_ms,
    }
}
