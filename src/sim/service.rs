//! Services in virtual time, as `crate::run` states the shared semantics:
//! an arriving request meets the fault plan, enters (the overload model of
//! `crate::run::overload`), does its own work, then makes its calls group by
//! group (`crate::run::calls`) and answers with the last failure, if any.

use std::time::Duration;

use super::engine::{CallerOf, Engine, Hop, Parent, Visit};
use super::queue::{Event, Nanos, Phase};
use super::slab::Key;
use crate::faults::Effect;
use crate::policy::Outcome;
use crate::policy::retry_after::whole_seconds;
use crate::run::queueing::Admit;

impl<'m> Engine<'m> {
    /// Attempt `att` reaches service `s` carrying `deadline`. Returns what the
    /// attempt now waits for.
    pub(super) fn arrive(
        &mut self,
        att: Key,
        s: u32,
        deadline: Option<Nanos>,
        execution: Option<u32>,
    ) -> Hop {
        let m = self.m;
        let svc = &m.services[s as usize];
        self.counts.services[s as usize].received += 1;
        if svc.target {
            self.tick();
        }
        let effect = m
            .plan
            .effect(s as usize, super::engine::duration(self.now), &mut self.rng);
        let mut visit = Visit {
            service: s,
            arrived: self.now,
            entered: self.now,
            parent: att,
            deadline_in: deadline,
            deadline: None,
            capacity: None,
            reset: false,
            execution,
            work: None,
            ticket: None,
            ends: None,
            next_call: 0,
            group_end: 0,
            pending: 0,
            group: Vec::new(),
            failure: None,
        };
        let mut delay = 0;
        match effect {
            None => {}
            Some(Effect::Refuse) => {
                // The listener is gone: the arrival is counted, nothing runs.
                self.counts.services[s as usize].refused += 1;
                self.reply(att, Outcome::Connect, None);
                return Hop::Replied;
            }
            Some(Effect::Respond {
                status,
                retry_after,
            }) => {
                self.counts.services[s as usize].answered(status);
                self.histograms.service(s as usize).record(Duration::ZERO);
                self.reply(att, Outcome::Status(status), retry_after.map(whole_seconds));
                return Hop::Replied;
            }
            Some(Effect::Hang) => {
                self.counts.services[s as usize].hang += 1;
                self.cut_when_down(att, s);
                return Hop::Nothing;
            }
            Some(Effect::Delay(d)) => delay = super::model::nanos(d),
            Some(Effect::Reset) => visit.reset = true,
            Some(Effect::Overload { capacity }) => visit.capacity = Some(capacity),
        }
        self.cut_when_down(att, s);
        let v = self.visits.insert(visit);
        if delay == 0 {
            self.enter(v);
        } else {
            let at = self.now.saturating_add(delay);
            self.queue.push(at, Phase::Start, Event::Enter(v));
        }
        Hop::Visit(v)
    }

    /// If `s` goes down while `att` waits for it, the connection is cut then.
    fn cut_when_down(&mut self, att: Key, s: u32) {
        let starts = &self.m.services[s as usize].down_starts;
        if let Some(&at) = starts.iter().find(|&&w| w > self.now) {
            self.queue.push(at, Phase::End, Event::Cut(att));
        }
    }

