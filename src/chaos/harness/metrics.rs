//! Counters of one chaos run, safe to bump from every task: per service
//! (received, statuses, dropped, duplicates, latency), per retry-layer slot
//! (atomics on the hot path), end to end, and the attempt timeline at the
//! fault target. At the end they become the run kernel's plain counts
//! (`crate::run::counts`), which its one builder turns into the report.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::context::lock;
use super::fault_layer::Dropped;
use crate::policy::{Outcome, Stop, Transition};
use crate::run::counts::{Counts, LayerCount, ServiceCount};
use crate::run::goodput::GoodputCounts;
use crate::run::timeline::TimelineCounts;
use crate::run::{EndToEnd, Harness, Latency, Layout, RunInfo, RunReport, Tally};
use crate::topology::{ServiceId, Topology};

#[derive(Default)]
struct ServiceStats {
    count: ServiceCount,
    latency: Latency,
    /// Logical non-idempotent requests executed without an idempotency key.
    executed: HashSet<u64>,
}

/// The counters of one retry layer: atomics on the hot path, a map only for
/// retries (which are rarer than attempts).
#[derive(Default)]
struct LayerStats {
    requests: AtomicU64,
    attempts: AtomicU64,
    retries: AtomicU64,
    retry_after_waits: AtomicU64,
    /// Indexed by `Stop::index`.
    stops: [AtomicU64; Stop::ALL.len()],
    by_reason: Mutex<BTreeMap<Outcome, u64>>,
    short_circuited: AtomicU64,
    hedges: AtomicU64,
    cancelled: AtomicU64,
    /// Breaker transitions with their run times (counts and the first few).
    transitions: Mutex<Transitions>,
}

/// Breaker transitions by kind, and the first few with their times.
type Transitions = ([u64; Transition::ALL.len()], Vec<(Duration, Transition)>);

impl LayerStats {
    fn count(&self) -> LayerCount {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut stops = [0; Stop::ALL.len()];
        for (n, a) in stops.iter_mut().zip(&self.stops) {
            *n = get(a);
        }
        let (transitions, transition_log) = lock(&self.transitions).clone();
        LayerCount {
            short_circuited: get(&self.short_circuited),
            hedges: get(&self.hedges),
            cancelled: get(&self.cancelled),
            transitions,
            transition_log,
            requests: get(&self.requests),
            attempts: get(&self.attempts),
            retries: get(&self.retries),
            budget_refusals: stops[Stop::BudgetExhausted.index()],
            retry_after_waits: get(&self.retry_after_waits),
            stops,
            by_reason: lock(&self.by_reason)
                .iter()
                .map(|(k, v)| (*k, *v))
                .collect(),
        }
    }
}

#[derive(Default)]
struct EndToEndStats {
    count: crate::run::counts::EndToEndCount,
    latency: Latency,
}

pub(crate) struct Metrics {
    /// Open loop: user requests that waited for a slot, and that never got one.
    late: AtomicU64,
    not_sent: AtomicU64,
    /// Connections and accepts that failed for want of a file descriptor.
    descriptor_errors: AtomicU64,
    services: Vec<Mutex<ServiceStats>>,
    layers: Vec<LayerStats>,
    e2e: Mutex<EndToEndStats>,
    timeline: Mutex<TimelineCounts>,
    goodput: Mutex<GoodputCounts>,
    targets: Vec<bool>,
    watched_queues: Vec<bool>,
}

impl Metrics {
    pub(crate) fn new(services: usize, slots: usize, targets: Vec<bool>) -> Self {
        Metrics {
            late: AtomicU64::new(0),
            not_sent: AtomicU64::new(0),
            descriptor_errors: AtomicU64::new(0),
            services: (0..services).map(|_| Mutex::default()).collect(),
            layers: (0..slots).map(|_| LayerStats::default()).collect(),
            e2e: Mutex::default(),
            timeline: Mutex::default(),
            goodput: Mutex::default(),
            watched_queues: Vec::new(),
            targets,
        }
    }

    /// The services whose queue depth the goodput series follows
    /// (`crate::run::queueing::watched`).
    pub(crate) fn watch_queues(mut self, watched: Vec<bool>) -> Self {
        self.watched_queues = watched;
        self
    }

    fn tick(&self, service: ServiceId, at: Duration) {
        if self.targets.get(service).copied().unwrap_or(false) {
            lock(&self.timeline).record(at);
        }
    }

