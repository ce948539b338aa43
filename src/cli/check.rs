//! `retrylint check`: static analysis of a topology.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::outcome::{Failure, Outcome, emit, emit_with, presets};
use super::values::at_least;
use retrylint::fix::{self, FixError};
use retrylint::formats::{self, CheckFormat, Style};
use retrylint::lint::{self, CheckReport, CliLevels, Level, ResolveError, Severity};
use retrylint::topology::{Presets, Topology};

#[derive(Args)]
pub struct CheckArgs {
    /// The topology file (schema version 1); `-` reads standard input.
    /// Optional when `--from` gives a call graph (a trace export).
    pub topology: Option<PathBuf>,
    #[command(flatten)]
    pub sources: super::sources::SourceArgs,
    /// Check from this entry alone [default: every entry, each service's
    /// figures the worst over them].
    #[arg(long, value_name = "NAME")]
    pub entry: Option<String>,
    /// Output format [default: table].
    #[arg(long, value_enum)]
    format: Option<Format>,
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
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least(1.0))]
    max_amplification: Option<f64>,
    /// More retry-policy presets: a directory of NAME.yaml files.
    #[arg(long, value_name = "DIR")]
    policies: Vec<PathBuf>,
    /// Exit 0 even when findings reach --fail-on (report without gating).
    #[arg(long)]
    exit_zero: bool,
    /// Apply the findings' fixes to the topology file in place (atomically),
    /// keeping comments, key order and indentation; repeated until nothing
    /// more changes. What was fixed and what was skipped (with the reason:
    /// a preset's value, an anchor used elsewhere, colliding edits) goes to
    /// stderr; stdout shows the check of the fixed file, and the exit code
    /// is that check's (1 when findings left after fixing reach --fail-on).
    #[arg(long)]
    fix: bool,
    /// With --fix: print the change as a unified diff on stdout and write
    /// nothing (apply it with `patch -p0`); the exit code is still the check
    /// of the fixed text.
    #[arg(long, requires = "fix")]
    diff: bool,
    /// With --format markdown: link each location to its line under this URL
    /// (e.g. https://github.com/ORG/REPO/blob/SHA; paths are relative to the
    /// current directory). Default in GitHub Actions: GITHUB_SERVER_URL,
    /// GITHUB_REPOSITORY and GITHUB_SHA, with the directory below
    /// GITHUB_WORKSPACE.
    #[arg(long, value_name = "URL")]
    link_base: Option<String>,
}

/// `--link-base`, or the line links GitHub Actions' environment gives.
fn link_base(flag: Option<String>) -> Option<String> {
    if flag.is_some() {
        return flag;
    }
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let (server, repo, sha) = (
        var("GITHUB_SERVER_URL")?,
        var("GITHUB_REPOSITORY")?,
        var("GITHUB_SHA")?,
    );
    let mut base = format!("{}/{repo}/blob/{sha}", server.trim_end_matches('/'));
    // Paths are relative to the current directory; the links to the
    // repository's root.
    if let (Some(root), Ok(cwd)) = (var("GITHUB_WORKSPACE"), std::env::current_dir()) {
        match cwd.strip_prefix(&root) {
            Ok(below) => {
                for part in below.components() {
                    base.push('/');
                    base.push_str(&part.as_os_str().to_string_lossy());
                }
            }
            // Outside the checkout: a link would point at the wrong file.
            Err(_) => return None,
        }
    }
    Some(base)
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Info,
}

/// How `check` results are printed (the CLI's names for `formats::CheckFormat`).
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Findings with the YAML line and a caret under the culprit, then the
    /// amplification table.
    Table,
    /// A PR comment: verdict, findings, amplification, mermaid graph.
    Markdown,
    /// The JSON contract (docs/json.md).
    Json,
    /// SARIF 2.1.0 for code-scanning UIs.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// One line per finding, `file:line:column: severity[CODE] route: message`,
    /// the route from the entry down to it; for logs.
    Short,
}

impl From<Format> for CheckFormat {
    fn from(f: Format) -> Self {
        match f {
            Format::Table => CheckFormat::Table,
            Format::Markdown => CheckFormat::Markdown,
            Format::Json => CheckFormat::Json,
            Format::Sarif => CheckFormat::Sarif,
            Format::Github => CheckFormat::Github,
            Format::Short => CheckFormat::Short,
        }
    }
}

