//! A chaos or simulation run as Markdown for a pull-request comment: a
//! summary line, the per-service table with measured beside predicted, the
//! gates, and the histogram and timeline in a collapsed block.

use std::fmt::Write as _;

use super::table::{amp, bars, expectation, flag, last_success, ms, sparkline, statuses};
use crate::run::RunReport;

pub fn render(r: &RunReport) -> String {
    let mut out = String::new();
    let mode = if r.mode.is_empty() { "run" } else { &r.mode };
    let _ = writeln!(
        out,
        "### retrylint {mode}: `{}` under `{}`\n",
        escape(&r.topology),
        escape(&r.fault)
    );
    let e = &r.end_to_end;
    let _ = writeln!(
        out,
        "**{} of {} user requests{} succeeded** ({:.1} %), end-to-end p99 {}, {}, seed {}{}.\n",
        e.succeeded,
        e.requests,
        r.load
            .entry
            .as_deref()
            .map(|n| format!(" to `{}`", escape(n)))
            .unwrap_or_default(),
        e.success_ratio() * 100.0,
        ms(e.latency_ms.p99),
        r.struck().map_or_else(
            || "nothing injected".to_owned(),
            |t| format!("fault target `{}`", escape(t))
        ),
        r.seed,
        r.trials
            .map(|t| format!(", {t} trials"))
            .unwrap_or_default()
    );
    let mut trials = Vec::new();
    if let Some(ratio) = e.all_succeeded_ratio {
        trials.push(format!(
            "every request succeeded in {:.1} % of trials",
            ratio * 100.0
        ));
    }
    if let Some(last) = e.last_success_ms {
        trials.push(format!("last success at {}", last_success(&last)));
    }
    if !trials.is_empty() {
        let _ = writeln!(out, "{}.\n", capitalize(&trials.join("; ")));
    }
    if !r.fault_description.is_empty() {
        let _ = writeln!(out, "> {}\n", escape(&r.fault_description));
    }
    if !r.expectations.is_empty() {
        for x in &r.expectations {
            let _ = writeln!(out, "- {}", escape(&expectation(x)));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "| service | received | amplification | predicted | | p50 | p99 | statuses | duplicates |"
    );
    let _ = writeln!(out, "|---|--:|--:|--:|---|--:|--:|---|--:|");
    for s in &r.services {
        let flag = match flag(&s.amplification) {
            "=" => "✅ =",
            other => other,
        };
        let target = if s.fault_target { " ⚡" } else { "" };
        let _ = writeln!(
            out,
            "| `{}`{target} | {} | {} | {} | {flag} | {} | {} | {} | {} |",
            escape(&s.service),
            received(s),
            amp(s.amplification.measured),
            amp(s.amplification.predicted),
            ms(s.latency_ms.p50),
            ms(s.latency_ms.p99),
            escape(&statuses(s)),
            s.duplicates
        );
    }
    let _ = writeln!(
        out,
        "{}\n<details><summary>latency and attempt timeline</summary>\n",
        containment(r)
    );
    let _ = writeln!(
        out,
        "```text\nend-to-end latency\n{}",
        bars(&e.histogram, 40)
    );
    if !r.timeline.attempts.is_empty() {
        let _ = writeln!(
            out,
            "\nattempts per {} ms at {}\n{}",
            r.timeline.bucket_ms,
            r.timeline.target,
            sparkline(&r.timeline.attempts, r.timeline.bucket_ms, 60)
        );
    }
    let _ = writeln!(out, "```\n\n</details>");
    for w in &r.harness.warnings {
        let _ = writeln!(out, "\n> [!WARNING]\n> {}", escape(w));
    }
    if r.interrupted {
        let _ = writeln!(
            out,
            "\n_Interrupted: the figures cover the run until it was stopped._"
        );
    }
    out
}

/// `6400`, or over trials `6400 (p10 6100, p90 6700)`.
fn received(s: &crate::run::ServiceReport) -> String {
    match &s.received_quantiles {
        Some(q) if q.p10 != q.p90 => {
            format!("{} (p10 {}, p90 {})", s.received, amp(q.p10), amp(q.p90))
        }
        _ => s.received.to_string(),
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Keeps table cells intact.
fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct RunMarkdown;

impl crate::formats::Reporter<RunReport> for RunMarkdown {
    fn render(&self, report: &RunReport, _: crate::formats::Style<'_>) -> String {
        render(report)
    }
}

/// Goodput over time (a block of sparklines), breakers and hedging (a
/// list), or nothing.
fn containment(r: &RunReport) -> String {
    let mut out = String::new();
    if let Some(g) = &r.goodput {
        out += "\n**Goodput**\n\n```text\n";
        for l in super::goodput::lines(g) {
            out += &l;
            out.push('\n');
        }
        out += "```\n";
    }
    let lines = super::containment::lines(r);
    if lines.is_empty() {
        return out;
    }
    out += "\n**Breakers and hedging**\n\n";
    for l in lines {
        out += &format!("- {}\n", escape(&l));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Amplification, ServiceReport};

    #[test]
    fn renders_a_table_with_flags() {
        let r = RunReport {
            fault: "503-burst".into(),
            services: vec![ServiceReport {
                service: "d|b".into(),
                amplification: Amplification {
                    measured: 3.0,
                    predicted: 64.0,
                    saturated: false,
                    estimate: false,
                },
                ..Default::default()
            }],
            ..Default::default()
        };
        let md = render(&r);
        assert!(md.contains("| `d\\|b` |"), "{md}");
        assert!(md.contains("≠ below worst case"), "{md}");
        assert!(md.contains("<details>"), "{md}");
    }

    #[test]
    fn shows_the_spread_over_trials() {
        use crate::run::{EndToEnd, Spread};
        let spread = |p10, p50, p90| Spread {
            p10,
            p50,
            p90,
            mean: p50,
        };
        let r = RunReport {
            mode: "simulate".into(),
            trials: Some(1000),
            services: vec![ServiceReport {
                service: "db".into(),
                received: 6400,
                received_quantiles: Some(spread(6100.0, 6400.0, 6700.0)),
                ..Default::default()
            }],
            end_to_end: EndToEnd {
                all_succeeded_ratio: Some(0.25),
                last_success_ms: Some(spread(900.0, 1200.0, 1850.0)),
                ..Default::default()
            },
            ..Default::default()
        };
        let md = render(&r);
        assert!(md.contains("| `db` | 6400 (p10 6100, p90 6700) |"), "{md}");
        assert!(
            md.contains("Every request succeeded in 25.0 % of trials; last success at 1.20 s (p10 900.0 ms, p90 1.85 s)."),
            "{md}"
        );
        assert!(md.contains("1000 trials"), "{md}");
    }
}
