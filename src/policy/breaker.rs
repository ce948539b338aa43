//! Circuit breakers: the state machine (closed → open → half-open → closed
//! or open again), once, for both engines, with state per caller.
//!
//! - **Closed**: calls pass; their results fill the window (the last
//!   `window` of time, or the last N calls). Once the window holds at least
//!   `min_calls` and the share that failed reaches `failure_rate`, the
//!   breaker opens.
//! - **Open** for `open_for × uniform(1 − open_jitter, 1 + open_jitter)`:
//!   every call is rejected at once (short-circuited). With no jitter every
//!   caller that opened together goes half-open together.
//! - **Half-open**: `half_open_calls` probes pass; the first failure opens it
//!   again, `half_open_calls` successes close it (with an empty window).
//!   Calls beyond the probes are rejected.
//!
//! What is recorded and where admission is asked follow the spec:
//! `counts: outcomes` records each logical request's result after its
//! retries, `attempts` every attempt; `position: outside` asks once per
//! logical request (the retry loop runs inside the breaker, as
//! Resilience4j's `withRetry(...).withCircuitBreaker(...)`), `inside` before
//! every attempt (the retry loop retries the rejections).

use std::collections::VecDeque;
use std::time::Duration;

use rand::RngExt;

use super::{Outcome, Rng};

/// Whether a breaker counts `outcome` as a failure of its dependency: a 5xx,
/// a 429, a timeout, a refused or reset connection. Other 4xx answers are
/// the caller's mistakes, not the dependency's health.
pub(crate) fn counts_as_failure(outcome: Outcome) -> bool {
    match outcome {
        Outcome::Status(s) => s >= 500 || s == 429,
        _ => true,
    }
}

/// The status a caller sees when its breaker rejects a request (Envoy
/// answers 503 when a circuit breaker overflows).
pub(crate) const REJECTED: Outcome = Outcome::Status(503);

/// The window a breaker judges the failure rate over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum BreakerWindow {
    /// Calls that ended in the last this long.
    Time(Duration),
    /// The last this many calls.
    Calls(u32),
}

/// What a breaker records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BreakerCounts {
    /// Each logical request's result after its retries (the default).
    Outcomes,
    /// Every attempt.
    Attempts,
}

/// Where a breaker sits relative to the retry loop of its layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BreakerPosition {
    /// Around the retry loop: asked once per logical request (the default).
    Outside,
    /// Inside it: asked before every attempt.
    Inside,
}

named!(BreakerCounts {
    Outcomes => "outcomes",
    Attempts => "attempts",
});

named!(BreakerPosition {
    Outside => "outside",
    Inside => "inside",
});

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BreakerSpec {
    pub failure_rate: f64,
    pub window: BreakerWindow,
    pub min_calls: u32,
    pub open_for: Duration,
    /// 0..=1.
    pub open_jitter: f64,
    pub half_open_calls: u32,
    pub counts: BreakerCounts,
    pub position: BreakerPosition,
}

impl Default for BreakerSpec {
    /// Resilience4j's defaults: 50 %, the last 100 calls, 100 calls at least,
    /// 60 s open, 10 probes, no jitter.
    fn default() -> Self {
        BreakerSpec {
            failure_rate: 0.5,
            window: BreakerWindow::Calls(100),
            min_calls: 100,
            open_for: Duration::from_secs(60),
            open_jitter: 0.0,
            half_open_calls: 10,
            counts: BreakerCounts::Outcomes,
            position: BreakerPosition::Outside,
        }
    }
}

impl BreakerSpec {
    /// A fresh breaker, closed.
    pub(crate) fn start(&self) -> Breaker {
        Breaker {
            spec: self.clone(),
            state: State::Closed,
            window: VecDeque::new(),
            failures: 0,
        }
    }

    /// Whether it records every attempt (else each logical request's result).
    pub(crate) fn counts_attempts(&self) -> bool {
        self.counts == BreakerCounts::Attempts
    }

    /// Whether it is asked before every attempt (else once per request).
    pub(crate) fn inside(&self) -> bool {
        self.position == BreakerPosition::Inside
    }
}

/// What a breaker says to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Closed: go.
    Pass,
    /// Half-open: go, as one of the probes.
    Probe,
    /// Open, or half-open with every probe taken: fail at once.
    Reject,
}

