//! Output formats: one file per format, behind one trait. Reporters take plain
//! result structs and only format; they never compute findings or figures.

pub mod calibration;
pub mod error;
pub mod figures;
pub mod github;
mod grid;
pub mod html;
pub mod json;
pub mod markdown;
mod parallel;
pub mod probe_json;
pub mod probe_markdown;
pub mod probe_table;
pub mod review_comments;
pub mod review_markdown;
pub mod rules;
pub mod run_containment;
pub mod run_formats;
pub mod run_goodput;
pub mod run_json;
pub mod run_markdown;
pub mod run_table;
pub mod sarif;
pub mod short;
mod shown;
pub mod sim_compare_json;
pub mod sim_compare_markdown;
pub mod sim_compare_table;
pub mod snippet;
pub mod sweep_json;
pub mod sweep_markdown;
pub mod sweep_table;
pub mod table;

use std::io::{self, Write};

use crate::lint::CheckReport;

pub use run_formats::{RunFormat, render_comparison, render_run, render_sweep};

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

/// A format of `check` results.
pub trait CheckReporter {
    fn render(&self, report: &CheckReport, style: Style<'_>) -> String;

    /// Writes the rendering to `out`. A format whose output grows with the
    /// findings writes it as it goes, so that its memory does not.
    fn write(&self, report: &CheckReport, style: Style<'_>, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(self.render(report, style).as_bytes())
    }
}

fn reporter(format: CheckFormat) -> &'static dyn CheckReporter {
    match format {
        CheckFormat::Table => &table::Table,
        CheckFormat::Markdown => &markdown::Markdown,
        CheckFormat::Json => &json::Json,
        CheckFormat::Sarif => &sarif::Sarif,
        CheckFormat::Github => &github::Github,
        CheckFormat::Short => &short::Short,
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
            shown::escaped(report)
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
