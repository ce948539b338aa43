//! Output formats: one file per format, behind one trait ([`Reporter`]). Reporters take plain
//! result structs and only format; they never compute findings or figures.

pub mod check;
pub mod compare;
pub mod error;
pub mod figures;
pub(crate) mod grid;
pub mod probe;
pub mod review;
pub mod rules;
pub mod run;
pub mod snippet;

use std::io::{self, Write};

use crate::lint::CheckReport;

pub use probe::{ProbeFormat, render_probe};
pub use review::{ReviewFormat, render_review};
pub(crate) use run::formats::Comparison;
pub use run::formats::{RunFormat, render_run};
pub use run::formats::{render_comparison, render_sweep};

/// How `check` results can be printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckFormat {
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
    /// One line per finding with its route from the entry, for logs.
    Short,
}

/// Options every format may use.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style<'a> {
    /// ANSI colours (a terminal); off in pipes, CI logs and snapshots.
    pub color: bool,
    /// Where a file's lines are on the web (`https://github.com/o/r/blob/SHA`):
    /// the Markdown comment links each location to its line.
    pub link_base: Option<&'a str>,
}

/// One format of the results `T` of a command (`CheckReport`, `RunReport`,
/// `SweepReport`, [`run::formats::Comparison`], `ProbeReport`, `Review`):
/// each is a unit struct in its own file, picked by the command's format
/// enum here.
pub(crate) trait Reporter<T: ?Sized> {
    fn render(&self, report: &T, style: Style<'_>) -> String;

    /// Writes the rendering to `out`. A format whose output grows with the
    /// results writes it as it goes, so that its memory does not.
    fn write(&self, report: &T, style: Style<'_>, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(self.render(report, style).as_bytes())
    }
}

fn reporter(format: CheckFormat) -> &'static dyn Reporter<CheckReport> {
    match format {
        CheckFormat::Table => &check::table::Table,
        CheckFormat::Markdown => &check::markdown::Markdown,
        CheckFormat::Json => &check::json::Json,
        CheckFormat::Sarif => &check::sarif::Sarif,
        CheckFormat::Github => &check::github::Github,
        CheckFormat::Short => &check::short::Short,
    }
}

/// Renders `report` in `format`.
pub fn render_check(format: CheckFormat, report: &CheckReport, style: Style<'_>) -> String {
    let escaped = for_people(format, report);
    reporter(format).render(escaped.as_ref().unwrap_or(report), style)
}

/// The report with control characters escaped, for the formats people read;
/// `None` when it has none or the format's encoder escapes them itself.
fn for_people(format: CheckFormat, report: &CheckReport) -> Option<CheckReport> {
    match format {
        CheckFormat::Table | CheckFormat::Markdown | CheckFormat::Github | CheckFormat::Short => {
            check::shown::escaped(report)
        }
        CheckFormat::Json | CheckFormat::Sarif => None,
    }
}

/// Writes `report` in `format` to `out`, as it is produced.
pub fn write_check(
    format: CheckFormat,
    report: &CheckReport,
    style: Style<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let escaped = for_people(format, report);
    reporter(format).write(escaped.as_ref().unwrap_or(report), style, out)
}
