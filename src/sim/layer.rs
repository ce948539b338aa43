//! Retry layers in virtual time: an invocation sends attempts to its next hop
//! (the next `via` layer or the callee) and asks the policy engine, after each
//! one, whether to retry after a wait or to stop — the same loop as the chaos
//! harness's retrying client, with per-attempt timeouts, the deadline, the
//! horizon and the caller's budget.
//!
//! Nothing about backoff, jitter, classification, Retry-After, budgets,
//! breakers or hedging is decided here: [`LayerSession`] does all of it —
//! when the breaker is asked and what it records, what follows an attempt,
//! why a hedged request stopped. This module keeps the virtual clock and
//! the events; a hedging layer keeps several copies out.

use std::time::Duration;

use super::engine::CallerState;
use super::engine::{Attempt, CallerOf, Engine, Hop, Inv, Parent, duration};
use super::model::Next;
use super::queue::{Event, Nanos, Phase};
use super::slab::Key;
use crate::policy::{
    Before, Bounds, Caller, CopyStep, Decision, End, HedgeStep, LayerSession, Outcome, Rng, Stop,
    Transition, breaker,
};

/// The state of `caller`, borrowed apart from the engine's other fields.
fn state_of<'a>(
    callers: &'a mut [CallerState],
    client_callers: &'a mut [CallerState],
    caller: CallerOf,
) -> &'a mut CallerState {
    match caller {
        CallerOf::Slot(s) => &mut callers[s as usize],
        CallerOf::Client(c) => &mut client_callers[c as usize],
    }
}

/// What the layer session is given of `state`.
fn held<'a>(
    state: &'a mut CallerState,
    rng: &'a mut Rng,
    transitions: &'a mut Vec<Transition>,
) -> Caller<'a> {
    Caller {
        budget: state.budget.as_mut(),
        breaker: state.breaker.as_mut(),
        rng,
        transitions,
    }
}

impl<'m> Engine<'m> {
    /// The bounds of a logical request carrying `deadline`: it and the run's
    /// horizon.
    pub(super) fn bounds(&self, deadline: Option<Nanos>) -> Bounds {
        Bounds {
            deadline: deadline.map(duration),
            horizon: Some(duration(self.m.horizon)),
        }
    }

    /// Why a logical request carrying `deadline` cannot start now, if it
    /// cannot (the deadline or the horizon has passed).
    pub(crate) fn too_late(&self, deadline: Option<Nanos>) -> Option<Stop> {
        self.bounds(deadline).refuses_start(duration(self.now))
    }

    /// A layer is asked for a logical request that cannot start any more:
    /// counted, stopped, no attempt.
    pub(crate) fn refuse_late(&mut self, slot: u32, why: Stop) {
        let l = &mut self.counts.layers[slot as usize];
        l.requests += 1;
        l.stopped(why);
    }

    /// Starts an invocation of layer `slot` now, which must not be
    /// [`Engine::too_late`]; its first attempt follows as a `Start` event at
    /// the same instant (unless `grouped`: then the caller sends it with its
    /// siblings).
    pub(crate) fn invoke(
        &mut self,
        slot: u32,
        parent: Parent,
        deadline: Option<Nanos>,
        execution: Option<u32>,
        caller: CallerOf,
        grouped: bool,
    ) -> Key {
        let bounds = self.bounds(deadline);
        debug_assert!(bounds.refuses_start(duration(self.now)).is_none());
        self.counts.layers[slot as usize].requests += 1;
        let m: &'m super::model::Model = self.m;
        let layer = &m.layers[slot as usize];
        let now = duration(self.now);
        let session = LayerSession::start(
            &layer.policy,
            layer.hedging.as_ref(),
            layer.breaker.as_ref(),
            now,
            bounds,
            self.caller(caller).budget.as_mut(),
        );
        let key = self.invs.insert(Inv {
            slot,
            session,
            parent,
            caller,
            execution,
            attempt: None,
            copies: Vec::new(),
        });
        if !grouped {
            self.queue.push(self.now, Phase::Start, Event::Attempt(key));
        }
        key
    }

