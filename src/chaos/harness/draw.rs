//! Random draws keyed to requests, so a rerun with the same seed gives every
//! request the same dice however the requests interleave in real time.

use super::context::Run;
use super::header;
use crate::policy::{Rng, derive_seed, seeded_rng};

/// Where the random draws of one attempt come from. A user request's key is
/// derived from the run's seed and the request's index; each call a service
/// makes and each attempt a layer sends derive their own from it, and the
/// service an attempt reaches rolls its fault dice and draws its work time
/// from the attempt's key. So the same seed gives every request the same
/// draws however the requests interleave in real time: a rerun differs only
/// where timing itself decides (phase edges, the horizon, timeouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DrawKey(pub u64);

impl DrawKey {
    const ATTEMPT: u64 = 1;
    const CALL: u64 = 2;
    const FAULT: u64 = 3;
    const WORK: u64 = 4;

    /// User request number `index` of a run whose draws derive from `seed`.
    pub(crate) fn user_request(seed: u64, index: u64) -> Self {
        DrawKey(derive_seed(seed, index))
    }

    fn child(self, domain: u64, n: u64) -> Self {
        DrawKey(derive_seed(derive_seed(self.0, domain), n))
    }

    /// The `n`-th attempt (from 1) a layer sends for this logical request.
    pub(crate) fn attempt(self, n: u32) -> Self {
        self.child(Self::ATTEMPT, u64::from(n))
    }

    /// The `n`-th call a service makes while serving this attempt.
    pub(crate) fn call(self, n: usize) -> Self {
        self.child(Self::CALL, n as u64)
    }

    /// The fault dice of the service this attempt reaches.
    pub(crate) fn fault_rng(self) -> Rng {
        seeded_rng(self.child(Self::FAULT, 0).0)
    }

    /// The work-time draw of the service this attempt reaches.
    pub(crate) fn work_rng(self) -> Rng {
        seeded_rng(self.child(Self::WORK, 0).0)
    }

    /// The key an incoming request carries; a request from outside the
    /// harness gets a fresh one.
    pub(crate) fn from_headers(headers: &axum::http::HeaderMap, run: &Run) -> Self {
        header::number(headers, header::DRAW).map_or_else(
            || {
                let outsiders = derive_seed(run.draw_seed, u64::MAX);
                DrawKey::user_request(outsiders, run.next_request_id())
            },
            DrawKey,
        )
    }
}
