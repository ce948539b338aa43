//! One trial: the state of everything in flight, the event loop, and the
//! bookkeeping that ties requests, retry layers and attempts together.
//!
//! Three kinds of things are alive during a trial, each in its own [`Slab`]:
//!
//! - an **invocation** (`Inv`): one logical request through one retry layer,
//!   driven by a [`LayerSession`] of the policy engine — the client layer for a
//!   user request, an app layer for a service's call, a `via` layer (sidecar)
//!   for an attempt of the layer before it;
//! - an **attempt**: one try of an invocation, pending until its next hop
//!   answers, its per-attempt timeout fires, or its callee goes down;
//! - a **visit**: a request being handled by a service (its own work, then its
//!   calls), from its arrival to its answer.
//!
//! Answers travel up through a work list drained after every event, never by
//! recursion, so a chain of 10,000 services cannot overflow the stack. The
//! handlers live next to what they model: `layer.rs` (invocations and
//! attempts), `service.rs` (visits, faults, the overload model), `users.rs`
//! (the load).

use std::collections::VecDeque;
use std::time::Duration;

use super::counters::Histograms;
use super::guard::{Cut, Guard};
use super::model::Model;
use super::queue::{Event, Nanos, Queue};
use super::slab::{Key, Slab};
use crate::policy::{Breaker, Budget, LayerSession, Outcome, Rng, seeded_rng};
use crate::run::arrivals::Schedule;
use crate::run::counts::Counts;
use crate::run::overload::{InFlight, Ticket};
use crate::run::queueing::Station;

/// Who waits for an invocation's result.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Parent {
    /// A user request (the client layer).
    User(Key),
    /// A call of a visit (the call's app layer).
    Call(Key),
    /// An attempt of the layer before (this invocation is a sidecar).
    Attempt(Key),
}

/// Whose caller state (budget, breaker) an invocation uses.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CallerOf {
    /// The layer's own caller state (app layers, sidecars, the open-loop
    /// client): one per slot.
    Slot(u32),
    /// Closed loop: each client is its own caller.
    Client(u32),
}

/// The retry state one caller keeps across its requests.
#[derive(Debug, Default)]
pub(crate) struct CallerState {
    pub budget: Option<Budget>,
    pub breaker: Option<Breaker>,
}

impl CallerState {
    fn of(layer: &super::model::LayerModel) -> Self {
        CallerState {
            budget: layer.policy.budget.as_ref().map(|b| b.start()),
            breaker: layer.breaker.as_ref().map(|b| b.start()),
        }
    }
}

/// One logical request through one retry layer.
#[derive(Debug)]
pub(crate) struct Inv<'m> {
    pub slot: u32,
    /// The retries, the breaker's say and the hedging schedule.
    pub(crate) session: LayerSession<'m>,
    pub parent: Parent,
    pub caller: CallerOf,
    /// Index into `Engine::executions` when the logical request is counted
    /// for duplicates (a non-idempotent call without an Idempotency-Key).
    pub execution: Option<u32>,
    /// The attempt in flight, if any (the first of them when hedging).
    pub attempt: Option<Key>,
    /// The copies out, when the layer hedges.
    pub copies: Vec<Key>,
}

/// What an attempt is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hop {
    /// Nothing to cancel: a hung request.
    Nothing,
    /// The answer is on its way already (an answer at once).
    Replied,
    /// A request at a service: it goes on when the attempt is abandoned.
    Visit(Key),
    /// A sidecar's invocation: it stops when the attempt is abandoned, as
    /// Envoy resets the upstream stream when the downstream one goes away.
    Sidecar(Key),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Attempt {
    pub(crate) inv: Key,
    pub hop: Hop,
}

impl<'m> Engine<'m> {
    /// The caller state an invocation uses.
    pub(super) fn caller(&mut self, of: CallerOf) -> &mut CallerState {
        match of {
            CallerOf::Slot(s) => &mut self.callers[s as usize],
            CallerOf::Client(c) => &mut self.client_callers[c as usize],
        }
    }
}

