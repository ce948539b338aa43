//! Hedged requests (gRPC A6 `hedgingPolicy`, Envoy's hedging): copies of one
//! request sent `delay` apart until one answers, even when nothing fails.
//! The schedule is decided here, once, and driven by both engines.
//!
//! Copy 0 goes at once; copy k at k × delay unless an answer came first.
//! An answer that is not in `non_fatal` (a success, or a fatal status) ends
//! the request: it is taken and every copy still out is cancelled. A
//! non-fatal answer (a 503 the policy lists, a timeout, a reset) ends only
//! its copy, and the next copy goes at once instead of waiting for its delay
//! (A6). Once every copy has failed non-fatally, the request fails with the
//! last of them.

use std::time::Duration;

use super::{Outcome, RetryOn};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HedgingPolicy {
    /// Copies in all, the first included; at least 1.
    pub max_attempts: u32,
    pub delay: Duration,
    /// Answers that let the other copies go on.
    pub non_fatal: RetryOn,
}

impl HedgingPolicy {
    /// The expected number of copies per request when nothing fails and
    /// each copy's latency has the tail `late(x) = P(latency > x)`, copies
    /// independent: copy k goes when none of the k copies sent so far has
    /// answered by k × delay, so
    /// `1 + Σₖ Πⱼ₌₀..ₖ₋₁ late((k − j) × delay)`.
    ///
    /// The simpler `1 + Σₖ P(latency > k·delay)` looks at the first copy only;
    /// it is the same for two copies and an upper bound beyond, since the
    /// copies sent in between can answer first.
    pub(crate) fn expected_copies(&self, late: impl Fn(Duration) -> f64) -> f64 {
        // Πⱼ₌₀..ₖ₋₁ late((k − j) × delay) = Πₘ₌₁..ₖ late(m × delay): a
        // running product, one tail value per copy.
        let mut total = 1.0;
        let mut all_late = 1.0;
        for k in 1..self.max_attempts.max(1) {
            all_late *= late(self.delay.saturating_mul(k));
            total += all_late;
        }
        total
    }
}

/// What a hedged request does next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum HedgeStep {
    /// Send the next copy now.
    Send,
    /// Send the next copy at this time unless an answer comes first.
    SendAt(Duration),
    /// Wait for the copies out; no more will go.
    Wait,
    /// Done with this outcome; cancel every copy still out.
    Done(Outcome),
}

/// One hedged request.
#[derive(Debug, Clone)]
pub(crate) struct HedgeSession<'p> {
    policy: &'p HedgingPolicy,
    start: Duration,
    sent: u32,
    outstanding: u32,
}

impl<'p> HedgeSession<'p> {
    /// A request starting at `start`; the caller sends copy 0 at once.
    pub(crate) fn start(policy: &'p HedgingPolicy, start: Duration) -> Self {
        HedgeSession {
            policy,
            start,
            sent: 0,
            outstanding: 0,
        }
    }

    /// Copies sent so far.
    pub(crate) fn sent(&self) -> u32 {
        self.sent
    }

    /// Copies out now.
    pub(crate) fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// A copy was sent; what comes next if nothing answers.
    pub(crate) fn on_send(&mut self) -> HedgeStep {
        self.sent += 1;
        self.outstanding += 1;
        self.next_timer()
    }

    /// The timer for the next copy fired at `now`.
    pub(crate) fn on_timer(&mut self, now: Duration) -> HedgeStep {
        match self.next_timer() {
            HedgeStep::SendAt(at) if now >= at => HedgeStep::Send,
            other => other,
        }
    }

    /// A copy answered (or timed out) with `outcome`.
    pub(crate) fn on_answer(&mut self, outcome: Outcome) -> HedgeStep {
        self.outstanding = self.outstanding.saturating_sub(1);
        let non_fatal = !outcome.is_success() && self.policy.non_fatal.matches(outcome);
        if !non_fatal {
            return HedgeStep::Done(outcome);
        }
        if self.sent < self.policy.max_attempts.max(1) {
            HedgeStep::Send
        } else if self.outstanding > 0 {
            HedgeStep::Wait
        } else {
            HedgeStep::Done(outcome)
        }
    }

    fn next_timer(&self) -> HedgeStep {
        if self.sent >= self.policy.max_attempts.max(1) {
            HedgeStep::Wait
        } else {
            HedgeStep::SendAt(
                self.start
                    .saturating_add(self.policy.delay.saturating_mul(self.sent)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Condition;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn policy() -> HedgingPolicy {
        HedgingPolicy {
            max_attempts: 3,
            delay: ms(50),
            non_fatal: RetryOn(vec![Condition::Status(503), Condition::Timeout]),
        }
    }

    #[test]
    fn copies_go_delay_apart_until_an_answer() {
        let p = policy();
        let mut h = HedgeSession::start(&p, ms(1000));
        assert_eq!(h.on_send(), HedgeStep::SendAt(ms(1050)));
        assert_eq!(h.on_timer(ms(1049)), HedgeStep::SendAt(ms(1050)));
        assert_eq!(h.on_timer(ms(1050)), HedgeStep::Send);
        assert_eq!(h.on_send(), HedgeStep::SendAt(ms(1100)));
        assert_eq!(
            h.on_answer(Outcome::Status(200)),
            HedgeStep::Done(Outcome::Status(200))
        );
    }

    #[test]
    fn a_non_fatal_answer_sends_the_next_copy_at_once_and_a_fatal_one_ends() {
        let p = policy();
        let mut h = HedgeSession::start(&p, ms(0));
        h.on_send();
        assert_eq!(h.on_answer(Outcome::Status(503)), HedgeStep::Send);
        h.on_send();
        h.on_send();
        assert_eq!(h.sent(), 3);
        assert_eq!(h.on_answer(Outcome::Timeout), HedgeStep::Wait);
        assert_eq!(
            h.on_answer(Outcome::Status(503)),
            HedgeStep::Done(Outcome::Status(503))
        );
        let mut h = HedgeSession::start(&p, ms(0));
        h.on_send();
        assert_eq!(
            h.on_answer(Outcome::Status(500)),
            HedgeStep::Done(Outcome::Status(500))
        );
    }

    #[test]
    fn expected_copies_follow_the_tail() {
        let p = policy();
        // Every copy late by far: all three go.
        assert_eq!(p.expected_copies(|_| 1.0), 3.0);
        // Never late: one.
        assert_eq!(p.expected_copies(|_| 0.0), 1.0);
        // Late past 50 ms half the time, past 100 ms a tenth:
        // 1 + 0.5 + 0.1 × 0.5.
        let late = |d: Duration| if d <= ms(50) { 0.5 } else { 0.1 };
        assert!((p.expected_copies(late) - 1.55).abs() < 1e-12);
    }
}
