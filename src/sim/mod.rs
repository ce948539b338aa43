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
//! Everything a policy does — backoff, jitter, classification, Retry-After,
//! budgets, the deadline check — is the policy engine's
//! ([`crate::policy::RetrySession`]); every fault decision, the ratio roll
//! included, is the fault plan's ([`crate::faults::FaultPlan::effect`]).
//!
//! Modelling choices, the same as the chaos harness's where DESIGN leaves them
//! open (see `crate::chaos`):
//! - one random stream per trial: trial i uses `seed + i` for every draw
//!   (latencies, jitter, fault ratios, injected delays), in event order;
//! - a network hop takes no time: an attempt arrives when it starts;
//! - the topology's `capacity:` applies the overload model at all times; an
//!   `overload` phase's capacity replaces it for the arrivals it covers. A
//!   request is in flight from entering the service (after an injected delay)
//!   to its answer, calls included; a marked one fails as a timeout at its
//!   caller (DESIGN) while the service's statuses count the 504 the chaos
//!   server sends;
//! - a refused connection counts as `received` (and `dropped.refused`) at a
//!   service that is down; when a service goes down, attempts waiting for it
//!   are cut (a reset) while its work in progress goes on;
//! - a status fault answers at once without doing the work; Retry-After is
//!   sent in whole seconds, rounded up; a `reset` fault does the work, then
//!   closes without an answer; a `hang` never answers;
//! - a service keeps working when its caller gives up (work nobody waits
//!   for); a `via` sidecar stops, cancelling its own attempt in flight;
//! - a service makes every call of a request even when an earlier one failed,
//!   and answers with the last failure once all are done, so attempts under
//!   total failure equal the static worst case (the sum over call paths);
//! - tiers do not forward their callee's Retry-After; sidecars do;
//! - a service with `deadline_propagation: true` honours an incoming deadline
//!   (answers 504 at once when it has passed, never starts an attempt at or
//!   after it, caps attempt timeouts by it) and sends min(remaining, attempt
//!   timeout) downstream; sidecars honour what they are sent; the `client:`
//!   layer sends the topology's `deadline`;
//! - a second execution of the same logical non-idempotent call without an
//!   Idempotency-Key is a duplicate; with the key the callee still does the
//!   work, but it is not a duplicate;
//! - budgets are per caller: per call layer (a service's app layer, each
//!   sidecar), per closed-loop client, one for all open-loop user requests;
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

pub use compare::{ComparisonRow, compare};

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
