//! Fixes judged by what they do. A fix that the rules call right can still
//! make a storm worse: retrying only at the top sends more attempts to the
//! layer below it, and a breaker that stays open longer than the fault
//! fails requests that would have succeeded. So before fixes are made
//! automatically, the simulator runs the topology as written and as fixed
//! under the same seeded scenarios, and a set of fixes that lowers success,
//! lengthens recovery, or sends more attempts to any service is worse.
//!
//! The scenarios are what a user runs to check a fix (`simulate --fault
//! 503-burst --seed 42`, and `--fault total-outage`), at the default load
//! and length, and, when either topology has a circuit breaker, each again
//! long enough to cover every breaker's longest open window twice after
//! the fault.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::faults::{self, Scenario};
use crate::run::LoadSettings;
use crate::run::report::RunReport;
use crate::sim::{self, SimOptions, WorkBudget};
use crate::topology::Topology;

/// The scenarios every judgement runs: the default burst and a total outage.
pub(crate) const SCENARIOS: [&str; 2] = ["503-burst", "total-outage"];

/// Attempts one run may be estimated to need at worst (every call failing
/// at every layer); what it makes is usually a small part of that.
pub(crate) const BUDGET_ATTEMPTS: u64 = 20_000_000;

/// One seeded run's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub scenario: String,
    pub duration: Duration,
    pub requests: u64,
    pub succeeded: u64,
    /// Attempts each service received.
    pub received: BTreeMap<String, u64>,
    /// How long goodput stayed below its level before the fault, after it;
    /// `None` without a fault window to judge recovery by.
    pub below_for_ms: Option<f64>,
}

impl Measured {
    fn label(&self) -> String {
        format!(
            "{} over {} (seed {}, {} trials)",
            self.scenario,
            crate::input::duration::format(self.duration),
            LoadSettings::DEFAULT_SEED,
            TRIALS
        )
    }
}

/// Trials per run: a tenth of what `simulate` runs by default, so that
/// judging each rule stays a matter of a second or two.
const TRIALS: u32 = 10;

/// The runs a judgement of `before` against `after` makes: (scenario, length).
pub fn runs(before: &Topology, after: &Topology) -> Result<Vec<(Scenario, Duration)>, String> {
    let default = LoadSettings::DEFAULT_DURATION;
    let open = longest_open(before).max(longest_open(after));
    let mut runs = Vec::new();
    for name in SCENARIOS {
        let s = faults::load(name).map_err(|e| e.to_string())?;
        runs.push((s.clone(), default));
        if !open.is_zero() {
            let fault_end = s.window().map_or(Duration::ZERO, |(_, end)| end);
            let long = fault_end + open * 2 + Duration::from_secs(2);
            let long = Duration::from_secs(long.as_secs_f64().ceil() as u64);
            if long > default {
                runs.push((s, long));
            }
        }
    }
    Ok(runs)
}

/// The longest a breaker of `t` stays open, jitter included.
fn longest_open(t: &Topology) -> Duration {
    t.layers()
        .filter_map(|(_, l)| l.breaker.as_ref())
        .map(|b| b.value.open_for.mul_f64(1.0 + b.value.open_jitter))
        .max()
        .unwrap_or(Duration::ZERO)
}

/// Runs `t` under every run of `runs`.
pub fn measure(t: &Topology, runs: &[(Scenario, Duration)]) -> Result<Vec<Measured>, String> {
    let budget = BUDGET_ATTEMPTS;
    let options = SimOptions {
        trials: TRIALS,
        budget: WorkBudget {
            attempts: budget,
            ..WorkBudget::DEFAULT
        },
        ..SimOptions::default()
    };
    runs.iter()
        .map(|(scenario, duration)| {
            let load = LoadSettings {
                duration: Some(*duration),
                ..LoadSettings::default()
            };
            let r = sim::run_over_time(t, scenario, &load, &options).map_err(|e| e.to_string())?;
            Ok(measured(&r, *duration))
        })
        .collect()
}

fn measured(r: &RunReport, duration: Duration) -> Measured {
    Measured {
        scenario: r.fault.clone(),
        duration,
        requests: r.end_to_end.requests,
        succeeded: r.end_to_end.succeeded,
        received: r
            .services
            .iter()
            .map(|s| (s.service.clone(), s.received))
            .collect(),
        below_for_ms: r
            .goodput
            .as_ref()
            .and_then(|g| g.verdict.as_ref())
            .map(|v| v.below_for_ms),
    }
}

