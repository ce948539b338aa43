//! Retry budgets (docs/topology.md, "Retry policy semantics"), with state per
//! caller.
//!
//! - `ratio` (Finagle, Linkerd, SRE book): a retry is allowed while retries in
//!   the sliding window, this one included, stay within `ratio` × requests in the
//!   window plus a reserve of `min_per_second` × window.
//! - `token_bucket` (AWS SDK standard mode): a retry takes `retry_cost` tokens
//!   (`timeout_cost` after a timeout) from a quota that starts full; a successful
//!   retry gives its cost back, a success at the first attempt adds
//!   `success_refund`.
//! - `grpc_throttling` (gRPC A6): every failed attempt takes a token, every
//!   success adds `token_ratio`; retries stop while tokens ≤ max_tokens / 2.
//! - `concurrency` (Envoy's cluster `max_retries`, default 3): at most `max`
//!   retries of the caller in flight at once; a retry holds its place from
//!   its start to its end.

use std::collections::VecDeque;
use std::time::Duration;

use super::Outcome;

/// The kinds of budget, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BudgetKind {
    Ratio,
    TokenBucket,
    GrpcThrottling,
    Concurrency,
}

named!(BudgetKind {
    Ratio => "ratio",
    TokenBucket => "token_bucket",
    GrpcThrottling => "grpc_throttling",
    Concurrency => "concurrency",
});

#[derive(Debug, Clone, PartialEq)]
pub enum BudgetSpec {
    Ratio {
        ratio: f64,
        min_per_second: f64,
        window: Duration,
    },
    TokenBucket {
        capacity: u32,
        retry_cost: u32,
        timeout_cost: u32,
        success_refund: u32,
    },
    GrpcThrottling {
        max_tokens: f64,
        token_ratio: f64,
    },
    Concurrency {
        max: u32,
    },
}

impl BudgetSpec {
    pub(crate) const DEFAULT_WINDOW: Duration = Duration::from_secs(10);

    pub(crate) fn kind(&self) -> BudgetKind {
        match self {
            BudgetSpec::Ratio { .. } => BudgetKind::Ratio,
            BudgetSpec::TokenBucket { .. } => BudgetKind::TokenBucket,
            BudgetSpec::GrpcThrottling { .. } => BudgetKind::GrpcThrottling,
            BudgetSpec::Concurrency { .. } => BudgetKind::Concurrency,
        }
    }

    /// Attempts per request this layer sends under sustained total failure once
    /// the budget is in its steady state (docs/check.md, "How the numbers are computed"). A
    /// concurrency limit bounds retries in flight, not per request: how much
    /// it saves depends on the load, so it counts `max_attempts` here (the
    /// simulator shows what it does under a given load).
    pub(crate) fn steady_state_attempts(&self, max_attempts: u32) -> f64 {
        match self {
            BudgetSpec::Ratio { ratio, .. } => f64::from(max_attempts).min(1.0 + ratio),
            BudgetSpec::TokenBucket { .. } | BudgetSpec::GrpcThrottling { .. } => 1.0,
            BudgetSpec::Concurrency { .. } => f64::from(max_attempts),
        }
    }

    /// A fresh budget, full.
    pub(crate) fn start(&self) -> Budget {
        let state = match *self {
            BudgetSpec::Ratio { .. } => State::Ratio {
                requests: VecDeque::new(),
                retries: VecDeque::new(),
            },
            BudgetSpec::TokenBucket { capacity, .. } => State::Tokens(capacity),
            BudgetSpec::GrpcThrottling { max_tokens, .. } => State::Grpc(max_tokens),
            BudgetSpec::Concurrency { .. } => State::InFlight(0),
        };
        Budget {
            spec: self.clone(),
            state,
        }
    }
}

#[derive(Debug, Clone)]
enum State {
    Ratio {
        requests: VecDeque<Duration>,
        retries: VecDeque<Duration>,
    },
    Tokens(u32),
    Grpc(f64),
    /// Retries in flight.
    InFlight(u32),
}

/// A retry the budget allowed, and what it cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Permit {
    pub cost: u32,
}

/// The budget state of one caller, shared by all its requests.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    spec: BudgetSpec,
    state: State,
}

impl Budget {
    /// A new logical request starts (its first attempt).
    pub(crate) fn on_request(&mut self, now: Duration) {
        if let State::Ratio { requests, .. } = &mut self.state {
            requests.push_back(now);
        }
    }

