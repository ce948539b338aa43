//! Envoy's retry policy as Envoy runs it, once for every reader whose
//! configuration ends up as one (Envoy's `retry_policy`, Istio, Envoy
//! Gateway, the Gateway API's HTTPRoute retry, Kuma): `retries` retries after
//! the first attempt, a wait drawn uniformly below an exponential schedule
//! from `base` doubling up to `cap` (Envoy's
//! `JitteredExponentialBackOffStrategy`: full jitter), 25 ms and ten times the
//! base when unset.

use std::time::Duration;

use crate::policy::{Backoff, BackoffKind, Condition, Jitter, RetryOn, RetryPolicy};

/// `base_interval` when none is written.
pub(crate) const BASE_INTERVAL: Duration = Duration::from_millis(25);

/// The policy of `retries` retries on `retry_on`, waiting from `base` up to
/// `cap` (ten times `base` when `None`); `honor_retry_after` for
/// `rate_limited_retry_back_off` and its equivalents.
pub(crate) fn policy(
    retries: u32,
    base: Duration,
    cap: Option<Duration>,
    retry_on: Vec<Condition>,
    honor_retry_after: bool,
) -> RetryPolicy {
    RetryPolicy {
        max_attempts: retries + 1,
        backoff: Backoff {
            kind: BackoffKind::Exponential,
            base,
            multiplier: 2.0,
            cap: Some(cap.unwrap_or(base * 10)),
            jitter: Jitter::Full,
        },
        retry_on: RetryOn(retry_on),
        honor_retry_after,
        budget: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_count_after_the_first_attempt_and_the_cap_defaults_to_ten_bases() {
        let p = policy(2, BASE_INTERVAL, None, vec![Condition::Status(503)], false);
        assert_eq!(p.max_attempts, 3);
        assert_eq!(p.backoff.cap, Some(Duration::from_millis(250)));
        assert_eq!(p.backoff.jitter, Jitter::Full);
        let capped = policy(1, BASE_INTERVAL, Some(Duration::from_secs(1)), vec![], true);
        assert_eq!(capped.backoff.cap, Some(Duration::from_secs(1)));
        assert!(capped.honor_retry_after);
    }
}
