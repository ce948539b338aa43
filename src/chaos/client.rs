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
use crate::policy::{Bounds, Decision, Outcome, RetryPolicy, RetrySession, Stop};
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
    /// Sends one logical request with retries, as `state`'s caller.
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
        let mut session = {
            let mut st = lock(state);
            RetrySession::start(&self.policy, now, bounds, st.budget.as_mut())
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = run.now();
            metrics.layer_attempt(self.slot);
            let timeout = session.attempt_timeout(started, self.timeout);
            let (outcome, retry_after, out_of_descriptors) =
                self.attempt(ctx, timeout, attempt).await;
            if out_of_descriptors {
                // Not the callee refusing: this process could not open a
                // socket. Counted as the harness's failure, not the fault's.
                metrics.out_of_descriptors();
            } else if outcome == Outcome::Connect
                && let Some(callee) = self.callee
            {
                metrics.refused(callee, started);
            }
            let now = run.now();
            let decision = {
                let mut st = lock(state);
                let st = &mut *st;
                session.after_attempt(now, outcome, retry_after, st.budget.as_mut(), &mut st.rng)
            };
            match decision {
                Decision::Retry {
                    wait,
                    cause,
                    honored_retry_after,
                } => {
                    metrics.layer_retry(self.slot, cause, honored_retry_after);
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

    /// Attempt number `n` with `timeout` (the policy engine's, deadline
    /// included): its outcome, Retry-After, and whether it failed for want of
    /// a file descriptor.
    async fn attempt(
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
