//! The `retrylint` command line: parses arguments, calls the library, prints, and
//! maps outcomes to exit codes (0 clean, 1 findings or broken expectations, 2
//! invalid input or usage).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use retrylint::chaos;
use retrylint::faults;
use retrylint::lint::{self, CliLevels, Level, ResolveError, Severity};
use retrylint::report::{self, CheckFormat, Style};
use retrylint::run::{Expectation, LoadSettings, RunReport, evaluate_all};
use retrylint::sim;
use retrylint::topology::{self, ErrorKind, LoadError, Presets};

/// Finds retry storms before production does.
///
/// Reads a YAML topology of services, the calls between them and every retry
/// layer (app, SDK, mesh sidecar), and reports amplification, unsafe retries,
/// deadline overruns and missing jitter, budgets and timeouts.
#[derive(Parser)]
#[command(name = "retrylint", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Statically check a topology for retry hazards (exit 1 on findings at or
    /// above --fail-on).
    Check(CheckArgs),
    /// List the rules: code, name, default level and summary.
    Rules,
    /// Print a rule's documentation.
    Explain {
        /// A rule code (RL003) or name (non-idempotent-retry).
        code: String,
    },
    /// Boot the topology as real HTTP servers on 127.0.0.1, inject a fault,
    /// drive load through it and measure the storm (exit 1 on a broken --expect).
    Chaos(ChaosArgs),
    /// Run the same scenario as `chaos` in virtual time: seeded, reproducible,
    /// thousands of trials in a second. Several topologies give one comparison
    /// row each (exit 1 on a broken --expect).
    Simulate(SimulateArgs),
}

#[derive(Args)]
struct ChaosArgs {
    /// The topology file (schema version 1).
    topology: PathBuf,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Args)]
