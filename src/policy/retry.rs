//! One request's attempts under a policy: after each failed attempt, a decision
//! to retry after a wait or to stop, and why.
//!
//! The simulator and the chaos client drive the same loop:
//!
//! ```text
//! let bounds = Bounds { deadline, horizon };
//! if let Some(why) = bounds.refuses_start(now) { return stop(why) }
//! let mut session = RetrySession::start(&policy, now, bounds, budget);
//! loop {
//!     let timeout = session.attempt_timeout(now, layer_timeout);
//!     let outcome = attempt(timeout);                  // real HTTP or virtual
//!     match session.after_attempt(now, outcome, retry_after, budget, rng) {
//!         Decision::Retry { wait, .. } => sleep(wait),
//!         Decision::Stop(why) => break,
//!     }
//! }
//! ```
//!
//! Deadline accounting lives here too: no attempt starts at or after the
//! request's deadline or the run's horizon (whichever comes first, and the
//! stop says which), and an attempt's timeout is capped by the time the
//! deadline leaves it.

use std::time::Duration;

use super::budget::Permit;
use super::schedule::{self, Tail};
use super::{Backoff, Budget, BudgetSpec, Outcome, RetryOn, Rng};

/// The most attempts a count may ask for: 2^31 − 1, the largest count real
/// systems ship (Kafka's producer retries `Integer.MAX_VALUE` times, bounded by
/// `delivery.timeout.ms`). Beyond it, write `unlimited`.
pub(crate) const MAX_ATTEMPTS_LIMIT: u32 = i32::MAX as u32;

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts including the first; at least 1. `UNLIMITED` for
    /// `max_attempts: unlimited`.
    pub max_attempts: u32,
    pub backoff: Backoff,
    pub retry_on: RetryOn,
    pub honor_retry_after: bool,
    pub budget: Option<BudgetSpec>,
}

impl Default for RetryPolicy {
    /// No retries: what a call without a `retry` section does.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 1,
            backoff: Backoff::default(),
            retry_on: RetryOn::default(),
            honor_retry_after: true,
            budget: None,
        }
    }
}

impl RetryPolicy {
    /// `max_attempts: unlimited`: retry until something else stops it — the
    /// deadline the session is given (a caller's timeout, the run's horizon)
    /// or the budget. A sentinel rather than an enum so every loop over
    /// `after_attempt` stays as it is: the session still stops after this many
    /// attempts, so it always ends and its counter never overflows, and no
    /// count that may be written reaches it (they stop at 2^31 − 1).
    pub const UNLIMITED: u32 = u32::MAX;

    pub fn retries(&self) -> bool {
        self.max_attempts > 1
    }

    /// `max_attempts: unlimited`.
    pub fn is_unlimited(&self) -> bool {
        self.max_attempts == Self::UNLIMITED
    }

    /// The count as a user writes it: `3`, or `unlimited`.
    pub(crate) fn attempts_text(&self) -> String {
        if self.is_unlimited() {
            "unlimited".to_owned()
        } else {
            self.max_attempts.to_string()
        }
    }

    /// Attempts per request under sustained total failure with the budget in
    /// its steady state, for a layer that can make at most `attempts` per
    /// request (fewer than `max_attempts` when time bounds it); `attempts`
    /// without a budget.
    pub(crate) fn steady_state_of(&self, attempts: u32) -> f64 {
        match &self.budget {
            Some(b) => b.steady_state_attempts(attempts),
            None => f64::from(attempts),
        }
    }

    /// The longest all waits between the attempts of one request can add up to.
    #[cfg(test)]
    pub(crate) fn max_total_wait(&self) -> Duration {
        self.max_wait_over(self.max_attempts)
    }

    /// The longest the waits between `attempts` attempts can add up to.
    pub(crate) fn max_wait_over(&self, attempts: u32) -> Duration {
        schedule::sum(attempts.saturating_sub(1), Tail::Longest, |k| {
            self.backoff.max_wait(k)
        })
    }

    /// The shortest time before retry `retry` can start, counted from the start of
    /// the first attempt when every attempt fails at once.
    pub(crate) fn min_start_of_retry(&self, retry: u32) -> Duration {
        schedule::sum(retry, Tail::Shortest, |k| self.backoff.min_wait(k))
    }