    /// The request enters the service (after an injected delay, if any): the
    /// deadline check, then a worker, the queue or a rejection when the
    /// service queues (`crate::run::queueing`), and its work.
    pub(crate) fn enter(&mut self, v: Key) {
        let m = self.m;
        let now = self.now;
        let Some(visit) = self.visits.get_mut(v) else {
            return;
        };
        let s = visit.service as usize;
        let svc = &m.services[s];
        if svc.deadline_propagation {
            visit.deadline = visit.deadline_in;
        }
        visit.entered = now;
        if visit.deadline.is_some_and(|d| now >= d) {
            // Nobody waits for the answer any more: do not start the work.
            self.answer_visit(v, 504, Outcome::Status(504));
            return;
        }
        if self.stations[s].is_none() {
            self.begin_work(v);
            return;
        }
        let work = super::model::nanos(svc.latency.sample(&mut self.rng));
        visit.work = Some(work);
        let latest_start = visit
            .deadline
            .map(|d| super::engine::duration(d.saturating_sub(work)));
        let at = self.at();
        let Some(station) = self.stations[s].as_mut() else {
            return;
        };
        match station.arrive(v, latest_start) {
            Admit::Start => self.begin_work(v),
            Admit::Queued => {
                let depth = station.depth() as u64;
                self.queue_depth(s, depth);
            }
            Admit::Rejected => {
                let spec = *station.spec();
                self.counts.services[s].rejected += 1;
                self.counts.goodput.rejected(at);
                self.reject(v, spec.reject_status, spec.retry_after.map(whole_seconds));
            }
        }
    }

    /// A service's queue is `depth` deep now: its deepest, and the watched
    /// queues' depth over time.
    fn queue_depth(&mut self, s: usize, depth: u64) {
        let c = &mut self.counts.services[s];
        c.max_queue = c.max_queue.max(depth);
        if self.m.services[s].watched_queue {
            let at = self.at();
            self.counts.goodput.depth(at, depth);
        }
    }

    /// The full queue turns the request away at once, with Retry-After when
    /// the service sends one.
    fn reject(&mut self, v: Key, status: u16, retry_after: Option<Duration>) {
        let Some(visit) = self.visits.remove(v) else {
            return;
        };
        let s = visit.service as usize;
        self.counts.services[s].answered(status);
        self.histograms.service(s).record(Duration::ZERO);
        self.reply(visit.parent, Outcome::Status(status), retry_after);
    }

    /// The request starts its own work: the overload model, duplicate
    /// counting, the latency draw.
    fn begin_work(&mut self, v: Key) {
        let m = self.m;
        let now = self.now;
        let Some(visit) = self.visits.get_mut(v) else {
            return;
        };
        let s = visit.service as usize;
        let svc = &m.services[s];
        visit.ticket = Some(self.in_flight[s].enter(visit.capacity.or(svc.capacity)));
        if let Some(e) = visit.execution {
            let n = &mut self.executions[e as usize];
            *n += 1;
            if *n > 1 {
                self.counts.services[s].duplicates += 1;
            }
        }
        let work = match visit.work {
            Some(w) => w,
            None => super::model::nanos(svc.latency.sample(&mut self.rng)),
        };
        let done = now.saturating_add(work);
        if svc.calls.is_empty() {
            visit.ends = Some(done);
        }
        if svc.queueing.is_some() {
            self.counts.services[s].serve(
                Duration::from_nanos(now - visit.entered),
                Duration::from_nanos(work),
            );
        }
        self.queue.push(done, Phase::End, Event::WorkDone(v));
    }

    /// The service's own work is done: its worker (if it queues) goes to
    /// the next request waiting, and its calls come next. Work done for a
    /// caller that has already given up is wasted, and counted.
    pub(crate) fn work_done(&mut self, v: Key) {
        if let Some(visit) = self.visits.get(v) {
            let s = visit.service as usize;
            if self.attempts.get(visit.parent).is_none() {
                self.counts.services[s].wasted += 1;
            }
            self.release_worker(s);
        }
        self.next_group(v);
    }

    /// A worker of service `s` is free: the next waiting request starts, and
    /// waiting ones whose deadline passed are dropped on the way.
    fn release_worker(&mut self, s: usize) {
        let at = self.at();
        let Some(station) = self.stations[s].as_mut() else {
            return;
        };
        let released = station.release(at);
        let depth = station.depth() as u64;
        self.queue_depth(s, depth);
        for expired in released.expired {
            self.counts.services[s].expired += 1;
            self.answer_visit(expired, 504, Outcome::Status(504));
        }
        if let Some(next) = released.next {
            self.begin_work(next);
        }
    }

