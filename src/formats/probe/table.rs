//! A probe for the terminal: what each scenario drew from the client, the
//! measured policy field by field with its confidence and evidence, the
//! policy as topology YAML, the nearest preset, the rules' findings and the
//! gate's verdict.

use std::fmt::Write as _;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use crate::policy::{BackoffKind, Jitter};
use crate::probe::infer::fit::fmt_ms;
use crate::probe::{Field, ProbeReport, RunRecord, ScenarioRecord};

/// One row of the policy table: field, value, confidence, evidence.
pub(crate) struct PolicyRow {
    pub field: String,
    pub value: String,
    pub confidence: &'static str,
    pub evidence: String,
}

fn row<T>(field: &str, f: &Field<T>, value: impl FnOnce(&T) -> String, none: &str) -> PolicyRow {
    PolicyRow {
        field: field.to_owned(),
        value: f.value.as_ref().map_or_else(|| none.to_owned(), value),
        confidence: f.confidence.as_str(),
        evidence: f.evidence.clone(),
    }
}

fn yes_no(b: &bool) -> String {
    if *b { "yes".into() } else { "no".into() }
}

/// The measured policy as rows, in the order a reader checks them.
pub(crate) fn policy_rows(r: &ProbeReport) -> Vec<PolicyRow> {
    let p = &r.policy;
    let mut rows = vec![row(
        "max_attempts",
        &p.max_attempts,
        u32::to_string,
        "unknown",
    )];
    for v in &p.retry_on {
        rows.push(PolicyRow {
            field: format!("retry on {}", v.outcome),
            value: match v.retried {
                Some(true) => "retried".into(),
                Some(false) => "not retried".into(),
                None => "unknown".into(),
            },
            confidence: v.confidence.as_str(),
            evidence: format!("{}: {}", v.scenario, v.evidence),
        });
    }
    match &p.backoff {
        Some(f) => {
            fit_rows(&mut rows, "", f);
        }
        None if p.to_policy().retries() => rows.push(PolicyRow {
            field: "backoff".into(),
            value: "unknown".into(),
            confidence: "low",
            evidence: crate::probe::infer::UNTIMED_RETRIES.into(),
        }),
        None => rows.push(PolicyRow {
            field: "backoff".into(),
            value: "—".into(),
            confidence: "high",
            evidence: "no retry, so no wait to fit".into(),
        }),
    }
    for c in &p.backoff_by_cause {
        if c.cause == crate::probe::infer::Cause::Throttling {
            fit_rows(&mut rows, " after throttling", &c.fit);
        }
    }
    rows.push(row(
        "honor_retry_after",
        &p.honor_retry_after,
        yes_no,
        "unknown",
    ));
    if let Some(f) = &p.honor_amz_retry_after {
        rows.push(row("honor x-amz-retry-after", f, yes_no, "unknown"));
    }
    rows.push(row(
        "timeout",
        &p.timeout_ms,
        |t| format!("{} ms", fmt_ms(*t)),
        if p.timeout_probed {
            "none seen"
        } else {
            "not probed"
        },
    ));
    rows.push(row("method", &p.method, String::clone, "unknown"));
    rows.push(row(
        "idempotency key",
        &p.idempotency_key,
        yes_no,
        "unknown",
    ));
    rows.push(row(
        "deadline header",
        &p.deadline_header,
        String::clone,
        "none",
    ));
    rows.push(row(
        "reuses connection",
        &p.reuses_connection,
        yes_no,
        "unknown",
    ));
    rows.push(row(
        "stops on success",
        &p.stops_on_success,
        yes_no,
        "unknown",
    ));
    rows
}

/// Retries whose median wait a scenario's row shows; the rest are counted.
const SHOWN_WAITS: usize = 10;

