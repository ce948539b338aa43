//! The retrying client of one retry layer, built on the policy engine only:
//! per-attempt timeout, classification by `retry_on`, backoff and jitter,
//! Retry-After, the budget of its caller, the deadline and the run's horizon.
//! An app layer, a `via` sidecar and the `client:` layer in the load driver
//! are all this one loop, pointed at the next hop.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use super::caller::{CallCtx, CallerState};
use super::context::{Run, lock};
use super::header::AttemptHeaders;
use super::transport::Transport;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use crate::policy::{
    Before, Bounds, Caller, CopyStep, Decision, End, HedgeStep, HedgingPolicy, LayerSession,
    Outcome, RetryPolicy, Stop, breaker,
};
use crate::topology::ServiceId;

/// One retry layer pointed at its next hop.
pub(crate) struct LayerClient {
    pub run: Arc<Run>,
    /// The layer's counters in `Metrics`.
    pub slot: usize,
    pub policy: RetryPolicy,
    /// Per-attempt timeout; `None` waits as long as the run lasts.
    pub timeout: Option<Duration>,
    /// `http://127.0.0.1:PORT` of the next hop; the call's path is appended.
    pub url: String,
    pub(crate) transport: Transport,
    /// The service behind the hop when it is the callee itself (not a sidecar):
    /// refused connections count against it.
    pub callee: Option<ServiceId>,
    /// Whether the layer sends the remaining deadline downstream.
    pub(crate) propagate_deadline: bool,
    /// Hedged copies instead of retries (app layers only).
    pub hedging: Option<HedgingPolicy>,
}

/// A layer session that gives back what it holds of its caller's budget
/// (a concurrency limit's place) if its request is dropped midway.
struct SessionGuard<'a, 'p> {
    state: &'a Mutex<CallerState>,
    session: LayerSession<'p>,
}

impl Drop for SessionGuard<'_, '_> {
    fn drop(&mut self) {
        self.session.abandon(lock(self.state).budget.as_mut());
    }
}

/// How a call through a layer ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CallResult {
    /// The last attempt's outcome; `Timeout` when no attempt could start.
    pub outcome: Outcome,
    /// The last response's Retry-After, for sidecars to pass on.
    pub retry_after: Option<Duration>,
    /// The horizon stopped a retry (or the first attempt) of this call.
    pub(crate) cut_by_horizon: bool,
}

impl From<End> for CallResult {
    fn from(end: End) -> Self {
        CallResult {
            outcome: end.outcome,
            retry_after: end.retry_after,
            cut_by_horizon: end.why == Stop::Horizon,
        }
    }
}

