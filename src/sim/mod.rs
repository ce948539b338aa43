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
mod layer;
mod model;
mod queue;
mod service;
mod slab;
mod trials;
mod users;

pub use compare::compare;

use crate::faults::{Scenario, UnknownTarget};
use crate::run::{LoadSettings, RunReport};
use crate::topology::Topology;

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Target(#[from] UnknownTarget),
    #[error("--trials must be at least 1")]
    NoTrials,
    #[error("cannot start a simulation thread: {0}")]
    Thread(std::io::Error),
    /// Closed-loop user requests that take no virtual time would repeat
    /// forever at one instant.
    #[error(
        "the simulation makes no progress: closed-loop user requests end the instant they start (a fault that answers the entry at once with no client-layer retry to wait for, zero latency everywhere, or a zero deadline), so each client would send infinitely many; use --rate, cap them with --requests, give the `client:` layer a retry with backoff, or aim the fault past the entry with --target"
    )]
    Stalled,
}

/// Simulates `scenario` against `t` under `load` for `trials` seeded trials
/// (trial i uses `load.seed + i`) on `threads` threads (default: every core),
/// and reports them as DESIGN's simulate contract says. The result does not
/// depend on the number of threads.
pub fn run(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    trials: u32,
    threads: Option<usize>,
) -> Result<RunReport, SimError> {
    Ok(simulate(t, scenario, load, trials, threads)?.0)
}

/// The report and the merged trials, for [`compare`].
fn simulate(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    trials: u32,
    threads: Option<usize>,
) -> Result<(RunReport, aggregate::Merged), SimError> {
    if trials == 0 {
        return Err(SimError::NoTrials);
    }
    let load = &load.in_virtual_time();
    let m = model::Model::new(t, scenario, load)?;
    let threads = threads
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let parts = trials::run(&m, load.seed, trials, threads)?;
    let merged = aggregate::Merged::new(parts, m.services.len(), m.layers.len());
    let report = aggregate::report(t, &m, scenario, load, &merged);
    Ok((report, merged))
}
