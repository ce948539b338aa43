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
    Admission, Bounds, Decision, HedgeSession, HedgeStep, HedgingPolicy, Outcome, RetryPolicy,
    RetrySession, Stop, breaker,
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
    pub transport: Transport,
    /// The service behind the hop when it is the callee itself (not a sidecar):
    /// refused connections count against it.
    pub callee: Option<ServiceId>,
    /// Whether the layer sends the remaining deadline downstream.
    pub propagate_deadline: bool,
    /// Hedged copies instead of retries (app layers only).
    pub hedging: Option<HedgingPolicy>,
}

/// A retry session that gives back what it holds of its caller's budget
/// (a concurrency limit's place) if its request is dropped midway.
struct SessionGuard<'a, 'p> {
    state: &'a Mutex<CallerState>,
    session: RetrySession<'p>,
}

impl Drop for SessionGuard<'_, '_> {
    fn drop(&mut self) {
        self.session.abandon(lock(self.state).budget.as_mut());
    }
}

/// The layer's breaker for one request: what it said, and where it sits.
struct Gate<'a> {
    state: &'a Mutex<CallerState>,
    admission: Option<Admission>,
    inside: bool,
    counts_attempts: bool,
}

impl<'a> Gate<'a> {
    fn of(state: &'a Mutex<CallerState>) -> Self {
        let st = lock(state);
        let spec = st.breaker.as_ref().map(|b| b.spec());
        Gate {
            state,
            admission: None,
            inside: spec.is_some_and(|s| s.inside()),
            counts_attempts: spec.is_some_and(|s| s.counts_attempts()),
        }
    }

    /// Asks the breaker at `now` (a layer without one always passes).
    fn admit(&mut self, client: &LayerClient, now: Duration) -> Admission {
        let mut transitions = Vec::new();
        let admission = match lock(self.state).breaker.as_mut() {
            Some(b) => b.admit(now, &mut transitions),
            None => return Admission::Pass,
        };
        for t in transitions {
            client.run.metrics.transition(client.slot, now, t);
        }
        if admission == Admission::Reject {
            client.run.metrics.short_circuited(client.slot);
        } else {
            self.admission = Some(admission);
        }
        admission
    }

    /// Records an attempt's (`final_result: false`) or the request's result,
    /// as the breaker's spec says what it counts.
    fn record(&self, client: &LayerClient, outcome: Outcome, final_result: bool) {
        let Some(admission) = self.admission else {
            return;
        };
        if self.counts_attempts == final_result {
            return;
        }
        let now = client.run.now();
        let mut transitions = Vec::new();
        {
            let mut st = lock(self.state);
            let st = &mut *st;
            if let Some(b) = st.breaker.as_mut() {
                b.record(
                    now,
                    admission,
                    breaker::counts_as_failure(outcome),
                    &mut st.rng,
                    &mut transitions,
                );
            }
        }
        for t in transitions {
            client.run.metrics.transition(client.slot, now, t);
        }
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
    pub cut_by_horizon: bool,
}

impl LayerClient {
    /// Sends one logical request with retries (or hedged copies), as
    /// `state`'s caller, through its breaker if the layer has one.
    pub async fn call(&self, state: &Mutex<CallerState>, ctx: &CallCtx) -> CallResult {
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
        let mut gate = Gate::of(state);
        if !gate.inside && gate.admit(self, now) == Admission::Reject {
            metrics.layer_stop(self.slot, Stop::CircuitOpen);
            return CallResult {
                outcome: breaker::REJECTED,
                retry_after: None,
                cut_by_horizon: false,
            };
        }
        if let Some(h) = &self.hedging {
            return self.hedged(ctx, h, bounds, &mut gate).await;
        }
        let mut session = SessionGuard {
            state,
            session: {
                let mut st = lock(state);
                RetrySession::start(&self.policy, now, bounds, st.budget.as_mut())
            },
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = run.now();
            let (outcome, retry_after) =
                if gate.inside && gate.admit(self, started) == Admission::Reject {
                    // The retry loop sees the rejection as a failed attempt.
                    (breaker::REJECTED, None)
                } else {
                    metrics.layer_attempt(self.slot);
                    let timeout = session.session.attempt_timeout(started, self.timeout);
                    let (outcome, retry_after) = self.attempt(ctx, timeout, attempt, started).await;
                    gate.record(self, outcome, false);
                    (outcome, retry_after)
                };
            let now = run.now();
            let decision = {
                let mut st = lock(state);
                let st = &mut *st;
                session.session.after_attempt(
                    now,
                    outcome,
                    retry_after,
                    st.budget.as_mut(),
                    &mut st.rng,
                )
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
                    gate.record(self, outcome, true);
                    return CallResult {
                        outcome,
                        retry_after,
                        cut_by_horizon: why == Stop::Horizon,
                    };
                }
            }
        }
    }

    /// Hedged copies of one request (the policy engine's `HedgeSession`
    /// decides): copies go `delay` apart, the first answer the schedule
    /// accepts is taken, the copies still out are dropped (their callees
    /// keep working: work nobody waits for).
    async fn hedged(
        &self,
        ctx: &CallCtx,
        policy: &HedgingPolicy,
        bounds: Bounds,
        gate: &mut Gate<'_>,
    ) -> CallResult {
        let run = &self.run;
        let metrics = &run.metrics;
        let mut hedge = HedgeSession::start(policy, run.now());
        let mut copies = FuturesUnordered::new();
        let mut next_at: Option<Duration> = None;
        let mut send_next = true;
        let mut last = (Outcome::Timeout, None);
        loop {
            if send_next {
                send_next = false;
                let now = run.now();
                let refused = bounds.refuses_start(now).is_some()
                    || (gate.inside && gate.admit(self, now) == Admission::Reject);
                if refused {
                    next_at = None;
                    if copies.is_empty() {
                        metrics.layer_stop(self.slot, Stop::Horizon);
                        return CallResult {
                            outcome: last.0,
                            retry_after: last.1,
                            cut_by_horizon: true,
                        };
                    }
                } else {
                    if hedge.sent() > 0 {
                        metrics.hedged(self.slot, 1, 0);
                    }
                    metrics.layer_attempt(self.slot);
                    let n = hedge.sent() + 1;
                    let timeout = bounds.attempt_timeout(now, self.timeout);
                    copies.push(self.attempt(ctx, timeout, n, now));
                    next_at = match hedge.on_send() {
                        HedgeStep::SendAt(at) => Some(at),
                        _ => None,
                    };
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
                    gate.record(self, outcome, false);
                    last = (outcome, retry_after);
                    match hedge.on_answer(outcome) {
                        HedgeStep::Send => send_next = true,
                        HedgeStep::SendAt(_) | HedgeStep::Wait => {}
                        HedgeStep::Done(outcome) => {
                            metrics.hedged(self.slot, 0, copies.len() as u64);
                            drop(copies);
                            gate.record(self, outcome, true);
                            let why = if outcome.is_success() {
                                Stop::Succeeded
                            } else if policy.non_fatal.matches(outcome) {
                                Stop::AttemptsExhausted
                            } else {
                                Stop::NotRetryable
                            };
                            metrics.layer_stop(self.slot, why);
                            return CallResult { outcome, retry_after, cut_by_horizon: false };
                        }
                    }
                }
                () = timer => {
                    if hedge.on_timer(run.now()) == HedgeStep::Send {
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
