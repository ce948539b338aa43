//! A chaos or simulation run as JSON: the contract of docs/json.md (`fault`, `seed`,
//! `services[]`, `end_to_end`) plus the timeline, layers and histograms.

use crate::run::RunReport;

pub fn render(report: &RunReport) -> String {
    // The report holds only strings, numbers, maps with string keys and
    // sequences, which always serialize; keep a valid document regardless.
    serde_json::to_string_pretty(report)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .unwrap_or_else(|e| format!("{{ \"error\": {:?} }}\n", e.to_string()))
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct RunJson;

impl crate::formats::Reporter<RunReport> for RunJson {
    fn render(&self, report: &RunReport, _: crate::formats::Style<'_>) -> String {
        render(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let r = RunReport {
            fault: "503-burst".into(),
            seed: 42,
            ..Default::default()
        };
        let text = render(&r);
        let back: RunReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
    }
}
