//! `simulate --sweep`: the tipping point. For each value on a grid (the
//! open-loop rate, the surge's size or its length), seeded trials of the
//! scenario, and the fraction that recovered with its 95 % Wilson interval;
//! then the boundary, the highest value at which at least half the trials
//! recover, refined by bisection once the grid brackets it.
//!
//! Each trial of a point is one plain simulation of one trial: trial i of a
//! point uses seed + i, whatever the point (common random numbers, so the
//! points differ by the load alone), and its verdict is exactly the one
//! `simulate --trials 1 --seed S+i` at that value prints. The whole sweep
//! (points × trials × duration) is estimated and refused up front past the
//! budget, like every simulation.

mod boundary;
mod gate;
mod spec;

pub(crate) use boundary::Boundary;
pub use gate::BoundaryGate;
pub use spec::Spec;
pub(crate) use spec::{Unfit, Variable, point as scenario_at, surge_of};

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use super::{SimError, SimOptions};
use crate::faults::Scenario;
use crate::run::goodput::Verdict;
use crate::run::{ExpectOutcome, LoadSettings};
use crate::topology::Topology;

/// Bisection steps at most, once the grid brackets the boundary.
pub(crate) const BISECT_STEPS: u32 = 4;

/// One value of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Point {
    /// The swept value (`/s` for `rate` and `surge`, seconds for `for`).
    pub value: f64,
    /// The open-loop rate of the point's runs, user requests a second.
    pub rate: f64,
    /// The surge's rate and length (seconds) in the point's scenario, when
    /// it has a surge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) surge_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) surge_for_s: Option<f64>,
    pub trials: u32,
    pub recovered_trials: u32,
    /// 95 % Wilson interval of the recovered fraction.
    pub recovered_ci: [f64; 2],
    /// Mean over trials of the goodput (successes a second) over the window
    /// the rule judges after the fault.
    pub(crate) goodput_after: f64,
    /// Mean over trials of the goodput before the fault.
    pub baseline: f64,
    /// `recovered` when at least half the trials did; otherwise the most
    /// common other state (`degraded`, `collapsed`,
    /// `collapsed-before-fault`).
    pub verdict: String,
    /// Trials by state.
    pub states: BTreeMap<String, u32>,
    /// Added by bisection, not on the grid.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bisection: bool,
}

/// A sweep's result (`sweep` in the JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    pub variable: &'static str,
    pub lo: f64,
    pub hi: f64,
    pub steps: u32,
    pub trials: u32,
    /// The recovery rule every verdict was judged by.
    pub rule: &'static str,
    /// Sorted by value; bisection points among the grid's.
    pub(crate) points: Vec<Point>,
    pub(crate) boundary: Boundary,
}

/// The whole report of `simulate --sweep`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepReport {
    pub mode: &'static str,
    pub topology: String,
    pub fault: String,
    pub seed: u64,
    /// Seconds each run lasts.
    pub(crate) duration_s: f64,
    pub sweep: Sweep,
    /// A sentence: how far the system recovers.
    pub headroom: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<ExpectOutcome>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Unfit(#[from] Unfit),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(
        "the sweep is bounded: {points} points × {trials} trials × {duration_s} s (and up to {BISECT_STEPS} bisection points) come to about {attempts:.0} attempts, past the budget of {budget}; to make it fit: {fixes}"
    )]
    OverBudget {
        points: u32,
        trials: u32,
        duration_s: f64,
        attempts: f64,
        budget: u64,
        fixes: String,
    },
}

