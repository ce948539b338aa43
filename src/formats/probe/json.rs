//! A probe as one JSON object: the command, every scenario's runs with each
//! arrival, the measured policy field by field (value, confidence,
//! evidence), the YAML snippet, the nearest preset, the findings and the
//! gate.

use crate::probe::ProbeReport;

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct ProbeJson;

impl crate::formats::Reporter<ProbeReport> for ProbeJson {
    fn render(&self, r: &ProbeReport, _: crate::formats::Style<'_>) -> String {
        render(r)
    }
}

pub fn render(r: &ProbeReport) -> String {
    // Strings, numbers, options and sequences only: serialising cannot fail;
    // keep a valid document regardless.
    serde_json::to_string_pretty(r)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .unwrap_or_else(|e| format!("{{ \"error\": {:?} }}\n", e.to_string()))
}
