//! The `retrylint` command line: parses arguments, calls the library, prints, and
//! maps outcomes to exit codes (0 clean, 1 findings or broken expectations, 2
//! invalid input or usage).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use retrylint::lint::{self, CliLevels, Level, ResolveError, Severity};
use retrylint::report::{self, CheckFormat, Style};
use retrylint::topology::{self, LoadError, Presets};

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
    };
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(1),
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
    let source = std::fs::read_to_string(&e.file).ok();
    Failure::Input(Box::new(e), source)
}

fn check(args: CheckArgs) -> Result<Outcome, Failure> {
    let mut presets = Presets::embedded();
    for dir in &args.policies {
        presets.add_dir(dir).map_err(load_error)?;
    }
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