    /// A request arrived at `service`.
    pub(crate) fn arrived(&self, service: ServiceId, at: Duration) {
        if let Some(s) = self.services.get(service) {
            lock(s).count.received += 1;
        }
        self.tick(service, at);
    }

    /// A connection to `service` was refused: it counts as an arrival that
    /// got no answer, so a service that is down still shows its load.
    pub(crate) fn refused(&self, service: ServiceId, at: Duration) {
        if let Some(s) = self.services.get(service) {
            let mut s = lock(s);
            s.count.received += 1;
            s.count.refused += 1;
        }
        self.tick(service, at);
    }

    /// `service` answered `status` after `took`.
    pub(crate) fn answered(&self, service: ServiceId, status: u16, took: Duration) {
        if let Some(s) = self.services.get(service) {
            let mut s = lock(s);
            s.count.answered(status);
            s.latency.record(took);
        }
    }

    /// `service` dropped a request without an answer.
    pub(crate) fn dropped(&self, service: ServiceId, why: Dropped) {
        if let Some(s) = self.services.get(service) {
            let c = &mut lock(s).count;
            match why {
                Dropped::Refused => c.refused += 1,
                Dropped::Reset => c.reset += 1,
                Dropped::Hang => c.hang += 1,
            }
        }
    }

    /// `service` executes logical request `id` of a non-idempotent call without
    /// an idempotency key; a second execution is a duplicate.
    pub(crate) fn executed(&self, service: ServiceId, id: u64) {
        if let Some(s) = self.services.get(service) {
            let mut s = lock(s);
            if !s.executed.insert(id) {
                s.count.duplicates += 1;
            }
        }
    }

    fn layer(&self, slot: usize) -> Option<&LayerStats> {
        self.layers.get(slot)
    }

