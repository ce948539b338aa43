//! What one trial counts, and what a thread accumulates over its trials.
//!
//! A trial's counts are plain integers in flat vectors (no maps, no strings on
//! the hot path). A thread adds them up as it goes and keeps, per trial, only
//! the figures that need a distribution over trials (received per service,
//! user requests, successes, the time of the last success). Sums of integers
//! do not depend on the order they are added in, and the per-trial figures
//! carry their trial index, so the result is the same on any number of threads.

use crate::policy::{Outcome, Stop};
use crate::run::Latency;

use super::queue::Nanos;

/// The stop reasons, as reports name them, in a fixed order.
pub(crate) const STOPS: [&str; 6] = [
    "succeeded",
    "not_retryable",
    "attempts_exhausted",
    "budget_exhausted",
    "deadline_exceeded",
    "horizon",
];

/// Index into [`STOPS`]; a deadline that is the run's horizon is `horizon`.
pub(crate) fn stop_index(why: Stop, by_horizon: bool) -> usize {
    match why {
        Stop::Succeeded => 0,
        Stop::NotRetryable => 1,
        Stop::AttemptsExhausted => 2,
        Stop::BudgetExhausted => 3,
        Stop::DeadlineExceeded if by_horizon => 5,
        Stop::DeadlineExceeded => 4,
    }
}

