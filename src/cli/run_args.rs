//! What `chaos` and `simulate` share: the scenario and load flags, the
//! preparation before a run, and printing a run's report under its gates.

use std::path::PathBuf;

use clap::Args;

use super::outcome::{Failure, Outcome, emit, load_error, presets};
use super::values::whole;
use retrylint::faults;
use retrylint::formats;
use retrylint::input::duration::format as format_duration;
use retrylint::run::{Expectation, LoadSettings, RunReport, evaluate_all};
use retrylint::topology::{self, Presets};

/// The scenario and load of a `chaos` or `simulate` run.
#[derive(Args)]
pub struct RunArgs {
    /// A shipped fault scenario (503-burst, total-outage, latency-spike,
    /// throttle-429, connection-reset, brownout, overload, flapping, blackhole;
    /// none for a baseline) or the path of a scenario file.
    #[arg(long, default_value = "503-burst", value_name = "NAME|PATH")]
    pub fault: String,
    #[command(flatten)]
    pub load: LoadArgs,
    /// Seed of every random draw: the same seed replays the same run.
    #[arg(long, value_name = "S", allow_negative_numbers = true,
          value_parser = whole(0u64, u64::MAX))]
    pub seed: Option<u64>,
    /// Output format [default: table].
    #[arg(long, value_enum)]
    pub format: Option<RunFormat>,
    /// A CI gate such as `amplification(db) <= 3`, `success >= 0.99`,
    /// `p99 <= 500ms`, `duplicates == 0`; repeatable, any broken → exit 1.
    #[arg(long, value_name = "EXPR")]
    pub expect: Vec<String>,
    /// More retry-policy presets: a directory of NAME.yaml files.
    #[arg(long, value_name = "DIR")]
    pub policies: Vec<PathBuf>,
    /// Open loop: how user requests arrive at the rate [default: uniform].
    #[arg(long, value_enum, conflicts_with = "clients")]
    pub arrivals: Option<Arrivals>,
    #[command(flatten)]
    pub sources: super::sources::SourceArgs,
}

/// How a run's report is printed (the CLI's names for `formats::RunFormat`).
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum RunFormat {
    /// A per-service table (measured beside predicted), histograms and a timeline.
    Table,
    /// A PR comment.
    Markdown,
    /// The JSON contract (docs/json.md).
    Json,
}

/// Where the fault strikes and the load that meets it: the flags `chaos`,
/// `simulate` and `report` share, and their one reading.
#[derive(Args, Clone, Default)]
pub struct LoadArgs {
    /// Inject into this service instead of the scenario's target (a service
    /// name, `entry`, `leaves` or `all`).
    #[arg(long, value_name = "SERVICE")]
    pub target: Option<String>,
    /// Open loop: user requests per second (`50`, `50/s`, `3000/m`) [default: 20/s].
    #[arg(
        long,
        value_name = "R",
        conflicts_with = "clients",
        allow_hyphen_values = true
    )]
    pub rate: Option<String>,
    /// Closed loop: this many callers, each sending its next request when the
    /// previous one finished.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = whole(1u32, u32::MAX))]
    pub clients: Option<u32>,
    /// Send at most this many user requests in total.
    #[arg(long, value_name = "M", allow_negative_numbers = true,
          value_parser = whole(1u64, u64::MAX))]
    pub requests: Option<u64>,
    /// No attempt starts after this time (`10s`) [default: 5s, or 60s with --requests].
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub duration: Option<String>,
}

impl LoadArgs {
    /// `scenario` struck where `--target` says, when it says.
    pub fn retarget(&self, scenario: &mut faults::Scenario) -> Result<(), Failure> {
        if let Some(target) = &self.target {
            scenario.target = target
                .parse()
                .map_err(|e| Failure::Usage(format!("--target {target}: {e}")))?;
            scenario.target_at = None;
        }
        Ok(())
    }

    /// The load the flags describe, with `seed`; a surge in `scenario`
    /// needs a rate to raise, so closed loop is refused before anything runs.
    pub fn settings(
        &self,
        seed: Option<u64>,
        scenario: &faults::Scenario,
    ) -> Result<LoadSettings, Failure> {
        let rate = self
            .rate
            .as_deref()
            .map(LoadSettings::parse_rate)
            .transpose()
            .map_err(|e| Failure::Usage(e.to_string()))?;
        let duration = self
            .duration
            .as_deref()
            .map(|d| {
                retrylint::input::duration::parse(d).map_err(|e| {
                    Failure::Usage(if d.trim().starts_with('-') {
                        format!(
                            "--duration `{d}` is negative; write a time above 0, e.g. `--duration 5s`"
                        )
                    } else {
                        format!("--duration: {e}")
                    })
                })
            })
            .transpose()?;
        let load = LoadSettings::new(rate, self.clients, self.requests, duration, seed)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        if load.clients().is_some()
            && scenario
                .phases
                .iter()
                .any(|p| matches!(p.inject, retrylint::faults::Inject::Surge(_)))
        {
            return Err(Failure::Usage(
                retrylint::run::arrivals::SurgeNeedsRate.to_string(),
            ));
        }
        Ok(load)
    }

