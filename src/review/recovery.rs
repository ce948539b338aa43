//! The review page's recovery map: under a surge scenario on an open loop,
//! which loads and which surge sizes the topology recovers from, and the
//! headroom in one sentence. Each row is one `simulate --sweep rate=…` at
//! one surge size (the scenario's own in the middle), so every cell and
//! every boundary is exactly what that command prints; the rows share one
//! grid of loads around the page's `--rate`.
//!
//! Judged by the `last-half` rule, the published metastable experiment's:
//! the page says so. Drawn only where it means something (a `kind: surge`
//! phase, an open loop) and only within its own budget, so the default
//! page, and `check`, pay nothing for it.

use crate::faults::Scenario;
use crate::run::goodput::RecoveryRule;
use crate::run::{Arrival, LoadSettings};
use crate::sim::sweep::{self, Spec, SweepError, Variable};
use crate::sim::{SimOptions, WorkBudget};
use crate::topology::Topology;

/// The map's loads: this many, evenly from a quarter of the page's rate to
/// twice it (the sweep's own grid, so each cell is a point of its row).
pub(crate) const RATE_STEPS: u32 = 6;

/// The surge sizes of the map, as multiples of the scenario's own.
pub(crate) const SURGE_FACTORS: [f64; 3] = [0.5, 1.0, 1.5];

/// Trials a cell at most: 4 is the fewest whose Wilson interval can exclude
/// one half, so the boundary's interval can be resolved.
pub(crate) const MAX_TRIALS: u32 = 4;

/// Attempts the map may make per topology, all rows and bisections (about
/// ten seconds of a release build on two cores at the shipped surge).
pub const BUDGET: u64 = 200_000_000;

/// One surge size: its cells on the shared grid and its boundary.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The surge's rate, user requests a second.
    pub surge: f64,
    /// One per load of [`RecoveryMap::rates`]: trials recovered, of `trials`.
    pub recovered: Vec<u32>,
    /// The highest load at which at least half the trials recover; `None`
    /// when the grid does not bracket it (`bracket` says which way).
    pub boundary: Option<f64>,
    pub bracket: &'static str,
    /// The sweep's sentence for this surge.
    pub headroom: String,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecoveryMap {
    /// The grid's loads, user requests a second, ascending.
    pub rates: Vec<f64>,
    /// Ascending by surge size; the scenario's own is [`RecoveryMap::own`].
    pub rows: Vec<Row>,
    pub own: usize,
    pub trials: u32,
    /// The surge's length, seconds.
    pub(crate) surge_for_s: Option<f64>,
    pub rule: &'static str,
    pub(crate) duration_s: f64,
}

impl RecoveryMap {
    /// The headroom at the scenario's own surge.
    pub(crate) fn headroom(&self) -> &str {
        &self.rows[self.own].headroom
    }

    /// When every load of the grid recovers from the scenario's own surge:
    /// the grid's ends and a page load five times the highest, whose grid
    /// (a quarter to twice the load) reaches past it. The grid follows the
    /// page's `--rate`, so a boundary above it only says the load asked for
    /// is safe, not where safety ends.
    pub(crate) fn grid_below_boundary(&self) -> Option<(f64, f64, f64)> {
        let (&lo, &hi) = (self.rates.first()?, self.rates.last()?);
        (self.rows.get(self.own)?.bracket == "above-hi").then_some((lo, hi, hi * 5.0))
    }
}

/// The sentence a page gives for [`RecoveryMap::grid_below_boundary`].
pub(crate) fn higher_rate_hint((lo, hi, rate): (f64, f64, f64)) -> String {
    let n = crate::sim::sweep::figure;
    format!(
        "The grid runs from a quarter to twice the page's load ({}/s to {}/s) and recovers at every point, so the boundary lies higher: make the page with a higher `--rate` (e.g. `--rate {}`) to find it.",
        n(lo),
        n(hi),
        n(rate)
    )
}

