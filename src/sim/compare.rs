//! Comparing retry policies: the same scenario and load over several
//! topologies (`simulate a.yaml b.yaml …`, typically one topology per policy:
//! no jitter, full jitter, decorrelated, a budget), one row each — attempts at
//! the fault target and in total, success, and completion time — so "which
//! policy survives this outage" is one command.

use super::aggregate::{Merged, spread};
use super::{SimError, SimOptions, simulate};
use crate::faults::Scenario;
use crate::run::{ComparisonRow, LoadSettings, RunReport};
use crate::topology::Topology;

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
    let options = SimOptions {
        trials,
        threads,
        ..SimOptions::default()
    };
    compare_with(topologies, scenario, load, &options)
}

/// [`compare`] with options; each topology is held to the budget on its own.
pub fn compare_with(
    topologies: &[&Topology],
    scenario: &Scenario,
    load: &LoadSettings,
    options: &SimOptions,
) -> Result<Vec<ComparisonRow>, SimError> {
    topologies
        .iter()
        .map(|t| {
            let (report, merged) = simulate(t, scenario, load, options)?;
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
        recovery: r.goodput.as_ref().and_then(|g| g.verdict.clone()),
    }
}
