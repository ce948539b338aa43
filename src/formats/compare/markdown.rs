//! A policy comparison (`simulate a.yaml b.yaml …`) as Markdown for a pull
//! request comment: the same rows as the terminal table.

use std::fmt::Write as _;

use super::table::{after_the_fault, completion, headline, name, percent, spread};
use crate::formats::run::table::{amp, ms};
use crate::run::ComparisonRow;

pub(crate) fn render(rows: &[ComparisonRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### {}\n", escape(&headline(rows)));
    if rows.is_empty() {
        return out;
    }
    let recovery = rows.iter().any(|r| r.recovery.is_some());
    let (extra_head, extra_rule) = if recovery {
        (" after the fault |", "---|")
    } else {
        ("", "")
    };
    let _ = writeln!(
        out,
        "| topology | attempts at target | per request | attempts in total | succeeded | success | all ok | last success | p99 |{extra_head}"
    );
    let _ = writeln!(out, "|---|--:|--:|--:|--:|--:|--:|--:|--:|{extra_rule}");
    for r in rows {
        let extra = if recovery {
            format!(" {} |", after_the_fault(r))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} of {} | {} | {} | {} | {} |{extra}",
            escape(&name(r)),
            spread(&r.attempts_at_target),
            amp(r.amplification_at_target),
            spread(&r.attempts_total),
            amp(r.succeeded.mean),
            r.requests,
            percent(r.success_ratio),
            percent(r.all_succeeded_ratio),
            completion(r.last_success_ms.as_ref()),
            ms(r.latency_ms.p99)
        );
    }
    let _ = writeln!(
        out,
        "\n_Per trial: attempts as p50 (p10–p90), succeeded as the mean; success over all trials; \
         all ok = trials in which every request succeeded; last success as p50 (p90)._"
    );
    out
}

/// Keeps table cells intact.
fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct ComparisonMarkdown;

impl crate::formats::Reporter<crate::formats::Comparison<'_>> for ComparisonMarkdown {
    fn render(&self, c: &crate::formats::Comparison<'_>, _: crate::formats::Style<'_>) -> String {
        render(c.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::compare::table::tests::row;

    #[test]
    fn a_table_row_per_topology() {
        let md = render(&[row("no|jitter", 30.0, 0.0), row("full-jitter", 14.0, 6.0)]);
        assert!(
            md.starts_with("### retrylint simulate: 2 topologies"),
            "{md}"
        );
        assert!(md.contains("| `no\\|jitter` |"), "{md}");
        assert_eq!(md.matches("\n| `").count(), 2, "{md}");
        assert!(md.contains("| never |"), "{md}");
    }
}
