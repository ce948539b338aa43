//! Goodput over time in words and sparklines, for the table and the
//! Markdown report: one line per series, per second, and the verdict —
//! recovered (and when) or collapsed (and for how long).

use super::table::ms;
use crate::run::goodput::Goodput;

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The lines, without trailing newlines.
pub(crate) fn lines(g: &Goodput) -> Vec<String> {
    let per_s = 1000 / g.bucket_ms.max(1) as usize;
    let sum = |v: &[u64]| -> Vec<u64> { v.chunks(per_s.max(1)).map(|c| c.iter().sum()).collect() };
    let max = |v: &[u64]| -> Vec<u64> {
        v.chunks(per_s.max(1))
            .map(|c| c.iter().copied().max().unwrap_or(0))
            .collect()
    };
    let offered: Vec<u64> = g.per_second.iter().map(|s| s.offered).collect();
    let goodput: Vec<u64> = g.per_second.iter().map(|s| s.goodput).collect();
    let p99: Vec<u64> = g
        .per_second
        .iter()
        .map(|s| s.p99_ms.round() as u64)
        .collect();
    let mut out = vec![format!(
        "per second over {} s (each series scaled to its own peak)",
        g.per_second.len()
    )];
    for (label, values, unit) in [
        ("offered", offered, "/s"),
        ("goodput", goodput, "/s"),
        ("rejected", sum(&g.rejected), "/s"),
        ("timeouts", sum(&g.timeouts), "/s"),
        ("retries", sum(&g.retries), "/s"),
        ("queue", max(&g.queue_depth), " deep"),
        ("p99 ms", p99, " ms"),
    ] {
        out.push(format!(
            "  {label:<9}│{}│ peak {}{unit}",
            spark(&values),
            values.iter().max().unwrap_or(&0)
        ));
    }
    if let Some(v) = &g.verdict {
        out.push(verdict_line(v));
    }
    out
}

/// The verdict as a sentence, naming the rule it was judged by.
pub(crate) fn verdict_line(v: &crate::run::goodput::Verdict) -> String {
    if v.state == "collapsed-before-fault" {
        return format!(
            "collapsed before the fault: goodput {:.0}/s before it, under 5 % of the load offered then",
            v.baseline_per_s
        );
    }
    if v.state == "unjudged" {
        return format!(
            "unjudged: the run ends {} after the fault, without a whole second after it to judge recovery by; run longer (--duration)",
            ms(v.below_for_ms)
        );
    }
    if v.rule == "last-half" {
        return format!(
            "{} (last-half rule): mean goodput over the run's last half {:.0}/s, {:.2}× its {:.0}/s before the fault (recovered at 0.80× or more, collapsed below 0.05×)",
            v.state,
            v.goodput_after_per_s,
            if v.baseline_per_s > 0.0 {
                v.goodput_after_per_s / v.baseline_per_s
            } else {
                0.0
            },
            v.baseline_per_s
        );
    }
    match v.recovered_at_ms {
        Some(at) => format!(
            "recovered: goodput back within 10 % of its {:.0}/s before the fault at {}, {} after the fault ended",
            v.baseline_per_s,
            ms(at),
            ms(v.below_for_ms)
        ),
        None => format!(
            "collapsed: goodput still below 90 % of its {:.0}/s before the fault {} after the fault ended, to the end of the run",
            v.baseline_per_s,
            ms(v.below_for_ms)
        ),
    }
}

/// A row of blocks, one per value, scaled to the largest.
pub(crate) fn spark(values: &[u64]) -> String {
    let top = values.iter().copied().max().unwrap_or(0);
    values
        .iter()
        .map(|&v| {
            if v == 0 || top == 0 {
                ' '
            } else {
                BLOCKS[(((v as f64 / top as f64) * 7.0).round() as usize).min(7)]
            }
        })
        .collect()
}
