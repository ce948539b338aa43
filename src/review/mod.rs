//! The architecture review page's data: everything `retrylint report` shows,
//! gathered as plain data from the modules that own each figure — `lint` for
//! the findings and the amplification tables, `prediction` for the hottest path,
//! `sim` for the storm in time, a chaos run's JSON for the measurements — and
//! arranged for drawing (graph layout in `layout`, chart series on shared axes
//! in `series`, findings grouped in `findings`, measured beside predicted in
//! `measured`, observed attempts beside the declared layers in `observed`).
//! The formats under `formats::review::html` and `formats::review::markdown` only
//! format a [`Review`]; nothing here formats.
//!
//! A page shows one topology, or two side by side ([`Other`]): the second is
//! the what-if, the same topology with every fix of `check --fix` applied in
//! memory (`crate::fix::what_if`), or the file `report --compare` names.
//!
//! Given the file as it was before a change, `suggestions` turns the fixes
//! of the findings on changed lines into GitHub suggestions (the markdown
//! cut shows them).

pub mod findings;
pub mod layout;
pub mod measured;
pub mod observed;
pub mod recovery;
pub mod series;
pub mod suggestions;

use crate::faults::{self, Scenario};
use crate::lint::{CheckReport, CliLevels, Config, ResolveError};
use crate::prediction::Analysis;
use crate::run::{Arrival, LoadSettings, RunReport};
use crate::sim::{self, SimOptions, WorkBudget};
use crate::topology::Topology;

pub(crate) use findings::ServiceFindings;
pub use layout::GraphView;
pub use measured::Measured;
pub(crate) use series::Storm;
pub use suggestions::Suggestions;

/// Trials the page simulates unless told: enough for stable medians of the
/// small examples, and cut down to fit [`BUDGET`] on large topologies.
pub const DEFAULT_TRIALS: u32 = 20;

/// Attempts the page's simulation may make per topology (about a second on
/// two cores): a report stays quick whatever the topology, with fewer trials
/// where a trial is costly, and none, said on the page, past it.
pub const BUDGET: u64 = 3_000_000;

/// The most rows of the amplification tables; the worst are kept.
pub const MAX_ROWS: usize = 100;

/// The second topology of the page.
pub struct Other<'a> {
    pub topology: &'a Topology,
    /// How the page names it: `with the fixes applied`, `compare: b.yaml`.
    pub label: String,
}

/// How the page's simulation runs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub scenario: Scenario,
    /// Why this scenario, when nobody named it.
    pub scenario_note: Option<String>,
    pub load: LoadSettings,
    pub trials: u32,
    pub budget: u64,
    pub threads: Option<usize>,
    /// The command that reproduces the page, as the footer prints it.
    pub command: String,
}

/// The scenario the page simulates when none is named: the leaves answer 503
/// for two seconds (`503-burst`), the storm every retrying topology is
/// exposed to. Services with a `capacity:` follow the overload model all
/// along, so where the retries push one past its capacity the storm outlasts
/// the fault. (The shipped `overload` scenario caps the leaves at 8 requests
/// at once; at the default load it overloads nothing and draws no storm.)
pub fn default_scenario(t: &Topology) -> (Scenario, String) {
    let s = faults::load("503-burst").expect("shipped scenarios load");
    let capacity = t
        .services
        .iter()
        .any(|s| s.capacity.is_some() || s.queueing.is_some());
    let why = if capacity {
        "default scenario `503-burst` (the leaves answer 503 for 2 s); the services with a capacity follow the overload model throughout; choose another with --fault"
    } else {
        "default scenario `503-burst` (the leaves answer 503 for 2 s); choose another with --fault"
    };
    (s, why.to_owned())
}

/// A run length that covers `scenario`'s fault and as long again after it
/// (at least 10 s), in whole seconds, when the fault does not end before
/// `default`; `None` when it does, or when it never ends.
pub fn covering(scenario: &Scenario, default: std::time::Duration) -> Option<std::time::Duration> {
    let (start, end) = scenario.window()?;
    let after = end
        .saturating_sub(start)
        .max(std::time::Duration::from_secs(10));
    (end >= default)
        .then(|| std::time::Duration::from_secs((end + after).as_secs_f64().ceil() as u64))
}

