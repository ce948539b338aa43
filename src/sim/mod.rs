//! The simulator: the chaos harness's scenario in virtual time — a seeded
//! discrete-event simulation that runs thousands of trials in a second, so
//! figures are reproducible on a noisy CI machine and scale to client counts
//! no laptop can boot.
//!
//! [`run`] compiles the topology, the fault plan and the load once
//! (`model.rs`), runs `trials` trials across threads (`trials.rs`), each a
//! pure function of its seed (`engine.rs` with `queue.rs` and `slab.rs`;
//! services in `service.rs`, retry layers in `layer.rs`, the load in
//! `users.rs`, counting in `counters.rs`), and aggregates them into the same
//! [`RunReport`] the chaos harness fills in (`aggregate.rs`). [`compare`]
//! runs several topologies under one scenario for a policy-comparison table
//! (`compare.rs`). Nothing here prints.
//!
//! What a run means — services, overload, faults, retry layers, deadlines,
//! duplicates, load, counting — is stated once in `crate::run`, and the
//! simulator implements it through the run kernel, the policy engine
//! ([`crate::policy::RetrySession`]) and the fault plan
//! ([`crate::faults::FaultPlan::effect`]). What is the simulator's own:
//! - one random stream per trial: trial i uses `seed + i` for every draw
//!   (latencies, jitter, fault ratios, injected delays), in event order;
//! - a network hop takes no time: an attempt arrives when it starts;
//! - a marked (overloaded) request fails as a timeout at its caller at the
//!   moment it ends;
//! - `--requests` without `--duration` sets no horizon: virtual time is free,
//!   and every request asked for runs (chaos stops at 60 s of real time);
//! - no grace period: after the horizon no attempt starts, but everything in
//!   flight runs to its end in virtual time; a user request that never ends (a
//!   hang without a timeout) is `unfinished`.

mod aggregate;
mod compare;
mod counters;
mod engine;
mod estimate;
mod guard;
mod layer;
mod model;
mod queue;
mod service;
mod slab;
mod trials;
mod users;

pub mod calibrate;
mod progress;
pub mod sweep;
mod wilson;

pub use compare::{compare, compare_with};
pub(crate) use estimate::Estimate;
pub use estimate::{OverBudget, WorkBudget};

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::faults::{Scenario, UnknownTarget};
use crate::run::{LoadSettings, RunReport};
use crate::topology::Topology;

/// How a simulation runs, beyond the scenario and the load.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Seeded trials: trial i uses `seed + i`.
    pub trials: u32,
    /// Threads to spread trials over; `None`: every core. Results do not
    /// depend on it.
    pub threads: Option<usize>,
    /// Refused up front past it, stopped past it while running.
    pub budget: WorkBudget,
    /// Draw a progress bar (trials done, ETA) on stderr when it is a terminal.
    pub progress: bool,
    /// Set to stop early: the trials completed are reported, marked
    /// interrupted.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// How `goodput.verdict` judges recovery (default `within-tolerance`;
    /// the `simulate` command defaults to `last-half`).
    pub rule: crate::run::goodput::RecoveryRule,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            trials: 100,
            threads: None,
            budget: WorkBudget::DEFAULT,
            progress: false,
            interrupt: None,
            rule: crate::run::goodput::RecoveryRule::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Target(#[from] UnknownTarget),
    #[error("--trials must be at least 1")]
    NoTrials,
    #[error(transparent)]
    SurgeNeedsRate(#[from] crate::run::arrivals::SurgeNeedsRate),
    #[error("cannot start a simulation thread: {0}")]
    Thread(std::io::Error),
    /// Closed-loop user requests that take no virtual time would repeat
    /// forever at one instant.
    #[error(
        "the simulation makes no progress: closed-loop user requests end the instant they start (a fault that answers the entry at once with no client-layer retry to wait for, zero latency everywhere, or a zero deadline), so each client would send infinitely many; use --rate, cap them with --requests, give the `client:` layer a retry with backoff, or aim the fault past the entry with --target"
    )]
    Stalled,
    /// The estimate is past the budget: refused before running.
    #[error("{0}")]
    OverBudget(Box<OverBudget>),
    /// The run outgrew its budget while running (the estimate was low).
    #[error(
        "the simulation outgrew its budget while running ({}): it was stopped; raise --budget, or run fewer --trials or --requests",
        if *memory { format!("its live state passed {} MiB", budget.memory >> 20) } else { format!("{attempts} attempts of {} allowed", budget.attempts) }
    )]
    Exceeded {
        memory: bool,
        attempts: u64,
        budget: WorkBudget,
    },
    /// Stopped early (Ctrl-C); the report covers the trials completed.
    #[error("interrupted: the simulation was stopped before its end")]
    Interrupted(Box<RunReport>),
}