/// `1001/2003` (median waits of a scenario's runs, per retry), the first
/// [`SHOWN_WAITS`] of them: `5.00/5.00/… 19,989 more`.
pub(crate) fn scenario_waits(s: &ScenarioRecord) -> String {
    let waits: Vec<Vec<f64>> = s.runs.iter().map(RunRecord::waits_ms).collect();
    let longest = waits.iter().map(Vec::len).max().unwrap_or(0);
    if longest == 0 {
        return "—".into();
    }
    let mut text = (0..longest.min(SHOWN_WAITS))
        .map(|k| {
            let mut xs: Vec<f64> = waits.iter().filter_map(|w| w.get(k).copied()).collect();
            xs.sort_by(f64::total_cmp);
            fmt_ms(xs[xs.len() / 2])
        })
        .collect::<Vec<_>>()
        .join("/");
    if longest > SHOWN_WAITS {
        text += &format!(
            "/… {} more",
            crate::input::read::thousands(longest - SHOWN_WAITS)
        );
    }
    text
}

/// `3 ×5` or `1, 3, 3`.
pub(crate) fn scenario_attempts(s: &ScenarioRecord, refused: bool) -> String {
    if refused {
        return "not countable".into();
    }
    let counts: Vec<usize> = s.runs.iter().map(|r| r.arrivals.len()).collect();
    match counts.first() {
        Some(&c) if counts.iter().all(|&x| x == c) => format!("{c} ×{}", counts.len()),
        _ => counts
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `exit 22 ×5`, `exit 0 ×3, killed at the time bound ×2`.
pub(crate) fn scenario_exits(s: &ScenarioRecord) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for r in &s.runs {
        let d = r.exit.describe();
        match seen.iter_mut().find(|(e, _)| *e == d) {
            Some((_, n)) => *n += 1,
            None => seen.push((d, 1)),
        }
    }
    seen.iter()
        .map(|(e, n)| format!("{e} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn headline(r: &ProbeReport) -> String {
    format!(
        "retrylint probe: {} — {} scenario{} × {} run{} in {:.1} s (each run bounded at {})",
        r.command.join(" "),
        r.scenarios.len(),
        if r.scenarios.len() == 1 { "" } else { "s" },
        r.runs,
        if r.runs == 1 { "" } else { "s" },
        r.elapsed_ms / 1e3,
        crate::input::duration::format(std::time::Duration::from_secs_f64(r.time_bound_ms / 1e3))
    )
}

/// This format behind [`crate::formats::Reporter`].
pub(crate) struct ProbeTable;

impl crate::formats::Reporter<ProbeReport> for ProbeTable {
    fn render(&self, r: &ProbeReport, _: crate::formats::Style<'_>) -> String {
        render(r)
    }
}

pub fn render(r: &ProbeReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", headline(r));
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(vec!["scenario", "attempts", "median waits (ms)", "client"]);
    for s in &r.scenarios {
        let refused = s.name == "refused";
        t.add_row(vec![
            s.name.clone(),
            scenario_attempts(s, refused),
            scenario_waits(s),
            scenario_exits(s),
        ]);
    }
    let _ = writeln!(out, "{t}\n");
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(160)
        .set_header(vec!["measured", "value", "confidence", "evidence"]);
    for row in policy_rows(r) {
        t.add_row(vec![
            row.field,
            row.value,
            row.confidence.to_owned(),
            row.evidence,
        ]);
    }
    let _ = writeln!(out, "{t}\n");
    let _ = writeln!(out, "as topology (a `calls:` item; name the callee):\n");
    for line in r.snippet.lines() {
        let _ = writeln!(out, "    {line}");
    }
    let _ = writeln!(out);
    if let Some(p) = &r.nearest_preset {
        let _ = writeln!(out, "{}", preset_line(p));
    }
    if r.findings.is_empty() {
        let _ = writeln!(out, "rules: {}", r.no_finding_text());
    } else {
        let _ = writeln!(out, "rules on the measured policy:");
        for f in &r.findings {
            let _ = writeln!(
                out,
                "  {} {} {}: {}",
                f.severity.as_str(),
                f.code,
                f.rule,
                f.message
            );
            let _ = writeln!(out, "      help: {}", f.help);
        }
    }
    if !r.policy.notes.is_empty() {
        let _ = writeln!(out, "\nnotes:");
        for n in &r.policy.notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
    if let Some(e) = &r.expectation {
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", expectation_line(e));
        for d in &e.differences {
            let _ = writeln!(
                out,
                "  - {}: measured {}, declared {}",
                d.field, d.measured, d.declared
            );
        }
        if !e.not_checked.is_empty() {
            let _ = writeln!(
                out,
                "  not checked (not determined by the probe): {}",
                e.not_checked.join(", ")
            );
        }
    }
    out
}

pub(crate) fn preset_line(p: &crate::probe::PresetMatch) -> String {
    if p.differences.is_empty() {
        return format!(
            "nearest preset: {} (no difference in what the probe sees)",
            p.name
        );
    }
    let diffs: Vec<String> = p
        .differences
        .iter()
        .map(|d| {
            format!(
                "{} (measured {}, preset {})",
                d.field, d.measured, d.declared
            )
        })
        .collect();
    format!(
        "nearest preset: {} — differs in {}",
        p.name,
        diffs.join("; ")
    )
}

pub(crate) fn expectation_line(e: &crate::probe::ExpectResult) -> String {
    let verdict = if e.held {
        "holds".to_owned()
    } else {
        format!(
            "FAILS with {} difference{}",
            e.differences.len(),
            if e.differences.len() == 1 { "" } else { "s" }
        )
    };
    format!(
        "expect-policy {} {} layer `{}`: {verdict}",
        e.topology, e.call, e.layer
    )
}

/// The backoff and jitter rows of one fitted schedule; `suffix` names the
/// cause when it is not the main one.
fn fit_rows(rows: &mut Vec<PolicyRow>, suffix: &str, f: &crate::probe::infer::fit::BackoffFit) {
    let mut value = match f.kind {
        BackoffKind::None => "none".to_owned(),
        k => format!("{} from {} ms", k.as_str(), fmt_ms(f.base_ms)),
    };
    if let Some(m) = f.multiplier
        && f.kind == BackoffKind::Exponential
    {
        value += &format!(" ×{m}");
    }
    if let Some(c) = f.cap_ms {
        value += &format!(", cap {} ms", fmt_ms(c));
    }
    let mut evidence = f.kind_evidence.clone();
    if !f.kind_alternatives.is_empty() {
        let texts: Vec<&str> = f
            .kind_alternatives
            .iter()
            .map(|a| a.text.as_str())
            .collect();
        evidence += &format!("; also fits: {}", texts.join("; "));
    }
    rows.push(PolicyRow {
        field: format!("backoff{suffix}"),
        value,
        confidence: f.kind_confidence.as_str(),
        evidence,
    });
    let mut evidence = f.jitter_evidence.clone();
    if !f.jitter_alternatives.is_empty() {
        evidence += &format!("; or: {}", f.jitter_alternatives.join("; "));
    }
    rows.push(PolicyRow {
        field: format!("jitter{suffix}"),
        value: match f.jitter {
            Jitter::Proportional { ratio } => {
                format!("proportional ±{:.0} %", ratio * 100.0)
            }
            j => j.as_str().to_owned(),
        },
        confidence: f.jitter_confidence.as_str(),
        evidence,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::record::{Arrival, Exit};

    #[test]
    fn a_scenario_row_shows_ten_waits_and_counts_the_rest() {
        let arrival = |at_ms: f64| Arrival {
            at_ms,
            method: "GET".into(),
            path: "/".into(),
            connection: 1,
            peer_port: 1,
            body_bytes: 0,
            idempotency_key: None,
            notable_headers: Vec::new(),
            host: None,
            hung_up_ms: None,
        };
        let run = |n: usize| RunRecord {
            refused_connects: None,
            url: "http://127.0.0.1:1/".into(),
            arrivals: (0..n).map(|i| arrival(i as f64 * 5.0)).collect(),
            exit: Exit::Code(1),
            elapsed_ms: n as f64 * 5.0,
            stderr_tail: String::new(),
            handshakes_failed: 0,
            handshake_error: None,
        };
        let s = |n| ScenarioRecord {
            bound_ms: None,
            name: "503".into(),
            description: String::new(),
            runs: vec![run(n), run(n)],
        };
        assert_eq!(
            scenario_waits(&s(20_000)),
            "5.00/5.00/5.00/5.00/5.00/5.00/5.00/5.00/5.00/5.00/… 19,989 more"
        );
        assert_eq!(scenario_waits(&s(3)), "5.00/5.00");
    }
}