/// Sweeps `spec` over `scenario` and `load` against `t`, `trials` seeded
/// trials a point, under `options` (budget, threads, progress, interrupt,
/// rule; its `trials` is ignored).
pub fn run(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    spec: &Spec,
    trials: u32,
    options: &SimOptions,
) -> Result<SweepReport, SweepError> {
    if trials == 0 {
        return Err(SimError::NoTrials.into());
    }
    spec::fit(spec.variable, scenario, load)?;
    spec::fit_after(spec, scenario, load)?;
    let grid = spec.grid();
    refuse_past_budget(t, scenario, load, spec, &grid, trials, options)?;
    let runner = Runner::new(t, scenario, load, spec.variable, trials, options);
    let mut points = runner.points(&grid, false)?;
    let mut interrupted = runner.interrupted();
    // Bisection between the bracketing neighbours.
    for _ in 0..BISECT_STEPS {
        if interrupted {
            break;
        }
        points.sort_by(|a, b| a.value.total_cmp(&b.value));
        let Some((lo, hi)) = boundary::bracket(&points) else {
            break;
        };
        let mid = spec.variable.round((lo + hi) / 2.0);
        if mid <= lo || mid >= hi {
            break;
        }
        points.extend(runner.points(&[mid], true)?);
        interrupted = runner.interrupted();
    }
    points.sort_by(|a, b| a.value.total_cmp(&b.value));
    let boundary = boundary::find(&points, spec.lo, spec.hi);
    let headroom = headroom(spec, scenario, load, &boundary);
    Ok(SweepReport {
        mode: "simulate",
        topology: t.name.clone(),
        fault: scenario.name.clone(),
        seed: load.seed,
        duration_s: load.in_virtual_time().horizon().as_secs_f64(),
        sweep: Sweep {
            variable: spec.variable.name(),
            lo: spec.lo,
            hi: spec.hi,
            steps: spec.steps,
            trials,
            rule: options.rule.name(),
            points,
            boundary,
        },
        headroom,
        expectations: Vec::new(),
        interrupted,
    })
}

fn refuse_past_budget(
    t: &Topology,
    scenario: &Scenario,
    load: &LoadSettings,
    spec: &Spec,
    grid: &[f64],
    trials: u32,
    options: &SimOptions,
) -> Result<(), SweepError> {
    let cost = |v: f64| -> Result<f64, SweepError> {
        let (s, l) = spec::point(spec.variable, v, scenario, load);
        let e = super::estimate(
            t,
            &s,
            &l,
            &SimOptions {
                trials,
                ..options.clone()
            },
        )?;
        Ok(e.attempts * f64::from(e.runs.max(1)))
    };
    let mut attempts = 0.0;
    for &v in grid {
        attempts += cost(v)?;
    }
    attempts += f64::from(BISECT_STEPS) * cost(spec.hi)?;
    let budget = options.budget.attempts;
    if attempts <= budget as f64 {
        return Ok(());
    }
    let share = budget as f64 / attempts;
    let mut fixes = Vec::new();
    let fitting_trials = (f64::from(trials) * share).floor();
    if fitting_trials >= 1.0 {
        fixes.push(format!("--trials {}", fitting_trials as u64));
    }
    let fitting_steps =
        (f64::from(spec.steps + BISECT_STEPS) * share).floor() - f64::from(BISECT_STEPS);
    if fitting_steps >= 2.0 {
        fixes.push(format!("--steps {}", fitting_steps as u64));
    }
    fixes.push(format!(
        "a shorter --duration, or --budget {}",
        attempts.ceil() as u64
    ));
    Err(SweepError::OverBudget {
        points: grid.len() as u32,
        trials,
        duration_s: load.in_virtual_time().horizon().as_secs_f64(),
        attempts,
        budget,
        fixes: fixes.join(", or "),
    })
}

/// Runs the trials of points, spread over threads, one plain one-trial
/// simulation each.
struct Runner<'a> {
    t: &'a Topology,
    scenario: &'a Scenario,
    load: &'a LoadSettings,
    variable: Variable,
    trials: u32,
    options: &'a SimOptions,
    stopped: std::sync::atomic::AtomicBool,
    bar: Option<indicatif::ProgressBar>,
}

