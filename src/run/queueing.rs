//! Servers that queue, once for both engines: a service with `workers` and
//! a bounded `queue` (`capacity: { workers: 10, queue: 100 }`). An arriving
//! request takes a free worker, or waits in the queue, or — the queue full —
//! is rejected at once (503 by default, Retry-After when set). A worker is
//! held for the request's service time (its latency draw: its own work),
//! then released to the next waiting request, the oldest (`fifo`) or the
//! newest (`lifo`). The calls a request makes after its own work do not hold
//! a worker (an asynchronous server).
//!
//! A request whose caller has given up is still served when its turn comes
//! — wasted work, counted — unless the service has `drop_expired: true`:
//! then a waiting request that can no longer finish by its deadline is
//! dropped when its turn comes, without work, and answered 504. Its service
//! time is drawn when it arrives, so "can no longer finish" is exact: its
//! latest start (deadline − service time) has passed. (Dropping only once the
//! deadline itself has passed serves the requests that waited just under it,
//! and every one of them then finishes too late: a full FIFO queue stays
//! full of work nobody waits for.) The deadline is known only when callers
//! propagate it, so `drop_expired` needs `deadline_propagation: true`.
//!
//! Plain state over any job type: the simulator queues its visits, the chaos
//! tier the wake-ups of its waiting handlers.

use std::collections::VecDeque;
use std::time::Duration;

use crate::topology::{Discipline, Queueing};

/// The services whose queue depth the goodput series follows: the fault
/// target's, where they queue; otherwise — a surge targets the entry, which
/// rarely queues — every service that queues. `queues[s]`: service s queues.
pub(crate) fn watched(queues: &[bool], targets: &[bool]) -> Vec<bool> {
    let target_queues: Vec<bool> = queues.iter().zip(targets).map(|(&q, &t)| q && t).collect();
    if target_queues.iter().any(|&w| w) {
        target_queues
    } else {
        queues.to_vec()
    }
}

/// What became of an arriving request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// A worker was free: it is the request's now.
    Start,
    /// It waits for a worker.
    Queued,
    /// The queue is full: answer at once with the spec's reject status.
    Rejected,
}

/// A worker was released: the job that takes it, if any, and the waiting
/// jobs dropped on the way because their deadline had passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Release<J> {
    pub next: Option<J>,
    pub expired: Vec<J>,
}

/// The workers and queue of one service.
#[derive(Debug, Clone)]
pub(crate) struct Station<J> {
    spec: Queueing,
    busy: u32,
    waiting: VecDeque<(J, Option<Duration>)>,
}

impl<J> Station<J> {
    pub(crate) fn new(spec: Queueing) -> Self {
        Station {
            spec,
            busy: 0,
            waiting: VecDeque::new(),
        }
    }

    pub(crate) fn spec(&self) -> &Queueing {
        &self.spec
    }

    /// Requests waiting for a worker now.
    pub(crate) fn depth(&self) -> usize {
        self.waiting.len()
    }

    /// Workers busy now.
    #[cfg(test)]
    pub(crate) fn busy(&self) -> u32 {
        self.busy
    }

    /// `job` arrives; `latest_start` (absolute run time, if a deadline is
    /// known) is when it must start to finish by its deadline.
    pub(crate) fn arrive(&mut self, job: J, latest_start: Option<Duration>) -> Admit {
        if self.busy < self.spec.workers {
            self.busy += 1;
            return Admit::Start;
        }
        if self.waiting.len() < self.spec.queue as usize {
            self.waiting.push_back((job, latest_start));
            return Admit::Queued;
        }
        Admit::Rejected
    }

    /// A worker finished at `now`: it goes to the next waiting job by the
    /// discipline, past those whose latest start has passed when the spec
    /// drops expired work.
    pub(crate) fn release(&mut self, now: Duration) -> Release<J> {
        let mut expired = Vec::new();
        loop {
            let taken = match self.spec.discipline {
                Discipline::Fifo => self.waiting.pop_front(),
                Discipline::Lifo => self.waiting.pop_back(),
            };
            match taken {
                Some((job, Some(latest))) if self.spec.drop_expired && now >= latest => {
                    expired.push(job);
                }
                Some((job, _)) => {
                    return Release {
                        next: Some(job),
                        expired,
                    };
                }
                None => {
                    self.busy = self.busy.saturating_sub(1);
                    return Release {
                        next: None,
                        expired,
                    };
                }
            }
        }
    }

    /// Takes `job` out of the queue if it is still waiting (its handler went
    /// away); whether it was.
    pub(crate) fn withdraw(&mut self, job: &J) -> bool
    where
        J: PartialEq,
    {
        match self.waiting.iter().position(|(j, _)| j == job) {
            Some(i) => {
                self.waiting.remove(i);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(workers: u32, queue: u32, discipline: Discipline, drop_expired: bool) -> Queueing {
        Queueing {
            workers,
            queue,
            discipline,
            reject_status: 503,
            retry_after: None,
            drop_expired,
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_depth_follows_the_target_or_else_every_queue() {
        assert_eq!(
            watched(&[false, true, true], &[false, true, false]),
            [false, true, false]
        );
        assert_eq!(
            watched(&[false, true, true], &[true, false, false]),
            [false, true, true]
        );
    }

    #[test]
    fn workers_then_queue_then_rejection_in_order() {
        let mut s = Station::new(spec(2, 2, Discipline::Fifo, false));
        assert_eq!(s.arrive(1, None), Admit::Start);
        assert_eq!(s.arrive(2, None), Admit::Start);
        assert_eq!(s.arrive(3, None), Admit::Queued);
        assert_eq!(s.arrive(4, None), Admit::Queued);
        assert_eq!(s.arrive(5, None), Admit::Rejected);
        assert_eq!(s.depth(), 2);
        assert_eq!(s.release(ms(1)).next, Some(3));
        assert_eq!(s.release(ms(2)).next, Some(4));
        assert_eq!(s.busy(), 2);
        assert_eq!(s.release(ms(3)).next, None);
        assert_eq!(s.busy(), 1);
    }

    #[test]
    fn lifo_serves_the_newest_and_expired_work_is_dropped() {
        let mut s = Station::new(spec(1, 3, Discipline::Lifo, true));
        s.arrive(0, None);
        s.arrive(1, Some(ms(5)));
        s.arrive(2, Some(ms(50)));
        s.arrive(3, Some(ms(5)));
        // At 10 ms the newest (3) has expired; 2 has not.
        let r = s.release(ms(10));
        assert_eq!((r.next, r.expired), (Some(2), vec![3]));
        assert!(s.withdraw(&1));
        assert_eq!(s.depth(), 0);
        let mut kept = Station::new(spec(1, 1, Discipline::Fifo, false));
        kept.arrive(0, None);
        kept.arrive(1, Some(ms(5)));
        assert_eq!(kept.release(ms(10)).next, Some(1), "served: wasted work");
    }
}