/// Adds `n` to the count of `key` in a small association list.
fn bump<K: PartialEq + Copy>(list: &mut Vec<(K, u64)>, key: K, n: u64) {
    match list.iter_mut().find(|(k, _)| *k == key) {
        Some((_, v)) => *v += n,
        None => list.push((key, n)),
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct ServiceCount {
    pub received: u64,
    pub duplicates: u64,
    /// Connections refused while down (counted as arrivals).
    pub refused: u64,
    pub reset: u64,
    pub hang: u64,
    pub statuses: Vec<(u16, u64)>,
}

impl ServiceCount {
    pub fn answered(&mut self, status: u16) {
        bump(&mut self.statuses, status, 1);
    }

    fn add(&mut self, o: &ServiceCount) {
        self.received += o.received;
        self.duplicates += o.duplicates;
        self.refused += o.refused;
        self.reset += o.reset;
        self.hang += o.hang;
        for &(k, v) in &o.statuses {
            bump(&mut self.statuses, k, v);
        }
    }

    fn clear(&mut self) {
        let mut statuses = std::mem::take(&mut self.statuses);
        statuses.clear();
        *self = ServiceCount {
            statuses,
            ..ServiceCount::default()
        };
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct LayerCount {
    pub requests: u64,
    pub attempts: u64,
    pub retries: u64,
    pub budget_refusals: u64,
    pub retry_after_waits: u64,
    pub stops: [u64; STOPS.len()],
    pub by_reason: Vec<(Outcome, u64)>,
}

impl LayerCount {
    pub fn retried(&mut self, cause: Outcome, honored_retry_after: bool) {
        self.retries += 1;
        self.retry_after_waits += u64::from(honored_retry_after);
        bump(&mut self.by_reason, cause, 1);
    }

    pub fn stopped(&mut self, why: Stop, by_horizon: bool) {
        self.stops[stop_index(why, by_horizon)] += 1;
        self.budget_refusals += u64::from(why == Stop::BudgetExhausted);
    }

    fn add(&mut self, o: &LayerCount) {
        self.requests += o.requests;
        self.attempts += o.attempts;
        self.retries += o.retries;
        self.budget_refusals += o.budget_refusals;
        self.retry_after_waits += o.retry_after_waits;
        for (a, b) in self.stops.iter_mut().zip(&o.stops) {
            *a += b;
        }
        for &(k, v) in &o.by_reason {
            bump(&mut self.by_reason, k, v);
        }
    }

    fn clear(&mut self) {
        let mut by_reason = std::mem::take(&mut self.by_reason);
        by_reason.clear();
        *self = LayerCount {
            by_reason,
            ..LayerCount::default()
        };
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct EndToEndCount {
    /// User requests sent, unfinished ones included.
    pub requests: u64,
    pub succeeded: u64,
    /// Still waiting for an answer when nothing was left to happen (a hang
    /// without a timeout).
    pub unfinished: u64,
    pub outcomes: Vec<(Outcome, u64)>,
    pub last_success: Option<Nanos>,
}

impl EndToEndCount {
    pub fn finished(&mut self, outcome: Outcome, at: Nanos) {
        self.requests += 1;
        bump(&mut self.outcomes, outcome, 1);
        if outcome.is_success() {
            self.succeeded += 1;
            self.last_success = Some(self.last_success.map_or(at, |l| l.max(at)));
        }
    }

    fn add(&mut self, o: &EndToEndCount) {
        self.requests += o.requests;
        self.succeeded += o.succeeded;
        self.unfinished += o.unfinished;
        for &(k, v) in &o.outcomes {
            bump(&mut self.outcomes, k, v);
        }
    }
}

/// Everything one trial counts.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    pub services: Vec<ServiceCount>,
    /// Indexed by slot.
    pub layers: Vec<LayerCount>,
    pub end_to_end: EndToEndCount,
    /// Arrivals at the fault target(s) per 100 ms.
    pub timeline: Vec<u64>,
    /// Time of the last event.
    pub end: Nanos,
}

impl Counts {
    pub fn new(services: usize, slots: usize) -> Self {
        Counts {
            services: vec![ServiceCount::default(); services],
            layers: vec![LayerCount::default(); slots],
            ..Counts::default()
        }
    }

    pub fn clear(&mut self) {
        self.services.iter_mut().for_each(ServiceCount::clear);
        self.layers.iter_mut().for_each(LayerCount::clear);
        let mut outcomes = std::mem::take(&mut self.end_to_end.outcomes);
        outcomes.clear();
        self.end_to_end = EndToEndCount {
            outcomes,
            ..EndToEndCount::default()
        };
        self.timeline.clear();
        self.end = 0;
    }

    /// Adds every count of `o` (sums over trials).
    pub fn add(&mut self, o: &Counts) {
        for (a, b) in self.services.iter_mut().zip(&o.services) {
            a.add(b);
        }
        for (a, b) in self.layers.iter_mut().zip(&o.layers) {
            a.add(b);
        }
        self.end_to_end.add(&o.end_to_end);
        if self.timeline.len() < o.timeline.len() {
            self.timeline.resize(o.timeline.len(), 0);
        }
        for (a, b) in self.timeline.iter_mut().zip(&o.timeline) {
            *a += b;
        }
    }
}

/// Latency histograms, kept per thread over all its trials (merging integer
/// histograms is exact and order-free).
#[derive(Debug, Clone, Default)]
pub(crate) struct Histograms {
    /// Per service, created on the first answer so a large topology only pays
    /// for the services that answer.
    pub services: Vec<Option<Latency>>,
    pub end_to_end: Latency,
}

impl Histograms {
    pub fn new(services: usize) -> Self {
        Histograms {
            services: vec![None; services],
            end_to_end: Latency::compact(),
        }
    }

    pub fn service(&mut self, s: usize) -> &mut Latency {
        self.services[s].get_or_insert_with(Latency::compact)
    }

    pub fn merge(&mut self, o: &Histograms) {
        for (a, b) in self.services.iter_mut().zip(&o.services) {
            if let Some(b) = b {
                a.get_or_insert_with(Latency::compact).merge(b);
            }
        }
        self.end_to_end.merge(&o.end_to_end);
    }
}

/// The figures of one trial that are reported as distributions over trials.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TrialFigures {
    pub trial: u32,
    pub requests: u64,
    pub succeeded: u64,
    pub unfinished: u64,
    pub last_success: Option<Nanos>,
    pub end: Nanos,
    /// Attempts that arrived at the fault target(s).
    pub at_target: u64,
    /// Attempts that arrived anywhere.
    pub total: u64,
}

/// What one thread accumulated.
#[derive(Debug, Clone, Default)]
pub(crate) struct Accumulated {
    pub sums: Counts,
    pub histograms: Histograms,
    pub trials: Vec<TrialFigures>,
    /// `received` per service, `services` values per entry of `trials`.
    pub received: Vec<u64>,
}

impl Accumulated {
    pub fn new(services: usize, slots: usize) -> Self {
        Accumulated {
            sums: Counts::new(services, slots),
            histograms: Histograms::new(services),
            trials: Vec::new(),
            received: Vec::new(),
        }
    }

    /// Adds trial `trial`'s counts.
    pub fn add(&mut self, trial: u32, c: &Counts, targets: &[bool]) {
        self.sums.add(c);
        let e = &c.end_to_end;
        let mut at_target = 0;
        let mut total = 0;
        for (s, target) in c.services.iter().zip(targets) {
            self.received.push(s.received);
            total += s.received;
            if *target {
                at_target += s.received;
            }
        }
        self.trials.push(TrialFigures {
            trial,
            requests: e.requests,
            succeeded: e.succeeded,
            unfinished: e.unfinished,
            last_success: e.last_success,
            end: c.end,
            at_target,
            total,
        });
    }
}
