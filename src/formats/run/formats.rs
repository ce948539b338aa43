//! The formats of a run's report (`chaos`, `simulate`, and a `simulate`
//! comparison of several topologies), each behind [`Reporter`]: a new format
//! is its file plus one line in each `match` here.

use super::{json, markdown, table};
use crate::formats::{Reporter, Style, compare};
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

/// A comparison: one row per topology under one scenario, and the seed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Comparison<'a> {
    pub rows: &'a [ComparisonRow],
    pub seed: u64,
}

fn run_reporter(format: RunFormat) -> &'static dyn Reporter<RunReport> {
    match format {
        RunFormat::Table => &table::RunTable,
        RunFormat::Markdown => &markdown::RunMarkdown,
        RunFormat::Json => &json::RunJson,
    }
}

fn comparison_reporter(format: RunFormat) -> &'static dyn for<'a> Reporter<Comparison<'a>> {
    match format {
        RunFormat::Table => &compare::table::ComparisonTable,
        RunFormat::Markdown => &compare::markdown::ComparisonMarkdown,
        RunFormat::Json => &compare::json::ComparisonJson,
    }
}

/// Renders a run's report in `format`.
pub fn render_run(format: RunFormat, report: &RunReport) -> String {
    run_reporter(format).render(report, Style::default())
}

/// The formats of a sweep (`simulate --sweep`).
fn sweep_reporter(format: RunFormat) -> &'static dyn Reporter<SweepReport> {
    match format {
        RunFormat::Table => &super::sweep_table::SweepTable,
        RunFormat::Markdown => &super::sweep_markdown::SweepMarkdown,
        RunFormat::Json => &super::sweep_json::SweepJson,
    }
}

/// Renders a sweep in `format`.
pub fn render_sweep(format: RunFormat, report: &SweepReport) -> String {
    sweep_reporter(format).render(report, Style::default())
}

/// Renders a comparison in `format`.
pub fn render_comparison(format: RunFormat, rows: &[ComparisonRow], seed: u64) -> String {
    comparison_reporter(format).render(&Comparison { rows, seed }, Style::default())
}
