//! `--sweep VAR=LO..HI` with `--steps N`: what varies, over which grid, and
//! the scenario and load of one point.

use std::fmt;
use std::time::Duration;

use crate::faults::{Inject, Scenario};
use crate::run::{Arrival, LoadSettings};

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variable {
    /// The open-loop `--rate`, user requests a second.
    Rate,
    /// The surge's rate (its size), user requests a second.
    Surge,
    /// The surge's length, seconds.
    For,
}

impl Variable {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Variable::Rate => "rate",
            Variable::Surge => "surge",
            Variable::For => "for",
        }
    }

    /// The unit of a value, as printed: `/s` or ` s`.
    pub(crate) fn unit(self) -> &'static str {
        match self {
            Variable::For => " s",
            _ => "/s",
        }
    }

    /// A midpoint on this variable's grid: whole requests a second, tenths
    /// of a second.
    pub(crate) fn round(self, v: f64) -> f64 {
        match self {
            Variable::For => (v * 10.0).round() / 10.0,
            _ => v.round(),
        }
    }
}

/// A sweep as asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    pub(crate) variable: Variable,
    pub lo: f64,
    pub hi: f64,
    /// Grid points, LO and HI included.
    pub steps: u32,
}

/// Why a `--sweep` cannot be read (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --sweep `{text}`: {reason}")]
pub struct SyntaxError {
    pub text: String,
    pub reason: String,
}

impl Spec {
    /// Reads `rate=LO..HI` (rates as `--rate` takes them), `surge=LO..HI`
    /// or `for=LO..HI` (durations: `5s..20s`), with `steps` points.
    pub fn parse(text: &str, steps: u32) -> Result<Spec, SyntaxError> {
        let err = |reason: String| SyntaxError {
            text: text.to_owned(),
            reason,
        };
        let example = "write e.g. `rate=100..1000`, `surge=1000..4000` or `for=2s..20s`";
        let Some((var, range)) = text.split_once('=') else {
            return Err(err(format!("no `=`; {example}")));
        };
        let variable = match var.trim() {
            "rate" => Variable::Rate,
            "surge" => Variable::Surge,
            "for" => Variable::For,
            other => {
                return Err(err(format!(
                    "unknown variable `{other}`; sweep `rate`, `surge` or `for`"
                )));
            }
        };
        let Some((lo, hi)) = range.split_once("..") else {
            return Err(err(format!("no `LO..HI` range; {example}")));
        };
        let value = |side: &str, which: &str| -> Result<f64, SyntaxError> {
            let side = side.trim();
            if side.is_empty() {
                return Err(err(format!("the range has no {which} end; {example}")));
            }
            let v = match variable {
                Variable::For => crate::input::duration::parse(side)
                    .map(|d| d.as_secs_f64())
                    .map_err(|e| err(format!("{which} end `{side}`: {e}")))?,
                _ => LoadSettings::parse_rate(side)
                    .map_err(|_| err(format!("{which} end `{side}` is not a rate above 0")))?,
            };
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(err(format!("{which} end `{side}` must be above 0")))
            }
        };
        let (lo, hi) = (value(lo, "low")?, value(hi, "high")?);
        if lo >= hi {
            return Err(err(format!(
                "LO must be below HI (got {lo} and {hi}); write the range upwards"
            )));
        }
        if steps < 2 {
            return Err(err(format!(
                "--steps {steps}: a sweep needs at least 2 points (LO and HI)"
            )));
        }
        Ok(Spec {
            variable,
            lo,
            hi,
            steps,
        })
    }

    /// The grid: `steps` values evenly from LO to HI.
    pub fn grid(&self) -> Vec<f64> {
        let n = self.steps.max(2);
        (0..n)
            .map(|i| {
                let v = self.lo + (self.hi - self.lo) * f64::from(i) / f64::from(n - 1);
                // Keep the grid readable; the ends stay exact.
                if i == 0 || i == n - 1 {
                    v
                } else {
                    let r = self.variable.round(v);
                    if r > self.lo && r < self.hi { r } else { v }
                }
            })
            .collect()
    }
}

/// A scenario and load the variable cannot be applied to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    #[error(
        "--sweep {0} varies the scenario's surge, but `{1}` has no surge phase; use --fault surge (or a scenario with `kind: surge`), or sweep `rate`"
    )]
    NoSurge(&'static str, String),
    #[error("--sweep rate needs an open-loop load; drop --clients (the rate is what is swept)")]
    ClosedLoop,
    #[error(
        "--sweep judges recovery against goodput before the fault, but `{0}` starts before a whole second has passed (or has no end); pick a scenario with a fault window starting at 1 s or later"
    )]
    NoBaseline(String),
    #[error(
        "--sweep judges recovery after the fault, but at {variable}={value} `{scenario}` ends at {end_s} s and each run ends at {horizon_s} s, leaving no whole second after it; use --duration {suggest_s}s or longer"
    )]
    NoAfter {
        variable: &'static str,
        value: String,
        scenario: String,
        end_s: String,
        horizon_s: String,
        suggest_s: u64,
    },
}

