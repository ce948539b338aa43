//! `retrylint chaos`: the topology as real servers on loopback, under a fault.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::outcome::{Failure, Outcome};
use super::run_args::{RunArgs, finish, load_target, prepare};
use retrylint::chaos;

#[derive(Args)]
pub struct ChaosArgs {
    /// The topology file (schema version 1).
    pub topology: PathBuf,
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn chaos(args: ChaosArgs) -> Result<Outcome, Failure> {
    let p = prepare(&args.run)?;
    let t = load_target(&args.topology, &p)?;
    let options = chaos::RunOptions {
        progress: std::io::stderr().is_terminal(),
        ..Default::default()
    };
    let format = args.run.format;
    match chaos::run_with(&t, &p.scenario, &p.load, &options) {
        Ok(report) => finish(report, &p.gates, format, false),
        Err(chaos::ChaosError::Interrupted(report)) => finish(*report, &p.gates, format, true),
        Err(chaos::ChaosError::Target(e)) => Err(Failure::Usage(e.to_string())),
        Err(e) => Err(Failure::Usage(format!("chaos run failed: {e}"))),
    }
}