impl LayerClient {
    /// Sends one logical request with retries (or hedged copies), as
    /// `state`'s caller, through its breaker if the layer has one; the
    /// policy engine's `LayerSession` decides, this loop sends and waits.
    pub(crate) async fn call(&self, state: &Mutex<CallerState>, ctx: &CallCtx) -> CallResult {
        let run = &self.run;
        let metrics = &run.metrics;
        metrics.layer_request(self.slot);
        let now = run.now();
        let bounds = Bounds {
            deadline: ctx.deadline,
            horizon: Some(run.horizon),
        };
        if let Some(why) = bounds.refuses_start(now) {
            metrics.layer_stop(self.slot, why);
            return CallResult {
                outcome: Outcome::Timeout,
                retry_after: None,
                cut_by_horizon: why == Stop::Horizon,
            };
        }
        let mut guard = SessionGuard {
            state,
            session: {
                let mut st = lock(state);
                let st = &mut *st;
                LayerSession::start(
                    &self.policy,
                    self.hedging.as_ref(),
                    st.breaker.as_ref().map(|b| b.spec()),
                    now,
                    bounds,
                    st.budget.as_mut(),
                )
            },
        };
        if self.hedging.is_some() {
            return self.hedged(state, ctx, &mut guard.session).await;
        }
        let session = &mut guard.session;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = run.now();
            let before = self.with_caller(state, started, |c| session.before_attempt(started, c));
            if before.short_circuited() {
                metrics.short_circuited(self.slot);
            }
            let (now, outcome, retry_after, decision) = match before {
                Before::Send => {
                    metrics.layer_attempt(self.slot);
                    let timeout = session.attempt_timeout(started, self.timeout);
                    let (outcome, retry_after) = self.attempt(ctx, timeout, attempt, started).await;
                    let now = run.now();
                    let decision = self.with_caller(state, now, |c| {
                        session.after_attempt(now, outcome, retry_after, c)
                    });
                    (now, outcome, retry_after, decision)
                }
                // The retry loop sees the rejection as a failed attempt.
                Before::Rejected => {
                    let now = run.now();
                    let decision = self.with_caller(state, now, |c| session.after_rejected(now, c));
                    (now, breaker::REJECTED, None, decision)
                }
                Before::Stop(end) => {
                    metrics.layer_stop(self.slot, end.why);
                    return end.into();
                }
                Before::Skip | Before::Wait => unreachable!("only a hedged copy waits"),
            };
            match decision {
                Decision::Retry {
                    wait,
                    cause,
                    honored_retry_after,
                } => {
                    metrics.layer_retry(self.slot, cause, honored_retry_after);
                    metrics.retried_at(now);
                    if !wait.is_zero() {
                        tokio::time::sleep_until(run.instant(now + wait)).await;
                    }
                }
                Decision::Stop(why) => {
                    metrics.layer_stop(self.slot, why);
                    return CallResult {
                        outcome,
                        retry_after,
                        cut_by_horizon: why == Stop::Horizon,
                    };
                }
            }
        }
    }

    /// Runs `f` on what the layer session is given of `state`'s caller,
    /// then reports the breaker's changes of state at `now`.
    fn with_caller<R>(
        &self,
        state: &Mutex<CallerState>,
        now: Duration,
        f: impl FnOnce(Caller<'_>) -> R,
    ) -> R {
        let mut transitions = Vec::new();
        let r = {
            let mut st = lock(state);
            let st = &mut *st;
            f(Caller {
                budget: st.budget.as_mut(),
                breaker: st.breaker.as_mut(),
                rng: &mut st.rng,
                transitions: &mut transitions,
            })
        };
        for t in transitions {
            self.run.metrics.transition(self.slot, now, t);
        }
        r
    }

    /// Hedged copies of one request (the layer session decides): copies go
    /// `delay` apart, the first answer the schedule accepts is taken, the
    /// copies still out are dropped (their callees keep working: work
    /// nobody waits for).
    async fn hedged(
        &self,
        state: &Mutex<CallerState>,
        ctx: &CallCtx,
        session: &mut LayerSession<'_>,
    ) -> CallResult {
        let run = &self.run;
        let metrics = &run.metrics;
        let mut copies = FuturesUnordered::new();
        let mut next_at: Option<Duration> = None;
        let mut send_next = true;
        loop {
            if send_next {
                send_next = false;
                let now = run.now();
                let before = self.with_caller(state, now, |c| session.before_attempt(now, c));
                if before.short_circuited() {
                    metrics.short_circuited(self.slot);
                }
                match before {
                    Before::Send => {
                        let timeout = session.attempt_timeout(now, self.timeout);
                        if let Some(hedge) = session.hedge() {
                            if hedge.sent() > 0 {
                                metrics.hedged(self.slot, 1, 0);
                            }
                            metrics.layer_attempt(self.slot);
                            let n = hedge.sent() + 1;
                            copies.push(self.attempt(ctx, timeout, n, now));
                            next_at = match hedge.on_send() {
                                HedgeStep::SendAt(at) => Some(at),
                                _ => None,
                            };
                        }
                    }
                    Before::Stop(end) => {
                        metrics.layer_stop(self.slot, end.why);
                        return end.into();
                    }
                    // No copy now; the ones out go on.
                    Before::Rejected | Before::Skip | Before::Wait => next_at = None,
                }
            }
            let timer = async {
                match next_at {
                    Some(at) => tokio::time::sleep_until(run.instant(at)).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                Some((outcome, retry_after)) = copies.next() => {
                    let now = run.now();
                    let step = self.with_caller(state, now, |c| {
                        session.after_copy(now, outcome, retry_after, c)
                    });
                    match step {
                        CopyStep::Send => send_next = true,
                        CopyStep::Wait => {}
                        CopyStep::Done(end) => {
                            metrics.hedged(self.slot, 0, copies.len() as u64);
                            drop(copies);
                            metrics.layer_stop(self.slot, end.why);
                            return end.into();
                        }
                    }
                }
                () = timer => {
                    if session.hedge().is_some_and(|h| h.on_timer(run.now()) == HedgeStep::Send) {
                        send_next = true;
                    }
                }
            }
        }
    }

    /// Attempt number `n`, started at `started`, with `timeout` (the policy
    /// engine's, deadline included): its outcome and Retry-After. A refused
    /// connection counts against the callee, unless it was this process out
    /// of file descriptors (the harness's failure, not the fault's).
    async fn attempt(
        &self,
        ctx: &CallCtx,
        timeout: Option<Duration>,
        n: u32,
        started: Duration,
    ) -> (Outcome, Option<Duration>) {
        let (outcome, retry_after, out_of_descriptors) = self.exchange(ctx, timeout, n).await;
        if outcome == Outcome::Timeout {
            self.run.metrics.timed_out(self.run.now());
        }
        if out_of_descriptors {
            self.run.metrics.out_of_descriptors();
        } else if outcome == Outcome::Connect
            && let Some(callee) = self.callee
        {
            self.run.metrics.refused(callee, started);
        }
        (outcome, retry_after)
    }

    /// One exchange with the next hop.
    async fn exchange(
        &self,
        ctx: &CallCtx,
        timeout: Option<Duration>,
        n: u32,
    ) -> (Outcome, Option<Duration>, bool) {
        let headers = AttemptHeaders {
            request_id: ctx.request_id,
            non_idempotent: ctx.non_idempotent,
            idempotency_key: ctx.idempotency_key.as_deref(),
            deadline_us: timeout
                .filter(|_| self.propagate_deadline)
                .map(|t| u64::try_from(t.as_micros()).unwrap_or(u64::MAX)),
            draw: ctx.draw.attempt(n),
        };
        let exchange = self
            .transport
            .send(&self.url, &ctx.method, &ctx.path, headers);
        let result = match timeout {
            Some(t) => match tokio::time::timeout(t, exchange).await {
                Ok(r) => r,
                Err(_) => return (Outcome::Timeout, None, false),
            },
            None => exchange.await,
        };
        match result {
            Ok(answer) => (Outcome::Status(answer.status), answer.retry_after, false),
            Err(failure) => (failure.outcome, None, failure.out_of_descriptors),
        }
    }
}