impl<'a> Runner<'a> {
    fn new(
        t: &'a Topology,
        scenario: &'a Scenario,
        load: &'a LoadSettings,
        variable: Variable,
        trials: u32,
        options: &'a SimOptions,
    ) -> Self {
        let bar = (options.progress && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(0),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "simulate --sweep {bar:30} {pos}/{len} runs  eta {eta}",
            ) {
                bar.set_style(style);
            }
            bar
        });
        Runner {
            t,
            scenario,
            load,
            variable,
            trials,
            options,
            stopped: std::sync::atomic::AtomicBool::new(false),
            bar,
        }
    }

    fn interrupted(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// The points at `values`; a point whose trials were cut short by an
    /// interrupt is left out.
    fn points(&self, values: &[f64], bisection: bool) -> Result<Vec<Point>, SweepError> {
        let jobs: Vec<(usize, u32)> = (0..values.len())
            .flat_map(|p| (0..self.trials).map(move |i| (p, i)))
            .collect();
        if let Some(bar) = &self.bar {
            bar.inc_length(jobs.len() as u64);
        }
        let setups: Vec<(Scenario, LoadSettings)> = values
            .iter()
            .map(|&v| spec::point(self.variable, v, self.scenario, self.load))
            .collect();
        let results: Mutex<Vec<Option<Option<Verdict>>>> = Mutex::new(vec![None; jobs.len()]);
        let failure: Mutex<Option<SimError>> = Mutex::new(None);
        let next = AtomicUsize::new(0);
        let threads = super::threads(self.options).min(jobs.len()).max(1);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    loop {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        if j >= jobs.len() || self.interrupted() {
                            return;
                        }
                        if failure.lock().map_or(true, |f| f.is_some()) {
                            return;
                        }
                        let (p, i) = jobs[j];
                        let (scenario, load) = &setups[p];
                        let load = LoadSettings {
                            seed: load.seed.wrapping_add(u64::from(i)),
                            ..load.clone()
                        };
                        let options = SimOptions {
                            trials: 1,
                            threads: Some(1),
                            progress: false,
                            ..self.options.clone()
                        };
                        match super::run_over_time(self.t, scenario, &load, &options) {
                            Ok(report) => {
                                let v = report.goodput.and_then(|g| g.verdict);
                                if let Ok(mut r) = results.lock() {
                                    r[j] = Some(v);
                                }
                            }
                            Err(SimError::Interrupted(_)) => {
                                self.stopped.store(true, Ordering::Relaxed);
                            }
                            Err(e) => {
                                if let Ok(mut f) = failure.lock() {
                                    f.get_or_insert(e);
                                }
                            }
                        }
                        if let Some(bar) = &self.bar {
                            bar.inc(1);
                        }
                    }
                });
            }
        });
        if let Some(e) = failure.into_inner().ok().flatten() {
            return Err(e.into());
        }
        if self
            .options
            .interrupt
            .as_ref()
            .is_some_and(|i| i.load(Ordering::Relaxed))
        {
            self.stopped.store(true, Ordering::Relaxed);
        }
        let results = results.into_inner().unwrap_or_default();
        let n = self.trials as usize;
        Ok(values
            .iter()
            .enumerate()
            .filter_map(|(p, &value)| {
                let verdicts: Option<Vec<Option<Verdict>>> =
                    results[p * n..(p + 1) * n].iter().cloned().collect();
                let verdicts = verdicts?;
                Some(point(value, &setups[p], bisection, &verdicts))
            })
            .collect())
    }
}