/// One topology's column of the page.
#[derive(Debug, Clone)]
pub struct Side {
    pub label: String,
    pub check: CheckReport,
    pub graph: GraphView,
    pub(crate) findings: Vec<ServiceFindings>,
    pub findings_omitted: usize,
    pub sim: Option<RunReport>,
    /// Trials the simulation ran (fewer than asked when it had to fit).
    pub(crate) sim_trials: u32,
    /// Why the simulation ran fewer trials, or did not run.
    pub sim_note: Option<String>,
    /// Under a surge scenario on an open loop: the recovery map, or why it
    /// is not drawn.
    pub(crate) recovery: Option<Result<recovery::RecoveryMap, String>>,
}

/// A row of the amplification tables: a service and its row on each side.
#[derive(Debug, Clone, PartialEq)]
pub struct RowPair {
    pub service: String,
    /// Index into each side's `check.amplification`.
    pub at: Vec<Option<usize>>,
}

#[derive(Debug, Clone)]
pub(crate) struct ScenarioInfo {
    pub name: String,
    pub description: String,
    pub target: String,
    pub note: Option<String>,
}

/// Everything the page shows.
#[derive(Debug, Clone)]
pub struct Review {
    pub version: &'static str,
    pub(crate) scenario: ScenarioInfo,
    pub seed: u64,
    pub trials: u32,
    /// `20 user requests/s for 5 s`.
    pub load: String,
    pub sides: Vec<Side>,
    pub rows: Vec<RowPair>,
    /// Services in the tables beyond `rows`.
    pub rows_omitted: usize,
    pub storm: Option<Storm>,
    pub measured: Option<Measured>,
    /// Calls that traces or a proxy's counters saw, beside what the
    /// topology declares (empty when nothing was observed).
    pub observed: Vec<observed::Row>,
    /// The fixes of findings on changed lines as GitHub suggestions, when
    /// the file's version before the change was given
    /// ([`suggestions::suggest`]).
    pub suggestions: Option<Suggestions>,
    /// Fixes left out of the what-if because, with them, the simulator
    /// measured the topology worse than as written (`crate::fix::fix_judged`).
    pub held_back: Vec<crate::fix::FixNote>,
    pub command: String,
}

impl Review {
    /// The first side: the topology as written.
    pub fn written(&self) -> &Side {
        &self.sides[0]
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("{0}")]
    Lint(ResolveError),
}

/// Gathers the page of `t`, beside `other` when given, with `chaos` (file
/// name and run) set beside the prediction when given.
pub fn gather(
    t: &Topology,
    other: Option<Other<'_>>,
    settings: &Settings,
    chaos: Option<(&str, &RunReport)>,
) -> Result<Review, ReviewError> {
    let mut sides = vec![side(t, "as written".into(), settings)?];
    if let Some(o) = other {
        sides.push(side(o.topology, o.label, settings)?);
    }
    let (rows, rows_omitted) = rows(&sides);
    let window = settings
        .scenario
        .window()
        .map(|(a, b)| (a.as_secs_f64(), b.as_secs_f64()));
    let runs: Vec<series::SideRun<'_>> = sides
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            s.sim.as_ref().map(|run| series::SideRun {
                name: &s.label,
                side: i,
                run,
            })
        })
        .collect();
    let horizon_s = settings.load.horizon().as_secs_f64().min(3600.0);
    let storm = (!runs.is_empty()).then(|| series::storm(&runs, window, horizon_s));
    let measured = chaos.map(|(file, run)| {
        measured::beside(file, run, sides[0].sim.as_ref(), &sides[0].check.topology)
    });
    let observed = observed::rows(t, &sides[0].check);
    Ok(Review {
        version: env!("CARGO_PKG_VERSION"),
        scenario: ScenarioInfo {
            name: settings.scenario.name.clone(),
            description: settings.scenario.description.clone(),
            target: settings.scenario.target.to_string(),
            note: settings.scenario_note.clone(),
        },
        seed: settings.load.seed,
        trials: settings.trials,
        load: load_text(&settings.load),
        sides,
        rows,
        rows_omitted,
        storm,
        measured,
        observed,
        suggestions: None,
        held_back: Vec::new(),
        command: settings.command.clone(),
    })
}