pub fn check(args: CheckArgs) -> Result<Outcome, Failure> {
    let sarif = matches!(args.format, Some(Format::Sarif));
    let file = args
        .topology
        .as_ref()
        .or(args.sources.from.first())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let result = check_or_fail(args);
    // Code scanning reads the SARIF file whatever the exit code: an input
    // error goes there too, never as an empty file (stderr still has it).
    if sarif && let Err(failure) = &result {
        let log = match failure {
            Failure::Input(e, _) => formats::check::sarif::invalid_input(
                &e.file,
                e.pos.map(|p| (p.line, p.column)),
                &e.to_string(),
            ),
            Failure::Usage(msg) => formats::check::sarif::invalid_input(&file, None, msg),
        };
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&log).unwrap_or_default()
        ));
    }
    result
}

fn check_or_fail(args: CheckArgs) -> Result<Outcome, Failure> {
    let presets = presets(&args.policies)?;
    let stdin = args.topology.as_ref().is_some_and(|p| p.as_os_str() == "-");
    let fix_target = match (&args.topology, args.fix) {
        (_, false) => None,
        (None, true) => {
            return Err(Failure::Usage(
                "--fix edits a topology file: name one (imported sources are not edited)".into(),
            ));
        }
        (Some(_), true) if !args.sources.from.is_empty() => {
            return Err(Failure::Usage(
                "--fix edits the topology file alone: run it without --from (imported sources are not edited)".into(),
            ));
        }
        (Some(_), true) if stdin && !args.diff => {
            return Err(Failure::Usage(
                "--fix writes the topology file in place; with standard input use --fix --diff"
                    .into(),
            ));
        }
        (Some(p), true) => Some(p.clone()),
    };
    let merged = super::sources::load(args.topology.as_deref(), &args.sources, &presets)?;
    let mut t = merged.topology;
    if let Some(name) = args.entry.as_deref() {
        // The fixes are judged on the file as written, every entry in it.
        if fix_target.is_some() {
            return Err(Failure::Usage(
                "--fix fixes the file for every entry it has: leave out --entry".into(),
            ));
        }
        t.choose_entry(Some(name))
            .map_err(|e| Failure::Usage(format!("--entry {name}: {e}")))?;
    }
    lint::affordable(&t).map_err(|e| Failure::Usage(e.to_string()))?;
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
    let format = args.format.map_or(CheckFormat::Table, CheckFormat::from);
    let mut config = lint::Config::resolve(&t, &cli).map_err(|e| match e {
        ResolveError::Topology(e) => Failure::Input(Box::new(e), Some(t.source.to_string())),
        ResolveError::Cli(e) => Failure::Usage(e.to_string()),
    })?;
    config.resolve_fixes = matches!(format, CheckFormat::Json | CheckFormat::Sarif);
    let report = if let Some(path) = &fix_target {
        let default_name = default_name(path);
        let fixed = fix_file(&args, path, &t, &default_name, &presets, &cli)?;
        if args.diff {
            let code = if fixed.failed() && !args.exit_zero {
                Outcome::Failed
            } else {
                Outcome::Clean
            };
            return Ok(code);
        }
        fixed
    } else {
        // The located tree is read again only to resolve fixes. A large
        // topology's is tens of megabytes: freed first, the findings reuse
        // its memory instead of asking the kernel for more (peak 147 MB on
        // the 10,000-service bench file; 224 MB kept, benches/RESULTS.md).
        if !config.resolve_fixes {
            drop(t.located.take());
        }
        let mut report = fix::check(&t, &config);
        if format == CheckFormat::Sarif && args.sources.from.is_empty() {
            judge_offered_fixes(&args, &t, &mut report, &presets, &cli);
        }
        report
    };
    let links = link_base(args.link_base.clone());
    let style = Style {
        color: std::io::stdout().is_terminal(),
        link_base: links.as_deref(),
    };
    emit_with(|out| formats::write_check(format, &report, style, out));
    for (from, to, mean, most, calls) in &merged.measured {
        let predicted = report
            .edges
            .iter()
            .find(|e| &e.from == from && &e.to == to)
            .map_or(0.0, |e| e.attempts);
        eprintln!(
            "traces: {from} → {to}: {mean:.2} attempts per call seen (at most {most}, over {calls} calls); at most {predicted} predicted"
        );
    }
    let outcome = if report.failed() && !args.exit_zero {
        Outcome::Failed
    } else {
        Outcome::Clean
    };
    Ok(outcome)
}