struct SimulateArgs {
    /// The topology file; several compare their policies under one scenario.
    #[arg(required = true, num_args = 1..)]
    topologies: Vec<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
    /// Seeded trials (trial i uses seed + i); figures are medians and quantiles
    /// over them, a single trial reports exact counts.
    #[arg(long, default_value_t = 100, value_name = "K")]
    trials: u32,
    /// Threads to spread trials over [default: all cores]; results do not
    /// depend on it.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

/// The scenario and load of a `chaos` or `simulate` run.
#[derive(Args)]
struct RunArgs {
    /// A shipped fault scenario (503-burst, total-outage, latency-spike,
    /// throttle-429, connection-reset, brownout, overload, flapping, blackhole;
    /// none for a baseline) or the path of a scenario file.
    #[arg(long, default_value = "503-burst", value_name = "NAME|PATH")]
    fault: String,
    /// Inject into this service instead of the scenario's target (a service
    /// name, `entry`, `leaves` or `all`).
    #[arg(long, value_name = "SERVICE")]
    target: Option<String>,
    /// Open loop: user requests per second (`50`, `50/s`, `3000/m`) [default: 20/s].
    #[arg(long, value_name = "R", conflicts_with = "clients")]
    rate: Option<String>,
    /// Closed loop: this many callers, each sending its next request when the
    /// previous one finished.
    #[arg(long, value_name = "N")]
    clients: Option<u32>,
    /// Send at most this many user requests in total.
    #[arg(long, value_name = "M")]
    requests: Option<u64>,
    /// No attempt starts after this time (`10s`) [default: 5s, or 60s with --requests].
    #[arg(long, value_name = "D")]
    duration: Option<String>,
    /// Seed of every random draw: the same seed replays the same run.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Output format [default: table].
    #[arg(long, value_enum)]
    format: Option<RunFormat>,
    /// A CI gate such as `amplification(db) <= 3`, `success >= 0.99`,
    /// `p99 <= 500ms`, `duplicates == 0`; repeatable, any broken → exit 1.
    #[arg(long, value_name = "EXPR")]
    expect: Vec<String>,
    /// More retry-policy presets: a directory of NAME.yaml files.
    #[arg(long, value_name = "DIR")]
    policies: Vec<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum RunFormat {
    /// A per-service table (measured beside predicted), histograms and a timeline.
    Table,
    /// A PR comment.
    Markdown,
    /// DESIGN's JSON contract.
    Json,
}

#[derive(Args)]
struct CheckArgs {
    /// The topology file (schema version 1).
    topology: PathBuf,
    /// Output format [default: table].
    #[arg(long, value_enum)]
    format: Option<CheckFormat>,
    /// Report these rules as errors (code or name; repeat or separate by commas).
    #[arg(long, value_name = "CODE", value_delimiter = ',')]
    deny: Vec<String>,
    /// Report these rules as warnings.
    #[arg(long, value_name = "CODE", value_delimiter = ',')]
    warn: Vec<String>,
    /// Do not report these rules.
    #[arg(long, value_name = "CODE", value_delimiter = ',')]
    allow: Vec<String>,
    /// Fail (exit 1) on findings at or above this level [default: error].
    #[arg(long, value_enum)]
    fail_on: Option<FailOn>,
    /// RL001 fires above this worst-case amplification [default: 10].
    #[arg(long, value_name = "N")]
    max_amplification: Option<f64>,
    /// More retry-policy presets: a directory of NAME.yaml files.
    #[arg(long, value_name = "DIR")]
    policies: Vec<PathBuf>,
    /// Exit 0 even when findings reach --fail-on (report without gating).
    #[arg(long)]
    exit_zero: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum FailOn {
    Error,
    Warning,
    Info,
}

/// How a command ended, mapped to the documented exit codes.
enum Outcome {
    Clean,
    Failed,
    Interrupted,
}

/// An error that is the user's input, not a bug: exit 2.
enum Failure {
    Input(Box<LoadError>, Option<String>),
    Usage(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => check(args),
        Command::Rules => rules(),
        Command::Explain { code } => explain(&code),
        Command::Chaos(args) => chaos(args),
        Command::Simulate(args) => simulate(args),
    };
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(1),
        // 128 + SIGINT, as shells report a Ctrl-C.
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(Failure::Input(e, source)) => {
            let color = std::io::stderr().is_terminal();
            eprint!("{}", report::error::render(&e, source.as_deref(), color));
            ExitCode::from(2)
        }
        Err(Failure::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn load_error(e: LoadError) -> Failure {
    // The source, for the caret under the culprit: read again within the size
    // limit, and not at all when reading it was the problem.
    let source = match (e.kind, e.pos) {
        (ErrorKind::Io, _) | (_, None) => None,
        _ => retrylint::source::read::read_text(
            std::path::Path::new(&e.file),
            &e.file,
            retrylint::source::read::FileKind::Topology,
        )
        .ok(),
    };
    Failure::Input(Box::new(e), source)
}

/// The embedded presets plus those of every `--policies DIR`.
fn presets(dirs: &[PathBuf]) -> Result<Presets, Failure> {
    let mut presets = Presets::embedded();
    for dir in dirs {
        presets.add_dir(dir).map_err(load_error)?;
    }
    Ok(presets)
}

fn check(args: CheckArgs) -> Result<Outcome, Failure> {
    let presets = presets(&args.policies)?;
    let t = topology::load(&args.topology, &presets).map_err(load_error)?;
    let mut levels = Vec::new();
    // Applied in this order, so --deny wins over --warn over --allow.
    for (codes, level) in [
        (&args.allow, Level::Allow),
        (&args.warn, Level::Report(Severity::Warning)),
        (&args.deny, Level::Report(Severity::Error)),
    ] {
        levels.extend(codes.iter().map(|c| (c.clone(), level)));
    }
    if let Some(m) = args.max_amplification
        && !(m.is_finite() && m >= 1.0)
    {
        return Err(Failure::Usage(format!(
            "--max-amplification {m} must be a number of at least 1"
        )));
    }
    let cli = CliLevels {
        levels,
        fail_on: args.fail_on.map(|f| match f {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
            FailOn::Info => Severity::Info,
        }),
        max_amplification: args.max_amplification,
    };
    let config = lint::Config::resolve(&t, &cli).map_err(|e| match e {
        ResolveError::Topology(e) => Failure::Input(Box::new(e), Some(t.source.clone())),
        ResolveError::Cli(e) => Failure::Usage(e.to_string()),
    })?;
    let report = lint::check(&t, &config);
    let style = Style {
        color: std::io::stdout().is_terminal(),
    };
    emit(&report::render_check(
        args.format.unwrap_or(CheckFormat::Table),
        &report,
        style,
    ));
    Ok(if report.failed() && !args.exit_zero {
        Outcome::Failed
    } else {
        Outcome::Clean
    })
}

fn rules() -> Result<Outcome, Failure> {
    emit(&report::rules::list(lint::RULES));
    Ok(Outcome::Clean)
}

fn explain(code: &str) -> Result<Outcome, Failure> {
    match lint::rules::find_rule(code) {
        Some(i) => {
            emit(&report::rules::explain(lint::RULES[i]));
            Ok(Outcome::Clean)
        }
        None => Err(Failure::Usage(format!(
            "unknown rule `{code}`; `retrylint rules` lists them"
        ))),
    }
}

/// What a `chaos` or `simulate` run needs before it starts.
struct Prepared {
    presets: Presets,
    scenario: faults::Scenario,
    load: LoadSettings,
    gates: Vec<Expectation>,
}

fn prepare(args: &RunArgs) -> Result<Prepared, Failure> {
    let presets = presets(&args.policies)?;
    let mut scenario = faults::load(&args.fault).map_err(load_error)?;
    if let Some(target) = &args.target {
        scenario.target = target
            .parse()
            .map_err(|e| Failure::Usage(format!("--target {target}: {e}")))?;
        scenario.target_at = None;
    }
    let rate = args
        .rate
        .as_deref()
        .map(LoadSettings::parse_rate)
        .transpose()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let duration = args
        .duration
        .as_deref()
        .map(|d| {
            retrylint::source::duration::parse(d)
                .map_err(|e| Failure::Usage(format!("--duration: {e}")))
        })
        .transpose()?;
    let load = LoadSettings::new(rate, args.clients, args.requests, duration, args.seed)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let gates = args
        .expect
        .iter()
        .map(|e| Expectation::parse(e).map_err(|err| Failure::Usage(err.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Prepared {
        presets,
        scenario,
        load,
        gates,
    })
}

/// Loads a topology the scenario can strike and the gates can name.
fn load_target(path: &std::path::Path, p: &Prepared) -> Result<topology::Topology, Failure> {
    let t = topology::load(path, &p.presets).map_err(load_error)?;
    for gate in &p.gates {
        gate.check_service(t.services.iter().map(|s| s.name.as_str()))
            .map_err(|e| Failure::Usage(e.to_string()))?;
    }
    p.scenario.plan(&t).map_err(|e| match e.located() {
        Some(located) => load_error(located),
        None => Failure::Usage(e.to_string()),
    })?;
    Ok(t)
}

/// Evaluates the gates, prints the report and maps the result to an outcome.
fn finish(
    mut report: RunReport,
    gates: &[Expectation],
    format: Option<RunFormat>,
    interrupted: bool,
) -> Result<Outcome, Failure> {
    let held = evaluate_all(&mut report, gates).map_err(|e| Failure::Usage(e.to_string()))?;
    emit(&match format.unwrap_or(RunFormat::Table) {
        RunFormat::Table => report::run_table::render(&report),
        RunFormat::Markdown => report::run_markdown::render(&report),
        RunFormat::Json => report::run_json::render(&report),
    });
    Ok(if interrupted {
        Outcome::Interrupted
    } else if held {
        Outcome::Clean
    } else {
        Outcome::Failed
    })
}

fn chaos(args: ChaosArgs) -> Result<Outcome, Failure> {
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

fn simulate(args: SimulateArgs) -> Result<Outcome, Failure> {
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
        let report =
            sim::run(t, &p.scenario, &p.load, args.trials, args.threads).map_err(sim_error)?;
        return finish(report, &p.gates, args.run.format, false);
    }
    let refs: Vec<&topology::Topology> = topologies.iter().collect();
    let rows =
        sim::compare(&refs, &p.scenario, &p.load, args.trials, args.threads).map_err(sim_error)?;
    emit(&match args.run.format.unwrap_or(RunFormat::Table) {
        RunFormat::Table => report::sim_compare_table::render(&rows),
        RunFormat::Markdown => report::sim_compare_markdown::render(&rows),
        RunFormat::Json => report::sim_compare_json::render(&rows, p.load.seed),
    });
    Ok(Outcome::Clean)
}
