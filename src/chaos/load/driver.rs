//! The load driver: user requests through the `client:` layer into the entry.
//!
//! Closed loop: N callers start at once; each sends its next user request when
//! the previous one has finished, and none after one the horizon cut short
//! (its client layer could not retry before it: still busy then). Open loop:
//! request i is due when `crate::run::arrivals` says (at i / R, Poisson, or
//! faster during a `surge`) and is sent then whatever is still in flight; its
//! latency counts from that intended time, so a stalled system is not
//! flattered (no coordinated omission). No user request starts at or after the
//! horizon; `--requests` caps them all.
//!
//! Open loop is bounded: at most `max_in_flight` user requests are in flight
//! at once, as a load generator has a fixed number of connections. A request
//! that finds every slot taken waits for one and is counted `late` (its
//! latency still counts from its intended time, as wrk2 does); one still
//! waiting at the horizon is never sent and counted `not_sent`. So the run
//! ends at its horizon plus the grace period whatever the rate, in bounded
//! memory.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

use crate::chaos::harness::caller::{CallCtx, CallerState};
use crate::chaos::harness::client::LayerClient;
use crate::chaos::harness::context::Run;
use crate::chaos::harness::draw::DrawKey;
use crate::policy::{BreakerSpec, BudgetSpec};
use crate::run::arrivals::Schedule;
use crate::run::{Arrival, LoadSettings};

/// Random streams of the closed-loop callers start here (see `mod.rs`).
pub(crate) const STREAM_USERS: u64 = 3_000_000;
/// The stream of Poisson arrival gaps.
pub(crate) const STREAM_ARRIVALS: u64 = 4_000_000;

pub(crate) struct Driver {
    pub run: Arc<Run>,
    pub client: Arc<LayerClient>,
    pub budget: Option<BudgetSpec>,
    /// The client layer's circuit breaker: one per caller, like the budget.
    pub breaker: Option<BreakerSpec>,
    /// The topology's end-to-end deadline.
    pub deadline: Option<Duration>,
    pub load: LoadSettings,
    /// The path user requests ask for.
    pub path: Arc<str>,
    /// Open loop: user requests in flight at once, at most.
    pub max_in_flight: usize,
    /// User requests sent, and those whose end was counted.
    pub started: AtomicU64,
    pub finished: AtomicU64,
}

impl Driver {
    /// Sends every user request the settings allow and waits for them until
    /// `horizon + grace`.
    pub(crate) async fn drive(self: Arc<Self>, grace: Duration) {
        let users = TaskTracker::new();
        match self.load.arrival {
            Arrival::Clients(n) => {
                for c in 0..u64::from(n) {
                    let me = Arc::clone(&self);
                    let seed = self.load.stream_seed(STREAM_USERS + c);
                    let state = CallerState::new(self.budget.as_ref(), self.breaker.as_ref(), seed);
                    self.run.spawn(users.track_future(async move {
                        loop {
                            let now = me.run.now();
                            if now >= me.run.horizon {
                                break;
                            }
                            let i = me.started.fetch_add(1, Ordering::Relaxed);
                            if me.load.requests.is_some_and(|m| i >= m) {
                                me.started.fetch_sub(1, Ordering::Relaxed);
                                break;
                            }
                            let cut = me.one(&state, i, now).await;
                            me.finished.fetch_add(1, Ordering::Relaxed);
                            // Still busy with that request at the horizon.
                            if cut {
                                break;
                            }
                        }
                    }));
                }
            }
            Arrival::Rate(_) => {
                let state = Arc::new(CallerState::new(
                    self.budget.as_ref(),
                    self.breaker.as_ref(),
                    self.load.stream_seed(STREAM_USERS),
                ));
                let slots = Arc::new(Semaphore::new(self.max_in_flight.max(1)));
                let horizon = self.run.instant(self.run.horizon);
                // Checked up front (a surge needs open loop): a rate is set.
                let Ok(Some(mut schedule)) = Schedule::new(
                    &self.load,
                    &self.run.plan,
                    self.load.stream_seed(STREAM_ARRIVALS),
                ) else {
                    return;
                };
                let mut i = 0;
                while let Some(due) = schedule.next_due() {
                    tokio::time::sleep_until(self.run.instant(due)).await;
                    // Behind schedule at the horizon: the rest is never sent.
                    // Without this a loop that finds a free slot every time
                    // (a slot count past what the descriptors allow, each
                    // connection failing at once) would go on sending the
                    // requests due before the horizon for as long as it
                    // takes to go through them all, long past horizon + grace.
                    if self.run.now() >= self.run.horizon {
                        self.run
                            .metrics
                            .not_sent(schedule.expected_count().saturating_sub(i));
                        break;
                    }
                    self.run.metrics.offered(due);
                    let slot = match Arc::clone(&slots).try_acquire_owned() {
                        Ok(slot) => slot,
                        Err(_) => {
                            let waited = tokio::time::timeout_at(
                                horizon,
                                Arc::clone(&slots).acquire_owned(),
                            );
                            match waited.await {
                                Ok(Ok(slot)) => {
                                    self.run.metrics.late();
                                    slot
                                }
                                // The horizon came first: this request and
                                // every later one are never sent.
                                _ => {
                                    self.run
                                        .metrics
                                        .not_sent(schedule.expected_count().saturating_sub(i));
                                    break;
                                }
                            }
                        }
                    };
                    let me = Arc::clone(&self);
                    let state = Arc::clone(&state);
                    self.started.fetch_add(1, Ordering::Relaxed);
                    self.run.spawn(users.track_future(async move {
                        me.one(&state, i, due).await;
                        me.finished.fetch_add(1, Ordering::Relaxed);
                        drop(slot);
                    }));
                    i += 1;
                }
            }
        }
        users.close();
        let end = self.run.instant(self.run.horizon.saturating_add(grace));
        let _ = tokio::time::timeout_at(end, users.wait()).await;
        // Then the services' work still in flight (callers gone), likewise.
        self.run.work.close();
        let _ = tokio::time::timeout_at(end, self.run.work.wait()).await;
    }

    /// User requests sent whose end was never counted. Read once the run's
    /// tasks are gone: one that ends between `drive`'s return and the
    /// shutdown counts its own end, and would otherwise count twice.
    pub(crate) fn unfinished(&self) -> u64 {
        self.started
            .load(Ordering::Relaxed)
            .saturating_sub(self.finished.load(Ordering::Relaxed))
    }

    /// User request number `index`, intended to start at `intended`; true
    /// when the horizon stopped a retry of the client layer.
    async fn one(&self, state: &Mutex<CallerState>, index: u64, intended: Duration) -> bool {
        let ctx = CallCtx {
            request_id: self.run.next_request_id(),
            method: reqwest::Method::GET,
            path: self.path.clone(),
            non_idempotent: false,
            idempotency_key: None,
            deadline: self.deadline.map(|d| intended.saturating_add(d)),
            draw: DrawKey::user_request(self.run.draw_seed, index),
        };
        let result = self.client.call(state, &ctx).await;
        let now = self.run.now();
        self.run
            .metrics
            .user_request(result.outcome, now.saturating_sub(intended), now);
        result.cut_by_horizon
    }
}