/// SARIF's `fixes` are offered to be applied as they are (code scanning
/// shows them as autofixes): judged first, as `--fix` judges its own, and
/// a fix the simulation measures worse is left out with its reason on
/// stderr. Costs a few seeded simulations, only when a fix is offered.
fn judge_offered_fixes(
    args: &CheckArgs,
    t: &Topology,
    report: &mut CheckReport,
    presets: &Presets,
    cli: &CliLevels,
) {
    let offered = report.findings.iter().any(|f| {
        f.fix
            .as_ref()
            .is_some_and(|x| x.refused.is_none() && !x.edits.is_empty())
    });
    if !offered {
        return;
    }
    let Some(path) = &args.topology else { return };
    let default_name = default_name(path);
    match fix::fix_judged(&t.source, &t.file, &default_name, presets, cli) {
        Ok(judged) => {
            if let Some(why) = &judged.unjudged {
                eprintln!(
                    "note: the SARIF fixes could not be judged by simulation ({why}); they are offered as the rules propose them"
                );
            }
            let held = fix::withhold(&mut report.findings, &judged.withheld);
            if held > 0 {
                eprintln!(
                    "note: {held} fix{} left out of the SARIF: with {}, the simulation measured the topology worse (`retrylint check --fix --diff` says how)",
                    if held == 1 { "" } else { "es" },
                    if held == 1 { "it" } else { "them" }
                );
            }
        }
        Err(e) => eprintln!(
            "note: the SARIF fixes could not be judged ({e}); they are offered as the rules propose them"
        ),
    }
}

/// The name a topology without `name:` gets, as its loader gave it: the
/// file's stem, or `stdin`.
fn default_name(path: &std::path::Path) -> String {
    if path.as_os_str() == "-" {
        "stdin".to_owned()
    } else {
        path.file_stem()
            .map_or_else(|| "topology".into(), |s| s.to_string_lossy().into_owned())
    }
}

/// Fixes `t`'s text, then writes it in place or prints the diff; tells on
/// stderr what was fixed and what was skipped. Returns the fixed text's
/// check.
fn fix_file(
    args: &CheckArgs,
    path: &std::path::Path,
    t: &Topology,
    default_name: &str,
    presets: &Presets,
    cli: &CliLevels,
) -> Result<CheckReport, Failure> {
    let input = |e: FixError, text: &str| match e {
        FixError::Load(e) | FixError::Levels(ResolveError::Topology(e)) => {
            Failure::Input(Box::new(e), Some(text.to_owned()))
        }
        FixError::Levels(ResolveError::Cli(e)) => Failure::Usage(e.to_string()),
        e @ FixError::Broke { .. } => Failure::Usage(e.to_string()),
    };
    let judged = fix::fix_judged(&t.source, &t.file, default_name, presets, cli)
        .map_err(|e| input(e, &t.source))?;
    if let Some(why) = &judged.unjudged {
        eprintln!(
            "note: the fixes could not be judged by simulation ({why}); they are made as the rules propose them: check them with `retrylint simulate`"
        );
    }
    let mut run = judged.run;
    run.skipped.extend(judged.withheld);
    let (_, report) = fix::check_text(&run.text, &t.file, default_name, presets, cli)
        .map_err(|e| input(e, &run.text))?;
    if args.diff {
        emit(&fix::unified(&t.file, &t.source, &run.text));
    } else if run.changed() {
        let written = fix::write_atomically(path, &t.source, &run.text).map_err(|e| match e {
            fix::WriteError::Changed(_) => Failure::Usage(e.to_string()),
            fix::WriteError::Io(e) => Failure::Usage(format!(
                "cannot write the fixed topology to {}: {e}",
                t.file
            )),
        })?;
        if let Some(target) = &written.through_link {
            eprintln!(
                "note: {} is a link: its target {} was fixed",
                t.file,
                target.display()
            );
        }
        if written.other_links > 0 {
            eprintln!(
                "note: {} had {} other hard link(s): they keep the old text (the fixed file replaces this name only)",
                t.file, written.other_links
            );
        }
    }
    let summary = fix::summary(&run, &t.file, args.diff);
    eprint!("{summary}");
    Ok(report)
}