    /// The flags as given, for a command line that reproduces the run
    /// (` --target db --rate 50`; empty when none was given).
    pub fn flags(&self) -> String {
        let mut c = String::new();
        if let Some(t) = &self.target {
            c.push_str(&format!(" --target {t}"));
        }
        if let Some(r) = &self.rate {
            c.push_str(&format!(" --rate {r}"));
        }
        if let Some(n) = self.clients {
            c.push_str(&format!(" --clients {n}"));
        }
        if let Some(m) = self.requests {
            c.push_str(&format!(" --requests {m}"));
        }
        if let Some(d) = &self.duration {
            c.push_str(&format!(" --duration {d}"));
        }
        c
    }
}

/// What a `chaos` or `simulate` run needs before it starts.
pub struct Prepared {
    pub presets: Presets,
    pub scenario: faults::Scenario,
    pub load: LoadSettings,
    pub gates: Vec<Expectation>,
    pub sources: super::sources::SourceArgs,
}

pub fn prepare(args: &RunArgs) -> Result<Prepared, Failure> {
    let presets = presets(&args.policies)?;
    let mut scenario = faults::load(&args.fault).map_err(load_error)?;
    args.load.retarget(&mut scenario)?;
    let mut load = args.load.settings(args.seed, &scenario)?;
    if let Some(Arrivals::Poisson) = args.arrivals {
        load.process = retrylint::run::arrivals::Process::Poisson;
    }
    // A run that ends before its fault starts injects nothing and would
    // report the healthy topology under the fault's name.
    if let (Some(duration), Some((start, end))) = (load.duration, scenario.window())
        && duration <= start
    {
        return Err(Failure::Usage(format!(
            "--duration {} ends before the fault `{}` starts (at {}): nothing would be injected; run for at least {} (the fault's end), or pick another --fault",
            format_duration(duration),
            scenario.name,
            format_duration(start),
            format_duration(end)
        )));
    }
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
        sources: args.sources.clone(),
    })
}

/// Loads a topology the scenario can strike and the gates can name: `path`
/// with the `--from` sources merged in, or (`None`) the sources alone when
/// they give a call graph, as `check` does.
pub fn load_target(
    path: Option<&std::path::Path>,
    p: &Prepared,
    entry: EntryFlag<'_>,
) -> Result<topology::Topology, Failure> {
    let mut t = super::sources::load(path, &p.sources, &p.presets)?.topology;
    entry.choose(&mut t)?;
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

/// The entry a run drives, as its command takes it: a run sends each user
/// request to one service, so a topology with several entries needs one
/// named (splitting the load among them would guess the traffic mix).
#[derive(Clone, Copy)]
pub struct EntryFlag<'a> {
    /// The name given, if any.
    pub name: Option<&'a str>,
    /// The flag that gives it: `--entry` (`drive` has its URL there).
    pub flag: &'static str,
    /// The command, for the message.
    pub command: &'static str,
    /// Keep every entry, the one named first (`Topology::lead_entry`),
    /// for a command that passes the topology on whole.
    pub keep_others: bool,
}

impl<'a> EntryFlag<'a> {
    /// `--entry NAME` of `command`.
    pub fn entry(name: Option<&'a str>, command: &'static str) -> Self {
        EntryFlag {
            name,
            flag: "--entry",
            command,
            keep_others: false,
        }
    }

    /// Keeps the entry named (or the only one) in `t`.
    pub fn choose(&self, t: &mut topology::Topology) -> Result<(), Failure> {
        let chosen = match self.name {
            Some(name) if self.keep_others => t.lead_entry(name),
            name => t.choose_entry(name),
        };
        chosen.map_err(|e| {
            let flag = self.flag;
            Failure::Usage(match &e {
                topology::EntryChoiceError::Ambiguous { .. } => format!(
                    "{e}: `{}` drives one entry; name it with {flag} NAME (e.g. {flag} {})",
                    self.command, t.services[t.entries[0]].name
                ),
                topology::EntryChoiceError::NotAnEntry { name, .. } => {
                    format!("{flag} {name}: {e}")
                }
            })
        })?;
        Ok(())
    }

    /// The entry to name in the run's report: the one chosen.
    pub fn shown(&self) -> Option<String> {
        self.name.map(str::to_owned)
    }
}

/// Evaluates the gates, prints the report and maps the result to an outcome.
pub fn finish(
    mut report: RunReport,
    gates: &[Expectation],
    format: Option<RunFormat>,
    interrupted: bool,
) -> Result<Outcome, Failure> {
    let held = evaluate_all(&mut report, gates).map_err(|e| Failure::Usage(e.to_string()))?;
    emit(&formats::render_run(
        format.map_or(formats::RunFormat::Table, Into::into),
        &report,
    ));
    Ok(Outcome::of_run(interrupted, held))
}

impl From<RunFormat> for formats::RunFormat {
    fn from(f: RunFormat) -> Self {
        match f {
            RunFormat::Table => formats::RunFormat::Table,
            RunFormat::Markdown => formats::RunFormat::Markdown,
            RunFormat::Json => formats::RunFormat::Json,
        }
    }
}

/// How open-loop user requests are spaced.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Arrivals {
    /// Evenly, at the rate.
    Uniform,
    /// A Poisson process at the rate: exponential gaps (seeded).
    Poisson,
}
