//! A fault scenario: what goes wrong, where and when — its target and its
//! phases in time.

use std::time::Duration;

use super::Inject;
use super::plan::FaultPlan;
use super::target::{Target, TargetAt, UnknownTarget};
use crate::topology::Topology;

/// A stretch of the run during which the target misbehaves.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Start, from the beginning of the run.
    pub after: Duration,
    /// Length; `None` lasts to the end of the run.
    pub length: Option<Duration>,
    /// Share of the target's requests affected, 0..=1.
    pub ratio: f64,
    pub inject: Inject,
}

impl Phase {
    /// The end of the phase, if it has one.
    pub fn end(&self) -> Option<Duration> {
        self.length.map(|l| self.after.saturating_add(l))
    }

    /// Whether the phase is on at `now`: from `after` included to its end excluded.
    #[cfg(test)]
    pub(crate) fn active_at(&self, now: Duration) -> bool {
        now >= self.after && self.end().is_none_or(|end| now < end)
    }
}

/// A fault scenario as read from `faults/NAME.yaml` or a user's file.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub target: Target,
    /// Where the file wrote `target:`, for errors; `None` when it did not,
    /// or when `--target` replaced it.
    pub target_at: Option<TargetAt>,
    /// In file order; where phases overlap, the first active one wins.
    pub phases: Vec<Phase>,
}

impl Scenario {
    /// From the start of the first phase to the end of the last; `None`
    /// without phases or when one never ends.
    pub fn window(&self) -> Option<(Duration, Duration)> {
        let start = self.phases.iter().map(|p| p.after).min()?;
        let end = self
            .phases
            .iter()
            .map(|p| p.end())
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .max()?;
        Some((start, end))
    }

    /// No fault at all: a baseline run.
    pub fn none() -> Self {
        Scenario {
            name: "none".into(),
            description: "No fault: a baseline run.".into(),
            target: Target::All,
            target_at: None,
            phases: Vec::new(),
        }
    }

    /// The scenario against `t`: targets resolved, ready to ask per request.
    /// A scenario without phases (a baseline) strikes nobody.
    pub fn plan(&self, t: &Topology) -> Result<FaultPlan, UnknownTarget> {
        let mut targets = self.target.resolve(t).map_err(|mut e| {
            e.at = self.target_at.clone();
            e
        })?;
        if self.phases.is_empty() {
            targets.fill(false);
        }
        Ok(FaultPlan::new(targets, self.phases.clone()))
    }
}