    /// Asks to retry after `outcome`; `None` refuses.
    pub(crate) fn try_retry(&mut self, now: Duration, outcome: Outcome) -> Option<Permit> {
        match (&self.spec, &mut self.state) {
            (
                BudgetSpec::Ratio {
                    ratio,
                    min_per_second,
                    window,
                },
                State::Ratio { requests, retries },
            ) => {
                expire(requests, now, *window);
                expire(retries, now, *window);
                let allowed = ratio * requests.len() as f64 + min_per_second * window.as_secs_f64();
                // A small epsilon so 10 % of 10 requests allows exactly one retry.
                if (retries.len() + 1) as f64 <= allowed + 1e-9 {
                    retries.push_back(now);
                    Some(Permit { cost: 1 })
                } else {
                    None
                }
            }
            (
                BudgetSpec::TokenBucket {
                    retry_cost,
                    timeout_cost,
                    ..
                },
                State::Tokens(tokens),
            ) => {
                let cost = if outcome == Outcome::Timeout {
                    *timeout_cost
                } else {
                    *retry_cost
                };
                if *tokens >= cost {
                    *tokens -= cost;
                    Some(Permit { cost })
                } else {
                    None
                }
            }
            (BudgetSpec::GrpcThrottling { max_tokens, .. }, State::Grpc(tokens)) => {
                (*tokens > max_tokens / 2.0).then_some(Permit { cost: 0 })
            }
            (BudgetSpec::Concurrency { max }, State::InFlight(n)) => {
                if *n < *max {
                    *n += 1;
                    Some(Permit { cost: 1 })
                } else {
                    None
                }
            }
            _ => unreachable!("a budget's state always matches its spec"),
        }
    }

    /// A retry that `permit` allowed has ended, however: a concurrency
    /// limit frees its place. (Called before `on_success`.)
    pub(crate) fn on_attempt_end(&mut self, permit: Option<Permit>) {
        if let (State::InFlight(n), Some(_)) = (&mut self.state, permit) {
            *n = n.saturating_sub(1);
        }
    }

    /// An attempt succeeded; `permit` is what its retry cost, if it was one.
    pub(crate) fn on_success(&mut self, permit: Option<Permit>) {
        match (&self.spec, &mut self.state) {
            (
                BudgetSpec::TokenBucket {
                    capacity,
                    success_refund,
                    ..
                },
                State::Tokens(tokens),
            ) => {
                let refund = permit.map_or(*success_refund, |p| p.cost);
                *tokens = tokens.saturating_add(refund).min(*capacity);
            }
            (
                BudgetSpec::GrpcThrottling {
                    max_tokens,
                    token_ratio,
                },
                State::Grpc(tokens),
            ) => *tokens = (*tokens + token_ratio).min(*max_tokens),
            _ => {}
        }
    }

    /// An attempt failed with an outcome the policy retries.
    pub(crate) fn on_retryable_failure(&mut self) {
        if let State::Grpc(tokens) = &mut self.state {
            *tokens = (*tokens - 1.0).max(0.0);
        }
    }

    /// Tokens left (token kinds), retries in flight (concurrency), for the
    /// tests.
    #[cfg(test)]
    pub(crate) fn tokens(&self) -> Option<f64> {
        match &self.state {
            State::Ratio { .. } => None,
            State::InFlight(n) => Some(f64::from(*n)),
            State::Tokens(t) => Some(f64::from(*t)),
            State::Grpc(t) => Some(*t),
        }
    }
}

