//! Retry layers in virtual time: an invocation sends attempts to its next hop
//! (the next `via` layer or the callee) and asks the policy engine, after each
//! one, whether to retry after a wait or to stop — the same loop as the chaos
//! harness's retrying client, with per-attempt timeouts, the deadline, the
//! horizon and the caller's budget.
//!
//! Nothing about backoff, jitter, classification, Retry-After or budgets is
//! decided here: [`RetrySession`] does all of it.

use std::time::Duration;

use super::engine::{Attempt, BudgetOf, Engine, Hop, Inv, Parent, duration};
use super::model::Next;
use super::queue::{Event, Nanos, Phase};
use super::slab::Key;
use crate::policy::{Bounds, Decision, Outcome, RetrySession, Stop};

impl<'m> Engine<'m> {
    /// The bounds of a logical request carrying `deadline`: it and the run's
    /// horizon.
    pub fn bounds(&self, deadline: Option<Nanos>) -> Bounds {
        Bounds {
            deadline: deadline.map(duration),
            horizon: Some(duration(self.m.horizon)),
        }
    }

    /// Why a logical request carrying `deadline` cannot start now, if it
    /// cannot (the deadline or the horizon has passed).
    pub fn too_late(&self, deadline: Option<Nanos>) -> Option<Stop> {
        self.bounds(deadline).refuses_start(duration(self.now))
    }

    /// A layer is asked for a logical request that cannot start any more:
    /// counted, stopped, no attempt.
    pub fn refuse_late(&mut self, slot: u32, why: Stop) {
        let l = &mut self.counts.layers[slot as usize];
        l.requests += 1;
        l.stopped(why);
    }

    /// Starts an invocation of layer `slot` now, which must not be
    /// [`Engine::too_late`]; its first attempt follows as a `Start` event at
    /// the same instant (unless `grouped`: then the caller sends it with its
    /// siblings).
    pub fn invoke(
        &mut self,
        slot: u32,
        parent: Parent,
        deadline: Option<Nanos>,
        execution: Option<u32>,
        budget: BudgetOf,
        grouped: bool,
    ) -> Key {
        let bounds = self.bounds(deadline);
        debug_assert!(bounds.refuses_start(duration(self.now)).is_none());
        self.counts.layers[slot as usize].requests += 1;
        let m: &'m super::model::Model = self.m;
        let policy = &m.layers[slot as usize].policy;
        let b = match budget {
            BudgetOf::Slot(s) => self.budgets[s as usize].as_mut(),
            BudgetOf::Client(c) => self.client_budgets[c as usize].as_mut(),
        };
        let session = RetrySession::start(policy, duration(self.now), bounds, b);
        let key = self.invs.insert(Inv {
            slot,
            session,
            parent,
            budget,
            execution,
            attempt: None,
        });
        if !grouped {
            self.queue.push(self.now, Phase::Start, Event::Attempt(key));
        }
        key
    }

    /// An invocation sends its next attempt now.
    pub fn send_attempt(&mut self, key: Key) {
        let m = self.m;
        let Some(inv) = self.invs.get(key) else {
            return; // cancelled while waiting
        };
        let (slot, execution) = (inv.slot, inv.execution);
        let layer = &m.layers[slot as usize];
        self.counts.layers[slot as usize].attempts += 1;
        self.work += 1;
        let timeout = inv
            .session
            .attempt_timeout(duration(self.now), layer.timeout.map(duration))
            .map(super::model::nanos);
        // What the next hop is told: the time this attempt may take.
        let sent = if layer.propagate {
            timeout.map(|t| self.now.saturating_add(t))
        } else {
            None
        };
        let att = self.attempts.insert(Attempt {
            inv: key,
            hop: Hop::Nothing,
        });
        if let Some(inv) = self.invs.get_mut(key) {
            inv.attempt = Some(att);
        }
        // The timeout takes its place in the order of events now, but is only
        // scheduled if the answer is not known to come first.
        let expiry = timeout.map(|t| (self.now.saturating_add(t), self.queue.reserve()));
        let hop = match layer.next {
            Next::Layer(next) => self.arrive_at_sidecar(att, next, sent, execution),
            Next::Service(s) => self.arrive(att, s, sent, execution),
        };
        if let Some(a) = self.attempts.get_mut(att) {
            a.hop = hop;
        }
        if let Some((at, seq)) = expiry {
            let needed = match hop {
                Hop::Replied => false,
                Hop::Visit(v) => self
                    .visits
                    .get(v)
                    .and_then(|v| v.ends)
                    .is_none_or(|ends| ends >= at),
                Hop::Nothing | Hop::Sidecar(_) => true,
            };
            if needed {
                self.queue
                    .push_reserved(at, Phase::End, seq, Event::Timeout(att));
            }
        }
    }

