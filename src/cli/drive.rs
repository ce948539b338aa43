//! `retrylint drive`: the load driver alone against an entry already running
//! (`retrylint serve` processes), collecting every service's counters.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::outcome::{Failure, Outcome};
use super::run_args::{EntryFlag, RunArgs, finish, load_target, prepare};
use super::token_args::{self, TokenArgs};
use retrylint::chaos;

#[derive(Args)]
pub struct DriveArgs {
    /// The topology file (schema version 1): the one every `serve` runs.
    pub topology: PathBuf,
    /// The entry service's URL (`http://HOST:PORT`).
    #[arg(long, value_name = "URL")]
    pub entry: String,
    /// The entry service that URL serves; needed when the topology has
    /// several (`--entry` is the URL here).
    #[arg(long, value_name = "NAME")]
    pub entry_service: Option<String>,
    /// The admin URL of a `serve` process (`http://HOST:9090`), one per
    /// service: its run is started with the driver's and its counters are
    /// collected at the end (exit 1 when one could not be read, or ran
    /// another run by then: the report names it). Repeatable.
    #[arg(long, value_name = "URL")]
    pub collect: Vec<String>,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub token: TokenArgs,
    /// Open loop: user requests in flight at once, at most (as `chaos`).
    #[arg(long, value_name = "N", default_value_t = chaos::RunOptions::DEFAULT_MAX_IN_FLIGHT as u32,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_in_flight: u32,
}

pub fn drive(args: DriveArgs) -> Result<Outcome, Failure> {
    let p = prepare(&args.run)?;
    let token = args.token.token(false)?;
    if token.is_none() && !args.collect.is_empty() {
        return Err(token_args::missing("drive --collect"));
    }
    let entry = EntryFlag {
        name: args.entry_service.as_deref(),
        flag: "--entry-service",
        command: "drive",
        keep_others: false,
    };
    let t = load_target(Some(&args.topology), &p, entry)?;
    let options = chaos::RunOptions {
        progress: std::io::stderr().is_terminal(),
        max_in_flight: args.max_in_flight as usize,
        ..Default::default()
    };
    let format = args.run.format;
    match chaos::drive_blocking(
        &t,
        &p.scenario,
        &p.load,
        &args.entry,
        &args.collect,
        token.as_ref(),
        &options,
    ) {
        // Counters missing from the report: it is not the whole run.
        Ok(report) if !report.harness.uncollected.is_empty() => {
            finish(report, &p.gates, format, false).map(|o| match o {
                Outcome::Clean => Outcome::Failed,
                other => other,
            })
        }
        Ok(report) => finish(report, &p.gates, format, false),
        Err(chaos::ChaosError::Interrupted(report)) => finish(*report, &p.gates, format, true),
        Err(e @ chaos::ChaosError::Target(_)) => Err(Failure::Usage(e.to_string())),
        Err(e) => Err(Failure::Usage(format!("drive failed: {e}"))),
    }
}
