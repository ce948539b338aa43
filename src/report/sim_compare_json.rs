//! `simulate a.yaml b.yaml … --format json`: the comparison rows as a JSON array.

use crate::sim::ComparisonRow;

pub fn render(rows: &[ComparisonRow]) -> String {
    let mut out = serde_json::to_string_pretty(rows).unwrap_or_default();
    out.push('\n');
    out
}
