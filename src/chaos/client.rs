//! The retrying client of one retry layer, built on the policy engine only:
//! per-attempt timeout, classification by `retry_on`, backoff and jitter,
//! Retry-After, the budget of its caller, the deadline and the run's horizon.
//! An app layer, a `via` sidecar and the `client:` layer in the load driver
//! are all this one loop, pointed at the next hop.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use reqwest::header::RETRY_AFTER;

use super::context::{CallCtx, CallerState, Run, header, lock};
use super::metrics::stop_name;
use crate::policy::{Decision, Outcome, RetryPolicy, RetrySession, retry_after};
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
}

impl LayerClient {
    /// Sends one logical request with retries, as `state`'s caller.
    pub async fn call(&self, state: &Mutex<CallerState>, ctx: &CallCtx) -> CallResult {
        let run = &self.run;
        let metrics = &run.metrics;
        metrics.layer_request(self.slot);
        let now = run.now();
        // The policy stops retries that cannot start before this time.
        let limit = ctx.deadline.map_or(run.horizon, |d| d.min(run.horizon));
        let by_horizon = ctx.deadline.is_none_or(|d| run.horizon <= d);
        if now >= limit {
            metrics.layer_stop(
                self.slot,
                stop_name(crate::policy::Stop::DeadlineExceeded, by_horizon),
            );
            return CallResult {
                outcome: Outcome::Timeout,
                retry_after: None,
            };
        }
        let mut session = {
            let mut st = lock(state);
            RetrySession::start(&self.policy, now, Some(limit), st.budget.as_mut())
        };
        loop {
            let started = run.now();
            metrics.layer_attempt(self.slot);
            let (outcome, retry_after) = self.attempt(ctx, started).await;
            if outcome == Outcome::Connect
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
                    metrics.layer_stop(self.slot, stop_name(why, by_horizon));
                    return CallResult {
                        outcome,
                        retry_after,
                    };
                }
            }
        }
    }

    /// One attempt started at `started`: its outcome and Retry-After.
    async fn attempt(&self, ctx: &CallCtx, started: Duration) -> (Outcome, Option<Duration>) {
        let mut timeout = self.timeout;
        if let Some(deadline) = ctx.deadline {
            let left = deadline.saturating_sub(started);
            timeout = Some(timeout.map_or(left, |t| t.min(left)));
        }
        let mut req = self
            .run
            .http
            .request(ctx.method.clone(), format!("{}{}", self.url, ctx.path))
            .header(header::REQUEST_ID, ctx.request_id);
        if ctx.non_idempotent {
            req = req.header(header::NON_IDEMPOTENT, "1");
        }
        if let Some(key) = &ctx.idempotency_key {
            req = req.header(header::IDEMPOTENCY_KEY, key.as_str());
        }
        if self.propagate_deadline
            && let Some(t) = timeout
        {
            req = req.header(header::DEADLINE_US, t.as_micros().to_string());
        }
        let exchange = async {
            let resp = req.send().await?;
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| retry_after::parse(v, SystemTime::now()));
            resp.bytes().await?;
            Ok::<_, reqwest::Error>((status, retry_after))
        };
        let result = match timeout {
            Some(t) => match tokio::time::timeout(t, exchange).await {
                Ok(r) => r,
                Err(_) => return (Outcome::Timeout, None),
            },
            None => exchange.await,
        };
        match result {
            Ok((status, retry_after)) => (Outcome::Status(status), retry_after),
            Err(e) if e.is_connect() => (Outcome::Connect, None),
            Err(e) if e.is_timeout() => (Outcome::Timeout, None),
            Err(_) => (Outcome::Reset, None),
        }
    }
}