fn side(t: &Topology, label: String, settings: &Settings) -> Result<Side, ReviewError> {
    let config = Config::resolve(t, &CliLevels::default()).map_err(ReviewError::Lint)?;
    let check = crate::fix::check(t, &config);
    let analysis = Analysis::new(t);
    let graph = layout::view(t, &check, &analysis);
    let (findings, findings_omitted) = findings::group(&check);
    let (sim, sim_trials, sim_note) = simulate(t, settings);
    let recovery = recovery::applies(&settings.scenario, &settings.load).then(|| {
        recovery::map(
            t,
            &settings.scenario,
            &settings.load,
            settings.trials,
            settings.threads,
        )
    });
    Ok(Side {
        label,
        check,
        graph,
        findings,
        findings_omitted,
        sim,
        sim_trials,
        sim_note,
        recovery,
    })
}

/// Runs the page's simulation within its budget: fewer trials when the ones
/// asked for would not fit, none (and why) when one would not.
fn simulate(t: &Topology, s: &Settings) -> (Option<RunReport>, u32, Option<String>) {
    let options = SimOptions {
        trials: s.trials,
        threads: s.threads,
        budget: WorkBudget {
            attempts: s.budget,
            ..WorkBudget::DEFAULT
        },
        ..SimOptions::default()
    };
    let mut trials = s.trials;
    let mut note = None;
    match sim::estimate(t, &s.scenario, &s.load, &options) {
        Ok(e) => {
            let runs = if t.layers().any(|(_, l)| l.breaker.is_some()) {
                2.0
            } else {
                1.0
            };
            let per_trial = runs * e.attempts / f64::from(s.trials.max(1));
            let fit = (s.budget as f64 / per_trial).floor();
            if fit.is_finite() && fit < f64::from(trials) {
                if fit < 1.0 {
                    return (
                        None,
                        0,
                        Some(format!(
                            "not simulated: one trial is estimated at {} attempts, over the page's budget of {}; run `retrylint simulate` with a larger --budget",
                            series::number(per_trial),
                            series::number(s.budget as f64)
                        )),
                    );
                }
                trials = fit as u32;
                note = Some(format!(
                    "{trials} of the {} trials asked for, to stay within the page's budget of {} attempts",
                    s.trials,
                    series::number(s.budget as f64)
                ));
            }
        }
        Err(e) => return (None, 0, Some(format!("not simulated: {e}"))),
    }
    let options = SimOptions { trials, ..options };
    match sim::run_over_time(t, &s.scenario, &s.load, &options) {
        Ok(r) => (Some(r), trials, note),
        // Over the budget after all (the estimate was low), or the scenario
        // cannot run on this topology: the page says so and goes on.
        Err(e) => (None, 0, Some(format!("not simulated: {e}"))),
    }
}

/// The services of every side, the worst first when there are too many.
fn rows(sides: &[Side]) -> (Vec<RowPair>, usize) {
    let mut rows: Vec<RowPair> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for (k, side) in sides.iter().enumerate() {
        for (i, row) in side.check.amplification.iter().enumerate() {
            let at = *index.entry(row.service.clone()).or_insert_with(|| {
                rows.push(RowPair {
                    service: row.service.clone(),
                    at: vec![None; sides.len()],
                });
                rows.len() - 1
            });
            rows[at].at[k] = Some(i);
        }
    }
    let total = rows.len();
    if total > MAX_ROWS {
        let worst = |r: &RowPair| {
            r.at.iter()
                .enumerate()
                .filter_map(|(k, i)| i.map(|i| sides[k].check.amplification[i].worst_case))
                .fold(0.0, f64::max)
        };
        // Stable: file order among equals.
        rows.sort_by(|a, b| worst(b).total_cmp(&worst(a)));
        rows.truncate(MAX_ROWS);
    }
    let kept = rows.len();
    (rows, total - kept)
}

fn load_text(l: &LoadSettings) -> String {
    let who = match l.arrival {
        Arrival::Rate(r) => format!("{} user requests/s", series::number(r)),
        Arrival::Clients(n) => format!("{n} closed-loop clients"),
    };
    let mut s = who;
    if let Some(n) = l.requests {
        s.push_str(&format!(", at most {n} requests"));
    }
    if l.horizon() < crate::policy::FOREVER {
        s.push_str(&format!(
            " for {} s",
            series::number(l.horizon().as_secs_f64())
        ));
    }
    s
}
