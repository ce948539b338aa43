//! What every part of one chaos run shares: the run clock, the horizon, the
//! cancellation that ends everything, the task tracker that proves nothing is
//! left running, the HTTP client, the fault plan and the metrics.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::metrics::Metrics;
use crate::faults::FaultPlan;
use crate::policy::{Budget, BudgetSpec, Rng, derive_seed, seeded_rng};

/// Headers the harness adds to every hop.
pub(crate) mod header {
    /// The logical request: the same on every retry of every layer of one call.
    pub const REQUEST_ID: &str = "x-retrylint-request";
    /// Set on calls that are not idempotent, so the callee counts duplicates.
    pub const NON_IDEMPOTENT: &str = "x-retrylint-non-idempotent";
    /// Remaining time of the caller's deadline, in µs (like `grpc-timeout`).
    pub const DEADLINE_US: &str = "x-retrylint-deadline-us";
    pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
    /// The attempt's draw key (`DrawKey`), in decimal.
    pub const DRAW: &str = "x-retrylint-draw";

    /// A harness header's decimal value, if present and well formed.
    pub fn number(headers: &axum::http::HeaderMap, name: &str) -> Option<u64> {
        headers.get(name)?.to_str().ok()?.parse().ok()
    }
}

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
    pub fn user_request(seed: u64, index: u64) -> Self {
        DrawKey(derive_seed(seed, index))
    }

    fn child(self, domain: u64, n: u64) -> Self {
        DrawKey(derive_seed(derive_seed(self.0, domain), n))
    }

    /// The `n`-th attempt (from 1) a layer sends for this logical request.
    pub fn attempt(self, n: u32) -> Self {
        self.child(Self::ATTEMPT, u64::from(n))
    }

    /// The `n`-th call a service makes while serving this attempt.
    pub fn call(self, n: usize) -> Self {
        self.child(Self::CALL, n as u64)
    }

    /// The fault dice of the service this attempt reaches.
    pub fn fault_rng(self) -> Rng {
        seeded_rng(self.child(Self::FAULT, 0).0)
    }

    /// The work-time draw of the service this attempt reaches.
    pub fn work_rng(self) -> Rng {
        seeded_rng(self.child(Self::WORK, 0).0)
    }

    /// The key an incoming request carries; a request from outside the
    /// harness gets a fresh one.
    pub fn from_headers(headers: &axum::http::HeaderMap, run: &Run) -> Self {
        header::number(headers, header::DRAW).map_or_else(
            || {
                let outsiders = derive_seed(run.draw_seed, u64::MAX);
                DrawKey::user_request(outsiders, run.next_request_id())
            },
            DrawKey,
        )
    }
}

/// The harness headers of one attempt, for either transport to render.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptHeaders<'a> {
    pub request_id: u64,
    pub non_idempotent: bool,
    pub idempotency_key: Option<&'a str>,
    /// The remaining deadline sent downstream, in µs.
    pub deadline_us: Option<u64>,
    pub draw: DrawKey,
}

/// Room to render the numeric header values without allocating.
#[derive(Default)]
pub(crate) struct HeaderScratch {
    request_id: itoa::Buffer,
    deadline: itoa::Buffer,
    draw: itoa::Buffer,
}

impl<'a> AttemptHeaders<'a> {
    /// Each header's name and value, numbers rendered into `scratch`.
    pub fn pairs<'s>(
        &self,
        scratch: &'s mut HeaderScratch,
    ) -> impl Iterator<Item = (&'static str, &'s str)>
    where
        'a: 's,
    {
        let HeaderScratch {
            request_id,
            deadline,
            draw,
        } = scratch;
        [
            Some((header::REQUEST_ID, request_id.format(self.request_id))),
            Some((header::DRAW, draw.format(self.draw.0))),
            self.non_idempotent.then_some((header::NON_IDEMPOTENT, "1")),
            self.idempotency_key.map(|k| (header::IDEMPOTENCY_KEY, k)),
            self.deadline_us
                .map(|us| (header::DEADLINE_US, deadline.format(us))),
        ]
        .into_iter()
        .flatten()
    }
}