/// A request at a service, from its arrival to its answer.
#[derive(Debug)]
pub(crate) struct Visit {
    pub service: u32,
    pub arrived: Nanos,
    /// When it entered the service (after an injected delay): its wait for
    /// a worker counts from here.
    pub(crate) entered: Nanos,
    /// The attempt waiting for the answer (a stale key once abandoned).
    pub parent: Key,
    /// The deadline the request carried, if the caller sent one.
    pub(crate) deadline_in: Option<Nanos>,
    /// The deadline the service honours (`deadline_propagation: true`).
    pub deadline: Option<Nanos>,
    /// Capacity an `overload` phase imposed on this arrival.
    pub capacity: Option<u32>,
    /// A `reset` fault: do the work, then close without an answer.
    pub reset: bool,
    pub execution: Option<u32>,
    /// Its service time, drawn on arrival at a service that queues (the
    /// queue needs it to tell whether the request can still finish in
    /// time); drawn when its work starts elsewhere.
    pub work: Option<Nanos>,
    /// Its place in flight (the overload model), once it entered.
    pub ticket: Option<Ticket>,
    /// When it answers, once that is known (a service without calls that has
    /// started its work).
    pub ends: Option<Nanos>,
    /// The next call to make, the end of the current group, calls pending.
    pub(crate) next_call: u16,
    pub(crate) group_end: u16,
    pub(crate) pending: u16,
    /// The invocations of the current parallel group, sent together.
    pub group: Vec<Key>,
    /// The last failure a call of this request ended with: the answer once
    /// every call has been made.
    pub failure: Option<Outcome>,
}

/// The state of one trial, reused from trial to trial by one thread.
pub(crate) struct Engine<'m> {
    pub m: &'m Model,
    pub now: Nanos,
    pub rng: Rng,
    pub queue: Queue,
    /// Answers to deliver before the next event: (attempt, outcome, Retry-After).
    pub answers: VecDeque<(Key, Outcome, Option<Duration>)>,
    pub(crate) invs: Slab<Inv<'m>>,
    pub attempts: Slab<Attempt>,
    pub(crate) visits: Slab<Visit>,
    pub users: Slab<super::users::User>,
    pub in_flight: Vec<InFlight>,
    /// Open loop: when user requests arrive (`crate::run::arrivals`).
    pub arrivals: Option<Schedule>,
    /// Per service with workers and a queue: its station (visits queued).
    pub(crate) stations: Vec<Option<Station<Key>>>,
    /// Per slot.
    pub callers: Vec<CallerState>,
    /// Per closed-loop client (the client layer).
    pub(crate) client_callers: Vec<CallerState>,
    /// Executions of each tracked logical request.
    pub(crate) executions: Vec<u32>,
    /// User requests started and finished.
    pub started: u64,
    pub finished: u64,
    pub counts: Counts,
    /// Closed loop: the instant of the last user request and how many started
    /// then (see `users.rs`), and whether the trial stopped for lack of progress.
    pub(crate) users_instant: Nanos,
    pub(crate) users_at_instant: u64,
    pub stalled: bool,
    /// Attempts sent in this trial.
    pub work: u64,
    /// Why this trial stopped early, if it did.
    pub cut: Option<Cut>,
    /// Over every trial this engine ran.
    pub histograms: Histograms,
}

impl<'m> Engine<'m> {
    pub(super) fn new(m: &'m Model) -> Self {
        Engine {
            m,
            now: 0,
            rng: seeded_rng(0),
            queue: Queue::default(),
            answers: VecDeque::new(),
            invs: Slab::default(),
            attempts: Slab::default(),
            visits: Slab::default(),
            users: Slab::default(),
            in_flight: vec![InFlight::default(); m.services.len()],
            stations: Vec::new(),
            arrivals: None,
            callers: Vec::new(),
            client_callers: Vec::new(),
            executions: Vec::new(),
            started: 0,
            finished: 0,
            counts: Counts::new(m.services.len(), m.layers.len()),
            users_instant: 0,
            users_at_instant: 0,
            stalled: false,
            work: 0,
            cut: None,
            histograms: Histograms::new(m.services.len()),
        }
    }

