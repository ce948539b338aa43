//! A chaos or simulation run for the terminal: measured amplification next to
//! the static prediction per service (mismatches flagged), retry layers, the
//! end-to-end latency histogram drawn with bars, and a sparkline of attempts
//! per time bucket at the fault target, so a retry wave shows at a glance.

use std::fmt::Write as _;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Table};

use crate::run::{Bucket, ExpectOutcome, RunReport};

pub fn render(r: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(r));
    if !r.fault_description.is_empty() {
        let _ = writeln!(out, "{}", r.fault_description);
    }
    let _ = writeln!(out, "{}\n", load_line(r));
    let _ = writeln!(out, "{}", services_table(r));
    let _ = writeln!(out, "{}", legend(r));
    let layers = layers_table(r);
    if !layers.is_empty() {
        let _ = writeln!(out, "\nretry layers\n{layers}");
    }
    if let Some(g) = &r.goodput {
        let _ = writeln!(out, "\ngoodput");
        for line in super::goodput::lines(g) {
            let _ = writeln!(out, "  {line}");
        }
    }
    let contained = super::containment::lines(r);
    if !contained.is_empty() {
        let _ = writeln!(out, "\nbreakers and hedging");
        for line in contained {
            let _ = writeln!(out, "  {line}");
        }
    }
    let e = &r.end_to_end;
    let _ = writeln!(
        out,
        "\nend to end: {} requests, {} succeeded ({:.1} %), {} failed; latency p50 {} p90 {} p99 {} max {}",
        e.requests,
        e.succeeded,
        e.success_ratio() * 100.0,
        e.failed,
        ms(e.latency_ms.p50),
        ms(e.latency_ms.p90),
        ms(e.latency_ms.p99),
        ms(e.latency_ms.max)
    );
    if !e.outcomes.is_empty() {
        let outcomes: Vec<String> = e
            .outcomes
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let _ = writeln!(out, "outcomes: {}", outcomes.join(", "));
    }
    if let Some(ratio) = e.all_succeeded_ratio {
        let _ = writeln!(
            out,
            "trials where every request succeeded: {:.1} %",
            ratio * 100.0
        );
    }
    if let Some(last) = e.last_success_ms {
        let _ = writeln!(out, "last success at {}", last_success(&last));
    }
    if !e.histogram.is_empty() {
        let _ = writeln!(out, "\nend-to-end latency\n{}", bars(&e.histogram, 40));
    }
    if !r.timeline.attempts.is_empty() {
        let _ = writeln!(
            out,
            "\nattempts per {} ms at {}\n{}",
            r.timeline.bucket_ms,
            r.timeline.target,
            sparkline(&r.timeline.attempts, r.timeline.bucket_ms, 80)
        );
    }
    if !r.expectations.is_empty() {
        let _ = writeln!(out, "\nexpectations");
        for x in &r.expectations {
            let _ = writeln!(out, "  {}", expectation(x));
        }
    }
    for w in &r.harness.warnings {
        let _ = writeln!(out, "\nwarning: {w}");
    }
    if r.interrupted {
        let _ = writeln!(
            out,
            "\ninterrupted: the figures cover the run until it was stopped"
        );
    }
    out
}

fn headline(r: &RunReport) -> String {
    let mode = if r.mode.is_empty() { "run" } else { &r.mode };
    let trials = r
        .trials
        .map(|t| format!(", {t} trials"))
        .unwrap_or_default();
    let at = r.struck().map(|t| format!(" at {t}")).unwrap_or_default();
    format!(
        "retrylint {mode}: topology `{}`, fault `{}`{at}, seed {}{trials}",
        r.topology, r.fault, r.seed
    )
}

fn load_line(r: &RunReport) -> String {
    let l = &r.load;
    let shape = match (l.rate, l.clients) {
        (Some(rate), _) => format!("open loop at {rate}/s"),
        (_, Some(n)) => format!("closed loop, {n} clients"),
        _ => "load".into(),
    };
    let mut cap = l
        .requests
        .map(|m| format!(", at most {m} requests"))
        .unwrap_or_default();
    if let Some(e) = &l.entry {
        cap.push_str(&format!(", all through the entry `{e}`"));
    }
    match l.duration_ms {
        Some(d) => format!("{shape}{cap}, horizon {}", ms(d)),
        None => format!("{shape}{cap}, no horizon"),
    }
}

/// `1.20 s`, or over trials `1.20 s (p10 900.0 ms, p90 1.85 s)`.
pub(crate) fn last_success(s: &crate::run::Spread) -> String {
    if s.p10 == s.p90 {
        ms(s.p50)
    } else {
        format!("{} (p10 {}, p90 {})", ms(s.p50), ms(s.p10), ms(s.p90))
    }
}