/// Simulates `scenario` against `t` under `load` for `trials` seeded trials
/// (trial i uses `load.seed + i`) on `threads` threads (default: every core),
/// within the default work budget, and reports them as the simulate JSON
/// contract says (docs/json.md). The result does not depend on the number of threads.
pub fn run(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    trials: u32,
    threads: Option<usize>,
) -> Result<RunReport, SimError> {
    let options = SimOptions {
        trials,
        threads,
        ..SimOptions::default()
    };
    run_with(t, scenario, load, &options)
}

/// [`run`] with options: budget, progress, interruption.
pub fn run_with(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    options: &SimOptions,
) -> Result<RunReport, SimError> {
    Ok(simulate(t, scenario, load, options)?.0)
}

/// [`run_with`], with goodput over time (offered and succeeded user requests
/// per 100 ms) reported whatever the topology and scenario: the review page
/// draws user-request success over time for every run, not only the
/// queueing ones `simulate` shows it for.
pub fn run_over_time(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    options: &SimOptions,
) -> Result<RunReport, SimError> {
    let (mut report, merged) = simulate(t, scenario, load, options)?;
    if report.goodput.is_none() {
        let load = load.in_virtual_time();
        let mut g = crate::run::build::goodput(&merged.sums.goodput, merged.k(), &load, scenario);
        g.rejudge(load.horizon(), scenario.window(), options.rule);
        report.goodput = Some(g);
    }
    Ok(report)
}

/// What a simulation would cost, without running it.
pub fn estimate(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    options: &SimOptions,
) -> Result<Estimate, SimError> {
    let load = &load.in_virtual_time();
    let m = model::Model::new(t, scenario, load)?;
    Ok(estimate::estimate(
        t,
        &m,
        load,
        options.trials,
        threads(options),
    ))
}

fn threads(options: &SimOptions) -> usize {
    options
        .threads
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The report and the merged trials, for [`compare`].
fn simulate(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    options: &SimOptions,
) -> Result<(RunReport, aggregate::Merged), SimError> {
    if options.trials == 0 {
        return Err(SimError::NoTrials);
    }
    let load = &load.in_virtual_time();
    let m = model::Model::new(t, scenario, load)?;
    let threads = threads(options);
    let mut estimate = estimate::estimate(t, &m, load, options.trials, threads);
    if t.has_breakers() {
        // It runs a second time without them, to say what they saved.
        estimate.runs = 2;
        estimate.attempts *= 2.0;
    }
    if !(estimate.attempts <= options.budget.attempts as f64
        && estimate.memory <= options.budget.memory as f64)
    {
        return Err(SimError::OverBudget(Box::new(OverBudget {
            estimate,
            budget: options.budget,
        })));
    }
    let guard = guard::Guard::new(options.budget, options.interrupt.clone());
    let finished = progress::with_bar(options.progress, options.trials, &guard, || {
        trials::run(&m, load.seed, options.trials, threads, &guard)
    })?;
    let merged = aggregate::Merged::new(finished.parts, m.services.len(), m.layers.len());
    let mut report = aggregate::report(t, &m, scenario, load, &merged);
    if let Some(g) = &mut report.goodput {
        g.rejudge(load.horizon(), scenario.window(), options.rule);
    }
    if !finished.interrupted && t.has_breakers() {
        // The same scenario, load and seeds without the breakers: what they
        // saved.
        let without = simulate(
            &t.without_breakers(),
            scenario,
            load,
            &SimOptions {
                progress: false,
                ..options.clone()
            },
        )?
        .0;
        report.breakers = Some(crate::run::BreakerEffect::between(&report, &without));
    }
    if finished.interrupted {
        report.interrupted = true;
        return Err(SimError::Interrupted(Box::new(report)));
    }
    Ok((report, merged))
}
