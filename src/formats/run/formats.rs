//! The formats of a run's report (`chaos`, `simulate`, and a `simulate`
//! comparison of several topologies), behind one trait each: a new format is
//! its file plus one line in each `match` here.

use super::{json, markdown, table};
use crate::formats::compare;
use crate::run::{ComparisonRow, RunReport};
use crate::sim::sweep::SweepReport;

/// How a run's report can be printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunFormat {
    /// A per-service table (measured beside predicted), histograms and a timeline.
    Table,
    /// A PR comment.
    Markdown,
    /// The JSON contract (docs/json.md).
    Json,
}

/// A format of one run's report.
pub trait RunReporter {
    fn render(&self, report: &RunReport) -> String;
}

/// A format of a comparison: one row per topology under one scenario.
pub trait ComparisonReporter {
    fn render(&self, rows: &[ComparisonRow], seed: u64) -> String;
}

fn run_reporter(format: RunFormat) -> &'static dyn RunReporter {
    match format {
        RunFormat::Table => &table::RunTable,
        RunFormat::Markdown => &markdown::RunMarkdown,
        RunFormat::Json => &json::RunJson,
    }
}

fn comparison_reporter(format: RunFormat) -> &'static dyn ComparisonReporter {
    match format {
        RunFormat::Table => &compare::table::ComparisonTable,
        RunFormat::Markdown => &compare::markdown::ComparisonMarkdown,
        RunFormat::Json => &compare::json::ComparisonJson,
    }
}

/// Renders a run's report in `format`.
pub fn render_run(format: RunFormat, report: &RunReport) -> String {
    run_reporter(format).render(report)
}

/// A format of a sweep (`simulate --sweep`).
pub trait SweepReporter {
    fn render(&self, report: &SweepReport) -> String;
}

fn sweep_reporter(format: RunFormat) -> &'static dyn SweepReporter {
    match format {
        RunFormat::Table => &super::sweep_table::SweepTable,
        RunFormat::Markdown => &super::sweep_markdown::SweepMarkdown,
        RunFormat::Json => &super::sweep_json::SweepJson,
    }
}

/// Renders a sweep in `format`.
pub fn render_sweep(format: RunFormat, report: &SweepReport) -> String {
    sweep_reporter(format).render(report)
}

/// Renders a comparison in `format`.
pub fn render_comparison(format: RunFormat, rows: &[ComparisonRow], seed: u64) -> String {
    comparison_reporter(format).render(rows, seed)
}