/// A change of state, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    Opened,
    HalfOpened,
    Closed,
}

impl Transition {
    /// Every transition, in the order counters keep them.
    pub(crate) const ALL: [Transition; 3] = [
        Transition::Opened,
        Transition::HalfOpened,
        Transition::Closed,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Transition::Opened => "open",
            Transition::HalfOpened => "half_open",
            Transition::Closed => "closed",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Closed,
    Open { until: Duration },
    HalfOpen { admitted: u32, succeeded: u32 },
}

/// The breaker of one caller.
#[derive(Debug, Clone)]
pub(crate) struct Breaker {
    spec: BreakerSpec,
    state: State,
    /// (when it ended, failed) of the calls in the window, oldest first.
    window: VecDeque<(Duration, bool)>,
    failures: u32,
}

impl Breaker {
    pub(crate) fn spec(&self) -> &BreakerSpec {
        &self.spec
    }

    /// Asks to let a call through at `now`. An open breaker whose time is
    /// up turns half-open first (reported in `transitions`).
    pub(crate) fn admit(&mut self, now: Duration, transitions: &mut Vec<Transition>) -> Admission {
        if let State::Open { until } = self.state
            && now >= until
        {
            self.state = State::HalfOpen {
                admitted: 0,
                succeeded: 0,
            };
            transitions.push(Transition::HalfOpened);
        }
        match &mut self.state {
            State::Closed => Admission::Pass,
            State::Open { .. } => Admission::Reject,
            State::HalfOpen { admitted, .. } => {
                if *admitted < self.spec.half_open_calls.max(1) {
                    *admitted += 1;
                    Admission::Probe
                } else {
                    Admission::Reject
                }
            }
        }
    }