/// What the table's marks mean: `⚡` the fault's target, and the column
/// beside `predicted`. Below the worst case is what a partial fault or a
/// layer that does not retry the injected failure gives, not an alarm.
fn legend(r: &RunReport) -> String {
    let target = if r.services.iter().any(|s| s.fault_target) {
        "⚡ the fault's target; "
    } else {
        ""
    };
    let estimate = if r.services.iter().any(|s| s.amplification.estimate) {
        "; `≈ above estimate`: the figure counts a full-jitter layer's attempts at its mean waits (no count is sure when every wait can be zero), and this run drew shorter waits"
    } else {
        ""
    };
    format!(
        "{target}vs worst case: measured amplification against the static worst case (every call failing, every layer retrying to exhaustion) — `=` equal; `≠ below` expected when the fault is partial or a layer does not retry what is injected; `≠ ABOVE` is a defect of retrylint: please report it{estimate}"
    )
}

/// `=` when the measurement equals the static worst case; a measurement
/// below it is normal for partial faults, one above it is a red flag.
pub(crate) fn flag(a: &crate::run::Amplification) -> &'static str {
    if !a.mismatch() {
        "="
    } else if a.measured < a.predicted {
        "≠ below worst case"
    } else if a.estimate {
        "≈ above estimate"
    } else {
        "≠ ABOVE worst case"
    }
}

/// `12.3 ms`, `1.20 s`.
pub(crate) fn ms(x: f64) -> String {
    if x == 0.0 {
        "0 ms".into()
    } else if x >= 1000.0 {
        format!("{:.2} s", x / 1000.0)
    } else if x >= 10.0 {
        format!("{x:.1} ms")
    } else {
        format!("{x:.2} ms")
    }
}

/// `64` or `1.1` or `2.5e20`.
pub(crate) fn amp(x: f64) -> String {
    if x >= 1e9 {
        format!("{x:.2e}")
    } else if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

pub(crate) fn statuses(s: &crate::run::ServiceReport) -> String {
    let mut parts: Vec<String> = s
        .statuses
        .iter()
        .filter(|(k, v)| **v > 0 || k.as_str() == "200")
        .map(|(k, v)| format!("{k}:{v}"))
        .collect();
    parts.extend(s.dropped.iter().map(|(k, v)| format!("{k}:{v}")));
    parts.join(" ")
}

fn services_table(r: &RunReport) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "service",
        "received",
        "amplification",
        "predicted",
        "vs worst case",
        "p50",
        "p99",
        "max",
        "statuses",
        "duplicates",
    ]);
    for s in &r.services {
        let flag = flag(&s.amplification);
        let name = if s.fault_target {
            format!("{} ⚡", s.service)
        } else {
            s.service.clone()
        };
        let received = match &s.received_quantiles {
            Some(q) if q.p10 != q.p90 => {
                format!("{} (p10 {} p90 {})", s.received, amp(q.p10), amp(q.p90))
            }
            _ => s.received.to_string(),
        };
        t.add_row(vec![
            Cell::new(name),
            Cell::new(received).set_alignment(CellAlignment::Right),
            Cell::new(amp(s.amplification.measured)).set_alignment(CellAlignment::Right),
            Cell::new(amp(s.amplification.predicted)).set_alignment(CellAlignment::Right),
            Cell::new(flag),
            Cell::new(ms(s.latency_ms.p50)).set_alignment(CellAlignment::Right),
            Cell::new(ms(s.latency_ms.p99)).set_alignment(CellAlignment::Right),
            Cell::new(ms(s.latency_ms.max)).set_alignment(CellAlignment::Right),
            Cell::new(statuses(s)),
            Cell::new(s.duplicates).set_alignment(CellAlignment::Right),
        ]);
    }
    t
}

fn layers_table(r: &RunReport) -> String {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "call",
        "layer",
        "attempts",
        "retries",
        "by reason",
        "budget refusals",
        "Retry-After waits",
    ]);
    let mut rows = 0;
    let mut add = |call: String, l: &crate::run::LayerReport| {
        let reasons: Vec<String> = l
            .retries_by_reason
            .iter()
            .map(|(k, v)| format!("{k}:{v}"))
            .collect();
        t.add_row(vec![
            Cell::new(call),
            Cell::new(&l.layer),
            Cell::new(l.attempts).set_alignment(CellAlignment::Right),
            Cell::new(l.retries).set_alignment(CellAlignment::Right),
            Cell::new(reasons.join(" ")),
            Cell::new(l.budget_refusals).set_alignment(CellAlignment::Right),
            Cell::new(l.retry_after_waits).set_alignment(CellAlignment::Right),
        ]);
        rows += 1;
    };
    if let Some(c) = &r.end_to_end.client {
        add("users → entry".into(), c);
    }
    for s in &r.services {
        for c in &s.calls {
            for l in &c.layers {
                add(format!("{} → {}", s.service, c.to), l);
            }
        }
    }
    if rows == 0 {
        String::new()
    } else {
        t.to_string()
    }
}

