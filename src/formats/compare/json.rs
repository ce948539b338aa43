//! `simulate a.yaml b.yaml … --format json`: one object, like a single run's,
//! naming the scenario and seed once, with a row per topology.

use serde::Serialize;

use crate::run::ComparisonRow;

#[derive(Serialize)]
struct Comparison<'a> {
    mode: &'static str,
    fault: &'a str,
    seed: u64,
    topologies: &'a [ComparisonRow],
}

pub(crate) fn render(rows: &[ComparisonRow], seed: u64) -> String {
    let doc = Comparison {
        mode: "simulate",
        fault: rows.first().map_or("", |r| r.fault.as_str()),
        seed,
        topologies: rows,
    };
    let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
    out.push('\n');
    out
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct ComparisonJson;

impl crate::formats::Reporter<crate::formats::Comparison<'_>> for ComparisonJson {
    fn render(&self, c: &crate::formats::Comparison<'_>, _: crate::formats::Style<'_>) -> String {
        render(c.rows, c.seed)
    }
}