    pub(crate) fn layer_request(&self, slot: usize) {
        if let Some(l) = self.layer(slot) {
            l.requests.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn layer_attempt(&self, slot: usize) {
        if let Some(l) = self.layer(slot) {
            l.attempts.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn layer_retry(&self, slot: usize, cause: Outcome, honored_retry_after: bool) {
        if let Some(l) = self.layer(slot) {
            l.retries.fetch_add(1, Ordering::Relaxed);
            *lock(&l.by_reason).entry(cause).or_default() += 1;
            if honored_retry_after {
                l.retry_after_waits.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The layer's breaker rejected a request or an attempt.
    pub(crate) fn short_circuited(&self, slot: usize) {
        if let Some(l) = self.layer(slot) {
            l.short_circuited.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The layer's breaker changed state at run time `at`.
    pub(crate) fn transition(&self, slot: usize, at: Duration, t: Transition) {
        if let Some(l) = self.layer(slot) {
            let mut g = lock(&l.transitions);
            g.0[t.index()] += 1;
            if g.1.len() < crate::run::counts::TRANSITION_LOG {
                g.1.push((at, t));
            }
        }
    }

    /// The layer sent a hedged copy after the first, or cancelled one.
    pub(crate) fn hedged(&self, slot: usize, sent: u64, cancelled: u64) {
        if let Some(l) = self.layer(slot) {
            l.hedges.fetch_add(sent, Ordering::Relaxed);
            l.cancelled.fetch_add(cancelled, Ordering::Relaxed);
        }
    }

    pub(crate) fn layer_stop(&self, slot: usize, why: Stop) {
        if let Some(l) = self.layer(slot) {
            l.stops[why.index()].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A user request ended at `at` with `outcome` after `latency`.
    pub(crate) fn user_request(&self, outcome: Outcome, latency: Duration, at: Duration) {
        {
            let mut e = lock(&self.e2e);
            e.count.finished(outcome, at);
            e.latency.record(latency);
        }
        if outcome.is_success() {
            lock(&self.goodput).succeeded(at, latency);
        }
    }

    /// A user request was due at `at`.
    pub(crate) fn offered(&self, at: Duration) {
        lock(&self.goodput).offered(at);
    }

    /// An attempt timed out at `at`.
    pub(crate) fn timed_out(&self, at: Duration) {
        lock(&self.goodput).timed_out(at);
    }

    /// A retry was decided at `at`.
    pub(crate) fn retried_at(&self, at: Duration) {
        lock(&self.goodput).retried(at);
    }

    /// `service`'s full queue turned a request away at `at`.
    pub(crate) fn queue_rejected(&self, service: ServiceId, at: Duration) {
        if let Some(s) = self.services.get(service) {
            lock(s).count.rejected += 1;
        }
        lock(&self.goodput).rejected(at);
    }

    /// `service`'s queue is `depth` deep at `at`.
    pub(crate) fn queue_depth(&self, service: ServiceId, at: Duration, depth: u64) {
        if let Some(s) = self.services.get(service) {
            let c = &mut lock(s).count;
            c.max_queue = c.max_queue.max(depth);
        }
        if self.watched_queues.get(service).copied().unwrap_or(false) {
            lock(&self.goodput).depth(at, depth);
        }
    }

    /// `service` dropped a queued request whose deadline had passed.
    pub(crate) fn queue_expired(&self, service: ServiceId) {
        if let Some(s) = self.services.get(service) {
            lock(s).count.expired += 1;
        }
    }

    /// A request of `service` got a worker after waiting `waited` and holds
    /// it for `work`.
    pub(crate) fn served(&self, service: ServiceId, waited: Duration, work: Duration) {
        if let Some(s) = self.services.get(service) {
            lock(s).count.serve(waited, work);
        }
    }

    /// `service` finished work on a request whose caller had given up.
    pub(crate) fn wasted(&self, service: ServiceId) {
        if let Some(s) = self.services.get(service) {
            lock(s).count.wasted += 1;
        }
    }

    /// User requests still in flight when the run ended: failed, no latency.
    pub(crate) fn unfinished(&self, n: u64) {
        let c = &mut lock(&self.e2e).count;
        c.requests += n;
        c.unfinished += n;
    }

    /// An open-loop user request waited for a free slot.
    pub(crate) fn late(&self) {
        self.late.fetch_add(1, Ordering::Relaxed);
    }

    /// `n` open-loop user requests were due but never got a slot.
    pub(crate) fn not_sent(&self, n: u64) {
        self.not_sent.fetch_add(n, Ordering::Relaxed);
    }

    /// A connect or an accept failed because descriptors ran out.
    pub(crate) fn out_of_descriptors(&self) {
        self.descriptor_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// How the harness kept up, as counted (the caller adds the limits).
    pub(crate) fn harness(&self) -> Harness {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Harness {
            late: get(&self.late),
            not_sent: get(&self.not_sent),
            descriptor_errors: get(&self.descriptor_errors),
            ..Harness::default()
        }
    }

    /// `123 requests, 97 ok` for the progress bar.
    pub(crate) fn progress_line(&self) -> String {
        let e = lock(&self.e2e);
        format!("{} requests, {} ok", e.count.requests, e.count.succeeded)
    }

    /// Everything counted so far as the run kernel's plain counts.
    fn counts(&self) -> Counts {
        Counts {
            services: self
                .services
                .iter()
                .map(|s| lock(s).count.clone())
                .collect(),
            layers: self.layers.iter().map(LayerStats::count).collect(),
            end_to_end: lock(&self.e2e).count.clone(),
            timeline: lock(&self.timeline).clone(),
            goodput: lock(&self.goodput).clone(),
            end: Duration::ZERO,
        }
    }

    /// Everything counted so far, with the latency of every service's answers
    /// and of the user requests: what a `serve` process hands to `drive`.
    pub(crate) fn snapshot(&self) -> crate::run::wire::Snapshot {
        crate::run::wire::Snapshot {
            counts: self.counts(),
            latency: self
                .services
                .iter()
                .map(|s| lock(s).latency.clone())
                .collect(),
            end_to_end_latency: lock(&self.e2e).latency.clone(),
        }
    }

    /// The report of a run of `t`.
    pub(crate) fn report(&self, t: &Topology, layout: &Layout, info: RunInfo<'_>) -> RunReport {
        let counts = self.counts();
        let services: Vec<_> = self.services.iter().map(lock).collect();
        let e2e = lock(&self.e2e);
        let latency = services
            .iter()
            .map(|s| (!s.latency.is_empty()).then_some(&s.latency))
            .collect();
        crate::run::build::build(
            t,
            layout,
            info,
            Tally::single(&counts, latency, &e2e.latency),
        )
    }

    /// The end-to-end figures alone; `client` names the client layer, if
    /// its row is wanted.
    pub(crate) fn end_to_end(&self, client: Option<&str>) -> EndToEnd {
        let counts = self.counts();
        let e2e = lock(&self.e2e);
        let tally = Tally::single(&counts, Vec::new(), &e2e.latency);
        let layer = client.map(|name| {
            crate::run::build::layer_report(
                counts.layers.get(Layout::CLIENT),
                crate::run::build::Shape::named(name),
                1,
            )
        });
        crate::run::build::end_to_end(&tally, layer)
    }
}
