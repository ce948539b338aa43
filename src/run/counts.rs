//! What a run counts, as plain integers: per service, per retry-layer slot
//! (`slots.rs`), end to end, and the timeline. The simulator counts into
//! these directly, trial by trial; the chaos harness keeps atomics on its hot
//! path and turns them into these at the end. `build.rs` turns them into a
//! `RunReport`, the same way for both.
//!
//! Plain vectors and small association lists: no maps, no strings on the hot
//! path. Sums of integers do not depend on the order they are added in.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::goodput::GoodputCounts;
use super::timeline::TimelineCounts;
use crate::policy::{Outcome, Stop, Transition};

/// Adds `n` to the count of `key` in a small association list.
pub(crate) fn bump<K: PartialEq + Copy>(list: &mut Vec<(K, u64)>, key: K, n: u64) {
    match list.iter_mut().find(|(k, _)| *k == key) {
        Some((_, v)) => *v += n,
        None => list.push((key, n)),
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServiceCount {
    pub received: u64,
    pub duplicates: u64,
    /// Connections refused while down (counted as arrivals).
    pub refused: u64,
    pub reset: u64,
    pub hang: u64,
    pub statuses: Vec<(u16, u64)>,
    /// Requests its full queue turned away.
    pub rejected: u64,
    /// Requests served after their caller had given up (work nobody waited
    /// for).
    pub wasted: u64,
    /// Queued requests dropped unserved because their deadline had passed.
    pub expired: u64,
    /// The deepest its queue got (a maximum, not a sum, within one run).
    pub(crate) max_queue: u64,
    /// A service with workers: requests that got one, the nanoseconds they
    /// waited for it in all, and the nanoseconds its workers were busy.
    pub served: u64,
    pub waited: u64,
    pub busy: u64,
}

impl ServiceCount {
    pub fn answered(&mut self, status: u16) {
        bump(&mut self.statuses, status, 1);
    }

    /// A request got a worker after waiting `waited`, and holds it for
    /// `work`.
    pub fn serve(&mut self, waited: Duration, work: Duration) {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.served += 1;
        self.waited = self.waited.saturating_add(nanos(waited));
        self.busy = self.busy.saturating_add(nanos(work));
    }

    pub fn add(&mut self, o: &ServiceCount) {
        self.received += o.received;
        self.duplicates += o.duplicates;
        self.refused += o.refused;
        self.reset += o.reset;
        self.hang += o.hang;
        for &(k, v) in &o.statuses {
            bump(&mut self.statuses, k, v);
        }
        self.rejected += o.rejected;
        self.wasted += o.wasted;
        self.expired += o.expired;
        // Over trials, the sum of each trial's deepest: reported as the mean.
        self.max_queue += o.max_queue;
        self.served += o.served;
        self.waited = self.waited.saturating_add(o.waited);
        self.busy = self.busy.saturating_add(o.busy);
    }

    pub fn clear(&mut self) {
        let mut statuses = std::mem::take(&mut self.statuses);
        statuses.clear();
        *self = ServiceCount {
            statuses,
            ..ServiceCount::default()
        };
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LayerCount {
    pub requests: u64,
    pub attempts: u64,
    pub retries: u64,
    pub budget_refusals: u64,
    pub retry_after_waits: u64,
    /// Indexed by [`Stop::index`].
    pub stops: [u64; Stop::ALL.len()],
    #[serde(with = "super::wire::outcomes")]
    pub(crate) by_reason: Vec<(Outcome, u64)>,
    /// Requests or attempts the layer's breaker rejected.
    pub short_circuited: u64,
    /// Breaker transitions, indexed by [`Transition::index`].
    pub transitions: [u64; Transition::ALL.len()],
    /// The first [`TRANSITION_LOG`] transitions of one run, with their
    /// times: kept per trial, never summed.
    #[serde(with = "super::wire::transitions")]
    pub(crate) transition_log: Vec<(Duration, Transition)>,
    /// Hedged copies sent after the first.
    pub hedges: u64,
    /// Hedged copies cancelled because another answered first.
    pub cancelled: u64,
}

/// How many breaker transitions a layer's log keeps per run.
pub(crate) const TRANSITION_LOG: usize = 64;

impl LayerCount {
    /// The layer's breaker changed state at `at`.
    pub fn transition(&mut self, at: Duration, t: Transition) {
        self.transitions[t.index()] += 1;
        if self.transition_log.len() < TRANSITION_LOG {
            self.transition_log.push((at, t));
        }
    }

    pub fn retried(&mut self, cause: Outcome, honored_retry_after: bool) {
        self.retries += 1;
        self.retry_after_waits += u64::from(honored_retry_after);
        bump(&mut self.by_reason, cause, 1);
    }

    pub fn stopped(&mut self, why: Stop) {
        self.stops[why.index()] += 1;
        self.budget_refusals += u64::from(why == Stop::BudgetExhausted);
    }

    pub fn add(&mut self, o: &LayerCount) {
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
        self.short_circuited += o.short_circuited;
        for (a, b) in self.transitions.iter_mut().zip(&o.transitions) {
            *a += b;
        }
        self.hedges += o.hedges;
        self.cancelled += o.cancelled;
    }

    pub fn clear(&mut self) {
        let mut by_reason = std::mem::take(&mut self.by_reason);
        by_reason.clear();
        let mut transition_log = std::mem::take(&mut self.transition_log);
        transition_log.clear();
        *self = LayerCount {
            by_reason,
            transition_log,
            ..LayerCount::default()
        };
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct EndToEndCount {
    /// User requests sent, unfinished ones included.
    pub requests: u64,
    pub succeeded: u64,
    /// Still waiting for an answer when nothing was left to happen (a hang
    /// without a timeout).
    pub unfinished: u64,
    #[serde(with = "super::wire::outcomes")]
    pub outcomes: Vec<(Outcome, u64)>,
    #[serde(with = "super::wire::option_ns")]
    pub(crate) last_success: Option<Duration>,
}

impl EndToEndCount {
    pub(crate) fn finished(&mut self, outcome: Outcome, at: Duration) {
        self.requests += 1;
        bump(&mut self.outcomes, outcome, 1);
        if outcome.is_success() {
            self.succeeded += 1;
            self.last_success = Some(self.last_success.map_or(at, |l| l.max(at)));
        }
    }

    pub(crate) fn add(&mut self, o: &EndToEndCount) {
        self.requests += o.requests;
        self.succeeded += o.succeeded;
        self.unfinished += o.unfinished;
        for &(k, v) in &o.outcomes {
            bump(&mut self.outcomes, k, v);
        }
    }
}

/// Everything one trial counts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Counts {
    pub services: Vec<ServiceCount>,
    /// Indexed by slot.
    pub layers: Vec<LayerCount>,
    pub(crate) end_to_end: EndToEndCount,
    /// Arrivals at the fault target(s) per 100 ms.
    #[serde(with = "super::wire::timeline")]
    pub(crate) timeline: TimelineCounts,
    /// Offered load, goodput and what stood in its way, over time.
    pub(crate) goodput: GoodputCounts,
    /// Time of the last event.
    #[serde(with = "super::wire::duration_ns")]
    pub end: Duration,
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
        self.goodput.clear();
        self.end = Duration::ZERO;
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
        self.timeline.add(&o.timeline);
        self.goodput.add(&o.goodput);
    }
}
