//! One logical request through one layer: its retry session, its breaker
//! and its hedging schedule together, so that the simulator and the chaos
//! client decide the same things in the same place and only keep their own
//! clocks and IO.
//!
//! Decided here, once:
//!
//! - **when the breaker is asked**: before the first attempt when it sits
//!   outside the retry loop, before every attempt (every hedged copy) when
//!   it sits inside;
//! - **what a rejection does**: outside, the request stops with
//!   [`Stop::CircuitOpen`]; inside, the retry loop sees a failed attempt
//!   (hedging sends no copy, and stops once no copy is out);
//! - **what the breaker records**: every attempt that went, or each
//!   request's final result, as its spec counts;
//! - **why a hedged request stopped**: the accepted answer's kind, or the
//!   limit or the breaker that kept the next copy from going.
//!
//! Both engines drive it the same way:
//!
//! ```text
//! let mut layer = LayerSession::start(&policy, hedging, breaker_spec, now, bounds, budget);
//! loop {
//!     match layer.before_attempt(now, caller) {
//!         Before::Send => { let (o, ra) = attempt(layer.attempt_timeout(now, t));
//!                           layer.after_attempt(now, o, ra, caller) }  // or after_copy
//!         Before::Rejected => layer.after_rejected(now, caller),
//!         Before::Skip | Before::Wait => wait for the copies out,
//!         Before::Stop(end) => return end,
//!     }
//! }
//! ```

use std::time::Duration;

use super::breaker::{self, REJECTED};
use super::{
    Admission, Breaker, BreakerSpec, Budget, Decision, HedgeSession, HedgeStep, HedgingPolicy,
    Outcome, RetryPolicy, RetrySession, Rng, Stop, Transition,
};
use super::{Bounds, BreakerCounts, BreakerPosition};

/// What a request's caller holds for the layer: its budget, its breaker,
/// its random numbers, and where the breaker's changes of state are told.
pub(crate) struct Caller<'a> {
    pub budget: Option<&'a mut Budget>,
    pub breaker: Option<&'a mut Breaker>,
    pub rng: &'a mut Rng,
    pub transitions: &'a mut Vec<Transition>,
}

/// What happens before an attempt (a hedged copy) goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Before {
    /// Send it.
    Send,
    /// An inside breaker rejected it: the retry loop sees it as an attempt
    /// that failed with [`REJECTED`] ([`LayerSession::after_rejected`]).
    Rejected,
    /// An inside breaker rejected a hedged copy: none goes, the copies out
    /// go on.
    Skip,
    /// A hedged copy cannot start before the limit: none goes, the copies
    /// out go on.
    Wait,
    /// The request ends here.
    Stop(End),
}

impl Before {
    /// Whether the breaker rejected the attempt (a short circuit).
    pub fn short_circuited(self) -> bool {
        match self {
            Before::Rejected | Before::Skip => true,
            Before::Stop(end) => end.why == Stop::CircuitOpen,
            Before::Send | Before::Wait => false,
        }
    }
}

/// How a request ended: why, and what its caller gets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct End {
    pub why: Stop,
    pub outcome: Outcome,
    pub retry_after: Option<Duration>,
}

/// What a hedged request does after a copy answered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum CopyStep {
    /// Send the next copy now ([`LayerSession::before_attempt`] first).
    Send,
    /// Wait for the copies out or the next copy's time.
    Wait,
    /// Done; cancel every copy still out.
    Done(End),
}

/// One logical request through one layer.
#[derive(Debug, Clone)]
pub(crate) struct LayerSession<'p> {
    retry: RetrySession<'p>,
    hedging: Option<(&'p HedgingPolicy, HedgeSession<'p>)>,
    breaker: Option<(BreakerCounts, BreakerPosition)>,
    /// What the breaker said to the request (outside) or to its latest
    /// attempt it let through (inside).
    admission: Option<Admission>,
    /// The latest answer of a hedged copy, what the caller gets when no
    /// further copy may go.
    last: (Outcome, Option<Duration>),
}

impl<'p> LayerSession<'p> {
    /// Starts a request at `now` (check [`Bounds::refuses_start`] first). The
    /// budget sees the request even if an outside breaker then rejects it.
    pub(crate) fn start(
        policy: &'p RetryPolicy,
        hedging: Option<&'p HedgingPolicy>,
        breaker: Option<&BreakerSpec>,
        now: Duration,
        bounds: Bounds,
        budget: Option<&mut Budget>,
    ) -> Self {
        LayerSession {
            retry: RetrySession::start(policy, now, bounds, budget),
            hedging: hedging.map(|h| (h, HedgeSession::start(h, now))),
            breaker: breaker.map(|b| (b.counts, b.position)),
            admission: None,
            last: (Outcome::Timeout, None),
        }
    }

