//! `retrylint simulate`: the same scenario in virtual time, over seeded trials.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Args;

use super::outcome::{Failure, Outcome, emit};
use super::run_args::{EntryFlag, RunArgs, finish, load_target, prepare};
use super::values::whole;

/// More threads than this would only wait on each other.
const MAX_THREADS: u16 = 1024;
use retrylint::{formats, sim, topology};

#[derive(Args)]
pub struct SimulateArgs {
    /// The topology file; several compare their policies under one scenario.
    /// Optional when `--from` gives a call graph (a trace export).
    #[arg(num_args = 0..)]
    pub topologies: Vec<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Seeded trials (trial i uses seed + i); figures are medians and quantiles
    /// over them, a single trial reports exact counts.
    #[arg(long, default_value_t = 100, value_name = "K", allow_negative_numbers = true,
          value_parser = whole(1u32, u32::MAX))]
    pub trials: u32,
    /// Threads to spread trials over [default: all cores]; results do not
    /// depend on it.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = whole(1u16, MAX_THREADS))]
    pub threads: Option<u16>,
    /// Work budget: the attempts the simulation may make over all its trials
    /// (about 3 million a second on 2 cores). A run estimated past it is
    /// refused up front with the figures and the flags that make it fit.
    #[arg(long, value_name = "ATTEMPTS", default_value_t = sim::WorkBudget::DEFAULT.attempts,
          allow_negative_numbers = true, value_parser = whole(1u64, u64::MAX))]
    pub budget: u64,
    /// Sweep a variable over a grid for the tipping point: `rate=LO..HI`
    /// (the open-loop rate), `surge=LO..HI` (the surge's rate) or
    /// `for=LO..HI` (its length, `2s..20s`); `--trials` per point.
    #[arg(long, value_name = "VAR=LO..HI", allow_hyphen_values = true)]
    pub sweep: Option<String>,
    /// Points on the --sweep grid, LO and HI included.
    #[arg(long, value_name = "N", default_value_t = 9, requires = "sweep",
          allow_negative_numbers = true, value_parser = whole(2u32, 1000))]
    pub steps: u32,
    /// How a run's recovery after the fault is judged: `last-half` (the mean
    /// goodput over the run's last half against the pre-fault mean:
    /// recovered ≥ 0.80×, collapsed < 0.05×, degraded between) or
    /// `within-tolerance` (some whole second after the fault back within
    /// 10 % of the pre-fault mean).
    #[arg(long, value_enum, default_value_t = RecoveryRule::LastHalf)]
    pub recovery_rule: RecoveryRule,
    /// The entry service the user requests go to; needed when the topology
    /// has several (`entry: [web, mobile]`, or several services nobody
    /// calls).
    #[arg(long, value_name = "NAME")]
    pub entry: Option<String>,
    /// Set the simulated run beside what production showed: per call, the
    /// attempts per call that traces or metrics (`--from`, or the
    /// `observed:` figures `import` writes) observed against the simulated
    /// ones; per service, the response time its server spans showed against
    /// the simulated one; each with the ratio simulated / observed. Choose
    /// the --fault that matches the window observed (`none` for a healthy
    /// one).
    #[arg(long, conflicts_with = "sweep")]
    pub calibrate: bool,
}

/// `--recovery-rule`: the CLI's names for `run::goodput::RecoveryRule`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum RecoveryRule {
    LastHalf,
    WithinTolerance,
}

impl From<RecoveryRule> for retrylint::run::goodput::RecoveryRule {
    fn from(r: RecoveryRule) -> Self {
        match r {
            RecoveryRule::LastHalf => Self::LastHalf,
            RecoveryRule::WithinTolerance => Self::WithinTolerance,
        }
    }
}

