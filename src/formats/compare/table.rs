//! A policy comparison (`simulate a.yaml b.yaml …`) for the terminal: one row
//! per topology with attempts at the fault target and in total, success, and
//! completion time, so the policies read side by side.

use std::fmt::Write as _;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Table};

use crate::formats::run::table::{amp, ms};
use crate::run::ComparisonRow;
use crate::run::Spread;

pub(crate) fn render(rows: &[ComparisonRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", headline(rows));
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    let mut header = vec![
        "topology",
        "attempts at target",
        "per request",
        "attempts in total",
        "succeeded",
        "success",
        "all ok",
        "last success",
        "p99",
    ];
    let recovery = rows.iter().any(|r| r.recovery.is_some());
    if recovery {
        header.push("after the fault");
    }
    t.set_header(header);
    for r in rows {
        let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
        let mut row = vec![
            Cell::new(name(r)),
            right(spread(&r.attempts_at_target)),
            right(amp(r.amplification_at_target)),
            right(spread(&r.attempts_total)),
            right(format!("{} of {}", amp(r.succeeded.mean), r.requests)),
            right(percent(r.success_ratio)),
            right(percent(r.all_succeeded_ratio)),
            right(completion(r.last_success_ms.as_ref())),
            right(ms(r.latency_ms.p99)),
        ];
        if recovery {
            row.push(Cell::new(after_the_fault(r)));
        }
        t.add_row(row);
    }
    let _ = writeln!(out, "{t}");
    let _ = writeln!(
        out,
        "\nper trial: attempts as p50 (p10–p90); succeeded as the mean; success over all trials; \
         all ok = trials in which every request succeeded; last success as p50 (p90)"
    );
    out
}

/// `recovered 2.00 s after` (or `at once`) or `collapsed, 30.00 s to the
/// end`, from the verdict
/// of the (merged) goodput series; `–` without one.
pub(crate) fn after_the_fault(r: &ComparisonRow) -> String {
    verdict(r.recovery.as_ref())
}

/// A goodput verdict as the tables say it; `–` without one.
pub(crate) fn verdict(v: Option<&crate::run::goodput::Verdict>) -> String {
    match v {
        None => "–".into(),
        Some(v) if v.state == "collapsed-before-fault" => "collapsed before the fault".into(),
        Some(v) if v.rule == "last-half" => format!(
            "{} ({:.2}× in the last half)",
            v.state,
            if v.baseline_per_s > 0.0 {
                v.goodput_after_per_s / v.baseline_per_s
            } else {
                0.0
            }
        ),
        Some(v) => match v.recovered_at_ms {
            Some(_) if v.below_for_ms <= 0.0 => "recovered at once".into(),
            Some(_) => format!("recovered {} after", ms(v.below_for_ms)),
            None => format!("collapsed, {} to the end", ms(v.below_for_ms)),
        },
    }
}

/// `fault `overload` at leaves, 1000 trials`.
pub(crate) fn headline(rows: &[ComparisonRow]) -> String {
    match rows.first() {
        None => "retrylint simulate: nothing to compare".into(),
        Some(r) => format!(
            "retrylint simulate: {} topologies under fault `{}` at {}, {} trials each",
            rows.len(),
            r.fault,
            r.target,
            r.trials
        ),
    }
}

/// The topology's name, and its file when the name does not say it.
pub(crate) fn name(r: &ComparisonRow) -> String {
    if r.file.is_empty() || r.file.contains(&r.topology) {
        r.topology.clone()
    } else {
        format!("{} ({})", r.topology, r.file)
    }
}

/// `120 (110–130)`, or `120` when every trial agrees.
pub(crate) fn spread(s: &Spread) -> String {
    if s.p10 == s.p90 {
        amp(s.p50)
    } else {
        format!("{} ({}–{})", amp(s.p50), amp(s.p10), amp(s.p90))
    }
}

pub(crate) fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// `1.20 s (1.85 s)`, or `never` without a success.
pub(crate) fn completion(s: Option<&Spread>) -> String {
    match s {
        None => "never".into(),
        Some(s) if s.p50 == s.p90 => ms(s.p50),
        Some(s) => format!("{} ({})", ms(s.p50), ms(s.p90)),
    }
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct ComparisonTable;

impl crate::formats::Reporter<crate::formats::Comparison<'_>> for ComparisonTable {
    fn render(&self, c: &crate::formats::Comparison<'_>, _: crate::formats::Style<'_>) -> String {
        render(c.rows)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::run::LatencyMs;

    pub(crate) fn row(name: &str, at_target: f64, ok: f64) -> ComparisonRow {
        let s = |p10, p50, p90| Spread {
            p10,
            p50,
            p90,
            mean: p50,
        };
        ComparisonRow {
            topology: name.into(),
            file: format!("{name}.yaml"),
            fault: "overload".into(),
            target: "leaves".into(),
            target_services: vec!["db".into()],
            trials: 1000,
            requests: 6,
            attempts_at_target: s(at_target, at_target, at_target),
            attempts_total: s(at_target - 2.0, at_target, at_target + 4.0),
            amplification_at_target: at_target / 6.0,
            succeeded: s(ok, ok, ok),
            success_ratio: ok / 6.0,
            all_succeeded_ratio: if ok == 6.0 { 1.0 } else { 0.0 },
            last_success_ms: (ok > 0.0).then(|| s(300.0, 450.0, 1200.0)),
            latency_ms: LatencyMs::default(),
            recovery: None,
        }
    }

    #[test]
    fn one_row_per_topology() {
        let text = render(&[row("no-jitter", 30.0, 0.0), row("full-jitter", 14.0, 6.0)]);
        assert!(
            text.contains("2 topologies under fault `overload` at leaves, 1000 trials"),
            "{text}"
        );
        assert!(text.contains("no-jitter"), "{text}");
        assert!(text.contains("never"), "{text}");
        assert!(text.contains("450.0 ms (1.20 s)"), "{text}");
        assert!(text.contains("30 (28–34)"), "{text}");
        assert!(text.contains("100.0 %"), "{text}");
        assert_eq!(
            render(&[]).lines().next(),
            Some("retrylint simulate: nothing to compare")
        );
    }
}
