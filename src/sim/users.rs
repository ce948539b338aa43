//! The load (docs/chaos.md, "Semantics shared by `chaos` and `simulate`"): user requests through the `client:` layer into the entry.
//!
//! - Closed loop (`--clients N`): N callers start at t = 0; each sends its next
//!   user request as soon as the previous one has finished, client-layer
//!   retries included, until the horizon. Each client is its own caller (its
//!   own budget).
//! - Open loop (`--rate R`): user request i is due at i / R whatever is still in
//!   flight, and its latency counts from that intended time; all user requests
//!   share one caller.
//! - `--requests M` caps user requests in total; no attempt starts at or after
//!   the horizon (`--duration`). A closed-loop client whose request the horizon
//!   cut short (its client layer could not retry before it) would still be
//!   busy with it at the horizon, so it sends no more.

use super::engine::{CallerOf, Engine, Parent};
use super::model::CLIENT;
use super::queue::{Event, Nanos, Phase};
use super::slab::Key;
use crate::policy::Outcome;

/// A user request in flight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct User {
    /// When it was meant to start: latency counts from here.
    pub intended: Nanos,
    /// The closed-loop client sending it.
    pub client: Option<u32>,
}

impl<'m> Engine<'m> {
    pub(crate) fn start_load(&mut self) {
        match self.m.closed_loop_clients() {
            Some(n) => {
                for c in 0..n {
                    self.queue.push(0, Phase::Start, Event::User(c));
                }
            }
            None => self.schedule_open(0),
        }
    }

    /// Open loop: schedules user request `i` when the arrival schedule has
    /// one more due at all.
    fn schedule_open(&mut self, i: u32) {
        if let Some(due) = self.arrivals.as_mut().and_then(|a| a.next_due()) {
            let at = super::model::nanos(due);
            self.queue.push(at, Phase::Start, Event::User(i));
        }
    }

    /// Closed loop: client `n` is free; open loop: user request `n` is due.
    pub(crate) fn user_due(&mut self, n: u32) {
        let client = match self.m.closed_loop_clients() {
            Some(clients) => {
                let capped = self.m.load.requests.is_some_and(|m| self.started >= m);
                if self.now >= self.m.horizon || capped {
                    return;
                }
                if !self.progressing(clients) {
                    return;
                }
                Some(n)
            }
            None => {
                self.schedule_open(n.saturating_add(1));
                None
            }
        };
        self.started += 1;
        let at = self.at();
        self.counts.goodput.offered(at);
        let user = self.users.insert(User {
            intended: self.now,
            client,
        });
        let deadline = self.m.deadline.map(|d| self.now.saturating_add(d));
        let budget = client.map_or(CallerOf::Slot(CLIENT), CallerOf::Client);
        if let Some(why) = self.too_late(deadline) {
            self.refuse_late(CLIENT, why);
            self.user_done(user, Outcome::Timeout, false);
            return;
        }
        self.invoke(CLIENT, Parent::User(user), deadline, None, budget, false);
    }

    /// Closed loop: whether virtual time still moves. User requests that end
    /// the instant they start (a fault answering the entry at once with no
    /// client retry to wait for, zero latency everywhere, a zero deadline)
    /// would send the next one at the same instant forever; past a million of
    /// them at one instant the trial is stopped and marked stalled.
    fn progressing(&mut self, clients: u32) -> bool {
        if self.now != self.users_instant {
            self.users_instant = self.now;
            self.users_at_instant = 0;
        }
        self.users_at_instant += 1;
        if self.users_at_instant > u64::from(clients) + 1_000_000 {
            self.stalled = true;
            self.queue.clear();
            return false;
        }
        true
    }

    /// A user request ended with `outcome` (after client-layer retries);
    /// `cut`: the horizon stopped a retry of the client layer.
    pub(crate) fn user_done(&mut self, key: Key, outcome: Outcome, cut: bool) {
        let Some(user) = self.users.remove(key) else {
            return;
        };
        self.finished += 1;
        self.counts
            .end_to_end
            .finished(outcome, super::engine::duration(self.now));
        let took = super::engine::duration(self.now - user.intended);
        self.histograms.end_to_end.record(took);
        if outcome.is_success() {
            let at = self.at();
            self.counts.goodput.succeeded_unrecorded(at, took);
        }
        if let Some(c) = user.client
            && !cut
        {
            self.queue.push(self.now, Phase::Start, Event::User(c));
        }
    }

    /// After the last event: user requests still waiting (a hang nobody times
    /// out) count as unfinished failures.
    pub(crate) fn finish_load(&mut self) {
        let n = self.started - self.finished;
        let e = &mut self.counts.end_to_end;
        e.requests += n;
        e.unfinished += n;
    }
}
