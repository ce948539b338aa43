//! One caller's retry state, and the logical request it sends through the
//! layers of one call.

use std::sync::Mutex;
use std::time::Duration;

use super::draw::DrawKey;
use crate::policy::{Breaker, BreakerSpec, Budget, BudgetSpec, Rng, seeded_rng};

/// The retry state of one caller: its budget, its circuit breaker and its
/// random stream.
pub(crate) struct CallerState {
    pub budget: Option<Budget>,
    pub breaker: Option<Breaker>,
    pub rng: Rng,
}

impl CallerState {
    pub(crate) fn new(
        budget: Option<&BudgetSpec>,
        breaker: Option<&BreakerSpec>,
        seed: u64,
    ) -> Mutex<Self> {
        Mutex::new(CallerState {
            budget: budget.map(BudgetSpec::start),
            breaker: breaker.map(BreakerSpec::start),
            rng: seeded_rng(seed),
        })
    }
}

/// One logical request as it travels through the layers of one call.
#[derive(Debug, Clone)]
pub(crate) struct CallCtx {
    pub(crate) request_id: u64,
    pub method: reqwest::Method,
    pub path: std::sync::Arc<str>,
    pub(crate) non_idempotent: bool,
    pub idempotency_key: Option<String>,
    /// Absolute run time by which the caller needs the answer, when the caller
    /// propagates deadlines; sent downstream as the remaining time.
    pub deadline: Option<Duration>,
    /// The logical request's draw key at this layer; attempt n sends
    /// `draw.attempt(n)`.
    pub draw: DrawKey,
}