    /// Runs one trial with its own random stream; its counts are in
    /// `self.counts` afterwards, its latencies added to `self.histograms`.
    /// Stops early (`self.cut`) when `guard` says so.
    pub(crate) fn run_trial(&mut self, seed: u64, guard: &Guard) {
        const CHECK_EVERY: u32 = 4096;
        self.reset(seed);
        self.start_load();
        let mut until_check = CHECK_EVERY;
        while let Some((at, event)) = self.queue.pop() {
            until_check -= 1;
            if until_check == 0 {
                until_check = CHECK_EVERY;
                if let Some(cut) = guard.check(self.work, self.live_bytes()) {
                    self.cut = Some(cut);
                    self.queue.clear();
                    break;
                }
            }
            self.now = at;
            match event {
                Event::User(n) => self.user_due(n),
                Event::Attempt(inv) => self.send_attempt(inv),
                Event::Hedge(inv) => self.hedge_due(inv),
                Event::Group(visit) => self.send_group(visit),
                Event::Enter(visit) => self.enter(visit),
                Event::WorkDone(visit) => self.work_done(visit),
                Event::Timeout(att) => self.abandon(att, Outcome::Timeout),
                Event::Cut(att) => self.abandon(att, Outcome::Reset),
            }
            while let Some((att, outcome, retry_after)) = self.answers.pop_front() {
                self.answer(att, outcome, retry_after);
            }
        }
        self.counts.end = duration(self.now);
        self.finish_load();
    }

    fn reset(&mut self, seed: u64) {
        self.now = 0;
        self.rng = seeded_rng(seed);
        // Its own stream, so Poisson gaps do not shift the other draws.
        self.arrivals = Schedule::new(
            &self.m.load,
            &self.m.plan,
            crate::policy::derive_seed(seed, 1),
        )
        .ok()
        .flatten();
        self.queue.clear();
        self.answers.clear();
        self.invs.clear();
        self.attempts.clear();
        self.visits.clear();
        self.users.clear();
        self.in_flight.fill(InFlight::default());
        self.stations.clear();
        self.stations
            .extend(self.m.services.iter().map(|s| s.queueing.map(Station::new)));
        self.callers.clear();
        self.callers
            .extend(self.m.layers.iter().map(CallerState::of));
        self.client_callers.clear();
        if let Some(n) = self.m.closed_loop_clients() {
            let client = &self.m.layers[super::model::CLIENT as usize];
            self.client_callers
                .extend((0..n).map(|_| CallerState::of(client)));
        }
        self.executions.clear();
        self.started = 0;
        self.finished = 0;
        self.users_instant = 0;
        self.users_at_instant = 0;
        self.stalled = false;
        self.work = 0;
        self.cut = None;
        self.counts.clear();
    }

    /// Bytes the trial's live state holds: every slot its slabs ever grew
    /// to, and the pending events.
    fn live_bytes(&self) -> u64 {
        use std::mem::size_of;
        let slots = self.invs.allocated() * (size_of::<Inv<'_>>() + 8)
            + self.visits.allocated() * (size_of::<Visit>() + 8)
            + self.attempts.allocated() * (size_of::<Attempt>() + 8)
            + self.users.allocated() * (size_of::<super::users::User>() + 8)
            + self.queue.len() * 40
            + self.executions.len() * 4;
        slots as u64
    }

    /// Queues the answer of an attempt's next hop for delivery.
    pub(super) fn reply(&mut self, att: Key, outcome: Outcome, retry_after: Option<Duration>) {
        self.answers.push_back((att, outcome, retry_after));
    }

    /// The current time as a `Duration`.
    pub(super) fn at(&self) -> Duration {
        duration(self.now)
    }

    /// Counts an arrival at a fault target in the 100 ms timeline.
    pub(crate) fn tick(&mut self) {
        self.counts.timeline.record(duration(self.now));
    }
}

pub(crate) fn duration(ns: Nanos) -> Duration {
    Duration::from_nanos(ns)
}