    /// Whether the layer hedges.
    pub(crate) fn hedges(&self) -> bool {
        self.hedging.is_some()
    }

    /// The retry session (attempts, bounds, timeouts).
    #[cfg(test)]
    pub(crate) fn retry(&self) -> &RetrySession<'p> {
        &self.retry
    }

    /// The hedging schedule, when the layer hedges.
    pub(crate) fn hedge(&mut self) -> Option<&mut HedgeSession<'p>> {
        self.hedging.as_mut().map(|(_, h)| h)
    }

    /// The timeout of an attempt starting at `now` (see
    /// [`Bounds::attempt_timeout`]).
    pub(crate) fn attempt_timeout(
        &self,
        now: Duration,
        timeout: Option<Duration>,
    ) -> Option<Duration> {
        self.retry.attempt_timeout(now, timeout)
    }

    /// The caller went away: see [`RetrySession::abandon`].
    pub(crate) fn abandon(&mut self, budget: Option<&mut Budget>) {
        self.retry.abandon(budget);
    }

    /// Whether the breaker is asked before the next attempt: always inside
    /// the retry loop, before the first one only outside it.
    pub(crate) fn asks_breaker(&self) -> bool {
        match self.breaker {
            None => false,
            Some((_, BreakerPosition::Inside)) => true,
            Some((_, BreakerPosition::Outside)) => self.admission.is_none(),
        }
    }

    /// Decides whether the next attempt (hedged copy) goes at `now`. A
    /// hedged copy is held by the limit first, then by the breaker, so a
    /// copy that could not start takes no half-open probe.
    pub(crate) fn before_attempt(&mut self, now: Duration, caller: Caller<'_>) -> Before {
        if let Some((_, h)) = &self.hedging
            && let Some(why) = self.retry.bounds().refuses_start(now)
        {
            return if h.outstanding() > 0 {
                Before::Wait
            } else {
                Before::Stop(End {
                    why,
                    outcome: self.last.0,
                    retry_after: self.last.1,
                })
            };
        }
        if !self.asks_breaker() {
            return Before::Send;
        }
        let admission = match caller.breaker {
            Some(b) => b.admit(now, caller.transitions),
            None => Admission::Pass,
        };
        if admission != Admission::Reject {
            self.admission = Some(admission);
            return Before::Send;
        }
        let outside = self
            .breaker
            .is_some_and(|(_, p)| p == BreakerPosition::Outside);
        let stop = Before::Stop(End {
            why: Stop::CircuitOpen,
            outcome: REJECTED,
            retry_after: None,
        });
        match &self.hedging {
            _ if outside => stop,
            Some((_, h)) if h.outstanding() > 0 => Before::Skip,
            Some(_) => stop,
            None => Before::Rejected,
        }
    }

    /// An attempt of a retrying layer ended at `now`: the breaker records
    /// it (or, when the request stops, its result) and the retry session
    /// decides what follows.
    pub(crate) fn after_attempt(
        &mut self,
        now: Duration,
        outcome: Outcome,
        retry_after: Option<Duration>,
        caller: Caller<'_>,
    ) -> Decision {
        self.decide(now, outcome, retry_after, true, caller)
    }

    /// An inside breaker rejected the attempt ([`Before::Rejected`]): the
    /// retry loop sees it fail with [`REJECTED`]; the breaker records
    /// nothing of it.
    pub(crate) fn after_rejected(&mut self, now: Duration, caller: Caller<'_>) -> Decision {
        self.decide(now, REJECTED, None, false, caller)
    }

    fn decide(
        &mut self,
        now: Duration,
        outcome: Outcome,
        retry_after: Option<Duration>,
        sent: bool,
        caller: Caller<'_>,
    ) -> Decision {
        let Caller {
            budget,
            mut breaker,
            rng,
            transitions,
        } = caller;
        if sent {
            self.record(
                now,
                outcome,
                BreakerCounts::Attempts,
                &mut breaker,
                rng,
                transitions,
            );
        }
        let decision = self
            .retry
            .after_attempt(now, outcome, retry_after, budget, rng);
        if let Decision::Stop(_) = decision {
            self.record(
                now,
                outcome,
                BreakerCounts::Outcomes,
                &mut breaker,
                rng,
                transitions,
            );
        }
        decision
    }

    /// A hedged copy answered (or timed out) at `now` with `outcome`: the
    /// breaker records it (or the request's result) and the schedule
    /// decides what follows.
    pub(crate) fn after_copy(
        &mut self,
        now: Duration,
        outcome: Outcome,
        retry_after: Option<Duration>,
        caller: Caller<'_>,
    ) -> CopyStep {
        let Caller {
            mut breaker,
            rng,
            transitions,
            ..
        } = caller;
        self.record(
            now,
            outcome,
            BreakerCounts::Attempts,
            &mut breaker,
            rng,
            transitions,
        );
        self.last = (outcome, retry_after);
        let Some((policy, h)) = self.hedging.as_mut() else {
            return CopyStep::Wait;
        };
        match h.on_answer(outcome) {
            HedgeStep::Send => CopyStep::Send,
            HedgeStep::SendAt(_) | HedgeStep::Wait => CopyStep::Wait,
            HedgeStep::Done(outcome) => {
                let why = if outcome.is_success() {
                    Stop::Succeeded
                } else if policy.non_fatal.matches(outcome) {
                    Stop::AttemptsExhausted
                } else {
                    Stop::NotRetryable
                };
                self.record(
                    now,
                    outcome,
                    BreakerCounts::Outcomes,
                    &mut breaker,
                    rng,
                    transitions,
                );
                CopyStep::Done(End {
                    why,
                    outcome,
                    retry_after,
                })
            }
        }
    }

    /// Records `outcome` with the breaker if it counts `what`, as a call it
    /// let through (a request it never let through records nothing).
    fn record(
        &self,
        now: Duration,
        outcome: Outcome,
        what: BreakerCounts,
        breaker: &mut Option<&mut Breaker>,
        rng: &mut Rng,
        transitions: &mut Vec<Transition>,
    ) {
        let (Some((counts, _)), Some(admission), Some(b)) =
            (self.breaker, self.admission, breaker.as_deref_mut())
        else {
            return;
        };
        if counts == what {
            b.record(
                now,
                admission,
                breaker::counts_as_failure(outcome),
                rng,
                transitions,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{BreakerWindow, Condition, RetryOn, seeded_rng};

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Opens after one failed call, for 1 s, with one probe.
    fn spec(counts: BreakerCounts, position: BreakerPosition) -> BreakerSpec {
        BreakerSpec {
            failure_rate: 0.5,
            window: BreakerWindow::Calls(10),
            min_calls: 1,
            open_for: Duration::from_secs(1),
            open_jitter: 0.0,
            half_open_calls: 1,
            counts,
            position,
        }
    }

    fn retry(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            ..RetryPolicy::default()
        }
    }

    struct Held {
        breaker: Option<Breaker>,
        rng: Rng,
        transitions: Vec<Transition>,
    }

    impl Held {
        fn of(spec: Option<&BreakerSpec>) -> Self {
            Held {
                breaker: spec.map(BreakerSpec::start),
                rng: seeded_rng(1),
                transitions: Vec::new(),
            }
        }

        fn caller(&mut self) -> Caller<'_> {
            Caller {
                budget: None,
                breaker: self.breaker.as_mut(),
                rng: &mut self.rng,
                transitions: &mut self.transitions,
            }
        }
    }

    fn session<'p>(
        p: &'p RetryPolicy,
        h: Option<&'p HedgingPolicy>,
        b: Option<&BreakerSpec>,
        bounds: Bounds,
    ) -> LayerSession<'p> {
        LayerSession::start(p, h, b, Duration::ZERO, bounds, None)
    }

    #[test]
    fn an_outside_breaker_is_asked_once_and_stops_the_request() {
        let p = retry(3);
        let s = spec(BreakerCounts::Attempts, BreakerPosition::Outside);
        let mut held = Held::of(Some(&s));
        let mut l = session(&p, None, Some(&s), Bounds::default());
        assert!(l.asks_breaker());
        assert_eq!(l.before_attempt(ms(0), held.caller()), Before::Send);
        assert!(!l.asks_breaker(), "asked before the first attempt only");
        let d = l.after_attempt(ms(0), Outcome::Status(503), None, held.caller());
        assert!(matches!(d, Decision::Retry { .. }));
        assert_eq!(held.transitions, [Transition::Opened]);
        // Open now, but the retry goes: the loop runs inside the breaker.
        assert_eq!(l.before_attempt(ms(1), held.caller()), Before::Send);
        // The next request is rejected at once.
        let mut l = session(&p, None, Some(&s), Bounds::default());
        let b = l.before_attempt(ms(2), held.caller());
        assert_eq!(
            b,
            Before::Stop(End {
                why: Stop::CircuitOpen,
                outcome: REJECTED,
                retry_after: None
            })
        );
        assert!(b.short_circuited());
    }

    #[test]
    fn an_inside_breaker_is_asked_before_every_attempt_and_its_rejection_is_a_failed_attempt() {
        let p = retry(3);
        let s = spec(BreakerCounts::Attempts, BreakerPosition::Inside);
        let mut held = Held::of(Some(&s));
        let mut l = session(&p, None, Some(&s), Bounds::default());
        assert_eq!(l.before_attempt(ms(0), held.caller()), Before::Send);
        assert!(l.asks_breaker(), "asked again before the retry");
        l.after_attempt(ms(0), Outcome::Status(503), None, held.caller());
        let b = l.before_attempt(ms(1), held.caller());
        assert_eq!(b, Before::Rejected);
        assert!(b.short_circuited());
        // The rejection uses an attempt and records nothing.
        let d = l.after_rejected(ms(1), held.caller());
        assert!(matches!(d, Decision::Retry { cause, .. } if cause == REJECTED));
        assert_eq!(l.retry().attempts(), 2);
        assert_eq!(held.transitions, [Transition::Opened]);
    }

    #[test]
    fn a_breaker_counting_outcomes_records_the_result_after_the_retries() {
        let p = retry(3);
        let s = spec(BreakerCounts::Outcomes, BreakerPosition::Outside);
        let mut held = Held::of(Some(&s));
        let mut l = session(&p, None, Some(&s), Bounds::default());
        l.before_attempt(ms(0), held.caller());
        for _ in 0..2 {
            l.after_attempt(ms(0), Outcome::Status(503), None, held.caller());
            assert!(
                held.transitions.is_empty(),
                "a retried attempt is not counted"
            );
        }
        let d = l.after_attempt(ms(0), Outcome::Status(503), None, held.caller());
        assert_eq!(d, Decision::Stop(Stop::AttemptsExhausted));
        assert_eq!(held.transitions, [Transition::Opened]);
    }

    fn hedging() -> HedgingPolicy {
        HedgingPolicy {
            max_attempts: 3,
            delay: ms(50),
            non_fatal: RetryOn(vec![Condition::Status(503), Condition::Timeout]),
        }
    }

    #[test]
    fn a_hedged_request_stops_for_the_kind_of_its_answer() {
        let (p, h) = (retry(1), hedging());
        let mut held = Held::of(None);
        let end = |outcomes: &[Outcome], held: &mut Held| {
            let mut l = session(&p, Some(&h), None, Bounds::default());
            let mut last = CopyStep::Wait;
            for &o in outcomes {
                assert_eq!(l.before_attempt(ms(0), held.caller()), Before::Send);
                l.hedge().unwrap().on_send();
                last = l.after_copy(ms(0), o, None, held.caller());
            }
            match last {
                CopyStep::Done(end) => end.why,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(end(&[Outcome::Status(200)], &mut held), Stop::Succeeded);
        assert_eq!(end(&[Outcome::Status(500)], &mut held), Stop::NotRetryable);
        let all_non_fatal = [Outcome::Status(503), Outcome::Timeout, Outcome::Status(503)];
        assert_eq!(end(&all_non_fatal, &mut held), Stop::AttemptsExhausted);
    }

    #[test]
    fn a_hedged_copy_held_by_the_limit_or_an_inside_breaker() {
        let (p, h) = (retry(1), hedging());
        let s = spec(BreakerCounts::Attempts, BreakerPosition::Inside);
        let bounds = Bounds {
            deadline: Some(ms(100)),
            horizon: None,
        };
        // The deadline: the copies out go on; with none out, the request
        // stops with the last answer.
        let mut held = Held::of(None);
        let mut l = session(&p, Some(&h), None, bounds);
        l.before_attempt(ms(0), held.caller());
        l.hedge().unwrap().on_send();
        assert_eq!(l.before_attempt(ms(100), held.caller()), Before::Wait);
        let step = l.after_copy(ms(100), Outcome::Timeout, None, held.caller());
        assert_eq!(step, CopyStep::Send);
        assert_eq!(
            l.before_attempt(ms(100), held.caller()),
            Before::Stop(End {
                why: Stop::DeadlineExceeded,
                outcome: Outcome::Timeout,
                retry_after: None
            })
        );
        // An inside breaker: no copy while one is out, a stop once none is.
        let mut held = Held::of(Some(&s));
        let mut l = session(&p, Some(&h), Some(&s), Bounds::default());
        assert_eq!(l.before_attempt(ms(0), held.caller()), Before::Send);
        l.hedge().unwrap().on_send();
        assert_eq!(l.before_attempt(ms(0), held.caller()), Before::Send);
        l.hedge().unwrap().on_send();
        // One copy failed: the breaker opens; the next is refused.
        l.after_copy(ms(1), Outcome::Status(503), None, held.caller());
        assert_eq!(l.before_attempt(ms(1), held.caller()), Before::Skip);
        l.after_copy(ms(2), Outcome::Status(503), None, held.caller());
        let b = l.before_attempt(ms(2), held.caller());
        assert!(matches!(
            b,
            Before::Stop(End {
                why: Stop::CircuitOpen,
                ..
            })
        ));
        assert!(b.short_circuited());
    }
}