    /// Records the result of a call that was let through with `admission`.
    /// A result that comes back after the breaker moved on (a call admitted
    /// while closed that ends while open) is not counted.
    pub(crate) fn record(
        &mut self,
        now: Duration,
        admission: Admission,
        failed: bool,
        rng: &mut Rng,
        transitions: &mut Vec<Transition>,
    ) {
        match (&mut self.state, admission) {
            (State::Closed, Admission::Pass) => {
                self.window.push_back((now, failed));
                self.failures += u32::from(failed);
                self.trim(now);
                let calls = self.window.len() as u32;
                if calls >= self.spec.min_calls.max(1)
                    && f64::from(self.failures) >= self.spec.failure_rate * f64::from(calls) - 1e-9
                    && self.failures > 0
                {
                    self.open(now, rng, transitions);
                }
            }
            (State::HalfOpen { succeeded, .. }, Admission::Probe) => {
                if failed {
                    self.open(now, rng, transitions);
                } else {
                    *succeeded += 1;
                    if *succeeded >= self.spec.half_open_calls.max(1) {
                        self.state = State::Closed;
                        self.window.clear();
                        self.failures = 0;
                        transitions.push(Transition::Closed);
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether a call would be rejected at `now` without asking.
    #[cfg(test)]
    pub(crate) fn is_open(&self, now: Duration) -> bool {
        matches!(self.state, State::Open { until } if now < until)
    }

    fn open(&mut self, now: Duration, rng: &mut Rng, transitions: &mut Vec<Transition>) {
        let j = self.spec.open_jitter.clamp(0.0, 1.0);
        let factor = if j > 0.0 {
            rng.random_range(1.0 - j..=1.0 + j)
        } else {
            1.0
        };
        let open_for = Duration::try_from_secs_f64(self.spec.open_for.as_secs_f64() * factor)
            .unwrap_or(super::FOREVER);
        self.state = State::Open {
            until: now.saturating_add(open_for),
        };
        self.window.clear();
        self.failures = 0;
        transitions.push(Transition::Opened);
    }

    fn trim(&mut self, now: Duration) {
        match self.spec.window {
            BreakerWindow::Calls(n) => {
                while self.window.len() > n.max(1) as usize {
                    if let Some((_, f)) = self.window.pop_front() {
                        self.failures -= u32::from(f);
                    }
                }
            }
            BreakerWindow::Time(d) => {
                while self
                    .window
                    .front()
                    .is_some_and(|(t, _)| now.saturating_sub(*t) >= d)
                {
                    if let Some((_, f)) = self.window.pop_front() {
                        self.failures -= u32::from(f);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::seeded_rng;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn spec() -> BreakerSpec {
        BreakerSpec {
            failure_rate: 0.5,
            window: BreakerWindow::Time(Duration::from_secs(10)),
            min_calls: 4,
            open_for: Duration::from_secs(5),
            open_jitter: 0.0,
            half_open_calls: 2,
            counts: BreakerCounts::Outcomes,
            position: BreakerPosition::Outside,
        }
    }

    #[test]
    fn opens_at_the_rate_after_min_calls_then_probes_and_closes() {
        let mut b = spec().start();
        let mut rng = seeded_rng(1);
        let mut t = Vec::new();
        // Three failures are not enough calls; the fourth call decides.
        for i in 0..3 {
            assert_eq!(b.admit(ms(i), &mut t), Admission::Pass);
            b.record(ms(i), Admission::Pass, true, &mut rng, &mut t);
        }
        assert!(t.is_empty());
        b.record(ms(3), Admission::Pass, false, &mut rng, &mut t);
        assert_eq!(t, [Transition::Opened], "3 of 4 failed ≥ 50 %");
        assert_eq!(b.admit(ms(4), &mut t), Admission::Reject);
        assert_eq!(b.admit(ms(5002), &mut t), Admission::Reject);
        // Open for exactly 5 s: half-open at 5003 ms, two probes.
        assert_eq!(b.admit(ms(5003), &mut t), Admission::Probe);
        assert_eq!(b.admit(ms(5003), &mut t), Admission::Probe);
        assert_eq!(b.admit(ms(5003), &mut t), Admission::Reject);
        b.record(ms(5010), Admission::Probe, false, &mut rng, &mut t);
        b.record(ms(5011), Admission::Probe, false, &mut rng, &mut t);
        assert_eq!(
            t,
            [
                Transition::Opened,
                Transition::HalfOpened,
                Transition::Closed
            ]
        );
        assert_eq!(b.admit(ms(5012), &mut t), Admission::Pass);
    }

    #[test]
    fn a_failed_probe_opens_again_and_late_results_do_not_count() {
        let mut b = BreakerSpec {
            min_calls: 1,
            half_open_calls: 1,
            ..spec()
        }
        .start();
        let mut rng = seeded_rng(1);
        let mut t = Vec::new();
        b.record(ms(0), Admission::Pass, true, &mut rng, &mut t);
        // A call let through before it opened, ending now: ignored.
        b.record(ms(1), Admission::Pass, true, &mut rng, &mut t);
        assert_eq!(b.admit(ms(5000), &mut t), Admission::Probe);
        b.record(ms(5001), Admission::Probe, true, &mut rng, &mut t);
        assert_eq!(
            t,
            [
                Transition::Opened,
                Transition::HalfOpened,
                Transition::Opened
            ]
        );
        assert!(b.is_open(ms(10_000)));
        assert!(!b.is_open(ms(10_001)));
    }

    #[test]
    fn a_count_window_forgets_old_calls_and_jitter_spreads_the_open_time() {
        let mut b = BreakerSpec {
            window: BreakerWindow::Calls(4),
            ..spec()
        }
        .start();
        let mut rng = seeded_rng(1);
        let mut t = Vec::new();
        for (i, failed) in [true, false, false, false, false, true]
            .into_iter()
            .enumerate()
        {
            b.record(ms(i as u64), Admission::Pass, failed, &mut rng, &mut t);
        }
        assert!(t.is_empty(), "at most 1 of the last 4 failed");
        let until = |seed| {
            let mut b = BreakerSpec {
                min_calls: 1,
                open_jitter: 0.2,
                ..spec()
            }
            .start();
            let mut rng = seeded_rng(seed);
            b.record(ms(0), Admission::Pass, true, &mut rng, &mut Vec::new());
            (4000..=6000)
                .find(|&m| !b.is_open(ms(m)))
                .expect("closes within ±20 %")
        };
        let opens: Vec<u64> = (0..20).map(until).collect();
        assert!(opens.iter().any(|&m| m != opens[0]), "{opens:?}");
    }
}