/// Checks that every point of `spec` leaves a whole second of each run
/// after the fault: without one there is nothing to judge recovery by, and
/// a verdict would be a guess.
pub(crate) fn fit_after(
    spec: &Spec,
    scenario: &Scenario,
    load: &LoadSettings,
) -> Result<(), Unfit> {
    // The fault ends latest at the top of the grid (only `for` moves it).
    let (s, l) = point(spec.variable, spec.hi, scenario, load);
    let Some((_, end)) = s.window() else {
        return Ok(());
    };
    let horizon = l.in_virtual_time().horizon();
    let first_after = Duration::from_secs(end.as_nanos().div_ceil(1_000_000_000) as u64);
    if first_after + Duration::from_secs(1) <= horizon {
        return Ok(());
    }
    Err(Unfit::NoAfter {
        variable: spec.variable.name(),
        value: format!("{}", spec.hi),
        scenario: s.name.clone(),
        end_s: format!("{}", end.as_secs_f64()),
        horizon_s: format!("{}", horizon.as_secs_f64()),
        suggest_s: (first_after.as_secs() * 2).max(first_after.as_secs() + 10),
    })
}

/// Checks that `scenario` and `load` can be swept over `variable`.
pub(super) fn fit(
    variable: Variable,
    scenario: &Scenario,
    load: &LoadSettings,
) -> Result<(), Unfit> {
    if !matches!(load.arrival, Arrival::Rate(_)) {
        return Err(Unfit::ClosedLoop);
    }
    if variable != Variable::Rate
        && !scenario
            .phases
            .iter()
            .any(|p| matches!(p.inject, Inject::Surge(_)))
    {
        return Err(Unfit::NoSurge(variable.name(), scenario.name.clone()));
    }
    match scenario.window() {
        Some((start, _)) if start >= Duration::from_secs(1) => Ok(()),
        _ => Err(Unfit::NoBaseline(scenario.name.clone())),
    }
}

/// The scenario and load of the point at `value`.
pub(crate) fn point(
    variable: Variable,
    value: f64,
    scenario: &Scenario,
    load: &LoadSettings,
) -> (Scenario, LoadSettings) {
    let mut s = scenario.clone();
    let mut l = load.clone();
    match variable {
        Variable::Rate => l.arrival = Arrival::Rate(value),
        Variable::Surge => {
            for p in &mut s.phases {
                if let Inject::Surge(surge) = &mut p.inject {
                    surge.rate = value;
                }
            }
        }
        Variable::For => {
            for p in &mut s.phases {
                if matches!(p.inject, Inject::Surge(_)) {
                    p.length = Some(Duration::from_secs_f64(value));
                }
            }
        }
    }
    (s, l)
}

/// The surge of `scenario` (its first surge phase): rate and length in seconds.
pub(crate) fn surge_of(scenario: &Scenario) -> Option<(f64, Option<f64>)> {
    scenario.phases.iter().find_map(|p| match &p.inject {
        Inject::Surge(s) => Some((s.rate, p.length.map(|l| l.as_secs_f64()))),
        _ => None,
    })
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={}..{} --steps {}",
            self.variable.name(),
            self.lo,
            self.hi,
            self.steps
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_three_variables_and_refuses_the_malformed() {
        let s = Spec::parse("rate=100..500", 5).unwrap();
        assert_eq!((s.variable, s.lo, s.hi), (Variable::Rate, 100.0, 500.0));
        assert_eq!(s.grid(), [100.0, 200.0, 300.0, 400.0, 500.0]);
        let s = Spec::parse("for=2s..20s", 3).unwrap();
        assert_eq!(s.grid(), [2.0, 11.0, 20.0]);
        assert_eq!(Spec::parse("surge=1000/s..3000", 2).unwrap().hi, 3000.0);
        for bad in [
            "rate=10..",
            "rate=5..1",
            "rate",
            "speed=1..2",
            "rate=1-2",
            "rate=0..5",
        ] {
            assert!(Spec::parse(bad, 3).is_err(), "{bad}");
        }
        assert!(Spec::parse("rate=1..2", 1).is_err());
    }
}