pub fn simulate(mut args: SimulateArgs) -> Result<Outcome, Failure> {
    // A sweep is gated on its boundary, not on one run's figures.
    let sweep_gates = if args.sweep.is_some() {
        std::mem::take(&mut args.run.expect)
    } else {
        Vec::new()
    };
    let p = prepare(&args.run)?;
    if args.topologies.len() > 1 && args.calibrate {
        return Err(Failure::Usage(
            "--calibrate sets one topology beside what production showed; calibrate each on its own".into(),
        ));
    }
    if args.topologies.len() > 1 && !p.gates.is_empty() {
        return Err(Failure::Usage(
            "--expect applies to one topology; compare several without it".into(),
        ));
    }
    let entry = EntryFlag::entry(args.entry.as_deref(), "simulate");
    let topologies = if args.topologies.is_empty() {
        vec![load_target(None, &p, entry)?]
    } else {
        args.topologies
            .iter()
            .map(|path| load_target(Some(path), &p, entry))
            .collect::<Result<Vec<_>, _>>()?
    };
    if let Some(text) = &args.sweep {
        let [t] = topologies.as_slice() else {
            return Err(Failure::Usage(
                "--sweep applies to one topology; sweep each on its own".into(),
            ));
        };
        return super::sweep::sweep(
            t,
            &p,
            text,
            args.steps,
            &sweep_gates,
            options(&args),
            args.run.format,
        );
    }
    let options = options(&args);
    if let [t] = topologies.as_slice() {
        let named = |mut r: retrylint::run::RunReport| {
            r.load.entry = entry.shown();
            r
        };
        if args.calibrate {
            return calibrate(t, &p, &options, args.run.format, named);
        }
        return match sim::run_with(t, &p.scenario, &p.load, &options) {
            Ok(report) => finish(named(report), &p.gates, args.run.format, false),
            Err(sim::SimError::Interrupted(report)) => {
                finish(named(*report), &p.gates, args.run.format, true)
            }
            Err(e) => Err(Failure::Usage(e.to_string())),
        };
    }
    let refs: Vec<&topology::Topology> = topologies.iter().collect();
    let rows = sim::compare_with(&refs, &p.scenario, &p.load, &options)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    emit(&formats::render_comparison(
        args.run
            .format
            .map_or(formats::RunFormat::Table, Into::into),
        &rows,
        p.load.seed,
    ));
    Ok(Outcome::Clean)
}

/// The simulation options the flags give; Ctrl-C, SIGTERM or SIGHUP stops
/// the trials, the ones completed are reported, exit 128 + the signal.
fn options(args: &SimulateArgs) -> sim::SimOptions {
    let interrupt = Arc::new(AtomicBool::new(false));
    retrylint::stop_signal::set_on_stop(&interrupt);
    sim::SimOptions {
        trials: args.trials,
        threads: args.threads.map(usize::from),
        budget: sim::WorkBudget {
            attempts: args.budget,
            ..sim::WorkBudget::DEFAULT
        },
        progress: std::io::stderr().is_terminal(),
        interrupt: Some(interrupt),
        rule: args.recovery_rule.into(),
    }
}

/// `--calibrate`: the run, gated as any, printed with its calibration.
fn calibrate(
    t: &topology::Topology,
    p: &super::run_args::Prepared,
    options: &sim::SimOptions,
    format: Option<super::run_args::RunFormat>,
    named: impl Fn(retrylint::run::RunReport) -> retrylint::run::RunReport,
) -> Result<Outcome, Failure> {
    if t.observed.is_empty() && t.observed_latency.is_empty() {
        return Err(Failure::Usage(
            "--calibrate needs what production showed: give a trace export or a proxy's metrics with --from, or a topology `retrylint import` wrote with its `observed:` figures".into(),
        ));
    }
    let (mut report, interrupted) = match sim::run_with(t, &p.scenario, &p.load, options) {
        Ok(report) => (named(report), false),
        Err(sim::SimError::Interrupted(report)) => (named(*report), true),
        Err(e) => return Err(Failure::Usage(e.to_string())),
    };
    let held = retrylint::run::evaluate_all(&mut report, &p.gates)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let calibration = sim::calibrate::calibrate(t, &report);
    emit(&formats::run::calibration::render(
        format.map_or(formats::RunFormat::Table, Into::into),
        &report,
        &calibration,
    ));
    Ok(Outcome::of_run(interrupted, held))
}
