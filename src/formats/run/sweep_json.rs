//! `simulate --sweep --format json`: the sweep report as it is
//! (docs/json.md, "simulate --sweep").

use crate::sim::sweep::SweepReport;

pub(crate) fn render(r: &SweepReport) -> String {
    let mut out = serde_json::to_string_pretty(r).unwrap_or_default();
    out.push('\n');
    out
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct SweepJson;

impl crate::formats::Reporter<SweepReport> for SweepJson {
    fn render(&self, r: &SweepReport, _: crate::formats::Style<'_>) -> String {
        render(r)
    }
}