    /// An attempt reaches the `via` layer `slot`: a retrying proxy that
    /// honours the deadline it is sent and answers with the last response it
    /// got, Retry-After included.
    fn arrive_at_sidecar(
        &mut self,
        att: Key,
        slot: u32,
        deadline: Option<Nanos>,
        execution: Option<u32>,
    ) -> Hop {
        if deadline.is_some_and(|d| self.now >= d) {
            self.reply(att, Outcome::Status(504), None);
            return Hop::Replied;
        }
        if let Some(why) = self.too_late(deadline) {
            self.refuse_late(slot, why);
            self.reply(
                att,
                Outcome::Status(Outcome::Timeout.propagated_status()),
                None,
            );
            return Hop::Replied;
        }
        let inv = self.invoke(
            slot,
            Parent::Attempt(att),
            deadline,
            execution,
            BudgetOf::Slot(slot),
            false,
        );
        Hop::Sidecar(inv)
    }

    /// The next hop of attempt `att` answered.
    pub fn answer(&mut self, att: Key, outcome: Outcome, retry_after: Option<Duration>) {
        let Some(a) = self.attempts.remove(att) else {
            return; // the attempt was abandoned: nobody listens
        };
        self.after_attempt(a.inv, outcome, retry_after);
    }

    /// Attempt `att` ends without an answer: its timeout fired (`Timeout`) or
    /// its callee went down (`Reset`). A sidecar behind it stops; a service
    /// goes on with work nobody waits for.
    pub fn abandon(&mut self, att: Key, outcome: Outcome) {
        let Some(a) = self.attempts.remove(att) else {
            return; // answered already
        };
        if let Hop::Sidecar(inv) = a.hop {
            self.cancel(inv);
        }
        self.after_attempt(a.inv, outcome, None);
    }

    /// Stops an invocation whose caller went away: no more attempts, and the
    /// one in flight is abandoned.
    pub fn cancel(&mut self, mut key: Key) {
        // Iterative: a chain of sidecars stops hop by hop.
        while let Some(inv) = self.invs.remove(key) {
            let Some(att) = inv.attempt else { return };
            let Some(a) = self.attempts.remove(att) else {
                return;
            };
            match a.hop {
                Hop::Sidecar(next) => key = next,
                Hop::Visit(_) | Hop::Nothing | Hop::Replied => return,
            }
        }
    }

    /// The policy engine decides what follows an attempt of invocation `key`.
    fn after_attempt(&mut self, key: Key, outcome: Outcome, retry_after: Option<Duration>) {
        let now = self.now;
        let Engine {
            invs,
            budgets,
            client_budgets,
            rng,
            counts,
            queue,
            ..
        } = self;
        let Some(inv) = invs.get_mut(key) else {
            return;
        };
        inv.attempt = None;
        let budget = match inv.budget {
            BudgetOf::Slot(s) => budgets[s as usize].as_mut(),
            BudgetOf::Client(c) => client_budgets[c as usize].as_mut(),
        };
        let decision = inv
            .session
            .after_attempt(duration(now), outcome, retry_after, budget, rng);
        let layer = &mut counts.layers[inv.slot as usize];
        match decision {
            Decision::Retry {
                wait,
                cause,
                honored_retry_after,
            } => {
                layer.retried(cause, honored_retry_after);
                let at = now.saturating_add(super::model::nanos(wait));
                queue.push(at, Phase::Start, Event::Attempt(key));
            }
            Decision::Stop(why) => {
                layer.stopped(why);
                let cut = why == Stop::Horizon;
                let parent = inv.parent;
                self.invs.remove(key);
                self.deliver(parent, outcome, retry_after, cut);
            }
        }
    }

    /// An invocation's result reaches whoever waits for it; `cut`: the
    /// horizon stopped a retry it would have made.
    pub fn deliver(
        &mut self,
        parent: Parent,
        outcome: Outcome,
        retry_after: Option<Duration>,
        cut: bool,
    ) {
        match parent {
            Parent::User(user) => self.user_done(user, outcome, cut),
            Parent::Call(visit) => self.call_done(visit, outcome),
            Parent::Attempt(att) => {
                // A sidecar answers with the status it got, or the
                // propagated one, and passes Retry-After on.
                let status = match outcome {
                    Outcome::Status(s) => s,
                    other => other.propagated_status(),
                };
                self.reply(att, Outcome::Status(status), retry_after);
            }
        }
    }
}
