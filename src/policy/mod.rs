//! The policy engine: the one implementation of backoff, jitter, retry
//! classification, Retry-After, budgets and attempt/deadline accounting.
//!
//! The linter, the simulator and the chaos client all call this module and never
//! re-implement any of it, so a static prediction, a simulated run and a measured
//! run cannot disagree about what a policy does. It imports nothing else of the
//! project. Time is a `Duration` since the start of a run, so the same code runs
//! on a virtual clock and on a real one.

#[macro_use]
pub mod names;

pub mod backoff;
pub mod breaker;
pub mod budget;
pub(crate) mod classify;
pub mod hedging;
pub mod layer;
pub mod retry;
pub mod retry_after;
pub mod schedule;

pub use backoff::{Backoff, BackoffKind, Jitter};
pub use breaker::Admission;
pub(crate) use breaker::{
    Breaker, BreakerCounts, BreakerPosition, BreakerSpec, BreakerWindow, Transition,
};
pub use budget::BudgetSpec;
pub(crate) use budget::{Budget, BudgetKind};
pub(crate) use classify::RetryOn;
pub use classify::{Condition, Outcome};
pub(crate) use hedging::{HedgeSession, HedgeStep, HedgingPolicy};
pub use layer::{Before, End};
pub(crate) use layer::{Caller, CopyStep, LayerSession};
pub(crate) use retry::{Bounds, Decision, MAX_ATTEMPTS_LIMIT, RetrySession};
pub use retry::{RetryPolicy, Stop};

/// The one random-number generator of the project: reproducible across rand
/// versions and platforms, unlike `StdRng`.
pub type Rng = rand::rngs::ChaCha8Rng;

/// A generator for `seed`.
pub fn seeded_rng(seed: u64) -> Rng {
    rand::SeedableRng::seed_from_u64(seed)
}

/// A seed for the sub-stream `part` of `seed`: independent-looking streams
/// from one `--seed`, stable across versions (splitmix64 finalisers).
pub(crate) fn derive_seed(seed: u64, part: u64) -> u64 {
    splitmix64(seed ^ splitmix64(part.wrapping_add(0x9E37_79B9_7F4A_7C15)))
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The longest duration the engine computes; products and sums saturate here
/// (about 136 years) instead of overflowing.
pub(crate) const FOREVER: std::time::Duration = std::time::Duration::from_secs(u32::MAX as u64);
