//! `simulate --calibrate`: the calibration beside the run's report. The
//! table and markdown print the run, then the calibration; JSON is the run's
//! report with a `calibration` object (docs/json.md).

use std::fmt::Write as _;

use crate::formats::RunFormat;
use crate::run::RunReport;
use crate::sim::calibrate::{Calibration, CallRow};

fn figure(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".to_owned(), |v| format!("{v:.digits$}"))
}

fn times(v: Option<f64>) -> String {
    v.map_or("–".to_owned(), |v| format!("{v:.2}×"))
}

/// The run in `format` with its calibration.
pub fn render(format: RunFormat, run: &RunReport, c: &Calibration) -> String {
    match format {
        RunFormat::Json => {
            // The run's fields in their own order, then the calibration.
            #[derive(serde::Serialize)]
            struct WithCalibration<'a> {
                #[serde(flatten)]
                run: &'a RunReport,
                calibration: &'a Calibration,
            }
            let doc = WithCalibration {
                run,
                calibration: c,
            };
            let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
            out.push('\n');
            out
        }
        RunFormat::Table => {
            let mut out = crate::formats::render_run(format, run);
            out.push('\n');
            out.push_str(&table(c));
            out
        }
        RunFormat::Markdown => {
            let mut out = crate::formats::render_run(format, run);
            out.push('\n');
            out.push_str(&markdown(c));
            out
        }
    }
}

fn header(c: &Calibration) -> String {
    format!(
        "Calibration: the model (scenario {}, seed {}, {} trials) against what production showed; ratio = simulated / observed.",
        c.scenario, c.seed, c.trials
    )
}

fn furthest(c: &Calibration) -> String {
    match &c.furthest {
        Some(f) => format!("Furthest from production: {f}."),
        None => "Nothing observed could be compared: give traces or metrics with --from, or a topology written by `retrylint import`.".to_owned(),
    }
}

/// The plain-text tables.
pub fn table(c: &Calibration) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", header(c));
    if !c.calls.is_empty() {
        let rows: Vec<[String; 6]> = c
            .calls
            .iter()
            .map(|r| {
                [
                    format!("{} → {}", r.from, r.to),
                    r.source.to_owned(),
                    r.observed_calls.to_string(),
                    seen(r),
                    figure(r.simulated_attempts_per_call, 2),
                    times(r.ratio),
                ]
            })
            .collect();
        aligned(
            &mut out,
            [
                "call",
                "seen in",
                "calls seen",
                "attempts/call seen",
                "simulated",
                "ratio",
            ],
            &rows,
        );
        out.push('\n');
    }
    if !c.services.is_empty() {
        let rows: Vec<[String; 6]> = c
            .services
            .iter()
            .map(|s| {
                [
                    s.service.clone(),
                    format!("{:.1}/{:.1}", s.observed_p50_ms, s.observed_p99_ms),
                    format!(
                        "{}/{}",
                        figure(s.simulated_p50_ms, 1),
                        figure(s.simulated_p99_ms, 1)
                    ),
                    times(s.p50_ratio),
                    times(s.p99_ratio),
                    s.observed_spans.to_string(),
                ]
            })
            .collect();
        aligned(
            &mut out,
            [
                "service",
                "p50/p99 seen ms",
                "simulated ms",
                "p50 ratio",
                "p99 ratio",
                "spans",
            ],
            &rows,
        );
        out.push('\n');
    }
    let _ = writeln!(out, "{}", furthest(c));
    out
}

/// Columns padded to their widest cell, the first left-aligned.
fn aligned<const N: usize>(out: &mut String, head: [&str; N], rows: &[[String; N]]) {
    let mut width = head.map(|h| h.chars().count());
    for r in rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut String, cells: &[&str]| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(width).enumerate() {
            let pad = w - cell.chars().count();
            if i == 0 {
                let _ = write!(text, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(text, "  {}{cell}", " ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(out, &head);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(out, &cells);
    }
}

fn markdown(c: &Calibration) -> String {
    use crate::formats::check::markdown::{cell, cell_code};
    let mut out = format!("### Calibration\n\n{}\n\n", cell(&header(c)));
    if !c.calls.is_empty() {
        out.push_str("| call | seen in | calls seen | attempts/call seen | simulated | ratio |\n|---|---|---:|---:|---:|---:|\n");
        for r in &c.calls {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                cell_code(&format!("{} → {}", r.from, r.to)),
                r.source,
                r.observed_calls,
                seen(r),
                figure(r.simulated_attempts_per_call, 2),
                times(r.ratio)
            );
        }
        out.push('\n');
    }
    if !c.services.is_empty() {
        out.push_str("| service | p50 seen | p50 simulated | p99 seen | p99 simulated | p99 ratio |\n|---|---:|---:|---:|---:|---:|\n");
        for s in &c.services {
            let _ = writeln!(
                out,
                "| {} | {:.1} ms | {} ms | {:.1} ms | {} ms | {} |",
                cell_code(&s.service),
                s.observed_p50_ms,
                figure(s.simulated_p50_ms, 1),
                s.observed_p99_ms,
                figure(s.simulated_p99_ms, 1),
                times(s.p99_ratio)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{}", cell(&furthest(c)));
    out
}

/// `1.37`, or `≥ 1.04` for a lower bound.
fn seen(r: &CallRow) -> String {
    let at_least = if r.observed_at_least { "≥ " } else { "" };
    format!("{at_least}{:.2}", r.observed_attempts_per_call)
}