impl Drop for Runner<'_> {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A point from its trials' verdicts (`None`: no verdict, not recovered).
fn point(
    value: f64,
    (scenario, load): &(Scenario, LoadSettings),
    bisection: bool,
    verdicts: &[Option<Verdict>],
) -> Point {
    let n = verdicts.len() as u32;
    let mut states: BTreeMap<String, u32> = BTreeMap::new();
    for v in verdicts {
        let state = v.as_ref().map_or("no-verdict", |v| v.state.as_str());
        *states.entry(state.to_owned()).or_default() += 1;
    }
    let k = states.get("recovered").copied().unwrap_or(0);
    let mean = |f: fn(&Verdict) -> f64| {
        verdicts
            .iter()
            .map(|v| v.as_ref().map_or(0.0, f))
            .sum::<f64>()
            / f64::from(n.max(1))
    };
    let verdict = if 2 * k >= n {
        "recovered".to_owned()
    } else {
        // The most common other state; ties go to the worse (the later in
        // this order).
        let order = [
            "degraded",
            "collapsed",
            "collapsed-before-fault",
            "unjudged",
            "no-verdict",
        ];
        order
            .iter()
            .rev()
            .max_by_key(|s| states.get(**s).copied().unwrap_or(0))
            .map_or("collapsed", |s| *s)
            .to_owned()
    };
    let surge = spec::surge_of(scenario);
    Point {
        value,
        rate: match load.arrival {
            crate::run::Arrival::Rate(r) => r,
            crate::run::Arrival::Clients(_) => 0.0,
        },
        surge_rate: surge.map(|s| s.0),
        surge_for_s: surge.and_then(|s| s.1),
        trials: n,
        recovered_trials: k,
        recovered_ci: super::wilson::interval(k, n),
        goodput_after: mean(|v| v.goodput_after_per_s),
        baseline: mean(|v| v.baseline_per_s),
        verdict,
        states,
        bisection,
    }
}

/// A rate or a length as the headroom sentences write it: `2500`, `12.5`.
pub fn figure(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// `recovers from a 10 s surge to 2500/s up to 540/s (95 % CI 520–560/s)`.
fn headroom(spec: &Spec, scenario: &Scenario, load: &LoadSettings, b: &Boundary) -> String {
    let variable = spec.variable;
    let num = figure;
    let unit = variable.unit();
    let rate = match load.arrival {
        crate::run::Arrival::Rate(r) => num(r),
        crate::run::Arrival::Clients(c) => format!("{c} clients"),
    };
    let surge = spec::surge_of(scenario);
    let what = match (variable, surge) {
        (Variable::Rate, Some((to, Some(len)))) => {
            format!("recovers from a {} s surge to {}/s", num(len), num(to))
        }
        (Variable::Rate, _) => format!("recovers from `{}`", scenario.name),
        (Variable::Surge, Some((_, Some(len)))) => {
            format!("at {rate}/s, recovers from a {} s surge", num(len))
        }
        (Variable::Surge, _) => format!("at {rate}/s, recovers from a surge"),
        (Variable::For, Some((to, _))) => {
            format!(
                "at {rate}/s, recovers from a surge to {}/s lasting",
                num(to)
            )
        }
        (Variable::For, None) => format!("at {rate}/s, recovers from a surge lasting"),
    };
    match (b.value, b.bracket) {
        (Some(v), _) => {
            // Wilson's interval of k of n excludes one half only from n = 4
            // on: with fewer trials a point, no side can be resolved.
            let interval = match b.ci {
                [Some(lo), Some(hi)] => format!("95 % CI {}–{}{unit}", num(lo), num(hi)),
                [None, Some(hi)] => {
                    format!("95 % CI up to {}{unit}, its lower side unresolved", num(hi))
                }
                [Some(lo), None] => {
                    format!("95 % CI from {}{unit}, its upper side unresolved", num(lo))
                }
                [None, None] => "no 95 % interval: no point's trials are enough to be sure; more --trials, 8 or so, resolve it".to_owned(),
            };
            format!("{what} up to {}{unit} ({interval})", num(v))
        }
        (None, "above-hi") => format!(
            "{what} at every point swept, up to {}{unit} at least (the boundary is above the grid)",
            num(spec.hi)
        ),
        (None, _) => format!(
            "{what} at no point swept, not even {}{unit} (the boundary is below the grid)",
            num(spec.lo)
        ),
    }
}