    /// Attempts that can start before `within` has passed since the first one,
    /// when every attempt fails at once and every wait is its shortest draw: the
    /// most that can start, as the session's deadline check allows them. All
    /// `max_attempts` when the shortest waits are zero (no backoff, full jitter).
    pub fn attempts_startable_within(&self, within: Duration) -> u32 {
        let retries = self.max_attempts.saturating_sub(1);
        1 + schedule::retries_before(within, retries, |k| self.backoff.min_wait(k))
    }

    /// Attempts that can start before `within` has passed since the first one
    /// when every attempt lasts `each` before it fails (a hung callee, each
    /// attempt ended by its timeout) and every wait is its shortest draw.
    pub(crate) fn attempts_startable_lasting(&self, within: Duration, each: Duration) -> u32 {
        let retries = self.max_attempts.saturating_sub(1);
        1 + schedule::retries_before(within, retries, |k| {
            each.saturating_add(self.backoff.min_wait(k))
        })
    }

    /// The earliest retry `retry` can start when every attempt before it
    /// lasts `each`.
    pub(crate) fn min_start_lasting(&self, retry: u32, each: Duration) -> Duration {
        each.checked_mul(retry)
            .unwrap_or(super::FOREVER)
            .saturating_add(self.min_start_of_retry(retry))
            .min(super::FOREVER)
    }

    /// The same with every wait at its mean: what typically fits where the
    /// shortest draw bounds nothing (full jitter may draw 0 every time).
    pub(crate) fn attempts_typically_within(&self, within: Duration) -> u32 {
        let retries = self.max_attempts.saturating_sub(1);
        1 + schedule::retries_before(within, retries, |k| self.backoff.mean_wait(k))
    }

    /// Whether the shortest waits stay zero for ever, so that no stretch of
    /// time bounds how many attempts fit into it.
    pub(crate) fn waits_can_all_be_zero(&self) -> bool {
        self.backoff.min_wait(u32::MAX).is_zero()
    }
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Decision {
    Retry {
        wait: Duration,
        /// The outcome that is being retried.
        cause: Outcome,
        /// The wait comes from the server's Retry-After.
        honored_retry_after: bool,
    },
    Stop(Stop),
}

/// Why a request stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stop {
    Succeeded,
    /// The outcome is not in `retry_on`.
    NotRetryable,
    AttemptsExhausted,
    /// The retry budget refused.
    BudgetExhausted,
    /// The next attempt could not start before the deadline.
    DeadlineExceeded,
    /// The next attempt could not start before the run's horizon (which came
    /// before any deadline).
    Horizon,
    /// The circuit breaker rejected the request (it was open).
    CircuitOpen,
}

impl Stop {
    /// Every reason, in the order reports list them.
    pub(crate) const ALL: [Stop; 7] = [
        Stop::Succeeded,
        Stop::NotRetryable,
        Stop::AttemptsExhausted,
        Stop::BudgetExhausted,
        Stop::DeadlineExceeded,
        Stop::Horizon,
        Stop::CircuitOpen,
    ];

    /// How reports name the reason.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Succeeded => "succeeded",
            Stop::NotRetryable => "not_retryable",
            Stop::AttemptsExhausted => "attempts_exhausted",
            Stop::BudgetExhausted => "budget_exhausted",
            Stop::DeadlineExceeded => "deadline_exceeded",
            Stop::Horizon => "horizon",
            Stop::CircuitOpen => "circuit_open",
        }
    }

    /// The reason's place in [`Stop::ALL`], for counters kept in an array.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The times by which a request's attempts must have started: its deadline,
/// when one travels with it, and the run's horizon, when there is one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// Absolute time by which the caller needs the answer.
    pub deadline: Option<Duration>,
    /// No attempt of the run starts at or after it.
    pub horizon: Option<Duration>,
}

impl Bounds {
    /// The earliest limit and the reason a request stops at it: the horizon
    /// when it comes no later than the deadline.
    pub(crate) fn limit(&self) -> Option<(Duration, Stop)> {
        match (self.deadline, self.horizon) {
            (Some(d), Some(h)) if h <= d => Some((h, Stop::Horizon)),
            (Some(d), _) => Some((d, Stop::DeadlineExceeded)),
            (None, Some(h)) => Some((h, Stop::Horizon)),
            (None, None) => None,
        }
    }

