//! `retrylint report`: the architecture review page (HTML) or its PR-comment
//! cut (markdown). Parses the flags, loads the inputs, and hands them to
//! `review::gather` and the formats.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::outcome::{Failure, Outcome, emit, load_error, presets};
use super::run_args::{EntryFlag, LoadArgs};
use super::values::whole;
use retrylint::faults;
use retrylint::formats::{self, review::comments as review_comments};
use retrylint::review::{self, Other, Settings};
use retrylint::run::LoadSettings;
use retrylint::topology;

#[derive(Args)]
pub struct ReportArgs {
    /// The topology file (schema version 1).
    pub topology: PathBuf,
    /// The fault scenario the storm is simulated under: a shipped name or a
    /// path [default: `503-burst`, the leaves answer 503 for 2 s;
    /// with --chaos, the run's scenario].
    #[arg(long, value_name = "NAME|PATH")]
    fault: Option<String>,
    /// A chaos run's JSON (`retrylint chaos … --format json > run.json`), set
    /// beside the prediction and the simulation.
    #[arg(long, value_name = "RUN.json")]
    chaos: Option<PathBuf>,
    /// Seed of the simulation (trial i uses seed + i) [default: 42, or the
    /// chaos run's seed].
    #[arg(long, value_name = "S", allow_negative_numbers = true,
          value_parser = whole(0u64, u64::MAX))]
    seed: Option<u64>,
    /// Where the fault strikes and the load of the simulation, as `simulate`
    /// takes them.
    #[command(flatten)]
    load: LoadArgs,
    /// Simulated trials; fewer when a large topology would not fit the page's
    /// work budget (the page says so).
    #[arg(long, default_value_t = review::DEFAULT_TRIALS, value_name = "N",
          allow_negative_numbers = true, value_parser = whole(1u32, 10_000))]
    trials: u32,
    /// Output format.
    #[arg(long, value_enum, default_value = "html")]
    format: Format,
    /// Where to write: a file, or `-` for standard output [default:
    /// review.html for html, standard output for markdown].
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// More retry-policy presets: a directory of NAME.yaml files.
    #[arg(long, value_name = "DIR")]
    policies: Vec<PathBuf>,
    /// A second topology shown side by side (the what-if), for development
    /// until `check --fix` supplies the fixed topology.
    #[arg(long, value_name = "OTHER.yaml", hide = true)]
    compare: Option<PathBuf>,
    /// With --format markdown: the topology file as it was before the change
    /// (e.g. `git show origin/main:topology.yaml > base.yaml`; an empty file
    /// for a new one). The fixes of findings on lines that differ from it
    /// are added as GitHub ```suggestion blocks; without --base, no
    /// suggestions.
    #[arg(long, value_name = "OLD.yaml")]
    base: Option<PathBuf>,
    /// With --base: also write the suggestions as one GitHub pull-request
    /// review (the JSON body of `POST /repos/OWNER/REPO/pulls/N/reviews`),
    /// one comment per suggestion on the lines it rewrites, where GitHub
    /// renders it with a "Commit suggestion" button.
    #[arg(long, value_name = "PATH", requires = "base")]
    review_comments: Option<PathBuf>,
    /// The entry service the simulated user requests go to; needed when
    /// the topology has several.
    #[arg(long, value_name = "NAME")]
    entry: Option<String>,
    /// Traces or metrics (and configuration) merged in as `check --from`
    /// merges them: the page sets the attempts they show beside the
    /// declared layers, with RL021 and RL022 among the findings. With
    /// --from the page has no what-if side (`check --fix` edits the file
    /// alone); --compare still gives one.
    #[command(flatten)]
    sources: super::sources::SourceArgs,
}

/// How the review is printed (the CLI's names for `formats::ReviewFormat`).
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One self-contained page: graph, findings, figures, the storm in time.
    Html,
    /// A PR comment: verdict, before/after table, mermaid graph (and
    /// suggestions, with --base).
    Markdown,
}

impl From<Format> for formats::ReviewFormat {
    fn from(f: Format) -> Self {
        match f {
            Format::Html => Self::Html,
            Format::Markdown => Self::Markdown,
        }
    }
}