/// How much a count may move between two seeded runs of different policies
/// and still be the same: 2 % of its scale, and one more. A policy change
/// shifts every later random draw, so the same storm is sampled anew; over
/// the judge's trials its medians move by a request or two in a hundred.
/// Beyond that a change is real (a breaker that stays open fails tens).
/// Whether `more` exceeds `less` by more than that, on a count of `scale`.
pub fn beyond_noise(more: u64, less: u64, scale: u64) -> bool {
    more > less && (more - less) as f64 > NOISE_SHARE * scale as f64 + 1.0
}

/// The share of a count [`beyond_noise`] allows to move.
pub(crate) const NOISE_SHARE: f64 = 0.02;

/// Recovery may take this much longer and be the same: one goodput bucket.
pub(crate) const RECOVERY_NOISE_MS: f64 = 100.0;

/// Services named in a reason at most; the others are counted.
const NAMED: usize = 3;

/// What makes `after` worse than `before`, run by run; empty when nothing.
pub fn worse(before: &[Measured], after: &[Measured]) -> Vec<String> {
    let mut reasons = Vec::new();
    for (b, a) in before.iter().zip(after) {
        let mut what = Vec::new();
        if beyond_noise(b.succeeded, a.succeeded, b.requests) {
            what.push(format!(
                "success {} → {} of {} user requests",
                b.succeeded, a.succeeded, a.requests
            ));
        }
        if let (Some(was), Some(now)) = (b.below_for_ms, a.below_for_ms)
            && now > was + RECOVERY_NOISE_MS
        {
            what.push(format!(
                "recovery {} → {}",
                crate::input::duration::format(Duration::from_secs_f64(was / 1000.0)),
                crate::input::duration::format(Duration::from_secs_f64(now / 1000.0))
            ));
        }
        // The services that receive more, most more first; a few named.
        let mut more: Vec<(&String, u64, u64)> = a
            .received
            .iter()
            .map(|(s, &n)| (s, b.received.get(s).copied().unwrap_or(0), n))
            .filter(|&(_, was, n)| beyond_noise(n, was, was))
            .collect();
        more.sort_by(|x, y| (y.2 - y.1).cmp(&(x.2 - x.1)).then(x.0.cmp(y.0)));
        for &(service, was, n) in more.iter().take(NAMED) {
            what.push(format!("{service} receives {was} → {n} attempts"));
        }
        if more.len() > NAMED {
            what.push(format!("{} more services receive more", more.len() - NAMED));
        }
        if !what.is_empty() {
            reasons.push(format!("under {}: {}", a.label(), what.join(", ")));
        }
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(succeeded: u64, received: &[(&str, u64)], below: Option<f64>) -> Measured {
        Measured {
            scenario: "503-burst".into(),
            duration: Duration::from_secs(5),
            requests: 100,
            succeeded,
            received: received
                .iter()
                .map(|(s, n)| ((*s).to_owned(), *n))
                .collect(),
            below_for_ms: below,
        }
    }

    #[test]
    fn lower_success_more_attempts_or_longer_recovery_is_worse() {
        let before = [m(97, &[("api", 105), ("db", 491)], Some(0.0))];
        assert!(worse(&before, &before).is_empty());
        let fewer = [m(97, &[("api", 100), ("db", 40)], Some(0.0))];
        assert!(worse(&before, &fewer).is_empty());
        // Within the noise of a resampled storm: 2 % and one more.
        let noise = [m(94, &[("api", 108), ("db", 501)], Some(100.0))];
        assert!(worse(&before, &noise).is_empty());
        let beyond = [m(93, &[("api", 109), ("db", 502)], Some(101.0))];
        assert_eq!(worse(&before, &beyond).len(), 1);
        let after = [m(18, &[("api", 206), ("db", 40)], Some(2000.0))];
        assert_eq!(
            worse(&before, &after),
            [
                "under 503-burst over 5s (seed 42, 10 trials): success 97 → 18 of 100 user requests, recovery 0s → 2s, api receives 105 → 206 attempts"
            ]
        );
    }
}
