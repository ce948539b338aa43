//! A tier's workers and bounded queue (`capacity: { workers, queue }`), as
//! `crate::run::queueing` states them: the kernel's `Station` decides who
//! gets a worker, waits or is turned away; here a waiting handler sleeps on
//! a oneshot until a worker is handed to it, so the service time is a
//! worker held for the drawn time, not CPU burnt.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::oneshot;

use super::context::{Run, lock};
use crate::run::queueing::{Admit, Station};
use crate::topology::{Queueing, ServiceId};

/// What a waiting request is told when its turn comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// A worker is its own now.
    Start,
    /// Its deadline passed while it waited: dropped without work.
    Expired,
}

/// How an arriving request got on.
pub(crate) enum Entry<'a> {
    /// It holds a worker until the guard is dropped.
    Worker(Worker<'a>),
    /// The queue was full: answer at once with this status.
    Rejected {
        status: u16,
        retry_after: Option<Duration>,
    },
    /// It could no longer finish by its deadline and was dropped
    /// (`drop_expired`).
    Expired,
}

pub(crate) struct Workers {
    service: ServiceId,
    spec: Queueing,
    inner: Mutex<Inner>,
}

struct Inner {
    station: Station<u64>,
    next_job: u64,
    waiting: HashMap<u64, oneshot::Sender<Turn>>,
}

impl Workers {
    pub(crate) fn new(service: ServiceId, spec: Queueing) -> Self {
        Workers {
            service,
            spec,
            inner: Mutex::new(Inner {
                station: Station::new(spec),
                next_job: 0,
                waiting: HashMap::new(),
            }),
        }
    }

    /// A request that must start by `latest_start` (absolute run time, when
    /// a deadline is known) to finish in time arrives: a worker at once,
    /// after a wait in the queue, or a rejection.
    pub(crate) async fn enter<'a>(
        &'a self,
        run: &'a Run,
        latest_start: Option<Duration>,
    ) -> Entry<'a> {
        let arrived = run.now();
        let waiting = {
            let mut g = lock(&self.inner);
            let job = g.next_job;
            g.next_job += 1;
            match g.station.arrive(job, latest_start) {
                Admit::Start => None,
                Admit::Queued => {
                    let (tx, rx) = oneshot::channel();
                    g.waiting.insert(job, tx);
                    let depth = g.station.depth() as u64;
                    drop(g);
                    run.metrics.queue_depth(self.service, arrived, depth);
                    Some(Waiting {
                        workers: self,
                        run,
                        job,
                        rx,
                    })
                }
                Admit::Rejected => {
                    drop(g);
                    run.metrics.queue_rejected(self.service, arrived);
                    return Entry::Rejected {
                        status: self.spec.reject_status,
                        retry_after: self.spec.retry_after,
                    };
                }
            }
        };
        if let Some(mut w) = waiting {
            // The sender lives until the turn is given: an error means the
            // run is being torn down, when nothing is served any more.
            let turn = (&mut w.rx).await.unwrap_or(Turn::Expired);
            w.job = u64::MAX; // answered: nothing to withdraw
            if turn == Turn::Expired {
                return Entry::Expired;
            }
        }
        Entry::Worker(Worker {
            workers: self,
            run,
            since: arrived,
        })
    }

    /// A worker is free at `now`: it goes to the next waiting request, past
    /// the expired ones, which are told so.
    fn release(&self, run: &Run) {
        let now = run.now();
        let mut g = lock(&self.inner);
        let mut expired = 0;
        loop {
            let released = g.station.release(now);
            for job in released.expired {
                if let Some(tx) = g.waiting.remove(&job) {
                    let _ = tx.send(Turn::Expired);
                }
                expired += 1;
            }
            let Some(job) = released.next else { break };
            // A handler that went away hands the worker on to the next.
            if let Some(tx) = g.waiting.remove(&job)
                && tx.send(Turn::Start).is_ok()
            {
                break;
            }
        }
        let depth = g.station.depth() as u64;
        drop(g);
        for _ in 0..expired {
            run.metrics.queue_expired(self.service);
        }
        run.metrics.queue_depth(self.service, now, depth);
    }
}

/// A request waiting in the queue; withdrawn if its handler goes away.
struct Waiting<'a> {
    workers: &'a Workers,
    run: &'a Run,
    job: u64,
    rx: oneshot::Receiver<Turn>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.job == u64::MAX {
            return;
        }
        let withdrawn = {
            let mut g = lock(&self.workers.inner);
            g.waiting.remove(&self.job);
            g.station.withdraw(&self.job)
        };
        // Given a worker between the last poll and now: hand it on.
        if !withdrawn && self.rx.try_recv() == Ok(Turn::Start) {
            self.workers.release(self.run);
        }
    }
}

/// A worker held by one request; released to the next when dropped.
pub(crate) struct Worker<'a> {
    workers: &'a Workers,
    run: &'a Run,
    since: Duration,
}

impl Worker<'_> {
    /// The request waited from its arrival until now and will hold the
    /// worker for `work`: counted for mean waits and utilisation.
    pub(crate) fn serve(&self, work: Duration) {
        let waited = self.run.now().saturating_sub(self.since);
        self.run.metrics.served(self.workers.service, waited, work);
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        self.workers.release(self.run);
    }
}
