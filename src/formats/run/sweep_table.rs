//! `simulate --sweep` on a terminal: one row per point (value, recovered
//! k/n, its 95 % interval, goodput after the fault, verdict), then the
//! boundary and the headroom sentence. The Markdown format shares the rows.

use std::fmt::Write;

use crate::sim::sweep::{Point, SweepReport};

/// The cells of a point's row: value, recovered, CI, goodput after,
/// verdict.
pub(crate) fn cells(r: &SweepReport, p: &Point) -> [String; 5] {
    let unit = if r.sweep.variable == "for" {
        " s"
    } else {
        "/s"
    };
    let mark = if p.bisection { " *" } else { "" };
    [
        format!("{}{unit}{mark}", num(p.value)),
        format!("{}/{}", p.recovered_trials, p.trials),
        format!("{:.2}–{:.2}", p.recovered_ci[0], p.recovered_ci[1]),
        format!("{:.0}/s of {:.0}/s", p.goodput_after, p.baseline),
        p.verdict.clone(),
    ]
}

/// The column heads; the first names what was swept.
pub(crate) fn headers(r: &SweepReport) -> [&'static str; 5] {
    let swept = match r.sweep.variable {
        "surge" => "surge",
        "for" => "surge length",
        _ => "rate",
    };
    [swept, "recovered", "95 % CI", "goodput after", "verdict"]
}

pub(crate) fn num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The lines under the table: the rule, the boundary, the gates.
pub(crate) fn footer(r: &SweepReport) -> Vec<String> {
    let mut out = vec![format!(
        "rule: {} (a point recovers when at least half its trials do); * a bisection point",
        r.sweep.rule
    )];
    match (&r.sweep.boundary.value, &r.sweep.boundary.reason) {
        (Some(_), _) => {}
        (None, Some(reason)) => out.push(format!("boundary: none, {reason}")),
        (None, None) => out.push("boundary: none".into()),
    }
    out.push(r.headroom.clone());
    for e in &r.expectations {
        out.push(format!(
            "expect {}: {} (boundary {})",
            e.expr,
            if e.held { "held" } else { "BROKEN" },
            if e.measured.is_nan() {
                "none".to_owned()
            } else {
                num(e.measured)
            }
        ));
    }
    if r.interrupted {
        out.push("interrupted: the points shown are those completed".into());
    }
    out
}

pub(crate) fn render(r: &SweepReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "retrylint simulate --sweep {}={}..{}: `{}` under `{}`, {} trial{} a point, seed {}, {} s each",
        r.sweep.variable,
        num(r.sweep.lo),
        num(r.sweep.hi),
        r.topology,
        r.fault,
        r.sweep.trials,
        if r.sweep.trials == 1 { "" } else { "s" },
        r.seed,
        num(r.duration_s)
    );
    let rows: Vec<[String; 5]> = r.sweep.points.iter().map(|p| cells(r, p)).collect();
    let width = |i: usize| {
        rows.iter()
            .map(|row| row[i].chars().count())
            .chain([headers(r)[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let heads = headers(r);
    let widths: Vec<usize> = (0..5).map(width).collect();
    let line = |cells: &[String]| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let heads: Vec<String> = heads.iter().map(|h| (*h).to_owned()).collect();
    let _ = writeln!(out, "{}", line(&heads));
    for row in &rows {
        let _ = writeln!(out, "{}", line(row));
    }
    for l in footer(r) {
        let _ = writeln!(out, "{l}");
    }
    out
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct SweepTable;

impl crate::formats::Reporter<SweepReport> for SweepTable {
    fn render(&self, r: &SweepReport, _: crate::formats::Style<'_>) -> String {
        render(r)
    }
}
