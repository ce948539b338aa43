//! `retrylint chaos`: the topology as real servers on loopback, under a fault.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::outcome::{Failure, Outcome};
use super::run_args::{EntryFlag, RunArgs, finish, load_target, prepare};
use retrylint::chaos;

#[derive(Args)]
pub struct ChaosArgs {
    /// The topology file (schema version 1). Optional when `--from` gives a
    /// call graph (a trace export).
    pub topology: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
    /// Open loop: user requests in flight at once, at most; a request that
    /// finds every slot taken waits (counted late, its latency from when it
    /// was due), and one still waiting at the horizon is not sent.
    #[arg(long, value_name = "N", default_value_t = chaos::RunOptions::DEFAULT_MAX_IN_FLIGHT as u32,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_in_flight: u32,
    /// Run once only. By default a topology with circuit breakers runs twice,
    /// the second time without them, to report the attempts they saved.
    #[arg(long)]
    pub no_breaker_baseline: bool,
    /// The entry service the user requests go to; needed when the topology
    /// has several (`entry: [web, mobile]`, or several services nobody
    /// calls).
    #[arg(long, value_name = "NAME")]
    pub entry: Option<String>,
}

pub fn chaos(args: ChaosArgs) -> Result<Outcome, Failure> {
    let p = prepare(&args.run)?;
    let entry = EntryFlag::entry(args.entry.as_deref(), "chaos");
    let t = load_target(args.topology.as_deref(), &p, entry)?;
    let options = chaos::RunOptions {
        progress: std::io::stderr().is_terminal(),
        max_in_flight: args.max_in_flight as usize,
        breaker_baseline: !args.no_breaker_baseline,
        ..Default::default()
    };
    let format = args.run.format;
    let named = |mut r: retrylint::run::RunReport| {
        r.load.entry = entry.shown();
        r
    };
    match chaos::run_with(&t, &p.scenario, &p.load, &options) {
        Ok(report) => finish(named(report), &p.gates, format, false),
        Err(chaos::ChaosError::Interrupted(report)) => {
            finish(named(*report), &p.gates, format, true)
        }
        Err(e @ (chaos::ChaosError::Target(_) | chaos::ChaosError::Descriptors { .. })) => {
            Err(Failure::Usage(e.to_string()))
        }
        Err(e) => Err(Failure::Usage(format!("chaos run failed: {e}"))),
    }
}