/// Shared state of one run.
pub(crate) struct Run {
    pub start: Instant,
    /// No attempt starts at or after this time from `start`.
    pub horizon: Duration,
    pub cancel: CancellationToken,
    pub tasks: TaskTracker,
    pub http: reqwest::Client,
    pub plan: FaultPlan,
    /// The root of every request's `DrawKey`.
    pub draw_seed: u64,
    pub metrics: Metrics,
    next_id: AtomicU64,
}

impl Run {
    pub fn new(
        horizon: Duration,
        http: reqwest::Client,
        plan: FaultPlan,
        draw_seed: u64,
        metrics: Metrics,
    ) -> Self {
        Run {
            start: Instant::now(),
            horizon,
            cancel: CancellationToken::new(),
            tasks: TaskTracker::new(),
            http,
            plan,
            draw_seed,
            metrics,
            next_id: AtomicU64::new(1),
        }
    }

    /// Time since the run started: the `now` the policy engine is given.
    pub fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// The instant `at` after the start.
    pub fn instant(&self, at: Duration) -> Instant {
        self.start + at
    }

    /// A fresh logical request id.
    pub fn next_request_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Spawns `fut` as a tracked task that ends when the run is cancelled.
    pub fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<Option<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let cancel = self.cancel.clone();
        self.tasks.spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => None,
                out = fut => Some(out),
            }
        })
    }
}

/// How late tokio's timer wakes sleepers on this machine, in ns: the
/// deadline rounded up to a whole-ms tick, the park timeout rounded up
/// again, plus the OS's own slack (about 2.4 ms measured on a 2-core VM).
/// Rises fast, decays slowly.
static TIMER_LATENESS_NS: AtomicU64 = AtomicU64::new(2_500_000);

/// Sleeps until `deadline` to well under a millisecond: the timer sleeps to
/// just before it, by the lateness seen so far plus a margin, and the last
/// stretch yields in a loop. Injected delays and service times would
/// otherwise all come out 1 to 3 ms long.
pub(crate) async fn sleep_until_precise(deadline: Instant) {
    const MARGIN: Duration = Duration::from_micros(500);
    // A stalled machine must not turn every sleep into a long spin.
    const MAX_SLACK: Duration = Duration::from_millis(5);
    let late = Duration::from_nanos(TIMER_LATENESS_NS.load(Ordering::Relaxed));
    let slack = (late + MARGIN).min(MAX_SLACK);
    if deadline.saturating_duration_since(Instant::now()) > slack {
        let target = deadline - slack;
        tokio::time::sleep_until(target).await;
        note_timer_lateness(Instant::now().saturating_duration_since(target));
    }
    while Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
}

fn note_timer_lateness(late: Duration) {
    let late = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
    let _ = TIMER_LATENESS_NS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |est| {
        Some(if late >= est {
            est + (late - est) / 2
        } else {
            est - (est - late) / 16
        })
    });
}

/// Locks a mutex even if a panicking thread poisoned it: the counters behind
/// it stay meaningful, and a report beats a second panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The retry state of one caller: its budget and its random stream.
pub(crate) struct CallerState {
    pub budget: Option<Budget>,
    pub rng: Rng,
}

impl CallerState {
    pub fn new(budget: Option<&BudgetSpec>, seed: u64) -> Mutex<Self> {
        Mutex::new(CallerState {
            budget: budget.map(BudgetSpec::start),
            rng: seeded_rng(seed),
        })
    }
}

/// One logical request as it travels through the layers of one call.
#[derive(Debug, Clone)]
pub(crate) struct CallCtx {
    pub request_id: u64,
    pub method: reqwest::Method,
    pub path: std::sync::Arc<str>,
    pub non_idempotent: bool,
    pub idempotency_key: Option<String>,
    /// Absolute run time by which the caller needs the answer, when the caller
    /// propagates deadlines; sent downstream as the remaining time.
    pub deadline: Option<Duration>,
    /// The logical request's draw key at this layer; attempt n sends
    /// `draw.attempt(n)`.
    pub draw: DrawKey,
}
