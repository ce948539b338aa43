//! What a thread accumulates over its trials. A trial counts into the run's
//! plain counters (`crate::run::counts`); a thread adds them up as it goes and
//! keeps, per trial, only the figures that need a distribution over trials
//! (received per service, user requests, successes, the time of the last
//! success). Sums of integers do not depend on the order they are added in,
//! and the per-trial figures carry their trial index, so the result is the
//! same on any number of threads.

use crate::run::Latency;
use crate::run::counts::Counts;

use std::time::Duration;

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
    pub(super) fn new(services: usize) -> Self {
        Histograms {
            services: vec![None; services],
            end_to_end: Latency::compact(),
        }
    }

    pub(super) fn service(&mut self, s: usize) -> &mut Latency {
        self.services[s].get_or_insert_with(Latency::compact)
    }

    pub(super) fn merge(&mut self, o: &Histograms) {
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
    pub(crate) last_success: Option<Duration>,
    pub end: Duration,
    /// Attempts that arrived at the fault target(s).
    pub(crate) at_target: u64,
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
    pub(super) fn new(services: usize, slots: usize) -> Self {
        Accumulated {
            sums: Counts::new(services, slots),
            histograms: Histograms::new(services),
            trials: Vec::new(),
            received: Vec::new(),
        }
    }

    /// Adds trial `trial`'s counts.
    pub(super) fn add(&mut self, trial: u32, c: &Counts, targets: &[bool]) {
        self.sums.add(c);
        if trial == 0 {
            // The breaker transitions shown with their times are the first
            // trial's (a sum of logs over trials would mean nothing).
            for (sum, one) in self.sums.layers.iter_mut().zip(&c.layers) {
                sum.transition_log.clone_from(&one.transition_log);
            }
        }
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