    /// Why no attempt may start at `now`, if none may.
    pub(crate) fn refuses_start(&self, now: Duration) -> Option<Stop> {
        self.limit()
            .and_then(|(at, why)| (now >= at).then_some(why))
    }

    /// The time an attempt started at `now` may take: the layer's per-attempt
    /// timeout capped by what the deadline leaves (the horizon does not cut
    /// an attempt short: it only stops new ones).
    pub(crate) fn attempt_timeout(
        &self,
        now: Duration,
        timeout: Option<Duration>,
    ) -> Option<Duration> {
        match self.deadline {
            Some(d) => {
                let left = d.saturating_sub(now);
                Some(timeout.map_or(left, |t| t.min(left)))
            }
            None => timeout,
        }
    }
}

/// The attempts of one logical request.
#[derive(Debug, Clone)]
pub(crate) struct RetrySession<'p> {
    policy: &'p RetryPolicy,
    attempts: u32,
    prev_wait: Duration,
    bounds: Bounds,
    permit: Option<Permit>,
}

impl<'p> RetrySession<'p> {
    /// Starts a request at `now` under `bounds` (check
    /// [`Bounds::refuses_start`] first: the first attempt must be able to
    /// start).
    pub(crate) fn start(
        policy: &'p RetryPolicy,
        now: Duration,
        bounds: Bounds,
        budget: Option<&mut Budget>,
    ) -> Self {
        if let Some(b) = budget {
            b.on_request(now);
        }
        RetrySession {
            policy,
            attempts: 0,
            prev_wait: policy.backoff.initial_prev(),
            bounds,
            permit: None,
        }
    }

    /// Attempts made so far.
    #[cfg(test)]
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The request is given up midway (its caller went away): a retry in
    /// flight frees what it holds of the budget.
    pub(crate) fn abandon(&mut self, budget: Option<&mut Budget>) {
        if let Some(b) = budget {
            b.on_attempt_end(self.permit.take());
        }
    }

    /// The bounds the request runs under.
    pub(crate) fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// The timeout of an attempt starting at `now` through a layer whose
    /// per-attempt timeout is `timeout` (see [`Bounds::attempt_timeout`]).
    pub(crate) fn attempt_timeout(
        &self,
        now: Duration,
        timeout: Option<Duration>,
    ) -> Option<Duration> {
        self.bounds.attempt_timeout(now, timeout)
    }

