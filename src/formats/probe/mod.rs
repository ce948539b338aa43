//! What `probe` measured of a client: table, markdown and JSON.

pub mod json;
pub mod markdown;
pub mod table;

use crate::probe::ProbeReport;

use super::{Reporter, Style};

/// How a probe's results can be printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeFormat {
    /// Scenarios, the measured policy with evidence, YAML, preset, findings.
    Table,
    /// A PR comment.
    Markdown,
    /// One JSON object with every arrival.
    Json,
}

fn reporter(format: ProbeFormat) -> &'static dyn Reporter<ProbeReport> {
    match format {
        ProbeFormat::Table => &table::ProbeTable,
        ProbeFormat::Markdown => &markdown::ProbeMarkdown,
        ProbeFormat::Json => &json::ProbeJson,
    }
}

/// Renders a probe's results in `format`.
pub fn render_probe(format: ProbeFormat, report: &ProbeReport) -> String {
    reporter(format).render(report, Style::default())
}