    /// The layer session decides whether the invocation's next attempt
    /// (hedged copy) goes now. `false`: it does not, and that is handled.
    fn admitted(&mut self, key: Key) -> bool {
        let now = duration(self.now);
        let Engine {
            invs,
            callers,
            client_callers,
            rng,
            counts,
            ..
        } = self;
        let Some(inv) = invs.get_mut(key) else {
            return false; // cancelled while waiting
        };
        let mut transitions = Vec::new();
        let state = state_of(callers, client_callers, inv.caller);
        let before = inv
            .session
            .before_attempt(now, held(state, rng, &mut transitions));
        let layer = &mut counts.layers[inv.slot as usize];
        for t in transitions {
            layer.transition(now, t);
        }
        if before.short_circuited() {
            layer.short_circuited += 1;
        }
        match before {
            Before::Send => return true,
            // The retry loop sees the rejection as a failed attempt.
            Before::Rejected => self.after_attempt(key, breaker::REJECTED, None, false),
            Before::Skip | Before::Wait => {}
            Before::Stop(end) => self.end_invocation(key, end),
        }
        false
    }

    /// An invocation sends its next attempt now (a hedging one: its next
    /// copy).
    pub(crate) fn send_attempt(&mut self, key: Key) {
        let m = self.m;
        if !self.admitted(key) {
            return;
        }
        let Some(inv) = self.invs.get_mut(key) else {
            return;
        };
        let (slot, execution) = (inv.slot, inv.execution);
        let layer = &m.layers[slot as usize];
        let now = duration(self.now);
        let mut next_copy = None;
        if let Some(h) = inv.session.hedge() {
            if h.sent() > 0 {
                self.counts.layers[slot as usize].hedges += 1;
            }
            if let HedgeStep::SendAt(at) = h.on_send() {
                next_copy = Some(super::model::nanos(at));
            }
        }
        self.counts.layers[slot as usize].attempts += 1;
        self.work += 1;
        let Some(inv) = self.invs.get(key) else {
            return;
        };
        let timeout = inv
            .session
            .attempt_timeout(now, layer.timeout.map(duration))
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
            if inv.session.hedges() {
                inv.copies.push(att);
            }
            inv.attempt.get_or_insert(att);
        }
        if let Some(at) = next_copy {
            self.queue.push(at, Phase::Start, Event::Hedge(key));
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

    /// A hedging invocation's delay is up: its next copy goes, unless an
    /// answer or an earlier copy came first.
    pub(crate) fn hedge_due(&mut self, key: Key) {
        let now = duration(self.now);
        let Some(h) = self.invs.get_mut(key).and_then(|i| i.session.hedge()) else {
            return;
        };
        if h.on_timer(now) == HedgeStep::Send {
            self.send_attempt(key);
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
            CallerOf::Slot(slot),
            false,
        );
        Hop::Sidecar(inv)
    }

    /// The next hop of attempt `att` answered.
    pub(super) fn answer(&mut self, att: Key, outcome: Outcome, retry_after: Option<Duration>) {
        let Some(a) = self.attempts.remove(att) else {
            return; // the attempt was abandoned: nobody listens
        };
        self.ended(a.inv, att, outcome, retry_after);
    }

    /// Attempt `att` ends without an answer: its timeout fired (`Timeout`) or
    /// its callee went down (`Reset`). A sidecar behind it stops; a service
    /// goes on with work nobody waits for.
    pub(crate) fn abandon(&mut self, att: Key, outcome: Outcome) {
        let Some(a) = self.attempts.remove(att) else {
            return; // answered already
        };
        if outcome == Outcome::Timeout {
            let at = self.at();
            self.counts.goodput.timed_out(at);
        }
        if let Hop::Sidecar(inv) = a.hop {
            self.cancel(inv);
        }
        self.ended(a.inv, att, outcome, None);
    }

    /// Attempt `att` of invocation `key` ended with `outcome`.
    fn ended(&mut self, key: Key, att: Key, outcome: Outcome, retry_after: Option<Duration>) {
        let hedged = self.invs.get(key).is_some_and(|i| i.session.hedges());
        if hedged {
            self.hedge_answered(key, att, outcome, retry_after);
        } else {
            self.after_attempt(key, outcome, retry_after, true);
        }
    }

    /// Stops an invocation whose caller went away: no more attempts, and the
    /// ones in flight are abandoned.
    pub(super) fn cancel(&mut self, key: Key) {
        // A work list, not recursion: chains of sidecars stop hop by hop.
        let mut pending = vec![key];
        while let Some(key) = pending.pop() {
            let Some(mut inv) = self.invs.remove(key) else {
                continue;
            };
            let state = state_of(&mut self.callers, &mut self.client_callers, inv.caller);
            inv.session.abandon(state.budget.as_mut());
            let out: Vec<Key> = if inv.session.hedges() {
                std::mem::take(&mut inv.copies)
            } else {
                inv.attempt.into_iter().collect()
            };
            for att in out {
                if let Some(Attempt {
                    hop: Hop::Sidecar(next),
                    ..
                }) = self.attempts.remove(att)
                {
                    pending.push(next);
                }
            }
        }
    }

    /// A copy of a hedging invocation ended: the layer session decides.
    fn hedge_answered(
        &mut self,
        key: Key,
        att: Key,
        outcome: Outcome,
        retry_after: Option<Duration>,
    ) {
        let now = duration(self.now);
        let Engine {
            invs,
            callers,
            client_callers,
            rng,
            counts,
            ..
        } = self;
        let Some(inv) = invs.get_mut(key) else {
            return;
        };
        inv.copies.retain(|&c| c != att);
        let mut transitions = Vec::new();
        let state = state_of(callers, client_callers, inv.caller);
        let step = inv.session.after_copy(
            now,
            outcome,
            retry_after,
            held(state, rng, &mut transitions),
        );
        for t in transitions {
            counts.layers[inv.slot as usize].transition(now, t);
        }
        match step {
            CopyStep::Send => self.queue.push(self.now, Phase::Start, Event::Attempt(key)),
            CopyStep::Wait => {}
            CopyStep::Done(end) => self.end_invocation(key, end),
        }
    }

    /// An invocation ends as its layer session said: the copies still out
    /// are cancelled (a service goes on with work nobody waits for).
    fn end_invocation(&mut self, key: Key, end: End) {
        let Some(mut inv) = self.invs.remove(key) else {
            return;
        };
        let slot = inv.slot as usize;
        for att in std::mem::take(&mut inv.copies) {
            if let Some(a) = self.attempts.remove(att) {
                self.counts.layers[slot].cancelled += 1;
                if let Hop::Sidecar(next) = a.hop {
                    self.cancel(next);
                }
            }
        }
        self.counts.layers[slot].stopped(end.why);
        let cut = end.why == Stop::Horizon;
        self.deliver(inv.parent, end.outcome, end.retry_after, cut);
    }

    /// The policy engine decides what follows an attempt of invocation `key`
    /// (`sent`: the attempt reached the next hop, not a breaker's rejection).
    fn after_attempt(
        &mut self,
        key: Key,
        outcome: Outcome,
        retry_after: Option<Duration>,
        sent: bool,
    ) {
        let now = self.now;
        let Engine {
            invs,
            callers,
            client_callers,
            rng,
            counts,
            queue,
            ..
        } = self;
        let Some(inv) = invs.get_mut(key) else {
            return;
        };
        if sent {
            inv.attempt = None;
        }
        let state = state_of(callers, client_callers, inv.caller);
        let mut transitions = Vec::new();
        let caller = held(state, rng, &mut transitions);
        let decision = if sent {
            inv.session
                .after_attempt(duration(now), outcome, retry_after, caller)
        } else {
            inv.session.after_rejected(duration(now), caller)
        };
        let layer = &mut counts.layers[inv.slot as usize];
        for t in transitions {
            layer.transition(duration(now), t);
        }
        match decision {
            Decision::Retry {
                wait,
                cause,
                honored_retry_after,
            } => {
                layer.retried(cause, honored_retry_after);
                counts.goodput.retried(duration(now));
                let at = now.saturating_add(super::model::nanos(wait));
                queue.push(at, Phase::Start, Event::Attempt(key));
            }
            Decision::Stop(why) => {
                layer.stopped(why);
                let cut = why == Stop::Horizon;
                if let Some(inv) = self.invs.remove(key) {
                    self.deliver(inv.parent, outcome, retry_after, cut);
                }
            }
        }
    }

    /// An invocation's result reaches whoever waits for it; `cut`: the
    /// horizon stopped a retry it would have made.
    pub(crate) fn deliver(
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
