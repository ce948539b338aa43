//! The command line: one file per command, each parsing its flags and calling
//! the library; `outcome` maps how a command ended to the exit codes.

mod chaos;
mod check;
mod drive;
mod export;
mod import;
mod outcome;
mod probe;
mod report;
mod rules;
mod run_args;
mod serve;
mod simulate;
mod sources;
mod sweep;
mod token_args;
mod values;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use outcome::Outcome;

/// Finds retry storms before production does.
///
/// Reads a YAML topology of services, the calls between them and every retry
/// layer (app, SDK, mesh sidecar), and reports amplification, unsafe retries,
/// deadline overruns and missing jitter, budgets and timeouts.
#[derive(Parser)]
#[command(name = "retrylint", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Statically check a topology for retry hazards (exit 1 on findings at or
    /// above --fail-on).
    Check(check::CheckArgs),
    /// List the rules: code, name, default level and summary (or, with
    /// --format markdown, every rule's documentation as one page).
    Rules(rules::RulesArgs),
    /// Print a rule's documentation.
    Explain {
        /// A rule code (RL003) or name (non-idempotent-retry).
        code: String,
    },
    /// Boot the topology as real HTTP servers on 127.0.0.1, inject a fault,
    /// drive load through it and measure the storm (exit 1 on a broken --expect).
    Chaos(chaos::ChaosArgs),
    /// Run the same scenario as `chaos` in virtual time: seeded, reproducible,
    /// thousands of trials in a second. Several topologies give one comparison
    /// row each (exit 1 on a broken --expect).
    Simulate(simulate::SimulateArgs),
    /// Measure a real client's retry policy: serve scripted failures on
    /// 127.0.0.1, run the client against each, infer what it does and hold
    /// it to a topology (exit 1 on a difference with --expect-policy).
    Probe(probe::ProbeArgs),
    /// Serve one service of the topology (with its `via` sidecars and its
    /// fault) as its own process, with Prometheus `/metrics` on an admin port.
    Serve(serve::ServeArgs),
    /// Drive load into an entry already running (`serve` processes), collect
    /// every service's counters and print the report as `chaos` does.
    Drive(drive::DriveArgs),
    /// The architecture review: one self-contained HTML page (call graph,
    /// findings, figures, the storm in time under a fault) or its markdown
    /// cut for a PR comment.
    Report(report::ReportArgs),
    /// Write Kubernetes or Docker Compose manifests that run every service as
    /// its own process (`retrylint serve`) and the load as `retrylint drive`.
    #[command(subcommand)]
    Export(export::ExportCommand),
    /// Read retry configuration where it lives (Istio, Envoy, Gateway API,
    /// Linkerd, gRPC service config)
    /// and the call graph from traces, and write them as an editable topology.
    Import(import::ImportArgs),
    /// The harness's own retrying client as a command (for probe's tests).
    #[command(hide = true)]
    ProbeClient(probe::ClientArgs),
}

/// Parses the command line, runs the command, and maps how it ended to the
/// documented exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check::check(args),
        Command::Rules(args) => rules::rules(args),
        Command::Explain { code } => rules::explain(&code),
        Command::Chaos(args) => chaos::chaos(args),
        Command::Simulate(args) => simulate::simulate(args),
        Command::Probe(args) => probe::probe(args),
        Command::ProbeClient(args) => probe::client(args),
        Command::Export(command) => export::export(command),
        Command::Serve(args) => serve::serve(args),
        Command::Drive(args) => drive::drive(args),
        Command::Report(args) => report::report(args),
        Command::Import(args) => import::import(args),
    };
    Outcome::exit_code(result)
}