    /// Records an attempt that ended at `now` with `outcome` and decides what
    /// comes next. `retry_after` is the server's Retry-After, already parsed.
    pub(crate) fn after_attempt(
        &mut self,
        now: Duration,
        outcome: Outcome,
        retry_after: Option<Duration>,
        mut budget: Option<&mut Budget>,
        rng: &mut Rng,
    ) -> Decision {
        self.attempts += 1;
        let permit = self.permit.take();
        if let Some(b) = budget.as_deref_mut() {
            b.on_attempt_end(permit);
        }
        if outcome.is_success() {
            if let Some(b) = budget.as_deref_mut() {
                b.on_success(permit);
            }
            return Decision::Stop(Stop::Succeeded);
        }
        if !self.policy.retry_on.matches(outcome) {
            return Decision::Stop(Stop::NotRetryable);
        }
        if let Some(b) = budget.as_deref_mut() {
            b.on_retryable_failure();
        }
        if self.attempts >= self.policy.max_attempts {
            return Decision::Stop(Stop::AttemptsExhausted);
        }
        let mut wait = self.policy.backoff.wait(self.attempts, self.prev_wait, rng);
        let mut honored_retry_after = false;
        if self.policy.honor_retry_after
            && let Some(ra) = retry_after
            && ra > wait
        {
            wait = ra;
            honored_retry_after = true;
        }
        // Decorrelated jitter grows from the wait actually taken.
        self.prev_wait = wait;
        // The deadline is checked before the budget, so a retry that could not
        // start in time costs no budget.
        if let Some(why) = self.bounds.refuses_start(now.saturating_add(wait)) {
            return Decision::Stop(why);
        }
        if let Some(b) = budget {
            match b.try_retry(now, outcome) {
                Some(p) => self.permit = Some(p),
                None => return Decision::Stop(Stop::BudgetExhausted),
            }
        }
        Decision::Retry {
            wait,
            cause: outcome,
            honored_retry_after,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{BackoffKind, Jitter, seeded_rng};

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn policy(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            backoff: Backoff {
                kind: BackoffKind::Exponential,
                base: ms(100),
                multiplier: 2.0,
                cap: Some(ms(1000)),
                jitter: Jitter::None,
            },
            ..RetryPolicy::default()
        }
    }

    /// Runs a request whose every attempt fails with `outcome` at once.
    fn run(
        p: &RetryPolicy,
        outcome: Outcome,
        retry_after: Option<Duration>,
        deadline: Option<Duration>,
        mut budget: Option<&mut Budget>,
    ) -> (u32, Vec<Duration>, Stop) {
        let mut rng = seeded_rng(1);
        let mut now = Duration::ZERO;
        let bounds = Bounds {
            deadline,
            horizon: None,
        };
        let mut s = RetrySession::start(p, now, bounds, budget.as_deref_mut());
        let mut waits = vec![];
        loop {
            match s.after_attempt(now, outcome, retry_after, budget.as_deref_mut(), &mut rng) {
                Decision::Retry { wait, .. } => {
                    waits.push(wait);
                    now += wait;
                }
                Decision::Stop(why) => return (s.attempts(), waits, why),
            }
        }
    }

    #[test]
    fn exhausts_attempts_with_the_backoff_schedule() {
        let (n, waits, why) = run(&policy(4), Outcome::Status(503), None, None, None);
        assert_eq!(n, 4);
        assert_eq!(waits, [ms(100), ms(200), ms(400)]);
        assert_eq!(why, Stop::AttemptsExhausted);
    }

    #[test]
    fn permanent_errors_stop_at_once() {
        let (n, _, why) = run(&policy(4), Outcome::Status(404), None, None, None);
        assert_eq!((n, why), (1, Stop::NotRetryable));
    }

    #[test]
    fn success_stops() {
        let (n, _, why) = run(&policy(4), Outcome::Status(200), None, None, None);
        assert_eq!((n, why), (1, Stop::Succeeded));
    }

    #[test]
    fn retry_after_replaces_a_shorter_wait_only() {
        let (_, waits, _) = run(&policy(3), Outcome::Status(429), Some(ms(150)), None, None);
        assert_eq!(waits, [ms(150), ms(200)]);
        let mut ignoring = policy(3);
        ignoring.honor_retry_after = false;
        let (_, waits, _) = run(&ignoring, Outcome::Status(429), Some(ms(150)), None, None);
        assert_eq!(waits, [ms(100), ms(200)]);
    }

    #[test]
    fn no_attempt_starts_at_or_after_the_deadline() {
        // Attempts at 0, 100, 300; the next would start at 700 ≥ 700.
        let (n, _, why) = run(&policy(5), Outcome::Timeout, None, Some(ms(700)), None);
        assert_eq!((n, why), (3, Stop::DeadlineExceeded));
    }

    #[test]
    fn budget_refusal_stops() {
        let mut p = policy(3);
        p.budget = Some(BudgetSpec::Ratio {
            ratio: 0.0,
            min_per_second: 0.0,
            window: BudgetSpec::DEFAULT_WINDOW,
        });
        let mut b = p.budget.as_ref().unwrap().start();
        let (n, _, why) = run(&p, Outcome::Status(503), None, None, Some(&mut b));
        assert_eq!((n, why), (1, Stop::BudgetExhausted));
    }

    #[test]
    fn the_earlier_of_deadline_and_horizon_stops_and_says_which() {
        let b = Bounds {
            deadline: Some(ms(700)),
            horizon: Some(ms(500)),
        };
        assert_eq!(b.limit(), Some((ms(500), Stop::Horizon)));
        assert_eq!(b.refuses_start(ms(499)), None);
        assert_eq!(b.refuses_start(ms(500)), Some(Stop::Horizon));
        let b = Bounds {
            deadline: Some(ms(500)),
            horizon: Some(ms(500)),
        };
        assert_eq!(
            b.limit(),
            Some((ms(500), Stop::Horizon)),
            "a tie is the horizon's"
        );
        let b = Bounds {
            deadline: Some(ms(300)),
            horizon: Some(ms(500)),
        };
        assert_eq!(b.refuses_start(ms(300)), Some(Stop::DeadlineExceeded));
        // The deadline caps an attempt's timeout; the horizon does not.
        assert_eq!(b.attempt_timeout(ms(250), Some(ms(100))), Some(ms(50)));
        assert_eq!(b.attempt_timeout(ms(0), Some(ms(100))), Some(ms(100)));
        assert_eq!(b.attempt_timeout(ms(250), None), Some(ms(50)));
        assert_eq!(Bounds::default().attempt_timeout(ms(9), None), None);
        let names: Vec<&str> = Stop::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            [
                "succeeded",
                "not_retryable",
                "attempts_exhausted",
                "budget_exhausted",
                "deadline_exceeded",
                "horizon",
                "circuit_open"
            ]
        );
        assert!(Stop::ALL.iter().enumerate().all(|(i, s)| s.index() == i));
    }