    /// Starts the next call, or the next run of parallel calls; answers when
    /// none is left.
    fn next_group(&mut self, v: Key) {
        let m = self.m;
        let Some(visit) = self.visits.get_mut(v) else {
            return;
        };
        let calls = &m.services[visit.service as usize].calls;
        let first = visit.next_call as usize;
        if first >= calls.len() {
            let result = visit.failure.map_or(Ok(()), Err);
            self.finish(v, result);
            return;
        }
        let end = crate::run::calls::group(first, calls.len(), |i| calls[i].parallel).end;
        let deadline = visit.deadline;
        visit.group_end = end as u16;
        visit.pending = (end - first) as u16;
        if let Some(why) = self.too_late(deadline) {
            for c in &calls[first..end] {
                self.refuse_late(c.first_layer, why);
            }
            self.finish(v, Err(Outcome::Timeout));
            return;
        }
        let parallel = end - first > 1;
        for c in &calls[first..end] {
            let execution = c.tracked.then(|| {
                self.executions.push(0);
                (self.executions.len() - 1) as u32
            });
            let inv = self.invoke(
                c.first_layer,
                Parent::Call(v),
                deadline,
                execution,
                CallerOf::Slot(c.first_layer),
                parallel,
            );
            if parallel && let Some(visit) = self.visits.get_mut(v) {
                visit.group.push(inv);
            }
        }
        if parallel {
            self.queue.push(self.now, Phase::Start, Event::Group(v));
        }
    }

    /// Sends the first attempt of every call of the current parallel run at
    /// once: answers that come back at this same instant are delivered only
    /// after all of them have gone out, as with real concurrent requests.
    pub(crate) fn send_group(&mut self, v: Key) {
        let Some(visit) = self.visits.get_mut(v) else {
            return;
        };
        let group = std::mem::take(&mut visit.group);
        for &inv in &group {
            self.send_attempt(inv);
        }
        if let Some(visit) = self.visits.get_mut(v) {
            visit.group = group;
        }
    }

    /// A call of visit `v` ended with `outcome` after its retries. A failure
    /// does not stop the request's other calls (see the module docs): it is
    /// remembered and answered once every call has been made.
    pub(crate) fn call_done(&mut self, v: Key, outcome: Outcome) {
        let Some(visit) = self.visits.get_mut(v) else {
            return; // the request was already answered
        };
        if !outcome.is_success() {
            visit.failure = Some(outcome);
        }
        visit.pending -= 1;
        if visit.pending == 0 {
            visit.next_call = visit.group_end;
            visit.group.clear();
            self.next_group(v);
        }
    }

    /// The request is done: it leaves the service, which answers.
    fn finish(&mut self, v: Key, result: Result<(), Outcome>) {
        let Some(visit) = self.visits.get(v) else {
            return;
        };
        let marked = visit
            .ticket
            .is_some_and(|t| self.in_flight[visit.service as usize].leave(t));
        if visit.reset {
            let (s, parent) = (visit.service as usize, visit.parent);
            self.visits.remove(v);
            self.counts.services[s].reset += 1;
            self.reply(parent, Outcome::Reset, None);
            return;
        }
        let (status, outcome) = match result {
            _ if marked => (504, Outcome::Timeout),
            Ok(()) => (200, Outcome::Status(200)),
            Err(o) => {
                let status = o.propagated_status();
                (status, Outcome::Status(status))
            }
        };
        self.answer_visit(v, status, outcome);
    }

    /// The service answers `status`; the caller's attempt sees `outcome`.
    fn answer_visit(&mut self, v: Key, status: u16, outcome: Outcome) {
        let Some(visit) = self.visits.remove(v) else {
            return;
        };
        let s = visit.service as usize;
        self.counts.services[s].answered(status);
        let took = super::engine::duration(self.now - visit.arrived);
        self.histograms.service(s).record(took);
        self.reply(visit.parent, outcome, None);
    }
}