/// Whether a page with this scenario and load gets a map.
pub fn applies(scenario: &Scenario, load: &LoadSettings) -> bool {
    matches!(load.arrival, Arrival::Rate(r) if r > 0.0) && sweep::surge_of(scenario).is_some()
}

/// The map of `t`, or why it is not drawn. `trials` is the page's, capped
/// at [`MAX_TRIALS`]; fewer are run when that many would not fit.
pub(crate) fn map(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    trials: u32,
    threads: Option<usize>,
) -> Result<RecoveryMap, String> {
    let (Arrival::Rate(rate), Some((own_surge, surge_for_s))) =
        (load.arrival, sweep::surge_of(scenario))
    else {
        return Err("not drawn: it needs a surge scenario on an open loop (--rate)".into());
    };
    let spec = Spec {
        variable: Variable::Rate,
        lo: (rate / 4.0).round().max(1.0),
        hi: (rate * 2.0).round().max(2.0),
        steps: RATE_STEPS,
    };
    let rates = spec.grid();
    let options = SimOptions {
        threads,
        budget: WorkBudget {
            attempts: BUDGET / SURGE_FACTORS.len() as u64,
            ..WorkBudget::DEFAULT
        },
        rule: RecoveryRule::LastHalf,
        ..SimOptions::default()
    };
    let mut trials = trials.clamp(1, MAX_TRIALS);
    let mut rows = Vec::with_capacity(SURGE_FACTORS.len());
    // The largest surge costs most: fitting its trials fits every row's.
    for factor in SURGE_FACTORS.iter().rev() {
        let surge = (factor * own_surge).round();
        let (at, _) = sweep::scenario_at(Variable::Surge, surge, scenario, load);
        let report = loop {
            match sweep::run(t, &at, load, &spec, trials, &options) {
                // Fewer trials a cell, all rows alike, before giving up.
                Err(SweepError::OverBudget { .. }) if trials > 1 && rows.is_empty() => {
                    trials /= 2;
                }
                Err(e) => return Err(format!("not drawn: {e}")),
                Ok(r) => break r,
            }
        };
        let recovered: Vec<u32> = report
            .sweep
            .points
            .iter()
            .filter(|p| !p.bisection)
            .map(|p| p.recovered_trials)
            .collect();
        if report.interrupted || recovered.len() != rates.len() {
            return Err("not drawn: the sweep was cut short".into());
        }
        rows.push(Row {
            surge,
            recovered,
            boundary: report.sweep.boundary.value,
            bracket: report.sweep.boundary.bracket,
            headroom: report.headroom,
        });
    }
    rows.reverse();
    Ok(RecoveryMap {
        rates,
        rows,
        own: SURGE_FACTORS.iter().position(|&f| f == 1.0).unwrap_or(0),
        trials,
        surge_for_s,
        rule: RecoveryRule::LastHalf.name(),
        duration_s: load.in_virtual_time().horizon().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(bracket: &'static str) -> RecoveryMap {
        RecoveryMap {
            rates: vec![5.0, 12.0, 19.0, 26.0, 33.0, 40.0],
            rows: vec![Row {
                surge: 2500.0,
                recovered: vec![4; 6],
                boundary: None,
                bracket,
                headroom: String::new(),
            }],
            own: 0,
            trials: 4,
            surge_for_s: Some(10.0),
            rule: "last-half",
            duration_s: 40.0,
        }
    }

    #[test]
    fn a_grid_that_recovers_everywhere_says_which_rate_would_find_the_boundary() {
        let h = map("above-hi").grid_below_boundary();
        assert_eq!(h, Some((5.0, 40.0, 200.0)));
        assert_eq!(
            higher_rate_hint(h.unwrap()),
            "The grid runs from a quarter to twice the page's load (5/s to 40/s) and recovers at every point, so the boundary lies higher: make the page with a higher `--rate` (e.g. `--rate 200`) to find it."
        );
        assert_eq!(map("below-lo").grid_below_boundary(), None);
        assert_eq!(map("bracketed").grid_below_boundary(), None);
    }
}