pub fn report(mut args: ReportArgs) -> Result<Outcome, Failure> {
    if args.base.is_some() && args.format != Format::Markdown {
        return Err(Failure::Usage(
            "--base makes GitHub suggestions, which only the PR comment shows: add `--format markdown`".into(),
        ));
    }
    let presets = presets(&args.policies)?;
    let from = !args.sources.from.is_empty();
    let mut t = if from {
        super::sources::load(Some(&args.topology), &args.sources, &presets)?.topology
    } else {
        topology::load(&args.topology, &presets).map_err(load_error)?
    };
    EntryFlag::entry(args.entry.as_deref(), "report").choose(&mut t)?;
    let chaos = args
        .chaos
        .as_deref()
        .map(|p| {
            review::measured::read(p)
                .map(|run| (p.display().to_string(), run))
                .map_err(|e| Failure::Usage(e.to_string()))
        })
        .transpose()?;
    let (mut scenario, mut scenario_note) = match (&args.fault, &chaos) {
        (Some(f), _) => (faults::load(f).map_err(load_error)?, None),
        (None, Some((file, run))) => match faults::load(&run.fault) {
            Ok(s) => (s, Some(format!("the scenario of the chaos run in {file}"))),
            Err(_) => {
                let (s, why) = review::default_scenario(&t);
                (
                    s,
                    Some(format!(
                        "{why} (the chaos run's `{}` is not a shipped scenario)",
                        run.fault
                    )),
                )
            }
        },
        (None, None) => {
            let (s, why) = review::default_scenario(&t);
            (s, Some(why))
        }
    };
    args.load.retarget(&mut scenario)?;
    if let (Some(target), Some(note)) = (&args.load.target, scenario_note.as_mut()) {
        note.push_str(&format!("; --target moves the fault to `{target}`"));
    }
    scenario.plan(&t).map_err(|e| match e.located() {
        Some(located) => load_error(located),
        None => Failure::Usage(e.to_string()),
    })?;
    let seed = args
        .seed
        .or(chaos.as_ref().map(|(_, run)| run.seed))
        .unwrap_or(LoadSettings::DEFAULT_SEED);
    if args.load.duration.is_none()
        && args.load.requests.is_none()
        && let Some(duration) = review::covering(&scenario, LoadSettings::DEFAULT_DURATION)
    {
        // A fault that starts after the default run would draw a page with
        // no storm on it (the shipped `surge` begins at 20 s): run long
        // enough to see it, and whether goodput comes back after it.
        args.load.duration = Some(format!("{}s", duration.as_secs()));
        let note = format!(
            "the run lasts {} s to cover the fault and the time after it (--duration changes it)",
            duration.as_secs()
        );
        match scenario_note.as_mut() {
            Some(n) => n.push_str(&format!("; {note}")),
            None => scenario_note = Some(note),
        }
    }
    let load = args.load.settings(Some(seed), &scenario)?;

    // The second topology of the page: the one `--compare` names, or else
    // this one with every fix `check --fix` would make, applied in memory.
    let text = std::fs::read_to_string(&args.topology)
        .map_err(|e| Failure::Usage(format!("{}: {e}", args.topology.display())))?;
    let mut held_back = Vec::new();
    let compared = match args.compare.as_deref() {
        Some(p) => Some((
            topology::load(p, &presets).map_err(load_error)?,
            None::<String>,
        )),
        // The fixes would be judged on the file alone, without what the
        // sources add: set beside the merged model, they would compare
        // two different topologies.
        None if from => {
            eprintln!(
                "report: with --from, the page shows no what-if side (`check --fix` edits the topology file alone); --compare adds one"
            );
            None
        }
        None => {
            let stem = args
                .topology
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "topology".into());
            let what_if = retrylint::fix::what_if(&text, &t.file, &stem, &presets)
                .map_err(|e| Failure::Usage(e.to_string()))?;
            held_back = what_if.judged.withheld;
            what_if
                .fixed
                .map(|fixed| (fixed, Some("with the fixes applied".to_owned())))
        }
    };
    let other = compared.as_ref().map(|(c, label)| Other {
        topology: c,
        label: label
            .clone()
            .unwrap_or_else(|| format!("compare: {}", c.name)),
    });

    let fault = args.fault.clone().unwrap_or_else(|| scenario.name.clone());
    let command = command_line(&args, &fault, seed);
    let settings = Settings {
        scenario,
        scenario_note,
        load,
        trials: args.trials,
        budget: review::BUDGET,
        threads: None,
        command,
    };
    let chaos_ref = chaos.as_ref().map(|(f, run)| (f.as_str(), run));
    let mut page = review::gather(&t, other, &settings, chaos_ref)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    page.held_back = held_back;
    if let Some(base) = &args.base {
        let old = std::fs::read_to_string(base).map_err(|e| {
            Failure::Usage(format!(
                "{}: cannot read the base version: {e}; give the file as it was before the change (an empty file for a new one)",
                base.display()
            ))
        })?;
        // A fix the judgement held back is not suggested: a reviewer's
        // "Commit suggestion" would make it automatic.
        let mut findings = page.written().check.findings.clone();
        retrylint::fix::withhold(&mut findings, &page.held_back);
        page.suggestions = Some(review::suggestions::suggest(
            &base.display().to_string(),
            &old,
            &t.file,
            &text,
            &findings,
        ));
    }
    if let (Some(path), Some(s)) = (&args.review_comments, &page.suggestions) {
        write_file(path, &review_comments::render(s))?;
    }
    let text = formats::render_review(args.format.into(), &page);
    let output = match (&args.output, args.format) {
        (Some(p), _) => Some(p.clone()),
        (None, Format::Html) => Some(PathBuf::from("review.html")),
        (None, Format::Markdown) => None,
    };
    match output.filter(|p| p.as_os_str() != "-") {
        Some(path) => write_file(&path, &text)?,
        None => emit(&text),
    }
    Ok(Outcome::Clean)
}

fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| {
            Failure::Usage(format!(
                "{}: cannot write the report: {e}; give a writable path with -o",
                path.display()
            ))
        })?;
    eprintln!(
        "wrote {} ({} KB)",
        path.display(),
        text.len().div_ceil(1024)
    );
    Ok(())
}

/// The command that makes the same page, for its footer.
fn command_line(args: &ReportArgs, fault: &str, seed: u64) -> String {
    let mut c = format!(
        "retrylint report {} --fault {fault} --seed {seed} --trials {}",
        args.topology.display(),
        args.trials
    );
    c.push_str(&args.load.flags());
    if let Some(p) = &args.chaos {
        c.push_str(&format!(" --chaos {}", p.display()));
    }
    if let Some(p) = &args.compare {
        c.push_str(&format!(" --compare {}", p.display()));
    }
    for p in &args.sources.from {
        c.push_str(&format!(" --from {}", p.display()));
    }
    if let Some(caller) = &args.sources.metrics_caller {
        c.push_str(&format!(" --metrics-caller {caller}"));
    }
    for p in &args.policies {
        c.push_str(&format!(" --policies {}", p.display()));
    }
    if args.format == Format::Markdown {
        c.push_str(" --format markdown");
    }
    if let Some(p) = &args.base {
        c.push_str(&format!(" --base {}", p.display()));
    }
    c
}
