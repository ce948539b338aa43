//! The event queue in virtual time: integer nanoseconds since the start of a
//! trial, no wall clock anywhere.
//!
//! Simultaneous events are ordered by (time, phase, sequence number). Every
//! event that ends something (an answer, a timeout, a service finishing its
//! own work) is in the `End` phase and runs before every event that starts
//! something (an attempt arriving, a user request, a delayed request entering
//! its service) at the same instant: DESIGN's "a request ending at t is no
//! longer in flight for one starting at t". Within a phase, events run in the
//! order they were scheduled, so a trial is a pure function of its seed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
    seq: u64,
}

impl Queue {
    /// Empties the queue for a new trial, keeping its memory.
    pub fn clear(&mut self) {
        self.heap.clear();
        self.seq = 0;
    }

    pub fn push(&mut self, at: Nanos, phase: Phase, event: Event) {
        let key = (u128::from(at) << 64) | ((phase as u128) << 63) | u128::from(self.seq);
        // 2⁶³ events in one trial would take centuries; keep the phase bit clean.
        self.seq = (self.seq + 1) & (u64::MAX >> 1);
        self.heap.push(Scheduled { key, event });
    }

    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap
            .pop()
            .map(|s| ((s.key >> 64) as Nanos, s.event))
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.heap.len()
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
    fn far_future_times_keep_their_order() {
        let mut q = Queue::default();
        q.push(u64::MAX, Phase::End, Event::User(1));
        q.push(u64::MAX - 1, Phase::Start, Event::User(2));
        assert_eq!(q.pop(), Some((u64::MAX - 1, Event::User(2))));
        assert_eq!(q.pop(), Some((u64::MAX, Event::User(1))));
        assert_eq!(q.len(), 0);
    }
}
