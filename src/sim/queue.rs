//! The event queue in virtual time: integer nanoseconds since the start of a
//! trial, no wall clock anywhere.
//!
//! Simultaneous events are ordered by (time, phase, sequence number). Every
//! event that ends something (an answer, a timeout, a service finishing its
//! own work) is in the `End` phase and runs before every event that starts
//! something (an attempt arriving, a user request, a delayed request entering
//! its service) at the same instant: docs/chaos.md's "a request ending at t is no
//! longer in flight for one starting at t". Within a phase, events run in the
//! order they were scheduled, so a trial is a pure function of its seed.
//!
//! Most `Start` events are scheduled for the current instant (a first
//! attempt, a retry without backoff, the next closed-loop request). They skip
//! the heap: a FIFO holds them, and it runs after every heap event of the same
//! instant, which were all scheduled earlier (or are `End` events) — the same
//! order the heap alone would give, at a fraction of the cost.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use super::slab::Key;

/// Virtual time: nanoseconds since the start of the trial.
pub(crate) type Nanos = u64;

/// Which events at one instant go first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Something ends: answers, timeouts, cuts, a service's own work.
    End = 0,
    /// Something starts: attempts, user requests, delayed arrivals.
    Start = 1,
}

/// What happens at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// Closed loop: client `n` is free; open loop: user request `n` is due.
    User(u32),
    /// An invocation of a retry layer sends its next attempt.
    Attempt(Key),
    /// A hedging invocation's delay for its next copy is up.
    Hedge(Key),
    /// A service sends the first attempts of a run of parallel calls, all at
    /// once, before any of them can answer.
    Group(Key),
    /// A delayed request enters its service (after an injected delay).
    Enter(Key),
    /// A service finished its own work on a request; its calls come next.
    WorkDone(Key),
    /// An attempt's per-attempt timeout fires.
    Timeout(Key),
    /// The attempt's callee went down: its connection is cut (reset).
    Cut(Key),
}

#[derive(Debug, Clone, Copy)]
struct Scheduled {
    /// time << 64 | phase << 63 | sequence: one comparison orders everything.
    key: u128,
    event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Scheduled {}

impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scheduled {
    /// Reversed: `BinaryHeap` is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A min-queue of events by (time, phase, sequence).
#[derive(Debug, Default)]
pub(crate) struct Queue {
    heap: BinaryHeap<Scheduled>,
    /// `Start` events scheduled at `now` while the clock stood at `now`.
    now_starts: VecDeque<Event>,
    /// The time of the last event popped.
    now: Nanos,
    seq: u64,
}

impl Queue {
    /// Empties the queue for a new trial, keeping its memory.
    pub(super) fn clear(&mut self) {
        self.heap.clear();
        self.now_starts.clear();
        self.now = 0;
        self.seq = 0;
    }

    pub(super) fn push(&mut self, at: Nanos, phase: Phase, event: Event) {
        if at == self.now && phase == Phase::Start {
            self.now_starts.push_back(event);
            return;
        }
        let seq = self.reserve();
        self.push_reserved(at, phase, seq, event);
    }

    /// A sequence number for an event that may be scheduled later in the
    /// place it would have had now (see [`Queue::push_reserved`]).
    pub(crate) fn reserve(&mut self) -> u64 {
        let seq = self.seq;
        // 2⁶³ events in one trial would take centuries; keep the phase bit clean.
        self.seq = (self.seq + 1) & (u64::MAX >> 1);
        seq
    }

    /// Schedules `event` with a sequence number from [`Queue::reserve`]; `at`
    /// must be later than now, or `phase` be `End`.
    pub(crate) fn push_reserved(&mut self, at: Nanos, phase: Phase, seq: u64, event: Event) {
        debug_assert!(at > self.now || phase == Phase::End);
        let key = (u128::from(at) << 64) | ((phase as u128) << 63) | u128::from(seq);
        self.heap.push(Scheduled { key, event });
    }

    /// The earliest event and its time.
    pub(super) fn pop(&mut self) -> Option<(Nanos, Event)> {
        let heap_now = self
            .heap
            .peek()
            .is_some_and(|s| (s.key >> 64) as Nanos == self.now);
        if !heap_now && let Some(event) = self.now_starts.pop_front() {
            return Some((self.now, event));
        }
        let s = self.heap.pop()?;
        self.now = (s.key >> 64) as Nanos;
        Some((self.now, s.event))
    }

    /// Events pending.
    pub(super) fn len(&self) -> usize {
        self.heap.len() + self.now_starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_then_phase_then_order_of_scheduling() {
        let mut q = Queue::default();
        q.push(5, Phase::Start, Event::User(1));
        q.push(5, Phase::End, Event::User(2));
        q.push(3, Phase::Start, Event::User(3));
        q.push(5, Phase::Start, Event::User(4));
        q.push(5, Phase::End, Event::User(5));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (3, Event::User(3)),
                (5, Event::User(2)),
                (5, Event::User(5)),
                (5, Event::User(1)),
                (5, Event::User(4)),
            ]
        );
    }

    #[test]
    fn starts_scheduled_now_run_after_the_heap_events_of_now() {
        let mut q = Queue::default();
        q.push(0, Phase::Start, Event::User(1));
        q.push(5, Phase::Start, Event::User(2));
        q.push(5, Phase::End, Event::User(3));
        assert_eq!(q.pop(), Some((0, Event::User(1))));
        assert_eq!(q.pop(), Some((5, Event::User(3))));
        // At 5: a start scheduled now waits for the start scheduled before,
        // and an end scheduled now still goes first.
        q.push(5, Phase::Start, Event::User(4));
        q.push(5, Phase::End, Event::User(5));
        let seq = q.reserve();
        q.push(7, Phase::Start, Event::User(6));
        q.push_reserved(7, Phase::End, seq, Event::User(7));
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            rest,
            [
                (5, Event::User(5)),
                (5, Event::User(2)),
                (5, Event::User(4)),
                (7, Event::User(7)),
                (7, Event::User(6)),
            ]
        );
    }

    #[test]
    fn far_future_times_keep_their_order() {
        let mut q = Queue::default();
        q.push(u64::MAX, Phase::End, Event::User(1));
        q.push(u64::MAX - 1, Phase::Start, Event::User(2));
        assert_eq!(q.pop(), Some((u64::MAX - 1, Event::User(2))));
        assert_eq!(q.pop(), Some((u64::MAX, Event::User(1))));
        assert_eq!(q.len(), 0);
    }
}
