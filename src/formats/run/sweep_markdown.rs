//! `simulate --sweep --format markdown`: the points as a table for a PR
//! comment, the headroom sentence first.

use std::fmt::Write;

use super::sweep_table::{cells, footer, headers, num};
use crate::sim::sweep::SweepReport;

pub(crate) fn render(r: &SweepReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "**retrylint simulate --sweep {}={}..{}** — `{}` under `{}`: {}\n",
        r.sweep.variable,
        num(r.sweep.lo),
        num(r.sweep.hi),
        r.topology,
        r.fault,
        r.headroom
    );
    let heads = headers(r);
    let _ = writeln!(out, "| {} |", heads.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(heads.len()));
    for p in &r.sweep.points {
        let _ = writeln!(out, "| {} |", cells(r, p).join(" | "));
    }
    out.push('\n');
    for l in footer(r) {
        let _ = writeln!(out, "{l}  ");
    }
    out
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct SweepMarkdown;

impl crate::formats::Reporter<SweepReport> for SweepMarkdown {
    fn render(&self, r: &SweepReport, _: crate::formats::Style<'_>) -> String {
        render(r)
    }
}