/// Horizontal bars from the first to the last non-empty bucket.
pub(crate) fn bars(buckets: &[Bucket], width: usize) -> String {
    let first = buckets.iter().position(|b| b.count > 0);
    let last = buckets.iter().rposition(|b| b.count > 0);
    let (Some(first), Some(last)) = (first, last) else {
        return "  (no samples)".into();
    };
    let max = buckets.iter().map(|b| b.count).max().unwrap_or(1).max(1);
    let mut out = String::new();
    for b in &buckets[first..=last] {
        let len = ((b.count as f64 / max as f64) * width as f64).round() as usize;
        let len = if b.count > 0 { len.max(1) } else { 0 };
        let _ = writeln!(
            out,
            "  ≤ {:>9} │{:<width$} {}",
            ms(b.le_ms),
            "█".repeat(len),
            b.count
        );
    }
    out.trim_end().to_owned()
}

/// One block character per bucket, `per_line` buckets to a line, each line
/// labelled with its start time; the peak is named below.
pub(crate) fn sparkline(values: &[u64], bucket_ms: u64, per_line: usize) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = values.iter().copied().max().unwrap_or(0);
    let mut out = String::new();
    for (i, chunk) in values.chunks(per_line.max(1)).enumerate() {
        let start = (i * per_line) as u64 * bucket_ms;
        let line: String = chunk
            .iter()
            .map(|&v| {
                if v == 0 || max == 0 {
                    ' '
                } else {
                    let level = ((v as f64 / max as f64) * 7.0).round() as usize;
                    BLOCKS[level.min(7)]
                }
            })
            .collect();
        let _ = writeln!(out, "  {:>7} │{line}│", ms(start as f64));
    }
    let peak_at = values.iter().position(|&v| v == max).unwrap_or(0) as u64 * bucket_ms;
    let _ = write!(
        out,
        "  peak {max} attempts in the {bucket_ms} ms from {}",
        ms(peak_at as f64)
    );
    out
}

pub(crate) fn expectation(x: &ExpectOutcome) -> String {
    let unit = if x.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", x.unit)
    };
    format!(
        "{} {}  (measured {}{unit})",
        if x.held { "✓ held  " } else { "✗ broken" },
        x.expr,
        amp(x.measured)
    )
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct RunTable;

impl crate::formats::Reporter<RunReport> for RunTable {
    fn render(&self, report: &RunReport, _: crate::formats::Style<'_>) -> String {
        render(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Amplification, EndToEnd, ServiceReport, Timeline};

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(ms(0.0), "0 ms");
        assert_eq!(ms(0.25), "0.25 ms");
        assert_eq!(ms(12.345), "12.3 ms");
        assert_eq!(ms(2500.0), "2.50 s");
    }

    #[test]
    fn flags_mismatches_and_draws() {
        let r = RunReport {
            fault: "total-outage".into(),
            mode: "chaos".into(),
            topology: "chain".into(),
            target: "leaves".into(),
            services: vec![
                ServiceReport {
                    service: "db".into(),
                    received: 640,
                    amplification: Amplification {
                        measured: 64.0,
                        predicted: 64.0,
                        saturated: false,
                        estimate: false,
                    },
                    ..Default::default()
                },
                ServiceReport {
                    service: "api".into(),
                    received: 5,
                    amplification: Amplification {
                        measured: 0.5,
                        predicted: 1.0,
                        saturated: false,
                        estimate: false,
                    },
                    ..Default::default()
                },
            ],
            end_to_end: EndToEnd {
                requests: 10,
                histogram: vec![
                    Bucket {
                        le_ms: 0.125,
                        count: 0,
                    },
                    Bucket {
                        le_ms: 0.25,
                        count: 4,
                    },
                    Bucket {
                        le_ms: 0.5,
                        count: 8,
                    },
                ],
                ..Default::default()
            },
            timeline: Timeline {
                target: "db".into(),
                bucket_ms: 100,
                attempts: vec![0, 10, 80, 10, 0, 40],
            },
            ..Default::default()
        };
        let text = render(&r);
        assert_eq!(text.matches("≠ below worst case").count(), 1, "{text}");
        assert!(text.contains("████"), "{text}");
        assert!(text.contains("│ ▂█▂ ▅│"), "{text}");
        assert!(text.contains("peak 80 attempts"), "{text}");
    }
}
