//! `retrylint simulate`: the same scenario in virtual time, over seeded trials.

use std::path::PathBuf;

use clap::Args;

use super::outcome::{Failure, Outcome, emit};
use super::run_args::{RunArgs, RunFormat, finish, load_target, prepare};
use super::values::whole;

/// More threads than this would only wait on each other.
const MAX_THREADS: u16 = 1024;
use retrylint::{report, sim, topology};

#[derive(Args)]
pub struct SimulateArgs {
    /// The topology file; several compare their policies under one scenario.
    #[arg(required = true, num_args = 1..)]
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
}

pub fn simulate(args: SimulateArgs) -> Result<Outcome, Failure> {
    let p = prepare(&args.run)?;
    if args.topologies.len() > 1 && !p.gates.is_empty() {
        return Err(Failure::Usage(
            "--expect applies to one topology; compare several without it".into(),
        ));
    }
    let topologies = args
        .topologies
        .iter()
        .map(|path| load_target(path, &p))
        .collect::<Result<Vec<_>, _>>()?;
    let sim_error = |e: sim::SimError| Failure::Usage(e.to_string());
    if let [t] = topologies.as_slice() {
        let report = sim::run(
            t,
            &p.scenario,
            &p.load,
            args.trials,
            args.threads.map(usize::from),
        )
        .map_err(sim_error)?;
        return finish(report, &p.gates, args.run.format, false);
    }
    let refs: Vec<&topology::Topology> = topologies.iter().collect();
    let rows = sim::compare(
        &refs,
        &p.scenario,
        &p.load,
        args.trials,
        args.threads.map(usize::from),
    )
    .map_err(sim_error)?;
    emit(&match args.run.format.unwrap_or(RunFormat::Table) {
        RunFormat::Table => report::sim_compare_table::render(&rows),
        RunFormat::Markdown => report::sim_compare_markdown::render(&rows),
        RunFormat::Json => report::sim_compare_json::render(&rows, p.load.seed),
    });
    Ok(Outcome::Clean)
}
