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

/// Shared state of one run.
pub(crate) struct Run {
    pub start: Instant,
    /// No attempt starts at or after this time from `start`.
    pub horizon: Duration,
    pub cancel: CancellationToken,
    pub tasks: TaskTracker,
    /// The services' own work in flight (a token per tier request): the run
    /// waits for it after the last user request, up to the horizon plus the
    /// grace period, so work finished for nobody is still counted.
    pub work: TaskTracker,
    pub http: reqwest::Client,
    pub plan: FaultPlan,
    /// The root of every request's `DrawKey`.
    pub(crate) draw_seed: u64,
    pub metrics: Metrics,
    /// How long a connection to one of this run's servers may take to send
    /// a request's head (or sit idle between requests) before it is closed:
    /// a client that trickles bytes cannot hold a descriptor forever.
    pub header_timeout: Duration,
    next_id: AtomicU64,
}

/// [`Run::header_timeout`] unless a caller sets another: above every
/// client's idle-connection timeout (reqwest's pool keeps one 20 s, the
/// load driver's pool 20 s too), so a server never closes a connection a
/// client is about to reuse.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a client keeps an idle connection for reuse.
pub(crate) const CLIENT_IDLE: Duration = Duration::from_secs(20);

impl Run {
    pub(crate) fn new(
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
            work: TaskTracker::new(),
            http,
            plan,
            draw_seed,
            metrics,
            header_timeout: HEADER_TIMEOUT,
            next_id: AtomicU64::new(1),
        }
    }

    /// Time since the run started: the `now` the policy engine is given.
    pub(crate) fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// The instant `at` after the start.
    pub(crate) fn instant(&self, at: Duration) -> Instant {
        self.start + at
    }

    /// Request ids of this run start at `first`: processes of one run
    /// (`retrylint serve`) take disjoint ranges, so a callee that counts
    /// duplicates by id never mistakes two callers' requests for one.
    pub(crate) fn with_request_ids_from(self, first: u64) -> Self {
        self.next_id.store(first, Ordering::Relaxed);
        self
    }

    /// Connections that have not sent a whole request head within `d` are
    /// closed (`retrylint serve --header-timeout`).
    pub(crate) fn with_header_timeout(mut self, d: Duration) -> Self {
        self.header_timeout = d;
        self
    }

    /// A fresh logical request id.
    pub(crate) fn next_request_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Spawns `fut` as a tracked task that ends when the run is cancelled.
    pub(crate) fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<Option<F::Output>>
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

/// Locks a mutex even if a panicking thread poisoned it: the counters behind
/// it stay meaningful, and a report beats a second panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
