//! What every thread of a simulation watches while it runs: the work budget
//! (attempts over all trials, bytes of live state), Ctrl-C, and the trials
//! done so far for the progress bar. The engine checks it every few thousand
//! events, so a run past its budget or interrupted stops within milliseconds
//! whatever a trial is doing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::estimate::WorkBudget;

/// Why a trial stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// The run used up its budget of attempts.
    Attempts,
    /// The live state outgrew the memory budget.
    Memory,
    /// Ctrl-C.
    Interrupted,
}

pub(crate) struct Guard {
    pub budget: WorkBudget,
    /// Attempts of the trials finished so far.
    pub used: AtomicU64,
    pub(crate) trials_done: AtomicU64,
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl Guard {
    pub(super) fn new(budget: WorkBudget, interrupt: Option<Arc<AtomicBool>>) -> Self {
        Guard {
            budget,
            used: AtomicU64::new(0),
            trials_done: AtomicU64::new(0),
            interrupt,
        }
    }

    pub(super) fn interrupted(&self) -> bool {
        self.interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Whether a trial that has made `attempts` so far and holds `live_bytes`
    /// must stop, and why.
    pub(super) fn check(&self, attempts: u64, live_bytes: u64) -> Option<Cut> {
        if self.interrupted() {
            return Some(Cut::Interrupted);
        }
        if self.used.load(Ordering::Relaxed).saturating_add(attempts) > self.budget.attempts {
            return Some(Cut::Attempts);
        }
        (live_bytes > self.budget.memory).then_some(Cut::Memory)
    }

    /// A trial finished after `attempts`.
    pub(super) fn finished(&self, attempts: u64) {
        self.used.fetch_add(attempts, Ordering::Relaxed);
        self.trials_done.fetch_add(1, Ordering::Relaxed);
    }
}
