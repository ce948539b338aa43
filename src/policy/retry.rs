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
use super::{Backoff, Budget, BudgetSpec, FOREVER, Outcome, RetryOn, Rng};

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts including the first; at least 1.
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
    pub fn retries(&self) -> bool {
        self.max_attempts > 1
    }

    /// Attempts per request under sustained total failure with the budget in its
    /// steady state; `max_attempts` without a budget.
    pub fn steady_state_attempts(&self) -> f64 {
        match &self.budget {
            Some(b) => b.steady_state_attempts(self.max_attempts),
            None => f64::from(self.max_attempts),
        }
    }

    /// The longest all waits between the attempts of one request can add up to.
    pub fn max_total_wait(&self) -> Duration {
        (1..self.max_attempts)
            .map(|k| self.backoff.max_wait(k))
            .fold(Duration::ZERO, |a, b| a.saturating_add(b).min(FOREVER))
    }

    /// The shortest time before retry `retry` can start, counted from the start of
    /// the first attempt when every attempt fails at once.
    pub fn min_start_of_retry(&self, retry: u32) -> Duration {
        (1..=retry)
            .map(|k| self.backoff.min_wait(k))
            .fold(Duration::ZERO, |a, b| a.saturating_add(b).min(FOREVER))
    }
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
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
}

impl Stop {
    /// Every reason, in the order reports list them.
    pub const ALL: [Stop; 6] = [
        Stop::Succeeded,
        Stop::NotRetryable,
        Stop::AttemptsExhausted,
        Stop::BudgetExhausted,
        Stop::DeadlineExceeded,
        Stop::Horizon,
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
pub struct Bounds {
    /// Absolute time by which the caller needs the answer.
    pub deadline: Option<Duration>,
    /// No attempt of the run starts at or after it.
    pub horizon: Option<Duration>,
}

impl Bounds {
    /// The earliest limit and the reason a request stops at it: the horizon
    /// when it comes no later than the deadline.
    pub fn limit(&self) -> Option<(Duration, Stop)> {
        match (self.deadline, self.horizon) {
            (Some(d), Some(h)) if h <= d => Some((h, Stop::Horizon)),
            (Some(d), _) => Some((d, Stop::DeadlineExceeded)),
            (None, Some(h)) => Some((h, Stop::Horizon)),
            (None, None) => None,
        }
    }

    /// Why no attempt may start at `now`, if none may.
    pub fn refuses_start(&self, now: Duration) -> Option<Stop> {
        self.limit()
            .and_then(|(at, why)| (now >= at).then_some(why))
    }

    /// The time an attempt started at `now` may take: the layer's per-attempt
    /// timeout capped by what the deadline leaves (the horizon does not cut
    /// an attempt short: it only stops new ones).
    pub fn attempt_timeout(&self, now: Duration, timeout: Option<Duration>) -> Option<Duration> {
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
pub struct RetrySession<'p> {
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
    pub fn start(
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
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The bounds the request runs under.
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// The timeout of an attempt starting at `now` through a layer whose
    /// per-attempt timeout is `timeout` (see [`Bounds::attempt_timeout`]).
    pub fn attempt_timeout(&self, now: Duration, timeout: Option<Duration>) -> Option<Duration> {
        self.bounds.attempt_timeout(now, timeout)
    }

    /// Records an attempt that ended at `now` with `outcome` and decides what
    /// comes next. `retry_after` is the server's Retry-After, already parsed.
    pub fn after_attempt(
        &mut self,
        now: Duration,
        outcome: Outcome,
        retry_after: Option<Duration>,
        mut budget: Option<&mut Budget>,
        rng: &mut Rng,
    ) -> Decision {
        self.attempts += 1;
        let permit = self.permit.take();
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
                "horizon"
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
}
