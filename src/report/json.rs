//! `--format json`: DESIGN's contract, one object.

use serde_json::{Value, json};

use super::{CheckReporter, Style};
use crate::lint::CheckReport;

pub struct Json;

impl CheckReporter for Json {
    fn render(&self, r: &CheckReport, _: Style) -> String {
        let mut out = serde_json::to_string_pretty(&value(r)).unwrap_or_default();
        out.push('\n');
        out
    }
}

/// The JSON value of a report.
pub fn value(r: &CheckReport) -> Value {
    json!({
        "version": 1,
        "topology": r.topology,
        "file": r.file,
        "entry": r.entry,
        "findings": r.findings,
        "amplification": r.amplification,
        "edges": r.edges,
        "summary": r.summary,
        "fail_on": r.fail_on,
        "max_amplification": r.max_amplification,
        // User requests per second behind each row's `with_breakers`.
        "reference_rate": r.reference_rate,
        "failed": r.failed(),
    })
}
