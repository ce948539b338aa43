//! `--format json`: the contract of docs/json.md, one object.

use std::io::{self, Write};

use serde::Serialize;

use crate::formats::{Reporter, Style};
use crate::lint::{AmplificationRow, CheckReport, EdgeRow, Finding, Severity, Summary};

pub struct Json;

impl Reporter<CheckReport> for Json {
    fn render(&self, r: &CheckReport, _: Style<'_>) -> String {
        // Serialised straight from the report, not through a `Value` tree:
        // 70,000 findings of a 10,000-service topology are 50 MB of JSON.
        let mut out = serde_json::to_string_pretty(&Document::of(r)).unwrap_or_default();
        out.push('\n');
        out
    }

    /// As `render`, written as it is made: 70,000 findings are some 80 MB,
    /// which need not be held, nor copied each time a string outgrows itself.
    fn write(&self, r: &CheckReport, _: Style<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        serde_json::to_writer_pretty(&mut out, &Document::of(r))?;
        out.write_all(b"\n")?;
        out.flush()
    }
}

/// The JSON object of a report, borrowing it.
#[derive(Serialize)]
pub(crate) struct Document<'a> {
    version: u32,
    topology: &'a str,
    file: &'a str,
    entry: &'a str,
    /// Every entry, when there are several (`entry` is the first).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    entries: &'a [String],
    findings: &'a [Finding],
    amplification: &'a [AmplificationRow],
    edges: &'a [EdgeRow],
    summary: &'a Summary,
    fail_on: Severity,
    max_amplification: f64,
    /// User requests per second behind each row's `with_breakers`.
    reference_rate: f64,
    failed: bool,
}

impl<'a> Document<'a> {
    pub(crate) fn of(r: &'a CheckReport) -> Self {
        Document {
            version: 1,
            topology: &r.topology,
            file: &r.file,
            entry: &r.entry,
            entries: if r.entries.len() > 1 { &r.entries } else { &[] },
            findings: &r.findings,
            amplification: &r.amplification,
            edges: &r.edges,
            summary: &r.summary,
            fail_on: r.fail_on,
            max_amplification: r.max_amplification,
            reference_rate: r.reference_rate,
            failed: r.failed(),
        }
    }
}

/// The JSON value of a report, for callers that look inside it.
pub fn value(r: &CheckReport) -> serde_json::Value {
    serde_json::to_value(Document::of(r)).unwrap_or_default()
}