fn expire(times: &mut VecDeque<Duration>, now: Duration, window: Duration) {
    while times
        .front()
        .is_some_and(|t| now.saturating_sub(*t) >= window)
    {
        times.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ratio(r: f64, min: f64) -> BudgetSpec {
        BudgetSpec::Ratio {
            ratio: r,
            min_per_second: min,
            window: BudgetSpec::DEFAULT_WINDOW,
        }
    }

    #[test]
    fn ratio_allows_ten_percent() {
        let mut b = ratio(0.1, 0.0).start();
        let now = Duration::from_secs(1);
        let mut granted = 0;
        for _ in 0..100 {
            b.on_request(now);
            for _ in 0..2 {
                if b.try_retry(now, Outcome::Status(503)).is_some() {
                    granted += 1;
                }
            }
        }
        assert_eq!(granted, 10);
    }

    #[test]
    fn ratio_window_slides() {
        let mut b = ratio(0.5, 0.0).start();
        b.on_request(Duration::ZERO);
        b.on_request(Duration::ZERO);
        assert!(b.try_retry(Duration::ZERO, Outcome::Timeout).is_some());
        assert!(b.try_retry(Duration::ZERO, Outcome::Timeout).is_none());
        // Ten seconds later the old requests and retries have left the window.
        let later = Duration::from_secs(10);
        assert!(b.try_retry(later, Outcome::Timeout).is_none());
        b.on_request(later);
        b.on_request(later);
        assert!(b.try_retry(later, Outcome::Timeout).is_some());
    }

    #[test]
    fn token_bucket_is_the_aws_quota() {
        let spec = BudgetSpec::TokenBucket {
            capacity: 500,
            retry_cost: 5,
            timeout_cost: 10,
            success_refund: 1,
        };
        let mut b = spec.start();
        let mut granted = 0;
        while b.try_retry(Duration::ZERO, Outcome::Status(503)).is_some() {
            granted += 1;
        }
        assert_eq!(granted, 100);
        b.on_success(None);
        assert_eq!(b.tokens(), Some(1.0));
        let mut b = spec.start();
        let p = b.try_retry(Duration::ZERO, Outcome::Timeout).unwrap();
        assert_eq!(b.tokens(), Some(490.0));
        b.on_success(Some(p));
        assert_eq!(b.tokens(), Some(500.0));
    }

    #[test]
    fn grpc_throttling_stops_at_half() {
        let spec = BudgetSpec::GrpcThrottling {
            max_tokens: 10.0,
            token_ratio: 0.1,
        };
        let mut b = spec.start();
        let mut retries = 0;
        loop {
            b.on_retryable_failure();
            if b.try_retry(Duration::ZERO, Outcome::Status(503)).is_none() {
                break;
            }
            retries += 1;
        }
        // 10 → 9, 8, 7, 6 allow; 5 is not above 5.
        assert_eq!(retries, 4);
        for _ in 0..10 {
            b.on_success(None);
        }
        assert!((b.tokens().unwrap() - 6.0).abs() < 1e-9);
    }

    #[test]
    fn concurrency_holds_retries_in_flight_to_its_max() {
        let mut b = BudgetSpec::Concurrency { max: 2 }.start();
        let p1 = b.try_retry(Duration::ZERO, Outcome::Status(503));
        let p2 = b.try_retry(Duration::ZERO, Outcome::Status(503));
        assert!(p1.is_some() && p2.is_some());
        assert!(b.try_retry(Duration::ZERO, Outcome::Status(503)).is_none());
        b.on_attempt_end(p1);
        assert_eq!(b.tokens(), Some(1.0));
        assert!(b.try_retry(Duration::ZERO, Outcome::Status(503)).is_some());
        // A first attempt (no permit) frees nothing.
        b.on_attempt_end(None);
        assert_eq!(b.tokens(), Some(2.0));
    }

    proptest! {
        #[test]
        fn ratio_never_allows_more_than_its_bound(
            r in 0.0f64..=1.0, min in 0.0f64..5.0,
            events in proptest::collection::vec((0u64..30_000, any::<bool>()), 1..400)
        ) {
            let spec = ratio(r, min);
            let mut b = spec.start();
            let mut log: Vec<(Duration, bool)> = Vec::new();
            let mut sorted = events;
            sorted.sort();
            for (ms, is_request) in sorted {
                let now = Duration::from_millis(ms);
                if is_request {
                    b.on_request(now);
                    log.push((now, true));
                } else if b.try_retry(now, Outcome::Status(503)).is_some() {
                    log.push((now, false));
                    // At the moment of each grant, the window holds within the bound.
                    let in_window = |want| log.iter().filter(|(t, q)| *q == want && now.saturating_sub(*t) < BudgetSpec::DEFAULT_WINDOW).count() as f64;
                    prop_assert!(in_window(false) <= r * in_window(true) + min * 10.0 + 1e-6);
                }
            }
        }

        #[test]
        fn token_bucket_never_overdraws(capacity in 0u32..1000, cost in 1u32..20, n in 0usize..500) {
            let spec = BudgetSpec::TokenBucket { capacity, retry_cost: cost, timeout_cost: cost * 2, success_refund: 1 };
            let mut b = spec.start();
            let granted = (0..n).filter(|_| b.try_retry(Duration::ZERO, Outcome::Status(503)).is_some()).count();
            prop_assert_eq!(granted, n.min((capacity / cost) as usize));
        }
    }
}