    #[test]
    fn worst_case_waits() {
        assert_eq!(policy(4).max_total_wait(), ms(700));
        assert_eq!(policy(1).max_total_wait(), Duration::ZERO);
        assert_eq!(policy(4).min_start_of_retry(2), ms(300));
    }

    #[test]
    fn huge_counts_are_summed_without_walking_them() {
        // 100, 200, 400, 800, then 1 s for ever.
        let p = policy(RetryPolicy::UNLIMITED);
        let n = u64::from(u32::MAX) - 5;
        assert_eq!(p.max_total_wait(), ms(1500) + Duration::from_secs(n));
        assert_eq!(p.min_start_of_retry(6), ms(3500));
        assert!(p.is_unlimited());
        assert_eq!(p.attempts_text(), "unlimited");
        assert_eq!(policy(7).attempts_text(), "7");
    }

    #[test]
    fn attempts_that_fit_in_time() {
        // Retries can start at 100, 300, 700, 1500, 2500, 3500, … ms.
        let p = policy(RetryPolicy::UNLIMITED);
        assert_eq!(p.attempts_startable_within(ms(700)), 3);
        assert_eq!(p.attempts_startable_within(ms(2501)), 6);
        assert_eq!(
            p.attempts_startable_within(Duration::from_secs(120)),
            4 + 119
        );
        assert_eq!(
            policy(3).attempts_startable_within(Duration::from_secs(120)),
            3
        );
        let mut full = p.clone();
        full.backoff.jitter = Jitter::Full;
        assert!(full.waits_can_all_be_zero());
        assert_eq!(
            full.attempts_startable_within(ms(700)),
            RetryPolicy::UNLIMITED
        );
        // Mean waits 50, 100, 200, 400, then 500 ms: starts at 50, 150, 350, 750, 1250, ….
        assert_eq!(full.attempts_typically_within(ms(1250)), 5);
        assert!(!p.waits_can_all_be_zero());
    }

    #[test]
    fn attempts_that_fit_when_each_lasts_its_timeout() {
        // Each attempt hangs for 1 s; the shortest waits are 100, 200, 400 ms:
        // retries start at 1.1 s, 2.3 s and 3.7 s.
        let p = policy(4);
        assert_eq!(p.min_start_lasting(1, ms(1000)), ms(1100));
        assert_eq!(p.min_start_lasting(3, ms(1000)), ms(3700));
        assert_eq!(p.attempts_startable_lasting(ms(1100), ms(1000)), 1);
        assert_eq!(p.attempts_startable_lasting(ms(1101), ms(1000)), 2);
        assert_eq!(p.attempts_startable_lasting(ms(3701), ms(1000)), 4);
        // Full jitter waits nothing at best: the attempts alone decide.
        let mut full = p.clone();
        full.backoff.jitter = Jitter::Full;
        assert_eq!(full.attempts_startable_lasting(ms(2001), ms(1000)), 3);
    }

    #[test]
    fn an_unlimited_session_is_stopped_by_its_deadline() {
        let p = policy(RetryPolicy::UNLIMITED);
        let (n, _, why) = run(
            &p,
            Outcome::Status(503),
            None,
            Some(Duration::from_secs(60)),
            None,
        );
        // Starts at 0, 0.1, 0.3, 0.7, 1.5, 2.5, …, 59.5 s: 5 + 58; the analysis agrees.
        assert_eq!((n, why), (63, Stop::DeadlineExceeded));
        assert_eq!(p.attempts_startable_within(Duration::from_secs(60)), 63);
    }
}
